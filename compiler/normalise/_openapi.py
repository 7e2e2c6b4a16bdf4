"""Compiler layer (normalise): what the OpenAPI families share. Imports ``ir`` only.

``OpenApi`` is the read-only context every OpenAPI rule is given: the document as written
(rules read it, never change it) and whether it is Swagger 2.0. ``PathEntry`` is one entry of
a paths map at its place: the reader reads ``paths`` (and AutoRest's ``x-ms-paths``) as a
sequence of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..ir import SourceLocation

# (``toolbind.contract``'s ``BodyKind``: this layer imports no runtime description)
BodyKind = Literal["json", "form", "multipart", "text", "binary"]


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
class Consumed:
    """Swagger 2.0's body parameter as the reader meets it (its ``$ref`` followed) and the
    media types its operation consumes (the document's when the operation has none)."""

    parameter: dict[str, Any]
    consumes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Form:
    """Swagger 2.0's form parameters of an operation (each followed, by name, where it is) and
    the media types it consumes."""

    parameters: tuple[tuple[str, dict[str, Any], SourceLocation], ...]
    consumes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Produced:
    """A response as the reader meets it (its ``$ref`` followed) and the media types its
    operation produces (Swagger 2.0's ``produces``, the document's when the operation has none)."""

    response: dict[str, Any]
    produces: tuple[str, ...]


def is_json(media_type: str) -> bool:
    base = media_type.split(";")[0].strip().lower()
    return base == "application/json" or base.endswith("+json") or base == "*/*"


def body_kind(media_type: str) -> BodyKind:
    base = media_type.split(";")[0].strip().lower()
    if is_json(base):
        return "json"
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base.startswith("multipart/"):
        return "multipart"
    if base.startswith("text/") or base in ("application/xml", "application/sdp"):
        return "text"
    return "binary"


def pick_media_type(types: list[str]) -> str:
    """JSON first, then form, multipart, text; otherwise the first listed."""
    for kind in ("json", "form", "multipart", "text"):
        for t in types:
            if body_kind(t) == kind:
                return t
    return types[0]
