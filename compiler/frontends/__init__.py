"""Compiler layer (frontends): detect a spec's format and lower it to a ``SpecPackage``.

Imports ``ir``, ``diagnostics``, ``_load``, ``_steps`` and the format modules beside it; never
a backend.

Detection looks at the shape of the document (see ``FORMATS`` for what each format looks like);
a shape that matches none is a located error that lists the formats expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from toolbind.contract import TOOLBIND_EXTENSIONS

from .._load import (
    NO_EXTRA_REFS,
    Document,
    RefPolicy,
    as_array,
    as_object,
    collecting_warnings,
    load_document,
    not_a_regular_file,
    record_live,
)
from .._steps import DIRECT, Steps
from ..diagnostics import Diagnostics, describe
from ..ir import SourceLocation, SpecPackage, ToolSpec
from . import agentb, bfcl, gateway, mcp, openai, openapi, seeds
from ._common import ToolReader, check_duplicates
from ._jsonschema import Dialect, SchemaLowerer

FORMATS = (
    "a seeds Tool schema ({type: object, properties: {_tool: {const: <name>}, ...}}), a list of "
    "them, or a map name → schema",
    "OpenAI tools ([{type: function, function: {name, parameters}}]) or functions ([{name, parameters}])",
    "MCP tools/list ({tools: [{name, inputSchema}]}) or MCP tools",
    "AgentB tool definitions ([{name, parameters: [{name, type, required}]}])",
    "gateway tool configurations ([{name, inputSchema, executionType, execution}])",
    "BFCL function docs (JSON Lines of {id, question, function} or {name, parameters})",
    "an OpenAPI 3.x or Swagger 2.0 document ({openapi: 3.x, paths: {...}})",
    "a saved Request ({context: [{type: tool, tool: {name: schema}}, ...], schema})",
)

_Reader = Callable[[ToolReader, dict[str, Any], SourceLocation], ToolSpec | None]


# How the errors of a document that is no spec of any format begin (``NOT_A_SPEC``: the driver
# reads a file of a split spec that another spec ``$ref``s as a part, not as a spec).
_NO_VERSION = "an OpenAPI document without openapi or swagger"
_UNRECOGNISED = "unrecognised tool definition"
_NO_TOOLS = "the document holds no tools"
NOT_A_SPEC = (_NO_VERSION, _UNRECOGNISED, _NO_TOOLS)
# Top-level keys that only an OpenAPI document has (one without its version field is said so).
_OPENAPI_KEYS = frozenset({"paths", "components", "definitions", "info"})


def _tool_format(value: Any) -> tuple[str, _Reader] | None:
    """The format of a single tool object, most specific first."""
    if seeds.is_tool(value):
        return "seeds", lambda r, v, loc: seeds.read_tool(r, v, loc)
    if openai.is_tool(value):
        return "openai", openai.read_tool
    if gateway.is_tool(value):
        return "gateway", gateway.read_tool
    if mcp.is_tool(value):
        return "mcp", mcp.read_tool
    if agentb.is_tool(value):
        return "agentb", agentb.read_tool
    if openai.is_function(value):
        return "openai", openai.read_function
    return None


def read_spec(
    path: Path,
    shown: str,
    diags: Diagnostics,
    select: openapi.OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    steps: Steps = DIRECT,
) -> SpecPackage | None:
    """Load and lower the spec file at ``path`` (shown in diagnostics as ``shown``).

    ``select`` keeps only some operations of an OpenAPI document (other formats ignore it);
    ``refs`` says where ``$ref``s may lead beyond the spec's directory; ``steps``: how the
    costly parts of reading are run (``_steps``: an OpenAPI document's operations).
    """
    with collecting_warnings() as assumed:  # of this document and of those its $refs read
        try:
            return _read_spec(path, shown, diags, select, refs, steps)
        finally:
            for warning in assumed.values():
                diags.add(warning)


def _read_spec(
    path: Path,
    shown: str,
    diags: Diagnostics,
    select: openapi.OperationFilter | None,
    refs: RefPolicy,
    steps: Steps,
) -> SpecPackage | None:
    # OpenAPI is JSON: an unquoted YAML date (typically in an example) means its text.
    doc = load_document(path, shown, dates_as_text=_looks_like_openapi(path), steps=steps)
    if not isinstance(doc, Document):
        diags.add(doc)
        return None
    try:
        return read_document(doc, path, diags, select, refs, steps)
    except RecursionError:
        # ``_load`` bounds a document's nesting and the lowerer a schema's, so this takes a
        # spec built to defeat both (e.g. $refs across files); it is still the spec's fault.
        diags.error(
            SourceLocation(file=doc.path),
            "the spec nests schemas too deeply to compile",
            "schemas nested at most a few hundred levels deep",
        )
        return None


_OPENAPI_HEAD = re.compile(rb"""^\s*["']?(openapi|swagger)["']?\s*:""", re.MULTILINE)


def _looks_like_openapi(path: Path) -> bool:
    """Whether the file's first lines declare an OpenAPI/Swagger version (cheap, before parsing)."""
    if not_a_regular_file(path) is not None:  # a named pipe could block: load_document says why
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return _OPENAPI_HEAD.search(head) is not None


def read_document(
    doc: Document,
    path: Path | None,
    diags: Diagnostics,
    select: openapi.OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    steps: Steps = DIRECT,
) -> SpecPackage | None:
    """Lower an already parsed document; ``path`` anchors relative ``$ref``s (None: none allowed).

    ``$ref``s may read files in ``path``'s directory and below, and what ``refs`` allows.
    """
    loc = SourceLocation(file=doc.path)
    if path is not None:
        refs = refs.with_dir(path.parent)
    value: Any = doc.value
    if openapi.is_document(value):
        return openapi.read(doc, path, diags, select, refs, steps)
    if mcp.is_config(value):  # a live server's tools, listed now
        # what they list can change with the config unchanged (a server upgraded): never reused
        record_live(f"{doc.path}#/mcp/servers")
        readers: list[ToolReader] = []

        def make(root: Any) -> ToolReader:
            readers.append(_reader(doc, path, diags, "jsonschema", refs, steps, root))
            return readers[-1]

        read = mcp.read_config(doc.path, value, diags, make)
        if read is None or not readers:
            return None
        tools, source = read
        for other in readers[1:]:
            other.lowerer.report_extensions(TOOLBIND_EXTENSIONS)
        package = _package(doc, "mcp", tools, readers[0], diags)
        return replace(package, mcp=source) if package is not None else None
    if seeds.is_saved_request(value):  # a delegate's saved Request (014): its tool items
        reader = _reader(doc, path, diags, "jsonschema", refs, steps)
        found: list[ToolSpec | None] = []
        for i, key, schema in seeds.request_tools(value):
            where = loc.child("context", i, "tool", key)
            if as_object(schema) is None:
                diags.error(where, f"tool {key!r} is {describe(schema)}", "its JSON Schema")
                continue
            found.append(seeds.read_tool(reader, schema, where, key=key))
        return _package(doc, "seeds", [t for t in found if t is not None], reader, diags)
    # Unwrap containers: a JSON-RPC response, a tools/list result, {"tools": [...]}.
    top = as_object(value)
    result = as_object(top.get("result")) if top is not None else None
    if result is not None and "tools" in result:
        value, loc = result, loc.child("result")
    container = as_object(value)
    if container is not None and as_array(container.get("tools")) is not None:
        value, loc = container["tools"], loc.child("tools")
    elif (
        container is not None
        and "tools" in container
        and not _tool_format(container)
        and not seeds.is_schema_map(container)
    ):
        diags.error(
            loc.child("tools"),
            f"tools is {describe(container['tools'])}",
            "an array of tool definitions",
        )
        return None
    array = as_array(value)
    items: list[Any] = array if array is not None else [value]
    if (
        doc.lines
        or any(bfcl.is_record(v) for v in items)
        or (items and all(bfcl.is_function(v) for v in items))
    ):
        reader = _reader(doc, path, diags, "bfcl", refs, steps)
        tools = bfcl.read(reader, items, loc, lines=doc.lines)
        return _package(doc, "bfcl", tools, reader, diags)
    schema_map = as_object(value)
    if schema_map is not None and not _tool_format(schema_map) and seeds.is_schema_map(schema_map):
        reader = _reader(doc, path, diags, "jsonschema", refs, steps)
        found = [
            seeds.read_tool(reader, schema, loc.child(key), key=key)
            for key, schema in schema_map.items()
            if key not in seeds.MAP_RESERVED_KEYS
        ]
        return _package(doc, "seeds", [t for t in found if t is not None], reader, diags)
    if not items:
        # under {"tools": [...]} the format is plain; otherwise say which shapes are read
        expected = (
            "at least one tool definition"
            if loc.pointer.endswith("/tools")
            else "at least one tool in one of: " + "; ".join(FORMATS)
        )
        diags.error(loc, _NO_TOOLS, expected)
        return None
    reader = _reader(doc, path, diags, "jsonschema", refs, steps)
    tools: list[ToolSpec] = []
    formats: list[str] = []
    for i, item in enumerate(items):
        iloc = loc.child(i) if array is not None else loc
        fmt = _tool_format(item)
        if fmt is None:
            openapi_keys = sorted((as_object(item) or {}).keys() & _OPENAPI_KEYS)
            if array is None and openapi_keys:
                # (a file of a split OpenAPI spec, or a spec without its version field)
                diags.error(
                    iloc,
                    f"{_NO_VERSION} (it has {', '.join(openapi_keys)})",
                    "openapi: 3.x.y or swagger: '2.0' at the top; a file that only holds parts of "
                    "a split spec is compiled through the spec that $refs it",
                )
                continue
            diags.error(
                iloc,
                f"{_UNRECOGNISED} ({_shape(item)})",
                "one of: " + "; ".join(FORMATS),
            )
            continue
        name, read = fmt
        formats.append(name)
        tool = read(reader, item, iloc)
        if tool is not None:
            tools.append(tool)
    kinds = sorted(set(formats))
    return _package(doc, "+".join(kinds) or "unknown", tools, reader, diags)


def _reader(
    doc: Document,
    path: Path | None,
    diags: Diagnostics,
    dialect: Dialect,
    refs: RefPolicy,
    steps: Steps,
    root: Any = None,
) -> ToolReader:
    # a tool's x- keys annotate it for other tools: never sent to a model, reported in _package
    lowerer = SchemaLowerer(
        diags=diags,
        dialect=dialect,
        allow_remote_files=path is not None,
        refs=refs,
        drop_extensions=True,
        load=partial(load_document, steps=steps),
    )
    return ToolReader(
        diags=diags, lowerer=lowerer, root=doc.value if root is None else root, path=path
    )


def _package(
    doc: Document, fmt: str, tools: list[ToolSpec], reader: ToolReader, diags: Diagnostics
) -> SpecPackage | None:
    tools = check_duplicates(tools, diags)
    reader.lowerer.report_extensions(TOOLBIND_EXTENSIONS)
    if not tools and not diags.has_errors and not reader.left_out:
        diags.error(SourceLocation(file=doc.path), _NO_TOOLS, "at least one tool")
    return SpecPackage(
        source=doc.path,
        format=fmt,
        tools=tuple(tools),
        definitions=reader.lowerer.sorted_definitions(),
    )


def _shape(value: Any) -> str:
    obj = as_object(value)
    if obj is not None:
        keys = sorted(str(k) for k in obj)[:6]
        return "an object with keys " + ", ".join(keys) if keys else "an empty object"
    return describe(value)
