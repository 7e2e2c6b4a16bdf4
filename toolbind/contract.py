"""Kernel layer, public: the contract between the compiler, the runtime and generated code.

Imports the standard library and the kernel's own modules only (``_type_names``, ``_compose``,
``_formats``, ``_ecma``, ``_references``: the variable-reference grammar, ``_jsonvalue``,
``_package_json``), so the compiler imports it without loading pydantic or the runtime.
Generated packages read it through ``toolbind.runtime.contract``, which adds the one runtime-typed
name (``HttpCaller``); ``tests/compiler/test_contract.py`` checks the import rules by AST.

What it holds:

- the wire names of the meta fields (``META_FIELDS``, the RFC's Call extensions among them:
  ``CALL_EXTENSIONS``, ``OUTPUT_METHODS``) and their Python names (``META_FIELD_NAMES``), and the
  execution types of gateway tools (``ExecutionType``);
- the names ``toolbind.runtime.types`` exports (``TYPES_EXPORTS``), which the compiler reserves;
- ``ToolSchema``: a tool as schemas only (what ``tools.json`` holds), as composition and the
  provider exports read it;
- the seeds' composition rules: ``tool_schema`` (one tool's schema, from anything shaped like a
  ``ComposableTool``), ``resolve_activity`` (zero-config activity matching), ``nullable``;
- ``compose_schema`` (the seeds' composition over plain dicts), ``FORMATS`` and
  ``compile_pattern`` (ECMA-262 patterns), which the compiler uses to write the same schemas and
  checks the runtime applies;
- ``never_latent``: a tool composition never asks an ``_output`` of (it runs elsewhere);
- ``mcp_app_only``: an MCP tool that only its server's own UI calls (MCP Apps), which the MCP
  frontend and the run-time MCP client both leave out;
- ``mcp_task_only``: an MCP tool its server runs only as a task (``execution.taskSupport:
  "required"``), which toolbind's MCP client cannot call: left out the same way;
- how one OpenAPI operation is called over HTTP, as plain frozen data (below).

The OpenAPI frontend reads Swagger 2.0 / OpenAPI 3.0 / 3.1 and the backend writes these values into
a generated package (``API = HttpApi(...)``, or in a large package ``http.json``, which
``load_api`` reads); ``toolbind.runtime.http`` turns a validated Call
plus these values into a request. Nothing here is an OpenAPI object model: only what a client
needs at run time, already normalised (Swagger's ``host``/``basePath``/``schemes`` become
servers, ``in: body``/``formData`` become an ``HttpBody``, ``$ref``s are resolved).

Call fields are named by their JSON names (the Call model's aliases): ``HttpParameter.field`` is
the key of the Call's JSON dump that holds the parameter's value.
"""

from __future__ import annotations

import json as _json
from collections.abc import Mapping
from dataclasses import MISSING as _MISSING
from dataclasses import dataclass, field
from dataclasses import fields as _fields
from dataclasses import is_dataclass as _is_dataclass
from dataclasses import replace as _replace
from typing import Any, Literal
from typing import cast as _cast

from ._compose import CALL_EXTENSIONS as CALL_EXTENSIONS
from ._compose import META_FIELDS as META_FIELDS
from ._compose import ComposableTool, nullable, reachable_defs, resolve_activity, tool_schema
from ._compose import compose as compose_schema
from ._ecma import compile_pattern
from ._formats import FORMATS
from ._jsonvalue import json_equal, json_type
from ._references import parse_expression, parse_reference
from ._type_names import TYPES_EXPORTS

