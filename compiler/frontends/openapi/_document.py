"""Compiler layer (frontends/openapi): the OpenAPI Object — its paths, path items and what is
read of the document as a whole — as a ``SpecPackage``. Imports ``ir``, ``_load``,
``diagnostics``, ``normalise``, the modules of the objects it holds
(``_operations``, ``_security``, ``_servers``), ``_common``, ``_context`` and the runtime's
HTTP contract.

The paths map is read as a sequence of entries (``normalise._openapi.PathEntry``), AutoRest's
``x-ms-paths`` after it; each path key and path item goes through its normalising rules where
the reader meets it, so what the rules say comes in the order a reader of the spec meets it.
Each operation is lowered as a named part of the document (``Context.steps``, ``_steps.Steps
.part``), with its pointer and the places it reads.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from toolbind.contract import HttpApi, HttpOperation

from ..._load import as_object
from ...diagnostics import describe
from ...ir import (
    AllOfNode,
    ArrayNode,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    Definition,
    DependentSchemasCheck,
    NotCheck,
    ObjectNode,
    PatternPropertiesCheck,
    PropertyNamesCheck,
    RefNode,
    SchemaNode,
    SpecPackage,
    ToolSpec,
    UnionNode,
)
from ...normalise import openapi_azure, openapi_paths, openapi_refs, openapi_swagger2
from ...normalise._openapi import PathEntry, RefSiblings
from ._common import METHODS, OperationFilter, Where
from ._context import Context
from ._operations import operation
from ._security import credential_parameters, security, security_schemes
from ._servers import servers

# The fields each object may hold, per version; anything else (but ``x-`` extensions) is a field
# toolbind would ignore, so it is reported rather than passed over in silence.
DOC_FIELDS = {
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
ITEM_FIELDS = {
    "swagger": frozenset({"$ref", "parameters", *METHODS}),  # trace too: read, as real specs use it
    "openapi": frozenset({"$ref", "summary", "description", "servers", "parameters", *METHODS}),
}
OPERATION_FIELDS = {
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


class _Made:
    """The tools made so far and their HTTP operations, by tool name."""

    def __init__(self) -> None:
        self.tools: list[ToolSpec] = []
        self.operations: dict[str, HttpOperation] = {}


def read(ctx: Context, select: OperationFilter | None) -> SpecPackage | None:
    """The document as a package: a tool per operation (those ``select`` keeps), the
    definitions they reach and the HTTP API (None: the paths cannot be read, said)."""
    ctx.fields(ctx.spec, ctx.top, "document", DOC_FIELDS)
    paths_at = _paths(ctx)
    if paths_at is None:
        return None
    webhooks = as_object(ctx.spec.get("webhooks"))
    if webhooks:
        ctx.diags.note(
            ctx.top.child("webhooks"),
            f"{len(webhooks)} webhook(s) skipped: webhooks are requests the API sends, not "
            "operations a tool can call",
        )
    maps = {paths_at.loc: paths_at}
    entries = tuple(
        PathEntry(route=route, item=raw_item, in_map=paths_at.loc)
        for route, raw_item in paths_at.value.items()
    )
    if as_object(ctx.spec.get("x-ms-paths")) is not None:
        ctx.extensions.pop("x-ms-paths", None)  # read as paths (``openapi_azure``)
        entries = ctx.normalise(openapi_azure.RULES, entries, ctx.top)
        ms_at = ctx.top.child("x-ms-paths")
        maps[ms_at] = Where(ctx.spec["x-ms-paths"], ms_at, ctx.spec, ctx.path)
    made = _Made()
    for entry in entries:
        _path_item(ctx, entry, maps[entry.in_map], select, made)
    return _package(ctx, made, select)


def _paths(ctx: Context) -> Where | None:
    """The paths map, where it is (followed when it is one ``$ref``; None: no map, said)."""
    paths_at = Where(ctx.spec.get("paths", {}), ctx.top.child("paths"), ctx.spec, ctx.path)
    ctx.normalise((openapi_refs.PATHS_REF,), paths_at.value, paths_at.loc)
    if "$ref" in (as_object(paths_at.value) or {}):
        paths_at = ctx.deref(paths_at, "paths") or Where({}, paths_at.loc, ctx.spec, ctx.path)
    raw_paths: Any = paths_at.value
    paths = as_object(raw_paths)
    if paths is None:
        ctx.diags.error(
            paths_at.loc,
            f"paths is {describe(raw_paths)}",
            "an object mapping paths to path items",
        )
        return None
    return paths_at


def _path_item(
    ctx: Context, entry: PathEntry, in_map: Where, select: OperationFilter | None, made: _Made
) -> None:
    """The operations of one path item."""
    iloc = in_map.loc.child(entry.route)
    if entry.route.startswith("x-"):
        return
    raw_item = entry.item
    item = ctx.deref(Where(raw_item, iloc, in_map.root, in_map.path), "path item")
    if item is None:
        return
    item_obj = as_object(item.value)
    if item_obj is None:
        # (no rule: broken input, said and skipped)
        ctx.diags.warning(iloc, f"path item is {describe(item.value)}", "an object; skipped")
        return
    ctx.fields(item_obj, item.loc, "path item", ITEM_FIELDS)
    # A path item's $ref may have fields beside it (OpenAPI's Path Item Object has $ref as a
    # field): ``/pets/{id}: {$ref: pets.yaml, delete: ...}``. The referenced item replaced
    # them, and their operations were lost without a word. Both are read, each with its own
    # document's $refs; a field in both is the local one's (``openapi_refs``).
    parts: tuple[Where, ...] = (item,)
    raw_obj = as_object(raw_item) or {}
    beside = {k: v for k, v in raw_obj.items() if k != "$ref"}
    if "$ref" in raw_obj and beside and item.value is not raw_item:
        ctx.fields(beside, iloc, "path item", ITEM_FIELDS)
        both = RefSiblings(beside=beside, referenced=item_obj)
        ctx.normalise((openapi_refs.PATH_ITEM_SIBLINGS,), both, iloc)
        parts = (item, Where(beside, iloc, in_map.root, in_map.path))
    route: str = ctx.normalise(openapi_paths.RULES, entry.route, iloc)
    methods = {m: part for part in parts for m in as_object(part.value) or {}}
    for method, holder in methods.items():
        if method in METHODS:
            _operation(ctx, route, method, holder, parts, select, made)


def _operation(
    ctx: Context,
    route: str,
    method: str,
    holder: Where,
    parts: tuple[Where, ...],
    select: OperationFilter | None,
    made: _Made,
) -> None:
    """One operation of a path item (``holder``: the part it is written in), lowered through
    the reader's steps."""
    raw_op = holder.value[method]
    ctx.counts["operations", "read"] += 1
    # Split specs put whole operations in other files (``get: {$ref: ops/x.yaml}``): followed
    # like any $ref, and the operation's own $refs are relative to its file.
    at = Where(raw_op, holder.loc.child(method), holder.root, holder.path)
    read = ctx.deref_object(at, "operation")
    if read is None:
        ctx.counts["operations", "reported"] += 1
        return
    found, op = read
    oloc = found.loc
    ctx.fields(op, oloc, "operation", OPERATION_FIELDS)
    callbacks = as_object(op.get("callbacks"))
    if callbacks:
        ctx.diags.note(
            oloc.child("callbacks"),
            f"{len(callbacks)} callback(s) skipped: callbacks are requests the API "
            "sends, not operations a tool can call",
        )
    op = ctx.normalise((openapi_swagger2.MEDIA_TYPES,), op, oloc)
    lower = partial(operation, ctx, route, method, parts, op, oloc, select, found)
    # what it reads besides the $refs it follows: its path item's parameters and servers and
    # itself (None: an operation or path item of another document)
    item = parts[0]
    mine = len(parts) == 1 and item.root is ctx.spec and found.root is ctx.spec
    at = item.loc.pointer
    reads = [f"{at}/parameters", f"{at}/servers", oloc.pointer] if mine else None
    built = ctx.steps.part(ctx, oloc.pointer, reads, lower)
    if built is None:
        ctx.counts["operations", "filtered"] += 1
    else:
        ctx.counts["operations", "emitted"] += 1
        tool, http = built
        made.tools.append(tool)
        made.operations[tool.name] = http


