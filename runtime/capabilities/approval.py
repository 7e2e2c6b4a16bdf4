"""Runtime layer: ``RequireApproval`` — explicit calls that wait for a human's decision. Imports
``_capability``, ``_events``, ``_executor``, ``_result``, pydantic.

A call of a tool the spec marks ``x-requires-approval``, or of a tool named here, is parked in the
pending store (``PendingDelivery``) with arguments ``{"_approval": <the call>}`` instead of
running. Once a decision is submitted — ``store.submit(run_id, call_id, {"approved": True})`` or
``POST /runs/{run_id}/tool-results`` — the call runs (approved) or is answered to the model as
denied (``{"approved": False, "reason": ...}``, or an ``error``), at a later step.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, ClassVar, cast

from pydantic import ValidationError

from .._capability import Capability, Outcome, Proceed, Run
from .._events import PendingCall
from .._executor import Pending, RoutedCall
from .._result import ToolResult

__all__ = ["APPROVAL", "RequireApproval", "decide"]

APPROVAL = "_approval"
"""The key of a pending call's arguments that holds a call parked for approval."""

_Result = ToolResult[Any]
_DECIDED = ("resolved", "delivered")


class RequireApproval(Capability):
    """Park explicit calls until a human decides.

    Args:
        tools: names of tools whose calls wait, besides those a spec marks
            ``x-requires-approval: true`` (an Agent always parks those).
    """

    order: ClassVar[int] = 90  # innermost: a call parks only once the guardrails let it through

    def __init__(self, tools: Collection[str] = ()) -> None:
        self.tools = frozenset(tools)

    def durable(self) -> Mapping[str, Any]:
        return {"requires_approval": sorted(self.tools)}

    async def wrap_call(self, routed: RoutedCall, proceed: Proceed) -> Outcome:
        waits = routed.approval or routed.tool in self.tools
        if routed.route == "explicit" and routed.refused is None and waits and not routed.approved:
            return Pending(
                message="The call waits for a human's approval; its result comes later.",
                arguments={APPROVAL: routed.dumped},
            )
        return await proceed(routed)


async def decide(
    run: Run, item: PendingCall, parked: dict[str, Any]
) -> tuple[ToolResult[Any], list[Any]]:
    """The result of a call parked for approval — run it when approved, else the denial — and
    the progress its Activity reported while it ran."""
    decision: Any = item.result
    answer = cast("dict[str, Any]", decision) if isinstance(decision, dict) else None
    approved = (
        item.error is None
        and item.status in _DECIDED
        and answer is not None
        and answer.get("approved") is True
    )
    if not approved:
        reason: Any = answer.get("reason") if answer is not None else None
        why = item.error or (reason if isinstance(reason, str) else None)
        if item.status not in _DECIDED:
            why = f"no decision before the call {item.status}"
        return _Result.fail(
            f"a human denied this call{': ' + why if why else ''}", execution="approval"
        ), []
    binding = run.binding(item.tool)
    if binding is None:
        return _Result.fail(f"tool {item.tool!r} is no longer offered", execution="approval"), []
    try:
        call = binding.call_model.model_validate(parked)
    except ValidationError as exc:
        return _Result.fail(f"the approved call no longer validates: {exc}"), []
    record = await run.execute(item.call_id, call, {"approved": True})
    return record.result, record.progress