__all__ = [
    "API_FILE",
    "APPROVAL_KEY",
    "CALL_EXTENSIONS",
    "FORMATS",
    "IGNORED_HEADERS",
    "META_FIELDS",
    "META_FIELD_NAMES",
    "OUTPUT_METHODS",
    "RETRY_KEY",
    "TOOLBIND_EXTENSIONS",
    "TYPES_EXPORTS",
    "BodyKind",
    "BodyPart",
    "ComposableTool",
    "ExecutionType",
    "HttpApi",
    "HttpBody",
    "HttpOperation",
    "HttpParameter",
    "HttpResponse",
    "HttpServer",
    "OutputMethod",
    "ParameterLocation",
    "ParameterStyle",
    "SchemeType",
    "SecurityRequirement",
    "SecurityScheme",
    "ToolSchema",
    "api_from_json",
    "api_to_json",
    "compile_pattern",
    "compose_schema",
    "explicit_fields",
    "json_equal",
    "json_type",
    "load_api",
    "mcp_app_only",
    "mcp_task_only",
    "never_latent",
    "nullable",
    "parse_expression",
    "parse_reference",
    "reachable_defs",
    "resolve_activity",
    "tool_schema",
]

# The Call extensions (``CALL_EXTENSIONS``) are defined in ``_compose``, which composition reads
# without importing this module (registering and composing a package's tools need nothing else
# of it); the name is exported from here as before.
# related/008_agent_output.md: how a written output combines with what is already at its path.
OUTPUT_METHODS: tuple[str, ...] = ("set", "merge", "assign", "push", "concat")
OutputMethod = Literal["set", "merge", "assign", "push", "concat"]
# A tool schema's key saying its calls wait for a human's approval before they run.
APPROVAL_KEY = "x-requires-approval"
# A tool schema's key holding its Temporal retry policy (read by ``toolbind worker``).
RETRY_KEY = "x-toolbind-retry"
# The ``x-`` keys toolbind itself reads; every other extension is dropped from the schemas a
# model sees (and reported).
TOOLBIND_EXTENSIONS: frozenset[str] = frozenset({APPROVAL_KEY, RETRY_KEY})
# Python field name -> wire name of each meta field, in the order a Call model declares them
# (the Call extensions only where the tool declares them).
META_FIELD_NAMES: tuple[tuple[str, str], ...] = (
    ("tool", "_tool"),
    ("activity", "_activity"),
    ("delegate", "_delegate"),
    ("scopes", "_scopes"),
    ("instance", "_instance"),
    ("output_path", "_outputPath"),
    ("output_method", "_outputMethod"),
    ("reasoning_for_call", "_reasoningForCall"),
    ("output", "_output"),
)
# gateway-v3-tool-system.md's execution types.
ExecutionType = Literal["gateway", "external", "space", "internal"]

# Header parameters OpenAPI says to ignore (they belong to the content/auth machinery), plus the
# ones that would let a value re-route or re-frame the request.
IGNORED_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "authorization",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "cookie",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSchema:
    """A tool as schemas only: one entry of a compiled package's ``tools.json``.

    What composition (``compose_schema``) and the provider exports read of a tool, without its
    pydantic models (``toolbind.runtime.ToolBinding`` has the same attributes and more).
    """

    name: str
    provider_name: str
    description: str | None
    title: str | None = None
    parameters: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    activity: str | None
    defs: Mapping[str, Any]
    annotations: Mapping[str, Any] | None = None
    source: str = ""
    extensions: Mapping[str, Any] | None = None
    extensions_required: tuple[str, ...] = ()

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any], defs: Mapping[str, Any]) -> ToolSchema:
        """From one tool entry of a package's ``tools.json`` and the file's shared ``$defs``."""
        return cls(
            name=entry["name"],
            provider_name=entry.get("provider_name", entry["name"]),
            description=entry.get("description"),
            title=entry.get("title"),
            parameters=entry["parameters"],
            output_schema=entry.get("output_schema"),
            activity=entry.get("activity"),
            defs=defs,
            annotations=entry.get("annotations"),
            source=entry.get("source", ""),
            extensions=entry.get("extensions"),
            extensions_required=tuple(entry.get("extensions_required", ())),
        )


