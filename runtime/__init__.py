"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library (``instructor``/``openai`` when an ``Agent`` is built);
never ``toolbind.compiler`` — except lazily, when a tool or an output is given as a raw JSON Schema
dict (``Tool.register(name, {...})``), which is compiled to the same faithful models a generated
package has.

The names load on first use (PEP 562): ``import toolbind.runtime.types`` — what every generated
package starts with — does not import the Agent, the pending store or the exporters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agent import (
        Agent,
        AgentError,
        AgentEvent,
        CallRecord,
        ExecutionFactory,
        LLMError,
        Pending,
        PendingCall,
        PendingSink,
        ResponseValidationError,
        RunResult,
        Step,
    )
    from ._binding import ToolBinding, load_bindings
    from ._compose import ComposableTool, nullable, resolve_activity, tool_schema
    from ._exports import (
        ExportIssue,
        GeminiExport,
        NotStrictable,
        StrictExport,
        anthropic_tools,
        call_from_strict,
        gemini_tools,
        mcp_tools,
        openai_strict_schema,
        openai_strict_tools,
        openai_tools,
        strict_violations,
    )
    from ._pending import (
        AlreadyResolved,
        PendingError,
        PendingExpired,
        PendingStore,
        PendingToolCall,
        UnknownPendingCall,
        pending_app,
    )
    from ._registry import Activity, ActivityRegistry, RegistrationError, Tool, ToolRegistry
    from ._response import Composition, compose
    from ._result import ToolResult

__all__ = [
    "Activity",
    "ActivityRegistry",
    "Agent",
    "AgentError",
    "AgentEvent",
    "AlreadyResolved",
    "CallRecord",
    "ComposableTool",
    "Composition",
    "ExecutionFactory",
    "ExportIssue",
    "GeminiExport",
    "LLMError",
    "NotStrictable",
    "Pending",
    "PendingCall",
    "PendingError",
    "PendingExpired",
    "PendingSink",
    "PendingStore",
    "PendingToolCall",
    "RegistrationError",
    "ResponseValidationError",
    "RunResult",
    "Step",
    "StrictExport",
    "Tool",
    "ToolBinding",
    "ToolRegistry",
    "ToolResult",
    "UnknownPendingCall",
    "anthropic_tools",
    "call_from_strict",
    "compose",
    "gemini_tools",
    "load_bindings",
    "mcp_tools",
    "nullable",
    "openai_strict_schema",
    "openai_strict_tools",
    "openai_tools",
    "pending_app",
    "resolve_activity",
    "strict_violations",
    "tool_schema",
]

_WHERE: dict[str, str] = {
    "Activity": "._registry",
    "ActivityRegistry": "._registry",
    "Agent": "._agent",
    "AgentError": "._agent",
    "AgentEvent": "._agent",
    "AlreadyResolved": "._pending",
    "CallRecord": "._agent",
    "ComposableTool": "._compose",
    "Composition": "._response",
    "ExecutionFactory": "._agent",
    "ExportIssue": "._exports",
    "GeminiExport": "._exports",
    "LLMError": "._agent",
    "NotStrictable": "._exports",
    "Pending": "._agent",
    "PendingCall": "._agent",
    "PendingError": "._pending",
    "PendingExpired": "._pending",
    "PendingSink": "._agent",
    "PendingStore": "._pending",
    "PendingToolCall": "._pending",
    "RegistrationError": "._registry",
    "ResponseValidationError": "._agent",
    "RunResult": "._agent",
    "Step": "._agent",
    "StrictExport": "._exports",
    "Tool": "._registry",
    "ToolBinding": "._binding",
    "ToolRegistry": "._registry",
    "ToolResult": "._result",
    "UnknownPendingCall": "._pending",
    "anthropic_tools": "._exports",
    "call_from_strict": "._exports",
    "compose": "._response",
    "gemini_tools": "._exports",
    "load_bindings": "._binding",
    "mcp_tools": "._exports",
    "nullable": "._compose",
    "openai_strict_schema": "._exports",
    "openai_strict_tools": "._exports",
    "openai_tools": "._exports",
    "pending_app": "._pending",
    "resolve_activity": "._compose",
    "strict_violations": "._exports",
    "tool_schema": "._compose",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
