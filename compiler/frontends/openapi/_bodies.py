"""Compiler layer (frontends/openapi): Request Body Objects as the Call's fields and the HTTP
contract's ``HttpBody``. Imports ``ir``, ``_load``, ``diagnostics``, ``normalise``, ``_common``,
``_context``, ``_parameters`` (a Call field's name) and the runtime's HTTP contract.

Swagger 2.0's ``body`` parameter and ``formData`` parameters are read as the request body the
rules make of them (``normalise.openapi_swagger2``), located where they are written.

An object body is flattened into the Call when that is safe (its properties are fields); any
other body is wrapped under one field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from toolbind.contract import BodyKind, BodyPart, HttpBody, ParameterStyle

from ..._load import as_object
from ...diagnostics import describe
from ...ir import (
    AnyNode,
    ArrayNode,
    BooleanNode,
    Definition,
    IntegerNode,
    NeverNode,
    NullNode,
    NumberNode,
    ObjectNode,
    Property,
    RefNode,
    SchemaNode,
    SourceLocation,
    StringNode,
)
from ...normalise import openapi_swagger2
from ...normalise._openapi import Consumed, Form, body_kind, pick_media_type
from ._common import (
    BODY_FIELD,
    Where,
    never_empty,
)
from ._context import Context
from ._parameters import Params, field

# The styles OpenAPI defines for a form-urlencoded body's properties (``encoding``).
_FORM_STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")
_CONCRETE: dict[BodyKind, str] = {
    "json": "application/json",
    "text": "text/plain",
    "binary": "application/octet-stream",
}


class Fields:
    """Where a body's Call fields go: the names taken, the fields made, the tool's name."""

    def __init__(self, taken: set[str], props: list[Property], tool: str) -> None:
        self.taken = taken
        self.props = props
        self.tool = tool


def body(
    ctx: Context,
    op: dict[str, Any],
    loc: SourceLocation,
    item: Where,
    raw_params: Params,
    into: Fields,
) -> HttpBody | None:
    """The operation's request body (None: it has none, or one that cannot be read, said)."""
    read = _request_body(ctx, op, loc, item, raw_params)
    if read is None:
        return None
    found, rb = read
    content = as_object(rb.get("content")) or {}
    if not content:
        # (no rule: broken input that cannot be read, said and skipped)
        ctx.diags.warning(found.loc, "request body has no content", "content: {<type>: ...}")
        return None
    media_type = pick_media_type(list(content))
    mloc = found.at("content", media_type)
    media = as_object(content[media_type]) or {}
    kind = body_kind(media_type)
    if "schema" in media:
        schema = found.part("content", media_type, "schema")
    else:
        raw = {"type": "string", "format": "binary"} if kind == "binary" else {}
        schema = Where(raw, mloc.child("schema"), found.root, found.path)
    node = ctx.schema(schema)
    kind = _base64_text(ctx, kind, node, schema.value, media_type, mloc.child("schema"))
    encoding = as_object(media.get("encoding")) or {}
    # (a property a rule gathered into the body is said of where it was written)
    placed = {str(k[1]): at for k, at in schema.moved.items() if k[:1] == ("properties",)}
    required = rb.get("required") is True
    return _place_body(ctx, node, media_type, kind, required, encoding, into, mloc, placed)


def _request_body(
    ctx: Context,
    op: dict[str, Any],
    loc: SourceLocation,
    item: Where,
    raw_params: Params,
) -> tuple[Where, dict[str, Any]] | None:
    """The request body (Swagger 2.0's body parameter: OpenAPI 3's, by
    ``normalise.openapi_swagger2``), where it is, and the object read (None: none, said)."""
    first = next((p for (_, pin), p in raw_params.items() if pin == "body"), None)
    if first is not None:
        given = Consumed(parameter=first.value, operation=op)
        found = ctx.canonical((openapi_swagger2.BODY_PARAMETER,), first, given)
        if found is not first:
            return found, found.value
    forms = tuple((n, p.value, p.loc) for (n, pin), p in raw_params.items() if pin == "formData")
    if forms:
        at = Where(None, loc.child("requestBody"), item.root, item.path)
        gathered = Form(parameters=forms, operation=op)
        found = ctx.canonical((openapi_swagger2.FORM_PARAMETERS,), at, gathered)
        if found is not at:
            return found, found.value
    if "requestBody" not in op:
        return None
    at = Where(op["requestBody"], loc.child("requestBody"), item.root, item.path)
    return ctx.deref_object(at, "request body")


