"""Compiler layer (normalise): what the OpenAPI families share. Imports ``ir`` only.

``OpenApi`` is the read-only context every OpenAPI rule is given: the document as written
(rules read it, never change it) and whether it is Swagger 2.0. ``PathEntry`` is one entry of
a paths map at its place: the reader reads ``paths`` (and AutoRest's ``x-ms-paths``) as a
sequence of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import SourceLocation


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenApi:
    """The context of the OpenAPI rules: the whole document and its version."""

    document: dict[str, Any]
    swagger: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PathEntry:
    """One path of a paths map: its key, its raw path item and the map it is in (``in_map``)."""

    route: str
    item: Any
    in_map: SourceLocation


@dataclass(frozen=True, slots=True, kw_only=True)
class RefSiblings:
    """A path item written as a ``$ref`` with fields beside it: those fields (``beside``) and
    the item the ``$ref`` leads to (``referenced``)."""

    beside: dict[str, Any]
    referenced: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class PathParameters:
    """An operation's path (``route``) and the path parameters it declares: name → the raw
    parameter object and its place (``declared``, in the order read)."""

    route: str
    declared: Mapping[str, tuple[Any, SourceLocation]]
