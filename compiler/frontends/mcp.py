"""Compiler layer (frontends): MCP ``tools/list`` results.

Each tool is ``{name, title?, description, inputSchema, outputSchema?, annotations?}``; a file holds
one tool, a list, ``{"tools": [...]}`` (the result object) or a JSON-RPC response around it.

An MCP tool runs on its server: it is a ``gateway`` tool, not visible by default
(gateway-v3-tool-system.md, "MCP Tools"), and never latent — the Agent refuses to offer one that
has no Activity rather than take the model's invented ``_output`` as its result.

An MCP configuration (``{"mcp": {"servers": [...]}}``, the gateway's shape) is a spec too: its
servers are connected at build time and their listed tools compiled, with an ``McpSource`` that
the backend turns into ``mcp.py`` (typed Activities calling each tool's server).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from toolbind.contract import META_FIELDS, mcp_app_only, mcp_task_only

from .._load import as_object
from ..diagnostics import Diagnostics
from ..ir import McpSource, SourceLocation, ToolSpec, freeze
from ._common import ToolReader


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and "name" in obj and "inputSchema" in obj


def read_tool(reader: ToolReader, value: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    name = reader.name(value.get("name"), loc.child("name"))
    if name is None:
        return None
    if (visibility := mcp_app_only(value)) is not None:
        reader.diags.note(
            loc.child("_meta", "ui", "visibility"),
            f"MCP tool {name!r} is left out: its visibility is {json.dumps(visibility)}, a tool "
            "the server's own UI calls (MCP Apps), which a host never offers to a model",
        )
        reader.left_out.append(name)
        return None
    if mcp_task_only(value):
        reader.diags.note(
            loc.child("execution", "taskSupport"),
            f"MCP tool {name!r} is left out: its server runs it only as a task "
            '(execution.taskSupport: "required") and refuses a plain tools/call, the only call '
            "toolbind's MCP client makes",
        )
        reader.left_out.append(name)
        return None
    annotations = as_object(value.get("annotations"))
    title = value.get("title")
    if title is None and annotations is not None:
        title = annotations.get("title")
    return ToolSpec(
        name=name,
        loc=loc,
        params=reader.params(
            exported_params(value.get("inputSchema"), name), loc.child("inputSchema")
        ),
        output=reader.output(value.get("outputSchema"), loc.child("outputSchema")),
        description=reader.text(value.get("description"), loc.child("description"), "description"),
        title=reader.text(title, loc.child("title"), "title"),
        annotations=freeze(annotations) if annotations is not None else None,
        execution_type="gateway",
        visible=False,
    )


def exported_params(schema: Any, name: str) -> Any:
    """An ``inputSchema`` as toolbind exports it (``toolbind serve``, ``--format mcp``) carries
    the Call's meta fields (``_tool`` with the tool's name as ``const``, ``_activity``,
    ``_reasoningForCall``): they are the wire format's, not parameters, and are left out here —
    so a served package imported back has the tools it was compiled from. Any other schema is
    returned as it is (a parameter merely named like a meta field is still refused)."""
    obj = as_object(schema)
    props = as_object(obj.get("properties")) if obj is not None else None
    tag = as_object(props.get("_tool")) if props is not None else None
    if obj is None or props is None or tag is None or tag.get("const") != name:
        return schema
    out = dict(obj)
    out["properties"] = {k: v for k, v in props.items() if k not in META_FIELDS}
    required = obj.get("required")
    if isinstance(required, list):
        out["required"] = [r for r in cast("list[Any]", required) if r not in META_FIELDS]
    return out


def is_config(value: Any) -> bool:
    """An MCP configuration in the gateway's shape: ``{"mcp": {"servers": [...]}}``."""
    obj = as_object(value)
    inner = as_object(obj.get("mcp")) if obj is not None else None
    return inner is not None and "servers" in inner


def read_config(
    doc_path: str,
    value: Any,
    diags: Diagnostics,
    make_reader: Callable[[Any], ToolReader],
) -> tuple[list[ToolSpec], McpSource] | None:
    """Connect to every server of an MCP configuration, list its tools (``tools/list``, kept to
    ``allowedTools``) and read each as an MCP tool. A tool is located at
    ``/mcp/servers/<i>/tools/<j>``: the ``j``-th tool server ``i`` listed (the document is read
    as if the listing stood there).

    Needs the ``mcp`` extra. A server that cannot be reached is an error at its entry.
    """
    from toolbind.runtime.mcp import list_server_tools, read_mcp_config

    loc = SourceLocation(file=doc_path)
    servers, problems = read_mcp_config(value)
    for pointer, what, expected in problems:
        diags.error(SourceLocation(file=doc_path, pointer=pointer), what, expected)
    if problems:
        return None
    try:
        import mcp as _sdk  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        diags.error(
            loc.child("mcp"),
            "an MCP configuration, and the mcp extra is not installed",
            "pip install 'toolbind[mcp]' to list the servers' tools",
        )
        return None
    listed = list_server_tools(servers)
    raw_servers = cast("list[Any]", as_object(value)["mcp"]["servers"])  # pyright: ignore[reportOptionalSubscript]
    root: dict[str, Any] = {"mcp": {"servers": [dict(s) for s in raw_servers]}}
    for i, (_, found) in enumerate(listed):
        root["mcp"]["servers"][i]["tools"] = found if isinstance(found, list) else []
    reader = make_reader(root)
    tools: list[ToolSpec] = []
    owners: list[tuple[str, str]] = []
    for i, (server, found) in enumerate(listed):
        at = loc.child("mcp", "servers", i)
        if not isinstance(found, list):
            diags.error(
                at,
                f"the tools of MCP server {server.name!r} could not be listed: {found}",
                "a server that answers tools/list",
                hint="is it running, and are its ${env.X} variables set?",
            )
            continue
        names = {t.get("name") for t in found}
        for missing in [n for n in server.allowed_tools or () if n not in names]:
            # (no rule: the configuration names a tool the server does not list)
            diags.warning(
                at.child("allowedTools"),
                f"MCP server {server.name!r} lists no tool named {missing!r}",
                "names of tools the server lists",
            )
        for j, raw in enumerate(found):
            tool = read_tool(reader, raw, at.child("tools", j))
            if tool is not None:
                tools.append(tool)
                owners.append((tool.name, server.name))
    source = McpSource(
        servers=tuple(freeze(s.to_json()) for s in servers),
        tool_servers=tuple(owners),
    )
    return tools, source
