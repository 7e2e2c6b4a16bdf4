"""Compiler layer (passes): analyses of unions and classes over the IR — pure functions, IR in,
facts out. Imports ``ir`` and ``naming``.

- ``is_class_node``: whether a node becomes a pydantic class (an object with properties, or an
  ``allOf`` of classes).
- ``tag_property``: the property a union's variants can be told apart by (a pydantic tagged union).
- ``mutually_exclusive``: whether no instance can match two variants of a ``oneOf`` (then the plain
  union already means "exactly one").
- ``admits_null``: whether a node accepts ``null``.
"""

from __future__ import annotations

from .. import naming
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    Definition,
    IntegerNode,
    LiteralNode,
    NeverNode,
    NullNode,
    NumberNode,
    ObjectNode,
    RefNode,
    SchemaNode,
    StringNode,
    UnionNode,
    thaw,
)


def is_class_node(
    node: SchemaNode, defs: dict[str, Definition], seen: frozenset[str] = frozenset()
) -> bool:
    if isinstance(node, ObjectNode):
        return bool(node.properties) or isinstance(node.additional, NeverNode)
    if isinstance(node, AllOfNode):
        # parts: objects, and refs to classes (objects, or allOf classes themselves: the
        # parent class then inherits in turn)
        return all(
            isinstance(p, ObjectNode)
            or (
                isinstance(p, RefNode)
                and p.target not in seen
                and isinstance(defs[p.target].node, (ObjectNode, AllOfNode))
                and is_class_node(defs[p.target].node, defs, seen | {p.target})
            )
            for p in node.parts
        ) and any(isinstance(p, RefNode) for p in node.parts)
    return False


def tag_property(
    variants: tuple[SchemaNode, ...], defs: dict[str, Definition], class_defs: set[str]
) -> str | None:
    """The JSON name of a property pydantic can discriminate ``variants`` by, or None.

    Each variant must render as a plain class (an object definition or an inline object, not an
    ``allOf`` subclass, whose restated fields are what pydantic reads) that requires the
    property as a ``Literal`` of strings, under its own name as the Python field name (pydantic
    looks the tag up by alias on data and by attribute on instances), and no two variants may
    share a value. The tagged union then accepts exactly what the plain union accepts.
    """
    if len(variants) < 2:
        return None
    tag_sets: list[dict[str, frozenset[str]]] = []
    for v in variants:
        obj = v
        if isinstance(v, RefNode):
            obj = defs[v.target].node if v.target in class_defs else None
        if not isinstance(obj, ObjectNode) or not is_class_node(obj, defs):
            return None
        tags: dict[str, frozenset[str]] = {}
        scope = naming.Scope(taken=set())  # the field names ``_class`` gives, in its order
        for prop in obj.properties:
            py_name = scope.claim(naming.field_name(prop.name), original=prop.name)
            if (
                prop.required
                and py_name == prop.name
                and isinstance(prop.schema, LiteralNode)
                and all(t.startswith('"') for t in prop.schema.values)
            ):
                tags[prop.name] = frozenset(prop.schema.values)
        tag_sets.append(tags)
    for key in tag_sets[0]:
        seen: set[str] = set()
        for tags in tag_sets:
            values = tags.get(key)
            if values is None or values & seen:
                break
            seen |= values
        else:
            return key
    return None


def mutually_exclusive(variants: tuple[SchemaNode, ...], defs: dict[str, Definition]) -> bool:
    """Whether no instance can match two of ``variants``, judged from the schemas alone: any
    two take values of different JSON types, or (where both may be objects) require a property
    with disjoint string ``const``/``enum`` values (a discriminator), or (where both may be
    strings) are string enums with no value in common.

    The union of faithful variant types then accepts an instance exactly when one variant
    matches, so ``oneOf`` needs no ``ExactlyOne`` check (which runs Python on every value).
    """
    types = [_json_types(v, defs, set()) for v in variants]
    for i, a in enumerate(variants):
        for j in range(i + 1, len(variants)):
            if not _disjoint(a, types[i], variants[j], types[j], defs):
                return False
    return True


