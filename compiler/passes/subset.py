"""Compiler layer (passes): instance checks, sample instances and a subset check over IR schema
nodes. Imports ``ir`` and the runtime's ECMA-262 pattern translation only.

``SchemaTable`` answers three questions about the schemas of one spec:

* ``valid(node, value)``: does ``value`` match ``node``? ``True``/``False``, or ``None`` where a
  keyword is not decided here (``not``, ``if``/``then``, ``unevaluated*``…).
* ``sample(node)``: a small instance of ``node`` (checked with ``valid``), or ``NO_VALUE``.
* ``subset(a, b, other)``: is every instance of ``a`` (this table) an instance of ``b`` (the
  ``other`` table)? ``Verdict(True)``, ``Verdict(False, witness)`` with a witness checked on both
  sides, or ``Verdict(None)`` when it cannot decide — never ``True`` by guessing.

The subset check reads objects on their *declared surface*: a key that an object without
``additionalProperties`` does not declare is taken as never sent (a model fills the parameters
it is shown). Closing ``additionalProperties`` is still reported as narrowing, with a witness
that carries an undeclared key.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any, Final, cast

from toolbind.contract import compile_pattern, json_equal, json_type

from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    Definition,
    IntegerNode,
    LiteralNode,
    Meta,
    NeverNode,
    NullNode,
    NumberNode,
    NumericBounds,
    ObjectNode,
    RefNode,
    SchemaNode,
    StringNode,
    UnionNode,
    thaw,
)


class _NoValue:
    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Final = _NoValue()
UNDECLARED_KEY = "undeclared_key"
_ANY_VALUES: tuple[Any, ...] = (None, False, 0, 0.5, "", "a", [], {})
_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


@dataclass(frozen=True, slots=True)
class Verdict:
    """``holds``: True (proved), False (disproved by ``witness``) or None (undecided)."""

    holds: bool | None
    witness: Any = NO_VALUE


TRUE = Verdict(True)
UNKNOWN = Verdict(None)


class SchemaTable:
    """The definitions of one spec, for ``valid``/``sample``/``subset`` over its nodes."""

    def __init__(self, definitions: tuple[Definition, ...] = (), source: str = "") -> None:
        self.defs = {d.key: d.node for d in definitions}
        self.source = source
        self._samples: dict[int, Any] = {}
        self._shapes: dict[int, tuple[Any, bool]] = {}
        self._same: dict[int, dict[str, bool]] = {}
        self._keys: dict[str, SchemaNode] | None = None

    def ref_key(self, target: str) -> str:
        """A definition key comparable across versions: the pointer for this spec's own
        definitions, the file relative to this spec's directory otherwise."""
        file, _, pointer = target.partition("#")
        if file == self.source:
            return "#" + pointer
        here = self.source.rsplit("/", 1)[0] + "/" if "/" in self.source else ""
        return (file[len(here) :] if here and file.startswith(here) else file) + "#" + pointer

    def shape(self, node: SchemaNode) -> tuple[Any, bool]:
        """A hashable description of what ``node`` accepts, without annotations or locations
        (a ``$ref`` as ``ref_key`` of its target), and whether it holds a ``$ref``."""
        key = id(node)
        found = self._shapes.get(key)
        if found is None:
            found = self._shape(node)
            self._shapes[key] = found
        return found

    def same(self, a: SchemaNode, other: SchemaTable, b: SchemaNode) -> bool:
        """Whether ``a`` (here) and ``b`` (in ``other``) accept the same instances because they
        are written the same, ``$ref``'d definitions included (annotations aside)."""
        sa, refs = self.shape(a)
        if sa != other.shape(b)[0]:
            return False
        return not refs or all(self._same_definition(k, other) for k in _ref_keys(sa))

    def _same_definition(self, key: str, other: SchemaTable) -> bool:
        memo = self._same.setdefault(id(other), {})
        if key in memo:
            return memo[key]
        mine = self._by_ref_key().get(key)
        theirs = other._by_ref_key().get(key)  # pyright: ignore[reportPrivateUsage]
        if mine is None or theirs is None:
            memo[key] = False
            return False
        memo[key] = True  # a recursive definition: assumed while its parts are compared
        sa, refs = self.shape(mine)
        result = sa == other.shape(theirs)[0] and (
            not refs or all(self._same_definition(k, other) for k in _ref_keys(sa))
        )
        memo[key] = result
        return result

    def _by_ref_key(self) -> dict[str, SchemaNode]:
        if self._keys is None:
            self._keys = {self.ref_key(k): node for k, node in self.defs.items()}
        return self._keys

    def _shape(self, value: Any) -> tuple[Any, bool]:
        if isinstance(value, tuple):
            parts = [self._shape(v) for v in cast("tuple[Any, ...]", value)]
            return tuple(p for p, _ in parts), any(r for _, r in parts)
        if isinstance(value, RefNode):
            return ("ref", self.ref_key(value.target)), True
        if hasattr(value, "__dataclass_fields__"):
            if isinstance(value, Meta):
                return None, False
            parts = [
                (f.name, self.shape(v) if _is_node(v) else self._shape(v))
                for f in fields(value)
                if f.name not in ("meta", "plan")
                for v in (getattr(value, f.name),)
            ]
            return (
                (type(value).__name__, *((n, p) for n, (p, _) in parts)),
                any(r for _, (_, r) in parts),
            )
        return value, False

    # -- resolution -------------------------------------------------------------------------

    def resolve(self, node: SchemaNode) -> SchemaNode:
        seen: set[str] = set()
        while isinstance(node, RefNode):
            if node.target in seen or node.target not in self.defs:
                return AnyNode(meta=node.meta) if node.target not in self.defs else node
            seen.add(node.target)
            node = self.defs[node.target]
        return node

    def types(self, node: SchemaNode, depth: int = 0) -> frozenset[str] | None:
        """The JSON types ``node`` admits (None: cannot say)."""
        node = self.resolve(node)
        if depth > 32:
            return None
        match node:
            case AnyNode():
                return frozenset(_TYPES)
            case NeverNode():
                return frozenset()
            case NullNode():
                return frozenset({"null"})
            case BooleanNode():
                return frozenset({"boolean"})
            case IntegerNode():
                return frozenset({"integer"})
            case NumberNode():
                return frozenset({"integer", "number"})
            case StringNode():
                return frozenset({"string"})
            case ArrayNode():
                return frozenset({"array"})
            case ObjectNode():
                return frozenset({"object"})
            case LiteralNode():
                return frozenset(json_type(thaw(v)) for v in node.values)
            case UnionNode():
                out: set[str] = set()
                for v in node.variants:
                    t = self.types(v, depth + 1)
                    if t is None:
                        return None
                    out |= t
                return frozenset(out)
            case AllOfNode():
                result = frozenset(_TYPES)
                for p in node.parts:
                    t = self.types(p, depth + 1)
                    if t is not None:
                        result = result & t
                return result
            case CheckedNode():
                return self.types(node.base, depth + 1)
            case RefNode():
                return None

    # -- validation -------------------------------------------------------------------------

    def valid(self, node: SchemaNode, value: Any, depth: int = 0) -> bool | None:
        """Whether ``value`` matches ``node`` (None: a keyword this check does not decide)."""
        if depth > 64:
            return None
        node = self.resolve(node)
        match node:
            case AnyNode():
                return True
            case NeverNode():
                return False
            case NullNode():
                return value is None
            case BooleanNode():
                return isinstance(value, bool)
            case IntegerNode():
                if json_type(value) != "integer":
                    return False
                return _in_bounds(node.bounds, value)
            case NumberNode():
                if json_type(value) not in ("integer", "number"):
                    return False
                return _in_bounds(node.bounds, value)
            case StringNode():
                if not isinstance(value, str):
                    return False
                n = len(value)
                if node.min_length is not None and n < node.min_length:
                    return False
                if node.max_length is not None and n > node.max_length:
                    return False
                if node.pattern is not None:
                    try:
                        return compile_pattern(node.pattern).search(value) is not None
                    except Exception:  # an unusual pattern: undecided
                        return None
                return True  # ``format`` is an annotation in generated models by default
            case LiteralNode():
                return any(json_equal(thaw(v), value) for v in node.values)
            case ArrayNode():
                return self._valid_array(node, value, depth)
            case ObjectNode():
                return self._valid_object(node, value, depth)
            case UnionNode():
                results = [self.valid(v, value, depth + 1) for v in node.variants]
                if node.form == "oneOf":
                    if None in results:
                        return None
                    return results.count(True) == 1
                if True in results:
                    return True
                return None if None in results else False
            case AllOfNode():
                results = [self.valid(p, value, depth + 1) for p in node.parts]
                if False in results:
                    return False
                return None if None in results else True
            case CheckedNode():
                base = self.valid(node.base, value, depth + 1)
                return False if base is False else None
            case RefNode():
                return None

    def _valid_array(self, node: ArrayNode, value: Any, depth: int) -> bool | None:
        if not isinstance(value, list):
            return False
        items = cast("list[Any]", value)
        if node.min_items is not None and len(items) < node.min_items:
            return False
        if node.max_items is not None and len(items) > node.max_items:
            return False
        if node.unique_items:
            for i, x in enumerate(items):
                if any(json_equal(x, y) for y in items[i + 1 :]):
                    return False
        undecided = False
        for i, item in enumerate(items):
            if i < len(node.prefix_items):
                r = self.valid(node.prefix_items[i], item, depth + 1)
            elif node.items is not None:
                r = self.valid(node.items, item, depth + 1)
            else:
                r = True
            if r is False:
                return False
            undecided |= r is None
        return None if undecided else True

    def _valid_object(self, node: ObjectNode, value: Any, depth: int) -> bool | None:
        if not isinstance(value, dict):
            return False
        obj = cast("dict[str, Any]", value)
        if node.min_properties is not None and len(obj) < node.min_properties:
            return False
        if node.max_properties is not None and len(obj) > node.max_properties:
            return False
        declared = {p.name: p for p in node.properties}
        for p in node.properties:
            if p.required and p.name not in obj:
                return False
        undecided = False
        for key, item in obj.items():
            prop = declared.get(key)
            if prop is not None:
                r = self.valid(prop.schema, item, depth + 1)
            elif node.additional is not None:
                r = self.valid(node.additional, item, depth + 1)
            else:
                r = True
            if r is False:
                return False
            undecided |= r is None
        return None if undecided else True

    # -- samples ----------------------------------------------------------------------------

    def sample(self, node: SchemaNode) -> Any:
        """A small instance of ``node`` that ``valid`` accepts, or ``NO_VALUE``."""
        key = id(node)
        if key not in self._samples:
            self._samples[key] = NO_VALUE  # a recursive schema's own sample is not ready yet
            for candidate in self._candidates(node, 0):
                if self.valid(node, candidate) is True:
                    self._samples[key] = candidate
                    break
        return self._samples[key]

    def candidates(self, node: SchemaNode) -> list[Any]:
        """Instances of ``node`` worth trying as witnesses: a sample and values at its edges."""
        return [c for c in self._candidates(node, 0) if self.valid(node, c) is True]

    def _candidates(self, node: SchemaNode, depth: int) -> list[Any]:
        if depth > 16:
            return []
        node = self.resolve(node)
        out: list[Any] = []
        if node.meta.default is not None:
            out.append(thaw(node.meta.default))
        match node:
            case AnyNode():
                out.extend(_ANY_VALUES)
            case NeverNode() | RefNode():
                pass
            case NullNode():
                out.append(None)
            case BooleanNode():
                out.extend((False, True))
            case IntegerNode():
                out.extend(_numbers(node.bounds, integer=True))
            case NumberNode():
                out.extend(_numbers(node.bounds, integer=False))
            case StringNode():
                out.extend(_strings(node))
            case LiteralNode():
                out.extend(thaw(v) for v in node.values)
            case ArrayNode():
                out.extend(self._arrays(node, depth))
            case ObjectNode():
                out.extend(self._objects(node, depth))
            case UnionNode():
                for v in node.variants:
                    out.extend(self._candidates(v, depth + 1))
            case AllOfNode():
                for p in node.parts:
                    out.extend(self._candidates(p, depth + 1))
            case CheckedNode():
                out.extend(self._candidates(node.base, depth + 1))
        if node.meta.extra is not None:
            extra: Any = thaw(node.meta.extra)
            if isinstance(extra, dict):
                table = cast("dict[str, Any]", extra)
                examples: Any = table.get("examples")
                if isinstance(examples, list):
                    out.extend(cast("list[Any]", examples))
                if "example" in table:
                    out.append(table["example"])
        return out

    def _first(self, node: SchemaNode, depth: int) -> Any:
        for c in self._candidates(node, depth + 1):
            if self.valid(node, c) is True:
                return c
        return NO_VALUE

    def _arrays(self, node: ArrayNode, depth: int) -> list[Any]:
        prefix = [self._first(p, depth) for p in node.prefix_items]
        if any(p is NO_VALUE for p in prefix):
            return []
        need = max(node.min_items or 0, len(prefix))
        out: list[list[Any]] = []
        if need <= len(prefix):
            out.append(prefix)
        item_values = (
            [c for c in self._candidates(node.items, depth + 1) if self.valid(node.items, c)]
            if node.items is not None
            else list(_ANY_VALUES)
        )
        if item_values:
            extra = need - len(prefix)
            if extra > 0:
                distinct: list[Any] = []
                for v in item_values:
                    if not any(json_equal(v, d) for d in distinct):
                        distinct.append(v)
                if node.unique_items:
                    if len(distinct) >= extra:
                        out.append(prefix + distinct[:extra])
                else:
                    out.append(prefix + [item_values[0]] * extra)
            out.append(prefix + [item_values[0]] * max(extra, 1))
        return out

    def _objects(self, node: ObjectNode, depth: int) -> list[Any]:
        base: dict[str, Any] = {}
        for p in node.properties:
            if p.required:
                v = self._first(p.schema, depth)
                if v is NO_VALUE:
                    return []
                base[p.name] = v
        out: list[Any] = [base]
        if node.min_properties is not None and len(base) < node.min_properties:
            filled = dict(base)
            for p in node.properties:
                if len(filled) >= node.min_properties:
                    break
                if p.name not in filled:
                    v = self._first(p.schema, depth)
                    if v is not NO_VALUE:
                        filled[p.name] = v
            out.insert(0, filled)
        return out

    # -- subset -----------------------------------------------------------------------------

    def subset(self, a: SchemaNode, b: SchemaNode, other: SchemaTable) -> Verdict:
        """Whether every instance of ``a`` (of this table) is one of ``b`` (of ``other``)."""
        return _Subset(self, other).check(a, b, 0)


