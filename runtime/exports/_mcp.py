"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``, and ``_common``): an
MCP ``tools/list`` result.

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from toolbind._compose import TOOL_TAG, reachable_defs

from ._common import ExportableTool, call_schema


def mcp_tools(tools: Iterable[ExportableTool], activities: Collection[str] = ()) -> dict[str, Any]:
    """An MCP ``tools/list`` result: ``{"tools": [{name, title?, description?, inputSchema,
    outputSchema?, annotations?}]}``. ``outputSchema`` is given only for object outputs (MCP's
    structured content is an object). ``_tool`` is listed (its ``const``) but not required:
    ``tools/call`` names the tool, so a client may leave it out (``toolbind serve`` refuses a
    wrong one)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.name}
        if tool.title:
            entry["title"] = tool.title
        if tool.description:
            entry["description"] = tool.description
        schema = call_schema(tool, activities)
        required = [r for r in schema.pop("required", ()) if r != TOOL_TAG]
        if required:  # (an empty list is no JSON Schema draft 4 accepts)
            schema["required"] = required
        entry["inputSchema"] = schema
        output = tool.output_schema
        if output is not None and output.get("type") == "object":
            out_schema = dict(output)
            defs = reachable_defs(out_schema, tool.defs)
            if defs:
                out_schema["$defs"] = defs
            entry["outputSchema"] = out_schema
        if tool.annotations:
            entry["annotations"] = dict(tool.annotations)
        out.append(entry)
    return {"tools": out}
