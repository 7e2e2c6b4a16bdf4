"""Compiler layer (frontends): the lowerer's scalars — ``type`` (read here, objects and arrays
handed to the part below), ``const``/``enum``, strings, numbers, and schemas without a type.
Imports ``ir``, ``diagnostics``, ``_load``, ``normalise``, ``_lower_base`` and ``_lower_objects``
(the part below it); the kernel's ECMA-262 pattern compiler.
"""

from __future__ import annotations

from typing import Any

from toolbind.contract import compile_pattern

from .._load import as_array
from ..diagnostics import describe
from ..ir import (
    AnyNode,
    BooleanNode,
    IntegerNode,
    LiteralNode,
    Meta,
    NeverNode,
    NullNode,
    NumberNode,
    NumericBounds,
    SchemaNode,
    SourceLocation,
    StringNode,
    UnionNode,
    freeze,
)
from ..normalise._families import schema_phase
from ..normalise._schema import JSON_TYPES
from ..normalise.schema_types import (
    BFCL_TYPES,
    json_type_matches,
    type_hint,
)
from ._lower_base import ARRAY_KEYS, NUMBER_KEYS, OBJECT_KEYS, STRING_KEYS
from ._lower_objects import ObjectsLowerer
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]

_ENUM_RULES = schema_phase("enum")
_TYPE_RULES = schema_phase("type")
_UNTYPED_RULES = schema_phase("untyped")
_PATTERN_RULES = schema_phase("pattern")
_TYPED_KEYS = OBJECT_KEYS | ARRAY_KEYS | STRING_KEYS | NUMBER_KEYS


