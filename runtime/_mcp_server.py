"""Runtime layer: compiled tools served as an MCP server (``toolbind serve``). Imports ``mcp``.

Each tool with a way to run (an Activity: a user function, a generated HTTP Activity) is an MCP
tool: ``inputSchema`` is exactly what ``toolbind schema --format mcp`` exports (``mcp_tools``), and
``outputSchema``, ``title``, ``annotations`` and the description come along. A call is validated
by the tool's generated Call model — a validation error is an MCP tool error naming each field —
then routed to the Activity; the result comes back as ``structuredContent`` (the Output's JSON)
plus the same JSON as text, and a failed ``ToolResult`` as ``isError``. A tool with no Activity is
not served: there is nothing here to run it.

Uses the official ``mcp`` SDK's low-level ``Server``; the protocol is the SDK's, not ours.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from ._binding import ToolBinding
from ._compose import resolve_activity
from ._executor import invoke as _invoke
from ._executor import to_result as _to_result
from ._exports import mcp_tools
from ._response import explain_errors

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server


def servable(
    tools: Iterable[ToolBinding], activities: Mapping[str, Callable[..., Any]]
) -> tuple[dict[str, tuple[ToolBinding, Callable[..., Any]]], list[str]]:
    """The tools that have an Activity (by name → (binding, function)), and the names of those
    that have none (not served)."""
    served: dict[str, tuple[ToolBinding, Callable[..., Any]]] = {}
    skipped: list[str] = []
    for tool in tools:
        name = resolve_activity(tool, activities.keys()) or tool.name
        fn = activities.get(name)
        if fn is None:
            skipped.append(tool.name)
        else:
            served[tool.name] = (tool, fn)
    return served, skipped


def mcp_server(
    tools: Iterable[ToolBinding],
    activities: Mapping[str, Callable[..., Any]],
    *,
    name: str = "toolbind",
    version: str = "",
) -> Server[Any]:
    """An MCP server (the ``mcp`` SDK's low-level ``Server``) for the ``tools`` that have an
    Activity in ``activities`` (tool name → function; a generated package's
    ``HttpActivities(client).async_activities()`` for an OpenAPI spec). Run it with the SDK:
    ``mcp.server.stdio.stdio_server()`` + ``server.run(...)``, or ``server.streamable_http_app()``.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server

    served, _ = servable(tools, activities)
    listed = mcp_tools([binding for binding, _ in served.values()], activities.keys())["tools"]
    tool_list = [
        types.Tool.model_validate(
            {
                "name": entry["name"],
                "title": entry.get("title"),
                "description": entry.get("description"),
                "inputSchema": entry["inputSchema"],
                "outputSchema": entry.get("outputSchema"),
                "annotations": entry.get("annotations"),
            }
        )
        for entry in listed
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = served.get(params.name)
        if found is None:
            return _error(f"no tool named {params.name!r} is served here")
        binding, fn = found
        arguments: dict[str, Any] = {**(params.arguments or {}), "_tool": binding.name}
        try:
            call = binding.call_model.model_validate(arguments)
        except ValidationError as exc:
            return _error(explain_errors(exc.errors(), arguments))
        try:
            if inspect.isasyncgenfunction(
                fn
            ):  # each item it yields is progress; the last, the result
                value: Any = None
                done = 0
                async for value in fn(call):
                    done += 1
                    await _progress(ctx, done, value)
            else:
                value = await _invoke(fn, call, lambda _: None)
        except Exception as exc:  # the Activity's own failure: a tool error the model can read
            return _error(f"{binding.name} failed: {type(exc).__name__}: {exc}")
        result = _to_result(value, binding)
        data: Any = json.loads(json.dumps(result.model_dump(mode="json")["data"]))
        if not result.success:
            return _error(result.error or "the tool failed", data)
        text = json.dumps(data, ensure_ascii=False)
        structured = cast("dict[str, Any]", data) if isinstance(data, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
        )

    return Server(name, version=version, on_list_tools=list_tools, on_call_tool=call_tool)


def _error(message: str, data: Any = None) -> Any:
    import mcp_types as types

    text = message if data is None else f"{message}\n{json.dumps(data, ensure_ascii=False)}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def _progress(ctx: Any, done: int, item: Any) -> None:
    """An MCP progress notification for one item an async-generator Activity yields, when the
    client asked for progress: the count so far, and the item (JSON) as its message. The SDK's
    session sends it against the caller's token (a no-op when there is none)."""
    message = json.dumps(to_jsonable_python(item, by_alias=True), ensure_ascii=False)[:500]
    await ctx.session.report_progress(done, None, message)
