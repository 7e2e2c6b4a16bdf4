"""Runtime layer: what a generated package tells the runtime about each tool. Imports pydantic.

A ``ToolBinding`` is plain data: the tool's wire name, its Call and Output models, and the JSON
Schemas the runtime composes for the LLM. Generated packages build one per tool (``TOOLS``);
the registries (``Tool``, ``Activity``) are keyed by ``name``.

A large package's bindings load their models on first use: names, descriptions and JSON Schemas
come from ``tools.json``, so registering 1,000 tools and composing ten of them builds no class,
and the first validated call of one tool imports only the modules its models need.

``load_bindings`` is what registering a package costs, so it does little per tool: ``tools.json``
is read in one go through the package's loader (no ``importlib.resources`` machinery) and parsed
by pydantic-core's JSON parser (about twice as fast as ``json`` on a multi-megabyte file).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import from_json

if TYPE_CHECKING:  # registering a package needs no contract at run time
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
    data: dict[str, Any] = from_json(_package_data(package, "tools.json"))
    entries: list[dict[str, Any]] = data["tools"]
    if len(entries) != len(models):  # a hand-edited package: say so rather than mis-pair
        raise ValueError(
            f"{package}: tools.json lists {len(entries)} tools, the models {len(models)}"
        )
    defs: dict[str, Any] = data["$defs"]
    bindings: list[ToolBinding] = []
    module = f"{package}.models"
    for entry, pair in zip(entries, models, strict=True):
        values: dict[str, Any] = dict(entry)
        values["toolsets"] = tuple(values.get("toolsets", ()))
        values["extensions_required"] = tuple(values.get("extensions_required", ()))
        values["models"] = (
            _loader(module, pair[0], pair[1])
            if isinstance(pair[0], str) and isinstance(pair[1], str)
            else (_as_model(pair[0]), _as_model(pair[1]))
        )
        values["defs"] = defs
        bindings.append(_new_binding(values))
    return tuple(bindings)


_FIELDS = frozenset(f.name for f in fields(ToolBinding))
_REQUIRED = frozenset(f.name for f in fields(ToolBinding) if f.default is MISSING)
_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(ToolBinding) if f.default is not MISSING
}


def _new_binding(values: dict[str, Any]) -> ToolBinding:
    """``ToolBinding(**values)``, without running the frozen dataclass's ``__init__`` (which sets
    each of its 21 fields through ``object.__setattr__``: 8 µs a tool, a tenth of registering a
    1,000-tool package). The object is the same: every field given or defaulted, none unknown —
    else the constructor runs, and raises its ``TypeError``."""
    if not _REQUIRED <= values.keys() <= _FIELDS:
        return ToolBinding(**values)
    binding = object.__new__(ToolBinding)
    binding.__dict__.update(_DEFAULTS)
    binding.__dict__.update(values)
    return binding


def _package_data(package: str, name: str) -> bytes:
    """The bytes of the file ``name`` beside ``package``'s ``__init__``, through the package's
    loader (``pkgutil.get_data``: a zipped package works too); ``importlib.resources`` where the
    loader reads no data (a namespace package, an unusual loader)."""
    data = pkgutil.get_data(package, name)
    if data is None:
        from importlib import resources

        return resources.files(package).joinpath(name).read_bytes()
    return data


def _as_model(value: object) -> type[BaseModel]:
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    raise TypeError(f"load_bindings: {value!r} is not a pydantic model class")


def _loader(module: str, call: str, output: str) -> Callable[[], Models]:
    def load() -> Models:
        found = importlib.import_module(module)
        return _as_model(getattr(found, call)), _as_model(getattr(found, output))

    return load
