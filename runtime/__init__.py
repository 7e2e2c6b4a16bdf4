"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library; never ``toolbind.compiler``.
"""

from ._binding import ToolBinding, load_bindings
from ._compose import ComposableTool, compose, nullable, resolve_activity, tool_schema
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
from ._result import ToolResult

__all__ = [
    "AlreadyResolved",
    "ComposableTool",
    "ExportIssue",
    "GeminiExport",
    "NotStrictable",
    "PendingError",
    "PendingExpired",
    "PendingStore",
    "PendingToolCall",
    "StrictExport",
    "ToolBinding",
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
