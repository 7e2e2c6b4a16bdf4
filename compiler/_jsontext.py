"""Compiler layer: ``json.dumps(value, indent=N, ensure_ascii=False)``, byte for byte, faster.

Standard library only (and the error tree's base); the backends call it.

CPython's C encoder is used only without ``indent``; with it, ``json`` encodes through a chain
of Python generators (a call per value and per container), which made writing the two JSON
files of a large spec (8 MB for the openai spec) the largest single step of rendering it. This
builds the same text by recursion over the plain JSON values a backend produces, escaping
strings with the C helper ``json`` itself uses; any other value (a non-string key, a tuple, a
subclass) is left to ``json.dumps``, so the text is always what it would give.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring  # the C escaper when available, as json's own
from typing import Any, cast

_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__


class _Other(Exception):
    """A value this encoder leaves to ``json.dumps`` (an internal signal: never escapes
    ``dumps_indented``; a plain ``Exception``, outside the public ``ToolbindError`` tree)."""


def dumps_indented(value: Any, indent: int) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``."""
    try:
        return _encode(value, "\n", " " * indent)
    except (_Other, RecursionError):
        return json.dumps(value, indent=indent, ensure_ascii=False)


def _encode(value: Any, newline: str, step: str) -> str:
    kind = cast("type[object]", type(value))
    if kind is str:
        return encode_basestring(value)
    if kind is dict:
        table = cast("dict[Any, Any]", value)
        if not table:
            return "{}"
        inner = newline + step
        parts: list[str] = []
        for key, item in table.items():
            if type(key) is not str:
                raise _Other
            parts.append(encode_basestring(key) + ": " + _encode(item, inner, step))
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    if kind is list:
        items = cast("list[Any]", value)
        if not items:
            return "[]"
        inner = newline + step
        return (
            "["
            + inner
            + ("," + inner).join([_encode(v, inner, step) for v in items])
            + newline
            + "]"
        )
    text = encode_scalar(value)
    if text is None:
        raise _Other
    return text


def encode_scalar(value: Any) -> str | None:
    """``json.dumps(value, ensure_ascii=False)`` of a string, number, boolean or null (of
    exactly those types); None for any other value."""
    kind = cast("type[object]", type(value))
    if kind is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return _INT_REPR(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return _FLOAT_REPR(value)
    return None


Path = tuple[str | int, ...]
"""Where a value sits in a JSON document: its keys and indexes from the root."""


def dumps_indented_spans(
    value: Any,
    indent: int,
    depth: int,
    wanted: Callable[[Path], bool],
    given: Mapping[Path, str] | None = None,
) -> tuple[str, dict[Path, tuple[int, int]]]:
    """``dumps_indented(value, indent)``, and where some of its values are in that text.

    The text is the same; beside it, the UTF-8 byte span ``[start, end)`` of each value down to
    ``depth`` levels whose path ``wanted`` accepts (the bytes ``json`` parses back to that value),
    so a reader can parse one value of a large file without the rest. Spans are empty when the
    text came from ``json.dumps`` (a value this encoder leaves to it).

    ``given``: the text of some values, by path, as this function wrote them before (the same
    value at the same depth: a caller vouches for that), written as they are.
    """
    step = " " * indent
    parts: list[str] = []
    spans: dict[Path, tuple[int, int]] = {}
    size = 0

    def put(text: str) -> None:
        nonlocal size
        parts.append(text)
        size += len(text) if text.isascii() else len(text.encode("utf-8"))

    def walk(node: Any, path: Path, newline: str) -> None:
        start = size
        kind = cast("type[object]", type(node))
        known = given.get(path) if given else None
        if known is not None:
            put(known)
        elif len(path) < depth and kind in (dict, list) and node:
            inner = newline + step
            if kind is dict:
                put("{")
                for n, (key, item) in enumerate(cast("dict[Any, Any]", node).items()):
                    if type(key) is not str:
                        raise _Other
                    put(("," if n else "") + inner + encode_basestring(key) + ": ")
                    walk(item, (*path, key), inner)
                put(newline + "}")
            else:
                put("[")
                for n, item in enumerate(cast("list[Any]", node)):
                    put(("," if n else "") + inner)
                    walk(item, (*path, n), inner)
                put(newline + "]")
        else:
            put(_encode(node, newline, step))
        if wanted(path):
            spans[path] = (start, size)

    try:
        walk(value, (), "\n")
    except (_Other, RecursionError):
        return json.dumps(value, indent=indent, ensure_ascii=False), {}
    return "".join(parts), spans