def _place_body(
    ctx: Context,
    node: SchemaNode,
    media_type: str,
    kind: BodyKind,
    required: bool,
    encoding: dict[str, Any],
    into: Fields,
    loc: SourceLocation,
    placed: dict[str, SourceLocation] | None = None,
) -> HttpBody:
    """A body of ``node`` as Call fields: flattened when it is an object that can be, else
    wrapped under one field (``placed``: where a property is written, when not in the body's
    schema)."""
    sent = _sent_media_type(media_type, kind)
    if sent != media_type:
        # a container orchestrator's create/replace operations consume */*: that header
        # went out as the body's Content-Type, and the server refuses it
        ctx.diags.note(
            loc,
            f"the body is sent as {sent}: {media_type} is a range of media types, which no "
            "request can be sent as",
        )
        media_type = sent
    if kind == "binary" and isinstance(ctx.resolved(node), AnyNode):
        # OpenAPI 3.1 writes raw content as a schema without a type (``image/png: {}``,
        # Matrix's upload: ``application/octet-stream: {schema: {description: ...}}``), as
        # a missing schema is: the content's bytes. Read as any value, the Call asked the
        # model for whatever it liked, and every call was refused as not base64 content.
        node = StringNode(meta=ctx.resolved(node).meta, format="binary")
    obj = ctx.object_of(node)
    _check_form_object(ctx, ctx.resolved(node), media_type, kind, loc)
    parts: list[BodyPart] = []
    if obj is not None and kind in ("form", "multipart"):
        # (OpenAPI 3.1 applies an encoding's style to multipart/form-data parts too)
        styled = kind == "form" or media_type.split(";")[0].strip() == "multipart/form-data"
        parts = _parts(ctx, obj, styled, encoding, loc)
    flattenable = (
        obj is not None
        and obj.properties
        and (obj.additional is None or isinstance(obj.additional, NeverNode))
        and (required or not any(p.required for p in obj.properties))
    )
    if obj is not None and flattenable:
        fields: list[tuple[str, str]] = []
        for prop in obj.properties:
            at = (placed or {}).get(prop.name, loc)
            field_name = field(ctx, prop.name, "body", into.taken, into.tool, at)
            schema = prop.schema
            if prop.required and kind in ("form", "multipart") and not _json_part(parts, prop):
                schema = never_empty(schema) if isinstance(schema, ArrayNode) else schema
            into.props.append(
                replace(prop, name=field_name, schema=schema, required=prop.required and required)
            )
            fields.append((field_name, prop.name))
        return HttpBody(
            media_type=media_type,
            kind=kind,
            required=required,
            fields=tuple(fields),
            parts=tuple(parts),
        )
    field_name = field(ctx, BODY_FIELD, "body", into.taken, into.tool, loc)
    # A required form whose schema requires no field is sent as an empty form when the Call
    # leaves it out (the runtime's rule): the model is not made to write ``body: {}``.
    wrapper_required = required and not _may_be_empty_form(ctx, node, kind)
    into.props.append(Property(name=field_name, schema=node, required=wrapper_required))
    return HttpBody(
        media_type=media_type,
        kind=kind,
        required=required,
        wrapped=field_name,
        parts=tuple(parts),
    )


def _may_be_empty_form(ctx: Context, node: SchemaNode, kind: BodyKind) -> bool:
    """Whether a form or multipart body of ``node`` may hold no field at all: any fields (no
    schema, a free-form object), or only optional ones."""
    if kind not in ("form", "multipart"):
        return False
    target = ctx.resolved(node)
    if isinstance(target, AnyNode):
        return True
    return (
        isinstance(target, ObjectNode)
        and not target.min_properties
        and not any(p.required for p in target.properties)
    )


def _check_form_object(
    ctx: Context, target: SchemaNode, media_type: str, kind: BodyKind, loc: SourceLocation
) -> None:
    """A form or multipart body is an object whose properties are its fields or parts: one of
    another type names none, and a call is refused (said)."""
    if kind not in ("form", "multipart") or not isinstance(
        target, NullNode | BooleanNode | IntegerNode | NumberNode | StringNode | ArrayNode
    ):
        return
    # listmonk's media upload: multipart/form-data of {type: string, format: binary}.
    # The Call took the value and every call was refused, and generate said nothing.
    what = "parts" if kind == "multipart" else "fields"
    file = isinstance(target, StringNode) and target.format == "binary"
    # (no rule: a body that names no part, said about canonical input)
    ctx.diags.warning(
        loc.child("schema"),
        f"the {media_type} body's schema is {'a file' if file else 'of type ' + target.kind}, not an "
        f"object: such a body is an object whose properties are its {what}, so this "
        "one names none and a call is refused",
        "an object schema (type: object, properties: {<name>: ...})",
        hint="name the part the API reads: {type: object, properties: {file: "
        "{type: string, format: binary}}}"
        if file
        else None,
    )


def _parts(
    ctx: Context, obj: ObjectNode, styled: bool, encoding: dict[str, Any], loc: SourceLocation
) -> list[BodyPart]:
    """A form or multipart body's properties as the parts it is sent in (``encoding``;
    ``styled``: its style and explode apply)."""
    parts: list[BodyPart] = []
    for prop in obj.properties:
        enc = as_object(encoding.get(prop.name)) or {}
        ctype = enc.get("contentType")
        style, explode = _form_encoding(ctx, enc, styled, loc.child("encoding", prop.name))
        parts.append(
            BodyPart(
                property=prop.name,
                content_type=ctype if isinstance(ctype, str) else None,
                is_file=_is_file(prop.schema, ctx.lowerer.definitions),
                style=style,
                explode=explode,
                required=prop.required,
            )
        )
    return parts