class _Subset:
    def __init__(self, left: SchemaTable, right: SchemaTable) -> None:
        self.left = left
        self.right = right
        self.assumed: set[tuple[int, int]] = set()

    def witness(self, w: Any) -> Verdict:
        """A disproof, if ``w`` is really in a and not in b; else undecided."""
        return Verdict(False, w)

    def confirm(self, a: SchemaNode, b: SchemaNode, w: Any) -> Verdict:
        if w is NO_VALUE:
            return UNKNOWN
        if self.left.valid(a, w) is True and self.right.valid(b, w) is False:
            return Verdict(False, w)
        return UNKNOWN

    def search(self, a: SchemaNode, b: SchemaNode) -> Verdict:
        """Try ``a``'s candidates against ``b``."""
        for c in self.left.candidates(a):
            if self.right.valid(b, c) is False:
                return Verdict(False, c)
        return UNKNOWN

    def check(self, a: SchemaNode, b: SchemaNode, depth: int) -> Verdict:
        if depth > 48:
            return UNKNOWN
        a = self.left.resolve(a)
        b = self.right.resolve(b)
        if isinstance(a, RefNode) or isinstance(b, RefNode):
            return UNKNOWN
        pair = (id(a), id(b))
        if pair in self.assumed:  # a recursive schema: assume, prove the rest (coinduction)
            return TRUE
        self.assumed.add(pair)
        try:
            return self._check(a, b, depth)
        finally:
            self.assumed.discard(pair)

    def _check(self, a: SchemaNode, b: SchemaNode, depth: int) -> Verdict:
        if isinstance(b, AnyNode) or isinstance(a, NeverNode):
            return TRUE
        if self.left.same(a, self.right, b):
            return TRUE
        # ``a`` a union: each variant must fit (oneOf instances are anyOf instances)
        if isinstance(a, UnionNode):
            for v in a.variants:
                r = self.check(v, b, depth + 1)
                if r.holds is not True:
                    return r
            return TRUE
        if isinstance(a, LiteralNode):
            undecided = False
            for text in a.values:
                value = thaw(text)
                r = self.right.valid(b, value)
                if r is False:
                    return Verdict(False, value)
                undecided |= r is None
            return UNKNOWN if undecided else TRUE
        if isinstance(a, CheckedNode):  # checks only narrow ``a``
            r = self.check(a.base, b, depth + 1)
            return TRUE if r.holds is True else (self.search(a, b) if r.holds is False else r)
        if isinstance(a, AllOfNode):
            for p in a.parts:
                if self.check(p, b, depth + 1).holds is True:
                    return TRUE
            return self.search(a, b)
        if isinstance(b, AllOfNode):
            for p in b.parts:
                r = self.check(a, p, depth + 1)
                if r.holds is not True:
                    return (
                        r
                        if r.holds is False and self.right.valid(b, r.witness) is False
                        else (UNKNOWN if r.holds is None else self.search(a, b))
                    )
            return TRUE
        if isinstance(b, CheckedNode):
            r = self.check(a, b.base, depth + 1)
            if r.holds is False:
                return r
            return self.search(a, b)
        if isinstance(b, UnionNode):
            return self._into_union(a, b, depth)
        if isinstance(b, NeverNode):
            return self.confirm(a, b, self.left.sample(a))
        if isinstance(a, AnyNode):
            for v in _ANY_VALUES:
                if self.right.valid(b, v) is False:
                    return Verdict(False, v)
            return UNKNOWN
        if isinstance(b, LiteralNode):
            if isinstance(a, NullNode):
                return TRUE if self.right.valid(b, None) else Verdict(False, None)
            if isinstance(a, BooleanNode):
                for v in (False, True):
                    if not self.right.valid(b, v):
                        return Verdict(False, v)
                return TRUE
            return self.search(a, b)
        ta = self.left.types(a)
        tb = self.right.types(b)
        if ta is not None and tb is not None and not ta <= tb:
            return self.search(a, b)
        match a, b:
            case (NullNode(), NullNode()) | (BooleanNode(), BooleanNode()):
                return TRUE
            case (IntegerNode() | NumberNode(), IntegerNode() | NumberNode()):
                return self._numbers(a, b)
            case (StringNode(), StringNode()):
                return self._strings(a, b)
            case (ArrayNode(), ArrayNode()):
                return self._arrays(a, b, depth)
            case (ObjectNode(), ObjectNode()):
                return self._objects(a, b, depth)
            case _:
                return self.search(a, b)

    def _into_union(self, a: SchemaNode, b: UnionNode, depth: int) -> Verdict:
        ta = self.left.types(a)
        for i, v in enumerate(b.variants):
            if self.check(a, v, depth + 1).holds is True:
                if b.form != "oneOf":
                    return TRUE
                # oneOf: the other variants must not match an instance of ``a`` too
                others = [w for j, w in enumerate(b.variants) if j != i]
                if ta is not None and all(
                    (t := self.right.types(w)) is not None and not (t & ta) for w in others
                ):
                    return TRUE
                return self.search(a, b)
        return self.search(a, b)

    def _numbers(self, a: IntegerNode | NumberNode, b: IntegerNode | NumberNode) -> Verdict:
        fits = True
        if isinstance(b, IntegerNode) and isinstance(a, NumberNode):
            fits = False
        lo_a, lo_a_open = _lower(a.bounds, integer=isinstance(a, IntegerNode))
        hi_a, hi_a_open = _upper(a.bounds, integer=isinstance(a, IntegerNode))
        lo_b, lo_b_open = _lower(b.bounds, integer=isinstance(a, IntegerNode))
        hi_b, hi_b_open = _upper(b.bounds, integer=isinstance(a, IntegerNode))
        if lo_b is not None and (
            lo_a is None or lo_a < lo_b or (lo_a == lo_b and lo_b_open and not lo_a_open)
        ):
            fits = False
        if hi_b is not None and (
            hi_a is None or hi_a > hi_b or (hi_a == hi_b and hi_b_open and not hi_a_open)
        ):
            fits = False
        mb = b.bounds.multiple_of
        if mb is not None:
            ma = a.bounds.multiple_of
            if ma is None:
                if not (isinstance(a, IntegerNode) and Fraction(str(mb)) == 1):
                    fits = False
            elif Fraction(str(ma)) % Fraction(str(mb)) != 0:
                fits = False
        if fits:
            return TRUE
        return self._search_numbers(a, b)

    def _search_numbers(self, a: IntegerNode | NumberNode, b: IntegerNode | NumberNode) -> Verdict:
        tries: list[Any] = list(self.left.candidates(a))
        for bound in (
            b.bounds.minimum,
            b.bounds.maximum,
            b.bounds.exclusive_minimum,
            b.bounds.exclusive_maximum,
        ):
            if bound is not None:
                for delta in (0, -1, 1, -0.5, 0.5):
                    tries.append(bound + delta)
        tries.extend((0.5, 1.5, -1, 1, 3, 7, 10**6, -(10**6)))
        for c in tries:
            if self.left.valid(a, c) is True and self.right.valid(b, c) is False:
                return Verdict(False, c)
        return UNKNOWN

    def _strings(self, a: StringNode, b: StringNode) -> Verdict:
        fits = True
        if b.min_length is not None and (a.min_length or 0) < b.min_length:
            fits = False
        if b.max_length is not None and (a.max_length is None or a.max_length > b.max_length):
            fits = False
        if b.pattern is not None and b.pattern != a.pattern:
            fits = False
        if fits:
            return TRUE
        tries: list[Any] = list(self.left.candidates(a))
        for n in {a.min_length or 0, (b.min_length or 1) - 1, (b.max_length or 0) + 1}:
            if n >= 0:
                tries.extend(("a" * n, "0" * n, " " * n))
        for c in tries:
            if self.left.valid(a, c) is True and self.right.valid(b, c) is False:
                return Verdict(False, c)
        return UNKNOWN

    def _arrays(self, a: ArrayNode, b: ArrayNode, depth: int) -> Verdict:
        if a.prefix_items or b.prefix_items:
            return self.search(a, b)
        if b.items is not None:
            item = self.check(a.items or AnyNode(meta=a.meta), b.items, depth + 1)
            if item.holds is False:
                return self.confirm(a, b, _pad(self.left, a, item.witness))
            if item.holds is None:
                return UNKNOWN
        fits = True
        if b.min_items is not None and (a.min_items or 0) < b.min_items:
            fits = False
        if b.max_items is not None and (a.max_items is None or a.max_items > b.max_items):
            fits = False
        if b.unique_items and not a.unique_items:
            fits = False
        if fits:
            return TRUE
        tries: list[Any] = list(self.left.candidates(a))
        items = self.left.candidates(a.items) if a.items is not None else list(_ANY_VALUES)
        if items:
            for n in {a.min_items or 0, (b.min_items or 1) - 1, (b.max_items or 0) + 1, 2}:
                tries.append([items[0]] * n)
        for c in tries:
            if self.left.valid(a, c) is True and self.right.valid(b, c) is False:
                return Verdict(False, c)
        return UNKNOWN

    def _objects(self, a: ObjectNode, b: ObjectNode, depth: int) -> Verdict:
        props_a = {p.name: p for p in a.properties}
        props_b = {p.name: p for p in b.properties}
        base = self.left.sample(a)
        if base is NO_VALUE:
            return UNKNOWN
        for p in b.properties:
            if p.required and not (p.name in props_a and props_a[p.name].required):
                w = {k: v for k, v in base.items() if k != p.name}
                return self.confirm(a, b, w)
        undecided = False
        for name, pa in props_a.items():
            target = props_b[name].schema if name in props_b else b.additional
            if target is None:
                continue
            r = self.check(pa.schema, target, depth + 1)
            if r.holds is False:
                return self.confirm(a, b, {**base, name: r.witness})
            undecided |= r.holds is None
        if a.additional is not None:
            for name, pb in props_b.items():
                if name not in props_a:
                    r = self.check(a.additional, pb.schema, depth + 1)
                    if r.holds is False:
                        return self.confirm(a, b, {**base, name: r.witness})
                    undecided |= r.holds is None
        if b.additional is not None:
            key = _fresh_key(props_a, props_b)
            r = self.check(a.additional or AnyNode(meta=a.meta), b.additional, depth + 1)
            if r.holds is False:
                return self.confirm(a, b, {**base, key: r.witness})
            undecided |= r.holds is None
        if b.min_properties is not None and (a.min_properties or 0) < b.min_properties:
            return self.search(a, b) if self.search(a, b).holds is False else UNKNOWN
        if b.max_properties is not None and (
            a.max_properties is None or a.max_properties > b.max_properties
        ):
            return self.search(a, b) if self.search(a, b).holds is False else UNKNOWN
        return UNKNOWN if undecided else TRUE


