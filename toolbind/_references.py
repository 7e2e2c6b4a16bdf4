"""Kernel layer: the variable-reference grammar of the related documents (007 Variables, 011
Expressions). Standard library and ``errors`` only.

``†<kind>.<path>`` names a value of a run's context; ``||`` and ``&&`` combine references. The
compiler checks a prescribed ``_outputPath`` with it when it reads a spec; the runtime's context
(``toolbind.runtime.context``) resolves and writes through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .errors import InvalidReference

__all__ = ["MARK", "Reference", "is_reference", "parse_expression", "parse_reference"]

MARK = "†"


@dataclass(frozen=True, slots=True)
class Reference:
    """``†<kind>.<path>``: a kind of data message and a dot path into its value."""

    kind: str
    path: tuple[str, ...] = ()

    def __str__(self) -> str:
        return MARK + ".".join((self.kind, *self.path))

    def covers(self, other: Reference) -> bool:
        """Whether this path is ``other``'s or one of its ancestors (same kind)."""
        return self.kind == other.kind and other.path[: len(self.path)] == self.path


def parse_reference(text: str) -> Reference:
    """``"†data.user.name"`` → ``Reference("data", ("user", "name"))``.

    Raises:
        InvalidReference: the text is not ``†<kind>[.<key>...]`` (no dagger, an empty key).
    """
    body = text.strip()
    if not body.startswith(MARK):
        raise InvalidReference(f"{text!r} is no variable reference: expected †<kind>.<path>")
    parts = body[len(MARK) :].split(".")
    if any(not p or p != p.strip() for p in parts):
        raise InvalidReference(
            f"{text!r} is no variable reference: an empty or space-padded key "
            "(expected †<kind>.<key>.<key>...)"
        )
    return Reference(parts[0], tuple(parts[1:]))


def parse_expression(text: str) -> tuple[Literal["||", "&&", ""], tuple[Reference, ...]]:
    """A reference or an expression of references (011): ``a || b`` (the first that resolves;
    for an output path, the first on success and the second on failure) or ``a && b`` (all;
    for an output path, every one). Mixing ``||`` and ``&&`` is refused."""
    has_or, has_and = "||" in text, "&&" in text
    if has_or and has_and:
        raise InvalidReference(f"{text!r}: mixes || and && (use one of them)")
    op: Literal["||", "&&", ""] = "||" if has_or else "&&" if has_and else ""
    parts = text.split(op) if op else [text]
    return op, tuple(parse_reference(p) for p in parts)


def is_reference(value: Any) -> bool:
    """Whether ``value`` is a string written as a reference or an expression of references."""
    if not isinstance(value, str) or not value.lstrip().startswith(MARK):
        return False
    try:
        parse_expression(value)
    except InvalidReference:
        return False
    return True
