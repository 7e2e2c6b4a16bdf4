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
from json.encoder import encode_basestring  # the C escaper when available, as json's own
from typing import Any, cast

from toolbind.runtime.errors import ToolbindError

_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__


class _Other(ToolbindError):
    """A value this encoder leaves to ``json.dumps`` (internal: never escapes
    ``dumps_indented``; a ``ToolbindError`` as every exception class toolbind defines)."""


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
    raise _Other
