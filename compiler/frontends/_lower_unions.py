"""Compiler layer (frontends): the lowerer's combinators — ``allOf``, ``anyOf``, ``oneOf``; real
specs' unions are read by the rules of ``normalise.schema_unions`` first, given the branches'
targets through the resolver. Imports ``ir``, ``diagnostics``, ``_load``, ``normalise`` and
``_lower_branches`` (the part below it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from .._load import as_array
from ..diagnostics import describe
from ..ir import (
    AllOfNode,
    AnyNode,
    Meta,
    ObjectNode,
    Property,
    RefNode,
    SchemaNode,
    SourceLocation,
    UnionNode,
)
from ..normalise._families import schema_phase
from ..normalise._schema import ANNOTATIONS
from ..normalise.schema_unions import Branches
from ._lower_branches import BranchesLowerer
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]

_UNION_RULES = schema_phase("union")
_ALL_OF_RULES = schema_phase("all-of")


class UnionsLowerer(BranchesLowerer):
    """``allOf``, ``anyOf`` and ``oneOf``."""

    def _union(
        self, s: dict[str, Any], combinator: str, loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        raw = s[combinator]
        meta = self._meta(s, loc)
        subs = as_array(raw)
        if not subs:
            self.diags.error(
                loc.child(combinator),
                f"{combinator} is {describe(raw)}",
                "a non-empty array of schemas",
            )
            return AnyNode(meta=meta)
        variants = tuple(
            self._lower(sub, loc.child(combinator, i), ctx, depth + 1) for i, sub in enumerate(subs)
        )
        if self.lenient and "discriminator" in s:
            read = self._discriminated(s, subs, variants, combinator, loc, ctx, depth)
            if read is not variants:  # (read into the branches: not kept as an annotation,
                # whose mapping names the spec's components, which the schemas written don't have)
                variants = read
                meta = self._meta({k: v for k, v in s.items() if k != "discriminator"}, loc)
        form: Literal["oneOf", "anyOf"] = "oneOf" if combinator == "oneOf" else "anyOf"
        if self.lenient:  # (the rules read the branches' targets: ``schema_unions``)
            read = Branches(
                schema=s, combinator=combinator, form=form, place=ctx, resolve=self._target
            )
            read = self._normalise(_UNION_RULES, read, loc)
            s, form = read.schema, "oneOf" if read.form == "oneOf" else "anyOf"
        union = UnionNode(meta=meta, variants=variants, form=form)
        rest = {k: v for k, v in s.items() if k not in ANNOTATIONS and k != combinator}
        if not rest:
            return union
        base = self._lower(rest, loc, ctx, depth + 1)
        if isinstance(base, AnyNode):
            return union
        return AllOfNode(meta=Meta(loc=loc), parts=(base, union))

    def _all_of(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        raw = s["allOf"]
        meta = self._meta(s, loc)
        subs = as_array(raw)
        if not subs:
            self.diags.error(
                loc.child("allOf"), f"allOf is {describe(raw)}", "a non-empty array of schemas"
            )
            return AnyNode(meta=meta)
        if self.lenient:
            read = Branches(
                schema=s, combinator="allOf", form="allOf", place=ctx, resolve=self._target
            )
            subs = self._normalise(_ALL_OF_RULES, read, loc).subs()
        parts: list[SchemaNode] = [
            self._lower(sub, loc.child("allOf", i), ctx, depth + 1) for i, sub in enumerate(subs)
        ]
        rest = {k: v for k, v in s.items() if k not in ANNOTATIONS and k != "allOf"}
        if rest:
            parts.insert(0, self._lower(rest, loc, ctx, depth + 1))
        parts = [p for p in parts if not (isinstance(p, AnyNode) and p.meta.extra is None)]
        if not parts:
            return AnyNode(meta=meta)
        if len(parts) == 1 and not isinstance(parts[0], RefNode):
            return _with_meta(parts[0], meta)
        if all(isinstance(p, ObjectNode) for p in parts):
            return _merge_objects([p for p in parts if isinstance(p, ObjectNode)], meta)
        return AllOfNode(meta=meta, parts=tuple(parts))


def _with_meta(node: SchemaNode, meta: Meta) -> SchemaNode:
    merged = Meta(
        loc=node.meta.loc,
        title=meta.title or node.meta.title,
        description=meta.description or node.meta.description,
        default=meta.default or node.meta.default,
        deprecated=meta.deprecated or node.meta.deprecated,
        extra=node.meta.extra or meta.extra,
    )
    return replace(node, meta=merged)


def _merge_objects(parts: list[ObjectNode], meta: Meta) -> ObjectNode:
    """Merge ``allOf`` members that are all inline objects into one object node."""
    props: dict[str, Property] = {}
    additional: SchemaNode | None = None
    for part in parts:
        for p in part.properties:
            if p.name in props:
                old = props[p.name]
                schema = p.schema if isinstance(old.schema, AnyNode) else old.schema
                if (
                    not isinstance(p.schema, AnyNode)
                    and not isinstance(old.schema, AnyNode)
                    and p.schema != old.schema
                ):
                    schema = AllOfNode(
                        meta=Meta(loc=p.schema.meta.loc), parts=(old.schema, p.schema)
                    )
                props[p.name] = Property(
                    name=p.name, schema=schema, required=old.required or p.required
                )
            else:
                props[p.name] = p
        if part.additional is not None:
            additional = part.additional
    return ObjectNode(meta=meta, properties=tuple(props.values()), additional=additional)
