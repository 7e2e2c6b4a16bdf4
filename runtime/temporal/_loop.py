"""toolbind.runtime.temporal, runtime layer (imports temporalio's workflow API, the runtime's Agent,
events and pending records, and this package's ``_names``, ``_model`` and ``_world``): the Agent's
loop as deterministic workflow code, and the pending calls a run parks in its workflow.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from .._agent import Agent, LoopSettings, ModelSettings
from .._events import CallRecord
from .._pending import PendingToolCall
from ..capabilities import PendingDelivery, RequireApproval, ToolSelection
from ._model import ActivityModel
from ._names import DEFAULT_PENDING_TTL
from ._world import World


class WorkflowPending:
    """The pending store of one durable run: its state is the workflow's (rebuilt on replay); its
    records are the SQLite store's (``PendingToolCall``), in workflow time."""

    def __init__(self) -> None:
        self.calls: dict[str, PendingToolCall] = {}

    def add(
        self,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        ttl: float | None = None,
    ) -> None:
        now = workflow.time()
        self.calls[call_id] = PendingToolCall(
            run_id=run_id,
            call_id=call_id,
            tool=tool,
            arguments=dict(arguments),
            status="pending",
            result=None,
            error=None,
            created_at=now,
            expires_at=now + (ttl or DEFAULT_PENDING_TTL),
        )

    def deadline(self, call_id: str) -> float:
        return self.calls[call_id].expires_at or DEFAULT_PENDING_TTL

    def check(self, call_id: str) -> PendingToolCall:
        found = self.calls.get(call_id)
        if found is None:
            raise ApplicationError(
                f"no pending call {call_id!r} in this run", type="UnknownPendingCall"
            )
        if found.status != "pending":
            raise ApplicationError(
                f"call {call_id!r} is already {found.status}", type="AlreadyResolved"
            )
        return found

    def submit(self, call_id: str, result: Any, error: str | None) -> dict[str, Any]:
        found = replace(self.check(call_id), status="resolved", result=result, error=error)
        self.calls[call_id] = found
        return found.as_dict()

    def pending(self, run_id: str) -> list[PendingToolCall]:
        """The calls still waiting for a result."""
        return [c for c in self.calls.values() if c.status == "pending"]

    def collect(self, run_id: str) -> list[PendingToolCall]:
        """The resolved calls, and those whose ttl passed (``expired``), now delivered."""
        now = workflow.time()
        out: list[PendingToolCall] = []
        for call_id, parked in self.calls.items():
            if parked.status == "pending" and now >= self.deadline(call_id):
                parked = replace(
                    parked, status="expired", error="the call expired before a result arrived"
                )
            if parked.status in ("resolved", "expired"):
                out.append(parked)
                self.calls[call_id] = replace(parked, status="delivered")
        return out


class DurableLoop(Agent):
    """The Agent's loop as workflow code: the model call is an activity (``ActivityModel``),
    explicit calls go to the TemporalExecutor, pending calls park in the workflow."""

    def __init__(self, world: World, config: Mapping[str, Any], pending: WorkflowPending) -> None:
        llm = config["llm"]
        selection = config.get("tool_selection")
        super().__init__(
            "http://127.0.0.1:9/v1",  # never contacted: the LLM request is an activity
            model=llm["model"],
            tools=world.tools,
            activities=world.activities,
            capabilities=[  # the same capabilities as in process, rebuilt from the run's data
                PendingDelivery(pending),
                RequireApproval(config.get("requires_approval") or ()),
                *([ToolSelection(selection)] if selection is not None else []),
            ],
            instructions=config["instructions"],
            mode=llm.get("mode") or "composed",
            settings=ModelSettings(
                max_retries=llm["max_retries"],
                max_calls=llm["max_calls"],
                meta_fields=llm["meta_fields"],
                call_tag=llm.get("call_tag", "_tool"),
                tools_in_prompt=llm["tools_in_prompt"],
            ),
            loop=LoopSettings(
                end_on_output=config["end_on_output"], activity_timeout=world.activity_timeout
            ),
            executor=world.executor,
        )
        self.world = world
        self.config = config
        self._parked = pending
        self._compositions = world.composer  # composed once per worker, not once per run
        self._model = ActivityModel(config, world.llm_queue, self.route_of)

    def route_of(self, tool: str) -> str:
        binding = self._binding(tool)
        return self._route(binding)[0] if binding is not None else "missing"

    def _call_prefix(self) -> str:
        return f"call-{workflow.uuid4().hex[:8]}"

    async def _before_step(self, outstanding: Mapping[str, CallRecord]) -> None:
        if not self.config["wait_pending"]:
            return
        calls = self._parked.calls
        waiting = [c for c in outstanding if c in calls]
        if not waiting:
            return
        left = min(self._parked.deadline(c) for c in waiting) - workflow.time()
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await workflow.wait_condition(
                lambda: all(calls[c].status != "pending" for c in waiting),
                timeout=max(left, 0.001),
            )
