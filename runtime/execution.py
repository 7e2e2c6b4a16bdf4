"""toolbind.runtime.execution: how the Agent runs an explicit call. Runtime layer, public;
imports ``_executor`` and the Agent (for ``ExecutionFactory``) when imported.

The Agent routes each Call of a step once (``RoutedCall``) and hands it to an ``Executor``:
``InProcessExecutor`` (the default) runs the Activity in this process, sync ones in a worker
thread, each bounded by its timeout; ``toolbind.runtime.temporal.TemporalExecutor`` runs it as a
durable Temporal activity. Inside an Activity, ``current_call()`` gives the ``CallContext`` (the
call it serves, with a key stable across retries). ``ExecutionFactory`` makes the Activity of a
tool that has none registered (a generated package's HTTP Activities, for instance).
"""

from __future__ import annotations

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
from ._agent import ExecutionFactory
from ._executor import CallContext, Executor, InProcessExecutor, RoutedCall, current_call

__all__ = [
    "CallContext",
    "ExecutionFactory",
    "Executor",
    "InProcessExecutor",
    "RoutedCall",
    "current_call",
]
# -- end of the block written from _EXPORTS --

# What this namespace exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._agent": ("ExecutionFactory",),
    "._executor": ("CallContext", "Executor", "InProcessExecutor", "RoutedCall", "current_call"),
}
