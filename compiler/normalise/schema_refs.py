"""Compiler layer (normalise): ``$ref`` where a draft or OpenAPI version reads it otherwise.
Imports ``_rule`` and ``_schema`` only.

Drafts 4-7 and OpenAPI 3.0 replace the schema object a ``$ref`` sits in by its target, and
OpenAPI has no ``$recursiveRef``: what these rules leave is read as JSON Schema 2020-12 reads it.
Each warning is given once per place (``SchemaContext.reported``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import ANNOTATIONS, SchemaContext, schema_object, schema_rule, without

_KEPT_BESIDE_30 = ANNOTATIONS | {"$ref", "nullable", "x-nullable"}


def _legacy_ref_siblings(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    if not ctx.legacy_ref or fragment is None or "$ref" not in fragment:
        return None
    said = ()
    where = at.child("$ref")
    if ctx.dialect == "jsonschema" and str(where) not in ctx.reported:
        beside = sorted(k for k in fragment if k != "$ref" and k not in ANNOTATIONS and k != "id")
        if beside:
            said = (
                warn(
                    where,
                    f"$ref replaces the keywords beside it in JSON Schema "
                    f"{ctx.draft or 'draft 7'}: {', '.join(beside)} check nothing",
                    "a $ref alone in its schema",
                    hint="wrap them: allOf: [{$ref: ...}, {...}], or use draft 2019-09 or later",
                ),
            )
    return Fixed(value={"$ref": fragment["$ref"]}, diagnostics=said)


LEGACY_REF_SIBLINGS = schema_rule(
    name="legacy-ref-siblings",
    family="schema-refs",
    accepts="keywords beside $ref in JSON Schema drafts 4-7",
    makes="{$ref} alone (the draft replaces the schema by its target)",
    warning="$ref replaces the keywords beside it in JSON Schema <draft>: <keys> check nothing",
    apply=_legacy_ref_siblings,
    when=lambda c: c.legacy_ref,
    keys=("$ref",),
    phases=("entry",),
)


def _openapi30_ref_siblings(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """OpenAPI 3.0 and Swagger 2.0: a ``$ref`` is a Reference Object, whose other fields
    "SHALL be ignored". Read beside it, a ``type`` can make the schema accept nothing (a real
    accounting API writes ``rate: {$ref: Amount, type: number}``, ``Amount`` an object):
    ignored as the spec says. Annotations stay, and so does ``nullable: true`` (or
    ``x-nullable``): it only widens, and an API that writes it sends null there."""
    fragment = schema_object(value)
    if ctx.dialect != "openapi30" or fragment is None or "$ref" not in fragment:
        return None
    beside = sorted(k for k in fragment if k not in _KEPT_BESIDE_30 and not k.startswith("x-"))
    if not beside:
        return None
    where = at.child("$ref")
    said = ()
    if str(where) not in ctx.reported:
        said = (
            warn(
                where,
                "$ref replaces the fields beside it in OpenAPI 3.0 and Swagger 2.0: "
                f"{', '.join(beside)} ignored",
                "a $ref alone in its schema (annotations and nullable beside it are read)",
                hint="wrap them: allOf: [{$ref: ...}, {...}] (OpenAPI 3.1 reads them beside it)",
            ),
        )
    return Fixed(value=without(fragment, *beside), diagnostics=said)


OPENAPI30_REF_SIBLINGS = schema_rule(
    name="openapi30-ref-siblings",
    family="schema-refs",
    accepts="keywords beside $ref in OpenAPI 3.0 / Swagger 2.0 (a Reference Object)",
    makes="the $ref with its annotations and nullable only",
    warning="$ref replaces the fields beside it in OpenAPI 3.0 and Swagger 2.0: <keys> ignored",
    apply=_openapi30_ref_siblings,
    when=lambda c: c.dialect == "openapi30",
    keys=("$ref",),
    phases=("entry",),
)


def _component_of(at: SourceLocation) -> str | None:
    """The pointer of the component schema (3.x) or definition (Swagger 2.0) ``at`` is in."""
    parts = at.pointer.split("/")
    if parts[1:3] == ["components", "schemas"] and len(parts) > 3:
        return "/".join(parts[:4])
    if parts[1:2] == ["definitions"] and len(parts) > 2:
        return "/".join(parts[:3])
    return None


def _recursive_ref_to_component(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """OpenAI's ``CompoundFilter`` nests itself: ``filters: {items: {oneOf: [{$ref:
    ComparisonFilter}, {$recursiveRef: "#"}]}}``, the component written as a JSON Schema of its
    own (``$recursiveAnchor: true`` at its top), where ``"#"`` is that component. OpenAPI has no
    ``$recursiveRef`` and its ``"#"`` would be the whole document, so it was ignored and a nested
    filter checked nothing: read as a ``$ref`` to the component it sits in."""
    fragment = schema_object(value)
    if not ctx.lenient or (ctx.dialect == "jsonschema" and not ctx.openapi31):
        return None
    if fragment is None or fragment.get("$recursiveRef") != "#" or "$ref" in fragment:
        return None
    component = _component_of(at)
    if component is None:
        return None
    target = "#" + component
    said = ()
    where = at.child("$recursiveRef")
    if str(where) not in ctx.reported:
        said = (
            warn(
                where,
                f"$recursiveRef '#' is no keyword of OpenAPI schemas (draft 2019-09's); read as "
                f"$ref: {target!r}, the component schema it is in, which '#' names when the "
                "component is read as a JSON Schema of its own",
                "$ref to the schema meant",
                hint=f"write $ref: {target!r}",
            ),
        )
    value = {k: v for k, v in fragment.items() if k != "$recursiveRef"} | {"$ref": target}
    return Fixed(value=value, diagnostics=said)


RECURSIVE_REF_TO_COMPONENT = schema_rule(
    name="recursive-ref-to-component",
    family="schema-refs",
    accepts="$recursiveRef: '#' inside a component schema of an OpenAPI document (OpenAI's "
    "CompoundFilter)",
    makes="$ref to that component (what '#' names in the component read as a JSON Schema)",
    warning="$recursiveRef '#' is no keyword of OpenAPI schemas (draft 2019-09's); read as "
    "$ref: <the component>, the component schema it is in, …",
    apply=_recursive_ref_to_component,
    when=lambda c: c.lenient and (c.dialect != "jsonschema" or c.openapi31),
    keys=("$recursiveRef",),
    phases=("enter",),
)


def _dropped_in_openapi(
    keyword: str, said: str, expected: str | None = None
) -> Callable[[Any, SourceLocation, SchemaContext], Fixed | None]:
    """The rule function that drops draft 2019-09's ``keyword`` from an OpenAPI schema (3.0 has
    none of its keywords, and 3.1's 2020-12 replaced them), warning ``said`` once per place."""

    def drop(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
        fragment = schema_object(value)
        if fragment is None or keyword not in fragment:
            return None
        if ctx.dialect == "jsonschema" and not ctx.openapi31:
            return None
        where = at.child(keyword)
        told = ()
        if fragment[keyword] is not None and str(where) not in ctx.reported:
            told = (warn(where, said, expected),)
        return Fixed(value=without(fragment, keyword), diagnostics=told)

    return drop


# (followed, a $recursiveRef "#" would be the whole API description)
_RECURSIVE_REF_SAID = (
    "$recursiveRef is no keyword of OpenAPI schemas (draft 2019-09's); it is ignored, so the "
    "value it names is not checked"
)
# the anchor a ``$recursiveRef`` resolves against: OpenAPI reads no ``$recursiveRef`` (the rules
# above make it a ``$ref`` or drop it), so it says nothing; kept, it breaks the 2020-12
# meta-schema exported schemas are read against (a string there: ``$dynamicAnchor``'s old name)
_RECURSIVE_ANCHOR_SAID = (
    "$recursiveAnchor is no keyword of OpenAPI schemas (draft 2019-09's); it is ignored"
)


RECURSIVE_REF_IN_OPENAPI = schema_rule(
    name="recursive-ref-in-openapi",
    family="schema-refs",
    accepts="$recursiveRef in an OpenAPI schema (draft 2019-09's keyword)",
    makes="the schema without it",
    warning=_RECURSIVE_REF_SAID,
    apply=_dropped_in_openapi("$recursiveRef", _RECURSIVE_REF_SAID, "$ref to the schema meant"),
    when=lambda c: c.dialect != "jsonschema" or c.openapi31,
    keys=("$recursiveRef",),
    phases=("enter",),
)


RECURSIVE_ANCHOR_IN_OPENAPI = schema_rule(
    name="recursive-anchor-in-openapi",
    family="schema-refs",
    accepts="$recursiveAnchor in an OpenAPI schema (draft 2019-09's; OpenAI's CompoundFilter)",
    makes="the schema without it (no $recursiveRef is left to resolve against it)",
    warning=_RECURSIVE_ANCHOR_SAID,
    apply=_dropped_in_openapi("$recursiveAnchor", _RECURSIVE_ANCHOR_SAID),
    when=lambda c: c.dialect != "jsonschema" or c.openapi31,
    keys=("$recursiveAnchor",),
    phases=("enter",),
)


def properties_map_ref(fragment: dict[str, Any]) -> str | None:
    """The ``$ref`` a schema's whole ``properties`` map is written as, or None."""
    props = schema_object(fragment.get("properties"))
    ref = props.get("$ref") if props is not None else None
    return ref if isinstance(ref, str) else None


def _properties_ref(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # a split spec's ``properties: {$ref: ./props.yaml}``: JSON Schema reads a property named
    # "$ref" whose schema is a string, so the Call had one field ``ref``, sent as "$ref", and
    # none of the properties the file holds. The meaning is plain; the lowerer follows it.
    if not ctx.lenient or fragment is None or properties_map_ref(fragment) is None:
        return None
    said = warn(
        at.child("properties", "$ref"),
        "properties is a $ref to the whole map; followed",
        "a map of property names to schemas (each may be a $ref)",
    )
    return Fixed(value=fragment, diagnostics=(said,))


PROPERTIES_REF = schema_rule(
    name="properties-ref",
    family="schema-refs",
    accepts="a schema's properties written as one $ref to a map of property schemas "
    "(properties: {$ref: ./props.yaml})",
    makes="the map the $ref leads to, its entries the properties (followed by the lowerer)",
    warning="properties is a $ref to the whole map; followed",
    apply=_properties_ref,
    when=lambda c: c.lenient,
    keys=("properties",),
    phases=("object",),
)

RULES = (
    LEGACY_REF_SIBLINGS,
    OPENAPI30_REF_SIBLINGS,
    RECURSIVE_REF_TO_COMPONENT,  # (before the rule that drops what it does not read)
    RECURSIVE_REF_IN_OPENAPI,
    RECURSIVE_ANCHOR_IN_OPENAPI,
    PROPERTIES_REF,
)