def _fresh_key(*tables: dict[str, Any]) -> str:
    key = UNDECLARED_KEY
    while any(key in t for t in tables):
        key += "_"
    return key


def _pad(table: SchemaTable, a: ArrayNode, item: Any) -> Any:
    """An array of ``a`` holding ``item`` (first), filled to its minimum length."""
    if item is NO_VALUE:
        return NO_VALUE
    need = max(a.min_items or 0, 1)
    out = [item]
    fill = table.candidates(a.items) if a.items is not None else list(_ANY_VALUES)
    for v in fill:
        if len(out) >= need:
            break
        if not a.unique_items or not any(json_equal(v, x) for x in out):
            out.append(v)
    return out


def _lower(b: NumericBounds, *, integer: bool) -> tuple[Fraction | None, bool]:
    lo: Fraction | None = None
    open_ = False
    if b.minimum is not None:
        lo = Fraction(str(b.minimum))
    if b.exclusive_minimum is not None:
        x = Fraction(str(b.exclusive_minimum))
        if lo is None or x >= lo:
            lo, open_ = x, True
    if integer and lo is not None:
        lo, open_ = (Fraction(math.floor(lo) + 1) if open_ else Fraction(math.ceil(lo))), False
    return lo, open_


def _upper(b: NumericBounds, *, integer: bool) -> tuple[Fraction | None, bool]:
    hi: Fraction | None = None
    open_ = False
    if b.maximum is not None:
        hi = Fraction(str(b.maximum))
    if b.exclusive_maximum is not None:
        x = Fraction(str(b.exclusive_maximum))
        if hi is None or x <= hi:
            hi, open_ = x, True
    if integer and hi is not None:
        hi, open_ = (Fraction(math.ceil(hi) - 1) if open_ else Fraction(math.floor(hi))), False
    return hi, open_


