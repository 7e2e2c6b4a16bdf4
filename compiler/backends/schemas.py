"""Compiler layer (backends): IR schema nodes → JSON Schema (draft 2020-12). Imports ``ir`` (and
``_jsontext``'s scalar encoder) only.

This is what the LLM sees and what exported schemas contain. ``$ref``s point into one ``$defs``
table whose keys are the names the Python backend gave the definitions, so a shared component is
written once per package instead of inlined into every tool that uses it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from json.encoder import encode_basestring  # the C escaper json itself uses
from typing import Any, cast

from .._jsontext import encode_scalar
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    DependentRequiredCheck,
    DependentSchemasCheck,
    IntegerNode,
    LiteralNode,
    Meta,
    NeverNode,
    NotCheck,
    NullNode,
    NumberNode,
    NumericBounds,
    ObjectNode,
    PatternPropertiesCheck,
    PropertyNamesCheck,
    RefNode,
    SchemaNode,
    StringNode,
    UnevaluatedCheck,
    UnionNode,
    thaw,
)


def _annotations(meta: Meta) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if meta.title is not None:
        out["title"] = meta.title
    if meta.description is not None:
        out["description"] = meta.description
    if meta.default is not None:
        out["default"] = thaw(meta.default)
    if meta.deprecated:
        out["deprecated"] = True
    if meta.extra is not None:
        for k, v in thaw(meta.extra).items():
            out.setdefault(k, v)
    return out


def _bounds(b: NumericBounds) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (
        ("minimum", b.minimum),
        ("maximum", b.maximum),
        ("exclusiveMinimum", b.exclusive_minimum),
        ("exclusiveMaximum", b.exclusive_maximum),
        ("multipleOf", b.multiple_of),
    ):
        if value is not None:
            out[key] = value
    return out


class SchemaEmitter:
    """Emits JSON Schema for nodes; ``def_names`` maps definition keys to ``$defs`` names."""

    def __init__(self, def_names: Mapping[str, str]) -> None:
        self.def_names = def_names

    def emit(self, node: SchemaNode) -> Any:
        """``node``'s JSON Schema (a boolean schema or an object), its annotations included."""
        body = self._body(node)
        if body is False or body is True:
            return body
        return {**body, **{k: v for k, v in _annotations(node.meta).items() if k not in body}}

    def _body(self, node: SchemaNode) -> Any:
        match node:
            case AnyNode():
                return {}
            case NeverNode():
                return {"not": {}} if _annotations(node.meta) else False
            case NullNode():
                return {"type": "null"}
            case BooleanNode():
                return {"type": "boolean"}
            case IntegerNode():
                # (``format`` said: an OpenAPI Call checks ``int32``/``int64`` as ranges)
                fmt = {"format": node.format} if node.format is not None else {}
                return {"type": "integer", **_bounds(node.bounds), **fmt}
            case NumberNode():
                # (and ``float``/``double``: finite, a float within single precision's range)
                fmt = {"format": node.format} if node.format is not None else {}
                return {"type": "number", **_bounds(node.bounds), **fmt}
            case StringNode():
                return _string_body(node)
            case ArrayNode():
                return self._array_body(node)
            case ObjectNode():
                return self.object_body(node)
            case LiteralNode():
                values = [thaw(v) for v in node.values]
                if node.form == "const" and len(values) == 1:
                    return {"const": values[0]}
                return {"enum": values}
            case UnionNode():
                return self._union_body(node)
            case AllOfNode():
                return {"allOf": [self.emit(p) for p in node.parts]}
            case RefNode():
                return {"$ref": f"#/$defs/{self.def_names[node.target]}"}
            case CheckedNode():
                return self._checked_body(node)

    def _array_body(self, node: ArrayNode) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array"}
        if node.prefix_items:
            out["prefixItems"] = [self.emit(n) for n in node.prefix_items]
        if node.items is not None:
            out["items"] = self.emit(node.items)
        if node.min_items is not None:
            out["minItems"] = node.min_items
        if node.max_items is not None:
            out["maxItems"] = node.max_items
        if node.unique_items:
            out["uniqueItems"] = True
        return out

    def _union_body(self, node: UnionNode) -> dict[str, Any]:
        if node.form == "type" and all(_is_plain_typed(v) for v in node.variants):
            merged: dict[str, Any] = {}
            types: list[str] = []
            for v in node.variants:
                body = self.emit(v)
                types.append(body.pop("type"))
                merged.update(body)
            return {"type": types, **merged}
        key = "oneOf" if node.form == "oneOf" else "anyOf"
        return {key: [self.emit(v) for v in node.variants]}

    def _checked_body(self, node: CheckedNode) -> dict[str, Any]:
        base: Any = self.emit(node.base)
        checked: dict[str, Any] = (
            dict(cast("dict[str, Any]", base))
            if isinstance(base, dict)
            else ({} if base else {"not": {}})
        )
        for check in node.checks:
            match check:
                case NotCheck():
                    checked["not"] = self.emit(check.schema)
                case ConditionalCheck():
                    checked["if"] = self.emit(check.if_)
                    if check.then is not None:
                        checked["then"] = self.emit(check.then)
                    if check.else_ is not None:
                        checked["else"] = self.emit(check.else_)
                case ContainsCheck():
                    checked["contains"] = self.emit(check.schema)
                    if check.min_contains != 1:
                        checked["minContains"] = check.min_contains
                    if check.max_contains is not None:
                        checked["maxContains"] = check.max_contains
                case DependentRequiredCheck():
                    checked["dependentRequired"] = {k: list(v) for k, v in check.requires}
                case DependentSchemasCheck():
                    checked["dependentSchemas"] = {k: self.emit(v) for k, v in check.schemas}
                case PatternPropertiesCheck():
                    checked["patternProperties"] = {k: self.emit(v) for k, v in check.patterns}
                    if check.additional is not None:
                        checked["additionalProperties"] = self.emit(check.additional)
                case PropertyNamesCheck():
                    checked["propertyNames"] = self.emit(check.schema)
                case UnevaluatedCheck():
                    checked[f"unevaluated{check.kind.capitalize()}"] = self.emit(check.schema)
        return checked

    def object_body(self, node: ObjectNode) -> dict[str, Any]:
        """An object schema's keywords (``emit`` adds its annotations)."""
        out: dict[str, Any] = {"type": "object"}
        if node.properties:
            out["properties"] = {p.name: self.emit(p.schema) for p in node.properties}
        required = [p.name for p in node.properties if p.required]
        if required:
            out["required"] = required
        if node.additional is not None:
            out["additionalProperties"] = (
                False if isinstance(node.additional, NeverNode) else self.emit(node.additional)
            )
        if node.min_properties is not None:
            out["minProperties"] = node.min_properties
        if node.max_properties is not None:
            out["maxProperties"] = node.max_properties
        return out


