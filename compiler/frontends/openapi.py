"""Compiler layer (frontends): Swagger 2.0, OpenAPI 3.0 and 3.1 → one tool per operation.

Imports ``ir``, ``diagnostics``, ``naming``, ``_load``, ``_jsonschema``, ``_resolver``, the runtime's frozen
HTTP description (``toolbind.runtime.contract``), which it fills for the backend, and the
header names the HTTP runtime sets itself (``toolbind.runtime.contract.IGNORED_HEADERS``).

Each operation becomes a ``ToolSpec``: its parameters (path, query, header, cookie; path-level and
operation-level merged, operation-level overriding) and its request body are the Call's fields —
an object body is flattened into the Call when that is safe, any other body is wrapped under one
field — and the first success response (2xx lowest first, then ``default``) is its output. Schemas
go through the shared ``SchemaLowerer``, so a component referenced by many operations is one
``Definition``; definitions no kept tool reaches are dropped. The spec's servers, security
schemes and each operation's wire details become an ``HttpApi`` on the ``SpecPackage``.

Real specs break rules: an empty ``enum``, a ``$ref`` to nothing, a parameter without a schema
are read leniently with a located warning; only what has no sensible reading is an error.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote

from toolbind.contract import (
    IGNORED_HEADERS,
    META_FIELDS,
    BodyKind,
    BodyPart,
    HttpApi,
    HttpBody,
    HttpOperation,
    HttpParameter,
    HttpResponse,
    HttpServer,
    ParameterLocation,
    ParameterStyle,
    SecurityRequirement,
    SecurityScheme,
)

from .. import naming
from .._load import (
    NO_EXTRA_REFS,
    Document,
    RefPolicy,
    as_array,
    as_object,
    display_path,
    load_document,
)
from ..diagnostics import Diagnostic, Diagnostics, describe
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    Definition,
    DependentSchemasCheck,
    IntegerNode,
    Meta,
    NeverNode,
    NotCheck,
    NullNode,
    NumberNode,
    ObjectNode,
    PatternPropertiesCheck,
    Property,
    PropertyNamesCheck,
    RefNode,
    SchemaNode,
    SourceLocation,
    SpecPackage,
    StringNode,
    ToolSpec,
    UnionNode,
)
from . import _opmemo
from ._jsonschema import SchemaLowerer
from ._resolver import (
    MISSING,
    _explain_missing,  # pyright: ignore[reportPrivateUsage]
    _join_shown,  # pyright: ignore[reportPrivateUsage]
    ref_file,
    walk_pointer,
)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Statuses that carry no content whatever the spec says (RFC 9110 §15.3.5, §15.4.5).
_NO_CONTENT = frozenset({"204", "205", "304"})
# ``{name}`` in a path template (RFC 6570 level 1, as OpenAPI uses it).
_PATH_TEMPLATE = re.compile(r"\{([^{}/]+)\}")
# A property name every model provider takes (Anthropic's and Bedrock's rule, the strictest).
_PROPERTY_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# A whole path segment ``:name``: an Express/Rails route parameter, which OpenAPI does not read.
_EXPRESS_SEGMENT = re.compile(r"(?<=/):([A-Za-z_][A-Za-z0-9_]*)(?=/|$)")
# A query, header or cookie parameter name that says it carries a secret
# (``_looks_like_credential``). Its last word names a secret (``X-Api-Key``, ``client_secret``,
# ``refreshToken``, Ory Kratos's ``X-Session-Token``); a session id only as the whole name
# (``login_session_id`` is an admin's filter in Ory Hydra). A bare ``token`` is not one: in the
# query it is as often an invitation's or a page's (``page_token``, ``next_token``).
_CREDENTIAL_NAME = re.compile(
    r"(?:(?:^|[-_])(?:api[-_]?key|apikey|"
    r"(?:access|api|auth|bearer|private|refresh|security|session)[-_]?token|"
    r"secret|password|authorization)|^(?:x-)?session[-_]?id)$",
    re.IGNORECASE,
)
# In a header, a token is the caller's credential whatever names it (``X-Vault-Token``, GitLab's
# ``Private-Token``, ``X-Amz-Security-Token``), but for a page's or a retry's (``X-Next-Token``,
# ``X-Continuation-Token``, ``X-Idempotency-Token``).
_HEADER_TOKEN = re.compile(r"(?:^|[-_])token$", re.IGNORECASE)
_CURSOR_TOKEN = re.compile(
    r"(?:^|[-_])(?:page|next|prev|previous|continuation|sync|cursor|resume|pagination|delta|"
    r"idempotency)[-_]?token$",
    re.IGNORECASE,
)
# In a request body a password or secret is more often a value being set (a new user's) than the
# caller's own credential: there only names that say they authenticate the call.
_BODY_CREDENTIAL_NAME = re.compile(
    r"(?:^|[-_])(?:api[-_]?key|apikey|api[-_]?secret|access[-_]?token|auth[-_]?token|"
    r"refresh[-_]?token|client[-_]?secret)$",
    re.IGNORECASE,
)
_LOCATIONS: tuple[ParameterLocation, ...] = ("path", "query", "header", "cookie")

# The fields each object may hold, per version; anything else (but ``x-`` extensions) is a field
# toolbind would ignore, so it is reported rather than passed over in silence.
_DOC_FIELDS = {
    "swagger": frozenset(
        [
            "swagger",
            "info",
            "host",
            "basePath",
            "schemes",
            "consumes",
            "produces",
            "paths",
            "definitions",
            "parameters",
            "responses",
            "securityDefinitions",
            "security",
            "tags",
            "externalDocs",
        ]
    ),
    "openapi": frozenset(
        [
            "openapi",
            "info",
            "jsonSchemaDialect",
            "servers",
            "paths",
            "webhooks",
            "components",
            "security",
            "tags",
            "externalDocs",
        ]
    ),
}
_ITEM_FIELDS = {
    "swagger": frozenset({"$ref", "parameters", *METHODS}),  # trace too: read, as real specs use it
    "openapi": frozenset({"$ref", "summary", "description", "servers", "parameters", *METHODS}),
}
_OPERATION_FIELDS = {
    "swagger": frozenset(
        [
            "tags",
            "summary",
            "description",
            "externalDocs",
            "operationId",
            "consumes",
            "produces",
            "parameters",
            "responses",
            "schemes",
            "deprecated",
            "security",
        ]
    ),
    "openapi": frozenset(
        [
            "tags",
            "summary",
            "description",
            "externalDocs",
            "operationId",
            "parameters",
            "requestBody",
            "responses",
            "callbacks",
            "deprecated",
            "security",
            "servers",
        ]
    ),
}
# Fields of those objects that must hold an array / an object when present.
_ARRAYS = frozenset(
    {"servers", "parameters", "security", "tags", "schemes", "consumes", "produces"}
)
_OBJECTS = frozenset({"responses", "requestBody", "callbacks", "components", "definitions"})
_STYLES = ("form", "simple", "label", "matrix", "deepObject", "spaceDelimited", "pipeDelimited")
_DEFAULT_STYLE: dict[str, ParameterStyle] = {
    "path": "simple",
    "query": "form",
    "header": "simple",
    "cookie": "form",
}
# Swagger 2.0 collectionFormat → (style, explode)
# The styles OpenAPI defines for a form-urlencoded body's properties (``encoding``).
_FORM_STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")
_COLLECTION_FORMATS: dict[str, tuple[ParameterStyle, bool]] = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}
# Keys of a Swagger 2.0 non-body parameter that are not part of its schema.
_SWAGGER_PARAM_KEYS = {"name", "in", "required", "collectionFormat", "allowEmptyValue"}
# The Call field a non-object (or unflattenable) body is wrapped under.
BODY_FIELD = "body"


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationFilter:
    """Which operations to keep (``toolbind generate --tag/--path/--operation``).

    An operation is kept when it matches every non-empty criterion: one of ``tags``; a path
    matching one of the ``paths`` glob patterns (``/pets*``); an ``operationId`` or tool name in
    ``operations``.
    """

    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tags or self.paths or self.operations)

    def keeps(self, tags: tuple[str, ...], path: str, operation_id: str | None, name: str) -> bool:
        if self.tags and not set(tags) & set(self.tags):
            return False
        if self.paths and not any(fnmatch.fnmatchcase(path, p) for p in self.paths):
            return False
        return not self.operations or bool({operation_id, name} & set(self.operations))


def _load_with_dates_as_text(path: Path, shown: str) -> Document | Diagnostic:
    """A file an OpenAPI spec ``$ref``s, read as the spec itself is: an unquoted YAML date or
    timestamp (common in examples and defaults) is the text written."""
    return load_document(path, shown, dates_as_text=True)


def is_document(value: Any) -> bool:
    """Whether ``value`` is an OpenAPI 3.x or Swagger 2.0 document."""
    obj = as_object(value)
    if obj is None:
        return False
    version = obj.get("openapi", obj.get("swagger"))
    return isinstance(version, str) and bool(
        obj.keys() & {"paths", "webhooks", "components", "info"}
    )


@dataclass
class _Where:
    """A raw value, where it is, and the document its ``$ref``s are relative to."""

    value: Any
    loc: SourceLocation
    root: Any
    path: Path | None


class _Reader:
    def __init__(
        self, doc: Document, path: Path | None, diags: Diagnostics, refs: RefPolicy
    ) -> None:
        self.doc = doc
        self.refs = refs
        self.path = path
        self.diags = diags
        self.spec: dict[str, Any] = doc.value
        raw_version = str(self.spec.get("openapi", self.spec.get("swagger", "")))
        self.swagger = "swagger" in self.spec and "openapi" not in self.spec
        self.v31 = raw_version.startswith("3.1")
        self.lowerer = SchemaLowerer(
            diags=diags,
            dialect="jsonschema" if self.v31 else "openapi30",
            allow_remote_files=path is not None,
            lenient=True,
            drop_extensions=True,
            openapi31=self.v31,
            trim_descriptions=True,
            refs=refs,
            load=_load_with_dates_as_text,
        )
        self.top = SourceLocation(file=doc.path)
        self.names = naming.ToolNames()
        self._documents: dict[Path, Document | Diagnostic] = {}
        # What was read and what became of it, per kind: every item read is emitted (a tool, a
        # Call field, a body, a declared response), reported (a located warning or note says why
        # not), filtered (--tag/--path/--operation) or overridden (an operation's parameter
        # replaces its path item's, as OpenAPI says). ``toolbind generate -v`` prints it; a test
        # holds read == the rest over every corpus spec.
        self.counts: Counter[tuple[str, str]] = Counter()
        self.extensions: dict[str, list[SourceLocation]] = {}  # x- field → where seen
        # Security scheme names that requirements use → where first: each must be declared.
        self.named_schemes: dict[str, SourceLocation] = {}
        # The operations taken from the previous run's records where nothing they read changed.
        self.replay: _opmemo.Replay | None = None
        # the wire names of the parameters of the operation being read (``_field``)
        self.wire_names: set[str] = set()

    # -- references to non-schema objects (parameters, bodies, responses) -------------------

    def deref(self, where: _Where, what: str) -> _Where | None:
        """Follow ``$ref``s of a parameter/body/response object (local or relative files)."""
        seen: set[str] = set()
        while True:
            obj = as_object(where.value)
            if obj is None or "$ref" not in obj:
                return where
            ref = obj["$ref"]
            rloc = where.loc.child("$ref")
            if not isinstance(ref, str) or ref in seen:
                self.diags.warning(
                    rloc, f"{what} $ref is {describe(ref)}", "a resolvable reference; skipped"
                )
                return None
            seen.add(ref)
            file_part, _, fragment = ref.partition("#")
            root, path, file = where.root, where.path, where.loc.file
            if self.replay is not None:
                local = not file_part and root is self.spec
                self.replay.read(unquote(fragment) if local else None)
            if file_part:
                if path is None or "://" in file_part:
                    self.diags.warning(
                        rloc, f"{what} $ref {ref!r} points outside the spec", "a local reference"
                    )
                    return None
                target = ref_file(path.parent, unquote(file_part))
                if target is None:
                    self.diags.error(
                        rloc,
                        f"{what} $ref {ref!r} is not a usable file name",
                        "a file name relative to this spec",
                    )
                    return None
                if not self.refs.allows_file(target):
                    self.diags.error(
                        rloc,
                        f"{what} $ref {ref!r} leads outside the spec's directory "
                        f"({display_path(target)})",
                        "a file in the spec's directory or below it",
                        hint="allow the directory with --allow-ref DIR",
                    )
                    return None
                if target not in self._documents:
                    self._documents[target] = _load_with_dates_as_text(
                        target, _join_shown(file, file_part)
                    )
                loaded = self._documents[target]
                if not isinstance(loaded, Document):
                    # an error, as for a schema's $ref: what the file holds (a split spec's
                    # path items, operations) is lost; it was a warning that said no cause
                    at = loaded.place
                    self.diags.error(
                        rloc,
                        f"{what} $ref {ref!r} names a file that cannot be read "
                        f"({at}: {loaded.found})",
                        "a readable JSON or YAML file, named relative to this spec",
                    )
                    return None
                root, path, file = loaded.value, target, loaded.path
            pointer = unquote(fragment)
            value = walk_pointer(root, pointer)
            if value is MISSING:
                why, suggestion = _explain_missing(root, pointer)
                self.diags.warning(
                    rloc,
                    f"{what} $ref {ref!r} does not resolve: {why}; the {what} is skipped",
                    f"a JSON pointer to an existing value in {file}",
                    hint=f"did you mean {(file_part + '#' + suggestion)!r}?"
                    if suggestion
                    else None,
                )
                return None
            where = _Where(
                value=value, loc=SourceLocation(file=file, pointer=pointer), root=root, path=path
            )

    def schema(self, where: _Where) -> SchemaNode:
        return self.lowerer.lower_root(
            where.value,
            where.loc,
            root=where.root,
            path=where.path,
            resource=(where.root, SourceLocation(file=where.loc.file)),
        )

    # -- the document -----------------------------------------------------------------------

    def fields(self, obj: dict[str, Any], loc: SourceLocation, what: str, table: Any) -> None:
        """Report what of ``obj`` toolbind would ignore: a field the spec's version does not
        define for ``what`` (extensions aside: counted, then noted once per spec), and a field of
        the wrong shape."""
        allowed: frozenset[str] = table["swagger" if self.swagger else "openapi"]
        version = "Swagger 2.0" if self.swagger else "OpenAPI 3.x"
        arrays, objects = _ARRAYS, _OBJECTS
        if what == "document":  # Swagger 2.0's top-level parameters/responses are maps
            arrays, objects = _ARRAYS - {"parameters"}, _OBJECTS | {"parameters"}
        for key, value in obj.items():
            if key.startswith("x-"):
                self.extensions.setdefault(key, []).append(loc.child(key))
            elif key not in allowed:
                self.diags.warning(
                    loc.child(key),
                    f"{key!r} is not a field of {version} {what}s; ignored",
                    f"one of {', '.join(sorted(allowed))}",
                    hint="an extension of your own is named x-…",
                )
            elif key in arrays and value is not None and as_array(value) is None:
                self.diags.warning(
                    loc.child(key), f"{key} is {describe(value)}", "an array; ignored"
                )
            elif key in objects and value is not None and as_object(value) is None:
                self.diags.warning(
                    loc.child(key), f"{key} is {describe(value)}", "an object; ignored"
                )

    def read(self, select: OperationFilter | None) -> SpecPackage | None:
        tools: list[ToolSpec] = []
        operations: dict[str, HttpOperation] = {}
        self.fields(self.spec, self.top, "document", _DOC_FIELDS)
        paths_at = _Where(self.spec.get("paths", {}), self.top.child("paths"), self.spec, self.path)
        if "$ref" in (as_object(paths_at.value) or {}):
            # the whole map in another file (json-refs' multi-file Swagger: ``paths: {$ref:
            # ./paths/index.yaml}``): OpenAPI allows a $ref per path item only, but the meaning
            # is plain — read as a path item named "$ref", the spec compiled to no tool
            self.diags.warning(
                paths_at.loc.child("$ref"),
                "paths is a $ref to the whole map; followed",
                "a map of paths to path items (each may be a $ref)",
            )
            paths_at = self.deref(paths_at, "paths") or _Where(
                {}, paths_at.loc, self.spec, self.path
            )
        raw_paths: Any = paths_at.value
        paths = as_object(raw_paths)
        if paths is None:
            self.diags.error(
                paths_at.loc,
                f"paths is {describe(raw_paths)}",
                "an object mapping paths to path items",
            )
            return None
        webhooks = as_object(self.spec.get("webhooks"))
        if webhooks:
            self.diags.note(
                self.top.child("webhooks"),
                f"{len(webhooks)} webhook(s) skipped: webhooks are requests the API sends, not "
                "operations a tool can call",
            )
        self.replay = self._replay(select)
        if self.swagger and isinstance(
            (as_object(self.spec.get("x-ms-parameterized-host")) or {}).get("hostTemplate"), str
        ):
            self.extensions.pop("x-ms-parameterized-host", None)  # read as the server
        entries = [(route, raw_item, paths_at) for route, raw_item in paths.items()]
        ms_paths = as_object(self.spec.get("x-ms-paths"))
        if ms_paths is not None:
            # AutoRest's paths whose key carries a fixed query (Azure Storage's
            # ``/{containerName}?restype=container``): Swagger 2.0 cannot declare two operations
            # on one path that a query tells apart. Skipped as an extension, every such
            # operation was lost (all of a storage data-plane spec) with one note; the query is
            # part of the path template, sent as written before the call's own query.
            self.extensions.pop("x-ms-paths", None)
            ms_at = _Where(ms_paths, self.top.child("x-ms-paths"), self.spec, self.path)
            entries += [(route, raw_item, ms_at) for route, raw_item in ms_paths.items()]
            self.diags.note(
                ms_at.loc,
                f"{len(ms_paths)} path(s) read from x-ms-paths (AutoRest's paths with a fixed "
                "query): each query is sent as written",
            )
        for route, raw_item, in_map in entries:
            iloc = in_map.loc.child(route)
            if route.startswith("x-"):
                continue
            item = self.deref(_Where(raw_item, iloc, in_map.root, in_map.path), "path item")
            if item is None:
                continue
            item_obj = as_object(item.value)
            if item_obj is None:
                self.diags.warning(
                    iloc, f"path item is {describe(item.value)}", "an object; skipped"
                )
                continue
            self.fields(item_obj, item.loc, "path item", _ITEM_FIELDS)
            # A path item's $ref may have fields beside it (OpenAPI's Path Item Object has $ref
            # as a field): ``/pets/{id}: {$ref: pets.yaml, delete: ...}``. The referenced item
            # replaced them, and their operations were lost without a word. Both are read, each
            # with its own document's $refs; a field in both is the local one's (said).
            parts: tuple[_Where, ...] = (item,)
            raw_obj = as_object(raw_item) or {}
            beside = {k: v for k, v in raw_obj.items() if k != "$ref"}
            if "$ref" in raw_obj and beside and item.value is not raw_item:
                self.fields(beside, iloc, "path item", _ITEM_FIELDS)
                both = sorted(k for k in beside if k in item_obj and not k.startswith("x-"))
                if both:
                    self.diags.warning(
                        iloc,
                        f"the path item has {', '.join(both)} both beside its $ref and in the "
                        "item it references; read as written beside the $ref",
                        "each field in one of the two (OpenAPI leaves a field in both undefined)",
                    )
                parts = (item, _Where(beside, iloc, in_map.root, in_map.path))
            if route != route.strip():
                # Matrix's invite: "/rooms/{roomId}/invite " — the space went out as %20 on
                # every call, a path no server has (Prism: no such route)
                self.diags.warning(
                    iloc,
                    f"the path {route!r} has white space around it; read as {route.strip()!r}",
                    "a path that starts with / and has no white space (a URL has none: a space "
                    "would be sent as %20)",
                )
                route = route.strip()
            if not route.startswith(("/", "?")):  # ("?...": an x-ms-paths key after basePath)
                # a path is appended to the server URL: "pets/{id}" after ".../api" went out as
                # ".../apipets/7", refused at run time as outside the servers, nothing said here
                self.diags.warning(
                    iloc,
                    f"the path {route!r} does not start with /; read as {'/' + route!r}",
                    "a path that starts with / (OpenAPI appends it to the server URL)",
                )
                route = "/" + route
            express = [f":{m}" for m in _EXPRESS_SEGMENT.findall(route)]
            if express:
                # Vonage's media API: ``/:id/info`` is sent as written, and asks for no id
                self.diags.warning(
                    iloc,
                    f"the path {route!r} has {', '.join(map(repr, express))}, a parameter as "
                    "Express writes it; OpenAPI's are {name}, so it is sent as written",
                    "a path template: " + _EXPRESS_SEGMENT.sub(r"{\1}", route),
                    hint="write the path with {name} and declare the path parameter",
                )
            methods = {m: part for part in parts for m in as_object(part.value) or {}}
            for method, holder in methods.items():
                if method not in METHODS:
                    continue
                raw_op = holder.value[method]
                self.counts["operations", "read"] += 1
                # Split specs put whole operations in other files (``get: {$ref: ops/x.yaml}``):
                # followed like any $ref, and the operation's own $refs are relative to its file.
                found = self.deref(
                    _Where(raw_op, holder.loc.child(method), holder.root, holder.path),
                    "operation",
                )
                if found is None:
                    self.counts["operations", "reported"] += 1
                    continue
                op = as_object(found.value)
                oloc = found.loc
                if op is None:
                    self.diags.warning(
                        oloc, f"operation is {describe(found.value)}", "an object; skipped"
                    )
                    self.counts["operations", "reported"] += 1
                    continue
                self.fields(op, oloc, "operation", _OPERATION_FIELDS)
                callbacks = as_object(op.get("callbacks"))
                if callbacks:
                    self.diags.note(
                        oloc.child("callbacks"),
                        f"{len(callbacks)} callback(s) skipped: callbacks are requests the API "
                        "sends, not operations a tool can call",
                    )
                if self.replay is None:
                    built = self.operation(route, method, parts, op, oloc, select, found)
                else:
                    mine = len(parts) == 1 and item.root is self.spec and found.root is self.spec
                    at = item.loc.pointer
                    built = self.replay.operation(
                        oloc.pointer,
                        [f"{at}/parameters", f"{at}/servers", oloc.pointer] if mine else None,
                        partial(self.operation, route, method, parts, op, oloc, select, found),
                    )
                if built is None:
                    self.counts["operations", "filtered"] += 1
                else:
                    self.counts["operations", "emitted"] += 1
                    tool, http = built
                    tools.append(tool)
                    operations[tool.name] = http
        if self.replay is not None:
            memo = _opmemo.current()
            if memo is not None:
                memo.keep(self.doc.path, self.replay.made)
            self.replay = None
        if self.extensions:
            first = next(iter(self.extensions.values()))[0]
            self.diags.note(
                first,
                f"{sum(map(len, self.extensions.values()))} extension field(s) ignored "
                f"({', '.join(sorted(self.extensions))}): toolbind reads no x- extension of the "
                "document, its path items or operations",
            )
        self.lowerer.report_extensions()
        self.diags.note(self.top, "read → emitted: " + self.summary())
        if not tools and not self.diags.has_errors:
            self.diags.warning(
                self.top.child("paths"),
                "the spec has no operations" + (" matching the filter" if select else ""),
                "at least one operation",
            )
        definitions = _reachable(tools, self.lowerer.definitions)
        security = self.security(self.spec.get("security"), self.top.child("security")) or ()
        api = HttpApi(
            title=str((as_object(self.spec.get("info")) or {}).get("title") or self.doc.path),
            servers=self.servers(self.spec, self.top),
            security_schemes=self.security_schemes(),
            security=security,
            operations=operations,
        )
        self._credential_parameters(api, tools)
        return SpecPackage(
            source=self.doc.path,
            format="swagger2" if self.swagger else "openapi31" if self.v31 else "openapi30",
            tools=tuple(tools),
            definitions=definitions,
            http=api,
        )

    def _credential_parameters(self, api: HttpApi, tools: list[ToolSpec]) -> None:
        """A parameter named like a credential (``Api-Key``, ``X-Auth-Token``) that no apiKey
        scheme declares is a Call field: a model is asked for the secret (Discourse's spec
        declares no securitySchemes and an ``Api-Key`` header on 22 operations). Said once per
        name and place, at its first operation; it stays a field (it may be no secret). A path
        parameter is never one: it names a resource (PagerDuty's ``session_id`` of a session an
        admin revokes), and no apiKey scheme can be ``in: path``."""
        declared = {
            (s.name.lower(), s.location)
            for s in api.security_schemes.values()
            if s.type == "apiKey" and s.name is not None
        }
        where = {t.name: t for t in tools}
        found: dict[tuple[str, str], list[str]] = {}
        for name, op in api.operations.items():
            fields = {f.name: f.schema for f in where[name].params.properties}
            places = [(p.name, p.location, fields.get(p.field)) for p in op.parameters]
            body = op.body
            # Vonage's SMS API takes api_key/api_secret in its form body
            if body is not None and body.wrapped is None:
                places += [(prop, "body", fields.get(field)) for field, prop in body.fields]
            elif body is not None and body.wrapped is not None:
                wrapped = fields.get(body.wrapped)
                if isinstance(wrapped, UnionNode):  # an optional body: ``body | None``
                    wrapped = next((v for v in wrapped.variants if isinstance(v, ObjectNode)), None)
                if isinstance(wrapped, ObjectNode):
                    places += [(f.name, "body", f.schema) for f in wrapped.properties]
            for pname, pin, schema in places:
                if (
                    _looks_like_credential(pname, pin)
                    and (pname.lower(), pin) not in declared
                    # a flag or number (GitHub's ``hide_secret: boolean``) carries no secret
                    and _may_be_secret(schema)
                ):
                    found.setdefault((pname, pin), []).append(name)
        for (pname, pin), tool_names in found.items():
            many = len(tool_names)
            self.diags.warning(
                where[tool_names[0]].loc,
                f"{'request body property' if pin == 'body' else pin + ' parameter'} {pname!r} "
                "looks like a credential, and no securityScheme declares it: it is a Call field, "
                "so a model is asked for it"
                + (f" ({many} operations, the first here)" if many > 1 else ""),
                f"an apiKey securityScheme (name: {pname}, in: {pin}): its value then comes "
                "from configuration (credentials=, the environment), never from a model"
                if pin != "body"
                else "a secret from configuration: OpenAPI declares one as an apiKey "
                "securityScheme in a header, the query or a cookie, never in a body",
            )

    def _replay(self, select: OperationFilter | None) -> _opmemo.Replay | None:
        """How the operations are lowered when the driver keeps them (``_opmemo``): taken from
        the previous run's records where that is certain to be the same, recorded for the
        next; None: lowered only."""
        memo = _opmemo.current()
        if memo is None or select or self.path is None or self.doc.path not in memo.changes:
            return None
        found = memo.records(self.doc.path)
        if found is not None and memo.changed_names(self.doc.path, self.spec):
            found = None
        return _opmemo.Replay(
            shown=self.doc.path,
            diags=self.diags,
            names=self.names,
            counts=self.counts,
            schemes=self.named_schemes,
            lowerer=self.lowerer,
            previous=found[0] if found is not None else [],
            places=found[1] if found is not None else None,
        )

    def _count_body(
        self,
        op: dict[str, Any],
        loc: SourceLocation,
        raw_params: dict[tuple[str, str], _Where],
        body: HttpBody | None,
    ) -> None:
        if not self.swagger:
            if "requestBody" in op:
                self.counts["request bodies", "read"] += 1
                fate = "emitted" if body is not None else "reported"  # body() warned why not
                self.counts["request bodies", fate] += 1
            return
        bodies = [p for (_, pin), p in raw_params.items() if pin == "body"]
        forms = [p for (_, pin), p in raw_params.items() if pin == "formData"]
        if bodies:
            self.counts["parameters in body", "emitted" if body is not None else "reported"] += 1
            for extra in bodies[1:]:
                self.diags.warning(
                    extra.loc,
                    "a second body parameter; only the first is the request body",
                    "one parameter with in: body per operation",
                )
                self.counts["parameters in body", "reported"] += 1
            if forms:  # Swagger 2.0 forbids both: the body wins
                self.diags.warning(
                    loc,
                    f"{len(forms)} formData parameter(s) beside a body parameter are not sent",
                    "in: body or in: formData, not both",
                )
                self.counts["parameters in formData", "reported"] += len(forms)
        elif forms:
            fate = "emitted" if body is not None else "reported"
            self.counts["parameters in formData", fate] += len(forms)

    def summary(self) -> str:
        """What was read and what became of it, per kind (``toolbind generate -v``)."""
        kinds = sorted({"operations", *(kind for kind, _ in self.counts)})
        parts: list[str] = []
        for kind in kinds:
            read = self.counts[kind, "read"]
            fates = [
                f"{self.counts[kind, fate]} {fate}"
                for fate in ("emitted", "reported", "filtered", "overridden")
                if self.counts[kind, fate]
            ]
            parts.append(f"{kind} {read} → {', '.join(fates) or '0 emitted'}")
        return "; ".join(parts)

    # -- servers and security ---------------------------------------------------------------

    def servers(self, owner: dict[str, Any], loc: SourceLocation) -> tuple[HttpServer, ...]:
        if self.swagger:
            if owner is not self.spec:
                return ()
            host = self.spec.get("host")
            base = self.spec.get("basePath") or ""
            base = base if isinstance(base, str) else ""
            schemes = [
                s for s in as_array(self.spec.get("schemes")) or [] if s in ("https", "http")
            ]
            ms_host = as_object(self.spec.get("x-ms-parameterized-host"))
            if ms_host is not None and isinstance(ms_host.get("hostTemplate"), str):
                return (self._parameterized_host(ms_host, base, schemes),)
            if not isinstance(host, str) or not host:
                return (HttpServer(url=base or "/"),)
            return tuple(HttpServer(url=f"{s}://{host}{base}") for s in schemes or ["https"])
        out: list[HttpServer] = []
        for i, raw in enumerate(as_array(owner.get("servers")) or []):
            server = as_object(raw)
            url = server.get("url") if server is not None else None
            if server is None or not isinstance(url, str):
                self.diags.warning(
                    loc.child("servers", i), f"server is {describe(raw)}", "{url: ...}; skipped"
                )
                continue
            defaults: dict[str, str] = {}
            enums: dict[str, tuple[str, ...]] = {}
            for name, raw_var in (as_object(server.get("variables")) or {}).items():
                var = as_object(raw_var) or {}
                defaults[name] = str(var.get("default", ""))
                listed = as_array(var.get("enum"))
                if listed:
                    enums[name] = tuple(str(v) for v in listed)
            description = server.get("description")
            out.append(
                HttpServer(
                    url=url,
                    variables=defaults,
                    enums=enums,
                    description=description if isinstance(description, str) else None,
                )
            )
        if owner is self.spec and not out:
            out.append(HttpServer(url="/"))
        return tuple(out)

    def _parameterized_host(
        self, ms_host: dict[str, Any], base: str, schemes: list[Any]
    ) -> HttpServer:
        """AutoRest's ``x-ms-parameterized-host`` (every Azure data-plane spec: Key Vault's
        ``{vaultBaseUrl}``, Storage's ``{url}``) as a server with variables: its parameters'
        defaults and enums, the others given with ``server_variables=``. Ignored as an
        extension, the API had the server '/', and every client was refused ("not an absolute
        URL") with nothing said of the host the spec declares."""
        loc = self.top.child("x-ms-parameterized-host")
        template = str(ms_host["hostTemplate"])
        scheme = str(schemes[0]) if schemes else "https"
        prefix = "" if ms_host.get("useSchemePrefix") is False else f"{scheme}://"
        defaults: dict[str, str] = {}
        enums: dict[str, tuple[str, ...]] = {}
        named: list[str] = []
        for i, raw in enumerate(as_array(ms_host.get("parameters")) or []):
            found = self.deref(
                _Where(raw, loc.child("parameters", i), self.spec, self.path), "parameter"
            )
            pobj = (as_object(found.value) if found is not None else None) or {}
            name = pobj.get("name")
            if not isinstance(name, str):
                continue
            named.append(name)
            if isinstance(pobj.get("default"), (str, int, float)):
                defaults[name] = str(pobj["default"])
            listed = as_array(pobj.get("enum"))
            if listed:
                enums[name] = tuple(str(v) for v in listed)
        url = prefix + template + base
        given = [n for n in _PATH_TEMPLATE.findall(url) if n not in defaults]
        self.diags.note(
            loc,
            f"x-ms-parameterized-host read as the server {url!r}"
            + (
                f": give {', '.join(map(repr, given))} with "
                "HttpClient(server_variables={...}) (or base_url=)"
                if given
                else ""
            ),
        )
        return HttpServer(url=url, variables=defaults, enums=enums)

    def security_schemes(self) -> dict[str, SecurityScheme]:
        if self.swagger:
            raw_table = self.spec.get("securityDefinitions")
            loc = self.top.child("securityDefinitions")
        else:
            raw_table = (as_object(self.spec.get("components")) or {}).get("securitySchemes")
            loc = self.top.child("components", "securitySchemes")
        where = _Where(raw_table, loc, self.spec, self.path)
        if isinstance(raw_table, dict) and "$ref" in raw_table:
            # the whole map in another file (a real email API's split spec): OpenAPI allows a
            # $ref per scheme only, but the meaning is plain — ignored, every operation that
            # needs a credential failed at run time with no scheme to give it for
            self.diags.warning(
                loc.child("$ref"),
                f"{loc.pointer.rsplit('/', 1)[-1]} is a $ref to the whole map; followed",
                "a map of security schemes (each may be a $ref)",
            )
            where = self.deref(where, "security schemes") or _Where({}, loc, self.spec, self.path)
        table = as_object(where.value) or {}
        out: dict[str, SecurityScheme] = {}
        for key, raw in table.items():
            at = where.loc.child(key)
            found = self.deref(_Where(raw, at, where.root, where.path), "security scheme")
            if found is None:  # (deref said why)
                continue
            scheme = as_object(found.value)
            if scheme is None:
                self.diags.warning(
                    at, f"security scheme is {describe(found.value)}", "an object; skipped"
                )
                continue
            made = self._scheme(key, scheme, found.loc)
            if made is not None:
                out[key] = made
        for name, at in self.named_schemes.items():
            if name not in table:  # (one declared but not supported has its own note)
                self.diags.warning(
                    at,
                    f"security requirement names {name!r}, which no security scheme declares: "
                    "no credential can be given for it, so an operation that needs it fails",
                    f"a key of {loc.pointer.lstrip('/').replace('/', '.')}"
                    + (f" ({', '.join(sorted(table))})" if table else ""),
                )
        return out

    def _scheme(self, key: str, s: dict[str, Any], loc: SourceLocation) -> SecurityScheme | None:
        kind = s.get("type")
        if kind == "apiKey":
            where = s.get("in")
            name = s.get("name")
            if where not in ("header", "query", "cookie") or not isinstance(name, str):
                self.diags.warning(
                    loc, "apiKey scheme without a valid 'name' and 'in'", "name and in; skipped"
                )
                return None
            return SecurityScheme(key=key, type="apiKey", name=name, location=where)
        if kind == "basic":  # Swagger 2.0
            return SecurityScheme(key=key, type="http", scheme="basic")
        if kind == "http":
            scheme = s.get("scheme")
            return SecurityScheme(
                key=key, type="http", scheme=scheme.lower() if isinstance(scheme, str) else None
            )
        if kind == "oauth2":
            token_url: Any = None
            scopes: dict[str, Any] = {}
            if self.swagger:
                if s.get("flow") == "application":
                    token_url = s.get("tokenUrl")
                scopes = as_object(s.get("scopes")) or {}
            else:
                flows = as_object(s.get("flows")) or {}
                flow = as_object(flows.get("clientCredentials"))
                if flow is not None:
                    token_url = flow.get("tokenUrl")
                for raw_flow in flows.values():
                    scopes.update(as_object((as_object(raw_flow) or {}).get("scopes")) or {})
            return SecurityScheme(
                key=key,
                type="oauth2",
                token_url=token_url if isinstance(token_url, str) else None,
                scopes=tuple(sorted(scopes)),
            )
        if kind == "openIdConnect":
            url = s.get("openIdConnectUrl")
            return SecurityScheme(
                key=key, type="openIdConnect", openid_url=url if isinstance(url, str) else None
            )
        self.diags.note(loc, f"security scheme type {describe(kind)} is not supported; skipped")
        return None

    def security(
        self, raw: Any, loc: SourceLocation
    ) -> tuple[tuple[SecurityRequirement, ...], ...] | None:
        items = as_array(raw)
        if items is None:
            return None
        out: list[tuple[SecurityRequirement, ...]] = []
        for i, raw_req in enumerate(items):
            req = as_object(raw_req)
            if req is None:
                self.diags.warning(
                    loc.child(i), f"security requirement is {describe(raw_req)}", "an object"
                )
                continue
            for k in req:
                self.named_schemes.setdefault(k, loc.child(i, k))
            out.append(
                tuple(
                    SecurityRequirement(
                        scheme=k,
                        scopes=tuple(str(x) for x in as_array(v) or []),
                    )
                    for k, v in req.items()
                )
            )
        return tuple(out)

    # -- operations -------------------------------------------------------------------------

    def operation(
        self,
        route: str,
        method: str,
        items: tuple[_Where, ...],
        op: dict[str, Any],
        loc: SourceLocation,
        select: OperationFilter | None,
        op_doc: _Where,
    ) -> tuple[ToolSpec, HttpOperation] | None:
        """One operation as a tool. ``items``: the path item's parts (the item, then what is
        written beside its $ref), each with the document its $refs are relative to. ``op_doc``
        is where ``op`` was read: the document its own ``$ref``s (parameters, body, responses)
        are relative to, which a path item's are not when the operation was ``$ref``-ed from
        another file."""
        raw_id = op.get("operationId")
        operation_id = raw_id if isinstance(raw_id, str) and raw_id else None
        tags = tuple(t for t in as_array(op.get("tags")) or [] if isinstance(t, str))
        wanted = naming.operation_tool_name(operation_id, method, route)
        if select and not select.keeps(tags, route, operation_id, wanted):
            return None
        name = self.names.claim(wanted)
        if name != wanted:
            self.diags.note(
                loc,
                f"operation {method.upper()} {route} is the tool {name!r} ({wanted!r} was taken)",
            )
        item = items[0]
        owners: list[tuple[dict[str, Any], SourceLocation, _Where]] = [
            (as_object(part.value) or {}, part.loc, part) for part in items
        ]
        # Parameters: path-level first, operation-level overriding by (name, in).
        raw_params: dict[tuple[str, str], _Where] = {}
        accept: str | None = None  # a declared ``Accept`` header parameter's one value
        for owner, oloc, doc in (*owners, (op, loc, op_doc)):
            for i, raw in enumerate(as_array(owner.get("parameters")) or []):
                p = self.deref(
                    _Where(raw, oloc.child("parameters", i), doc.root, doc.path), "parameter"
                )
                pobj = as_object(p.value) if p is not None else None
                if p is None or pobj is None:
                    if p is not None:
                        self.diags.warning(
                            p.loc, f"parameter is {describe(p.value)}", "an object; skipped"
                        )
                    self.counts["parameters", "read"] += 1
                    self.counts["parameters", "reported"] += 1
                    continue
                pname, pin = pobj.get("name"), pobj.get("in")
                valid = isinstance(pname, str) and pin in (*_LOCATIONS, "body", "formData")
                kind = f"parameters in {pin}" if valid else "parameters"
                self.counts[kind, "read"] += 1
                if not isinstance(pname, str) or pin not in (*_LOCATIONS, "body", "formData"):
                    self.diags.warning(
                        p.loc,
                        f"parameter without a valid name and location ({describe(pname)}, "
                        f"{describe(pin)})",
                        "name and in: path, query, header or cookie; skipped",
                    )
                    self.counts[kind, "reported"] += 1
                    continue
                if (pname, pin) in raw_params:  # the operation's replaces the path item's
                    self.counts[kind, "overridden"] += 1
                if pin == "header" and pname.lower() in IGNORED_HEADERS:
                    # OpenAPI ignores Accept/Content-Type/Authorization parameters; the model must
                    # never be asked for credentials or for what frames the request.
                    raw_params.pop((pname, pin), None)
                    value = self._one_value(p) if pname.lower() == "accept" else None
                    if pname.lower() == "accept":  # the operation's replaces the path item's
                        accept = value
                    if value is not None:
                        # a versioned media type (``application/vnd.x+json;version=2``) that the
                        # API may require: sent as declared, instead of the response's media type
                        self.diags.note(
                            p.loc,
                            f"header parameter {pname!r} is not a Call field: every call sends "
                            f"the value it declares, {value!r}",
                        )
                        self.counts[kind, "emitted"] += 1
                        continue
                    if pname.lower() == "cookie":
                        # a session the API wants passed on (Ory Kratos: ``Cookie`` on 19
                        # operations): never asked of a model, and the client cannot make it up
                        found = (
                            f"header parameter {pname!r} is not a Call field: calls send the "
                            "cookies the API set earlier and those of apiKey schemes in: cookie"
                        )
                        hint = "HttpClient(headers={'Cookie': 'name=value'}) sends it on every call"
                        if (as_object(p.value) or {}).get("required") is True:
                            self.diags.warning(
                                p.loc,
                                found + "; the operation requires it",
                                "a cookie the API needs from elsewhere: configuration",
                                hint=hint,
                            )
                        else:
                            self.diags.note(p.loc, found, hint=hint)
                        self.counts[kind, "reported"] += 1
                        continue
                    self.diags.note(
                        p.loc,
                        f"header parameter {pname!r} is not a Call field: the HTTP client sets "
                        "it (credentials come from securitySchemes and configuration)",
                    )
                    self.counts[kind, "reported"] += 1
                    continue
                raw_params[(pname, pin)] = p
        templates = dict.fromkeys(_PATH_TEMPLATE.findall(route))
        for key, p in list(raw_params.items()):
            if key[1] == "path" and key[0] not in templates:
                # no place in the URL: a Call field for it would ask the model for a value that
                # goes nowhere (or, named like 'a}@{b', replaces the wrong part of the path)
                self.diags.warning(
                    p.loc,
                    f"path parameter {key[0]!r} is not named in the path {route!r}; it is not "
                    "a Call field",
                    "a path parameter whose name is one of the path's {templates} "
                    f"({', '.join(templates) or 'none'})",
                    hint="rename it after its {template}, or move it to the query",
                )
                self.counts["parameters in path", "reported"] += 1
                del raw_params[key]
        for template in templates:
            if (template, "path") not in raw_params:
                # the URL can't be built without it: one obvious meaning, a required string
                self.diags.warning(
                    loc,
                    f"the path {route!r} names {{{template}}}, which the operation does not "
                    "declare; read as a required string path parameter",
                    f"a parameter {{name: {template}, in: path, required: true}}",
                    hint="declare it in the operation's or the path item's parameters",
                )
                self.counts["parameters in path", "read"] += 1  # read from the path template
                declared: dict[str, Any] = {"name": template, "in": "path", "required": True}
                declared |= {"type": "string"} if self.swagger else {"schema": {"type": "string"}}
                raw_params[(template, "path")] = _Where(declared, loc, item.root, item.path)
        props: list[Property] = []
        taken: set[str] = set(META_FIELDS)
        self.wire_names = {pname for pname, _ in raw_params}
        params: list[HttpParameter] = []
        for location in _LOCATIONS:
            for (pname, pin), p in raw_params.items():
                if pin != location:
                    continue
                made = self.parameter(pname, location, p, taken, props, name)
                if made is not None:
                    params.append(made)
                    self.counts[f"parameters in {location}", "emitted"] += 1
        body = self.body(op, loc, op_doc, raw_params, taken, props, name)
        self._count_body(op, loc, raw_params, body)
        output, responses, errors = self.responses(op, loc, op_doc)
        summary = op.get("summary") if isinstance(op.get("summary"), str) else None
        description = op.get("description") if isinstance(op.get("description"), str) else None
        text = (
            "\n\n".join(t.strip() for t in (summary, description) if t and t.strip())
            if summary != description
            else (summary or "").strip()
        )
        deprecated = op.get("deprecated") is True
        if deprecated:  # marked where the LLM reads it, not only in the metadata
            text = f"Deprecated. {text}" if text else "Deprecated."
        tool = ToolSpec(
            name=name,
            loc=loc,
            # closed: a field the operation does not declare has nowhere to go on the wire, so it
            # is refused (and fed back to the model) instead of being dropped in silence
            params=ObjectNode(
                meta=Meta(loc=loc),
                properties=tuple(props),
                additional=NeverNode(meta=Meta(loc=loc)),
            ),
            output=output,
            description=text or None,
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
            security=self.security(op.get("security"), loc.child("security")),
            servers=self.servers(op, loc)
            or next((got for o, at, _ in reversed(owners) if (got := self.servers(o, at))), ()),
            deprecated=deprecated,
            accept=accept,
        )
        return tool, http

    def _one_value(self, p: _Where) -> str | None:
        """The one string a header parameter declares: its ``default``, ``const`` or one-value
        ``enum`` (Swagger 2.0: on the parameter; 3.x: on its schema, which may be a ``$ref``)."""
        obj = as_object(p.value) or {}
        if not self.swagger and obj.get("schema") is not None:
            schema = _Where(obj["schema"], p.loc.child("schema"), p.root, p.path)
            where = self.deref(schema, "schema")
            obj = (as_object(where.value) if where is not None else None) or {}
        enum: Any = obj.get("enum")
        candidates: list[Any] = [obj.get("const"), obj.get("default")]
        if isinstance(enum, list) and len(cast("list[Any]", enum)) == 1:
            candidates.append(cast("list[Any]", enum)[0])
        for value in candidates:
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    def _field(
        self, original: str, location: str, taken: set[str], tool: str, loc: SourceLocation
    ) -> str:
        """A Call field (JSON name) for the spec's name ``original``; a taken one gets its
        location as suffix.

        A name a provider refuses as a property key (Anthropic and Bedrock take
        ``[a-zA-Z0-9_.-]{1,64}``; Lago's query has ``statuses[]`` and ``metadata[key]``, and one
        such key fails the whole request) is a field named without the rest; the wire keeps
        the spec's name (``HttpParameter.field``, ``HttpBody.fields``)."""
        wanted = chosen = original
        renamed = not _PROPERTY_KEY.fullmatch(wanted)
        if renamed:
            chosen = wanted = _property_key(wanted) or location
        # (a renamed one never takes the name another parameter has: Twilio's ``StartTime<``
        # beside ``StartTime``)
        if chosen in taken or (renamed and chosen in self.wire_names):
            chosen = f"{wanted}_{location}"
            n = 2
            while chosen in taken:
                chosen = f"{wanted}_{location}{n}"
                n += 1
            self.diags.note(
                loc,
                f"{location} {wanted!r} of tool {tool!r} is the Call field {chosen!r} "
                f"({wanted!r} was taken)",
            )
        if renamed:
            self.diags.note(
                loc,
                f"{location} {original!r} of tool {tool!r} is the Call field {chosen!r}: a model "
                "provider refuses such a property name (Anthropic takes [a-zA-Z0-9_.-]{1,64}); "
                "it is sent as the spec names it",
            )
        taken.add(chosen)
        return chosen

    def parameter(
        self,
        pname: str,
        location: ParameterLocation,
        p: _Where,
        taken: set[str],
        props: list[Property],
        tool: str,
    ) -> HttpParameter | None:
        pobj: dict[str, Any] = p.value
        content_type: str | None = None
        if self.swagger:
            schema_value: Any = {k: v for k, v in pobj.items() if k not in _SWAGGER_PARAM_KEYS}
            schema_loc = p.loc
            style, explode = self._collection_format(pobj, p.loc)
            if location != "query" and style == "form":
                style = _DEFAULT_STYLE[location]
        else:
            schema_value = pobj.get("schema")
            schema_loc = p.loc.child("schema")
            content = as_object(pobj.get("content"))
            if schema_value is None and content:
                content_type = next(iter(content))
                schema_value = (as_object(content[content_type]) or {}).get("schema")
                schema_loc = p.loc.child("content", content_type, "schema")
            if schema_value is None:
                self.diags.warning(
                    p.loc, f"parameter {pname!r} has no schema", "a schema; any value is allowed"
                )
                schema_value = {}
            raw_style = pobj.get("style", _DEFAULT_STYLE[location])
            style = raw_style if raw_style in _STYLES else _DEFAULT_STYLE[location]
            explode = pobj.get("explode", style == "form") is True
        node = self.schema(_Where(_file_type(schema_value), schema_loc, p.root, p.path))
        node = _annotate(node, pobj)
        required = location == "path" or pobj.get("required") is True
        field_name = self._field(pname, location, taken, tool, p.loc)
        props.append(Property(name=field_name, schema=node, required=required))
        return HttpParameter(
            name=pname,
            field=field_name,
            location=location,
            style=style,
            explode=explode,
            allow_reserved=pobj.get("allowReserved") is True,
            allow_empty=pobj.get("allowEmptyValue") is True,
            required=required,
            content_type=content_type,
        )

    # -- request bodies ---------------------------------------------------------------------

    def body(
        self,
        op: dict[str, Any],
        loc: SourceLocation,
        item: _Where,
        raw_params: dict[tuple[str, str], _Where],
        taken: set[str],
        props: list[Property],
        tool: str,
    ) -> HttpBody | None:
        if self.swagger:
            return self._swagger_body(op, raw_params, taken, props, tool, loc)
        if "requestBody" not in op:
            return None
        found = self.deref(
            _Where(op["requestBody"], loc.child("requestBody"), item.root, item.path),
            "request body",
        )
        rb = as_object(found.value) if found is not None else None
        if found is None or rb is None:
            if found is not None:
                self.diags.warning(
                    found.loc, f"request body is {describe(found.value)}", "an object; skipped"
                )
            return None
        content = as_object(rb.get("content")) or {}
        if not content:
            self.diags.warning(found.loc, "request body has no content", "content: {<type>: ...}")
            return None
        media_type = _pick_media_type(list(content))
        mloc = found.loc.child("content", media_type)
        media = as_object(content[media_type]) or {}
        kind = _body_kind(media_type)
        raw_schema = media.get("schema")
        if raw_schema is None:
            raw_schema = {"type": "string", "format": "binary"} if kind == "binary" else {}
        node = self.schema(_Where(raw_schema, mloc.child("schema"), found.root, found.path))
        kind = self._base64_text(kind, node, raw_schema, media_type, mloc.child("schema"))
        encoding = as_object(media.get("encoding")) or {}
        return self._place_body(
            node, media_type, kind, rb.get("required") is True, encoding, taken, props, tool, mloc
        )

    def _swagger_body(
        self,
        op: dict[str, Any],
        raw_params: dict[tuple[str, str], _Where],
        taken: set[str],
        props: list[Property],
        tool: str,
        loc: SourceLocation,
    ) -> HttpBody | None:
        consumes = [
            c
            for c in as_array(op.get("consumes", self.spec.get("consumes"))) or []
            if isinstance(c, str)
        ]
        body_params = [p for (_, pin), p in raw_params.items() if pin == "body"]
        form_params = [(n, p) for (n, pin), p in raw_params.items() if pin == "formData"]
        if body_params:
            p = body_params[0]
            pobj: dict[str, Any] = p.value
            node = self.schema(
                _Where(pobj.get("schema", {}), p.loc.child("schema"), p.root, p.path)
            )
            node = _annotate(node, pobj)
            usable = [c for c in consumes if _body_kind(c) in ("json", "text", "binary")]
            patch = [c for c in usable if _is_json_patch(c)]
            if (
                patch
                and len(patch) < len(usable)
                and not isinstance(self._resolved(node), ArrayNode)
            ):
                # Swagger 2.0 gives one schema for every type in consumes: a JSON Patch
                # (RFC 6902) is an array, so an object body listed first among a container
                # orchestrator's PATCH types went out as json-patch+json and was refused
                usable = [c for c in usable if c not in patch]
                self.diags.note(
                    p.loc.child("schema"),
                    f"the body is sent as {_pick_media_type(usable)}: {patch[0]} (consumes) "
                    "is an array of operations, and this body's schema is not an array",
                )
            media_type = _pick_media_type(usable or ["application/json"])
            return self._place_body(
                node,
                media_type,
                self._base64_text(
                    _body_kind(media_type),
                    node,
                    pobj.get("schema"),
                    media_type,
                    p.loc.child("schema"),
                ),
                pobj.get("required") is True,
                {},
                taken,
                props,
                tool,
                p.loc,
            )
        if not form_params:
            return None
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
            schema_value = {k: v for k, v in pobj.items() if k not in _SWAGGER_PARAM_KEYS}
            node = self.schema(_Where(_file_type(schema_value), p.loc, p.root, p.path))
            node = _annotate(node, pobj)
            field_name = self._field(pname, "body", taken, tool, p.loc)
            props.append(
                Property(name=field_name, schema=node, required=pobj.get("required") is True)
            )
            fields.append((field_name, pname))
            # an array field is sent as its collectionFormat says: csv (the default) one field
            # `tags=a,b`, multi one field per item — it went out as multi whatever was declared
            style: ParameterStyle | None = None
            explode: bool | None = None
            if pobj.get("type") == "array":
                style, explode = self._collection_format(pobj, p.loc)
            parts.append(
                BodyPart(
                    property=pname, is_file=pobj.get("type") == "file", style=style, explode=explode
                )
            )
        return HttpBody(
            media_type=media_type,
            kind=_body_kind(media_type),
            required=any(pr.value.get("required") is True for _, pr in form_params),
            fields=tuple(fields),
            parts=tuple(parts),
        )

    def _place_body(
        self,
        node: SchemaNode,
        media_type: str,
        kind: BodyKind,
        required: bool,
        encoding: dict[str, Any],
        taken: set[str],
        props: list[Property],
        tool: str,
        loc: SourceLocation,
    ) -> HttpBody:
        sent = _sent_media_type(media_type, kind)
        if sent != media_type:
            # a container orchestrator's create/replace operations consume */*: that header
            # went out as the body's Content-Type, and the server refuses it
            self.diags.note(
                loc,
                f"the body is sent as {sent}: {media_type} is a range of media types, which no "
                "request can be sent as",
            )
            media_type = sent
        if kind == "binary" and isinstance(self._resolved(node), AnyNode):
            # OpenAPI 3.1 writes raw content as a schema without a type (``image/png: {}``,
            # Matrix's upload: ``application/octet-stream: {schema: {description: ...}}``), as
            # a missing schema is: the content's bytes. Read as any value, the Call asked the
            # model for whatever it liked, and every call was refused as not base64 content.
            node = StringNode(meta=self._resolved(node).meta, format="binary")
        obj = self._object_of(node)
        target = self._resolved(node)
        if kind in ("form", "multipart") and isinstance(
            target, NullNode | BooleanNode | IntegerNode | NumberNode | StringNode | ArrayNode
        ):
            # listmonk's media upload: multipart/form-data of {type: string, format: binary}.
            # The Call took the value and every call was refused, and generate said nothing.
            what = "parts" if kind == "multipart" else "fields"
            file = isinstance(target, StringNode) and target.format == "binary"
            self.diags.warning(
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
        parts: list[BodyPart] = []
        if obj is not None and kind in ("form", "multipart"):
            for prop in obj.properties:
                enc = as_object(encoding.get(prop.name)) or {}
                ctype = enc.get("contentType")
                style, explode = self._form_encoding(enc, kind, loc.child("encoding", prop.name))
                parts.append(
                    BodyPart(
                        property=prop.name,
                        content_type=ctype if isinstance(ctype, str) else None,
                        is_file=_is_file(prop.schema, self.lowerer.definitions),
                        style=style,
                        explode=explode,
                    )
                )
        flattenable = (
            obj is not None
            and obj.properties
            and (obj.additional is None or isinstance(obj.additional, NeverNode))
            and (required or not any(p.required for p in obj.properties))
        )
        if obj is not None and flattenable:
            fields: list[tuple[str, str]] = []
            for prop in obj.properties:
                field_name = self._field(prop.name, "body", taken, tool, loc)
                props.append(replace(prop, name=field_name, required=prop.required and required))
                fields.append((field_name, prop.name))
            return HttpBody(
                media_type=media_type,
                kind=kind,
                required=required,
                fields=tuple(fields),
                parts=tuple(parts),
            )
        field_name = self._field(BODY_FIELD, "body", taken, tool, loc)
        props.append(Property(name=field_name, schema=node, required=required))
        return HttpBody(
            media_type=media_type,
            kind=kind,
            required=required,
            wrapped=field_name,
            parts=tuple(parts),
        )

    def _collection_format(
        self, pobj: dict[str, Any], loc: SourceLocation
    ) -> tuple[ParameterStyle, bool]:
        """A Swagger 2.0 parameter's ``collectionFormat`` as OpenAPI 3's style and explode
        (``csv`` when absent); one OpenAPI 3 cannot say is reported and read as ``csv``."""
        fmt = pobj.get("collectionFormat", "csv")
        found = _COLLECTION_FORMATS.get(fmt) if isinstance(fmt, str) else None
        if found is not None:
            return found
        if pobj.get("type") == "array":
            what = repr(fmt) if isinstance(fmt, str) else describe(fmt)
            why = " (tab-separated: OpenAPI 3 has no such style)" if fmt == "tsv" else ""
            self.diags.warning(
                loc.child("collectionFormat"),
                f"collectionFormat {what} cannot be sent{why}; the items are sent "
                "comma-separated (csv)",
                ", ".join(repr(f) for f in _COLLECTION_FORMATS),
            )
        return _COLLECTION_FORMATS["csv"]

    def _form_encoding(
        self, enc: dict[str, Any], kind: BodyKind, loc: SourceLocation
    ) -> tuple[ParameterStyle | None, bool | None]:
        """A form body property's ``encoding`` style and explode (a payments API sends every
        object as ``deepObject``: ``metadata[key]=value``); OpenAPI applies them to
        ``application/x-www-form-urlencoded`` only."""
        style, explode = enc.get("style"), enc.get("explode")
        if style is None and explode is None:
            return None, None
        if kind != "form":
            self.diags.note(
                loc, "encoding style/explode apply to form-urlencoded bodies only; ignored here"
            )
            return None, None
        if style is not None and style not in _FORM_STYLES:
            self.diags.warning(
                loc.child("style"),
                f"encoding style {describe(style)} is not a form body's; read as 'form'",
                ", ".join(repr(s) for s in _FORM_STYLES),
            )
            style = None
        if explode is not None and not isinstance(explode, bool):
            self.diags.warning(
                loc.child("explode"), f"explode is {describe(explode)}; ignored", "true or false"
            )
            explode = None
        return cast("ParameterStyle | None", style), explode

    def _base64_text(
        self, kind: BodyKind, node: SchemaNode, raw: object, media_type: str, loc: SourceLocation
    ) -> BodyKind:
        """``kind``, or ``text`` for a binary media type whose schema is a base64 string
        (``format: base64`` or ``byte``, ``contentEncoding: base64``): OpenAPI's file uploads
        say such content is transferred base64-encoded, so the Call's string is the body as it
        is (Spotify's cover upload: ``image/jpeg`` of base64 text). It was decoded and the raw
        bytes sent, which the API refused."""
        if kind != "binary":
            return kind
        target = self._resolved(node)
        raw_object = as_object(raw) or {}
        if not (
            (isinstance(target, StringNode) and target.format in ("base64", "byte"))
            or raw_object.get("contentEncoding") == "base64"
        ):
            return kind
        self.diags.note(
            loc,
            f"the {media_type} body is a base64 string: sent as that text, not decoded "
            "(format: binary is what sends raw bytes)",
        )
        return "text"

    def _resolved(self, node: SchemaNode) -> SchemaNode:
        """``node``, or the schema its ``$ref``s lead to."""
        seen: set[str] = set()
        while isinstance(node, RefNode) and node.target not in seen:
            seen.add(node.target)
            definition = self.lowerer.definitions.get(node.target)
            if definition is None:
                return node
            node = definition.node
        return node

    def _object_of(self, node: SchemaNode) -> ObjectNode | None:
        node = self._resolved(node)
        return node if isinstance(node, ObjectNode) else None

    # -- responses --------------------------------------------------------------------------

    def responses(
        self, op: dict[str, Any], loc: SourceLocation, item: _Where
    ) -> tuple[SchemaNode | None, tuple[HttpResponse, ...], tuple[tuple[str, SchemaNode], ...]]:
        """The Output's schema, every declared response, and the error responses' schemas."""
        table = as_object(op.get("responses")) or {}
        chosen = _success_status(list(table))
        output: SchemaNode | None = None
        out: list[HttpResponse] = []
        errors: list[tuple[str, SchemaNode]] = []
        for status, raw in table.items():
            if status.startswith("x-"):
                continue
            self.counts["responses", "read"] += 1
            found = self.deref(
                _Where(raw, loc.child("responses", status), item.root, item.path), "response"
            )
            resp = as_object(found.value) if found is not None else None
            if found is None or resp is None:
                if found is not None:
                    self.diags.warning(
                        found.loc, f"response is {describe(found.value)}", "an object; skipped"
                    )
                self.counts["responses", "reported"] += 1
                continue
            media_type: str | None = None
            schema: _Where | None = None
            if self.swagger:
                if "schema" in resp:
                    produces = [
                        c
                        for c in as_array(op.get("produces", self.spec.get("produces"))) or []
                        if isinstance(c, str)
                    ]
                    media_type = _pick_media_type(produces or ["application/json"])
                    schema = _Where(
                        _file_type(resp["schema"]),
                        found.loc.child("schema"),
                        found.root,
                        found.path,
                    )
            else:
                content = as_object(resp.get("content")) or {}
                if content:
                    media_type = _pick_media_type(list(content))
                    media = as_object(content[media_type]) or {}
                    if "schema" in media:
                        schema = _Where(
                            media["schema"],
                            found.loc.child("content", media_type, "schema"),
                            found.root,
                            found.path,
                        )
                    elif _body_kind(media_type) in ("text", "binary"):
                        schema = _Where({"type": "string"}, found.loc, found.root, found.path)
            is_output = status == chosen
            if is_output:
                if schema is not None:
                    output = self.schema(schema)
                    kind = _body_kind(media_type or "")
                    if kind == "binary" and not _is_json(media_type or ""):
                        output = StringNode(meta=Meta(loc=schema.loc), format="binary")
                    elif kind == "text" and not isinstance(output, StringNode):
                        # The schema describes the document (XML, CSV…); what arrives is its text.
                        output = StringNode(
                            meta=Meta(loc=schema.loc, description=f"The {media_type} text.")
                        )
                elif status in _NO_CONTENT:
                    output = NullNode(meta=Meta(loc=found.loc, description="No content."))
                elif media_type is None:
                    # No schema is no promise: whatever the API sends (JSON as JSON, text as a
                    # string, other content base64) is the result, not a failed output check.
                    output = AnyNode(
                        meta=Meta(loc=found.loc, description="The response, as the API sends it.")
                    )
            elif (
                schema is not None
                and _is_error_status(status)
                and _body_kind(media_type or "") == "json"
            ):
                errors.append((status, self.schema(schema)))
            declared = as_object(resp.get("headers")) or {}
            if declared:  # (a kind is listed by generate -v only where a spec has it)
                self.counts["response headers", "read"] += len(declared)
                self.counts["response headers", "emitted"] += len(declared)
            resolved = self._resolved(output) if is_output and output is not None else None
            out.append(
                HttpResponse(
                    status=status,
                    media_type=media_type,
                    is_output=is_output,
                    binary=isinstance(resolved, StringNode) and resolved.format == "binary",
                    headers=tuple(sorted({str(h).lower() for h in declared})),
                )
            )
            self.counts["responses", "emitted"] += 1
        return output, tuple(out), tuple(errors)


def _fixed_query_left(route: str, declared: set[str]) -> str:
    """``route`` without the pairs of its fixed query (an x-ms-paths key's
    ``?restype=container&comp=acl``) that a declared query parameter sends: AutoRest's specs
    declare those too (``restype``, required, ``enum: [container]``), and both went out."""
    path, mark, query = route.partition("?")
    if not mark or not declared:
        return route
    kept = [pair for pair in query.split("&") if unquote(pair.split("=", 1)[0]) not in declared]
    return path + ("?" + "&".join(kept) if kept else "")


def _property_key(name: str) -> str:
    """``name`` as a property name every provider takes: ``statuses[]`` → ``statuses``,
    ``metadata[key]`` → ``metadata_key``, ``StartTime<`` → ``StartTime_lt``; "" if nothing is
    left."""
    for mark, word in (("[]", ""), ("<=", "_lte"), (">=", "_gte"), ("<", "_lt"), (">", "_gt")):
        name = name.replace(mark, word)
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_.-]", "_", name)).strip("_")[:64]


def _looks_like_credential(name: str, where: str) -> bool:
    """Whether a parameter (or, ``where == "body"``, a request body property) is named like the
    caller's own credential (``_CREDENTIAL_NAME``, ``_BODY_CREDENTIAL_NAME``); a path parameter
    never is."""
    if where == "path":
        return False
    if where == "body":
        return _BODY_CREDENTIAL_NAME.search(name) is not None
    if _CREDENTIAL_NAME.search(name):
        return True
    return (
        where == "header"
        and _HEADER_TOKEN.search(name) is not None
        and _CURSOR_TOKEN.search(name) is None
    )


def _may_be_secret(node: SchemaNode | None) -> bool:
    """Whether a parameter's value can be a secret: a string (or a nullable one, or a value whose
    type is open or behind a ``$ref``); never a boolean, number, array or object."""
    if isinstance(node, UnionNode):
        return any(_may_be_secret(v) for v in node.variants if not isinstance(v, NullNode))
    return node is None or isinstance(node, (StringNode, AnyNode, RefNode))


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


def _is_json(media_type: str) -> bool:
    base = media_type.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json") or base == "*/*"


def _body_kind(media_type: str) -> BodyKind:
    base = media_type.split(";")[0].strip().lower()
    if _is_json(base):
        return "json"
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base.startswith("multipart/"):
        return "multipart"
    if base.startswith("text/") or base in ("application/xml", "application/sdp"):
        return "text"
    return "binary"


_CONCRETE: dict[BodyKind, str] = {
    "json": "application/json",
    "text": "text/plain",
    "binary": "application/octet-stream",
}


def _sent_media_type(media_type: str, kind: BodyKind) -> str:
    """The Content-Type a body goes out with: a range (``*/*``, ``text/*``) names none."""
    if "*" not in media_type.split(";", 1)[0]:
        return media_type
    return _CONCRETE.get(kind, media_type)


def _is_json_patch(media_type: str) -> bool:
    return media_type.split(";", 1)[0].strip().lower() == "application/json-patch+json"


def _pick_media_type(types: list[str]) -> str:
    """JSON first, then form, multipart, text; otherwise the first listed."""
    for kind in ("json", "form", "multipart", "text"):
        for t in types:
            if _body_kind(t) == kind:
                return t
    return types[0]


def _file_type(value: Any) -> Any:
    """Swagger 2.0's ``type: file`` is binary content: ``{type: string, format: binary}``."""
    obj = as_object(value)
    if obj is not None and obj.get("type") == "file":
        return {**obj, "type": "string", "format": "binary"}
    return value


def _annotate(node: SchemaNode, pobj: dict[str, Any]) -> SchemaNode:
    """A parameter's own description and deprecation on its schema node."""
    description = pobj.get("description")
    meta = node.meta
    if isinstance(description, str) and description.strip() and not meta.description:
        meta = replace(meta, description=description.strip())
    if pobj.get("deprecated") is True:
        meta = replace(meta, deprecated=True)
    if meta is node.meta:
        return node
    return replace(node, meta=meta)


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


def _reachable(tools: list[ToolSpec], defs: dict[str, Definition]) -> tuple[Definition, ...]:
    """The definitions the tools reach (in key order): the others are never generated."""
    seen: set[str] = set()
    stack: list[SchemaNode] = []
    for t in tools:
        stack.append(t.params)
        if t.output is not None:
            stack.append(t.output)
        stack.extend(node for _, node in t.errors)
    while stack:
        node = stack.pop()
        if isinstance(node, RefNode):
            if node.target not in seen and node.target in defs:
                seen.add(node.target)
                stack.append(defs[node.target].node)
            continue
        stack.extend(_children(node))
    return tuple(defs[k] for k in sorted(seen))


def _children(node: SchemaNode) -> list[SchemaNode]:
    match node:
        case ArrayNode():
            return [*node.prefix_items, *([node.items] if node.items is not None else [])]
        case ObjectNode():
            return [p.schema for p in node.properties] + (
                [node.additional] if node.additional is not None else []
            )
        case UnionNode():
            return list(node.variants)
        case AllOfNode():
            return list(node.parts)
        case CheckedNode():
            out: list[SchemaNode] = [node.base]
            for check in node.checks:
                match check:
                    case NotCheck() | PropertyNamesCheck() | ContainsCheck():
                        out.append(check.schema)
                    case ConditionalCheck():
                        out.extend(n for n in (check.if_, check.then, check.else_) if n is not None)
                    case DependentSchemasCheck():
                        out.extend(s for _, s in check.schemas)
                    case PatternPropertiesCheck():
                        out.extend(s for _, s in check.patterns)
                        if check.additional is not None:
                            out.append(check.additional)
                    case _:
                        pass
            return out
        case _:
            return []


def read(
    doc: Document,
    path: Path | None,
    diags: Diagnostics,
    select: OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
) -> SpecPackage | None:
    """Lower an OpenAPI 3.x / Swagger 2.0 document (``path`` anchors relative ``$ref``s;
    ``refs`` says which files and URLs they may read)."""
    return _Reader(doc, path, diags, refs).read(select)


__all__ = ["OperationFilter", "is_document", "read"]
