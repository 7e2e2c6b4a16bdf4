"""Compiler layer (frontends/openapi): Response Objects as the tool's Output, its error
schemas and the HTTP contract's ``HttpResponse``. Imports ``ir``, ``_load``, ``diagnostics``,
``normalise``, ``_common``, ``_context`` and the runtime's HTTP contract.

The first success response (2xx lowest first, then ``default``) is the Output. A Swagger 2.0
response is read as the OpenAPI 3 content the rules make of it (``normalise.openapi_swagger2``).
"""

from __future__ import annotations

import re
from typing import Any

from toolbind.contract import HttpResponse

from ..._load import as_object
from ...ir import AnyNode, Meta, NullNode, SchemaNode, SourceLocation, StringNode
from ...normalise import openapi_swagger2
from ...normalise._openapi import Produced, body_kind, is_json, pick_media_type
from ._common import Where
from ._context import Context

# Statuses that carry no content whatever the spec says (RFC 9110 §15.3.5, §15.4.5).
_NO_CONTENT = frozenset({"204", "205", "304"})

Responses = tuple[SchemaNode | None, tuple[HttpResponse, ...], tuple[tuple[str, SchemaNode], ...]]
"""The Output's schema, every declared response, and the error responses' schemas."""


def responses(ctx: Context, op: dict[str, Any], loc: SourceLocation, item: Where) -> Responses:
    """The operation's responses (``item``: the document its ``$ref``s are relative to)."""
    table = as_object(op.get("responses")) or {}
    chosen = _success_status(list(table))
    output: SchemaNode | None = None
    out: list[HttpResponse] = []
    errors: list[tuple[str, SchemaNode]] = []
    for status, raw in table.items():
        if status.startswith("x-"):
            continue
        ctx.counts["responses", "read"] += 1
        at = Where(raw, loc.child("responses", status), item.root, item.path)
        read = ctx.deref_object(at, "response")
        if read is None:
            ctx.counts["responses", "reported"] += 1
            continue
        found, resp = read
        media_type, schema = _content(ctx, op, resp, found)
        is_output = status == chosen
        if is_output:
            output = _output(ctx, status, media_type, schema, found)
        elif (
            schema is not None
            and _is_error_status(status)
            and body_kind(media_type or "") == "json"
        ):
            errors.append((status, ctx.schema(schema)))
        declared = as_object(resp.get("headers")) or {}
        if declared:  # (a kind is listed by generate -v only where a spec has it)
            ctx.counts["response headers", "read"] += len(declared)
            ctx.counts["response headers", "emitted"] += len(declared)
        resolved = ctx.resolved(output) if is_output and output is not None else None
        out.append(
            HttpResponse(
                status=status,
                media_type=media_type,
                is_output=is_output,
                binary=isinstance(resolved, StringNode) and resolved.format == "binary",
                headers=tuple(sorted({str(h).lower() for h in declared})),
            )
        )
        ctx.counts["responses", "emitted"] += 1
    return output, tuple(out), tuple(errors)


def _content(
    ctx: Context, op: dict[str, Any], resp: dict[str, Any], found: Where
) -> tuple[str | None, Where | None]:
    """A response's media type and schema (Swagger 2.0's: OpenAPI 3's content, by
    ``normalise.openapi_swagger2``)."""
    found = ctx.canonical(
        (openapi_swagger2.RESPONSE_CONTENT,), found, Produced(response=resp, operation=op)
    )
    content = as_object((as_object(found.value) or {}).get("content")) or {}
    if not content:
        return None, None
    media_type = pick_media_type(list(content))
    media = as_object(content[media_type]) or {}
    if "schema" in media:
        at = found.at("content", media_type, "schema")
        return media_type, Where(media["schema"], at, found.root, found.path)
    if body_kind(media_type) in ("text", "binary"):
        return media_type, Where({"type": "string"}, found.loc, found.root, found.path)
    return media_type, None


def _output(
    ctx: Context, status: str, media_type: str | None, schema: Where | None, found: Where
) -> SchemaNode | None:
    """The Output's schema from the chosen response."""
    if schema is not None:
        output = ctx.schema(schema)
        kind = body_kind(media_type or "")
        if kind == "binary" and not is_json(media_type or ""):
            return StringNode(meta=Meta(loc=schema.loc), format="binary")
        if kind == "text" and not isinstance(output, StringNode):
            # The schema describes the document (XML, CSV…); what arrives is its text.
            return StringNode(meta=Meta(loc=schema.loc, description=f"The {media_type} text."))
        return output
    if status in _NO_CONTENT:
        return NullNode(meta=Meta(loc=found.loc, description="No content."))
    if media_type is None:
        # No schema is no promise: whatever the API sends (JSON as JSON, text as a string,
        # other content base64) is the result, not a failed output check.
        return AnyNode(meta=Meta(loc=found.loc, description="The response, as the API sends it."))
    return None


def _is_error_status(status: str) -> bool:
    """4xx/5xx (``404``, ``4XX``) or ``default`` (when it is not the Output)."""
    return status == "default" or re.fullmatch(r"[45](\d\d|XX|xx)", status) is not None


def _success_status(statuses: list[str]) -> str | None:
    codes = sorted(s for s in statuses if re.fullmatch(r"2\d\d", s))
    if codes:
        return codes[0]
    if "2XX" in statuses or "2xx" in statuses:
        return "2XX" if "2XX" in statuses else "2xx"
    return "default" if "default" in statuses else None
