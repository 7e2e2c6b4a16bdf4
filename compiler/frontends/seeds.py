"""Compiler layer (frontends): the seeds' Tool schema (tool-system.md, agent-tool-rfc.md).

A tool is a JSON Schema object whose non-underscore properties are its parameters and whose
meta properties are ``_tool`` (``const`` name), ``_output`` (output schema) and optionally
``_activity`` (``const`` activity name). A file holds one tool, a list of tools, or a map
name → schema (``Tool.register(name, schema)``), where ``_tool`` may be left out.
"""

from __future__ import annotations

from typing import Any

from toolbind.contract import (
    APPROVAL_KEY,
    CALL_EXTENSIONS,
    META_FIELDS,
    OUTPUT_METHODS,
    parse_expression,
)
from toolbind.errors import InvalidReference

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import SchemaNode, SourceLocation, ToolSpec
from ._common import ToolReader


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    props = as_object(obj.get("properties")) if obj is not None else None
    return props is not None and "_tool" in props


# Keys of a name → schema map that hold shared material rather than a tool.
MAP_RESERVED_KEYS = frozenset({"$defs", "definitions", "$schema", "$id", "$comment"})


def is_schema_map(value: Any) -> bool:
    obj = as_object(value)
    if obj is None:
        return False
    entries = [v for k, v in obj.items() if k not in MAP_RESERVED_KEYS]
    return bool(entries) and all(_is_object_schema(v) for v in entries)


REQUEST_KEYS = frozenset({"context", "schema", "description", "title"})


def is_saved_request(value: Any) -> bool:
    """A saved Request (what a ``_delegate`` names, run as a new request): ``{context: [...],
    schema}`` whose context holds ``{type: tool, tool: {name: schema}}`` items."""
    obj = as_object(value)
    items = as_array(obj.get("context")) if obj is not None else None
    if obj is None or items is None or not set(obj) <= REQUEST_KEYS:
        return False
    return any(_tool_item(item) is not None for item in items)


def _tool_item(item: Any) -> dict[str, Any] | None:
    obj = as_object(item)
    return as_object(obj.get("tool")) if obj is not None and obj.get("type") == "tool" else None


def request_tools(value: dict[str, Any]) -> list[tuple[int, str, Any]]:
    """(index in ``context``, name, schema) of each tool a saved Request declares."""
    out: list[tuple[int, str, Any]] = []
    for index, item in enumerate(as_array(value.get("context")) or []):
        declared = _tool_item(item)
        for name, schema in (declared or {}).items():
            out.append((index, name, schema))
    return out


