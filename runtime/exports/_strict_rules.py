"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``, and ``_common``):
OpenAI Structured Outputs' published rules, as a checker (``strict_violations``).

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolbind._compose import def_name

from ._common import ExportIssue, escape_token

# -- OpenAI structured outputs: the rules ------------------------------------------------------

# OpenAI, "Structured Outputs — Supported schemas": the types, the keywords per type, the formats,
# and the limits below. Everything else is refused by the API in strict mode.
STRICT_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRICT_KEYWORDS = frozenset(
    {
        # any schema
        "type",
        "description",
        "title",
        "enum",
        "const",
        "anyOf",
        "$ref",
        # string
        "pattern",
        "format",
        # number / integer
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        # array
        "items",
        "minItems",
        "maxItems",
        # object
        "properties",
        "required",
        "additionalProperties",
    }
)
STRICT_MAX_DEPTH = 10
STRICT_MAX_PROPERTIES = 5000
STRICT_MAX_ENUM_VALUES = 1000
STRICT_MAX_STRING_LENGTH = 120_000
STRICT_LARGE_ENUM = 250
STRICT_LARGE_ENUM_STRING_LENGTH = 15_000


def types_of(node: Mapping[str, Any]) -> list[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in cast("list[Any]", declared) if isinstance(t, str)]
    return []


def strict_violations(schema: Any) -> list[ExportIssue]:
    """Every way ``schema`` breaks OpenAI's Structured Outputs rules for a strict function.

    Checks: the root is an object schema (not ``anyOf``); every object lists ``properties``, all
    of them in ``required``, and ``additionalProperties: false``; every schema is typed (``type``,
    ``enum``, ``const``, ``anyOf`` or ``$ref``) with supported types only; only supported keywords
    and formats; arrays have one ``items`` schema; ``$ref`` points into the root's ``$defs`` (or is
    ``#``); at most 10 levels of object nesting, 5000 properties, 1000 enum values, 120,000
    characters of property names, definition names, enum and const values, and 15,000 characters
    of enum values for an enum of more than 250 string values.

    Returns:
        The violations, each with the JSON pointer of the offending schema; empty when it passes.
    """
    if not isinstance(schema, dict):
        return [ExportIssue(pointer="", kind="root", message="the root is not a schema object")]
    root = cast("dict[str, Any]", schema)
    defs_value = root.get("$defs", {})
    checker = _Checker(cast("dict[str, Any]", defs_value) if isinstance(defs_value, dict) else {})
    bad = checker.bad
    if not isinstance(defs_value, dict):
        bad("/$defs", "$defs", "$defs is not an object")
    if root.get("type") != "object":
        bad("", "root", "the root must be `type: object`")
    if "anyOf" in root:
        bad("", "root", "the root must not be `anyOf`")
    checker.check(root, "")
    for name, sub in checker.defs.items():
        checker.check(sub, f"/$defs/{escape_token(name)}")
    levels = checker.depth(root, frozenset())
    if levels > STRICT_MAX_DEPTH:
        bad("", "limit", f"{levels} levels of object nesting (at most {STRICT_MAX_DEPTH})")
    totals = checker.totals
    if totals["properties"] > STRICT_MAX_PROPERTIES:
        bad("", "limit", f"{totals['properties']} properties (at most {STRICT_MAX_PROPERTIES})")
    if totals["enum"] > STRICT_MAX_ENUM_VALUES:
        bad("", "limit", f"{totals['enum']} enum values (at most {STRICT_MAX_ENUM_VALUES})")
    if totals["chars"] > STRICT_MAX_STRING_LENGTH:
        bad(
            "",
            "limit",
            f"{totals['chars']} characters of names and values (at most {STRICT_MAX_STRING_LENGTH})",
        )
    return checker.issues


