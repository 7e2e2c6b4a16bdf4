"""toolbind.runtime.context: the context of a run (data, state, input, instances). Runtime
layer, public; imports ``_context`` (standard library and the kernel's reference grammar) when
imported.

``Context`` holds a run's data, state and input messages (each a ``ContextMessage``), given to
``Agent.run(..., context=...)``; ``Reference`` (``†data.user.name``, read by
``parse_reference``) names a value in it, and a ``Variable`` is a reference a Call's argument
holds, resolved before the Call runs.

Three other names end in "Context" and are not this one: ``toolbind.runtime.ActivityContext`` is
what an Activity that takes a second argument is given (the run, the call, the run's ``deps`` and
the part of this context the call may see); ``toolbind.runtime.execution.CallContext`` is the call
an Activity serves (``current_call()``: run id, call id, a key stable across retries); and
``ContextMessage`` is one message of a ``Context``.
"""

from __future__ import annotations

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
from ._context import Context, ContextMessage, Reference, Variable, parse_reference

__all__ = [
    "Context",
    "ContextMessage",
    "Reference",
    "Variable",
    "parse_reference",
]
# -- end of the block written from _EXPORTS --

# What this namespace exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._context": ("Context", "ContextMessage", "Reference", "Variable", "parse_reference"),
}
