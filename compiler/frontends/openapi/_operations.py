"""Compiler layer (frontends/openapi): one Operation Object as a ``ToolSpec`` and the HTTP
contract's ``HttpOperation``. Imports ``ir``, ``naming``, ``_load``, the modules of the objects
an operation holds (``_parameters``, ``_bodies``, ``_responses``, ``_security``, ``_servers``),
``_common``, ``_context`` and the runtime's HTTP contract.

Its parameters and request body are the Call's fields; the first success response is its
output; the spec's servers and security and the operation's wire details are its
``HttpOperation``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from toolbind.contract import META_FIELDS, HttpOperation

from ... import naming
from ..._load import as_array, as_object
from ...ir import Meta, NeverNode, ObjectNode, Property, SourceLocation, ToolSpec
from . import _bodies, _parameters, _responses, _security, _servers
from ._common import OperationFilter, Where
from ._context import Context


def operation(
    ctx: Context,
    route: str,
    method: str,
    items: tuple[Where, ...],
    op: dict[str, Any],
    loc: SourceLocation,
    select: OperationFilter | None,
    op_doc: Where,
) -> tuple[ToolSpec, HttpOperation] | None:
    """One operation as a tool (None: the filter leaves it out). ``items``: the path item's
    parts (the item, then what is written beside its $ref), each with the document its $refs
    are relative to. ``op_doc`` is where ``op`` was read: the document its own ``$ref``s
    (parameters, body, responses) are relative to, which a path item's are not when the
    operation was ``$ref``-ed from another file."""
    raw_id = op.get("operationId")
    operation_id = raw_id if isinstance(raw_id, str) and raw_id else None
    tags = tuple(t for t in as_array(op.get("tags")) or [] if isinstance(t, str))
    wanted = naming.operation_tool_name(operation_id, method, route)
    if select and not select.keeps(tags, route, operation_id, wanted):
        return None
    name = ctx.names.claim(wanted)
    if name != wanted:
        ctx.diags.note(
            loc, f"operation {method.upper()} {route} is the tool {name!r} ({wanted!r} was taken)"
        )
    owners: list[tuple[dict[str, Any], SourceLocation, Where]] = [
        (as_object(part.value) or {}, part.loc, part) for part in items
    ]
    # Parameters: path-level first, operation-level overriding by (name, in).
    raw_params, accept = _parameters.collect(ctx, [*owners, (op, loc, op_doc)])
    _parameters.match_template(ctx, route, raw_params, loc, items[0])
    props: list[Property] = []
    taken: set[str] = set(META_FIELDS)
    params = _parameters.parameters(ctx, raw_params, taken, props, name)
    body = _bodies.body(ctx, op, loc, op_doc, raw_params, _bodies.Fields(taken, props, name))
    _bodies.count_body(ctx, op, loc, raw_params, body)
    output, responses, errors = _responses.responses(ctx, op, loc, op_doc)
    deprecated = op.get("deprecated") is True
    tool = ToolSpec(
        name=name,
        loc=loc,
        # closed: a field the operation does not declare has nowhere to go on the wire, so it
        # is refused (and fed back to the model) instead of being dropped in silence
        params=ObjectNode(
            meta=Meta(loc=loc), properties=tuple(props), additional=NeverNode(meta=Meta(loc=loc))
        ),
        output=output,
        description=_description(op, deprecated),
        activity=name,
        deprecated=deprecated,
        toolsets=tags,
        original_name=operation_id if operation_id and operation_id != name else None,
        errors=errors,
    )
    http = HttpOperation(
        tool=name,
        operation_id=operation_id,
        method=method.upper(),
        path=_fixed_query_left(route, {p.name for p in params if p.location == "query"}),
        parameters=tuple(params),
        body=body,
        responses=responses,
        security=_security.security(ctx, op.get("security"), loc.child("security")),
        servers=_servers.servers(ctx, op, loc)
        or next(
            (got for o, at, _ in reversed(owners) if (got := _servers.servers(ctx, o, at))), ()
        ),
        deprecated=deprecated,
        accept=accept,
    )
    return tool, http


def _description(op: dict[str, Any], deprecated: bool) -> str | None:
    """The tool's description: the summary and the description (one when they are the same),
    marked when the operation is deprecated."""
    summary = op.get("summary") if isinstance(op.get("summary"), str) else None
    description = op.get("description") if isinstance(op.get("description"), str) else None
    text = (
        "\n\n".join(t.strip() for t in (summary, description) if t and t.strip())
        if summary != description
        else (summary or "").strip()
    )
    if deprecated:  # marked where the LLM reads it, not only in the metadata
        text = f"Deprecated. {text}" if text else "Deprecated."
    return text or None


def _fixed_query_left(route: str, declared: set[str]) -> str:
    """``route`` without the pairs of its fixed query (an x-ms-paths key's
    ``?restype=container&comp=acl``) that a declared query parameter sends: AutoRest's specs
    declare those too (``restype``, required, ``enum: [container]``), and both went out."""
    path, mark, query = route.partition("?")
    if not mark or not declared:
        return route
    kept = [pair for pair in query.split("&") if unquote(pair.split("=", 1)[0]) not in declared]
    return path + ("?" + "&".join(kept) if kept else "")
