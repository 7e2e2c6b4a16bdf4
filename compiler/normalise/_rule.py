"""Compiler layer: what a normalising rule is. Imports ``ir`` and ``diagnostics`` only.

A real spec's quirk (``type: int``, ``nullable`` in OpenAPI 3.1, a path key without its ``/``, …)
is read by a *rule*: a pure function from a raw fragment at a place (file + JSON pointer) to its
canonical form and the located diagnostics that say what was read and how. Rules never see the IR
and never touch the fragment they are given (they return a new one); the lowerer and the OpenAPI
reader read only what the rules leave, which is canonical JSON Schema 2020-12 and OpenAPI 3.1.

Each family of quirks is one module of this package, exporting ``RULES``; ``table()`` lists them
all (name, what it accepts, what it makes of it, the warning) for the docs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..diagnostics import Diagnostic
from ..ir import SourceLocation

C = TypeVar("C")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixed:
    """What a rule made of a fragment: the canonical fragment and what to tell the user."""

    value: Any
    diagnostics: tuple[Diagnostic, ...] = ()
    moved: tuple[tuple[tuple[str | int, ...], SourceLocation], ...] = ()
    """Where parts of ``value`` are written when the rule moved them (Swagger 2.0's parameter
    fields into OpenAPI 3's ``schema``): the keys that lead to a part in ``value``, and its
    place in the file. A diagnostic about a moved part is located where the user wrote it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule(Generic[C]):
    """One named leniency toward real specs.

    ``apply(fragment, at, context)`` returns ``None`` when the rule has nothing to say about the
    fragment (the common case: it must be cheap then), else a ``Fixed``. ``context`` is the
    family's own read-only settings (the dialect, whether the run is lenient, …).
    """

    name: str
    family: str
    accepts: str
    makes: str
    warning: str
    apply: Callable[[Any, SourceLocation, C], Fixed | None]


def run(
    rules: Iterable[Rule[C]], fragment: Any, at: SourceLocation, context: C, out: list[Diagnostic]
) -> Any:
    """Apply ``rules`` in order to ``fragment``; each sees what the one before it made.

    The diagnostics are appended to ``out``; the result is the canonical fragment."""
    for rule in rules:
        fixed = rule.apply(fragment, at, context)
        if fixed is not None:
            fragment = fixed.value
            out.extend(fixed.diagnostics)
    return fragment


def run_located(
    rules: Iterable[Rule[C]],
    fragment: Any,
    at: SourceLocation,
    context: C,
    out: list[Diagnostic],
    moved: dict[tuple[str | int, ...], SourceLocation],
) -> Any:
    """``run``, and where the parts the rules moved are written, added to ``moved``."""
    for rule in rules:
        fixed = rule.apply(fragment, at, context)
        if fixed is not None:
            fragment = fixed.value
            out.extend(fixed.diagnostics)
            moved.update(fixed.moved)
    return fragment


def warn(
    at: SourceLocation, found: str, expected: str | None = None, *, hint: str | None = None
) -> Diagnostic:
    """The located warning a rule gives for what it read leniently."""
    return Diagnostic(loc=at, severity="warning", found=found, expected=expected, hint=hint)


def note(at: SourceLocation, found: str) -> Diagnostic:
    """The located note a rule gives for what it read as a user meant it (``generate -v``)."""
    return Diagnostic(loc=at, severity="note", found=found)
