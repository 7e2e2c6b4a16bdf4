"""toolbind.runtime.pending: tool calls answered later (gateway-v3 async tools). Runtime layer,
public; imports the pending store (``_pending``, standard library only) when imported.

Six names, one role each:

- ``Pending``: what an Activity *returns* to say "the result comes later" (a TTL, and what the
  model is told meanwhile);
- ``PendingStore``: where such calls wait — one SQLite file shared by threads and processes —
  until a result is submitted or their TTL passes;
- ``PendingToolCall``: one call *as the store keeps it* (run, call id, tool, arguments, status,
  result);
- ``pending_app``: the HTTP (ASGI) app that submits results into a store
  (``POST /runs/{run_id}/tool-results``);
- ``PendingSink`` and ``PendingCall``: the two protocols the Agent holds a store and its calls
  by (``PendingStore`` and ``PendingToolCall`` satisfy them; another store may too).

The store's refusals are ``toolbind.runtime.errors.PendingError`` and its subclasses.
"""

from __future__ import annotations

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
from ._events import PendingCall, PendingSink
from ._executor import Pending
from ._pending import PendingStore, PendingToolCall, pending_app

__all__ = [
    "Pending",
    "PendingCall",
    "PendingSink",
    "PendingStore",
    "PendingToolCall",
    "pending_app",
]
# -- end of the block written from _EXPORTS --

# What this namespace exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._events": ("PendingCall", "PendingSink"),
    "._executor": ("Pending",),
    "._pending": ("PendingStore", "PendingToolCall", "pending_app"),
}
