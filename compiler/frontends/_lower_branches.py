"""Compiler layer (frontends): the lowerer's reading of union branches — OpenAPI's
``discriminator``, with the look-ahead of raw branches (through ``$ref``s, quietly) that it
needs. Imports ``ir``, ``diagnostics``, ``_load`` and ``_lower_scalars`` (the part below it).
"""

from __future__ import annotations

from typing import Any, Literal, cast

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import AllOfNode, Meta, SchemaNode, SourceLocation
from ._lower_scalars import ScalarsLowerer
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]


class BranchesLowerer(ScalarsLowerer):
    """Discriminators, and what raw branches declare."""

    def _discriminated(
        self,
        s: dict[str, Any],
        subs: list[Any],
        variants: tuple[SchemaNode, ...],
        combinator: str,
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
    ) -> tuple[SchemaNode, ...]:
        """OpenAPI's ``discriminator`` on a ``oneOf``/``anyOf`` of ``$ref``s: the value of
        ``propertyName`` picks the branch — the ``mapping`` keys naming it, else its schema's
        name. JSON Schema has no such keyword, and real specs leave that property an open
        string in every branch (Ory Kratos' login bodies), so every body matched several
        branches of a ``oneOf`` and was refused: each branch is read with its property
        required to be one of its values (``allOf: [{$ref}, {required, properties: {enum}}]``,
        in the models and in the schema a model sees). A discriminator that can't be read so
        (a branch that is no ``$ref``, a mapping to no branch) is said, and left an
        annotation."""
        where = loc.child("discriminator")
        read = self._discriminator(s, subs, combinator, where)
        if read is None:
            return variants
        name, targets, mapping = read
        values = self._mapped_values(mapping, targets, combinator, where)
        for i, ref in enumerate(targets):
            # OpenAPI's implicit mapping (the schema's name), for a branch whose property
            # allows that name: open, or an enum of every branch's name (Vonage's reports). One
            # that fixes it to other values (openai's ``role: {enum: [user]}`` in
            # ``ChatCompletionRequestUserMessage``) is told apart by its own value already
            if values[i]:
                continue
            allowed = self._property_values(subs[i], name, loc, ctx)
            if allowed == "open" or (isinstance(allowed, tuple) and _last(ref) in allowed):
                values[i].append(_last(ref))
            elif allowed is None:
                self.diags.note(
                    loc.child(combinator, i),
                    f"no discriminator value is known for this branch ({ref}): no mapping names "
                    f"it and its schema does not declare {name!r}; it is told apart by its "
                    "schema alone",
                )
        seen: set[str] = set()
        for vs in values:
            if seen & set(vs):
                # (no rule: canonical OpenAPI whose discriminator values cannot tell branches apart)
                self.diags.warning(
                    where,
                    "discriminator values pick more than one branch; it is ignored",
                    "each value naming one branch",
                )
                return variants
            seen.update(vs)
        out: list[SchemaNode] = []
        for i, (variant, vs) in enumerate(zip(variants, values, strict=True)):
            if not vs:
                out.append(variant)
                continue
            tag = self._lower(
                {"type": "object", "required": [name], "properties": {name: {"enum": vs}}},
                where,
                ctx,
                depth + 1,
            )
            out.append(AllOfNode(meta=Meta(loc=loc.child(combinator, i)), parts=(variant, tag)))
        return tuple(out)

    def _discriminator(
        self, s: dict[str, Any], subs: list[Any], combinator: str, where: SourceLocation
    ) -> tuple[str, list[str], dict[str, Any]] | None:
        """The discriminator's property name, the branches' ``$ref``s and its mapping; None
        (said) when it cannot be read."""
        disc = as_object(s["discriminator"])
        name = disc.get("propertyName") if disc is not None else None
        if disc is None or not isinstance(name, str):
            # (no rule: a discriminator that cannot be read is said, left an annotation)
            self.diags.warning(
                where,
                f"discriminator is {describe(s['discriminator'])}; it is ignored",
                "an object with propertyName (a string)",
            )
            return None
        refs = [
            cast("dict[str, Any]", sub).get("$ref") if isinstance(sub, dict) else None
            for sub in subs
        ]
        if not all(isinstance(r, str) for r in refs):
            # (no rule: as above; nothing is rewritten, the branches are read as written)
            self.diags.warning(
                where,
                f"discriminator on a {combinator} whose branches are not all $refs; it is "
                "ignored, so the branches are told apart by their schemas alone",
                f"each branch of the {combinator} a $ref (the discriminator's values name schemas)",
            )
            return None
        raw_mapping = disc.get("mapping", {})
        mapping = as_object(raw_mapping)
        if mapping is None:
            mapping = {}
            # (no rule: a mapping of the wrong shape, said and left out; nothing is rewritten)
            self.diags.warning(
                where.child("mapping"),
                f"mapping is {describe(raw_mapping)}; it is ignored",
                "an object: discriminator value → schema name or $ref",
            )
        return name, [cast("str", r) for r in refs], mapping

    def _mapped_values(
        self, mapping: dict[str, Any], targets: list[str], combinator: str, where: SourceLocation
    ) -> list[list[str]]:
        """The discriminator values the ``mapping`` gives each branch (a bad entry said)."""
        values: list[list[str]] = [[] for _ in targets]
        for key, target in mapping.items():
            value = str(key)  # (a YAML key 1 is the discriminator value "1")
            if not isinstance(target, str):
                # (no rule: a mapping entry of the wrong shape, said and left out)
                self.diags.warning(
                    where.child("mapping", value),
                    f"discriminator mapping {value!r} is {describe(target)}; it picks no branch",
                    "a schema name or $ref (a string)",
                )
                continue
            bare = "/" not in target and "#" not in target  # (a name: ``io.k8s.Pod`` too)
            hits = [
                i
                for i, ref in enumerate(targets)
                if ref.removeprefix("./") == target.removeprefix("./")
                or (bare and _last(ref) == target)
            ]
            if len(hits) != 1:
                # (no rule: a mapping naming no branch, said about canonical input)
                self.diags.warning(
                    where.child("mapping", value),
                    f"discriminator mapping {value!r} → {target!r} names "
                    + ("no branch" if not hits else "several branches")
                    + f" of the {combinator}; that value picks no branch",
                    f"a schema name or $ref that is one of the {combinator}'s branches",
                )
                continue
            values[hits[0]].append(value)
        return values

    def _property_values(
        self, schema: Any, name: str, loc: SourceLocation, ctx: _Context, depth: int = 0
    ) -> tuple[Any, ...] | Literal["open"] | None:
        """What the raw ``schema`` (a branch) lets property ``name`` be: ``"open"`` when it
        declares it without ``enum``/``const``, the values when it lists them (through
        ``allOf`` parts and ``$ref``s, its own or its property's), None when it does not say
        (read before the branch's definition is lowered: definitions are lowered later)."""
        s = as_object(schema)
        if s is None or depth > 16:
            return None
        if "$ref" in s:
            resolved = self._quiet_resolve(s["$ref"], ctx)
            if resolved is None:
                return None
            target, target_ctx, target_loc = resolved
            return self._property_values(target, name, target_loc, target_ctx, depth + 1)
        found: list[tuple[Any, ...] | Literal["open"] | None] = []
        prop = (as_object(s.get("properties")) or {}).get(name)
        if prop is not None:
            found.append(self._listed_values(prop, loc.child("properties", name), ctx, depth))
        for i, part in enumerate(as_array(s.get("allOf")) or []):
            found.append(self._property_values(part, name, loc.child("allOf", i), ctx, depth + 1))
        listed = [f for f in found if isinstance(f, tuple)]
        return listed[0] if listed else "open" if "open" in found else None

    def _listed_values(
        self, prop: Any, loc: SourceLocation, ctx: _Context, depth: int
    ) -> tuple[Any, ...] | Literal["open"] | None:
        """A property schema's ``enum``/``const`` values (behind a ``$ref`` too), ``"open"``
        when it lists none."""
        p = as_object(prop)
        if p is None or depth > 16:
            return None
        if "$ref" in p:
            resolved = self._quiet_resolve(p["$ref"], ctx)
            if resolved is None:
                return None
            target, target_ctx, target_loc = resolved
            return self._listed_values(target, target_loc, target_ctx, depth + 1)
        if "const" in p:
            return (p["const"],)
        enum = as_array(p.get("enum"))
        return tuple(enum) if enum is not None else "open"


def _last(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]
