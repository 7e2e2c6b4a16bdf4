"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library (``instructor``/``openai`` when an ``Agent`` is built);
never ``toolbind.compiler`` — except lazily, through ``_compiler`` alone, when a tool or an output
is given as a raw JSON Schema dict (``Tool.register(name, {...})``), which is compiled to the same
faithful models a generated package has. ``contract`` is the public, pydantic-free module that the
compiler and generated packages share with the runtime.

The names load on first use (PEP 562): ``import toolbind.runtime.types`` — what every generated
package starts with — does not import the Agent, the pending store or the exporters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for pyright; tests/runtime/test_surface.py checks it agrees with _EXPORTS
    from toolbind._compose import ComposableTool, nullable, resolve_activity, tool_schema

    from ._agent import (
        Agent,
        AgentEvent,
        CallRecord,
        ExecutionFactory,
        Pending,
        PendingCall,
        PendingSink,
        RunResult,
        Step,
    )
    from ._binding import ToolBinding, load_bindings
    from ._context import Context, ContextMessage, Reference, Variable, parse_reference
    from ._delegate import DelegateRequest, Delegates
    from ._executor import CallContext, Executor, InProcessExecutor, RoutedCall, current_call
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
    from ._mcp_server import mcp_server
    from ._pending import PendingStore, PendingToolCall, pending_app
    from ._registry import Activity, ActivityRegistry, Tool, ToolRegistry
    from ._response import Composition, compose
    from ._result import ToolResult
    from ._selection import BM25Selector, ToolSelector, toolset
    from ._state import ActivityContext
    from .errors import (
        AgentError,
        AlreadyResolved,
        InvalidReference,
        LLMError,
        ModelFeedback,
        PendingError,
        PendingExpired,
        RegistrationError,
        ResponseValidationError,
        RunFailure,
        ToolbindError,
        UnknownPendingCall,
        UnresolvedReference,
        UsageError,
    )

# What this package exports, and the module each name lives in: the one list of them. ``__all__``
# repeats the names because pyright reads only a literal list.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._agent": (
        "Agent",
        "AgentEvent",
        "CallRecord",
        "ExecutionFactory",
        "Pending",
        "PendingCall",
        "PendingSink",
        "RunResult",
        "Step",
    ),
    "._binding": (
        "ToolBinding",
        "load_bindings",
    ),
    "._executor": (
        "CallContext",
        "Executor",
        "InProcessExecutor",
        "RoutedCall",
        "current_call",
    ),
    "toolbind._compose": (
        "ComposableTool",
        "nullable",
        "resolve_activity",
        "tool_schema",
    ),
    "._context": (
        "Context",
        "ContextMessage",
        "Reference",
        "Variable",
        "parse_reference",
    ),
    "._delegate": (
        "DelegateRequest",
        "Delegates",
    ),
    "._exports": (
        "ExportIssue",
        "GeminiExport",
        "NotStrictable",
        "StrictExport",
        "anthropic_tools",
        "call_from_strict",
        "gemini_tools",
        "mcp_tools",
        "openai_strict_schema",
        "openai_strict_tools",
        "openai_tools",
        "strict_violations",
    ),
    "._mcp_server": ("mcp_server",),
    "._pending": (
        "PendingStore",
        "PendingToolCall",
        "pending_app",
    ),
    "._registry": (
        "Activity",
        "ActivityRegistry",
        "Tool",
        "ToolRegistry",
    ),
    "._response": (
        "Composition",
        "compose",
    ),
    "._result": ("ToolResult",),
    "._selection": (
        "BM25Selector",
        "ToolSelector",
        "toolset",
    ),
    "._state": ("ActivityContext",),
    ".errors": (
        "AgentError",
        "AlreadyResolved",
        "InvalidReference",
        "LLMError",
        "ModelFeedback",
        "PendingError",
        "PendingExpired",
        "RegistrationError",
        "ResponseValidationError",
        "RunFailure",
        "ToolbindError",
        "UnknownPendingCall",
        "UnresolvedReference",
        "UsageError",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "Activity",
    "ActivityContext",
    "ActivityRegistry",
    "Agent",
    "AgentError",
    "AgentEvent",
    "AlreadyResolved",
    "BM25Selector",
    "CallContext",
    "CallRecord",
    "ComposableTool",
    "Composition",
    "Context",
    "ContextMessage",
    "DelegateRequest",
    "Delegates",
    "ExecutionFactory",
    "Executor",
    "ExportIssue",
    "GeminiExport",
    "InProcessExecutor",
    "InvalidReference",
    "LLMError",
    "ModelFeedback",
    "NotStrictable",
    "Pending",
    "PendingCall",
    "PendingError",
    "PendingExpired",
    "PendingSink",
    "PendingStore",
    "PendingToolCall",
    "Reference",
    "RegistrationError",
    "ResponseValidationError",
    "RoutedCall",
    "RunFailure",
    "RunResult",
    "Step",
    "StrictExport",
    "Tool",
    "ToolBinding",
    "ToolRegistry",
    "ToolResult",
    "ToolSelector",
    "ToolbindError",
    "UnknownPendingCall",
    "UnresolvedReference",
    "UsageError",
    "Variable",
    "anthropic_tools",
    "call_from_strict",
    "compose",
    "current_call",
    "gemini_tools",
    "load_bindings",
    "mcp_server",
    "mcp_tools",
    "nullable",
    "openai_strict_schema",
    "openai_strict_tools",
    "openai_tools",
    "parse_reference",
    "pending_app",
    "resolve_activity",
    "strict_violations",
    "tool_schema",
    "toolset",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
