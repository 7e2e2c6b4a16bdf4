"""Compiler layer (frontends): the lowerer's objects and arrays — ``properties``, ``required``,
``additionalProperties``, ``items``, ``prefixItems``. Imports ``ir``, ``diagnostics``, ``_load``,
``normalise`` and ``_lower_refs`` (the part below it).
"""

from __future__ import annotations

import difflib
from typing import Any

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import AnyNode, ArrayNode, Meta, ObjectNode, Property, SchemaNode, SourceLocation
from ..normalise._families import schema_phase
from ..normalise.schema_refs import properties_map_ref
from ._lower_refs import RefsLowerer
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]

_OBJECT_RULES = schema_phase("object")


class ObjectsLowerer(RefsLowerer):
    """Object and array schemas."""

    def _object(
        self, s: dict[str, Any], meta: Meta, loc: SourceLocation, ctx: _Context, depth: int
    ) -> ObjectNode:
        props_raw = s.get("properties", {})
        props_map = as_object(props_raw)
        if props_map is None:
            self.diags.error(
                loc.child("properties"),
                f"properties is {describe(props_raw)}",
                "an object mapping names to schemas",
            )
            props_map = {}
        required_list, required = self._required(s, loc)
        props_at, props_ctx = loc.child("properties"), ctx
        if self.lenient:  # (after the array's own errors: said in the order written)
            read = self._normalise(_OBJECT_RULES, s, loc)
            if read is not s:  # (the rules' ``required``: draft 3's flags in, one-way names out)
                required = {n for n in read["required"] if isinstance(n, str)}
            if properties_map_ref(s) is not None:
                props_map, props_at, props_ctx = self._followed_properties(props_map, loc, ctx)
        props: list[Property] = []
        for pname, pschema in props_map.items():
            at = props_at.child(pname)
            node = self._lower(pschema, self.moved.get(at, at), props_ctx, depth + 1)
            props.append(Property(name=pname, schema=node, required=pname in required))
        additional: SchemaNode | None = None
        if "additionalProperties" in s:
            ap = s["additionalProperties"]
            if ap is not True and ap != {}:
                additional = self._lower(ap, loc.child("additionalProperties"), ctx, depth + 1)
        self._misspelt_required(required_list or [], props_map, [p.name for p in props], loc)
        for name in sorted(required - {p.name for p in props}):
            props.append(
                Property(
                    name=name,
                    schema=additional
                    if additional is not None
                    else AnyNode(meta=Meta(loc=loc.child("required"))),
                    required=True,
                )
            )
        return ObjectNode(
            meta=meta,
            properties=tuple(props),
            additional=additional,
            min_properties=self._count(s, "minProperties", loc),
            max_properties=self._count(s, "maxProperties", loc),
        )

    def _followed_properties(
        self, props_map: dict[str, Any], loc: SourceLocation, ctx: _Context
    ) -> tuple[dict[str, Any], SourceLocation, _Context]:
        """A ``properties`` map written as one ``$ref`` (``normalise.schema_refs``'s
        ``properties-ref``): the map it leads to, where it is and the context its own ``$ref``s
        are read in. One that does not resolve is said where the ``$ref`` is (no properties)."""
        at = loc.child("properties", "$ref")
        resolved = self.resolver.resolve(props_map["$ref"], at, ctx)
        if self.ref_log is not None:
            self.ref_log.append(None if resolved is None else resolved[0])
        if resolved is None:
            return {}, loc.child("properties"), ctx
        _, _, target, target_ctx, target_loc = resolved
        found = as_object(target)
        if found is None:
            # (no rule: broken input, said and skipped)
            self.diags.warning(
                at,
                f"properties $ref leads to {describe(target)}; no properties are read",
                "a $ref to a map of property names to schemas",
            )
            return {}, loc.child("properties"), ctx
        return found, target_loc, target_ctx

    def _required(
        self, s: dict[str, Any], loc: SourceLocation
    ) -> tuple[list[Any] | None, set[str]]:
        """The ``required`` array as written (None: not an array) and the names it holds."""
        required_raw = s.get("required", [])
        required_list = as_array(required_raw)
        required: set[str] = set()
        if required_list is not None:
            for i, r in enumerate(required_list):
                if isinstance(r, str):
                    required.add(r)
                else:
                    self.diags.error(
                        loc.child("required", i),
                        f"required entry is {describe(r)}",
                        "a property name string",
                    )
        elif isinstance(required_raw, bool) and self.dialect == "bfcl":
            pass
        elif isinstance(required_raw, bool) and self.lenient:
            pass  # draft 3's form: the parent object read it (and said so)
        else:
            self.diags.error(
                loc.child("required"),
                f"required is {describe(required_raw)}",
                "an array of property names",
            )
        return required_list, required

    def _misspelt_required(
        self,
        required_list: list[Any],
        props_map: dict[str, Any],
        declared: list[str],
        loc: SourceLocation,
    ) -> None:
        """Required names without a property schema still constrain the instance; one that
        looks like a declared property misspelt (``username`` beside ``userName``) is almost
        surely a typo that makes every valid call need a field nobody will send: said, not
        guessed at."""
        for i, name in enumerate(required_list):
            if not isinstance(name, str) or name in props_map:
                continue
            close = [d for d in declared if d.lower() == name.lower()] or difflib.get_close_matches(
                name, declared, n=1, cutoff=0.85
            )
            if close:
                # (no rule: a likely typo, said and read as written)
                self.diags.warning(
                    loc.child("required", i),
                    f"required names {name!r}, a property that is not declared; it is required "
                    "with any value",
                    "the name of a declared property",
                    hint=f"did you mean {close[0]!r}?",
                )

    def _array(
        self, s: dict[str, Any], meta: Meta, loc: SourceLocation, ctx: _Context, depth: int
    ) -> ArrayNode:
        items: SchemaNode | None = None
        prefix: list[SchemaNode] = []
        raw_items = s.get("items")
        tuple_items = as_array(raw_items)
        if tuple_items is not None:  # draft 7 tuple form
            for i, sub in enumerate(tuple_items):
                prefix.append(self._lower(sub, loc.child("items", i), ctx, depth + 1))
            if "additionalItems" in s:
                items = self._lower(
                    s["additionalItems"], loc.child("additionalItems"), ctx, depth + 1
                )
        else:
            prefix_items = as_array(s.get("prefixItems"))
            if prefix_items is not None:
                for i, sub in enumerate(prefix_items):
                    prefix.append(self._lower(sub, loc.child("prefixItems", i), ctx, depth + 1))
            if raw_items is not None:
                items = self._lower(raw_items, loc.child("items"), ctx, depth + 1)
        if isinstance(items, AnyNode) and items.meta.description is None:
            items = None
        return ArrayNode(
            meta=meta,
            items=items,
            prefix_items=tuple(prefix),
            min_items=self._count(s, "minItems", loc),
            max_items=self._count(s, "maxItems", loc),
            unique_items=s.get("uniqueItems") is True,
        )
