"""Compiler layer (normalise): ``oneOf``/``anyOf``/``allOf`` as real specs write them. Imports ``_rule``
and ``_schema`` only.

Two readings of a union need its branches' targets: whether branches overlap (a ``oneOf`` whose
branches all accept one value refuses it) and which types they declare (a ``type`` beside the
union that excludes some), and whether an ``allOf`` says object where a part does not. The
lowerer hands these rules a ``Branches``: the union schema and a
look-up of a ``$ref``'s target (the resolver's, quiet: a bad ``$ref`` is said where the schema
holding it is lowered). The rules read through it and never change what it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import ANNOTATIONS, JSON_TYPES, SchemaContext, schema_object, schema_rule, without

# What a type-only schema may say besides annotations (``_plain_type``): ``format`` is read as an
# annotation where it is lenient (OpenAPI's ``int64``, ``double``), ``items`` is checked apart.
_PLAIN_KEYS = frozenset({"type", "format", "items", "nullable", "x-nullable"})
_DEPTH = 16

Resolve = Callable[[Any, Any], "tuple[Any, Any] | None"]
"""``resolve(ref, place)``: the target of ``ref`` read in ``place`` and the target's own place
(where its ``$ref``s are read), or None when it does not resolve."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Branches:
    """A ``oneOf``/``anyOf`` schema and how the lowerer reads it.

    Attributes:
        schema: the schema object holding the union.
        combinator: ``oneOf``, ``anyOf`` or ``allOf``, the key of the branches in ``schema``.
        form: how the union is read: ``oneOf`` (exactly one branch) or ``anyOf`` (``allOf``
            for an ``allOf``).
        place: where ``schema``'s ``$ref``s are read (opaque here: given to ``resolve``).
        resolve: the look-up of a ``$ref``'s target.
    """

    schema: dict[str, Any]
    combinator: str
    form: str
    place: Any
    resolve: Resolve

    def subs(self) -> list[Any]:
        """The raw branches."""
        raw: Any = self.schema.get(self.combinator)
        return cast("list[Any]", raw) if isinstance(raw, list) else []


def _branches(fragment: Any) -> Branches | None:
    return fragment if isinstance(fragment, Branches) else None


def _undiscriminated_one_of(fragment: Any, ctx: SchemaContext) -> Branches | None:
    """``fragment`` when it is a ``oneOf`` read as one without a discriminator (which tells
    the branches apart by its own reading)."""
    union = _branches(fragment)
    if not ctx.lenient or union is None or union.form != "oneOf":
        return None
    return None if "discriminator" in union.schema else union


