"""toolbind.runtime: what generated packages and user code run on.

Runtime layer, the package's face. Imports pydantic and the standard library (``instructor``/
``openai`` when an ``Agent`` is built); never ``toolbind.compiler`` — except lazily, through
``_compiler`` alone, when a tool or an output is given as a raw JSON Schema dict
(``Tool.register(name, {...})``), which is compiled to the same faithful models a generated
package has.

The names load on first use (PEP 562): ``import toolbind.runtime.types`` — what every generated
package starts with — does not import the Agent, the pending store or the exporters. The top level
holds what a program that runs tools needs: the Agent and its transcript, tools and Activities,
composition, delegates, tool selection, the MCP server and the two errors most code catches. The
rest is in sub-namespaces, each with its own ``__all__``:

- ``toolbind.runtime.types``: the building blocks of generated models;
- ``toolbind.runtime.contract``: the contract generated packages import (``toolbind.contract``
  and ``HttpCaller``), with the composition rules (``tool_schema``, ``resolve_activity``...);
- ``toolbind.runtime.errors``: every exception, as one tree;
- ``toolbind.runtime.exports``: tools in a provider's format (OpenAI, strict, Anthropic, Gemini, MCP);
- ``toolbind.runtime.pending``: calls answered later (the pending store and its HTTP app);
- ``toolbind.runtime.context``: the run's context of data, state and input messages;
- ``toolbind.runtime.execution``: how the Agent runs a call (executors, the call's context);
- ``toolbind.runtime.http``, ``.mcp``, ``.temporal``: HTTP Activities, MCP, durable runs.

A name the top level once held and that now lives in a sub-namespace still resolves here, with a
``DeprecationWarning`` that says where it went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbind._face import lazy

# What the top level exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._agent": ("Agent", "LoopSettings", "ModelSettings"),
    "._binding": ("ToolBinding", "load_bindings"),
    "._delegate": ("DelegateRequest", "Delegates"),
    "._events": ("AgentEvent", "CallRecord", "RunResult", "Step"),
    ".mcp._serve": ("mcp_server",),
    "._registry": ("Activity", "ActivityRegistry", "Tool", "ToolRegistry"),
    "._response": ("Composition", "compose"),
    "._result": ("ToolResult",),
    "._selection": ("BM25Selector", "ToolSelector", "toolset"),
    "._state": ("ActivityContext",),
    ".errors": ("ToolbindError", "UsageError"),
}
# Where the names the top level no longer holds went (looked up only for such a name).
_MOVED_TO = ("errors", "exports", "pending", "context", "execution", "contract")

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
if TYPE_CHECKING:
    from ._agent import Agent, LoopSettings, ModelSettings
    from ._binding import ToolBinding, load_bindings
    from ._delegate import DelegateRequest, Delegates
    from ._events import AgentEvent, CallRecord, RunResult, Step
    from ._registry import Activity, ActivityRegistry, Tool, ToolRegistry
    from ._response import Composition, compose
    from ._result import ToolResult
    from ._selection import BM25Selector, ToolSelector, toolset
    from ._state import ActivityContext
    from .errors import ToolbindError, UsageError
    from .mcp._serve import mcp_server

__all__ = [
    "Activity",
    "ActivityContext",
    "ActivityRegistry",
    "Agent",
    "AgentEvent",
    "BM25Selector",
    "CallRecord",
    "Composition",
    "DelegateRequest",
    "Delegates",
    "LoopSettings",
    "ModelSettings",
    "RunResult",
    "Step",
    "Tool",
    "ToolBinding",
    "ToolRegistry",
    "ToolResult",
    "ToolSelector",
    "ToolbindError",
    "UsageError",
    "compose",
    "load_bindings",
    "mcp_server",
    "toolset",
]
# -- end of the block written from _EXPORTS --

__getattr__, __dir__ = lazy(__name__, _EXPORTS, _MOVED_TO)
