"""Compiler layer (normalise): Swagger 2.0's ways of saying what OpenAPI 3 says otherwise.
Imports ``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

A parameter's ``collectionFormat`` is OpenAPI 3's ``style`` and ``explode``, and its other
fields (``type``, ``items``, ``enum``, …) its ``schema``; OpenAPI 3's own ``schema``, ``style``
and ``explode``, which real Swagger 2.0 specs write, are read as OpenAPI 3 reads them;
``type: file`` is
binary content, ``{type: string, format: binary}``; ``host``, ``basePath`` and ``schemes`` are
the document's ``servers``; a ``basic`` security scheme is ``{type: http, scheme: basic}`` and an
``oauth2`` one's ``flow`` is one of OpenAPI 3's ``flows``; an operation's media types default to
the document's ``consumes`` and ``produces``.
"""

from __future__ import annotations

from typing import Any, cast

from ..diagnostics import describe
from ..ir import SourceLocation
from ._openapi import Consumed, Form, OpenApi, Produced, body_kind, local, pick_media_type
from ._rule import Fixed, Rule, note, warn
from ._schema import without

# collectionFormat → (style, explode)
COLLECTION_FORMATS: dict[str, tuple[str, bool]] = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}


# The styles OpenAPI 3 defines for parameters.
STYLES = ("form", "simple", "label", "matrix", "deepObject", "spaceDelimited", "pipeDelimited")
# A Swagger 2.0 parameter's fields that stay the parameter's in OpenAPI 3 (the rest is its schema;
# description and deprecated are both).
_PARAMETER_FIELDS = ("name", "in", "required", "allowEmptyValue", "description", "deprecated")
# OpenAPI 3's fields that say how a parameter is sent.
_SENT_AS = ("style", "explode", "allowReserved")


def _plain(parameter: Any, context: OpenApi) -> dict[str, Any] | None:
    """``parameter`` when it is a Swagger 2.0 parameter of a path, query, header or cookie
    (not a body, not yet followed)."""
    if not context.swagger or not isinstance(parameter, dict):
        return None
    obj = cast("dict[str, Any]", parameter)
    if "$ref" in obj or obj.get("in") in ("body", "formData"):
        return None
    return obj


def _shown(obj: dict[str, Any]) -> str:
    name = obj.get("name")
    return repr(name) if isinstance(name, str) else describe(name)


