"""toolbind.runtime.mcp, runtime layer (imports the runtime's ``_aio``, ``_binding``, ``_result``,
``contract`` and, lazily, ``_registry``, and this package's ``_connection``): a listed MCP tool as a
``ToolBinding``, and the Activity that calls it.

Each tool of ``tools/list`` is a ``ToolBinding`` (execution type ``gateway``, not visible, never
latent) whose models are compiled from its ``inputSchema``/``outputSchema`` on first use; its
Activity (``with_progress``) yields the server's progress notifications, then the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import Any, cast

from .._aio import drain
from .._binding import ToolBinding
from .._result import ToolResult
from ..contract import META_FIELDS
from ._connection import McpConnection


def binding_for(tool: Mapping[str, Any], server: str) -> ToolBinding:
    """A ``ToolBinding`` for one tool of ``tools/list``: a ``gateway`` tool, not visible, its
    models compiled from ``inputSchema``/``outputSchema`` (through ``model_from_schema``) on first
    use."""
    from .._registry import binding_from_schema

    name = str(tool["name"])
    raw_input: Any = tool.get("inputSchema") or {"type": "object"}
    given = cast("dict[str, Any]", raw_input) if isinstance(raw_input, dict) else {"type": "object"}
    schema: dict[str, Any] = {k: v for k, v in given.items() if k != "$schema"}
    props_given = cast("dict[str, Any]", schema.get("properties") or {})
    tag: Any = props_given.get("_tool")
    if isinstance(tag, dict) and cast("dict[str, Any]", tag).get("const") == name:
        # a tool toolbind exported (``toolbind serve``): its meta fields are not parameters
        schema["properties"] = {k: v for k, v in props_given.items() if k not in META_FIELDS}
        schema["required"] = [
            r for r in cast("list[Any]", schema.get("required") or []) if r not in META_FIELDS
        ]
    output: Any = tool.get("outputSchema")
    merged = dict(schema)
    extra: dict[str, Any] = {}
    if isinstance(output, dict):
        out, defs = _hoisted(
            cast("dict[str, Any]", output), cast("dict[str, Any]", schema.get("$defs") or {})
        )
        extra = {"_output": out}
        if defs:
            merged["$defs"] = defs
    props = cast("dict[str, Any]", schema.get("properties") or {})
    seeds: dict[str, Any] = {
        **merged,
        "type": "object",
        "properties": {"_tool": {"const": name}, **props, **extra},
        "required": ["_tool", *cast("list[str]", schema.get("required") or [])],
    }
    where = f"<mcp server {server!r}, tool {name!r}>"

    def models() -> tuple[Any, Any]:
        made = binding_from_schema(name, seeds, source=where)
        return made.call_model, made.output_model

    params: dict[str, Any] = {k: v for k, v in schema.items() if k not in ("title", "description")}
    params.setdefault("type", "object")
    defs = cast("dict[str, Any]", params.pop("$defs", None) or {})
    annotations = tool.get("annotations")
    description = tool.get("description")
    title = tool.get("title")
    if title is None and isinstance(annotations, dict):
        title = cast("dict[str, Any]", annotations).get("title")
    provider = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
    return ToolBinding(
        name=name,
        provider_name=provider,
        models=models,
        parameters=params,
        output_schema=cast("dict[str, Any]", output) if isinstance(output, dict) else None,
        defs=defs,
        description=description if isinstance(description, str) else None,
        title=title if isinstance(title, str) else None,
        execution_type="gateway",
        visible=False,
        annotations=cast("dict[str, Any]", annotations) if isinstance(annotations, dict) else None,
        source=where,
    )


def _hoisted(output: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An ``outputSchema`` whose own ``$defs``/``definitions`` are moved to the root beside
    the input's ``$defs`` (renamed where a name is taken), its ``$ref``s rewritten to match: in
    the tool schema the output sits under ``properties/_output``, where ``#/$defs/X`` means the
    root's."""
    out = {k: v for k, v in output.items() if k not in ("$schema", "$defs", "definitions")}
    merged = dict(defs)
    rename: dict[str, str] = {}
    for key in ("$defs", "definitions"):
        found = output.get(key)
        if not isinstance(found, dict):
            continue
        for name, value in cast("dict[str, Any]", found).items():
            new = name
            while new in merged and merged[new] != value:
                new = f"Output{new}"
            rename[f"#/{key}/{name}"] = f"#/$defs/{new}"
            merged[new] = value
    if not rename:
        return out, merged

    def rewrite(value: Any) -> Any:
        if isinstance(value, dict):
            obj = cast("dict[str, Any]", value)
            return {
                k: rename.get(v, v) if k == "$ref" and isinstance(v, str) else rewrite(v)
                for k, v in obj.items()
            }
        if isinstance(value, list):
            return [rewrite(v) for v in cast("list[Any]", value)]
        return value

    return rewrite(out), {k: rewrite(v) if k in rename.values() else v for k, v in merged.items()}


def arguments_of(call: Any) -> dict[str, Any]:
    """A Call model's arguments for ``tools/call``: by alias, meta fields left out."""
    dumped: Any = (
        call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if hasattr(call, "model_dump")
        else dict(call)
    )
    return {k: v for k, v in cast("dict[str, Any]", dumped).items() if k not in META_FIELDS}


def with_progress(
    method: Callable[..., Coroutine[Any, Any, ToolResult[Any]]], name: str = ""
) -> Callable[[Any], AsyncIterator[Any]]:
    """An async-generator Activity of ``method(call, progress=...)`` (a call to an MCP server):
    it yields each progress notification (``{"progress", "total", "message"}``) as it comes —
    progress events for an Agent — then the ``ToolResult``. Cancelling it (the Agent's timeout)
    cancels the call on the server. A generated ``McpActivities.async_activities()`` is made of
    these, as is a run-time MCP tool's Activity."""

    async def activity(call: Any) -> AsyncIterator[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(method(call, progress=queue.put_nowait))
        try:
            async for item in drain(queue, task):
                yield item
            yield task.result()
        finally:
            if not task.done():  # cancelled (timed out): the SDK tells the server
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    activity.__name__ = f"mcp_{re.sub(r'[^0-9A-Za-z_]', '_', name or method.__name__)}"
    return activity


def streaming_call(
    connection: McpConnection, tool: str, output_model: Callable[[], Any] | None
) -> Callable[[Any], AsyncIterator[Any]]:
    """``with_progress`` for ``tool`` on ``connection`` (the Output model made on first use)."""

    async def call_tool(call: Any, progress: Callable[[Any], None]) -> ToolResult[Any]:
        return await connection.call(
            tool,
            arguments_of(call),
            output_model=output_model() if output_model is not None else None,
            progress=progress,
        )

    return with_progress(call_tool, tool)
