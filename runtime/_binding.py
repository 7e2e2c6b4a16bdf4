"""Runtime layer: what a generated package tells the runtime about each tool. Imports pydantic.

A ``ToolBinding`` is plain data: the tool's wire name, its Call and Output models, and the JSON
Schemas the runtime composes for the LLM. Generated packages build one per tool (``TOOLS``);
the registries (``Tool``, ``Activity``) are keyed by ``name``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import BaseModel

from .contract import ExecutionType


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolBinding:
    """One tool of a generated package.

    Attributes:
        name: the spec's name, the value of ``_tool`` on the wire.
        provider_name: ``name`` made safe for providers' function names (``^[a-zA-Z0-9_-]{1,64}$``).
        call_model: the generated Call model.
        output_model: the generated Output model.
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
    """

    name: str
    provider_name: str
    call_model: type[BaseModel]
    output_model: type[BaseModel]
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


def load_bindings(
    package: str, models: Sequence[tuple[type[BaseModel], type[BaseModel]]]
) -> tuple[ToolBinding, ...]:
    """The ToolBindings of a generated package, from its ``tools.json`` and its model classes.

    Args:
        package: the generated package's import name (``tools.json`` is read from it).
        models: the (Call model, Output model) of each tool, in ``tools.json`` order.
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
    for entry, (call_model, output_model) in zip(entries, models, strict=True):
        fields: dict[str, Any] = dict(entry)
        fields["toolsets"] = tuple(fields.get("toolsets", ()))
        bindings.append(
            ToolBinding(call_model=call_model, output_model=output_model, defs=defs, **fields)
        )
    return tuple(bindings)
