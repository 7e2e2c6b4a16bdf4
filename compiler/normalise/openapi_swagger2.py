"""Compiler layer (normalise): Swagger 2.0's ways of saying what OpenAPI 3 says otherwise.
Imports ``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

A parameter's ``collectionFormat`` is OpenAPI 3's ``style`` and ``explode``; ``type: file`` is
binary content, ``{type: string, format: binary}``; ``host``, ``basePath`` and ``schemes`` are
the document's ``servers``; a ``basic`` security scheme is ``{type: http, scheme: basic}`` and an
``oauth2`` one's ``flow`` is one of OpenAPI 3's ``flows``; an operation's media types default to
the document's ``consumes`` and ``produces``.
"""

from __future__ import annotations

from typing import Any, cast

from ..diagnostics import describe
from ..ir import SourceLocation
from ._openapi import OpenApi
from ._rule import Fixed, Rule, warn

# collectionFormat → (style, explode)
COLLECTION_FORMATS: dict[str, tuple[str, bool]] = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}


def _collection_format(parameter: Any, at: SourceLocation, _: OpenApi) -> Fixed | None:
    if not isinstance(parameter, dict):
        return None
    obj: dict[str, Any] = parameter  # pyright: ignore[reportUnknownVariableType]
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
    canonical = {k: v for k, v in obj.items() if k != "collectionFormat"}
    return Fixed(value=canonical | {"style": style, "explode": explode}, diagnostics=said)


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
    if "type" in obj or obj.get("in") == "body" or "$ref" in obj:
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

RULES: tuple[Rule[OpenApi], ...] = (
    PARAMETER_WITHOUT_TYPE,
    COLLECTION_FORMAT,
    FILE_TYPE,
    SERVERS,
    SECURITY_SCHEME,
    MEDIA_TYPES,
)
