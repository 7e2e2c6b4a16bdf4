"""Compiler layer (normalise): schema objects in a shape JSON Schema has not. Imports ``_rule``
and ``_schema`` only.

A schema written as nothing or as its own description, an ``enum`` that allows nothing, and
``properties`` without the ``type: object`` they mean: real API descriptions are full of them,
and each has one reading (``lenient`` runs only).
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import describe
from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import SchemaContext, schema_object, schema_rule, without

_TYPED_KEYS = frozenset(
    {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}
    | {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}
    | {"minLength", "maxLength", "pattern", "format"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_OBJECT_KEYS = frozenset(
    {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}
)


def _not_object(fragment: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    # real specs leave a schema empty (``name:`` in YAML) or write its description where the
    # schema goes: no constraint is meant, so any value — said, not guessed at
    if not ctx.lenient or not (fragment is None or isinstance(fragment, str)):
        return None
    text = fragment.strip() if isinstance(fragment, str) else ""
    said = warn(
        at,
        f"schema is {describe(fragment)}; read as any value"
        + (" described by that text" if text else ""),
        "a JSON Schema object or boolean",
        hint="write {} for any value" if not text else "write {description: ...}",
    )
    return Fixed(value={"description": text} if text else {}, diagnostics=(said,))


SCHEMA_NOT_OBJECT = schema_rule(
    name="schema-not-object",
    family="schema-shapes",
    accepts="a schema written as null or as a string (its description)",
    makes="{} (any value), or {description: <the text>}",
    warning="schema is <null|string>; read as any value [described by that text]",
    apply=_not_object,
    when=lambda c: c.lenient,
    keys=None,
    phases=("entry",),
)


def _empty_enum(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    if not ctx.lenient or fragment is None or fragment.get("enum") != []:
        return None
    said = warn(
        at.child("enum"),
        "enum is empty; it is ignored",
        "at least one allowed value",
        hint="remove the enum, or list the allowed values",
    )
    return Fixed(value=without(fragment, "enum"), diagnostics=(said,))


EMPTY_ENUM = schema_rule(
    name="empty-enum",
    family="schema-shapes",
    accepts="enum: [] (which allows no value at all)",
    makes="the schema without its enum",
    warning="enum is empty; it is ignored",
    apply=_empty_enum,
    when=lambda c: c.lenient,
    keys=("enum",),
    phases=("before-keywords",),
)


def _properties_without_type(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # OpenAPI: ``properties`` without ``type`` (Discourse writes 30 of its 44 bodies so) means
    # an object to every generator; read as JSON Schema, a required body would accept "hello",
    # 42 or null, and a body would not be spread into fields. (Given a schema read as untyped.)
    if not ctx.lenient or fragment is None or "properties" not in fragment:
        return None
    family = fragment.keys() & _TYPED_KEYS
    if not family <= _OBJECT_KEYS:
        return None
    said = warn(
        at.child("properties"),
        "properties without type: read as type: object",
        "type: object beside properties (without it, JSON Schema lets any non-object "
        "value through)",
    )
    return Fixed(value={**fragment, "type": "object"}, diagnostics=(said,))


PROPERTIES_WITHOUT_TYPE = schema_rule(
    name="properties-without-type",
    family="schema-shapes",
    accepts="properties (and other object keywords only) in a schema without a type",
    makes="the schema with type: object",
    warning="properties without type: read as type: object",
    apply=_properties_without_type,
    when=lambda c: c.lenient,
    keys=("properties",),
    phases=("untyped",),
)

RULES = (SCHEMA_NOT_OBJECT, EMPTY_ENUM, PROPERTIES_WITHOUT_TYPE)