def _package(ctx: Context, made: _Made, select: OperationFilter | None) -> SpecPackage:
    """What was made, the notes on it, and the document's servers and security."""
    tools = made.tools
    api_servers = servers(ctx, ctx.spec, ctx.top)  # (first: its rules read extensions)
    if ctx.extensions:
        first = next(iter(ctx.extensions.values()))[0]
        ctx.diags.note(
            first,
            f"{sum(map(len, ctx.extensions.values()))} extension field(s) ignored "
            f"({', '.join(sorted(ctx.extensions))}): toolbind reads no x- extension of the "
            "document, its path items or operations",
        )
    ctx.lowerer.report_extensions()
    ctx.diags.note(ctx.top, "read → emitted: " + ctx.summary())
    if not tools and not ctx.diags.has_errors:
        # (no rule: what the whole spec comes to, said about canonical input)
        ctx.diags.warning(
            ctx.top.child("paths"),
            "the spec has no operations" + (" matching the filter" if select else ""),
            "at least one operation",
        )
    definitions = _reachable(tools, ctx.lowerer.definitions)
    requirements = security(ctx, ctx.spec.get("security"), ctx.top.child("security")) or ()
    api = HttpApi(
        title=str((as_object(ctx.spec.get("info")) or {}).get("title") or ctx.doc.path),
        servers=api_servers,
        security_schemes=security_schemes(ctx),
        security=requirements,
        operations=made.operations,
    )
    credential_parameters(ctx, api, tools)
    return SpecPackage(
        source=ctx.doc.path,
        # (no rule: the package names the version it was read from)
        format="swagger2" if ctx.swagger else "openapi31" if ctx.v31 else "openapi30",
        tools=tuple(tools),
        definitions=definitions,
        http=api,
    )


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
