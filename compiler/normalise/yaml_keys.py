"""Compiler layer (normalise): map keys YAML reads as numbers, in a document JSON must hold.
Imports ``diagnostics`` and ``ir`` (through ``_rule``) and the kernel's YAML reading.

Real OpenAPI YAML writes response codes unquoted (``200:`` under ``responses``) and Matrix's
spec writes ``x-changedInMatrixVersion: {1.8: …, 1.10: …}``; YAML reads those keys as an integer
and a float, which no JSON object can hold, and the whole spec was refused. Each is read as its
text: an integer's decimal text, a float's text as written (``1.10`` stays ``1.10``, through the
kernel's ``FloatKey``). The loader applies the rule to the document it parsed (of an OpenAPI
spec, and of the files its ``$ref``s read), before any stage walks it: every later stage may
rely on a document that holds JSON values only.
"""

from __future__ import annotations

from typing import Any, cast

from toolbind.yaml12 import FloatKey

from ..ir import SourceLocation
from ._rule import Fixed, Rule, warn


def _number_key(key: object) -> bool:
    """An integer (never a boolean) or a ``FloatKey``: a key read as its text."""
    return type(key) is int or isinstance(key, FloatKey)


def key_text(key: object) -> str:
    """A map key as the text a JSON document would hold (a ``FloatKey`` as written)."""
    return key.text if isinstance(key, FloatKey) else str(key)


def _container(value: Any) -> bool:
    return isinstance(value, (dict, list))


def _empty(container: Any) -> Any:
    """A new, empty container of ``container``'s kind (a map or a list)."""
    return {} if isinstance(container, dict) else []


class _Copy:
    """The document with its number keys as text, made in document order (iterative: the
    document is not yet known to be shallow); a map shared through an alias is copied once, and
    a map holding the same key both ways (``200`` and ``'200'``) is kept as written, for the
    loader to refuse (it has no one meaning)."""

    def __init__(self) -> None:
        self.copies: dict[int, Any] = {}
        self.new: list[tuple[Any, Any, tuple[Any, ...]]] = []  # (value, its copy, its keys)
        self.first: tuple[tuple[Any, ...], int | FloatKey] | None = None
        self.count = 0

    def of(self, value: Any, path: tuple[Any, ...]) -> Any:
        """The copy of ``value`` (filled later, when it is new)."""
        if not _container(value):  # (no narrowing: the value stays Any)
            return value
        found: Any = self.copies.get(id(value))
        if found is None:
            found = self.copies[id(value)] = _empty(value)
            self.new.append((value, found, path))
        return found

    def run(self, value: Any) -> Any:
        made = self.of(value, ())
        stack: list[tuple[Any, Any, tuple[Any, ...]]] = []
        while self.new or stack:
            stack.extend(reversed(self.new))  # (the first child is read next)
            self.new = []
            node, copy, path = stack.pop()
            if isinstance(node, list):
                items = cast("list[Any]", node)
                copy.extend(self.of(v, (*path, i)) for i, v in enumerate(items))
            else:
                self._map(cast("dict[Any, Any]", node), copy, path)
        return made

    def _map(self, obj: dict[Any, Any], copy: dict[Any, Any], path: tuple[Any, ...]) -> None:
        numbers = [k for k in obj if _number_key(k)]
        texted = bool(numbers) and len({key_text(k) for k in obj}) == len(obj)
        if texted:
            if self.first is None:
                self.first = ((*path, key_text(numbers[0])), numbers[0])
            self.count += len(numbers)
        for k, v in obj.items():
            key = key_text(k) if texted and _number_key(k) else k
            copy[key] = self.of(v, (*path, key))


def _number_keys(document: Any, at: SourceLocation, _: object) -> Fixed | None:
    made = _Copy()
    canonical = made.run(document)
    if made.first is None:
        return None
    path, key = made.first
    kind = "number" if isinstance(key, FloatKey) else "integer"
    shown = key_text(key)
    said = warn(
        at.child(*path),
        f"an unquoted {kind} map key, read as its text '{shown}' (the first of {made.count} "
        "in this file)",
        "string keys (JSON object names are always strings)",
        hint=f"quote the key: '{shown}':"
        + (" (OpenAPI asks for response codes in quotes)" if kind == "integer" else ""),
    )
    return Fixed(value=canonical, diagnostics=(said,))


NUMBER_KEYS: Rule[object] = Rule(
    name="yaml-number-keys",
    family="yaml",
    accepts="a map key YAML reads as a number in an OpenAPI document: 200: under responses, "
    "1.10: in an extension",
    makes="the key's text ('200', '1.10' as written); the same key written both ways is refused",
    warning="an unquoted integer map key, read as its text '200' (the first of N in this file) "
    "— string keys (hint: quote the key)",
    apply=_number_keys,
)

RULES: tuple[Rule[object], ...] = (NUMBER_KEYS,)
"""The rules of a parsed YAML document (the loader applies them)."""
