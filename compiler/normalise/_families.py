"""Compiler layer: every family of normalising rules, in one list (``table()`` reads it).

A new family is a module of this package exporting ``RULES``, added here."""

from __future__ import annotations

from typing import Any

from . import openapi_azure, openapi_paths, openapi_refs, openapi_swagger2
from ._rule import Rule

ALL: tuple[Rule[Any], ...] = (
    *openapi_paths.RULES,
    *openapi_refs.RULES,
    *openapi_azure.RULES,
    *openapi_swagger2.RULES,
)