def _json_part(parts: list[BodyPart], prop: Property) -> bool:
    """Whether ``prop`` is sent as a JSON part (which can say ``[]``)."""
    part = next((p for p in parts if p.property == prop.name), None)
    return part is not None and "json" in (part.content_type or "")


def _form_encoding(
    ctx: Context, enc: dict[str, Any], styled: bool, loc: SourceLocation
) -> tuple[ParameterStyle | None, bool | None]:
    """A form body property's ``encoding`` style and explode (a payments API sends every
    object as ``deepObject``: ``metadata[key]=value``); OpenAPI 3.1 applies them to
    ``application/x-www-form-urlencoded`` and ``multipart/form-data`` only."""
    style, explode = enc.get("style"), enc.get("explode")
    if style is None and explode is None:
        return None, None
    if not styled:
        ctx.diags.note(
            loc,
            "encoding style/explode apply to form-urlencoded and multipart/form-data bodies "
            "only; ignored here",
        )
        return None, None
    if style is not None and style not in _FORM_STYLES:
        # (no rule: a value of the wrong kind, said and left out for the default)
        ctx.diags.warning(
            loc.child("style"),
            f"encoding style {describe(style)} is not a form body's; read as 'form'",
            ", ".join(repr(s) for s in _FORM_STYLES),
        )
        style = None
    if explode is not None and not isinstance(explode, bool):
        # (no rule: a value of the wrong kind, said and left out)
        ctx.diags.warning(
            loc.child("explode"), f"explode is {describe(explode)}; ignored", "true or false"
        )
        explode = None
    return cast("ParameterStyle | None", style), explode


def _base64_text(
    ctx: Context,
    kind: BodyKind,
    node: SchemaNode,
    raw: object,
    media_type: str,
    loc: SourceLocation,
) -> BodyKind:
    """``kind``, or ``text`` for a binary media type whose schema is a base64 string
    (``format: base64`` or ``byte``, ``contentEncoding: base64``): OpenAPI's file uploads
    say such content is transferred base64-encoded, so the Call's string is the body as it
    is (Spotify's cover upload: ``image/jpeg`` of base64 text). It was decoded and the raw
    bytes sent, which the API refused."""
    if kind != "binary":
        return kind
    target = ctx.resolved(node)
    raw_object = as_object(raw) or {}
    if not (
        (isinstance(target, StringNode) and target.format in ("base64", "byte"))
        or raw_object.get("contentEncoding") == "base64"
    ):
        return kind
    ctx.diags.note(
        loc,
        f"the {media_type} body is a base64 string: sent as that text, not decoded "
        "(format: binary is what sends raw bytes)",
    )
    return "text"


def count_body(
    ctx: Context,
    op: dict[str, Any],
    loc: SourceLocation,
    raw_params: Params,
    made: HttpBody | None,
) -> None:
    """Count the request body read and what became of it (Swagger 2.0: a second body
    parameter, and formData beside a body, are not sent: said)."""
    # (no rule: the counts name what was written, a requestBody or body/formData parameters)
    if not ctx.swagger:
        if "requestBody" in op:
            ctx.counts["request bodies", "read"] += 1
            fate = "emitted" if made is not None else "reported"  # body() warned why not
            ctx.counts["request bodies", fate] += 1
        return
    bodies = [p for (_, pin), p in raw_params.items() if pin == "body"]
    forms = [p for (_, pin), p in raw_params.items() if pin == "formData"]
    if bodies:
        ctx.counts["parameters in body", "emitted" if made is not None else "reported"] += 1
        for extra in bodies[1:]:
            # (no rule: Swagger 2.0 input its conversion cannot carry: what is not sent is said)
            ctx.diags.warning(
                extra.loc,
                "a second body parameter; only the first is the request body",
                "one parameter with in: body per operation",
            )
            ctx.counts["parameters in body", "reported"] += 1
        if forms:  # Swagger 2.0 forbids both: the body wins
            # (no rule: as above)
            ctx.diags.warning(
                loc,
                f"{len(forms)} formData parameter(s) beside a body parameter are not sent",
                "in: body or in: formData, not both",
            )
            ctx.counts["parameters in formData", "reported"] += len(forms)
    elif forms:
        fate = "emitted" if made is not None else "reported"
        ctx.counts["parameters in formData", fate] += len(forms)


def _sent_media_type(media_type: str, kind: BodyKind) -> str:
    """The Content-Type a body goes out with: a range (``*/*``, ``text/*``) names none."""
    if "*" not in media_type.split(";", 1)[0]:
        return media_type
    return _CONCRETE.get(kind, media_type)


def _is_file(node: SchemaNode, defs: dict[str, Definition]) -> bool:
    if isinstance(node, RefNode) and node.target in defs:
        node = defs[node.target].node
    if isinstance(node, StringNode):
        return node.format in ("binary", "base64") or (
            node.meta.extra is not None and "contentMediaType" in node.meta.extra
        )
    if isinstance(node, ArrayNode) and node.items is not None:
        return _is_file(node.items, defs)
    return False
