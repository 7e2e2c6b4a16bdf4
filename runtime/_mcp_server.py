"""Runtime layer: compiled tools served as an MCP server (``toolbind serve``). Imports ``mcp``.

Each tool with a way to run (an Activity: a user function, a generated HTTP Activity) is an MCP
tool: ``inputSchema`` is exactly what ``toolbind schema --format mcp`` exports (``mcp_tools``), and
``outputSchema``, ``title``, ``annotations`` and the description come along. A call is validated
by the tool's generated Call model — a validation error is an MCP tool error naming the tool and
each field — then routed to the Activity; the result comes back as ``structuredContent`` (the Output's JSON)
plus the same JSON as text (a string: as the text itself), and a failed ``ToolResult`` as
``isError``; the content blocks another MCP server answered (a generated ``McpActivities``
method's image, audio, resource...) come back as those blocks. Every configured secret
(credentials, ``${env.X}`` values) is scrubbed from what goes back, as from an Agent's tool
messages. A tool with no Activity is not served — unless ``latent=True``: then it is offered
with its ``_output`` field (as ``toolbind schema --format mcp`` exports it), nothing runs, and a
call's result is the ``_output`` its caller wrote, checked against the Output model and marked
``_meta["toolbind/execution"] = "latent"`` (a call without one is a tool error). Tools that run
elsewhere (``gateway``/``internal`` execution, a named ``_activity``) are never latent.

The per-call path does once what can be done once: each tool's kind of Activity (sync, async,
async generator, latent) is known when the server is built; sync Activities run in a worker
thread, async ones on the loop; the SDK's OpenTelemetry middleware is dropped unless a tracer
provider is installed (it would only make no-op spans). ``bench/mcp.py`` measures the path.

Uses the official ``mcp`` SDK's low-level ``Server``; the protocol is the SDK's, not ours.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from toolbind._compose import resolve_activity

from ._binding import ToolBinding
from ._executor import to_result as _to_result
from ._exports import mcp_tools
from ._response import feedback_for
from ._result import ToolResult
from ._secrets import scrub_everywhere

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server


Kind = Literal["sync", "async", "generator", "latent"]

LATENT_META = {"toolbind/execution": "latent"}
"""The ``_meta`` of a latent tool's result over MCP: nothing ran, the caller's ``_output`` is it."""


@dataclass(frozen=True, slots=True)
class Served:
    """A served tool: its binding, its Activity (None: latent) and how that Activity is called."""

    binding: ToolBinding
    fn: Callable[..., Any] | None
    kind: Kind


def _kind(fn: Callable[..., Any]) -> Kind:
    if inspect.isasyncgenfunction(fn):
        return "generator"
    if inspect.iscoroutinefunction(fn):
        return "async"
    return "sync"


def may_be_latent(tool: ToolBinding) -> bool:
    """Whether ``tool`` may run latently (its caller's ``_output`` the result): it names no
    Activity of its own and runs nowhere else (``gateway``/``internal``, an ``execution`` config,
    a pending ``space``/``external`` tool) — the Agent's rule."""
    from ._agent import RUNS_ELSEWHERE

    pending = tool.execution_type in ("space", "external")
    return not (tool.activity or tool.execution or pending or tool.execution_type in RUNS_ELSEWHERE)


def servable(
    tools: Iterable[ToolBinding],
    activities: Mapping[str, Callable[..., Any]],
    *,
    latent: bool = False,
) -> tuple[dict[str, Served], list[str]]:
    """The tools served (by name), and the names of those that are not: no Activity (and, with
    ``latent``, not one that may run latently)."""
    served: dict[str, Served] = {}
    skipped: list[str] = []
    for tool in tools:
        name = resolve_activity(tool, activities.keys()) or tool.name
        fn = activities.get(name)
        if fn is not None:
            served[tool.name] = Served(tool, fn, _kind(fn))
        elif latent and may_be_latent(tool):
            served[tool.name] = Served(tool, None, "latent")
        else:
            skipped.append(tool.name)
    return served, skipped


def mcp_server(
    tools: Iterable[ToolBinding],
    activities: Mapping[str, Callable[..., Any]],
    *,
    name: str = "toolbind",
    version: str = "",
    latent: bool = False,
) -> Server[Any]:
    """An MCP server (the ``mcp`` SDK's low-level ``Server``) for the ``tools`` that have an
    Activity in ``activities`` (tool name → function; a generated package's
    ``HttpActivities(client).async_activities()`` for an OpenAPI spec); with ``latent``, also
    the tools that have none and may run latently (their result: the caller's ``_output``).
    Run it with the SDK: ``mcp.server.stdio.stdio_server()`` + ``server.run(...)``, or
    ``server.streamable_http_app()``.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server

    served, _ = servable(tools, activities, latent=latent)
    listed = mcp_tools([s.binding for s in served.values()], activities.keys())["tools"]
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
    listing = types.ListToolsResult(tools=tool_list)
    # a client checks these tools' structuredContent against the outputSchema listed (the SDK's
    # client raises on a result that does not fit, or that has none: the result is lost)
    typed = {entry["name"] for entry in listed if "outputSchema" in entry}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = served.get(params.name)
        if found is None:
            return _error(f"no tool named {params.name!r} is served here")
        binding, fn = found.binding, found.fn
        arguments: dict[str, Any] = dict(params.arguments or {})
        arguments["_tool"] = binding.name
        try:
            call = binding.call_model.model_validate(arguments)
        except ValidationError as exc:
            return _error(_invalid(binding.name, exc, arguments))
        try:
            if fn is None:  # latent: the caller's _output is the result
                if "_output" not in arguments:
                    return _error(
                        f"{binding.name} is latent (no Activity runs it): its result is the "
                        "_output the call gives, and this call gave none"
                    )
                value: Any = ToolResult[Any].ok(
                    call.model_dump(mode="json", by_alias=True, include={"output"})["_output"]
                )
            elif found.kind == "async":
                value = await fn(call)
            elif found.kind == "sync":
                value = await asyncio.to_thread(fn, call)
                if inspect.isawaitable(value):  # a callable object whose __call__ is async
                    value = await value
            else:  # each item an async generator yields is progress; the last, the result
                value = None
                done = 0
                async for value in fn(call):
                    if isinstance(value, ToolResult):  # the result, not progress (as an Agent)
                        continue
                    done += 1
                    await _progress(ctx, done, value)
        except Exception as exc:  # the Activity's own failure: a tool error the model can read
            return _error(f"{binding.name} failed: {type(exc).__name__}: {exc}")
        result: ToolResult[Any] = (
            cast("ToolResult[Any]", value)
            if isinstance(value, ToolResult)
            else _to_result(value, binding)
        )
        if result.success and (block := _binary_block(result)) is not None:
            return types.CallToolResult(content=[block])  # an API's image, audio, file
        data = _json_of(result.data)
        # a string is the text itself: a JSON string literal would come back quoted and escaped
        raw = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        text = scrub_everywhere(raw)
        if not result.success:
            return _error(result.error or "the tool failed", None if data is None else text)
        if "mcp_server" in result.metadata and (blocks := _content_blocks(data)) is not None:
            return types.CallToolResult(content=blocks)  # another MCP server's image, resource...
        if binding.name in typed and (unlike := _unlike_output(binding, result.data, data)):
            return _error(
                f"{binding.name}: the call went through, but {unlike}, so it cannot be the "
                "structured result its outputSchema describes"
                + ("" if data is None else "; the result as sent:"),
                None if data is None else text,
            )
        structured: dict[str, Any] | None = None
        if isinstance(data, dict):  # a secret scrubbed from the text is scrubbed here too
            structured = cast("dict[str, Any]", data if text == raw else json.loads(text))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            _meta=LATENT_META if fn is None else None,
        )

    server = Server(name, version=version, on_list_tools=list_tools, on_call_tool=call_tool)
    _quiet_telemetry(server)
    return server


def _quiet_telemetry(server: Any) -> None:
    """Drop the SDK's OpenTelemetry middleware when no tracer provider is installed: it would
    make a no-op span per message, a cost on every call for nothing."""
    try:
        from opentelemetry import trace
    except ImportError:  # pragma: no cover - the SDK depends on it
        return
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        server.middleware = [
            m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"
        ]


def _json_of(value: Any) -> Any:
    """An Activity's data as JSON: an Output model as the API (or Activity) gave it — by alias,
    the fields it set, no nulls for the ones it did not."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return to_jsonable_python(value, by_alias=True)


def _invalid(tool: str, exc: ValidationError, arguments: Mapping[str, Any]) -> str:
    """The tool error for arguments its Call model refused: the tool, then one line per field."""
    feedback = feedback_for(exc.errors(), arguments)
    lines = list(feedback.lines)
    if feedback.total > len(lines):
        lines.append(f"- … and {feedback.total - len(lines)} more errors")
    return f"invalid arguments for tool {tool!r} (fix each and call again):\n" + "\n".join(lines)


def _content_blocks(data: Any) -> list[Any] | None:
    """The content blocks of a result from another MCP server (a generated ``McpActivities``
    method's, whose data is the list of blocks as MCP's JSON when it is not one text block),
    scrubbed of secrets; None when ``data`` is not such a list."""
    import mcp_types as types
    from pydantic import TypeAdapter

    if not isinstance(data, list):
        return None  # (an empty list: the server answered no content, and neither does this)
    try:
        scrubbed = json.loads(scrub_everywhere(json.dumps(data, ensure_ascii=False)))
        return TypeAdapter(list[types.ContentBlock]).validate_python(scrubbed)
    except ValidationError:
        return None


def _unlike_output(binding: ToolBinding, value: Any, data: Any) -> str | None:
    """Why a successful result (``value``; ``data``, its JSON) does not fit the tool's Output
    model, whose schema is the listed ``outputSchema`` — an API's answer kept as sent (a
    ``null`` for a required member, a member a closed object does not declare: the
    ``metadata["nulls"]``/``["extras"]`` successes), no content at all (a 204 beside a 200 that
    has a schema) — or None when it fits."""
    model = binding.output_model
    if isinstance(value, model):
        return None
    if data is None:
        return "it answered no content"
    try:
        model.model_validate(data)
    except ValidationError as exc:
        fields = [
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]
        ]
        return f"its result does not match {model.__name__} ({'; '.join(fields)})"
    return None