def _string_body(node: StringNode) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if node.min_length is not None:
        out["minLength"] = node.min_length
    if node.max_length is not None:
        out["maxLength"] = node.max_length
    if node.pattern is not None:
        out["pattern"] = node.pattern
    if node.format is not None:
        out["format"] = node.format
    return out


def _is_plain_typed(node: SchemaNode) -> bool:
    return isinstance(
        node,
        (NullNode, BooleanNode, IntegerNode, NumberNode, StringNode, ArrayNode, ObjectNode),
    )


# Keywords whose value is a schema, a list of schemas, or a map of name → schema.
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
_SCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAP = frozenset({"properties", "patternProperties", "dependentSchemas"})
SHARE_MIN_BYTES = 32
"""Subschemas shorter than this (compact JSON) are never shared."""


def _canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _CanonicalTexts:
    """``_canonical`` of each object asked for, by identity, in one pass over the values.

    The walk in ``share_repeated`` asks for every subschema's text, and its subschemas' in
    turn: with ``json.dumps`` each nested subschema was encoded again with every container
    around it (a third of a large spec's ``tools.json``). Here a dict's text is made from its
    values' texts, each dict encoded once; the text is ``_canonical``'s, byte for byte (a dict
    with a key that is not a string, a value of another type or a nesting too deep for
    recursion is left to it). Each entry holds its object, so that it stays alive and no
    other object can take its id while the texts are in use.
    """

    def __init__(self) -> None:
        self.texts: dict[int, tuple[Any, str]] = {}

    def __call__(self, value: Any) -> str:
        found = self.texts.get(id(value))
        if found is None:
            try:
                text = self._encode(value)
            except (TypeError, RecursionError):  # (TypeError: what ``_encode`` does not write)
                text = _canonical(value)
            found = self.texts[id(value)] = (value, text)
        return found[1]

    def _encode(self, value: Any) -> str:
        kind = cast("type[object]", type(value))
        if kind is str:
            return encode_basestring(value)
        if kind is dict:
            found = self.texts.get(id(value))
            if found is not None:
                return found[1]
            table = cast("dict[Any, Any]", value)
            if any(type(k) is not str for k in table):
                raise TypeError
            text = (
                "{"
                + ",".join(
                    encode_basestring(k) + ":" + self._encode(table[k]) for k in sorted(table)
                )
                + "}"
            )
            self.texts[id(value)] = (value, text)
            return text
        if kind is list:
            return "[" + ",".join([self._encode(v) for v in cast("list[Any]", value)]) + "]"
        text = encode_scalar(value)
        if text is None:
            raise TypeError
        return text


