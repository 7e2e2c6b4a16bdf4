"""Compiler layer (normalise): Azure AutoRest's extensions that carry operations. Imports
``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

AutoRest's ``x-ms-paths`` holds paths whose key carries a fixed query (Azure Storage's
``/{containerName}?restype=container``): Swagger 2.0 cannot declare two operations on one path
that a query tells apart. Skipped as an extension, every such operation was lost (all of a
storage data-plane spec) with one note; read, the query is part of the path template, sent as
written before the call's own query.
"""

from __future__ import annotations

from typing import Any, cast

from ..diagnostics import Diagnostic
from ..ir import SourceLocation
from ._openapi import OpenApi, PathEntry
from ._rule import Fixed, Rule


def _x_ms_paths(
    entries: tuple[PathEntry, ...], at: SourceLocation, context: OpenApi
) -> Fixed | None:
    ms_paths = context.document.get("x-ms-paths")
    if not isinstance(ms_paths, dict):
        return None
    ms_at = at.child("x-ms-paths")  # (``at``: the document, whose field it is)
    table = cast("dict[str, Any]", ms_paths)
    added = tuple(PathEntry(route=route, item=item, in_map=ms_at) for route, item in table.items())
    note = Diagnostic(
        loc=ms_at,
        severity="note",
        found=f"{len(added)} path(s) read from x-ms-paths (AutoRest's paths with a fixed "
        "query): each query is sent as written",
    )
    return Fixed(value=entries + added, diagnostics=(note,))


X_MS_PATHS: Rule[OpenApi] = Rule(
    name="x-ms-paths",
    family="openapi-azure",
    accepts="AutoRest's x-ms-paths: paths whose key carries a fixed query (?restype=container)",
    makes="more entries of the paths map, each query part of its path template",
    warning="(a note) N path(s) read from x-ms-paths …: each query is sent as written",
    apply=_x_ms_paths,
)

RULES: tuple[Rule[OpenApi], ...] = (X_MS_PATHS,)
"""The rules of the paths map's entries (the document's context in hand)."""