def _in_bounds(b: NumericBounds, value: int | float) -> bool | None:
    if isinstance(value, float) and not math.isfinite(value):
        return False
    v = Fraction(value)
    if b.minimum is not None and v < Fraction(str(b.minimum)):
        return False
    if b.maximum is not None and v > Fraction(str(b.maximum)):
        return False
    if b.exclusive_minimum is not None and v <= Fraction(str(b.exclusive_minimum)):
        return False
    if b.exclusive_maximum is not None and v >= Fraction(str(b.exclusive_maximum)):
        return False
    if b.multiple_of is not None:
        m = Fraction(str(b.multiple_of))
        if m != 0 and (Fraction(str(value)) / m).denominator != 1:
            return False
    return True


def _numbers(b: NumericBounds, *, integer: bool) -> list[Any]:
    lo, lo_open = _lower(b, integer=integer)
    hi, hi_open = _upper(b, integer=integer)
    m = b.multiple_of
    out: list[Any] = []
    seeds: list[Fraction] = [Fraction(0), Fraction(1), Fraction(-1)]
    if lo is not None:
        seeds += [lo, lo + 1, lo + Fraction(1, 2)]
    if hi is not None:
        seeds += [hi, hi - 1, hi - Fraction(1, 2)]
    if lo is not None and hi is not None:
        seeds.append((lo + hi) / 2)
    for s in seeds:
        if m is not None:
            step = Fraction(str(m))
            if step == 0:
                continue
            k = math.ceil(s / step)
            s = k * step
        if lo is not None and (s < lo or (lo_open and s == lo)):
            continue
        if hi is not None and (s > hi or (hi_open and s == hi)):
            continue
        if integer and s.denominator != 1:
            continue
        out.append(int(s) if s.denominator == 1 else float(s))
    if not integer:
        out.append(0.5)
    return out