def _oneof_open_branches(fragment: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    union = _undiscriminated_one_of(fragment, ctx)
    if union is None:
        return None
    open_branches = [
        i for i, sub in enumerate(union.subs()) if _accepts_empty_object(sub, union.place, union)
    ]
    if len(open_branches) < 2:
        return None
    # Vonage's SMS response is oneOf [SMS, Error], two objects that require nothing: every
    # response matched both, so every call "failed" on the API's own answer
    said = warn(
        at.child(union.combinator),
        f"oneOf branches {', '.join(map(str, open_branches))} require nothing: an "
        "object they all accept ({} and every object with none of their properties) "
        "matches more than one, and oneOf refuses it; read as anyOf (the first "
        "branch that matches)",
        "branches that exclude each other (a required property, a const/enum, a discriminator)",
        hint="write anyOf, or make the branches exclusive",
    )
    return Fixed(value=replace(union, form="anyOf"), diagnostics=(said,))


ONEOF_OPEN_BRANCHES = schema_rule(
    name="oneof-open-branches",
    family="schema-unions",
    accepts="a oneOf (without discriminator) with two or more branches that require nothing",
    makes="anyOf (the first branch that matches)",
    warning="oneOf branches <i, j> require nothing: an object they all accept … matches more "
    "than one, and oneOf refuses it; read as anyOf (the first branch that matches)",
    apply=_oneof_open_branches,
    when=lambda c: c.lenient,
    keys=None,
    phases=("union",),
)


def _oneof_nested_branch(fragment: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    union = _undiscriminated_one_of(fragment, ctx)
    nested = None if union is None else _nested_branches(union.subs(), union.place, union)
    if union is None or nested is None:
        return None
    # Chroma's metadata values are oneOf [boolean, integer, number, string, ...] (a Rust
    # enum as utoipa writes it): an integer is a number too, so every integer matched two
    # branches and was refused, in Calls and in the API's own answers
    inner, outer = nested
    said = warn(
        at.child(union.combinator),
        f"oneOf branch {inner} is within branch {outer}: every value branch {inner} "
        "accepts matches both, and oneOf refuses it, so no value could ever be read "
        f"as branch {inner}; read as anyOf (the first branch that matches)",
        "branches that exclude each other (an integer is also a number: type integer "
        "beside type number matches every integer twice)",
        hint="write anyOf, or drop or narrow the wider branch",
    )
    return Fixed(value=replace(union, form="anyOf"), diagnostics=(said,))


ONEOF_NESTED_BRANCH = schema_rule(
    name="oneof-nested-branch",
    family="schema-unions",
    accepts="a oneOf (without discriminator) with a branch whose every value another branch "
    "(types only) accepts: [integer, number]",
    makes="anyOf (the first branch that matches)",
    warning="oneOf branch <i> is within branch <j>: every value branch <i> accepts matches both, "
    "and oneOf refuses it, …; read as anyOf (the first branch that matches)",
    apply=_oneof_nested_branch,
    when=lambda c: c.lenient,
    keys=None,
    phases=("union",),
)


def _type_beside_branches(fragment: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """Label Studio's filter value is ``type: object`` beside ``oneOf [string, integer, number,
    boolean, object, object]`` (drf-spectacular writes the serializer field's type beside the
    union), so every number was refused — in the Calls of a number filter, which the API
    needs — while no author writes branches that can never match. Read as the branches say."""
    union = _branches(fragment)
    if not ctx.lenient or union is None or "type" not in union.schema:
        return None
    outer = _schema_types({"type": union.schema["type"]})
    if outer is None:
        return None
    excluded: list[str] = []
    for i, sub in enumerate(union.subs()):
        read = _dereferenced(sub, union.place, union)
        types = _schema_types(read[0]) if read is not None else None
        if types is not None and not any(
            t in outer
            or (t == "integer" and "number" in outer)
            or (t == "number" and "integer" in outer)
            for t in types
        ):
            excluded.append(f"{i} ({' or '.join(sorted(types))})")
    if not excluded:
        return None
    combinator = union.combinator
    said = warn(
        at.child("type"),
        f"type {' or '.join(sorted(outer))} beside {combinator} excludes branch(es) "
        f"{', '.join(excluded)}: no value could match them; read as the branches' own types "
        "(the type beside them left out)",
        f"a type that allows every branch of {combinator}",
        hint=f"drop the type beside {combinator}, or widen it to the branches' types",
    )
    return Fixed(value=replace(union, schema=without(union.schema, "type")), diagnostics=(said,))


TYPE_BESIDE_BRANCHES = schema_rule(
    name="type-beside-branches",
    family="schema-unions",
    accepts="a type beside oneOf/anyOf that excludes branches declaring their own types "
    "(type: object beside oneOf [string, number, object])",
    makes="the union without the type beside it (read as the branches say)",
    warning="type <types> beside <oneOf|anyOf> excludes branch(es) <i (types)>: no value could "
    "match them; read as the branches' own types (the type beside them left out)",
    apply=_type_beside_branches,
    when=lambda c: c.lenient,
    keys=None,
    phases=("union",),
)


def _untyped_object_part(fragment: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """A part with ``properties`` and no ``type`` beside one that says object (Lago's ``allOf:
    [{$ref: Base}, {properties: ...}]``) is an object already: read so, and not said (the
    spec's meaning is plain, and the whole says object). The parts' ``$ref``s are looked
    through only when a part lacks its type."""
    union = _branches(fragment)
    if not ctx.lenient or union is None or union.combinator != "allOf":
        return None
    subs = union.subs()
    typed = [_typed_object(sub) for sub in subs]
    if all(t is sub for t, sub in zip(typed, subs, strict=True)):
        return None
    if union.schema.get("type") != "object" and not any(
        _says_object(sub, union.place, union) for sub in subs
    ):
        return None
    return Fixed(value=replace(union, schema={**union.schema, "allOf": typed}))


UNTYPED_OBJECT_PART = schema_rule(
    name="allof-untyped-object-part",
    family="schema-unions",
    accepts="an allOf part with properties and no type, beside a part (or a type) that says object",
    makes="the part with type: object",
    warning="(none: the allOf says object already)",
    apply=_untyped_object_part,
    when=lambda c: c.lenient,
    keys=None,
    phases=("all-of",),
)

RULES = (ONEOF_OPEN_BRANCHES, ONEOF_NESTED_BRANCH, TYPE_BESIDE_BRANCHES, UNTYPED_OBJECT_PART)


def _typed_object(schema: Any) -> Any:
    """``schema`` with ``type: object`` when it has ``properties`` and no ``type``."""
    s = schema_object(schema)
    if s is None or "type" in s or "properties" not in s or "$ref" in s:
        return schema
    return {"type": "object", **s}


def _says_object(schema: Any, place: Any, union: Branches, depth: int = 0) -> bool:
    """Whether the raw ``schema`` (through ``$ref``s) declares ``type: object``."""
    s = schema_object(schema)
    if s is None or depth > _DEPTH:
        return False
    if "$ref" in s:
        resolved = union.resolve(s["$ref"], place)
        return resolved is not None and _says_object(*resolved, union, depth + 1)
    return s.get("type") == "object"


# -- what raw branches surely accept (through ``$ref``s) ----------------------------------------


def _dereferenced(
    schema: Any, place: Any, union: Branches, depth: int = 0
) -> tuple[dict[str, Any], Any] | None:
    """The raw ``schema`` with its ``$ref``s followed while it is nothing but one (beside
    annotations), and its place; None when one does not resolve or it is no object."""
    s = schema_object(schema)
    if s is None or depth > _DEPTH:
        return None
    if "$ref" not in s:
        return s, place
    if set(s) - ANNOTATIONS - {"$ref"}:
        return None  # (unsure: nullable or a type beside it widens it, other keywords narrow)
    resolved = union.resolve(s["$ref"], place)
    return None if resolved is None else _dereferenced(*resolved, union, depth + 1)


def _accepts_empty_object(schema: Any, place: Any, union: Branches, depth: int = 0) -> bool:
    """Whether the raw ``schema`` surely accepts ``{}``: an object schema (or one without
    ``type``) that requires nothing, through ``$ref``s and ``allOf``; False when unsure. A
    ``$ref`` that does not resolve is False here and said where the branch is lowered."""
    if schema is True:
        return True
    s = schema_object(schema)
    if s is None or depth > _DEPTH:
        return False
    if "$ref" in s:
        resolved = union.resolve(s["$ref"], place)
        return resolved is not None and _accepts_empty_object(*resolved, union, depth + 1)
    types = s.get("type", "object")
    if types != "object" and not (isinstance(types, list) and "object" in cast("list[Any]", types)):
        return False
    if s.get("required") or s.get("minProperties"):
        return False
    if any(k in s for k in ("enum", "const", "not", "anyOf", "oneOf", "if")):
        return False  # (unsure: they may exclude {})
    parts: Any = s.get("allOf")
    listed = cast("list[Any]", parts) if isinstance(parts, list) else []
    return all(_accepts_empty_object(part, place, union, depth + 1) for part in listed)


def _nested_branches(subs: list[Any], place: Any, union: Branches) -> tuple[int, int] | None:
    """The first pair (i, j) of raw ``oneOf`` branches where every instance branch i accepts,
    branch j surely accepts too (``_within``); None when no branch is surely within another.
    Such a branch can never match alone: oneOf refuses every value of it."""
    read = [(i, r) for i, sub in enumerate(subs) if (r := _dereferenced(sub, place, union))]
    outers = [(j, r) for j, r in read if _plain_type(r[0]) is not None]
    for i, (a, a_place) in read:
        for j, (b, b_place) in outers:
            if i != j and _within(a, a_place, b, b_place, union):
                return i, j
    return None


def _within(
    a: dict[str, Any],
    a_place: Any,
    b: dict[str, Any],
    b_place: Any,
    union: Branches,
    depth: int = 0,
) -> bool:
    """Whether every instance the raw schema ``a`` accepts, ``b`` surely accepts too: ``b``
    is types and nothing else (``_plain_type``; an array's ``items`` too) and ``a``'s types
    are among them (an integer is a number) — its other keywords only narrow it; False when
    unsure. (Lenient readings only: ``format`` is an annotation in the specs read so.)"""
    a_types, b_types = _schema_types(a), _plain_type(b)
    if a_types is None or b_types is None or depth > _DEPTH:
        return False
    if not all(t in b_types or (t == "integer" and "number" in b_types) for t in a_types):
        return False
    if "array" not in a_types or "items" not in b:
        return True
    b_items = _dereferenced(b["items"], b_place, union)
    a_items = None if "prefixItems" in a else _dereferenced(a.get("items"), a_place, union)
    if b_items is None or _plain_type(b_items[0]) is None or a_items is None:
        return b["items"] is True
    return _within(*a_items, *b_items, union, depth + 1)


def _schema_types(s: dict[str, Any]) -> set[str] | None:
    """The JSON types a raw schema's instances may have — its ``type`` (``nullable`` adds
    null), else its ``const``/``enum`` values' —; None when it does not say or names another."""
    raw: Any = s.get("type")
    if raw is None:
        listed: Any = s.get("enum")
        values: list[Any] | None = (
            [s["const"]]
            if "const" in s
            else cast("list[Any]", listed)
            if isinstance(listed, list)
            else None
        )
        if not values:
            return None
        types = {_listed_value_type(v) for v in values}
    else:
        names = cast("list[Any]", raw) if isinstance(raw, list) else [raw]
        types = {n if isinstance(n, str) else "other" for n in names}
    if s.get("nullable") is True or s.get("x-nullable") is True:
        types.add("null")
    return types if types <= set(JSON_TYPES) else None


def _listed_value_type(value: Any) -> str:
    """The JSON type an ``enum``/``const`` value stands for here: unlike the kernel's
    ``json_type``, ``1.0`` is a ``number`` (as written) and an array or object is ``other``, so a
    union whose branch lists one is never judged by its types (unsure: left as it is)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def _plain_type(s: dict[str, Any]) -> set[str] | None:
    """The JSON types a raw schema accepts when it says nothing else (annotations, ``format``,
    an array's ``items``, ``x-`` keys aside): every instance of them; None otherwise."""
    if any(k not in ANNOTATIONS and k not in _PLAIN_KEYS and not k.startswith("x-") for k in s):
        return None
    if s.get("nullable") not in (None, True, False):
        return None
    types = _schema_types(s) if "type" in s else set[str](JSON_TYPES)
    if types is not None and "items" in s and not isinstance(s["items"], dict | bool):
        return None  # (draft 4-2019's tuple form: unsure)
    return types