ParameterLocation = Literal["path", "query", "header", "cookie"]
ParameterStyle = Literal[
    "form", "simple", "label", "matrix", "deepObject", "spaceDelimited", "pipeDelimited"
]
BodyKind = Literal["json", "form", "multipart", "text", "binary"]
SchemeType = Literal["apiKey", "http", "oauth2", "openIdConnect"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpParameter:
    """One path/query/header/cookie parameter.

    Attributes:
        name: the parameter's name on the wire (``{name}`` in the path template).
        field: the Call field (JSON name) holding its value; differs from ``name`` when the
            compiler renamed it to resolve a collision.
        location: where it goes.
        style: OpenAPI 3 serialisation style (Swagger's ``collectionFormat`` mapped: csv→form
            with explode false, ssv→spaceDelimited, pipes→pipeDelimited, multi→form explode).
        explode: OpenAPI ``explode``.
        allow_reserved: OpenAPI ``allowReserved`` (query only).
        allow_empty: OpenAPI ``allowEmptyValue`` (query only): an empty value (``?name=``) may
            be sent; without it a required one is refused (a server reads it as absent).
        required: whether the operation requires it.
        content_type: set when the parameter uses ``content`` instead of ``schema`` (the value
            is serialised with that media type, e.g. JSON).
    """

    name: str
    field: str
    location: ParameterLocation
    style: ParameterStyle
    explode: bool
    allow_reserved: bool = False
    allow_empty: bool = False
    required: bool = False
    content_type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyPart:
    """How one property of a multipart or form body is sent.

    Attributes:
        property: the body property's name on the wire.
        content_type: the part's media type (OpenAPI ``encoding.contentType``), if given.
        is_file: the property is binary (``format: binary``/``type: file``): its Call value is
            file content (base64 ``bytes`` in JSON) or a local path, see ``toolbind.runtime.http``.
        style: a form body's ``encoding.style`` (``deepObject``: ``metadata[key]=value``), if
            given; None: ``form``.
        explode: a form body's ``encoding.explode``, if given; None: the style's default.
        required: the body's schema requires the property: an empty array, which a form or
            multipart body cannot send, is refused rather than left out.
    """

    property: str
    content_type: str | None = None
    is_file: bool = False
    style: ParameterStyle | None = None
    explode: bool | None = None
    required: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpBody:
    """The request body.

    Exactly one of ``fields`` and ``wrapped`` describes where the body comes from:

    Attributes:
        media_type: the content type sent (the first the operation accepts, JSON preferred).
        kind: how ``media_type`` is encoded.
        required: whether the operation requires a body.
        fields: (Call field JSON name, body property name) pairs — the body object's properties
            flattened into the Call; empty when ``wrapped`` is set.
        wrapped: the one Call field holding the whole body (non-object bodies, or object bodies
            that could not be flattened); None when ``fields`` is used.
        parts: per-property encoding for ``form``/``multipart`` bodies.
    """

    media_type: str
    kind: BodyKind
    required: bool = False
    fields: tuple[tuple[str, str], ...] = ()
    wrapped: str | None = None
    parts: tuple[BodyPart, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpResponse:
    """One declared response.

    Attributes:
        status: ``"200"``, ``"2XX"`` or ``"default"``.
        media_type: the content type the Output model describes, or None (no content).
        is_output: this is the response the tool's Output model was made from.
        binary: the Output is the content itself, a ``format: binary`` string (a file download
            declared ``application/json`` or ``application/*``): a JSON answer is not parsed but
            held as base64, as binary content is — parsed, a JSON file failed the Output's
            string on every call.
        headers: the response headers it declares (lower-case names): a result carries their
            values in ``metadata["headers"]`` (``Set-Cookie`` excepted: cookies stay with the
            client).
    """

    status: str
    media_type: str | None = None
    is_output: bool = False
    binary: bool = False
    headers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityRequirement:
    """One scheme of a requirement object (all schemes of one requirement apply together)."""

    scheme: str
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityScheme:
    """A ``securitySchemes`` (Swagger: ``securityDefinitions``) entry.

    Attributes:
        key: its name in the spec's components (what configuration and requirements refer to).
        type: apiKey, http, oauth2 or openIdConnect.
        name: apiKey only: the header/query/cookie name.
        location: apiKey only: where the key goes.
        scheme: http only: ``bearer`` or ``basic`` (lower case).
        token_url: oauth2 client-credentials flow only.
        scopes: oauth2: the scopes the flow declares.
        openid_url: openIdConnect only: the discovery URL (the token is sent as bearer).
    """

    key: str
    type: SchemeType
    name: str | None = None
    location: Literal["header", "query", "cookie"] | None = None
    scheme: str | None = None
    token_url: str | None = None
    scopes: tuple[str, ...] = ()
    openid_url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpServer:
    """A server URL template with its variables' defaults (and allowed values, if listed)."""

    url: str
    variables: Mapping[str, str] = field(default_factory=dict[str, str])
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOperation:
    """One operation, bound to one tool.

    Attributes:
        tool: the tool's wire name (``_tool``).
        operation_id: the spec's ``operationId``, if any.
        method: upper-case HTTP method.
        path: the path template (``/pets/{petId}``), appended to the server URL.
        parameters: every parameter (path-level and operation-level merged, overrides applied).
        body: the request body, if the operation takes one.
        responses: the declared responses.
        security: alternatives (OR) of requirements (AND); None = the API's default; ``()`` =
            explicitly no auth.
        servers: operation-level servers overriding the API's, if any.
        deprecated: the spec marks the operation deprecated.
        accept: the ``Accept`` header every call sends, when the operation declares one value for
            it (a header parameter ``Accept`` with a default, e.g. a versioned media type);
            otherwise the client asks for the output response's media type.
    """

    tool: str
    operation_id: str | None
    method: str
    path: str
    parameters: tuple[HttpParameter, ...] = ()
    body: HttpBody | None = None
    responses: tuple[HttpResponse, ...] = ()
    security: tuple[tuple[SecurityRequirement, ...], ...] | None = None
    servers: tuple[HttpServer, ...] = ()
    deprecated: bool = False
    accept: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpApi:
    """Everything the runtime needs to call one spec's operations.

    Attributes:
        title: the spec's ``info.title``.
        servers: the API's servers, in spec order (the first is the default base URL).
        security_schemes: by key.
        security: the default security (alternatives of requirements).
        operations: by tool wire name.
    """

    title: str
    servers: tuple[HttpServer, ...] = ()
    security_schemes: Mapping[str, SecurityScheme] = field(
        default_factory=dict[str, SecurityScheme]
    )
    security: tuple[tuple[SecurityRequirement, ...], ...] = ()
    operations: Mapping[str, HttpOperation] = field(default_factory=dict[str, HttpOperation])


API_FILE = "http.json"
"""Where a large generated package keeps its ``HttpApi`` (``load_api``)."""


def never_latent(entry: Mapping[str, Any]) -> bool:
    """Whether the tool of a ``tools.json`` entry never runs latently, so composition with no
    registered Activities (``schema.json``, ``toolbind schema``) asks the model for no ``_output``
    — the Agent's rule: it names an Activity, carries an ``execution`` config, runs elsewhere
    (``gateway``/``internal``: an MCP tool runs on its server) or answers pending
    (``space``/``external``). Composed as if its Activity were registered, as an Agent offers it."""
    kind = entry.get("execution_type")
    return bool(entry.get("activity") or entry.get("execution")) or kind in (
        "gateway",
        "internal",
        "space",
        "external",
    )


def mcp_app_only(tool: Any) -> list[Any] | None:
    """The MCP Apps visibility (``_meta.ui.visibility``) of a ``tools/list`` entry that a model
    must not see — a list without ``"model"``, e.g. ``["app"]``: a tool the server's UI calls,
    which an MCP Apps host keeps from the model — else None (no visibility means both)."""
    value: Any = tool
    for key in ("_meta", "ui", "visibility"):
        if not isinstance(value, dict):
            return None
        value = _cast("dict[str, Any]", value).get(key)
    if not isinstance(value, list):
        return None
    seen = _cast("list[Any]", value)
    return seen if seen and "model" not in seen else None


def mcp_task_only(tool: Any) -> bool:
    """Whether a ``tools/list`` entry may only be called as a task (MCP tasks:
    ``execution.taskSupport: "required"``; the server refuses a plain ``tools/call`` with
    -32601, as ``@modelcontextprotocol/server-everything``'s ``simulate-research-query`` does).
    toolbind's MCP client makes plain calls only, so such a tool could never run."""
    if not isinstance(tool, dict):
        return False
    execution: Any = _cast("dict[str, Any]", tool).get("execution")
    if not isinstance(execution, dict):
        return False
    return _cast("dict[str, Any]", execution).get("taskSupport") == "required"


def explicit_fields(value: Any) -> list[tuple[str, Any]]:
    """The fields of a frozen dataclass of this module that are not at their default, in
    order: what ``api_to_json`` writes, and what the backend writes as ``HttpApi(...)``."""
    out: list[tuple[str, Any]] = []
    for f in _fields(value):
        v = getattr(value, f.name)
        if f.default is not _MISSING and v == f.default:
            continue
        if f.default_factory is not _MISSING and v == f.default_factory():
            continue
        out.append((f.name, v))
    return out


def _encode(value: Any) -> Any:
    """``value`` (a dataclass of this module, tuple, mapping or JSON scalar) as JSON data."""
    if _is_dataclass(value) and not isinstance(value, type):
        return {name: _encode(v) for name, v in explicit_fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in _cast("tuple[Any, ...]", value)]
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in _cast("Mapping[Any, Any]", value).items()}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"cannot write {type(value).__name__} as JSON")  # pragma: no cover


