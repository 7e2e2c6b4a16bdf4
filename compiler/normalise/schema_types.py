"""Compiler layer (normalise): type names and enum values as other languages write them.
Imports ``_rule`` and ``_schema`` only.

``type: int`` (a real API's own spec), ``type: Integer``, ``itneger``: one obvious reading each;
and ``enum: [true, 4.1]`` under ``type: string``, which YAML made a boolean and a number. The
tables of other languages' type names are here too: the lowerer's hints and BFCL read them.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal, cast

from ..diagnostics import Diagnostic, describe
from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import JSON_TYPES, SchemaContext, schema_object, schema_rule, without

# BFCL's function docs use Python and Java type names; each maps to the JSON Schema type that
# accepts the values those names stand for. ``any`` and the empty string accept everything.
BFCL_TYPES: dict[str, str | None] = {
    "dict": "object",
    "hashmap": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "long": "integer",
    "int": "integer",
    "short": "integer",
    "byte": "integer",
    "tuple": "array",
    "list": "array",
    "arraylist": "array",
    "char": "string",
    "str": "string",
    "bool": "boolean",
    "any": None,
    "": None,
}

# Type names from other languages and schema systems, for hints only (never accepted).
_OTHER_TYPE_NAMES: dict[str, str | None] = {
    "text": "string",
    "varchar": "string",
    "decimal": "number",
    "real": "number",
    "numeric": "number",
    "none": "null",
    "nil": "null",
    "dictionary": "object",
    "record": "object",
    "sequence": "array",
    "json": None,
}
# Type names that JSON Schema spells as a string format.
_STRING_FORMATS = {
    "date": "date",
    "datetime": "date-time",
    "date-time": "date-time",
    "time": "time",
    "email": "email",
    "uri": "uri",
    "url": "uri",
    "uuid": "uuid",
}
_JSON_TYPES = frozenset(JSON_TYPES)


def lenient_type(name: str) -> str | Literal[False] | None:
    """The JSON type a non-JSON type name (``int``, ``Integer``, ``double``, ``dict``...) stands
    for; None for "any value" (``any``); False when it names nothing obvious."""
    lowered = name.lower()
    if lowered in JSON_TYPES:
        return lowered
    known = {**BFCL_TYPES, **_OTHER_TYPE_NAMES, "int32": "integer", "int64": "integer"}
    known |= {"float32": "number", "float64": "number", "integer": "integer"}
    if lowered in known and lowered != "":
        return known[lowered]
    close = difflib.get_close_matches(lowered, JSON_TYPES, n=1, cutoff=0.8)
    return close[0] if close else False  # a misspelling with one obvious reading: "itneger"


def type_hint(name: str) -> str | None:
    """How JSON Schema spells a type name borrowed from a programming language."""
    lowered = name.lower()
    if lowered in JSON_TYPES:
        return f"type names are lower-case: {lowered!r}"
    if lowered in _STRING_FORMATS:
        return f"use type 'string' with format {_STRING_FORMATS[lowered]!r}"
    known = {**BFCL_TYPES, **_OTHER_TYPE_NAMES}
    if lowered in known:
        mapped = known[lowered]
        return (
            f"JSON Schema spells it {mapped!r}" if mapped else "leave out 'type' to allow any value"
        )
    close = difflib.get_close_matches(lowered, JSON_TYPES, n=1)
    return f"did you mean {close[0]!r}?" if close else None


def json_type_matches(value: Any, types: list[str]) -> bool:
    """Whether the JSON ``value`` is of one of the JSON Schema ``types``."""
    for t in types:
        if t == "null" and value is None:
            return True
        if t == "boolean" and isinstance(value, bool):
            return True
        if t == "string" and isinstance(value, str):
            return True
        if t == "object" and isinstance(value, dict):
            return True
        if t == "array" and isinstance(value, list):
            return True
        if (
            not isinstance(value, bool)
            and isinstance(value, (int, float))
            and (t == "number" or (t == "integer" and float(value).is_integer()))
        ):
            return True
    return False


def _type_name_alias(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # one bad type name must not refuse a whole real spec: a name with no reading constrains
    # nothing (any value), said where it is; --strict refuses it
    if not ctx.lenient or ctx.dialect == "bfcl" or fragment is None:
        return None
    raw: Any = fragment.get("type")
    if raw is None or (type(raw) is str and raw in _JSON_TYPES):
        return None
    listed = cast("list[Any]", raw) if isinstance(raw, list) else None
    names: list[Any] = listed if listed is not None else [raw]
    read: list[Any] = []
    said: list[Any] = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or name in _JSON_TYPES:
            read.append(name)
            continue
        found = lenient_type(name)
        alias = found if found is not False else None
        # a real API's own spec says ``type: int``: one obvious meaning, read so
        said.append(
            warn(
                at.child("type", i) if listed is not None else at.child("type"),
                f"type {name!r} is not a JSON Schema type; read as "
                + (repr(alias) if alias else "any value (no type)"),
                f"one of {', '.join(JSON_TYPES)}",
                hint=f"write {alias!r}" if alias else "leave out 'type'",
            )
        )
        if alias is None:  # any value: no type at all
            errors = _not_names(names, at) if listed is not None else []
            return Fixed(
                value=without(fragment, "type"),
                diagnostics=tuple(sorted([*said, *errors], key=lambda d: _index(d, at))),
            )
        read.append(alias)
    if not said:
        return None
    value = {**fragment, "type": read if listed is not None else read[0]}
    return Fixed(value=value, diagnostics=tuple(said))


def _not_names(names: list[Any], at: SourceLocation) -> list[Diagnostic]:
    """The errors for the entries of a ``type`` list that are not strings (a ``type`` dropped
    for a name that means any value never reaches the lowerer, which says them otherwise)."""
    return [
        Diagnostic(
            loc=at.child("type", k),
            severity="error",
            found=f"type is {describe(name)}",
            expected=f"one of {', '.join(JSON_TYPES)}",
        )
        for k, name in enumerate(names)
        if not isinstance(name, str)
    ]


def _index(diagnostic: Diagnostic, at: SourceLocation) -> int:
    tail = diagnostic.loc.pointer.removeprefix(at.child("type").pointer).lstrip("/")
    return int(tail) if tail.isdigit() else -1


TYPE_NAME_ALIAS = schema_rule(
    name="type-name-alias",
    family="schema-types",
    accepts="a type name JSON Schema has not (int, str, Integer, double, itneger, any, …)",
    makes="the JSON Schema type it stands for, or no type (any value)",
    warning="type <name> is not a JSON Schema type; read as <type> | any value (no type)",
    apply=_type_name_alias,
    when=lambda c: c.lenient and c.dialect != "bfcl",
    keys=("type",),
    phases=("type", "enum"),
)


def _enum_scalars_as_text(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """``{type: string, enum: [4.1, 4, 3]}`` or ``enum: [true, false]``: YAML reads an unquoted
    ``4.1`` as a number and ``true`` as a boolean, and neither is a string, so the enum allowed
    nothing (a real fintech API's version and indicator fields: every response carrying them
    failed). Each is read as its JSON text (``'4.1'``, ``'true'``), unless the type allows it as
    it is. (Given the schema with its type read: ``TYPE_NAME_ALIAS`` first.)"""
    fragment = schema_object(value)
    if not ctx.lenient or fragment is None or not isinstance(fragment.get("enum"), list):
        return None
    raw: Any = fragment.get("type")
    names = cast("list[Any]", raw) if isinstance(raw, list) else [raw]
    types = [n for n in names if isinstance(n, str) and n in _JSON_TYPES]
    if "string" not in types:
        return None
    values = cast("list[Any]", fragment["enum"])

    def text(v: Any) -> Any:
        if not isinstance(v, bool | int | float) or json_type_matches(v, types):
            return v
        if isinstance(v, bool):
            return "true" if v else "false"
        return repr(v) if isinstance(v, float) else str(v)

    read = [text(v) for v in values]
    changed = [(v, t) for v, t in zip(values, read, strict=True) if t is not v]
    if not changed:
        return None
    kinds = sorted({"booleans" if isinstance(v, bool) else "numbers" for v, _ in changed})
    first, first_text = changed[0]
    kind = "a boolean" if isinstance(first, bool) else "a number"
    language = "JSON" if at.file.lower().endswith((".json", ".jsonl")) else "YAML"
    said = warn(
        at.child("enum"),
        f"enum value(s) {', '.join(t for _, t in changed)} are {' and '.join(kinds)} "
        f"under type: string; read as the string(s) "
        f"{', '.join(repr(t) for _, t in changed)}",
        "strings",
        hint=f"quote them: an unquoted {first_text} in {language} is {kind}, not a string",
    )
    return Fixed(value={**fragment, "enum": read}, diagnostics=(said,))


ENUM_SCALARS_AS_TEXT = schema_rule(
    name="enum-scalars-as-text",
    family="schema-types",
    accepts="booleans and numbers in the enum of a type: string schema (YAML's unquoted true, 4.1)",
    makes="their JSON text as strings ('true', '4.1')",
    warning="enum value(s) <values> are booleans/numbers under type: string; read as the "
    "string(s) <texts>",
    apply=_enum_scalars_as_text,
    when=lambda c: c.lenient,
    keys=("enum",),
    phases=("enum",),
)

RULES = (TYPE_NAME_ALIAS, ENUM_SCALARS_AS_TEXT)
