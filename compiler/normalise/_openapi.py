"""Compiler layer (normalise): what the OpenAPI families share. Imports ``ir`` only.

``OpenApi`` is the read-only context every OpenAPI rule is given: the document as written
(rules read it, never change it), whether it is Swagger 2.0, and how a ``$ref`` a rule reads is
followed (``follow``: the reader's, split files included). ``PathEntry`` is one entry of
a paths map at its place: the reader reads ``paths`` (and AutoRest's ``x-ms-paths``) as a
sequence of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..ir import SourceLocation

# (``toolbind.contract``'s ``BodyKind``: this layer imports no runtime description)
BodyKind = Literal["json", "form", "multipart", "text", "binary"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenApi:
    """The context of the OpenAPI rules: the whole document and its version."""

    document: dict[str, Any]
    swagger: bool = False
    follow: Callable[[Any, SourceLocation], Any] | None = None
    """The value a fragment written as a ``$ref`` at a place leads to (None: it leads nowhere,
    which ``follow`` has said); a fragment that is no ``$ref`` is itself. None: the rules follow
    local references into ``document`` only."""


def followed(context: OpenApi, fragment: Any, at: SourceLocation) -> Any:
    """``fragment`` with its ``$ref``s followed as ``context`` says (None: it leads nowhere)."""
    if context.follow is not None:
        return context.follow(fragment, at)
    for _ in range(16):  # (a loop of references leads nowhere)
        ref = _ref(fragment)
        if not isinstance(ref, str):
            return fragment
        fragment = local(ref, context.document)
    return None


def _ref(value: Any) -> Any:
    return cast("dict[str, Any]", value).get("$ref") if isinstance(value, dict) else None


def local(ref: str, document: dict[str, Any]) -> Any:
    """What the local reference ``ref`` (``#/...``) names in ``document`` (None: nothing)."""
    if not ref.startswith("#"):
        return None
    found: Any = document
    for key in ref[2:].split("/") if ref != "#" else ():
        key = key.replace("~1", "/").replace("~0", "~")
        found = cast("dict[str, Any]", found).get(key) if isinstance(found, dict) else None
    return found


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Consumed:
    """Swagger 2.0's body parameter as the reader meets it (its ``$ref`` followed) and its
    operation, whose ``consumes`` (the document's when it has none) are the body's media types."""

    parameter: dict[str, Any]
    operation: Mapping[str, Any]

    @property
    def consumes(self) -> tuple[str, ...]:
        return media_types(self.operation, "consumes")


@dataclass(frozen=True, slots=True, kw_only=True)
class Form:
    """Swagger 2.0's form parameters of an operation (each followed, by name, where it is) and
    the operation, whose ``consumes`` are the form's media types."""

    parameters: tuple[tuple[str, dict[str, Any], SourceLocation], ...]
    operation: Mapping[str, Any]

    @property
    def consumes(self) -> tuple[str, ...]:
        return media_types(self.operation, "consumes")


@dataclass(frozen=True, slots=True, kw_only=True)
class Produced:
    """A response as the reader meets it (its ``$ref`` followed) and its operation, whose
    ``produces`` (Swagger 2.0's, the document's when it has none) are the response's media
    types."""

    response: dict[str, Any]
    operation: Mapping[str, Any]

    @property
    def produces(self) -> tuple[str, ...]:
        return media_types(self.operation, "produces")


def media_types(operation: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """The media types a Swagger 2.0 operation lists under ``key`` (``consumes``,
    ``produces``): its strings, in order."""
    listed: Any = operation.get(key)
    if not isinstance(listed, list):
        return ()
    return tuple(c for c in cast("list[Any]", listed) if isinstance(c, str))


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
