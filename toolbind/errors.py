"""Kernel layer, public: the root of every exception toolbind raises. Standard library only.

Errors are sorted by audience: a developer's mistake in code, configuration or a spec
(``UsageError``), a failure while running (``RunFailure``) and feedback meant for the model
(``ModelFeedback``, which goes back to the LLM for a retry). The compiler
(``toolbind.compiler.errors``), the runtime (``toolbind.runtime.errors``, which draws the whole
tree) and the contract tester (``toolbind.testing``) hang their errors from these, so
``except ToolbindError`` catches anything toolbind raises on purpose.

Besides the roots, this module holds the two errors the kernel itself raises: ``RegistrationError``
(a generated package's data that cannot be read) and ``InvalidReference`` (the variable-reference
grammar, which the compiler checks when it reads a spec and the runtime when it runs a Call).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "FEEDBACK_HEADER",
    "MAX_FEEDBACK_LINES",
    "MAX_FEEDBACK_LINE_CHARS",
    "InvalidReference",
    "ModelFeedback",
    "RegistrationError",
    "RunFailure",
    "ToolbindError",
    "UsageError",
]


class ToolbindError(Exception):
    """The root of every exception toolbind raises on purpose."""


class UsageError(ToolbindError):
    """A developer's mistake in code, configuration or a spec: fix the input and run again."""


class RunFailure(ToolbindError):
    """Something failed while running: the model, a server, the pending store, a credential."""


class RegistrationError(UsageError, ValueError):
    """A user's mistake while registering a tool or an Activity (bad schema, conflicting names)."""


class InvalidReference(UsageError, ValueError):
    """A variable reference or output path that is not ``†<kind>.<path>``, or an
    unknown ``_outputMethod``; a model's such mistake reaches it as the Call's failed result."""


# The first line of every feedback message; the model reads it before the list of problems.
FEEDBACK_HEADER = "Invalid response (fix each and answer again):\n"
# Bounds of the feedback: an answer with 10^5 bad items, or a megabyte-long tool name, must not
# become a megabyte-long retry message (nor ``ResponseValidationError.errors``).
MAX_FEEDBACK_LINES = 20
MAX_FEEDBACK_LINE_CHARS = 400


class ModelFeedback(ToolbindError, ValueError):
    """What was wrong with the model's answer, one line per problem: a typed value.

    Raised inside the Response model's validators, where pydantic keeps the instance (its error's
    ``ctx["error"]``) and instructor sends its text back to the model for a retry. The text is
    rendered once, from ``lines``, by ``str()``; code that needs the problems reads ``lines``.

    Attributes:
        lines: one ``- <where>: <what> (keyword: <keyword>)`` line per problem shown (at most
            ``MAX_FEEDBACK_LINES``, each cut to ``MAX_FEEDBACK_LINE_CHARS``).
        total: how many problems there were (more than ``lines`` when the list was cut).
    """

    def __init__(self, lines: Sequence[str], total: int | None = None) -> None:
        self.total = len(lines) if total is None else total
        self.lines = tuple(
            line
            if len(line) <= MAX_FEEDBACK_LINE_CHARS
            else line[: MAX_FEEDBACK_LINE_CHARS - 1] + "…"
            for line in lines[:MAX_FEEDBACK_LINES]
        )
        super().__init__(self.render())

    def render(self) -> str:
        """The message the model reads: the header, the lines, and how many were left out."""
        shown = list(self.lines)
        if self.total > len(shown):
            shown.append(f"- … and {self.total - len(shown)} more errors of the same answer")
        return FEEDBACK_HEADER + "\n".join(shown)
