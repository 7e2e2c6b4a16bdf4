"""toolbind.runtime: what generated packages and user code run on.

Imports pydantic and the standard library; never ``toolbind.compiler``.
"""

from ._binding import ToolBinding, load_bindings
from ._compose import ComposableTool, compose, nullable, resolve_activity, tool_schema

__all__ = [
    "ComposableTool",
    "ToolBinding",
    "compose",
    "load_bindings",
    "nullable",
    "resolve_activity",
    "tool_schema",
]
