"""Compiler layer (frontends): MCP ``tools/list`` results.

Each tool is ``{name, title?, description, inputSchema, outputSchema?, annotations?}``; a file holds
one tool, a list, ``{"tools": [...]}`` (the result object) or a JSON-RPC response around it.

An MCP tool runs on its server: it is a ``gateway`` tool, not visible by default
(gateway-v3-tool-system.md, "MCP Tools"), and never latent — the Agent refuses to offer one that
has no Activity rather than take the model's invented ``_output`` as its result.
"""

from __future__ import annotations

from typing import Any

from .._load import as_object
from ..ir import SourceLocation, ToolSpec, freeze
from ._common import ToolReader


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and "name" in obj and "inputSchema" in obj


def read_tool(reader: ToolReader, value: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    name = reader.name(value.get("name"), loc.child("name"))
    if name is None:
        return None
    annotations = as_object(value.get("annotations"))
    title = value.get("title")
    if title is None and annotations is not None:
        title = annotations.get("title")
    return ToolSpec(
        name=name,
        loc=loc,
        params=reader.params(value.get("inputSchema"), loc.child("inputSchema")),
        output=reader.output(value.get("outputSchema"), loc.child("outputSchema")),
        description=reader.text(value.get("description"), loc.child("description"), "description"),
        title=reader.text(title, loc.child("title"), "title"),
        annotations=freeze(annotations) if annotations is not None else None,
        execution_type="gateway",
        visible=False,
    )