class _Checker:
    """One schema's check: the violations found so far and the running totals the limits bound
    (properties, enum values, characters of names and values)."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.issues: list[ExportIssue] = []
        self.totals = {"properties": 0, "enum": 0, "chars": sum(len(name) for name in defs)}

    def bad(self, pointer: str, kind: str, message: str) -> None:
        self.issues.append(ExportIssue(pointer=pointer, kind=kind, message=message))

    def check(self, node: Any, pointer: str) -> None:
        """Check one schema and, recursively, those under it."""
        if not isinstance(node, dict):
            self.bad(pointer, "boolean schema", "a boolean schema — expected a schema object")
            return
        n = cast("dict[str, Any]", node)
        types = self._keywords_and_type(n, pointer)
        self._reference_and_values(n, pointer)
        if "anyOf" in n:
            branches = n["anyOf"]
            if not isinstance(branches, list) or not branches:
                self.bad(pointer, "anyOf", "anyOf must be a non-empty array")
            else:
                for i, branch in enumerate(cast("list[Any]", branches)):
                    self.check(branch, f"{pointer}/anyOf/{i}")
        if "object" in types or "properties" in n:
            self._object(n, pointer)
        elif "additionalProperties" in n or "required" in n:
            self.bad(pointer, "object keyword", "object keywords on a schema that is not an object")
        if "array" in types or "items" in n:
            items = n.get("items")
            if not isinstance(items, dict):
                self.bad(pointer, "items", "an array needs one `items` schema")
            else:
                self.check(items, f"{pointer}/items")

    def _keywords_and_type(self, n: dict[str, Any], pointer: str) -> list[str]:
        """Check the keywords and the type; the schema's types."""
        for key in n:
            if key == "$defs" and pointer == "":
                continue
            if key not in STRICT_KEYWORDS:
                self.bad(pointer, f"keyword {key}", f"unsupported keyword {key!r}")
        types = types_of(n)
        if "type" in n:
            declared = n["type"]
            well_formed = isinstance(declared, str) or (
                isinstance(declared, list)
                and len(cast("list[Any]", declared)) > 0
                and all(isinstance(t, str) for t in cast("list[Any]", declared))
            )
            if not well_formed:
                self.bad(pointer, "type", f"malformed type {declared!r}")
            for t in types:
                if t not in STRICT_TYPES:
                    self.bad(pointer, "type", f"unsupported type {t!r}")
        if not ({"type", "enum", "const", "anyOf", "$ref"} & n.keys()):
            self.bad(
                pointer, "untyped", "no type — strict mode needs a type, enum, const, anyOf or $ref"
            )
        return types

    def _reference_and_values(self, n: dict[str, Any], pointer: str) -> None:
        """Check ``$ref``, ``format``, ``enum`` and ``const`` (counting their characters)."""
        if "$ref" in n:
            ref = n["$ref"]
            name = def_name(ref) if isinstance(ref, str) else None
            if ref != "#" and (name is None or name not in self.defs):
                self.bad(pointer, "$ref", f"$ref {ref!r} does not point into the root's $defs")
        if "format" in n and n["format"] not in STRICT_FORMATS:
            self.bad(pointer, "format", f"unsupported format {n['format']!r}")
        if "enum" in n:
            values = n["enum"]
            if not isinstance(values, list) or not values:
                self.bad(pointer, "enum", "enum must be a non-empty array")
            else:
                self._enum(cast("list[Any]", values), pointer)
        if isinstance(n.get("const"), str):
            self.totals["chars"] += len(n["const"])

    def _enum(self, enum_values: list[Any], pointer: str) -> None:
        self.totals["enum"] += len(enum_values)
        strings = [v for v in enum_values if isinstance(v, str)]
        length = sum(len(v) for v in strings)
        self.totals["chars"] += length
        if len(strings) > STRICT_LARGE_ENUM and length > STRICT_LARGE_ENUM_STRING_LENGTH:
            self.bad(
                pointer,
                "limit",
                f"an enum of {len(strings)} strings totals {length} characters"
                f" (over {STRICT_LARGE_ENUM_STRING_LENGTH})",
            )
        if any(isinstance(v, (dict, list)) for v in enum_values):
            self.bad(pointer, "enum", "enum values must be strings, numbers, booleans or null")

    def _object(self, n: dict[str, Any], pointer: str) -> None:
        """Check an object schema: closed, every property required, each property's schema."""
        props = n.get("properties")
        if not isinstance(props, dict):
            self.bad(pointer, "free-form object", "an object without `properties`")
            props = {}
        properties = cast("dict[str, Any]", props)
        if n.get("additionalProperties") is not False:
            self.bad(pointer, "additionalProperties", "objects need `additionalProperties: false`")
        required = n.get("required")
        if not isinstance(required, list) or set(cast("list[Any]", required)) != set(properties):
            self.bad(pointer, "required", "`required` must list every property")
        self.totals["properties"] += len(properties)
        for name, sub in properties.items():
            self.totals["chars"] += len(name)
            self.check(sub, f"{pointer}/properties/{escape_token(name)}")

    def depth(self, node: Any, on_path: frozenset[str]) -> int:
        """Nesting depth: objects within objects, following $refs (a cycle counts once)."""
        if not isinstance(node, dict):
            return 0
        n = cast("dict[str, Any]", node)
        ref = n.get("$ref")
        if isinstance(ref, str):
            name = def_name(ref)
            if name is None or name in on_path or name not in self.defs:
                return 0
            return self.depth(self.defs[name], on_path | {name})
        children: list[Any] = []
        props = n.get("properties")
        if isinstance(props, dict):
            children.extend(cast("dict[str, Any]", props).values())
        if isinstance(n.get("items"), dict):
            children.append(n["items"])
        if isinstance(n.get("anyOf"), list):
            children.extend(cast("list[Any]", n["anyOf"]))
        below = max((self.depth(c, on_path) for c in children), default=0)
        own = 1 if ("object" in types_of(n) or isinstance(props, dict)) else 0
        return own + below
