"""Compiler layer (frontends): Berkeley Function Calling Leaderboard function docs (JSON Lines).

Two shapes: question records ``{id, question, function: [...]}`` and one function per line
``{name, description, parameters, response}`` (multi-turn function docs). Parameter schemas use
Python/Java type names, mapped deliberately to JSON Schema (``normalise.schema_types.BFCL_TYPES``):

    dict, HashMap, map → object      float, double → number     long, int, short, byte → integer
    tuple, list, ArrayList → array   char, str → string         bool → boolean
    any, '' → any value              String, Array, Boolean … → lower-cased JSON type

Every record is one toolset (named by its ``id``). The same function name in several records is
one tool when the definitions agree; when they differ each is qualified with its record id
(``name@record``) so the package's Call union stays unambiguous, and a note says so.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import SourceLocation, ToolSpec, freeze
from ._common import ToolReader
from .openai import read_function


def is_record(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and "function" in obj and "id" in obj


def is_function(value: Any) -> bool:
    obj = as_object(value)
    if obj is None or "name" not in obj:
        return False
    params = as_object(obj.get("parameters"))
    return "response" in obj or (params is not None and params.get("type") == "dict")


def read(
    reader: ToolReader, values: list[Any], loc: SourceLocation, *, lines: bool = False
) -> list[ToolSpec]:
    """Lower BFCL entries (``lines``: one per line of a JSON Lines file) to tools."""
    diags = reader.diags
    found: list[tuple[ToolSpec, str]] = []  # (tool, definition text)
    for i, value in enumerate(values):
        vloc = loc.child(i)
        obj = as_object(value)
        if obj is not None and is_record(obj):
            raw_id = obj["id"]
            if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
                diags.error(
                    vloc.child("id"),
                    f"record id is {describe(raw_id)}",
                    "a string naming the record",
                )
                continue
            record_id = str(raw_id)
            functions = as_array(obj["function"])
            if functions is None:
                diags.error(
                    vloc.child("function"),
                    f"function is {describe(obj['function'])}",
                    "an array of function definitions",
                )
                continue
            names: set[str] = set()
            for j, raw_fn in enumerate(functions):
                fn = as_object(raw_fn)
                if fn is None:
                    diags.error(
                        vloc.child("function", j),
                        f"function is {describe(raw_fn)}",
                        "a function definition object",
                    )
                    continue
                tool = _function(reader, fn, vloc.child("function", j))
                if tool is None:
                    continue
                if tool.name in names:
                    diags.error(
                        tool.loc,
                        f"duplicate tool name {tool.name!r} in record {record_id!r}",
                        "names unique within a record",
                    )
                    continue
                names.add(tool.name)
                found.append(
                    (replace(tool, toolsets=(record_id,), toolset_positions=(j,)), freeze(fn))
                )
        elif obj is not None:
            tool = _function(reader, obj, vloc)
            if tool is not None:
                found.append((tool, freeze(obj)))
        else:
            diags.error(
                vloc,
                f"{'line' if lines else 'item'} {i + 1} is {describe(value)}",
                "a BFCL record {id, question, function} or a function definition object",
            )
    by_name: dict[str, list[tuple[ToolSpec, str]]] = defaultdict(list)
    for tool, text in found:
        by_name[tool.name].append((tool, text))
    out: list[ToolSpec] = []
    for name, entries in by_name.items():
        variants: dict[str, list[ToolSpec]] = {}
        for tool, text in entries:
            variants.setdefault(text, []).append(tool)
        if len(variants) == 1:
            tools = next(iter(variants.values()))
            sets = tuple(s for t in tools for s in t.toolsets)
            positions = tuple(p for t in tools for p in t.toolset_positions)
            if len(tools) > 1 and not sets:
                for dup in tools[1:]:
                    diags.error(
                        dup.loc,
                        f"duplicate tool name {name!r} (first defined at {tools[0].loc})",
                        "tool names unique within a spec",
                    )
            out.append(replace(tools[0], toolsets=sets, toolset_positions=positions))
            continue
        # Definitions outside records can't be told apart: each later one points at the first.
        first = entries[0][0]
        plain = [tool for tool, _ in entries if not tool.toolsets]
        for tool in plain:
            if tool is first and len(plain) > 1:
                continue
            where = (
                f"(first defined at {first.loc})"
                if tool is not first
                else f"(defined differently again at {entries[1][0].loc})"
            )
            diags.error(
                tool.loc,
                f"duplicate tool name {name!r} with a different definition {where}",
                "tool names unique within a spec",
                hint="rename one, or put each in its own BFCL record {id, question, function}",
            )
        for tools in variants.values():
            in_records = [t for t in tools if t.toolsets]
            if not in_records:  # reported above
                continue
            # One tool per distinct definition, member of every record that uses it.
            tool = in_records[0]
            qualified = f"{name}@{tool.toolsets[0]}"
            diags.note(
                tool.loc,
                f"tool {name!r} is defined differently in several records; this one is {qualified!r}",
            )
            sets = tuple(s for t in in_records for s in t.toolsets)
            positions = tuple(p for t in in_records for p in t.toolset_positions)
            out.append(
                replace(
                    tool,
                    name=qualified,
                    original_name=name,
                    toolsets=sets,
                    toolset_positions=positions,
                )
            )
    return out


def _function(reader: ToolReader, fn: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    tool = read_function(reader, fn, loc)
    if tool is None:
        return None
    if "response" in fn:
        tool = replace(tool, output=reader.output(fn["response"], loc.child("response")))
    return tool