def _binary_block(result: ToolResult[Any]) -> Any:
    """A binary answer (an HTTP Activity's, whose ``metadata["media_type"]`` says what it is) as
    the MCP content block of its kind — an image, audio, else an embedded resource — carrying
    its base64, as a client shows or passes it on; None when the result is not binary content."""
    import mcp_types as types

    media = result.metadata.get("media_type")
    if not isinstance(media, str) or not media:
        return None
    value = result.data
    if isinstance(value, bytes | bytearray):
        data = base64.b64encode(value).decode("ascii")
    else:
        data = _json_of(value)
        if not isinstance(data, str):
            return None
        try:  # a generated Output holds binary content as JSON does: a base64 string
            base64.b64decode(data, validate=True)
        except binascii.Error:
            return None
    kind = media.split("/", 1)[0]
    if kind == "image":
        return types.ImageContent(type="image", data=data, mime_type=media)
    if kind == "audio":
        return types.AudioContent(type="audio", data=data, mime_type=media)
    uri = result.metadata.get("url")
    resource = types.BlobResourceContents(
        uri=uri if isinstance(uri, str) and uri else "toolbind:binary", mime_type=media, blob=data
    )
    return types.EmbeddedResource(type="resource", resource=resource)


def _error(message: str, text: str | None = None) -> Any:
    import mcp_types as types

    body = scrub_everywhere(message if text is None else f"{message}\n{text}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=body)], is_error=True)


_PROGRESS_KEYS = frozenset({"progress", "total", "message"})


async def _progress(ctx: Any, done: int, item: Any) -> None:
    """An MCP progress notification for one item an async-generator Activity yields, when the
    client asked for progress: the count so far, and the item (JSON) as its message — or, for
    another MCP server's notification passed on (``{"progress", "total", "message"}``, what a
    generated ``McpActivities``' Activities yield), its own progress, total and message. The
    SDK's session sends it against the caller's token (a no-op when there is none)."""
    sent = cast("dict[str, Any]", item) if isinstance(item, dict) else {}
    if (
        sent
        and sent.keys() <= _PROGRESS_KEYS
        and isinstance(progress := sent.get("progress"), int | float)
        and isinstance(total := sent.get("total"), int | float | None)
        and isinstance(message := sent.get("message"), str | None)
    ):
        shown = None if message is None else scrub_everywhere(message)
        await ctx.session.report_progress(progress, total, shown)
        return
    text = json.dumps(to_jsonable_python(item, by_alias=True), ensure_ascii=False)[:500]
    await ctx.session.report_progress(done, None, scrub_everywhere(text))
