"""Runtime layer: the Agent — its loop (``_loop``), how it routes and runs calls (``_calls``),
what it says to the model (``_feedback``) and its settings (``_settings``). Imports those modules;
the capabilities it composes are ``toolbind.runtime.capabilities``.
"""

from __future__ import annotations

from .._events import AgentEvent, CallRecord, PendingCall, PendingSink, RunResult, Step
from .._executor import Pending
from ..errors import AgentError, LLMError, ResponseValidationError
from ._calls import ExecutionFactory
from ._loop import Agent, ContextLike
from ._settings import DEFAULT_CALL_TAG, DEFAULT_MAX_CALLS, LoopSettings, ModelSettings

__all__ = [
    "DEFAULT_CALL_TAG",
    "DEFAULT_MAX_CALLS",
    "Agent",
    "AgentError",
    "AgentEvent",
    "CallRecord",
    "ContextLike",
    "ExecutionFactory",
    "LLMError",
    "LoopSettings",
    "ModelSettings",
    "Pending",
    "PendingCall",
    "PendingSink",
    "ResponseValidationError",
    "RunResult",
    "Step",
]
