"""Compiler layer (frontends/openapi): what the OpenAPI reader's modules share. Imports ``ir``,
``_load`` and the runtime's HTTP contract.

``Where`` is a raw value with its place and the document its ``$ref``s are relative to;
``OperationFilter`` says which operations to keep; the rest annotates a parameter's schema.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolbind.contract import ParameterLocation, ParameterStyle

from ..._load import Document, load_document
from ..._steps import Steps
from ...diagnostics import Diagnostic
from ...ir import ArrayNode, SchemaNode, SourceLocation, StringNode

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
LOCATIONS: tuple[ParameterLocation, ...] = ("path", "query", "header", "cookie")
DEFAULT_STYLE: dict[str, ParameterStyle] = {
    "path": "simple",
    "query": "form",
    "header": "simple",
    "cookie": "form",
}
# The Call field a non-object (or unflattenable) body is wrapped under.
BODY_FIELD = "body"


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationFilter:
    """Which operations to keep (``toolbind generate --tag/--path/--operation``).

    An operation is kept when it matches every non-empty criterion: one of ``tags``; a path
    matching one of the ``paths`` glob patterns (``/pets*``); an ``operationId`` or tool name in
    ``operations``.
    """

    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tags or self.paths or self.operations)

    def keeps(self, tags: tuple[str, ...], path: str, operation_id: str | None, name: str) -> bool:
        if self.tags and not set(tags) & set(self.tags):
            return False
        if self.paths and not any(fnmatch.fnmatchcase(path, p) for p in self.paths):
            return False
        return not self.operations or bool({operation_id, name} & set(self.operations))


@dataclass
class Where:
    """A raw value, where it is, and the document its ``$ref``s are relative to.

    ``moved``: where the parts of ``value`` that a normalising rule moved are written (keys in
    ``value`` → place), so that what is said of them points where the user wrote them."""

    value: Any
    loc: SourceLocation
    root: Any
    path: Path | None
    moved: dict[tuple[str | int, ...], SourceLocation] = field(
        default_factory=dict[tuple[str | int, ...], SourceLocation]
    )

    def part(self, *keys: str | int) -> Where:
        """The part of ``value`` under ``keys`` (object keys), at its place, with what was moved
        inside it."""
        value = self.value
        for key in keys:
            value = value[key]
        n = len(keys)
        inside = {k[n:]: at for k, at in self.moved.items() if k[:n] == keys and len(k) > n}
        return Where(value, self.at(*keys), self.root, self.path, inside)

    def at(self, *keys: str | int) -> SourceLocation:
        """The place of the part of ``value`` under ``keys``, as the user wrote it."""
        for n in range(len(keys), 0, -1):
            place = self.moved.get(keys[:n])
            if place is not None:
                return place.child(*keys[n:])
        return self.loc.child(*keys)


def load_with_dates_as_text(path: Path, shown: str, steps: Steps) -> Document | Diagnostic:
    """A file an OpenAPI spec ``$ref``s, read as the spec itself is: an unquoted YAML date or
    timestamp (common in examples and defaults) is the text written; parsed through
    ``steps``."""
    return load_document(path, shown, dates_as_text=True, steps=steps)


def never_empty(node: SchemaNode) -> SchemaNode:
    """``node`` refusing an empty string or array, for a value that cannot be sent empty: a
    path parameter (``/conversations/{sid}`` with an empty sid is the collection's URL, another
    operation's) or a required array of a form body (which has no way to say ``[]``). The Call
    refuses it, so the model is told before anything is sent (the HTTP client refuses it too,
    for a Call made without validation). A schema behind a ``$ref`` stays as it is: it may be
    another value's too."""
    if isinstance(node, StringNode) and not node.min_length:
        return replace(node, min_length=1)
    if isinstance(node, ArrayNode) and not node.min_items:
        return replace(node, min_items=1)
    return node


def annotate(node: SchemaNode, pobj: dict[str, Any]) -> SchemaNode:
    """A parameter's own description and deprecation on its schema node."""
    description = pobj.get("description")
    meta = node.meta
    if isinstance(description, str) and description.strip() and not meta.description:
        meta = replace(meta, description=description.strip())
    if pobj.get("deprecated") is True:
        meta = replace(meta, deprecated=True)
    if meta is node.meta:
        return node
    return replace(node, meta=meta)