class ScalarsLowerer(ObjectsLowerer):
    """Schemas read by their ``type``: literals, strings, numbers; objects and arrays by
    ``ObjectsLowerer``."""

    def _by_type(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        """A schema read by its ``type`` (none, one or several)."""
        s = self._normalise(_TYPE_RULES, s, loc)
        types = self._types(s, loc)
        if types is None:
            return self._untyped(s, loc, ctx, depth)
        if len(types) == 1:
            return self._typed(types[0], s, loc, ctx, depth)
        variants = tuple(self._typed(t, s, loc, ctx, depth, annotate=False) for t in types)
        return UnionNode(meta=self._meta(s, loc), variants=variants, form="type")

    def _types(self, s: dict[str, Any], loc: SourceLocation) -> list[str] | None:
        """The JSON types ``s`` (with its type names read: ``TYPE_NAME_ALIAS``) allows; None:
        every type."""
        if "type" not in s:
            return None
        raw = s["type"]
        listed = as_array(raw)
        names: list[Any] = listed if listed is not None else [raw]
        out: list[str] = []
        for i, name in enumerate(names):
            where = loc.child("type", i) if listed is not None else loc.child("type")
            if not isinstance(name, str):
                self.diags.error(
                    where, f"type is {describe(name)}", f"one of {', '.join(JSON_TYPES)}"
                )
                continue
            if self.dialect == "bfcl" and name.lower() in BFCL_TYPES:
                mapped = BFCL_TYPES[name.lower()]
                if mapped is None:
                    return None
                name = mapped
            elif self.dialect == "bfcl":
                name = name.lower()
            if name not in JSON_TYPES:
                self.diags.error(
                    where,
                    f"unknown type {name!r}",
                    f"one of {', '.join(JSON_TYPES)}",
                    hint=type_hint(name),
                )
                continue
            if name not in out:
                out.append(name)
        return out or None

    def _typed(
        self,
        name: str,
        s: dict[str, Any],
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
        *,
        annotate: bool = True,
    ) -> SchemaNode:
        meta = self._meta(s, loc) if annotate else Meta(loc=loc)
        if name == "array":
            return self._array(s, meta, loc, ctx, depth)
        if name == "object":
            return self._object(s, meta, loc, ctx, depth)
        return self._scalar(name, s, meta, loc)

    def _untyped(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        family = s.keys() & _TYPED_KEYS
        if family and self.lenient:
            read = self._normalise(_UNTYPED_RULES, s, loc)
            if read is not s:
                return self._typed("object", read, loc, ctx, depth)
        if family:
            # Without ``type``, each keyword constrains only the instances of its own type
            # (``properties`` says nothing about a string): every JSON type stays allowed, each
            # with the keywords that apply to it. Tool parameter roots are objects by contract
            # and are read with ``type: object`` by the frontends.
            variants = tuple(
                self._typed(t, s, loc, ctx, depth, annotate=False)
                for t in ("null", "boolean", "object", "array", "number", "string")
            )
            return UnionNode(meta=self._meta(s, loc), variants=variants, form="type")
        return AnyNode(meta=self._meta(s, loc))

    def _scalar(self, name: str, s: dict[str, Any], meta: Meta, loc: SourceLocation) -> SchemaNode:
        """A ``null``, ``boolean``, ``integer``, ``number`` or ``string`` schema."""
        match name:
            case "null":
                return NullNode(meta=meta)
            case "boolean":
                return BooleanNode(meta=meta)
            case "integer":
                # (a format that is not a string was never read on an integer: still not)
                fmt = s.get("format")
                return IntegerNode(
                    meta=meta,
                    bounds=self._bounds(s, loc),
                    format=fmt if isinstance(fmt, str) else None,
                )
            case "number":
                fmt = s.get("format")
                return NumberNode(
                    meta=meta,
                    bounds=self._bounds(s, loc),
                    format=fmt if isinstance(fmt, str) else None,
                )
            case _:
                return StringNode(
                    meta=meta,
                    min_length=self._count(s, "minLength", loc),
                    max_length=self._count(s, "maxLength", loc),
                    pattern=self._pattern(s, loc),
                    format=self._string(s, "format", loc),
                )

    def _const(self, s: dict[str, Any], loc: SourceLocation) -> SchemaNode:
        return LiteralNode(meta=self._meta(s, loc), values=(freeze(s["const"]),), form="const")

    def _enum(self, s: dict[str, Any], loc: SourceLocation) -> SchemaNode:
        raw = s["enum"]
        meta = self._meta(s, loc)
        if as_array(raw) is None:
            self.diags.error(
                loc.child("enum"), f"enum is {describe(raw)}", "an array of allowed values"
            )
            return AnyNode(meta=meta)
        if not raw:
            # (no rule: what a canonical empty enum means; lenient runs drop it first)
            self.diags.warning(
                loc.child("enum"),
                "enum is empty, so no value is allowed",
                "at least one allowed value",
                hint="remove the enum to allow any value",
            )
            return NeverNode(meta=meta)
        s = self._normalise(_ENUM_RULES, s, loc)
        values: list[Any] = s["enum"]
        # ``type`` narrows an enum: ``{type: string, enum: ["a", 1]}`` allows only "a".
        types = self._types(s, loc) if "type" in s else None
        kept: list[str] = []
        for v in values:
            if types is None or json_type_matches(v, types):
                text = freeze(v)
                if text not in kept:
                    kept.append(text)
        if not kept:
            declared = " or ".join(types or ())
            # (no rule: an enum its own type refuses whole, said about canonical input)
            self.diags.warning(
                loc.child("enum"),
                f"no enum value has the declared type ({declared}), so no {declared} value is "
                "allowed",
                f"enum values of type {declared}",
                hint="list values of the declared type, or change the type",
            )
            return NeverNode(meta=meta)
        return LiteralNode(meta=meta, values=tuple(kept), form="enum")

    def _pattern(self, s: dict[str, Any], loc: SourceLocation) -> str | None:
        s = self._normalise(_PATTERN_RULES, s, loc)
        pattern = self._string(s, "pattern", loc)
        if pattern is None:
            return None
        if not self._valid_regex(pattern, loc.child("pattern"), "pattern"):
            return None
        return pattern

    def _valid_regex(self, pattern: str, loc: SourceLocation, what: str) -> bool:
        """Whether ``pattern`` is an ECMA-262 regex the runtime can use; reports it if not."""
        import regex  # (here, not at the top: the ``regex`` module costs a tenth of toolbind's import)

        try:
            compile_pattern(pattern)  # ECMA-262's reading (``[]``, ``\\k<n>``; not ``(?P<n>)``)
        except regex.error as ecma:
            reason = str(ecma)
            try:  # where the pattern as written fails too, its positions are the user's
                regex.compile(pattern)
            except regex.error as as_written:
                reason = str(as_written)
            self.diags.error(
                loc,
                f"{what} {pattern!r} is not a valid regular expression ({reason})",
                "an ECMA-262 regular expression",
            )
            return False
        return True

    def _bounds(self, s: dict[str, Any], loc: SourceLocation) -> NumericBounds:
        minimum = self._number(s, "minimum", loc)
        maximum = self._number(s, "maximum", loc)
        exclusive_minimum: int | float | None = None
        exclusive_maximum: int | float | None = None
        # Draft 4 / OpenAPI 3.0 spell exclusivity as a boolean beside minimum/maximum.
        if isinstance(s.get("exclusiveMinimum"), bool):
            if s["exclusiveMinimum"] and minimum is not None:
                exclusive_minimum, minimum = minimum, None
        else:
            exclusive_minimum = self._number(s, "exclusiveMinimum", loc)
        if isinstance(s.get("exclusiveMaximum"), bool):
            if s["exclusiveMaximum"] and maximum is not None:
                exclusive_maximum, maximum = maximum, None
        else:
            exclusive_maximum = self._number(s, "exclusiveMaximum", loc)
        multiple_of = self._number(s, "multipleOf", loc)
        if multiple_of is not None and multiple_of <= 0:
            self.diags.error(
                loc.child("multipleOf"), f"multipleOf is {multiple_of}", "a number greater than 0"
            )
            multiple_of = None
        return NumericBounds(
            minimum=minimum,
            maximum=maximum,
            exclusive_minimum=exclusive_minimum,
            exclusive_maximum=exclusive_maximum,
            multiple_of=multiple_of,
        )
