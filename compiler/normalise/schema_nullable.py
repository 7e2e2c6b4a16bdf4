"""Compiler layer (normalise): the ways real specs say "or null". Imports ``_rule`` and
``_schema`` only.

What these rules leave says it one way: OpenAPI 3.0's ``nullable: true``, which the lowerer reads
as also allowing null (a union with null around the schema), in OpenAPI 3.0 and in lenient runs.
"""

from __future__ import annotations

from typing import Any, cast

from ..diagnostics import Diagnostic
from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import SchemaContext, schema_object, schema_rule, without

X_NULLABLE_NOTE = "x-nullable: true read as nullable"
"""The note ``X_NULLABLE`` gives: the lowerer counts these and says them once."""


def _x_nullable(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # Swagger 2.0 has no nullable; its tools spell it x-nullable, with one meaning: an API that
    # sends null there (a container engine's does) must not fail its output
    if (
        not ctx.drop_extensions
        or ctx.dialect != "openapi30"
        or fragment is None
        or fragment.get("x-nullable") is not True
        or "nullable" in fragment
    ):
        return None
    note = Diagnostic(loc=at.child("x-nullable"), severity="note", found=X_NULLABLE_NOTE)
    return Fixed(value=without(fragment, "x-nullable") | {"nullable": True}, diagnostics=(note,))


X_NULLABLE = schema_rule(
    name="x-nullable",
    family="schema-nullable",
    accepts="x-nullable: true (Swagger 2.0 tools' extension: go-swagger, Swashbuckle, NSwag)",
    makes="nullable: true",
    warning="(one note for all) x-nullable: true read as nullable in <n> schema(s)",
    apply=_x_nullable,
    when=lambda c: c.drop_extensions and c.dialect == "openapi30",
    keys=("x-nullable",),
    phases=("before-keywords",),
)


def _nullable_in_json_schema(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # OpenAPI 3.0's keyword in a 3.1 (JSON Schema) document: its meaning is plain
    if (
        not ctx.lenient
        or ctx.dialect == "openapi30"
        or fragment is None
        or fragment.get("nullable") is not True
    ):
        return None
    said = warn(
        at.child("nullable"),
        "nullable is OpenAPI 3.0's keyword; read as also allowing null",
        "type: [..., 'null'] in OpenAPI 3.1",
    )
    return Fixed(value=fragment, diagnostics=(said,))


NULLABLE_IN_JSON_SCHEMA = schema_rule(
    name="nullable-in-json-schema",
    family="schema-nullable",
    accepts="nullable: true in OpenAPI 3.1 / JSON Schema",
    makes="nullable: true, read as in OpenAPI 3.0 (also null)",
    warning="nullable is OpenAPI 3.0's keyword; read as also allowing null",
    apply=_nullable_in_json_schema,
    when=lambda c: c.lenient and c.dialect != "openapi30",
    keys=("nullable",),
    phases=("before-keywords",),
)


def _null_type_beside_ref(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    # OpenAPI 3.1's spelling of 3.0's ``nullable: true`` beside a $ref (Mastodon's spec, a 3.0 →
    # 3.1 conversion): read as JSON Schema (all of them), null would be refused whenever the
    # referenced schema refuses it, and every answer with that null fail; so it widens the
    # reference, as nullable does, and says so. (With nullable beside it too, that is read
    # first: this rule reads the schema inside it.)
    if not ctx.lenient or fragment is None or "$ref" not in fragment:
        return None
    raw: Any = fragment.get("type")
    if not isinstance(raw, list) or fragment.get("nullable") is True:
        return None
    types = cast("list[Any]", raw)
    if "null" not in types or len(types) < 2:
        return None
    said = warn(
        at.child("type"),
        "type beside $ref lists 'null': read as also allowing null, whatever the "
        "referenced schema allows",
        "anyOf: [{$ref: ...}, {type: 'null'}] for a reference that may be null",
    )
    kept = [t for t in types if t != "null"]
    value = {**fragment, "type": kept[0] if len(kept) == 1 else kept, "nullable": True}
    return Fixed(value=value, diagnostics=(said,))


NULL_TYPE_BESIDE_REF = schema_rule(
    name="null-type-beside-ref",
    family="schema-nullable",
    accepts="type: [..., 'null'] beside a $ref (OpenAPI 3.1's spelling of nullable)",
    makes="the other types, and nullable: true (null allowed whatever the target allows)",
    warning="type beside $ref lists 'null': read as also allowing null, whatever the "
    "referenced schema allows",
    apply=_null_type_beside_ref,
    when=lambda c: c.lenient,
    keys=("$ref",),
    phases=("before-keywords",),
)

RULES = (X_NULLABLE, NULLABLE_IN_JSON_SCHEMA, NULL_TYPE_BESIDE_REF)