def _openapi3_style(parameter: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(parameter, dict):
        return None
    obj = cast("dict[str, Any]", parameter)
    written = [k for k in ("style", "explode") if k in obj]
    if not written or "$ref" in obj or obj.get("in") == "body":
        return None
    # httpbin's own spec writes ``freeform: {schema: {type: object}, style: form, explode:
    # true}``: ignored, the object went out as ``freeform=k,v`` instead of ``k=v``, unsaid
    if "collectionFormat" in obj:
        said = warn(
            at.child(written[0]),
            f"parameter {_shown(obj)} has {' and '.join(written)} beside collectionFormat, "
            "which says how it is sent; they are ignored",
            "collectionFormat alone (Swagger 2.0), or style and explode alone (OpenAPI 3)",
        )
        return Fixed(value=without(obj, *written), diagnostics=(said,))
    style, explode = obj.get("style", "form"), obj.get("explode", False)
    if style not in STYLES or not isinstance(explode, bool):
        bad = "style" if style not in STYLES else "explode"
        said = warn(
            at.child(bad),
            f"parameter {_shown(obj)} has {bad} {describe(obj[bad])}; ignored",
            f"one of {', '.join(STYLES)}" if bad == "style" else "true or false",
        )
        return Fixed(value=without(obj, bad), diagnostics=(said,))
    said = note(
        at,
        f"parameter {_shown(obj)} is written with OpenAPI 3's {' and '.join(written)}, which "
        "Swagger 2.0 does not define; sent as OpenAPI 3 says",
    )
    return Fixed(value=obj, diagnostics=(said,))


def _collection_format(parameter: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(parameter, dict):
        return None
    obj: dict[str, Any] = parameter  # pyright: ignore[reportUnknownVariableType]
    if "style" in obj or "explode" in obj:  # (OpenAPI 3's, read by ``OPENAPI3_STYLE``)
        style = obj.get("style", "form")
        return Fixed(value=obj | {"style": style, "explode": obj.get("explode", style == "form")})
    fmt = obj.get("collectionFormat", "csv")
    found = COLLECTION_FORMATS.get(fmt) if isinstance(fmt, str) else None
    said: tuple[Any, ...] = ()
    if found is None and obj.get("type") == "array":
        what = repr(fmt) if isinstance(fmt, str) else describe(fmt)
        why = " (tab-separated: OpenAPI 3 has no such style)" if fmt == "tsv" else ""
        said = (
            warn(
                at.child("collectionFormat"),
                f"collectionFormat {what} cannot be sent{why}; the items are sent "
                "comma-separated (csv)",
                ", ".join(repr(f) for f in COLLECTION_FORMATS),
            ),
        )
    style, explode = found or COLLECTION_FORMATS["csv"]
    if style == "form" and obj.get("in") in ("path", "header"):
        style = "simple"  # (csv there: OpenAPI 3's default style of the place, comma-separated)
    canonical = {k: v for k, v in obj.items() if k != "collectionFormat"}
    return Fixed(value=canonical | {"style": style, "explode": explode}, diagnostics=said)


def _parameter_schema(parameter: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    obj = _plain(parameter, context)
    if obj is None or (
        "schema" in obj and not set(obj) - {*_PARAMETER_FIELDS, *_SENT_AS, "schema"}
    ):
        return None  # (OpenAPI 3's form already)
    fields = {k: obj[k] for k in (*_PARAMETER_FIELDS, *_SENT_AS) if k in obj}
    said: tuple[Any, ...] = ()
    if "schema" in obj and "type" not in obj:  # OpenAPI 3's, where it is written
        return Fixed(value=fields | {"schema": obj["schema"]})
    if "schema" in obj:
        said = (
            warn(
                at.child("schema"),
                f"parameter {_shown(obj)} has a type and a schema; the schema is ignored",
                "type (Swagger 2.0) or schema (OpenAPI 3), not both",
            ),
        )
    kept = ("name", "in", "required", "allowEmptyValue", "collectionFormat", "schema", *_SENT_AS)
    schema = {k: v for k, v in obj.items() if k not in kept}
    # (the schema's keywords are the parameter's own: what is said of them points there)
    return Fixed(value=fields | {"schema": schema}, diagnostics=said, moved=((("schema",), at),))


def _file_type(value: Any, _at: SourceLocation, _: OpenApi) -> Fixed | None:
    if isinstance(value, dict) and value.get("type") == "file":  # pyright: ignore[reportUnknownMemberType]
        return Fixed(value={**value, "type": "string", "format": "binary"})  # pyright: ignore[reportUnknownArgumentType]
    return None


def _servers(document: Any, _at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(document, dict):
        return None
    doc = cast("dict[str, Any]", document)
    host = doc.get("host")
    base = doc.get("basePath") or ""
    base = base if isinstance(base, str) else ""
    listed: Any = doc.get("schemes")
    schemes = (
        [s for s in cast("list[Any]", listed) if s in ("https", "http")]
        if isinstance(listed, list)
        else []
    )
    if not isinstance(host, str) or not host:
        urls = [base or "/"]
    else:
        urls = [f"{s}://{host}{base}" for s in schemes or ["https"]]
    return Fixed(value=doc | {"servers": [{"url": url} for url in urls]})


# Swagger 2.0's oauth2 flow → the key of OpenAPI 3's ``flows``
_FLOWS = {
    "application": "clientCredentials",
    "password": "password",
    "implicit": "implicit",
    "accessCode": "authorizationCode",
}


def _security_scheme(scheme: Any, _at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not isinstance(scheme, dict):
        return None
    obj = cast("dict[str, Any]", scheme)
    kind = obj.get("type")
    if kind == "basic":  # (read so in an OpenAPI 3 document too, as it always was)
        rest = {k: v for k, v in obj.items() if k != "type"}
        return Fixed(value=rest | {"type": "http", "scheme": "basic"})
    if kind != "oauth2" or not context.swagger:
        return None
    flow: Any = {"scopes": obj.get("scopes")}
    if obj.get("flow") == "application":
        flow["tokenUrl"] = obj.get("tokenUrl")
    raw_flow = obj.get("flow")
    name = _FLOWS.get(raw_flow, "implicit") if isinstance(raw_flow, str) else "implicit"
    rest = {
        k: v for k, v in obj.items() if k not in ("flow", "tokenUrl", "authorizationUrl", "scopes")
    }
    return Fixed(value=rest | {"flows": {name: flow}})


def _media_types(operation: Any, _at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(operation, dict):
        return None
    op = cast("dict[str, Any]", operation)
    inherited = {k: context.document[k] for k in ("consumes", "produces") if k in context.document}
    missing = {k: v for k, v in inherited.items() if k not in op}
    return Fixed(value=op | missing) if missing else None


COLLECTION_FORMAT: Rule[OpenApi] = Rule(
    name="swagger2-collection-format",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 parameter's collectionFormat (csv, ssv, pipes, multi; tsv…)",
    makes="OpenAPI 3's style and explode (csv: form, not exploded; an unsendable one: csv)",
    warning="collectionFormat '…' cannot be sent; the items are sent comma-separated (csv)",
    apply=_collection_format,
)
FILE_TYPE: Rule[OpenApi] = Rule(
    name="swagger2-file-type",
    family="openapi-swagger2",
    accepts="Swagger 2.0's type: file (a form part or a response)",
    makes="binary content: {type: string, format: binary}",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_file_type,
)

SERVERS: Rule[OpenApi] = Rule(
    name="swagger2-servers",
    family="openapi-swagger2",
    accepts="Swagger 2.0's host, basePath and schemes",
    makes="the document's servers: one URL per scheme (https when none; basePath alone, or /, "
    "when no host)",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_servers,
)


def _security_definitions(document: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(document, dict):
        return None
    doc = cast("dict[str, Any]", document)
    if "securityDefinitions" not in doc:
        return None
    table = {"securitySchemes": doc["securityDefinitions"]}
    moved = ((("components", "securitySchemes"), at.child("securityDefinitions")),)
    return Fixed(value=without(doc, "securityDefinitions") | {"components": table}, moved=moved)


SECURITY_DEFINITIONS: Rule[OpenApi] = Rule(
    name="swagger2-security-definitions",
    family="openapi-swagger2",
    accepts="Swagger 2.0's securityDefinitions",
    makes="the document's components.securitySchemes",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_security_definitions,
)
SECURITY_SCHEME: Rule[OpenApi] = Rule(
    name="swagger2-security-scheme",
    family="openapi-swagger2",
    accepts="a security scheme of type basic; a Swagger 2.0 oauth2 scheme's flow, tokenUrl, scopes",
    makes="{type: http, scheme: basic}; OpenAPI 3's flows (application: clientCredentials)",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_security_scheme,
)

MEDIA_TYPES: Rule[OpenApi] = Rule(
    name="swagger2-media-types",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 operation without consumes or produces, in a document that has them",
    makes="the operation with the document's consumes and produces",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_media_types,
)


def _parameter_without_type(parameter: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(parameter, dict):
        return None
    obj = cast("dict[str, Any]", parameter)
    if "type" in obj or "schema" in obj or obj.get("in") == "body" or "$ref" in obj:
        return None
    name = obj.get("name")
    shown = repr(name) if isinstance(name, str) else describe(name)
    said = warn(
        at,
        f"parameter {shown} has no type",
        "a type (string, number, integer, boolean, array; file in a form); any value is allowed",
        hint="name the type the API takes, e.g. type: string",
    )
    return Fixed(value=obj, diagnostics=(said,))


PARAMETER_WITHOUT_TYPE: Rule[OpenApi] = Rule(
    name="swagger2-parameter-without-type",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 parameter (not in: body) without a type",
    makes="the parameter as it is: any value (JSON Schema without a type)",
    warning="parameter '…' has no type — a type (…); any value is allowed",
    apply=_parameter_without_type,
)

OPENAPI3_STYLE: Rule[OpenApi] = Rule(
    name="swagger2-openapi3-style",
    family="openapi-swagger2",
    accepts="OpenAPI 3's style and explode written in a Swagger 2.0 parameter "
    "(httpbin: {schema: {type: object}, style: form, explode: true})",
    makes="the parameter sent as they say (beside collectionFormat: ignored, warned)",
    warning="(a note) parameter '…' is written with OpenAPI 3's explode, which Swagger 2.0 "
    "does not define; sent as OpenAPI 3 says",
    apply=_openapi3_style,
)
PARAMETER_SCHEMA: Rule[OpenApi] = Rule(
    name="swagger2-parameter-schema",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 path, query, header or cookie parameter: its type, format, items, "
    "enum, … beside its name (or OpenAPI 3's schema, written so by real specs)",
    makes="OpenAPI 3's parameter: {name, in, required, style, explode, schema: {type, …}}",
    warning="none (a type and a schema: parameter '…' has a type and a schema; the schema is "
    "ignored)",
    apply=_parameter_schema,
)
PARAMETER: tuple[Rule[OpenApi], ...] = (
    PARAMETER_WITHOUT_TYPE,
    OPENAPI3_STYLE,
    COLLECTION_FORMAT,
    PARAMETER_SCHEMA,
)
"""The rules of a parameter of a path, the query, a header or a cookie, in their order."""


def _response_content(fragment: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(fragment, Produced):
        return None
    response = fragment.response
    if "schema" not in response:
        return Fixed(value=response)
    schema = response["schema"]
    typed = _file_type(schema, at, context)
    media = {"schema": typed.value if typed is not None else schema}
    # one schema for every type the operation produces (JSON when it names none); the reader
    # picks the one it reads as it does for OpenAPI 3's content
    content = {m: media for m in fragment.produces or ("application/json",)}
    canonical = without(response, "schema") | {"content": content}
    moved = tuple((("content", m, "schema"), at.child("schema")) for m in content)
    return Fixed(value=canonical, moved=moved)


def _body_parameter(fragment: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(fragment, Consumed):
        return None
    parameter = fragment.parameter
    schema: Any = parameter.get("schema", {})
    # the parameter's description and deprecation are its schema's (annotations beside a
    # $ref are read in Swagger 2.0)
    notes = {k: parameter[k] for k in ("description", "deprecated") if k in parameter}
    if isinstance(schema, dict) and notes:
        kept = cast("dict[str, Any]", schema)
        schema = kept | {k: v for k, v in notes.items() if not kept.get(k)}
    usable = [c for c in fragment.consumes if body_kind(c) in ("json", "text", "binary")]
    patch = [c for c in usable if c.split(";", 1)[0].strip().lower() == _JSON_PATCH]
    said: tuple[Any, ...] = ()
    if patch and len(patch) < len(usable) and not _is_array(schema, context.document):
        # Swagger 2.0 gives one schema for every type in consumes: a JSON Patch (RFC 6902) is
        # an array, so an object body listed first among a container orchestrator's PATCH
        # types went out as json-patch+json and was refused
        usable = [c for c in usable if c not in patch]
        said = (
            note(
                at.child("schema"),
                f"the body is sent as {pick_media_type(usable)}: {patch[0]} (consumes) "
                "is an array of operations, and this body's schema is not an array",
            ),
        )
    media_type = pick_media_type(usable or ["application/json"])
    body: dict[str, Any] = {
        "required": parameter.get("required") is True,
        "content": {media_type: {"schema": schema}},
    }
    # (the body is the parameter: what is said of it points there)
    return Fixed(value=body, diagnostics=said, moved=((("content", media_type), at),))


_JSON_PATCH = "application/json-patch+json"
# A Swagger 2.0 form parameter's fields that are not its schema.
_FORM_FIELDS = ("name", "in", "required", "collectionFormat", "allowEmptyValue")


def _form_parameters(fragment: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(fragment, Form):
        return None
    files = any(p.get("type") == "file" for _, p, _ in fragment.parameters)
    multipart = files or "multipart/form-data" in fragment.consumes
    media_type = "multipart/form-data" if multipart else "application/x-www-form-urlencoded"
    properties: dict[str, Any] = {}
    encoding: dict[str, Any] = {}
    said: list[Any] = []
    for name, parameter, where in fragment.parameters:
        schema = {k: v for k, v in parameter.items() if k not in _FORM_FIELDS}
        typed = _file_type(schema, where, context)
        properties[name] = typed.value if typed is not None else schema
        if parameter.get("type") == "array":
            # sent as its collectionFormat says: csv (the default) one field ``tags=a,b``,
            # multi one field per item (it went out as multi whatever was declared)
            sent: dict[str, Any] = parameter
            for rule in (OPENAPI3_STYLE, COLLECTION_FORMAT):
                fixed = rule.apply(sent, where, context)
                if fixed is not None:
                    sent = fixed.value
                    said.extend(fixed.diagnostics)
            encoding[name] = {"style": sent["style"], "explode": sent["explode"]}
    required = [n for n, p, _ in fragment.parameters if p.get("required") is True]
    schema = {"type": "object", "properties": properties} | (
        {"required": required} if required else {}
    )
    media = {"schema": schema} | ({"encoding": encoding} if encoding else {})
    body = {"required": bool(required), "content": {media_type: media}}
    moved = tuple(
        (("content", media_type, "schema", "properties", n), where)
        for n, _, where in fragment.parameters
    )
    return Fixed(value=body, diagnostics=tuple(said), moved=moved)


def _is_array(schema: Any, document: dict[str, Any]) -> bool:
    """Whether ``schema`` (its local ``$ref``s followed) is an array that is never null."""
    for _ in range(16):
        obj = cast("dict[str, Any]", schema) if isinstance(schema, dict) else {}
        ref = obj.get("$ref")
        if not isinstance(ref, str):
            nullable = obj.get("nullable") is True or obj.get("x-nullable") is True
            return obj.get("type") == "array" and not nullable
        schema = local(ref, document)
    return False


BODY_PARAMETER: Rule[OpenApi] = Rule(
    name="swagger2-body-parameter",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 in: body parameter, and the types its operation consumes",
    makes="OpenAPI 3's requestBody: {required, content: {<the first JSON, text or binary type "
    "consumed; application/json when none>: {schema}}}",
    warning="(a note) the body is sent as …: application/json-patch+json (consumes) is an "
    "array of operations, and this body's schema is not an array",
    apply=_body_parameter,
)
FORM_PARAMETERS: Rule[OpenApi] = Rule(
    name="swagger2-form-parameters",
    family="openapi-swagger2",
    accepts="Swagger 2.0's in: formData parameters, and the types their operation consumes",
    makes="OpenAPI 3's requestBody: an object of them, multipart/form-data when one is a file "
    "or it is consumed (else form-urlencoded), each array's collectionFormat its encoding",
    warning="none of its own (collectionFormat's and OpenAPI 3 style's, at the parameter)",
    apply=_form_parameters,
)
RESPONSE_CONTENT: Rule[OpenApi] = Rule(
    name="swagger2-response-content",
    family="openapi-swagger2",
    accepts="a Swagger 2.0 response's schema, and the types its operation produces",
    makes="OpenAPI 3's content: {<each type produced, or application/json>: {schema}}",
    warning="none: the same API, said in OpenAPI 3's words",
    apply=_response_content,
)

RULES: tuple[Rule[OpenApi], ...] = (
    PARAMETER_WITHOUT_TYPE,
    OPENAPI3_STYLE,
    PARAMETER_SCHEMA,
    COLLECTION_FORMAT,
    FILE_TYPE,
    SERVERS,
    SECURITY_DEFINITIONS,
    SECURITY_SCHEME,
    MEDIA_TYPES,
    BODY_PARAMETER,
    FORM_PARAMETERS,
    RESPONSE_CONTENT,
)
