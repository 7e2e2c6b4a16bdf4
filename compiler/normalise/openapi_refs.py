"""Compiler layer (normalise): ``$ref``s where OpenAPI has none, as split specs write them.
Imports ``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

OpenAPI allows a ``$ref`` per path item and per security scheme, not for a whole map, and a
path item's ``$ref`` leaves the meaning of fields beside it undefined. Split specs do both; the
meaning is plain, so the reader follows them, and these rules say so.
"""

from __future__ import annotations

from typing import Any

from ..ir import SourceLocation
from ._openapi import OpenApi, RefSiblings
from ._rule import Fixed, Rule, warn


def _whole_map(what: str) -> Any:
    """A rule's ``apply`` for a map written as one ``$ref`` (followed by the reader)."""

    def apply(fragment: Any, at: SourceLocation, _: OpenApi) -> Fixed | None:
        if not isinstance(fragment, dict) or "$ref" not in fragment:
            return None
        # the whole map in another file (json-refs' multi-file Swagger: ``paths: {$ref:
        # ./paths/index.yaml}``, a real email API's security schemes): OpenAPI allows a $ref
        # per entry only, but the meaning is plain. Read as an entry named "$ref", the spec
        # compiled to no tool; ignored, every operation that needs a credential failed at
        # run time with no scheme to give it for.
        name = at.pointer.rsplit("/", 1)[-1]
        return Fixed(
            value=fragment,
            diagnostics=(
                warn(
                    at.child("$ref"),
                    f"{name} is a $ref to the whole map; followed",
                    f"a map of {what} (each may be a $ref)",
                ),
            ),
        )

    return apply


def _siblings(fragment: RefSiblings, at: SourceLocation, _: OpenApi) -> Fixed | None:
    both = sorted(k for k in fragment.beside if k in fragment.referenced and not k.startswith("x-"))
    if not both:
        return None
    return Fixed(
        value=fragment,
        diagnostics=(
            warn(
                at,
                f"the path item has {', '.join(both)} both beside its $ref and in the item it "
                "references; read as written beside the $ref",
                "each field in one of the two (OpenAPI leaves a field in both undefined)",
            ),
        ),
    )


PATHS_REF: Rule[OpenApi] = Rule(
    name="paths-ref",
    family="openapi-refs",
    accepts="paths written as one $ref to a file ({$ref: ./paths/index.yaml})",
    makes="the map the $ref leads to (followed by the reader)",
    warning="paths is a $ref to the whole map; followed",
    apply=_whole_map("paths to path items"),
)
SECURITY_SCHEMES_REF: Rule[OpenApi] = Rule(
    name="security-schemes-ref",
    family="openapi-refs",
    accepts="securitySchemes (securityDefinitions) written as one $ref to a file",
    makes="the map the $ref leads to (followed by the reader)",
    warning="securitySchemes is a $ref to the whole map; followed",
    apply=_whole_map("security schemes"),
)
PATH_ITEM_SIBLINGS: Rule[OpenApi] = Rule(
    name="path-item-ref-siblings",
    family="openapi-refs",
    accepts="a path item's $ref with fields beside it that the referenced item has too",
    makes="both read, each field as written beside the $ref",
    warning="the path item has … both beside its $ref and in the item it references; …",
    apply=_siblings,
)

RULES: tuple[Rule[Any], ...] = (PATHS_REF, SECURITY_SCHEMES_REF, PATH_ITEM_SIBLINGS)
