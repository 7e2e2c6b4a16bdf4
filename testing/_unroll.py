"""Testing layer: recursive ``$defs`` unrolled to a bounded depth, for instance generation.

Imports nothing of toolbind. hypothesis-jsonschema inlines every ``$ref`` before it builds a
strategy, so a ``$def`` that reaches itself (a filter of filters, a tree, a JSON-like value) makes it
give up. ``unroll`` inlines such definitions a few levels deep and replaces a reference one level
deeper than that with ``false``: an optional property is then absent there, an ``anyOf`` branch or
an array item impossible, so the nesting stops where the schema offers another way. The result
accepts a subset of what the schema accepts wherever ``$ref``s are not negated (``not``, ``if``);
``_strategies.json_instances`` still validates every instance drawn from it against the real schema.

Only references of the form ``#/$defs/Name`` (or ``#/definitions/Name``) are followed; a
definition that reaches no recursion stays a ``$ref`` (hypothesis-jsonschema resolves those).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast
from urllib.parse import unquote

_DEF_KEYWORDS = ("$defs", "definitions")
# keywords whose value is JSON data, never a schema
_DATA_KEYWORDS = frozenset(("const", "enum", "default", "examples", "required", "type"))
# keywords whose value maps names to schemas
_MAP_KEYWORDS = frozenset(
    ("properties", "patternProperties", "dependentSchemas", "dependencies", *_DEF_KEYWORDS)
)
MAX_NODES = 20_000  # schema objects an unrolling may have (else a smaller depth is tried)
DEPTHS = (3, 2, 1)  # how many times one recursive definition may be nested in itself


class _TooBig(Exception):
    """An internal signal: the unrolled schema outgrew its limit (caught here, never raised
    further; a plain ``Exception``, outside the public ``ToolbindError`` tree)."""


def def_name(ref: object) -> str | None:
    """``$defs/Name`` for a ``#/$defs/Name`` (or ``#/definitions/Name``) reference, else None."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    parts = unquote(ref[2:]).split("/")
    if len(parts) != 2 or parts[0] not in _DEF_KEYWORDS:
        return None
    return f"{parts[0]}/{parts[1].replace('~1', '/').replace('~0', '~')}"


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for keyword in _DEF_KEYWORDS:
        defs = schema.get(keyword)
        if isinstance(defs, dict):
            for name, body in cast("dict[str, Any]", defs).items():
                out[f"{keyword}/{name}"] = body
    return out


def _subschemas(node: dict[str, Any]) -> Iterator[Any]:
    for key, value in node.items():
        if key in _DATA_KEYWORDS or key in _DEF_KEYWORDS:
            continue
        if key in _MAP_KEYWORDS and isinstance(value, dict):
            yield from cast("dict[str, Any]", value).values()
        elif isinstance(value, list):
            yield from cast("list[Any]", value)
        else:
            yield value


def _refs(schema: Any, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        node = cast("dict[str, Any]", schema)
        name = def_name(node.get("$ref"))
        if name is not None:
            found.add(name)
        for sub in _subschemas(node):
            _refs(sub, found)
    return found


def recursive_defs(schema: object) -> list[str]:
    """The definitions (``$defs/Name``) that reach themselves through ``$ref``s and that the
    root of ``schema`` reaches: what hypothesis-jsonschema cannot inline."""
    if not isinstance(schema, dict):
        return []
    node = cast("dict[str, Any]", schema)
    defs = _definitions(node)
    edges = {name: _refs(body, set()) & defs.keys() for name, body in defs.items()}
    root = {k: v for k, v in node.items() if k not in _DEF_KEYWORDS}
    used = _reachable(edges, _refs(root, set()) & defs.keys())
    return sorted(name for name in used if name in _reachable(edges, edges[name]))


def _reachable(edges: dict[str, set[str]], start: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def unroll(
    schema: dict[str, Any], depth: int, max_nodes: int | None = None
) -> dict[str, Any] | None:
    """``schema`` with its recursive definitions inlined ``depth`` levels deep and cut below.

    None when ``schema`` has no recursive definition, or the unrolling has more than
    ``max_nodes`` (default ``MAX_NODES``) schema objects.
    """
    limit = MAX_NODES if max_nodes is None else max_nodes
    recursive = set(recursive_defs(schema))
    if not recursive:
        return None
    defs = _definitions(schema)
    edges = {name: _refs(body, set()) & defs.keys() for name, body in defs.items()}
    # a definition that reaches a recursive one is inlined too (its $ref would recurse)
    inlined = {n for n in defs if n in recursive or _reachable(edges, edges[n]) & recursive}
    size = [0]

    def expand(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(v, stack) for v in cast("list[Any]", node)]
        if not isinstance(node, dict):
            return node
        size[0] += 1
        if size[0] > limit:
            raise _TooBig
        source = cast("dict[str, Any]", node)
        out: dict[str, Any] = {}
        for key, value in source.items():
            if key in _DATA_KEYWORDS or key in _DEF_KEYWORDS or key == "$ref":
                out[key] = value
            elif key in _MAP_KEYWORDS and isinstance(value, dict):
                out[key] = {k: expand(v, stack) for k, v in cast("dict[str, Any]", value).items()}
            else:
                out[key] = expand(value, stack)
        name = def_name(source.get("$ref"))
        if name is None or name not in inlined:
            return out
        del out["$ref"]
        body: Any
        if name in recursive and stack.count(name) >= depth:
            body = False
        else:
            body = expand(defs[name], (*stack, name))
        if not out:
            return body
        out["allOf"] = [*cast("list[Any]", out.get("allOf", [])), body]
        return out

    root = {k: v for k, v in schema.items() if k not in _DEF_KEYWORDS}
    try:
        result = cast("dict[str, Any]", expand(root, ()))
    except _TooBig:
        return None
    for keyword in _DEF_KEYWORDS:
        kept = {
            name: body
            for name, body in cast("dict[str, Any]", schema.get(keyword) or {}).items()
            if f"{keyword}/{name}" not in inlined
        }
        if kept:
            result[keyword] = kept
    return result


def unrolled(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The deepest of the ``DEPTHS`` unrollings of ``schema`` that is small enough, else None."""
    for depth in DEPTHS:
        found = unroll(schema, depth)
        if found is not None:
            return found
    return None