def _strings(node: StringNode) -> list[Any]:
    n = node.min_length or 0
    out: list[Any] = ["a" * n, "a" * max(n, 1), "0" * max(n, 1)]
    if node.format in ("date", "date-time"):
        out.insert(0, "2024-01-01" if node.format == "date" else "2024-01-01T00:00:00Z")
    if node.pattern is not None:
        shortest = _pattern_sample(node.pattern)
        if shortest is not None:
            out.insert(0, shortest + "a" * max(0, n - len(shortest)))
    return out


# the standard library's own regex parser (``re._parser``, which typeshed does not describe): see
# _pattern_sample
re_parser: Any = importlib.import_module("re._parser")


class _NoSample(Exception):
    """A part of a pattern the shortest-match writer does not follow (a back-reference, …)."""


# what one character of a class is written as: (digit, word, space) and their negations
_CATEGORY_CHAR = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}


@functools.lru_cache(maxsize=1024)
def _pattern_sample(pattern: str) -> str | None:
    """A short string ``pattern`` matches, or ``None`` (``valid`` still decides: lookarounds and
    anchors are not followed here).

    Written here rather than taken from a library: hypothesis' ``from_regex`` is the well-kept one,
    but it is a test dependency, and a witness must be the same on every run; the pattern's
    syntax tree (the standard library's own parser) gives the shortest match directly.
    """
    try:
        tree = re_parser.parse(pattern)
        return "".join(_shortest(tree))
    except (re.error, _NoSample, RecursionError, ValueError, OverflowError):
        return None


