"""Runtime layer: ``PendingDelivery`` — calls whose result comes later, kept in a pending store
and delivered to the model at a later step. Imports ``_capability``,
``capabilities.approval``, ``_events``, ``_executor``, ``_result``, ``_secrets`` (lazily).

An async call (gateway-v3 ``space``, ``external`` without a URL, an Activity that returns
``Pending``, a call parked for approval) is added to the store; the model reads
``{"status": "pending", ...}`` meanwhile. Before each step the run's submitted results are
collected and shown to the model as ``tool_result`` events (a parked approval decided then: the
call runs, or is denied). Without this capability an async call fails, saying so.

A call identical (same tool, same arguments) to one of the run still waiting for approval is
not parked again: the model reads that it already waits (``CallRecord.repeats``), and a step
whose calls all repeat waiting ones pauses the run.
"""

from __future__ import annotations

from typing import Any, cast

from .._capability import DELIVERED, Capability, Run, for_the_model, visible
from .._events import AgentEvent, CallRecord, EventType, PendingCall, PendingSink, Step
from .._executor import Pending, RoutedCall
from .._result import ToolResult
from .approval import APPROVAL, decide

__all__ = ["PendingDelivery"]

_Result = ToolResult[Any]
_REPEAT = "This call already waits for a human's approval; its result comes later."
_UNDECIDED = ("_reasoningForCall", "_output")
"""Meta fields a repeated call may change without being another call (the model's prose and
guess: never what runs)."""


def _as_decided(call: dict[str, Any]) -> dict[str, Any]:
    """A call parked for approval as a human decides it: what runs, not the model's prose."""
    return {k: v for k, v in call.items() if k not in _UNDECIDED}


class PendingDelivery(Capability):
    """Keep async calls in ``store`` and deliver their results when submitted.

    Args:
        store: the pending store (``PendingStore``, or any ``PendingSink``).
    """

    def __init__(self, store: PendingSink) -> None:
        self.store = store

    def for_child(self) -> Capability | None:
        return None  # a delegate's sub-request has no pending calls of its own

    async def park(self, routed: RoutedCall, marker: Pending) -> ToolResult[Any] | None:
        arguments = dict(marker.arguments) if marker.arguments is not None else routed.arguments
        try:
            waiting = self._waiting(routed.run_id, routed.tool, arguments.get(APPROVAL))
            if waiting is not None:
                # a model that reads "waits for approval" often asks again: one human decision
                # per distinct call, the repeat told (not parked) — the loop pauses on repeats
                return _Result.ok(
                    {"status": "pending", "pendingToolCallId": waiting, "message": _REPEAT},
                    execution="approval",
                    repeats=waiting,
                )
            self.store.add(
                run_id=routed.run_id,
                call_id=routed.call_id,
                tool=routed.tool,
                arguments=arguments,
                ttl=marker.ttl,
            )
        except Exception as exc:
            return _Result.fail(f"could not record the pending call: {exc}", execution="async")
        return _Result.ok(
            {"status": "pending", "pendingToolCallId": routed.call_id, "message": marker.message},
            execution="async",
        )

    def _waiting(self, run_id: str, tool: str, parked: Any) -> str | None:
        """The id of the run's call still waiting for approval that ``parked`` (a call of
        ``tool`` to park for approval, else not a dict) repeats, or None."""
        if not isinstance(parked, dict):
            return None
        wanted = _as_decided(cast("dict[str, Any]", parked))
        for item in self.store.pending(run_id):
            held: Any = item.arguments.get(APPROVAL)
            same = isinstance(held, dict) and _as_decided(cast("dict[str, Any]", held)) == wanted
            if item.tool == tool and same:
                return item.call_id
        return None

    async def before_step(self, run: Run, step: Step) -> list[AgentEvent]:
        shown = run.shown()
        events: list[AgentEvent] = []
        for item in self.store.collect(run.run_id):
            envelope, progress = await _envelope(run, item)
            known = run.outstanding.pop(item.call_id, None)
            binding = run.binding(item.tool)
            shows = known.visible if known else visible(binding) if binding else True
            step.delivered.append(
                CallRecord(
                    call_id=item.call_id,
                    tool=item.tool,
                    route="async",
                    arguments=dict(item.arguments),
                    result=envelope,
                    progress=progress,
                    visible=shows,
                )
            )
            result = envelope.model_dump(mode="json")
            said = {
                "event": DELIVERED,
                "call_id": item.call_id,
                "tool": shown.get(item.tool, item.tool),
                "result": result,
            }
            run.convo.append({"role": "user", "content": for_the_model(said)})
            end: EventType = "tool-call.complete" if envelope.success else "tool-call.error"
            told: list[tuple[EventType, Any]] = [
                *(("tool-result", {"preliminary": True, "output": p}) for p in progress),
                (end, result),
            ]
            events.extend(
                AgentEvent(
                    type=kind,
                    run_id=run.run_id,
                    step=step.index,
                    call_id=item.call_id,
                    tool=item.tool,
                    data=data,
                    visible=shows,
                )
                for kind, data in told
            )
        return events


async def _envelope(run: Run, item: PendingCall) -> tuple[ToolResult[Any], list[Any]]:
    """The delivered call's result — what was submitted, or the decision on a parked call — and
    the progress of a call that ran now (approved)."""
    parked: Any = item.arguments.get(APPROVAL)
    if isinstance(parked, dict):  # a call that waited for approval: decided now
        return await decide(run, item, cast("dict[str, Any]", parked))
    if item.status in ("resolved", "delivered") and item.error is None:
        return _Result.ok(item.result, execution="async"), []
    return _Result.fail(
        item.error or f"the call {item.status} before a result arrived", execution="async"
    ), []
