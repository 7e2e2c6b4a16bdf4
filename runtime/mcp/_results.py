"""toolbind.runtime.mcp, runtime layer (imports the runtime's ``_result``, and pydantic lazily):
a ``tools/call`` result as a ``ToolResult``.

``isError`` → a failed ``ToolResult`` with the content's text; ``structuredContent`` → the Output
(checked against the tool's ``outputSchema``); else the content: one text block → its text,
anything else → the list of content blocks as MCP's JSON (``{"type": "image", "data": <base64>,
"mimeType": ...}``, ``{"type": "resource", "resource": {...}}``, ...).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from .._result import ToolResult


def content_value(content: Sequence[Any]) -> Any:
    """The value of a result's content blocks: one text block → its text; otherwise the blocks
    as MCP's JSON."""
    blocks = [
        cast("dict[str, Any]", c.model_dump(mode="json", by_alias=True, exclude_none=True))
        for c in content
    ]
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return blocks[0].get("text", "")
    return blocks


def _text_of(content: Sequence[Any]) -> str:
    texts = [getattr(c, "text", None) for c in content]
    return "\n".join(t for t in texts if isinstance(t, str))


def result_value(
    result: Any, *, server: str, tool: str, output_model: Any = None
) -> ToolResult[Any]:
    """A ``CallToolResult`` as a ``ToolResult``: ``isError`` → failed; ``structuredContent`` →
    the Output (validated by ``output_model`` when given); else the content's value."""
    meta = {"execution": "explicit", "mcp_server": server}
    if result.is_error:
        text = _text_of(result.content) or "the tool reported an error"
        return ToolResult[Any].fail(
            f"MCP server {server!r}, tool {tool!r}: {text}",
            data=result.structured_content,
            error_type="tool_error",
            **meta,
        )
    data: Any
    if result.structured_content is not None:
        data = result.structured_content
    elif output_model is not None:  # an outputSchema but no structuredContent: the JSON text
        try:
            data = json.loads(_text_of(result.content))
        except ValueError:
            data = content_value(result.content)
    else:
        data = content_value(result.content)
    if output_model is not None:
        from pydantic import ValidationError

        try:
            data = output_model.model_validate(data)
        except ValidationError as exc:
            return ToolResult[Any].fail(
                f"MCP server {server!r}, tool {tool!r}: the result does not match the tool's "
                f"outputSchema: {exc.errors()[0]['msg']}",
                data=data,
                error_type="output",
                **meta,
            )
    return ToolResult[Any].ok(data, **meta)
