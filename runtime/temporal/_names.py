"""toolbind.runtime.temporal, runtime layer (imports only ``toolbind.runtime.contract``): the names
on the wire between clients, workflows and workers.

Workflow and activity types, the update/signal of a pending call's result, the stream topic and the
spec extension are read by both sides of a deployment, so they are written once, here.
"""

from __future__ import annotations

from typing import Literal

from ..contract import RETRY_KEY

WORKFLOW = "toolbind.run"
CALL_WORKFLOW = "toolbind.call"
LLM_ACTIVITY = "toolbind.llm"
TOOL_PREFIX = "tool:"
SUBMIT = "tool_result"
EVENTS = "events"
"""The topic of a run's (and a one-call workflow's) Workflow Stream: its user-facing events."""
EXTENSION = RETRY_KEY
DEFAULT_PENDING_TTL = 24 * 3600.0
Queues = Literal["one", "toolset", "tool"]
