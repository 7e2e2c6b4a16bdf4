"""toolbind.runtime.temporal, runtime layer (imports temporalio's workflow API, the runtime's events
and context, and this package's ``_names``, ``_policy``, ``_loop``, ``_transcript`` and
``_world``): the workflows a worker registers.
"""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.contrib.workflow_streams import WorkflowStream
from temporalio.exceptions import ApplicationError

from .._context import Context
from .._events import RunResult
from ..errors import AgentError
from ._loop import DurableLoop, WorkflowPending
from ._names import CALL_WORKFLOW, EVENTS, SUBMIT, TOOL_PREFIX, WORKFLOW
from ._policy import ToolPolicy
from ._transcript import dump_result, event_dict, step_dict
from ._world import current_world


@workflow.defn(name=WORKFLOW, sandboxed=False)
class RunWorkflow:
    """The durable run (``toolbind.run``): the Agent's loop, its events published to the run's
    stream, its pending calls resolved by the update or signal ``tool_result``."""

    def __init__(self) -> None:
        self.pending = WorkflowPending()
        self.stream = WorkflowStream()  # the run's events, for DurableAgent.astream

    @workflow.run
    async def run(self, config: dict[str, Any]) -> str:
        loop = DurableLoop(current_world(), config, self.pending)
        try:
            context = config.get("context")
            events = self.stream.topic(EVENTS)
            result: RunResult | None = None
            async for event in loop.astream(
                config["messages"],
                config["output"],
                max_steps=config["max_steps"],
                run_id=workflow.info().workflow_id,
                tool_choice=config["tool_choice"],
                tools=config.get("tools"),
                context=Context.of(context) if context is not None else None,
            ):
                if event.type == "run.complete":
                    result = event.result
                elif event.type != "tool-result":  # the activity told its progress itself
                    events.publish(event_dict(event))
            assert result is not None
        except AgentError as exc:
            return json.dumps(
                {
                    "failure": {
                        "type": type(exc).__name__,
                        "message": str(exc),
                        "errors": getattr(exc, "errors", None),
                        "attempts": getattr(exc, "attempts", None),
                        "last_response": getattr(exc, "last_response", None),
                    },
                    "steps": [step_dict(s) for s in exc.steps or []],
                }
            )
        return json.dumps(dump_result(result))

    @workflow.signal(name=SUBMIT)
    def submit_signal(self, submission: dict[str, Any]) -> None:
        with contextlib.suppress(ApplicationError):  # a repeat or an unknown id: ignored
            self.pending.submit(
                str(submission["call_id"]), submission.get("result"), submission.get("error")
            )

    @workflow.update(name=SUBMIT)
    def submit_update(self, submission: dict[str, Any]) -> dict[str, Any]:
        return self.pending.submit(
            str(submission["call_id"]), submission.get("result"), submission.get("error")
        )

    @submit_update.validator
    def check_submission(self, submission: dict[str, Any]) -> None:
        self.pending.check(str(submission["call_id"]))

    @workflow.query(name="pending")
    def pending_calls(self) -> list[dict[str, Any]]:
        return [p.as_dict() for p in self.pending.calls.values()]


@workflow.defn(name=CALL_WORKFLOW, sandboxed=False)
class CallWorkflow:
    """One call (``toolbind.call``) run outside a durable run: its tool activity, under the
    caller's policy, with a stream for the Activity's progress."""

    def __init__(self) -> None:
        self.stream = WorkflowStream()  # the call's progress, published by its activity

    @workflow.run
    async def run(self, payload: dict[str, Any]) -> str:
        policy = ToolPolicy(
            **{k: v for k, v in payload["policy"].items() if k != "non_retryable"},
            non_retryable=tuple(payload["policy"]["non_retryable"] or ()),
        )
        return await workflow.execute_activity(
            f"{TOOL_PREFIX}{payload['tool']}",
            payload,
            task_queue=payload["queue"],
            start_to_close_timeout=timedelta(seconds=policy.start_to_close or payload["timeout"]),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat or 10.0),
            retry_policy=policy.retry_policy(),
            result_type=str,
        )
