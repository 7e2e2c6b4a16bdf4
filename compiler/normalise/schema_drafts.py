"""Compiler layer (normalise): keywords of another JSON Schema draft than the one in force.
Imports ``_rule`` and ``_schema`` only.

Nothing is ignored in silence: a keyword toolbind reads but not in the draft named (``id`` in
draft 7), and draft 3's keywords, which toolbind never reads, are warnings — once per place
(``SchemaContext.reported``) — and left where they are (they check nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import SchemaContext, schema_object, schema_rule

READ_ONLY_IN: Mapping[str, frozenset[str | None]] = {
    "$recursiveRef": frozenset({"draft2019-09", None}),
    "$recursiveAnchor": frozenset({"draft2019-09", None}),
    "id": frozenset({"draft4"}),
    "$id": frozenset({"draft6", "draft7", "draft2019-09", "draft2020-12", None}),
}
"""Keywords toolbind reads only in some drafts (elsewhere they are no keyword, and ignored):
keyword → the drafts it is read in (None: no draft named, every draft's spellings)."""

NEVER_READ: Mapping[str, str] = {
    "extends": "allOf",
    "disallow": "not: {type: ...}",
    "divisibleBy": "multipleOf",
}
"""Keywords of JSON Schema drafts toolbind never reads (draft 3's), with what to write instead."""

SPELLED: Mapping[str, str] = {
    "$recursiveRef": "$dynamicRef (2020-12) or $ref",
    "$recursiveAnchor": "$dynamicAnchor (2020-12)",
    "id": "$id",
    "$id": "id (draft 4)",
}
"""What a keyword read only in another draft is called in the draft in force, where it has one."""


def _draft3_keyword(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    if ctx.dialect != "jsonschema" or fragment is None:
        return None
    said = tuple(
        warn(
            where,
            f"{key} is JSON Schema draft 3's keyword; toolbind does not read it, so it "
            "checks nothing",
            f"{NEVER_READ[key]} (drafts 4 and later)",
        )
        for key in fragment
        # (a location made only for a keyword that is reported: this runs on every schema)
        if key in NEVER_READ and str(where := at.child(key)) not in ctx.reported
    )
    return Fixed(value=fragment, diagnostics=said) if said else None


DRAFT3_KEYWORD = schema_rule(
    name="draft3-keyword",
    family="schema-drafts",
    accepts="draft 3's extends, disallow, divisibleBy",
    makes="the schema as it is (they check nothing)",
    warning="<key> is JSON Schema draft 3's keyword; toolbind does not read it, so it checks "
    "nothing",
    apply=_draft3_keyword,
    when=lambda c: c.dialect == "jsonschema",
    keys=NEVER_READ,
    phases=("entry",),
)


def _other_draft_keyword(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    draft = ctx.draft
    if draft is None or ctx.dialect != "jsonschema" or fragment is None:
        return None
    said = tuple(
        warn(
            where,
            f"{key} is no keyword of JSON Schema {draft}; it is ignored",
            SPELLED[key],
            hint=f"name the draft it belongs to (draft=, $schema) or write {SPELLED[key]}",
        )
        for key in fragment
        if key in READ_ONLY_IN
        and draft not in READ_ONLY_IN[key]
        and str(where := at.child(key)) not in ctx.reported
    )
    return Fixed(value=fragment, diagnostics=said) if said else None


OTHER_DRAFT_KEYWORD = schema_rule(
    name="other-draft-keyword",
    family="schema-drafts",
    accepts="a keyword of another draft than the one named ($id in draft 4, id in draft 7, …)",
    makes="the schema as it is (the keyword is ignored)",
    warning="<key> is no keyword of JSON Schema <draft>; it is ignored",
    apply=_other_draft_keyword,
    when=lambda c: c.dialect == "jsonschema" and c.draft is not None,
    keys=READ_ONLY_IN,
    phases=("entry",),
)


def _draft3_required(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    # draft 3's boolean ``required`` inside a property (still common in real specs): ``true``
    # means the object requires the property, ``false`` nothing. (The boolean stays in the
    # property, which reads it as nothing: taken out, a property without a type would read
    # as another schema.)
    fragment = schema_object(value)
    if not ctx.lenient or fragment is None:
        return None
    properties = schema_object(fragment.get("properties"))
    if properties is None:
        return None
    flags = [
        (name, flag)
        for name, schema in properties.items()
        if (read := schema_object(schema)) is not None
        and isinstance(flag := read.get("required"), bool)
    ]
    if not flags:
        return None
    said = tuple(
        warn(
            at.child("properties", name, "required"),
            f"required is a boolean {str(flag).lower()} (JSON Schema draft 3's form); "
            + (f"read as: the object requires {name!r}" if flag else "ignored"),
            "the property's name in the object's required array",
        )
        for name, flag in flags
    )
    listed: Any = fragment.get("required")
    names = cast("list[Any]", listed) if isinstance(listed, list) else []
    required = [*names, *(name for name, flag in flags if flag and name not in names)]
    return Fixed(value={**fragment, "required": required}, diagnostics=said)


DRAFT3_REQUIRED = schema_rule(
    name="draft3-required",
    family="schema-drafts",
    accepts="required: true/false inside a property (draft 3's form)",
    makes="the property's name in the object's required array (true), nothing (false)",
    warning="required is a boolean <true|false> (JSON Schema draft 3's form); read as: the "
    "object requires <name> | ignored",
    apply=_draft3_required,
    when=lambda c: c.lenient,
    keys=("properties",),
    phases=("object",),
)


def _boolean_exclusive_bound(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    if fragment is None:
        return None
    read = dict(fragment)
    said: list[Any] = []
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = fragment.get(key)
        if not isinstance(flag, bool):
            continue
        number = fragment.get(bound)
        del read[key]
        if flag and bound in fragment:
            del read[bound]
            read[key] = number
        reading = f"{key}: {number!r}" if flag and bound in fragment else "no bound of its own"
        said.append(
            warn(
                at.child(key),
                f"{key} is a boolean {str(flag).lower()} (the form of JSON Schema draft 4 and "
                f"OpenAPI 3.0); read as {reading}",
                f"a number ({key}: <the bound>) in drafts 6 and later and OpenAPI 3.1",
                hint=f"write {key}: <the bound> instead of {bound} and {key}: true"
                if flag
                else f"leave out {key}: false ({bound} alone is inclusive)",
            )
        )
    return Fixed(value=read, diagnostics=tuple(said)) if said else None


BOOLEAN_EXCLUSIVE_BOUND = schema_rule(
    name="boolean-exclusive-bound",
    family="schema-drafts",
    accepts="exclusiveMinimum/exclusiveMaximum: true/false beside minimum/maximum in a document "
    "of draft 6 or later (OpenAPI 3.1 included): draft 4's and OpenAPI 3.0's form",
    makes="exclusiveMinimum/exclusiveMaximum: <the bound> (true), no bound of its own (false)",
    warning="<key> is a boolean <true|false> (the form of JSON Schema draft 4 and OpenAPI 3.0); "
    "read as <key>: <bound> | no bound of its own",
    apply=_boolean_exclusive_bound,
    # (draft 4, OpenAPI 3.0 and Swagger 2.0 spell it so: there it is no quirk)
    when=lambda c: c.dialect == "jsonschema" and c.draft not in ("draft3", "draft4"),
    keys=("exclusiveMinimum", "exclusiveMaximum"),
    phases=("before-keywords",),
)

RULES = (DRAFT3_KEYWORD, OTHER_DRAFT_KEYWORD, DRAFT3_REQUIRED, BOOLEAN_EXCLUSIVE_BOUND)
