"""Compiler layer (backends): IR schema nodes → JSON Schema (draft 2020-12). Imports ``ir`` only.

This is what the LLM sees and what exported schemas contain. ``$ref``s point into one ``$defs``
table whose keys are the names the Python backend gave the definitions, so a shared component is
written once per package instead of inlined into every tool that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

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
                return {"type": "integer", **_bounds(node.bounds)}
            case NumberNode():
                return {"type": "number", **_bounds(node.bounds)}
            case StringNode():
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
            case ArrayNode():
                out = {"type": "array"}
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
            case ObjectNode():
                return self.object_body(node)
            case LiteralNode():
                values = [thaw(v) for v in node.values]
                if node.form == "const" and len(values) == 1:
                    return {"const": values[0]}
                return {"enum": values}
            case UnionNode():
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
            case AllOfNode():
                return {"allOf": [self.emit(p) for p in node.parts]}
            case RefNode():
                return {"$ref": f"#/$defs/{self.def_names[node.target]}"}
            case CheckedNode():
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
                            checked["dependentSchemas"] = {
                                k: self.emit(v) for k, v in check.schemas
                            }
                        case PatternPropertiesCheck():
                            checked["patternProperties"] = {
                                k: self.emit(v) for k, v in check.patterns
                            }
                            if check.additional is not None:
                                checked["additionalProperties"] = self.emit(check.additional)
                        case PropertyNamesCheck():
                            checked["propertyNames"] = self.emit(check.schema)
                        case UnevaluatedCheck():
                            checked[f"unevaluated{check.kind.capitalize()}"] = self.emit(
                                check.schema
                            )
                return checked

    def object_body(self, node: ObjectNode) -> dict[str, Any]:
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


def _is_plain_typed(node: SchemaNode) -> bool:
    return isinstance(
        node,
        (NullNode, BooleanNode, IntegerNode, NumberNode, StringNode, ArrayNode, ObjectNode),
    )