def _shortest(items: Any) -> list[str]:
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append("a" if av != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_in_class(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = av
            out.extend(_shortest(sub) * low)
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            out.extend(_shortest(av[-1]))
        elif name == "BRANCH":
            out.extend(min((_shortest(b) for b in av[1]), key=len))
        elif name == "CATEGORY":
            out.append(_CATEGORY_CHAR.get(str(av), "a"))
        elif name not in ("AT", "ASSERT", "ASSERT_NOT"):
            raise _NoSample(name)
    return out


def _in_class(items: Any) -> str:
    members = list(items)
    if members and str(members[0][0]) == "NEGATE":
        rest = members[1:]
        for candidate in "a0-_ A.":
            if not _in_members(candidate, rest):
                return candidate
        raise _NoSample("NEGATE")
    for op, av in members:
        name = str(op)
        if name == "LITERAL":
            return chr(av)
        if name == "RANGE":
            return chr(av[0])
        if name == "CATEGORY":
            return _CATEGORY_CHAR.get(str(av), "a")
    raise _NoSample("IN")


def _in_members(char: str, members: Any) -> bool:
    code = ord(char)
    for op, av in members:
        name = str(op)
        if name == "LITERAL" and av == code:
            return True
        if name == "RANGE" and av[0] <= code <= av[1]:
            return True
        if name == "CATEGORY" and re.fullmatch(
            {
                "CATEGORY_DIGIT": r"\d",
                "CATEGORY_NOT_DIGIT": r"\D",
                "CATEGORY_WORD": r"\w",
                "CATEGORY_NOT_WORD": r"\W",
                "CATEGORY_SPACE": r"\s",
                "CATEGORY_NOT_SPACE": r"\S",
            }.get(str(av), r"(?!)"),
            char,
        ):
            return True
    return False


def _ref_keys(shape: Any) -> set[str]:
    """The ``ref_key``s a shape names."""
    found: set[str] = set()
    stack: list[Any] = [shape]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            parts = cast("tuple[Any, ...]", item)
            if len(parts) == 2 and parts[0] == "ref" and isinstance(parts[1], str):
                found.add(parts[1])
            else:
                stack.extend(parts)
    return found


def _is_node(value: object) -> bool:
    return hasattr(value, "meta") and hasattr(value, "kind")