def _subschemas(schema: Any, hint: str) -> Iterator[tuple[Any, str]]:
    """The direct subschemas of ``schema`` with a name hint each (property names, else the parent's)."""
    if not isinstance(schema, dict):
        return
    obj = cast("dict[str, Any]", schema)
    for key, value in obj.items():
        if key in _ONE_SCHEMA:
            yield value, hint + ("Item" if key == "items" else "")
        elif key in _SCHEMA_LIST and isinstance(value, list):
            for sub in cast("list[Any]", value):
                yield sub, hint
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            for name, sub in cast("dict[str, Any]", value).items():
                yield sub, name


def share_repeated(
    defs: dict[str, Any], roots: list[Any], claim: Callable[[str], str]
) -> tuple[dict[str, Any], list[Any]]:
    """Move subschemas repeated across ``roots`` and ``defs`` into ``$defs`` (written once).

    A subschema of at least ``SHARE_MIN_BYTES`` that occurs twice or more is replaced by a
    ``$ref`` to a new definition named by ``claim`` (from a property name); the result accepts
    exactly the same instances. Deterministic: discovery follows document order.
    """
    canonical = _CanonicalTexts()

    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    stack: list[tuple[Any, str]] = [(r, "Shared") for r in reversed(roots)]
    stack.extend((d, name) for name, d in reversed(list(defs.items())))
    order: list[str] = []
    while stack:
        schema, hint = stack.pop()
        for sub, sub_hint in reversed(list(_subschemas(schema, hint))):
            if isinstance(sub, dict) and sub:
                text = canonical(sub)
                if len(text) >= SHARE_MIN_BYTES:
                    if text not in counts:
                        order.append(text)
                        hints[text] = sub_hint
                    counts[text] = counts.get(text, 0) + 1
                stack.append((cast("Any", sub), sub_hint))
    # Largest first: once a subschema is shared, the copies of what it contains are gone too.
    # Shared only where the references and the definition are shorter than the copies.
    ref_cost = len('{"$ref":"#/$defs/"}')
    chosen: set[str] = set()
    for text in sorted(order, key=len, reverse=True):
        n = counts[text]
        if (
            n < 2
            or n * len(text)
            <= n * (ref_cost + len(hints[text]) + 2) + len(text) + len(hints[text]) + 8
        ):
            continue
        chosen.add(text)
        inner: list[Any] = [json.loads(text)]
        while inner:
            for sub, _ in _subschemas(inner.pop(), ""):
                if isinstance(sub, dict) and sub:
                    sub_text = canonical(sub)
                    if sub_text in counts:
                        counts[sub_text] -= n - 1
                    inner.append(sub)
    shared = [t for t in order if t in chosen]
    if not shared:
        return defs, roots
    names = {t: claim(hints[t]) for t in shared}

    def rewrite(schema: Any, *, top: bool) -> Any:
        if not isinstance(schema, dict):
            return schema
        if not top:
            name = names.get(canonical(schema))
            if name is not None:
                return {"$ref": f"#/$defs/{name}"}
        out: dict[str, Any] = {}
        for key, value in cast("dict[str, Any]", schema).items():
            if key in _ONE_SCHEMA:
                out[key] = rewrite(value, top=False)
            elif key in _SCHEMA_LIST and isinstance(value, list):
                out[key] = [rewrite(v, top=False) for v in cast("list[Any]", value)]
            elif key in _SCHEMA_MAP and isinstance(value, dict):
                out[key] = {
                    k: rewrite(v, top=False) for k, v in cast("dict[str, Any]", value).items()
                }
            else:
                out[key] = value
        return out

    new_defs = {k: rewrite(v, top=True) for k, v in defs.items()}
    for text, name in names.items():
        new_defs[name] = rewrite(json.loads(text), top=True)
    return new_defs, [rewrite(r, top=True) for r in roots]
