"""Kernel layer: the JSON data model's type and equality, as JSON Schema reads them. Standard
library only.

``json_type`` and ``json_equal`` are shared by the compiler (subset checks, OpenAI strict mode), the
runtime's validators (``toolbind.runtime.types``, which every generated package imports: this
module stays free of pydantic and cheap to import) and the contract tester.
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["json_equal", "json_type"]


def json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value: ``1.0`` is an ``integer`` (as ``type`` reads it),
    ``True`` a ``boolean``, never a number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0``, ``true != 1``, objects and arrays compared deeply."""
    same_type = type(a) is type(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return same_type and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        xs, ys = cast("list[Any]", a), cast("list[Any]", b)
        return len(xs) == len(ys) and all(json_equal(x, y) for x, y in zip(xs, ys, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        da, db = cast("dict[str, Any]", a), cast("dict[str, Any]", b)
        return da.keys() == db.keys() and all(json_equal(da[k], db[k]) for k in da)
    return same_type and a == b
