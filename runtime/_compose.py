"""Runtime layer: schema composition exactly as the seeds specify. Imports ``_binding``, pydantic.

For each tool (tool-system.md "Schema Composition", tool-system.ru.md):

* meta fields come first: ``_tool`` (``const``), ``_activity`` (``const``, resolved below),
  ``_reasoningForCall`` (optional string), then ``_output`` — optional, and only for latent tools
  (an explicit tool's output comes from its Activity, so the LLM is not asked for it) — then the
  parameters in spec order; ``required`` is ``_tool`` plus the parameters' own;
* ``_activity``: the spec's explicit ``_activity`` > an Activity registered under the tool's name
  > ``''`` (latent).

The composed schema is ``{output, calls}`` (agent-tool-rfc.md "Composing Schemas for the LLM"):
``output`` is the user's output schema made nullable and, when it is an object that says nothing
about extra properties, closed with ``additionalProperties: false`` as in the RFC's example
(without an output schema, ``output`` is free text: ``{"type": ["string", "null"]}``); ``calls`` is
an array whose items are the one tool schema, or ``anyOf`` the tool schemas; both are required.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol, cast

from pydantic import BaseModel


class ComposableTool(Protocol):
    """What composition needs of a tool; ``ToolBinding`` has it all."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    @property
    def output_schema(self) -> Mapping[str, Any] | None: ...
    @property
    def activity(self) -> str | None: ...
    @property
    def defs(self) -> Mapping[str, Any]: ...


DEFAULT_OUTPUT_SCHEMA: Mapping[str, Any] = {"type": "string"}


def resolve_activity(tool: ComposableTool, activities: Collection[str] = ()) -> str:
    """Zero-config activity matching: explicit ``_activity`` > same-name Activity > ``''``."""
    if tool.activity:
        return tool.activity
    if tool.name in activities:
        return tool.name
    return ""


def tool_schema(tool: ComposableTool, activities: Collection[str] = ()) -> dict[str, Any]:
    """The LLM-facing schema of one tool, with the meta fields composed in."""
    activity = resolve_activity(tool, activities)
    params = dict(tool.parameters)
    properties: dict[str, Any] = {
        "_tool": {"const": tool.name},
        "_activity": {"const": activity},
        "_reasoningForCall": {"type": "string"},
    }
    if not activity:
        properties["_output"] = dict(tool.output_schema) if tool.output_schema is not None else {}
    properties.update(params.pop("properties", {}))
    out: dict[str, Any] = {"type": "object"}
    if tool.description:
        out["description"] = tool.description
    params.pop("type", None)
    params.pop("description", None)
    params.pop("title", None)
    out["properties"] = properties
    out["required"] = ["_tool", *params.pop("required", [])]
    out.update(params)
    return out


def nullable(schema: Mapping[str, Any] | bool) -> dict[str, Any]:
    """``schema`` that also accepts null (and is closed when it is an open object)."""
    if isinstance(schema, bool):
        return {} if schema else {"type": "null"}
    out = dict(schema)
    declared = out.get("type")
    if isinstance(declared, str):
        out["type"] = [declared, "null"] if declared != "null" else "null"
    elif isinstance(declared, list):
        out["type"] = [*declared, *([] if "null" in declared else ["null"])]
    elif out:
        return {"anyOf": [out, {"type": "null"}]}
    if out.get("type") in ("object", ["object", "null"]) and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def output_schema_of(output: type[BaseModel] | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if output is None:
        return DEFAULT_OUTPUT_SCHEMA
    if isinstance(output, Mapping):
        return output
    return output.model_json_schema(by_alias=True)


def compose(
    tools: Iterable[ComposableTool],
    output: type[BaseModel] | Mapping[str, Any] | None = None,
    *,
    activities: Collection[str] = (),
) -> dict[str, Any]:
    """The composed ``{output, calls}`` schema the LLM fills.

    Args:
        tools: the tools offered, in the order the LLM should see them.
        output: the final output's schema (a JSON Schema or a pydantic model); None for text.
        activities: names of registered Activities, for zero-config activity matching.
    """
    tool_list = list(tools)
    schemas = [tool_schema(t, activities) for t in tool_list]
    items: dict[str, Any] = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if not schemas:
        items = {"not": {}}
    out_schema = dict(output_schema_of(output))
    out_defs = out_schema.pop("$defs", None)
    composed: dict[str, Any] = {
        "type": "object",
        "properties": {
            "output": nullable(out_schema),
            "calls": {"type": "array", "items": items},
        },
        "required": ["calls", "output"],
    }
    defs: dict[str, Any] = {}
    for t in tool_list:
        defs.update(t.defs)
    if out_defs:
        defs.update(out_defs)
    used = _reachable_defs(composed, defs)
    if used:
        composed["$defs"] = {k: defs[k] for k in sorted(used)}
    return composed


def _reachable_defs(schema: Any, defs: Mapping[str, Any]) -> set[str]:
    """The ``$defs`` names ``schema`` reaches through ``#/$defs/...`` references: a package's
    definitions used only by tools not offered (or only by outputs of explicit tools) stay out."""
    seen: set[str] = set()
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in cast("dict[str, Any]", node).items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    name = value.removeprefix("#/$defs/")
                    if name not in seen and name in defs:
                        seen.add(name)
                        stack.append(defs[name])
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(cast("list[Any]", node))
    return seen
