"""Compiler layer (frontends): the lowerer's combinators — ``allOf``, ``anyOf``, ``oneOf``, with
the lenient readings of real specs' unions that need the branches' targets (``$ref``s looked
through), which is why they are not rules of ``normalise``. Imports ``ir``, ``diagnostics``,
``_load``, ``normalise`` and ``_lower_branches`` (the part below it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from .._load import as_array, as_object
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
from ..normalise._schema import ANNOTATIONS
from ._lower_branches import BranchesLowerer, schema_types
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]


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
        if self.lenient and form == "oneOf" and "discriminator" not in s:
            form = self._one_of_read(subs, combinator, loc, ctx)
        union = UnionNode(meta=meta, variants=variants, form=form)
        if self.lenient and "type" in s:
            s = self._type_beside_branches(s, subs, combinator, loc, ctx)
        rest = {k: v for k, v in s.items() if k not in ANNOTATIONS and k != combinator}
        if not rest:
            return union
        base = self._lower(rest, loc, ctx, depth + 1)
        if isinstance(base, AnyNode):
            return union
        return AllOfNode(meta=Meta(loc=loc), parts=(base, union))

    def _one_of_read(
        self, subs: list[Any], combinator: str, loc: SourceLocation, ctx: _Context
    ) -> Literal["oneOf", "anyOf"]:
        """``oneOf``, or ``anyOf`` when its branches surely overlap (said)."""
        open_branches = [i for i, sub in enumerate(subs) if self._accepts_empty_object(sub, ctx)]
        if len(open_branches) > 1:
            # Vonage's SMS response is oneOf [SMS, Error], two objects that require nothing:
            # every response matched both, so every call "failed" on the API's own answer
            self.diags.warning(
                loc.child(combinator),
                f"oneOf branches {', '.join(map(str, open_branches))} require nothing: an "
                "object they all accept ({} and every object with none of their properties) "
                "matches more than one, and oneOf refuses it; read as anyOf (the first "
                "branch that matches)",
                "branches that exclude each other (a required property, a const/enum, a "
                "discriminator)",
                hint="write anyOf, or make the branches exclusive",
            )
            return "anyOf"
        nested = self._nested_branches(subs, ctx)
        if nested is None:
            return "oneOf"
        # Chroma's metadata values are oneOf [boolean, integer, number, string, ...] (a Rust
        # enum as utoipa writes it): an integer is a number too, so every integer matched two
        # branches and was refused, in Calls and in the API's own answers
        inner, outer = nested
        self.diags.warning(
            loc.child(combinator),
            f"oneOf branch {inner} is within branch {outer}: every value branch {inner} "
            "accepts matches both, and oneOf refuses it, so no value could ever be read "
            f"as branch {inner}; read as anyOf (the first branch that matches)",
            "branches that exclude each other (an integer is also a number: type integer "
            "beside type number matches every integer twice)",
            hint="write anyOf, or drop or narrow the wider branch",
        )
        return "anyOf"

    def _type_beside_branches(
        self,
        s: dict[str, Any],
        subs: list[Any],
        combinator: str,
        loc: SourceLocation,
        ctx: _Context,
    ) -> dict[str, Any]:
        """``s`` without its ``type`` when that type excludes branches of its ``oneOf``/``anyOf``
        which declare their own: Label Studio's filter value is ``type: object`` beside
        ``oneOf [string, integer, number, boolean, object, object]`` (drf-spectacular writes the
        serializer field's type beside the union), so every number was refused — in the Calls
        of a number filter, which the API needs — while no author writes branches that can
        never match. Read as the branches say, with a warning; ``s`` as it is otherwise."""
        outer = schema_types({"type": s["type"]})
        if outer is None:
            return s
        excluded: list[str] = []
        for i, sub in enumerate(subs):
            read = self._dereferenced(sub, ctx)
            types = schema_types(read[0]) if read is not None else None
            if types is not None and not any(
                t in outer
                or (t == "integer" and "number" in outer)
                or (t == "number" and "integer" in outer)
                for t in types
            ):
                excluded.append(f"{i} ({' or '.join(sorted(types))})")
        if not excluded:
            return s
        declared = " or ".join(sorted(outer))
        self.diags.warning(
            loc.child("type"),
            f"type {declared} beside {combinator} excludes branch(es) {', '.join(excluded)}: "
            "no value could match them; read as the branches' own types (the type beside them "
            "left out)",
            f"a type that allows every branch of {combinator}",
            hint=f"drop the type beside {combinator}, or widen it to the branches' types",
        )
        return {k: v for k, v in s.items() if k != "type"}

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
            # a part with ``properties`` and no ``type`` beside one that says object (Lago's
            # ``allOf: [{$ref: Base}, {properties: ...}]``) is an object already: not said.
            # (The parts' $refs are looked through only when a part lacks its type.)
            typed = [_typed_object(sub) for sub in subs]
            if any(t is not sub for t, sub in zip(typed, subs, strict=True)) and (
                s.get("type") == "object" or any(self._says_object(sub, ctx) for sub in subs)
            ):
                subs = typed
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


def _typed_object(schema: Any) -> Any:
    """``schema`` with ``type: object`` when it has ``properties`` and no ``type``."""
    s = as_object(schema)
    if s is None or "type" in s or "properties" not in s or "$ref" in s:
        return schema
    return {"type": "object", **s}


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
