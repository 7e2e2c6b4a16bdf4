"""toolbind.runtime.mcp, runtime layer (imports the ``mcp`` SDK lazily, pydantic, the runtime's
executor, response feedback, result and secrets): what the MCP server sends back.

A result comes back as ``structuredContent`` (the Output's JSON) plus the same JSON as text (a
string: as the text itself), a failed ``ToolResult`` as ``isError``, another MCP server's content
blocks and an API's binary answer as blocks of their kind; every configured secret is scrubbed
from what goes back. Progress items become MCP progress notifications.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails, to_jsonable_python

from .._binding import ToolBinding
from .._executor import to_result as _to_result
from .._response import feedback_for
from .._result import ToolResult
from .._secrets import scrub_everywhere

LATENT_META = {"toolbind/execution": "latent"}
"""The ``_meta`` of a latent tool's result over MCP: nothing ran, the caller's ``_output`` is it."""


def reply(binding: ToolBinding, value: Any, *, typed: bool, latent: bool) -> Any:
    """The ``CallToolResult`` of what a served tool's Activity returned (``typed``: the tool
    lists an ``outputSchema``, which a client checks ``structuredContent`` against)."""
    import mcp_types as types

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
        return tool_error(result.error or "the tool failed", None if data is None else text)
    if "mcp_server" in result.metadata and (blocks := _content_blocks(data)) is not None:
        return types.CallToolResult(content=blocks)  # another MCP server's image, resource...
    if typed and (unlike := _unlike_output(binding, result.data, data)):
        return tool_error(
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
        _meta=LATENT_META if latent else None,
    )


def quiet_telemetry(server: Any) -> None:
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


def invalid(tool: str, errors: list[ErrorDetails], arguments: Mapping[str, Any]) -> str:
    """The tool error for arguments refused (by its Call model, or its schema's meta fields: the
    ``errors`` as pydantic's): the tool, then one line per field."""
    feedback = feedback_for(errors, arguments)
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


def tool_error(message: str, text: str | None = None) -> Any:
    """A tool error (``isError``): ``message``, then ``text`` (the result as sent), scrubbed."""
    import mcp_types as types

    body = scrub_everywhere(message if text is None else f"{message}\n{text}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=body)], is_error=True)


_PROGRESS_KEYS = frozenset({"progress", "total", "message"})


async def report_progress(ctx: Any, done: int, item: Any) -> None:
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
