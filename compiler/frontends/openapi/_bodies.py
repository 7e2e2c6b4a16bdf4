"""Compiler layer (frontends/openapi): Request Body Objects (Swagger 2.0: the ``body``
parameter or the ``formData`` ones) as the Call's fields and the HTTP contract's ``HttpBody``.
Imports ``ir``, ``_load``, ``diagnostics``, ``_common``, ``_context``, ``_parameters`` (a Call
field's name, collectionFormat) and the runtime's HTTP contract.

An object body is flattened into the Call when that is safe (its properties are fields); any
other body is wrapped under one field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from toolbind.contract import BodyKind, BodyPart, HttpBody, ParameterStyle

from ..._load import as_array, as_object
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
from ._common import (
    BODY_FIELD,
    SWAGGER_PARAM_KEYS,
    Where,
    annotate,
    body_kind,
    file_type,
    pick_media_type,
)
from ._context import Context
from ._parameters import Params, collection_format, field

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
    if ctx.swagger:
        return _swagger_body(ctx, op, raw_params, into)
    if "requestBody" not in op:
        return None
    at = Where(op["requestBody"], loc.child("requestBody"), item.root, item.path)
    read = ctx.deref_object(at, "request body")
    if read is None:
        return None
    found, rb = read
    content = as_object(rb.get("content")) or {}
    if not content:
        # (no rule: broken input that cannot be read, said and skipped)
        ctx.diags.warning(found.loc, "request body has no content", "content: {<type>: ...}")
        return None
    media_type = pick_media_type(list(content))
    mloc = found.loc.child("content", media_type)
    media = as_object(content[media_type]) or {}
    kind = body_kind(media_type)
    raw_schema = media.get("schema")
    if raw_schema is None:
        raw_schema = {"type": "string", "format": "binary"} if kind == "binary" else {}
    node = ctx.schema(Where(raw_schema, mloc.child("schema"), found.root, found.path))
    kind = _base64_text(ctx, kind, node, raw_schema, media_type, mloc.child("schema"))
    encoding = as_object(media.get("encoding")) or {}
    return _place_body(
        ctx, node, media_type, kind, rb.get("required") is True, encoding, into, mloc
    )


def _swagger_body(
    ctx: Context, op: dict[str, Any], raw_params: Params, into: Fields
) -> HttpBody | None:
    consumes = [c for c in as_array(op.get("consumes")) or [] if isinstance(c, str)]
    body_params = [p for (_, pin), p in raw_params.items() if pin == "body"]
    if body_params:
        return _body_parameter(ctx, body_params[0], consumes, into)
    form_params = [(n, p) for (n, pin), p in raw_params.items() if pin == "formData"]
    if not form_params:
        return None
    return _form_parameters(ctx, form_params, consumes, into)


def _body_parameter(ctx: Context, p: Where, consumes: list[str], into: Fields) -> HttpBody:
    """Swagger 2.0's ``in: body`` parameter, sent as the first usable type it consumes."""
    pobj: dict[str, Any] = p.value
    node = ctx.schema(Where(pobj.get("schema", {}), p.loc.child("schema"), p.root, p.path))
    node = annotate(node, pobj)
    usable = [c for c in consumes if body_kind(c) in ("json", "text", "binary")]
    patch = [c for c in usable if _is_json_patch(c)]
    if patch and len(patch) < len(usable) and not isinstance(ctx.resolved(node), ArrayNode):
        # Swagger 2.0 gives one schema for every type in consumes: a JSON Patch (RFC 6902) is
        # an array, so an object body listed first among a container orchestrator's PATCH
        # types went out as json-patch+json and was refused
        usable = [c for c in usable if c not in patch]
        ctx.diags.note(
            p.loc.child("schema"),
            f"the body is sent as {pick_media_type(usable)}: {patch[0]} (consumes) "
            "is an array of operations, and this body's schema is not an array",
        )
    media_type = pick_media_type(usable or ["application/json"])
    kind = _base64_text(
        ctx, body_kind(media_type), node, pobj.get("schema"), media_type, p.loc.child("schema")
    )
    return _place_body(ctx, node, media_type, kind, pobj.get("required") is True, {}, into, p.loc)