_ALL_TYPES = frozenset({"null", "boolean", "number", "string", "array", "object"})


def _disjoint(
    a: SchemaNode,
    types_a: frozenset[str],
    b: SchemaNode,
    types_b: frozenset[str],
    defs: dict[str, Definition],
) -> bool:
    shared = types_a & types_b
    if not shared:
        return True
    if shared == frozenset({"object"}):
        tags_a, tags_b = _required_tags(a, defs, set()), _required_tags(b, defs, set())
        return any(not (tags_a[k] & tags_b[k]) for k in tags_a.keys() & tags_b.keys())
    if shared == frozenset({"string"}):
        values_a, values_b = _string_literals(a, defs, set()), _string_literals(b, defs, set())
        return values_a is not None and values_b is not None and not (values_a & values_b)
    return False


def _json_types(node: SchemaNode, defs: dict[str, Definition], seen: set[str]) -> frozenset[str]:
    """The JSON types ``node``'s instances can have (integers count as numbers)."""
    match node:
        case NeverNode():
            return frozenset()
        case NullNode():
            return frozenset({"null"})
        case BooleanNode():
            return frozenset({"boolean"})
        case IntegerNode() | NumberNode():
            return frozenset({"number"})
        case StringNode():
            return frozenset({"string"})
        case ArrayNode():
            return frozenset({"array"})
        case ObjectNode():
            return frozenset({"object"})
        case LiteralNode():
            return frozenset(_literal_type(v) for v in node.values)
        case UnionNode():
            return frozenset[str]().union(*(_json_types(v, defs, seen) for v in node.variants))
        case AllOfNode():
            return _ALL_TYPES.intersection(*(_json_types(p, defs, seen) for p in node.parts))
        case CheckedNode():
            return _json_types(node.base, defs, seen)
        case RefNode():
            if node.target in seen:
                return _ALL_TYPES
            return _json_types(defs[node.target].node, defs, seen | {node.target})
        case _:
            return _ALL_TYPES


def _literal_type(text: str) -> str:
    value = thaw(text)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _required_tags(
    node: SchemaNode, defs: dict[str, Definition], seen: set[str]
) -> dict[str, frozenset[str]]:
    """Property → the string values (JSON texts) it can hold, for the properties that every
    instance matching ``node`` has with a string ``const``/``enum`` value (an upper bound)."""
    match node:
        case RefNode():
            if node.target in seen:
                return {}
            return _required_tags(defs[node.target].node, defs, seen | {node.target})
        case CheckedNode():  # the checks only narrow the base
            return _required_tags(node.base, defs, seen)
        case AllOfNode():  # every part holds
            out: dict[str, frozenset[str]] = {}
            for part in node.parts:
                for name, values in _required_tags(part, defs, seen).items():
                    out[name] = out[name] & values if name in out else values
            return out
        case ObjectNode():
            out = {}
            for prop in node.properties:
                values = _string_literals(prop.schema, defs, seen) if prop.required else None
                if values is not None:
                    out[prop.name] = values
            return out
        case _:
            return {}


def _string_literals(
    node: SchemaNode, defs: dict[str, Definition], seen: set[str]
) -> frozenset[str] | None:
    """The values of a ``const``/``enum`` of strings only (JSON texts), else None."""
    match node:
        case RefNode():
            if node.target in seen:
                return None
            return _string_literals(defs[node.target].node, defs, seen | {node.target})
        case CheckedNode():
            return _string_literals(node.base, defs, seen)
        case LiteralNode() if all(v.startswith('"') for v in node.values):
            return frozenset(node.values)
        case _:
            return None


def admits_null(node: SchemaNode, defs: dict[str, Definition], seen: set[str]) -> bool:
    match node:
        case NullNode() | AnyNode():
            return True
        case UnionNode():
            return any(admits_null(v, defs, seen) for v in node.variants)
        case LiteralNode():
            return "null" in node.values
        case RefNode():
            if node.target in seen:
                return False
            return admits_null(defs[node.target].node, defs, seen | {node.target})
        case CheckedNode():
            return admits_null(node.base, defs, seen)
        case _:
            return False
