"""Runtime layer, public: every exception toolbind raises, as one tree. Imports the kernel's
roots (``toolbind.errors``) and the standard library.

Errors are sorted by audience: a developer's mistake in code or configuration (``UsageError``), a
failure while running (``RunFailure``), a contract test's verdict (``ContractViolation``, an
``AssertionError``), and feedback meant for the model (``ModelFeedback``, which goes back to the
LLM for a retry and reaches a developer only inside a ``ResponseValidationError``).

The roots (``ToolbindError``, ``UsageError``, ``RunFailure``, ``ModelFeedback``) and the two
errors the kernel raises itself (``RegistrationError``, ``InvalidReference``) are defined in
``toolbind.errors`` and re-exported here; the compiler's errors (``toolbind.compiler.errors``),
the CLI's and the contract tester's (``toolbind.testing``) hang from the same root, so
``except ToolbindError`` catches anything toolbind raises on purpose. Classes keep the built-in
bases they always had (``RegistrationError`` is a ``ValueError``, ``UnknownPendingCall`` a
``LookupError``), so existing ``except`` clauses hold.

The tree (``tests/runtime/test_errors.py`` checks it against the classes)::

    ToolbindError
    ├── UsageError
    │   ├── RegistrationError
    │   ├── HttpConfigurationError
    │   ├── NotStrictable
    │   ├── InvalidReference
    │   ├── DelegateDefinitionError
    │   ├── ContractError                  (toolbind.testing)
    │   ├── CommandLineError               (toolbind.cli)
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
from typing import Any

from toolbind.errors import (
    FEEDBACK_HEADER,
    MAX_FEEDBACK_LINE_CHARS,
    MAX_FEEDBACK_LINES,
    InvalidReference,
    ModelFeedback,
    RegistrationError,
    RunFailure,
    ToolbindError,
    UsageError,
)

__all__ = [
    "FEEDBACK_HEADER",
    "MAX_FEEDBACK_LINES",
    "MAX_FEEDBACK_LINE_CHARS",
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


# -- a developer's mistake ------------------------------------------------------------------------


class HttpConfigurationError(UsageError, ValueError):
    """A mistake in how the HTTP runtime was configured (unknown tool, bad credentials, bad server
    variable, a missing environment variable, a bad gateway execution config).

    Raised to the developer, never sent to the model. Messages never contain secret values.
    """


class NotStrictable(UsageError, ValueError):
    """A tool whose schema cannot be made OpenAI-strict; ``issues`` holds the reasons (the
    exporters' ``ExportIssue``s, typed loosely because this module sits below the exporters)."""

    def __init__(self, tool: str, issues: Sequence[Any]) -> None:
        super().__init__("; ".join(map(str, issues)) or f"{tool}: not strictable")
        self.tool = tool
        self.issues = list(issues)


class DelegateDefinitionError(UsageError, ValueError):
    """A saved Request a ``_delegate`` names (to run as a new request) that cannot be found or
    read; the message is located (``file#/pointer: error: ... — expected ...``)."""


# -- a failure while running ----------------------------------------------------------------------


class AgentError(RunFailure):
    """Base of the Agent's run-time failures.

    Attributes:
        steps: the transcript of the run up to the failure (empty for ``request``): the Agent's
            ``Step``s, typed loosely because this module sits below the Agent.
    """

    steps: list[Any]

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
