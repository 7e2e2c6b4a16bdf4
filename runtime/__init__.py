"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library (``instructor``/``openai`` when an ``Agent`` is built);
never ``toolbind.compiler`` — except lazily, when a tool or an output is given as a raw JSON Schema
dict (``Tool.register(name, {...})``), which is compiled to the same faithful models a generated
package has.
"""

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