def _is_object_schema(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and ("properties" in obj or obj.get("type") == "object")


def read_tool(
    reader: ToolReader, schema: dict[str, Any], loc: SourceLocation, key: str | None = None
) -> ToolSpec | None:
    diags = reader.diags
    props_raw = schema.get("properties", {})
    props = as_object(props_raw)
    if props is None:
        diags.error(
            loc.child("properties"),
            f"properties is {describe(props_raw)}",
            "an object mapping names to schemas",
        )
        return None
    meta: dict[str, Any] = {k: v for k, v in props.items() if k.startswith("_")}
    for unknown in sorted(set(meta) - set(META_FIELDS)):
        diags.error(
            loc.child("properties", unknown),
            f"unknown meta field {unknown!r}",
            f"one of {', '.join(META_FIELDS)}",
            hint="parameters must not start with '_'; meta fields are reserved for the system",
        )
    # a meta field beside ``properties`` is read by nothing (it would reach a model as an unknown
    # keyword): the seeds declare meta fields as properties
    for misplaced in sorted(k for k in schema if k in META_FIELDS):
        diags.error(
            loc.child(misplaced),
            f"meta field {misplaced!r} beside 'properties'",
            f"{misplaced} under properties",
            hint=f"move it to properties.{misplaced}, as the seeds declare meta fields",
        )
    name: str | None = key
    if "_tool" in meta:
        tool_schema = meta["_tool"]
        tool_obj = as_object(tool_schema)
        const = tool_obj.get("const") if tool_obj is not None else None
        if not isinstance(const, str):
            if tool_obj is None:
                where, found = loc.child("properties", "_tool"), f"_tool is {describe(tool_schema)}"
            elif "const" not in tool_obj:
                where, found = loc.child("properties", "_tool"), "_tool has no 'const'"
            else:
                where = loc.child("properties", "_tool", "const")
                found = f"_tool const is {describe(const)}"
            diags.error(
                where,
                found,
                "{type: string, const: <tool name>}",
                hint="the const of _tool is the tool's name on the wire",
            )
            return None
        if key is not None and const != key:
            diags.error(
                loc.child("properties", "_tool", "const"),
                f"_tool const {const!r} differs from the registered name {key!r}",
                "the same name in both places",
            )
            return None
        name = const
    if name is None:
        diags.error(
            loc.child("properties"),
            "no _tool property",
            "_tool: {type: string, const: <tool name>}",
        )
        return None
    name = reader.name(name, loc.child("properties", "_tool", "const") if "_tool" in meta else loc)
    if name is None:
        return None
    activity: str | None = None
    if "_activity" in meta:
        act = meta["_activity"]
        act_obj = as_object(act)
        value = act_obj.get("const", act_obj.get("default")) if act_obj is not None else act
        if not isinstance(value, str):
            where, found = loc.child("properties", "_activity"), f"_activity is {describe(act)}"
            if act_obj is not None:
                keyword = "const" if "const" in act_obj else "default"
                if keyword in act_obj:
                    where = loc.child("properties", "_activity", keyword)
                    found = f"_activity {keyword} is {describe(value)}"
                else:
                    found = "_activity has no 'const'"
            diags.error(where, found, "{type: string, const: <activity name>}")
        else:
            activity = value
    output = (
        reader.output(
            meta.get("_output"), loc.child("properties", "_output"), resource=(schema, loc)
        )
        if "_output" in meta
        else None
    )
    required = as_array(schema.get("required", []))
    extensions = _extensions(reader, meta, loc, schema)
    listed = {r for r in required or [] if isinstance(r, str)}
    approval = schema.get(APPROVAL_KEY, False)
    if not isinstance(approval, bool):
        diags.error(loc.child(APPROVAL_KEY), f"{APPROVAL_KEY} is {describe(approval)}", "a boolean")
        approval = False
    params_schema = {
        k: v for k, v in schema.items() if k not in ("description", "title", APPROVAL_KEY)
    }
    params_schema["properties"] = {k: v for k, v in props.items() if not k.startswith("_")}
    if required is not None:
        params_schema["required"] = [
            r for r in required if not (isinstance(r, str) and r.startswith("_"))
        ]
    # local $refs in the tool are relative to the Tool schema as written, meta fields included
    params = reader.params(params_schema, loc, resource=(schema, loc))
    return ToolSpec(
        name=name,
        loc=loc,
        params=params,
        output=output,
        description=reader.text(schema.get("description"), loc.child("description"), "description"),
        title=reader.text(schema.get("title"), loc.child("title"), "title"),
        activity=activity,
        extensions=extensions,
        extensions_required=tuple(n for n, _ in extensions if n in listed),
        requires_approval=approval,
    )


def _extensions(
    reader: ToolReader, meta: dict[str, Any], loc: SourceLocation, schema: dict[str, Any]
) -> tuple[tuple[str, SchemaNode], ...]:
    """The RFC's Call extensions the tool declares (``_outputPath``, ``_outputMethod``,
    ``_instance``, ``_delegate``, ``_scopes``), lowered like any schema; a prescribed
    ``_outputPath`` must be a variable reference (``†<kind>.<path>``), an ``_outputMethod`` one
    of the output methods (set, merge, …) and ``_scopes`` a list of the context kinds or paths a
    call may see."""
    out: list[tuple[str, SchemaNode]] = []
    for name in CALL_EXTENSIONS:
        if name not in meta:
            continue
        where = loc.child("properties", name)
        raw = as_object(meta[name])
        if raw is not None:
            for keyword in ("const", "enum", "default"):
                if keyword not in raw:
                    continue
                values: Any = raw[keyword] if keyword == "enum" else [raw[keyword]]
                listed: list[Any] = as_array(values) or []
                for i, value in enumerate(listed):
                    at = where.child(keyword, i) if keyword == "enum" else where.child(keyword)
                    problem = _extension_value(name, value)
                    if problem is not None:
                        reader.diags.error(at, problem[0], problem[1])
        node = reader.output(meta[name], where, resource=(schema, loc))
        if node is not None:
            out.append((name, node))
    return tuple(out)


def _extension_value(name: str, value: Any) -> tuple[str, str] | None:
    """(what was found, what was expected) when ``value`` cannot be ``name``'s value."""
    if name == "_outputMethod":
        if value not in OUTPUT_METHODS:
            return f"_outputMethod {describe(value)}", f"one of {', '.join(OUTPUT_METHODS)}"
        return None
    if name == "_scopes":
        return _scopes_value(value)
    if not isinstance(value, str):
        return f"{name} {describe(value)}", "a string"
    if name == "_outputPath":
        try:
            parse_expression(value)
        except InvalidReference as exc:
            return str(exc), "a reference †<kind>.<path> (or several joined by || or &&)"
    return None


def _scopes_value(value: Any) -> tuple[str, str] | None:
    """``_scopes``: an allow-list of the parent context a call sees — kinds
    (``state``, ``input``, ``data``) or paths in them (``state.user``, ``†state.user``)."""
    expected = 'a list of context kinds or paths (e.g. ["state", "input.user"])'
    items = as_array(value)
    if items is None:
        return f"_scopes {describe(value)}", expected
    for item in items:
        text = item.removeprefix("†") if isinstance(item, str) else None
        if not text or any(not part or part != part.strip() for part in text.split(".")):
            return f"_scopes item {describe(item)}", expected
    return None
