"""Compiler layer (normalise): OpenAPI 3.x parameters as real specs write them. Imports
``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

Each rule reads one Parameter Object (its ``$ref`` followed) at its place; the reader reads the
parameter they leave. (Swagger 2.0's parameters are ``openapi_swagger2``'s.)
"""

from __future__ import annotations

from typing import Any, cast

from ..ir import SourceLocation
from ._openapi import OpenApi
from ._rule import Fixed, Rule, warn


def _without_schema(parameter: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if context.swagger or not isinstance(parameter, dict):
        return None
    obj = cast("dict[str, Any]", parameter)
    if obj.get("schema") is not None:
        return None
    raw: Any = obj.get("content")
    content = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
    media_type = next(iter(content), None)
    media: dict[str, Any] = {}
    if media_type is not None:
        listed: Any = content[media_type]
        media = cast("dict[str, Any]", listed) if isinstance(listed, dict) else {}
        if media.get("schema") is not None:
            return None
    # OpenAPI asks for a schema or a content; without one the value is unconstrained, so any
    # value, said (where a schema would be: in the parameter, or in its first media type)
    said = warn(
        at, f"parameter {obj.get('name')!r} has no schema", "a schema; any value is allowed"
    )
    anything: dict[str, Any] = {}
    if media_type is None:
        return Fixed(value={**obj, "schema": anything}, diagnostics=(said,))
    read: dict[str, Any] = {**content, media_type: {**media, "schema": anything}}
    return Fixed(value={**obj, "content": read}, diagnostics=(said,))


WITHOUT_SCHEMA: Rule[OpenApi] = Rule(
    name="parameter-without-schema",
    family="openapi-parameters",
    accepts="an OpenAPI 3.x parameter with neither a schema nor a schema in its content",
    makes="the parameter with schema: {} (any value)",
    warning="parameter '…' has no schema — a schema; any value is allowed",
    apply=_without_schema,
)

RULES: tuple[Rule[OpenApi], ...] = (WITHOUT_SCHEMA,)
"""The rules of one OpenAPI 3.x parameter, in the order they apply."""
