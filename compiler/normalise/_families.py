"""Compiler layer: every family of normalising rules, in one list (``table()`` reads it).

A new family is a module of this package exporting ``RULES``, added here."""

from __future__ import annotations

from typing import Any

from . import (
    openapi_azure,
    openapi_parameters,
    openapi_paths,
    openapi_refs,
    openapi_swagger2,
    schema_drafts,
    schema_nullable,
    schema_objects,
    schema_patterns,
    schema_refs,
    schema_shapes,
    schema_types,
    schema_unions,
    yaml_keys,
)
from ._rule import Rule
from ._schema import SchemaContext, in_phase

ALL: tuple[Rule[Any], ...] = (
    *yaml_keys.RULES,
    *schema_shapes.RULES,
    *schema_drafts.RULES,
    *schema_objects.RULES,
    *schema_refs.RULES,
    *schema_nullable.RULES,
    *schema_types.RULES,
    *schema_patterns.RULES,
    *schema_unions.RULES,
    *openapi_paths.RULES,
    *openapi_paths.PARAMETER_RULES,
    *openapi_parameters.RULES,
    *openapi_refs.RULES,
    *openapi_azure.RULES,
    *openapi_azure.SERVER_RULES,
    *openapi_swagger2.RULES,
)


def schema_phase(phase: str) -> tuple[Rule[SchemaContext], ...]:
    """The schema rules the lowerer reads in ``phase``, in the order of ``ALL`` (the order their
    warnings are given in)."""
    return tuple(r for r in ALL if in_phase(r, phase))
