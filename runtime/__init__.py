"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library; never ``toolbind.compiler``.
"""

from ._binding import ToolBinding, load_bindings
from ._compose import ComposableTool, compose, nullable, resolve_activity, tool_schema
from ._result import ToolResult

__all__ = [
    "ComposableTool",
    "ToolBinding",
    "ToolResult",
    "compose",
    "load_bindings",
    "nullable",
    "resolve_activity",
    "tool_schema",
]
