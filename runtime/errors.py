"""Runtime layer, public: every exception toolbind raises, as one tree. Standard library only.

Errors are sorted by audience: a developer's mistake in code or configuration (``UsageError``), a
failure while running (``RunFailure``), a contract test's verdict (``ContractViolation``, an
``AssertionError``), and feedback meant for the model (``ModelFeedback``, which
goes back to the LLM for a retry and reaches a developer only inside a ``ResponseValidationError``).
The compiler's errors (``toolbind.compiler.errors``) and the contract tester's
(``toolbind.testing``) hang from the same root, so ``except ToolbindError`` catches anything
toolbind raises on purpose. Classes keep the built-in bases they always had (``RegistrationError``
is a ``ValueError``, ``UnknownPendingCall`` a ``LookupError``), so existing ``except`` clauses hold.

The tree (``tests/runtime/test_errors.py`` checks it against the classes)::

    ToolbindError
    ├── UsageError
    │   ├── RegistrationError
    │   ├── HttpConfigurationError
    │   ├── NotStrictable
    │   ├── InvalidReference
    │   ├── DelegateDefinitionError
    │   ├── ContractError                  (toolbind.testing)
    │   ├── CommandLineError               (toolbind.testing)
    │   └── CompileError                   (toolbind.compiler.errors)
    │       ├── SpecError
    │       ├── OutputError
    │       └── SelectionError
    ├── RunFailure
    │   ├── AgentError
    │   │   ├── LLMError
    │   │   └── ResponseValidationError
    │   ├── PendingError
    │   │   ├── UnknownPendingCall
    │   │   ├── AlreadyResolved
    │   │   ├── PendingExpired
    │   │   ├── DuplicatePendingCall
    │   │   └── InvalidPendingValue
    │   ├── UnresolvedReference
    │   ├── DelegateLimitExceeded
    │   │   └── DelegateLoop
    │   ├── TokenError
    │   ├── ParameterError
    │   └── ResponseTooLarge
    ├── ContractViolation                  (toolbind.testing)
    └── ModelFeedback
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agent import Step
    from .exports import ExportIssue

__all__ = [
    "AgentError",
    "AlreadyResolved",
    "DelegateDefinitionError",
    "DelegateLimitExceeded",
    "DelegateLoop",
    "DuplicatePendingCall",
    "HttpConfigurationError",
    "InvalidPendingValue",
    "InvalidReference",
    "LLMError",
    "ModelFeedback",
    "NotStrictable",
    "ParameterError",
    "PendingError",
    "PendingExpired",
    "RegistrationError",
    "ResponseTooLarge",
    "ResponseValidationError",
    "RunFailure",
    "TokenError",
    "ToolbindError",
    "UnknownPendingCall",
    "UnresolvedReference",
    "UsageError",
]


class ToolbindError(Exception):
    """The root of every exception toolbind raises on purpose."""


# -- a developer's mistake ------------------------------------------------------------------------


class UsageError(ToolbindError):
    """A developer's mistake in code, configuration or a spec: fix the input and run again."""


class RegistrationError(UsageError, ValueError):
    """A user's mistake while registering a tool or an Activity (bad schema, conflicting names)."""


class HttpConfigurationError(UsageError, ValueError):
    """A mistake in how the HTTP runtime was configured (unknown tool, bad credentials, bad server
    variable, a missing environment variable, a bad gateway execution config).

    Raised to the developer, never sent to the model. Messages never contain secret values.
    """


class NotStrictable(UsageError, ValueError):
    """A tool whose schema cannot be made OpenAI-strict; ``issues`` holds the reasons."""

    def __init__(self, tool: str, issues: Sequence[ExportIssue]) -> None:
        super().__init__("; ".join(map(str, issues)) or f"{tool}: not strictable")
        self.tool = tool
        self.issues = list(issues)


class InvalidReference(UsageError, ValueError):
    """A variable reference or output path that is not ``†<kind>.<path>`` (related/007), or an
    unknown ``_outputMethod``; a model's such mistake reaches it as the Call's failed result."""


class DelegateDefinitionError(UsageError, ValueError):
    """A saved Request a ``_delegate`` names (related/014) that cannot be found or read; the
    message is located (``file#/pointer: error: ... — expected ...``)."""


# -- a failure while running ----------------------------------------------------------------------


class RunFailure(ToolbindError):
    """Something failed while running: the model, a server, the pending store, a credential."""


class AgentError(RunFailure):
    """Base of the Agent's run-time failures.

    Attributes:
        steps: the transcript of the run up to the failure (empty for ``request``).
    """

    steps: list[Step]

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.steps = []


class LLMError(AgentError):
    """The LLM request itself failed (HTTP error, timeout, connection) after the client's retries."""


class ResponseValidationError(AgentError):
    """The model's answers stayed invalid after every retry.

    Attributes:
        errors: the validation errors of the last attempt (as fed back to the model).
        attempts: how many answers were tried.
        last_response: the last raw completion (JSON-ready dict), or None.
    """

    def __init__(
        self, message: str, *, errors: str, attempts: int, last_response: dict[str, Any] | None
    ) -> None:
        super().__init__(message)
        self.errors = errors
        self.attempts = attempts
        self.last_response = last_response


class PendingError(RunFailure):
    """Base class of the pending store's refusals (a caller's mistake, never a crash)."""


class UnknownPendingCall(PendingError, LookupError):
    """No pending call has this run id and call id."""


class AlreadyResolved(PendingError):
    """The call already has a result: a second submission is refused."""


class PendingExpired(PendingError):
    """The call's TTL passed before a result arrived."""


class DuplicatePendingCall(PendingError):
    """``add`` was given a run id and call id that the store already holds."""


class InvalidPendingValue(PendingError, TypeError):
    """A result or arguments that are not JSON (or a malformed field)."""


class UnresolvedReference(RunFailure, LookupError):
    """A variable reference names nothing in the context (in the Call's instance, if any)."""


class DelegateLimitExceeded(RunFailure):
    """A delegated call refused by a limit of the run's delegate tree (``Delegates``): nesting
    deeper than ``max_depth``, or the tree's LLM requests or tokens spent. Reported to the model
    as the Call's failed result (``metadata["error_type"]`` is this class's name).

    Attributes:
        chain: the delegates entered on the way, outermost first.
    """

    def __init__(self, message: str, chain: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.chain = tuple(chain)


class DelegateLoop(DelegateLimitExceeded):
    """A delegate that would enter itself again (``a.json → b.json → a.json``)."""


class TokenError(RunFailure):
    """The OAuth2 token endpoint did not give a token (a run-time failure, no secret inside)."""


class ParameterError(RunFailure, ValueError):
    """A parameter value that cannot be sent as given (reported to the model as a failed result)."""


class ResponseTooLarge(RunFailure):
    """An HTTP response body passed ``max_response_bytes`` (the call fails; nothing more is read)."""


# -- feedback meant for the model -----------------------------------------------------------------

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