def api_to_json(api: HttpApi) -> str:
    """``api`` as the text of ``http.json``: JSON, one operation per line, fields at their
    defaults left out (``api_from_json`` reads it back equal)."""
    from ._package_json import dumps_lines  # (the compiler's other runs need none)

    return dumps_lines(_cast("dict[str, Any]", _encode(api)), "operations")


def api_from_json(text: str | bytes, where: str = API_FILE) -> HttpApi:
    """The ``HttpApi`` that ``api_to_json`` wrote as ``text``.

    Raises:
        RegistrationError: (a ``ValueError``) ``text`` is not JSON, or not an ``HttpApi`` (the
            message names ``where`` and the JSON pointer of the first value that is not what it
            should be; an operation's, when that operation is first used).
    """
    from ._package_json import LazyMapping, decode, refused

    try:
        data = _json.loads(text)
    except ValueError as exc:
        raise refused(where, str(exc), "the JSON `toolbind generate` wrote") from None
    if not isinstance(data, dict):
        return decode(HttpApi, data, where)  # (the error: not an object)
    head = _cast("dict[str, Any]", data)
    operations = LazyMapping(HttpOperation, head.get("operations", {}), where, "/operations")
    api = decode(HttpApi, {k: v for k, v in head.items() if k != "operations"}, where)
    # each operation is decoded when first used (a process calls a few of a thousand)
    return _replace(api, operations=operations)


def load_api(package: str) -> HttpApi:
    """The ``HttpApi`` of a large generated package, from its ``http.json`` (what its
    ``http.py`` sets ``API`` to; a small package's ``http.py`` writes it out instead).

    Raises:
        RegistrationError: the file is not what ``toolbind generate`` wrote (``api_from_json``).
    """
    from ._package_json import package_data

    return api_from_json(package_data(package, API_FILE), f"{package}/{API_FILE}")
