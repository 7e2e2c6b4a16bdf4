"""toolbind.runtime.capabilities: what an Agent does beyond asking the model and running calls,
one object per feature (``Agent(capabilities=[...])``). Imports its modules, ``_capability`` and
``_delegate``.

Each capability owns its feature's state and wraps the Agent's toolset, a request's tools, the
step or each call (``Capability``'s hooks); the Agent composes them and holds none::

    agent = Agent(
        url,
        model="m",
        capabilities=[PendingDelivery(PendingStore("pending.db")), Guardrails(input=[audit])],
    )

``DurableAgent`` takes the same objects (those that are data: ``RequireApproval``,
``ToolSelection(k)``).
"""

from __future__ import annotations

from .._capability import Capability, Run, Toolset, WrapperToolset
from .._delegate import DelegateRequest, Delegates
from .approval import RequireApproval
from .guardrails import Guardrails
from .mcp import McpServers
from .pending import PendingDelivery
from .selection import ToolSelection

__all__ = [
    "Capability",
    "DelegateRequest",
    "Delegates",
    "Guardrails",
    "McpServers",
    "PendingDelivery",
    "RequireApproval",
    "Run",
    "ToolSelection",
    "Toolset",
    "WrapperToolset",
]
