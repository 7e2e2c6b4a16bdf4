"""Compiler layer (frontends): OpenAI tool lists.

``{"type": "function", "function": {name, description, parameters, strict}}`` and bare function
objects ``{name, description, parameters}`` (the legacy ``functions`` form).
"""

from __future__ import annotations

from typing import Any

from .._load import as_object
from ..diagnostics import describe
from ..ir import SourceLocation, ToolSpec
from ._common import ToolReader


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and obj.get("type") == "function" and "function" in obj


def is_function(value: Any) -> bool:
    obj = as_object(value)
    return (
        obj is not None
        and "name" in obj
        and as_object(obj.get("parameters", {})) is not None
        and "inputSchema" not in obj
    )


def read_tool(reader: ToolReader, value: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    fn = as_object(value["function"])
    if fn is None:
        reader.diags.error(
            loc.child("function"),
            f"function is {describe(value['function'])}",
            "an object with name, description, parameters",
        )
        return None
    return read_function(reader, fn, loc.child("function"))


# What a function definition (OpenAI's, BFCL's) holds; anything else is read and not used.
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict", "response"})


def read_function(reader: ToolReader, fn: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    name = reader.name(fn.get("name"), loc.child("name"))
    if name is None:
        return None
    for key in fn:
        if key not in _FUNCTION_KEYS and not key.startswith("x-"):
            # e.g. a package.json read as a function: said, not compiled into an empty tool
            # (no rule: broken input, said and ignored)
            reader.diags.warning(
                loc.child(key),
                f"{key!r} is not part of a function definition; ignored",
                "name, description, parameters (strict, response)",
                hint="is this file a tool spec? (functions are {name, description, parameters})",
            )
    strict = fn.get("strict")
    return ToolSpec(
        name=name,
        loc=loc,
        params=reader.params(fn.get("parameters"), loc.child("parameters")),
        description=reader.text(fn.get("description"), loc.child("description"), "description"),
        strict=strict if isinstance(strict, bool) else None,
    )
