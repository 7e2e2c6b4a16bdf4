"""Compiler layer: located diagnostics. Imports ``ir`` only.

Every user-facing problem with a spec is a ``Diagnostic`` that reads::

    specs/petstore.yaml#/paths/~1pets/get: error: <what was found> — <what was expected> (hint: …)

Frontends and passes report into a ``Diagnostics`` collector and keep going where they can, so
a user sees every problem of a run at once. ``errors.SpecError`` carries the collected list out
of the library; the CLI renders it and exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .ir import SourceLocation

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    loc: SourceLocation
    severity: Severity
    found: str
    expected: str | None = None
    hint: str | None = None
    line: int | None = None  # for syntax errors, where the pointer does not exist yet
    column: int | None = None

    @property
    def place(self) -> str:
        """Where, for a message quoting this one: ``file:line:column`` (a syntax error),
        ``file#pointer``, or the file."""
        if self.line:
            return f"{self.loc.file}:{self.line}:{self.column or 1}"
        return str(self.loc) if self.loc.pointer else self.loc.file

    def render(self) -> str:
        where = str(self.loc)
        if self.line is not None:
            where = f"{self.loc.file}:{self.line}:{self.column or 1}"
        text = f"{where}: {self.severity}: {self.found}"
        if self.expected:
            text += f" — {self.expected}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class Diagnostics:
    """Collects diagnostics in the order they were reported."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def error(
        self,
        loc: SourceLocation,
        found: str,
        expected: str | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        self.items.append(
            Diagnostic(loc=loc, severity="error", found=found, expected=expected, hint=hint)
        )

    def warning(
        self,
        loc: SourceLocation,
        found: str,
        expected: str | None = None,
        *,
        hint: str | None = None,
    ) -> None:
        self.items.append(
            Diagnostic(loc=loc, severity="warning", found=found, expected=expected, hint=hint)
        )

    def note(self, loc: SourceLocation, found: str, *, hint: str | None = None) -> None:
        self.items.append(Diagnostic(loc=loc, severity="note", found=found, hint=hint))

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]


def describe(value: object) -> str:
    """A short, safe description of a JSON value for a message: its kind and a clipped repr.

    ``describe([])`` is ``"an empty array"``, ``describe(True)`` is ``"a boolean true"`` (JSON's
    spelling, which is what the user wrote), ``describe("x" * 99)`` clips the text.
    """
    kinds: dict[type, str] = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }
    kind = kinds.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list)):
        return f"an empty {kind.removeprefix('an ')}" if not value else kind
    if value is None:
        return kind
    text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind} {text}"
