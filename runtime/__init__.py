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
from ._registry import Activity, ActivityRegistry, RegistrationError, Tool, ToolRegistry
from ._response import Composition, compose
from ._result import ToolResult

__all__ = [
    "Activity",
    "ActivityRegistry",
    "Agent",
    "AgentError",
    "AgentEvent",
    "CallRecord",
    "ComposableTool",
    "Composition",
    "ExecutionFactory",
    "LLMError",
    "Pending",
    "PendingCall",
    "PendingSink",
    "RegistrationError",
    "ResponseValidationError",
    "RunResult",
    "Step",
    "Tool",
    "ToolBinding",
    "ToolRegistry",
    "ToolResult",
    "compose",
    "load_bindings",
    "nullable",
    "resolve_activity",
    "tool_schema",
]
