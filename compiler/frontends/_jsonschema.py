"""Compiler layer (frontends): JSON Schema → IR schema nodes, with ``$ref`` resolution.

Imports ``ir``, ``diagnostics``, ``_load``, ``_resolver``, ``normalise`` and the lowerer's parts
(``_lower_*``). Every frontend lowers its parameter and output schemas through ``SchemaLowerer``
so all formats share one reading of JSON Schema.

Each schema object is first read by the normalising rules (``toolbind.compiler.normalise``,
``schema_*`` families), which turn real specs' quirks into canonical JSON Schema and say so;
``_lower`` then dispatches on the keywords to the part that reads their family: references
(``_lower_refs``), objects and arrays (``_lower_objects``), scalars (``_lower_scalars``),
combinators (``_lower_unions``, with ``_lower_branches``), checks (``_lower_checks``); each part
is a subclass of the one before it, ``SchemaLowerer`` of the last (see ``_lower_base``).
"""

from __future__ import annotations

from typing import Any

from .._load import as_object
from ..diagnostics import describe
from ..ir import AnyNode, Meta, NeverNode, NullNode, SchemaNode, SourceLocation, UnionNode
from ..normalise._families import schema_phase
from ..normalise.schema_types import BFCL_TYPES
from ._lower_base import CHECK_KEYS, MAX_DEPTH
from ._lower_checks import ChecksLowerer
from ._resolver import Dialect, _Context  # pyright: ignore[reportPrivateUsage]

__all__ = ["BFCL_TYPES", "Dialect", "SchemaLowerer"]

_ON_ENTRY = schema_phase("entry")
"""The rules a schema is read by first (its shape, its draft, what ``$ref`` replaces)."""
_BEFORE_KEYWORDS = schema_phase("before-keywords")
"""The rules read after the checks are split off (each part of the schema is read by them)."""


class SchemaLowerer(ChecksLowerer):
    """Lowers JSON Schema values to IR nodes, collecting shared definitions as it goes.

    Its fields (``LowererBase``) say how to read: ``dialect``, ``lenient``, ``draft``, where
    ``$ref``s may lead; ``lower_root`` lowers one schema, ``definitions`` collects what its
    ``$ref``s name, ``report_extensions`` says what was dropped."""

    def _lower(self, schema: Any, loc: SourceLocation, ctx: _Context, depth: int) -> SchemaNode:
        if depth > MAX_DEPTH:
            self.diags.error(loc, f"schema nested more than {MAX_DEPTH} levels deep", None)
            return AnyNode(meta=Meta(loc=loc))
        if schema is True:
            return AnyNode(meta=Meta(loc=loc))
        if schema is False:
            return NeverNode(meta=Meta(loc=loc))
        s = as_object(self._normalise(_ON_ENTRY, schema, loc))
        if s is None:
            self.diags.error(
                loc, f"schema is {describe(schema)}", "a JSON Schema object or boolean"
            )
            return AnyNode(meta=Meta(loc=loc))
        if self._vocabulary_off:
            s = {k: v for k, v in s.items() if k not in self._vocabulary_off}
        s, ctx = self._enter(s, loc, ctx)
        if s.keys() & CHECK_KEYS:
            return self._checked(s, loc, ctx, depth)
        s = self._normalise(_BEFORE_KEYWORDS, s, loc)
        if (self.dialect == "openapi30" or self.lenient) and s.get("nullable") is True:
            return self._nullable(s, loc, ctx, depth)
        if "$ref" in s:  # (after nullable: beside a $ref it widens the reference, too)
            return self._with_siblings(s, loc, ctx, depth)
        if "allOf" in s:
            return self._all_of(s, loc, ctx, depth)
        for combinator in ("anyOf", "oneOf"):
            if combinator in s:
                return self._union(s, combinator, loc, ctx, depth)
        if "const" in s:
            return self._const(s, loc)
        if "enum" in s:
            return self._enum(s, loc)
        return self._by_type(s, loc, ctx, depth)

    def _nullable(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        """OpenAPI 3.0's ``nullable: true`` (what the nullable rules make of the other
        spellings): the schema without it, or null."""
        inner = self._lower({k: v for k, v in s.items() if k != "nullable"}, loc, ctx, depth + 1)
        if "enum" in s and None in s["enum"] and "type" not in s:
            return inner  # (a type narrows the enum's null away: 3.0.3 asks to list it)
        return UnionNode(
            meta=Meta(loc=loc), variants=(inner, NullNode(meta=Meta(loc=loc))), form="type"
        )