def _form_parameters(
    ctx: Context, form_params: list[tuple[str, Where]], consumes: list[str], into: Fields
) -> HttpBody:
    """Swagger 2.0's ``in: formData`` parameters: a form, multipart when one is a file."""
    has_file = any(as_object(p.value) and p.value.get("type") == "file" for _, p in form_params)
    media_type = (
        "multipart/form-data"
        if has_file or "multipart/form-data" in consumes
        else "application/x-www-form-urlencoded"
    )
    fields: list[tuple[str, str]] = []
    parts: list[BodyPart] = []
    for pname, p in form_params:
        pobj = p.value
        schema_value = {k: v for k, v in pobj.items() if k not in SWAGGER_PARAM_KEYS}
        node = ctx.schema(Where(file_type(schema_value), p.loc, p.root, p.path))
        node = annotate(node, pobj)
        field_name = field(ctx, pname, "body", into.taken, into.tool, p.loc)
        into.props.append(
            Property(name=field_name, schema=node, required=pobj.get("required") is True)
        )
        fields.append((field_name, pname))
        # an array field is sent as its collectionFormat says: csv (the default) one field
        # `tags=a,b`, multi one field per item — it went out as multi whatever was declared
        style: ParameterStyle | None = None
        explode: bool | None = None
        if pobj.get("type") == "array":
            style, explode = collection_format(ctx, pobj, p.loc)
        parts.append(
            BodyPart(
                property=pname, is_file=pobj.get("type") == "file", style=style, explode=explode
            )
        )
    return HttpBody(
        media_type=media_type,
        kind=body_kind(media_type),
        required=any(pr.value.get("required") is True for _, pr in form_params),
        fields=tuple(fields),
        parts=tuple(parts),
    )


def _place_body(
    ctx: Context,
    node: SchemaNode,
    media_type: str,
    kind: BodyKind,
    required: bool,
    encoding: dict[str, Any],
    into: Fields,
    loc: SourceLocation,
) -> HttpBody:
    """A body of ``node`` as Call fields: flattened when it is an object that can be, else
    wrapped under one field."""
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
        parts = _parts(ctx, obj, kind, encoding, loc)
    flattenable = (
        obj is not None
        and obj.properties
        and (obj.additional is None or isinstance(obj.additional, NeverNode))
        and (required or not any(p.required for p in obj.properties))
    )
    if obj is not None and flattenable:
        fields: list[tuple[str, str]] = []
        for prop in obj.properties:
            field_name = field(ctx, prop.name, "body", into.taken, into.tool, loc)
            into.props.append(replace(prop, name=field_name, required=prop.required and required))
            fields.append((field_name, prop.name))
        return HttpBody(
            media_type=media_type,
            kind=kind,
            required=required,
            fields=tuple(fields),
            parts=tuple(parts),
        )
    field_name = field(ctx, BODY_FIELD, "body", into.taken, into.tool, loc)
    into.props.append(Property(name=field_name, schema=node, required=required))
    return HttpBody(
        media_type=media_type,
        kind=kind,
        required=required,
        wrapped=field_name,
        parts=tuple(parts),
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
    ctx: Context, obj: ObjectNode, kind: BodyKind, encoding: dict[str, Any], loc: SourceLocation
) -> list[BodyPart]:
    """A form or multipart body's properties as the parts it is sent in (``encoding``)."""
    parts: list[BodyPart] = []
    for prop in obj.properties:
        enc = as_object(encoding.get(prop.name)) or {}
        ctype = enc.get("contentType")
        style, explode = _form_encoding(ctx, enc, kind, loc.child("encoding", prop.name))
        parts.append(
            BodyPart(
                property=prop.name,
                content_type=ctype if isinstance(ctype, str) else None,
                is_file=_is_file(prop.schema, ctx.lowerer.definitions),
                style=style,
                explode=explode,
            )
        )
    return parts


def _form_encoding(
    ctx: Context, enc: dict[str, Any], kind: BodyKind, loc: SourceLocation
) -> tuple[ParameterStyle | None, bool | None]:
    """A form body property's ``encoding`` style and explode (a payments API sends every
    object as ``deepObject``: ``metadata[key]=value``); OpenAPI applies them to
    ``application/x-www-form-urlencoded`` only."""
    style, explode = enc.get("style"), enc.get("explode")
    if style is None and explode is None:
        return None, None
    if kind != "form":
        ctx.diags.note(
            loc, "encoding style/explode apply to form-urlencoded bodies only; ignored here"
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


def _is_json_patch(media_type: str) -> bool:
    return media_type.split(";", 1)[0].strip().lower() == "application/json-patch+json"


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
