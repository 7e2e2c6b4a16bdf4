"""Compiler layer (frontends): the lowerer's checks — the applicators that check an instance
beside its type (``not``, ``if``/``then``/``else``, ``contains``, dependencies,
``propertyNames``, ``patternProperties``, ``unevaluated*``), lowered to a ``CheckedNode``.
Imports ``ir``, ``diagnostics``, ``_load``, ``_lower_base`` and ``_lower_unions`` (the part below it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import (
    Check,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    DependentRequiredCheck,
    DependentSchemasCheck,
    EvalPlan,
    NotCheck,
    PatternPropertiesCheck,
    PropertyNamesCheck,
    SchemaNode,
    SourceLocation,
    UnevaluatedCheck,
)
from ._lower_base import CHECK_KEYS, MAX_DEPTH
from ._lower_unions import UnionsLowerer
from ._resolver import _Context  # pyright: ignore[reportPrivateUsage]

_Sub = Callable[..., SchemaNode]
"""Lowers the sub-schema at ``s[key][token]...`` (``_checked``'s ``sub``)."""


class ChecksLowerer(UnionsLowerer):
    """Applicators beside the type, and what an instance's ``unevaluated*`` leave."""

    def _checked(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        # With patternProperties, additionalProperties only covers keys no pattern matches, so
        # both are checked together and the base type allows every extra key.
        moved = CHECK_KEYS | (
            {"additionalProperties"} if "patternProperties" in s else frozenset[str]()
        )
        base = self._lower({k: v for k, v in s.items() if k not in moved}, loc, ctx, depth + 1)
        checks: list[Check] = []

        def sub(key: str, *tokens: str) -> SchemaNode:
            value: Any = s[key]
            for t in tokens:
                value = value[t]
            return self._lower(value, loc.child(key, *tokens), ctx, depth + 1)

        if "not" in s:
            checks.append(NotCheck(schema=sub("not")))
        if "if" in s and ("then" in s or "else" in s):
            checks.append(
                ConditionalCheck(
                    if_=sub("if"),
                    then=sub("then") if "then" in s else None,
                    else_=sub("else") if "else" in s else None,
                )
            )
        if "contains" in s:
            low = self._count(s, "minContains", loc)
            checks.append(
                ContainsCheck(
                    schema=sub("contains"),
                    min_contains=1 if low is None else low,
                    max_contains=self._count(s, "maxContains", loc),
                )
            )
        checks.extend(self._dependencies(s, loc, sub))
        if "propertyNames" in s:
            checks.append(PropertyNamesCheck(schema=sub("propertyNames")))
        checks.extend(self._pattern_properties(s, loc, sub))
        for kind in ("properties", "items"):
            key = "unevaluatedProperties" if kind == "properties" else "unevaluatedItems"
            if key in s:
                rest = {k: v for k, v in s.items() if k != key}
                checks.append(
                    UnevaluatedCheck(
                        kind=kind, schema=sub(key), plan=self._plan(rest, loc, ctx, depth + 1)
                    )
                )
        if not checks:
            return base
        return CheckedNode(meta=base.meta, base=base, checks=tuple(checks))

    def _dependencies(self, s: dict[str, Any], loc: SourceLocation, sub: _Sub) -> list[Check]:
        """``dependentRequired``, ``dependentSchemas`` and draft 7's ``dependencies``."""
        requires: list[tuple[str, tuple[str, ...]]] = []
        schemas: list[tuple[str, SchemaNode]] = []
        for key in ("dependentRequired", "dependentSchemas", "dependencies"):
            table = as_object(s.get(key))
            if key in s and table is None:
                self.diags.error(loc.child(key), f"{key} is {describe(s[key])}", "an object")
                continue
            for name, value in (table or {}).items():
                names = as_array(value)
                if names is not None and key != "dependentSchemas":
                    if not all(isinstance(n, str) for n in names):
                        self.diags.error(
                            loc.child(key, name),
                            f"{key} entry is {describe(value)}",
                            "an array of property names",
                        )
                        continue
                    requires.append((name, tuple(str(n) for n in names)))
                elif key != "dependentRequired":
                    schemas.append((name, sub(key, name)))
                else:
                    self.diags.error(
                        loc.child(key, name),
                        f"dependentRequired entry is {describe(value)}",
                        "an array of property names",
                    )
        checks: list[Check] = []
        if requires:
            checks.append(DependentRequiredCheck(requires=tuple(requires)))
        if schemas:
            checks.append(DependentSchemasCheck(schemas=tuple(schemas)))
        return checks

    def _pattern_properties(self, s: dict[str, Any], loc: SourceLocation, sub: _Sub) -> list[Check]:
        patterns = as_object(s.get("patternProperties"))
        if "patternProperties" in s and patterns is None:
            self.diags.error(
                loc.child("patternProperties"),
                f"patternProperties is {describe(s['patternProperties'])}",
                "an object mapping regular expressions to schemas",
            )
            return []
        if patterns is None:
            return []
        declared = tuple(as_object(s.get("properties")) or {})
        for p in patterns:
            self._valid_regex(p, loc.child("patternProperties", p), "patternProperties key")
        return [
            PatternPropertiesCheck(
                patterns=tuple((p, sub("patternProperties", p)) for p in patterns),
                declared=declared,
                additional=sub("additionalProperties") if "additionalProperties" in s else None,
            )
        ]

    def _plan(
        self,
        schema: Any,
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
        seen: frozenset[str] = frozenset(),
    ) -> EvalPlan:
        """What ``schema`` evaluates of an instance, for ``unevaluated*`` (see ``EvalPlan``)."""
        s = as_object(schema)
        if s is None or depth > MAX_DEPTH:
            return EvalPlan()
        if self._vocabulary_off:
            s = {k: v for k, v in s.items() if k not in self._vocabulary_off}
        s, ctx = self._enter(s, loc, ctx)

        def plan(value: Any, *tokens: str | int) -> EvalPlan:
            return self._plan(value, loc.child(*tokens), ctx, depth + 1, seen)

        def lower(value: Any, *tokens: str | int) -> SchemaNode:
            return self._lower(value, loc.child(*tokens), ctx, depth + 1)

        def listed(key: str) -> list[Any]:
            return as_array(s.get(key)) or []

        always = [plan(part, "allOf", i) for i, part in enumerate(listed("allOf"))]
        always.extend(self._ref_plan(s, loc, ctx, depth, seen))
        branches = [
            (lower(v, key, i), plan(v, key, i))
            for key in ("anyOf", "oneOf")
            for i, v in enumerate(listed(key))
        ]
        dependent = [
            (name, plan(v, key, name))
            for key in ("dependentSchemas", "dependencies")
            for name, v in (as_object(s.get(key)) or {}).items()
            if as_array(v) is None
        ]
        tuple_items = as_array(s.get("items"))
        prefix = len(tuple_items) if tuple_items is not None else len(listed("prefixItems"))
        return EvalPlan(
            properties=tuple(as_object(s.get("properties")) or {}),
            patterns=tuple(as_object(s.get("patternProperties")) or {}),
            all_properties="additionalProperties" in s or "unevaluatedProperties" in s,
            prefix=prefix,
            all_items=("items" in s and tuple_items is None)
            or (tuple_items is not None and "additionalItems" in s)
            or "unevaluatedItems" in s,
            contains=lower(s["contains"], "contains") if "contains" in s else None,
            always=tuple(always),
            branches=tuple(branches),
            if_=(lower(s["if"], "if"), plan(s["if"], "if")) if "if" in s else None,
            then=plan(s["then"], "then") if "if" in s and "then" in s else None,
            else_=plan(s["else"], "else") if "if" in s and "else" in s else None,
            dependent=tuple(dependent),
        )

    def _ref_plan(
        self,
        s: dict[str, Any],
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
        seen: frozenset[str],
    ) -> list[EvalPlan]:
        """What the target of ``s``'s ``$ref`` evaluates (nothing when it has none)."""
        ref = s.get("$ref")
        if not isinstance(ref, str):
            return []
        before = len(self.diags.items)
        resolved = self.resolver.resolve(ref, loc, ctx)
        del self.diags.items[before:]  # reported once, where the $ref is lowered
        if self.ref_log is not None:
            self.ref_log.append(None if resolved is None else resolved[0])
        if resolved is None or resolved[0] in seen:
            return []
        key, _, target, target_ctx, target_loc = resolved
        return [self._plan(target, target_loc, target_ctx, depth + 1, seen | {key})]
