"""Runtime layer: what a generated package tells the runtime about each tool. Imports pydantic.

A ``ToolBinding`` is plain data: the tool's wire name, its Call and Output models, and the JSON
Schemas the runtime composes for the LLM. Generated packages build one per tool (``TOOLS``);
the registries (``Tool``, ``Activity``) are keyed by ``name``.

A large package's bindings load their models on first use: names, descriptions and JSON Schemas
come from ``tools.json``, so registering 1,000 tools and composing ten of them builds no class,
and the first validated call of one tool imports only the modules its models need.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from typing import Any

from pydantic import BaseModel

from .contract import ExecutionType

Models = tuple[type[BaseModel], type[BaseModel]]
"""A tool's (Call model, Output model)."""


@dataclass(frozen=True, kw_only=True)
class ToolBinding:
    """One tool of a generated package.

    Attributes:
        name: the spec's name, the value of ``_tool`` on the wire.
        provider_name: ``name`` made safe for providers' function names (``^[a-zA-Z0-9_-]{1,64}$``).
        models: the (Call model, Output model), or a function that loads them on first use of
            ``call_model`` / ``output_model`` (a large generated package's ``TOOLS``).
        parameters: the parameters' JSON Schema (an object schema; ``$ref``s point into ``defs``).
        output_schema: the output's JSON Schema, or None when the spec declares none.
        defs: the package's shared ``$defs``.
        description: what the tool does, for the LLM.
        activity: the explicit ``_activity`` the spec names, or None (resolved at composition).
        execution_type: the gateway execution type, when the spec gives one.
        visible: whether calls and results are shown to users (gateway ``visible``).
        execution: the gateway's declarative execution config, verbatim.
        source: the spec file and JSON pointer the tool came from.
        deprecated: the spec marks the tool deprecated (OpenAPI ``deprecated: true``); its
            description says so too, for the LLM.
        extensions: the RFC's Call extensions the tool declares (``_outputPath``,
            ``_outputMethod``, ``_instance``, ``_delegate``: wire name → JSON Schema), or None.
        extensions_required: those of ``extensions`` the tool requires.
        requires_approval: the spec marks the tool ``x-requires-approval``: an Agent parks its
            explicit calls until a human decides (``Agent(requires_approval=...)``).
    """

    name: str
    provider_name: str
    models: Models | Callable[[], Models] = field(repr=False, compare=False)
    parameters: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    defs: Mapping[str, Any]
    description: str | None = None
    title: str | None = None
    activity: str | None = None
    execution_type: ExecutionType | None = None
    visible: bool | None = None
    execution: Mapping[str, Any] | None = None
    display: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    toolsets: tuple[str, ...] = ()
    original_name: str | None = None
    source: str = ""
    deprecated: bool = False
    extensions: Mapping[str, Any] | None = None
    extensions_required: tuple[str, ...] = ()
    requires_approval: bool = False

    @cached_property
    def _loaded(self) -> Models:
        return self.models() if callable(self.models) else self.models

    @property
    def call_model(self) -> type[BaseModel]:
        """The generated Call model (loaded on first use for a large package)."""
        return self._loaded[0]

    @property
    def output_model(self) -> type[BaseModel]:
        """The generated Output model (loaded on first use for a large package)."""
        return self._loaded[1]


def load_bindings(
    package: str, models: Sequence[Models] | Sequence[tuple[str, str]]
) -> tuple[ToolBinding, ...]:
    """The ToolBindings of a generated package, from its ``tools.json`` and its model classes.

    Args:
        package: the generated package's import name (``tools.json`` is read from it).
        models: the (Call model, Output model) of each tool, in ``tools.json`` order; or their
            class names in the package's ``models`` module, imported on first use (a large
            package: registering and composing its tools builds no model).
    """
    text = resources.files(package).joinpath("tools.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    entries: list[dict[str, Any]] = data["tools"]
    if len(entries) != len(models):  # a hand-edited package: say so rather than mis-pair
        raise ValueError(
            f"{package}: tools.json lists {len(entries)} tools, the models {len(models)}"
        )
    defs: dict[str, Any] = data["$defs"]
    bindings: list[ToolBinding] = []
    for entry, pair in zip(entries, models, strict=True):
        fields: dict[str, Any] = dict(entry)
        fields["toolsets"] = tuple(fields.get("toolsets", ()))
        fields["extensions_required"] = tuple(fields.get("extensions_required", ()))
        loaded: Models | Callable[[], Models] = (
            _loader(f"{package}.models", pair[0], pair[1])
            if isinstance(pair[0], str) and isinstance(pair[1], str)
            else (_as_model(pair[0]), _as_model(pair[1]))
        )
        bindings.append(ToolBinding(models=loaded, defs=defs, **fields))
    return tuple(bindings)


def _as_model(value: object) -> type[BaseModel]:
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    raise TypeError(f"load_bindings: {value!r} is not a pydantic model class")


def _loader(module: str, call: str, output: str) -> Callable[[], Models]:
    def load() -> Models:
        found = importlib.import_module(module)
        return _as_model(getattr(found, call)), _as_model(getattr(found, output))

    return load
