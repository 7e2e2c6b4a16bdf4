"""Compiler layer, public: the errors ``toolbind.compiler`` raises. Imports ``toolbind.runtime.errors``
(standard library only) for the root of the tree.

All three are a user's mistake in what they asked the compiler to do (``CompileError``, a
``toolbind.runtime.errors.UsageError``): the CLI prints them without a traceback and exits 1
(a spec) or 2 (a command line). The whole tree is drawn in ``toolbind.runtime.errors``; this
package's part of it::

    CompileError
    ├── SpecError
    ├── OutputError
    └── SelectionError
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolbind.errors import UsageError

if TYPE_CHECKING:
    from .diagnostics import Diagnostic

__all__ = ["CompileError", "OutputError", "SelectionError", "SpecError"]


class CompileError(UsageError):
    """A spec, an output directory or a selection the compiler can't work with."""


class SpecError(CompileError):
    """A spec (or a set of specs) could not be compiled; ``diagnostics`` says where and why."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        super().__init__("\n".join(d.render() for d in errors or self.diagnostics))


class OutputError(CompileError):
    """The output directory can't be written (a usage problem, not a spec problem)."""


class SelectionError(CompileError, ValueError):
    """``--tag``/``--path``/``--operation`` select nothing (a usage problem, not a spec problem)."""
