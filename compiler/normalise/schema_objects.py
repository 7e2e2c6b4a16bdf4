"""Compiler layer (normalise): object schemas that OpenAPI reads otherwise than JSON Schema.
Imports ``_rule`` and ``_schema`` only.

An OpenAPI component serves requests and responses alike, and its ``readOnly``/``writeOnly``
annotations say which of the two a property is in: JSON Schema's ``required`` does not know
them, so these rules read it as OpenAPI means it (``lenient`` runs only).
"""

from __future__ import annotations

from typing import Any, cast

from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import SchemaContext, schema_object, schema_rule


def _one_way_required(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    """OpenAPI: a required readOnly property is required in responses only, a writeOnly one
    in requests only. A component serves both, so a Call would need the server's ``id`` (the
    spec's own request examples refused) and an Output a password the API never returns:
    such a name is read as optional. (Given the object with draft 3's flags read:
    ``schema_drafts.DRAFT3_REQUIRED`` first.)"""
    fragment = schema_object(value)
    if not ctx.lenient or fragment is None:
        return None
    listed: Any = fragment.get("required")
    properties = schema_object(fragment.get("properties"))
    if not isinstance(listed, list) or properties is None:
        return None
    names = cast("list[Any]", listed)
    one_way = sorted(
        {
            name
            for name in names
            if isinstance(name, str)
            and (prop := schema_object(properties.get(name))) is not None
            and (prop.get("readOnly") is True or prop.get("writeOnly") is True)
        }
    )
    if not one_way:
        return None
    said = warn(
        at.child("required"),
        f"required lists readOnly/writeOnly {', '.join(one_way)}: read as optional "
        "(OpenAPI requires a readOnly property in responses only, a writeOnly one "
        "in requests only, and this schema is read for both)",
        "required naming properties required both ways",
    )
    kept = [name for name in names if name not in one_way]
    return Fixed(value={**fragment, "required": kept}, diagnostics=(said,))


ONE_WAY_REQUIRED = schema_rule(
    name="one-way-required",
    family="schema-objects",
    accepts="a readOnly or writeOnly property named in required (a component read both ways)",
    makes="required without it (optional in requests and responses)",
    warning="required lists readOnly/writeOnly <names>: read as optional (OpenAPI requires a "
    "readOnly property in responses only, a writeOnly one in requests only, …)",
    apply=_one_way_required,
    when=lambda c: c.lenient,
    keys=("required", "properties"),
    phases=("object",),
)

RULES = (ONE_WAY_REQUIRED,)
