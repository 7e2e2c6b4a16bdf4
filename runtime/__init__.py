"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library; never ``toolbind.compiler``.
"""

from ._binding import ToolBinding, load_bindings
from ._compose import ComposableTool, compose, nullable, resolve_activity, tool_schema
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
    "PendingError",
    "PendingExpired",
    "PendingStore",
    "PendingToolCall",
    "ToolBinding",
    "ToolResult",
    "UnknownPendingCall",
    "compose",
    "load_bindings",
    "nullable",
    "pending_app",
    "resolve_activity",
    "tool_schema",
]
