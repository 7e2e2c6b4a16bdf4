"""toolbind.runtime.temporal, runtime layer (imports temporalio's client and workflow APIs, the
runtime's executor, context, result and state modules, and this package's ``_names`` and
``_policy``): ``TemporalExecutor``, each explicit Call as a Temporal activity.

Inside a workflow it schedules the activity ``tool:<name>``; outside one it runs the call as a
one-call workflow and follows that workflow's stream for the Activity's progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, cast

from temporalio import workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.exceptions import ActivityError, ApplicationError

from .._context import Context
from .._executor import Pending, RoutedCall
from .._result import ToolResult
from .._state import takes_context
from ..errors import UsageError
from ._names import CALL_WORKFLOW, EVENTS, TOOL_PREFIX, Queues
from ._policy import DEFAULT_POLICY, ToolPolicy, policy_dict

_Result = ToolResult[Any]


class TemporalExecutor:
    """Each explicit Call as a Temporal activity (``tool:<name>``).

    Args:
        task_queue: the queue of every tool's activities (``queues="one"``), and the prefix of
            the per-toolset (``<task_queue>.<toolset>``) or per-tool (``<task_queue>.<tool>``)
            queues.
        queues: ``one`` (default), ``toolset`` or ``tool``.
        policies: tool name → ``ToolPolicy`` (over the spec's ``x-toolbind-retry``, over
            ``default``).
        default: the policy of every tool (``DEFAULT_POLICY``).
        client: for use outside a workflow (each call runs as a one-call workflow).
    """

    def __init__(
        self,
        *,
        task_queue: str = "toolbind",
        queues: Queues = "one",
        policies: Mapping[str, ToolPolicy] | None = None,
        default: ToolPolicy = DEFAULT_POLICY,
        client: Client | None = None,
    ) -> None:
        if queues not in ("one", "toolset", "tool"):
            raise UsageError(f"TemporalExecutor(queues={queues!r}): expected one, toolset or tool")
        self.task_queue = task_queue
        self.queues: Queues = queues
        self.policies = dict(policies or {})
        self.default = default.over(DEFAULT_POLICY)
        self.client = client

    def policy(self, tool: str) -> ToolPolicy:
        """The tool's policy (its own over the default)."""
        return self.policies.get(tool, ToolPolicy()).over(self.default)

    def queue(self, call: RoutedCall) -> str:
        """The task queue a call's activity is scheduled on."""
        given = self.policy(call.tool).task_queue
        if given:
            return given
        if self.queues == "tool":
            return f"{self.task_queue}.{call.tool}"
        if self.queues == "toolset" and call.binding is not None and call.binding.toolsets:
            return f"{self.task_queue}.{call.binding.toolsets[0]}"
        return self.task_queue

    def _payload(self, call: RoutedCall) -> dict[str, Any]:
        given: Any = call.activity_context
        context: Context | None = getattr(given, "context", None)
        return {
            # a copy of the run's context for an Activity that reads it (its writes stay there)
            "context": context.to_items() if context is not None else None,
            "tool": call.tool,
            "call": call.dumped,
            "run_id": call.run_id,
            "call_id": call.call_id,
            "step": call.step,
            "visible": call.visible,
            "key": call.key,
            "timeout": call.timeout,
        }

    async def execute(
        self, call: RoutedCall, progress: Callable[[Any], None]
    ) -> ToolResult[Any] | Pending:
        policy = self.policy(call.tool)
        timeout = policy.start_to_close or call.timeout
        live: list[Any] = []  # the progress items the stream told while the activity ran
        try:
            if workflow.in_workflow():
                out: Any = await workflow.execute_activity(
                    f"{TOOL_PREFIX}{call.tool}",
                    self._payload(call),
                    task_queue=self.queue(call),
                    start_to_close_timeout=timedelta(seconds=timeout),
                    heartbeat_timeout=timedelta(seconds=policy.heartbeat or 10.0),
                    retry_policy=policy.retry_policy(),
                    activity_id=call.call_id,
                    summary=call.tool,
                )
            else:
                if self.client is None:
                    raise UsageError(
                        "TemporalExecutor(client=...) is needed outside a workflow (inside one, "
                        "toolbind worker schedules the activities)"
                    )
                out = await self._call_workflow(call, policy, progress, live)
        except ActivityError as exc:
            return _Result.fail(failure_text(exc), execution="explicit")
        except WorkflowFailureError as exc:
            return _Result.fail(failure_text(exc), execution="explicit")
        # JSON text on the wire: Temporal's converter sorts keys, and the order of a result's
        # keys is what the model reads (the same transcript as in process)
        result = cast("dict[str, Any]", json.loads(out) if isinstance(out, str) else out)
        # what the stream did not tell (a stream that failed): from the result, in order; in a
        # durable run the activity told the run's stream itself
        for item in result.get("progress", [])[len(live) :]:
            progress(item)
        if "pending" in result:
            marker = cast("dict[str, Any]", result["pending"])
            return Pending(ttl=marker.get("ttl"), message=str(marker.get("message", "")))
        return _Result.model_validate(result["result"])

    async def _call_workflow(
        self,
        call: RoutedCall,
        policy: ToolPolicy,
        progress: Callable[[Any], None],
        live: list[Any],
    ) -> Any:
        """Run a call as a one-call workflow, its progress told live: the activity publishes
        each item to the workflow's stream (Temporal's Workflow Streams), followed here."""
        assert self.client is not None
        handle = await self.client.start_workflow(
            CALL_WORKFLOW,
            {**self._payload(call), "queue": self.queue(call), "policy": policy_dict(policy)},
            id=f"toolbind-call-{call.key}",
            task_queue=self.task_queue,
        )
        if not reports_progress(call.activity.fn if call.activity is not None else None):
            return await handle.result()  # nothing to follow
        follower = asyncio.create_task(_follow(self.client, handle.id, live, progress))
        try:
            out: Any = await handle.result()
        except BaseException:
            follower.cancel()
            raise
        # the stream ends once the workflow has closed and its last items are read; each is
        # told before the call's result (never after it)
        done, _ = await asyncio.wait([follower], timeout=FOLLOW_TIMEOUT)
        if not done:
            follower.cancel()
        return out


def reports_progress(fn: Any) -> bool:
    """Whether an Activity can report progress: an async generator, or one that takes an
    ``ActivityContext`` (``ctx.progress``)."""
    return fn is not None and (inspect.isasyncgenfunction(fn) or takes_context(fn))


FOLLOW_TIMEOUT = 10.0
"""Seconds a finished call's stream may take to tell its last items (then the result's list)."""


async def _follow(
    client: Client, workflow_id: str, live: list[Any], progress: Callable[[Any], None]
) -> None:
    stream = WorkflowStreamClient.create(client, workflow_id)
    with contextlib.suppress(Exception):  # a stream that fails: the result's list tells the rest
        async for item in stream.subscribe(EVENTS, poll_cooldown=timedelta(milliseconds=20)):
            event = cast("dict[str, Any]", item.data)
            if event.get("type") == "tool-result":
                output = cast("dict[str, Any]", event["data"])["output"]
                live.append(output)
                progress(output)


def failure_text(exc: BaseException) -> str:
    """The innermost cause's message, as the in-process executor words an Activity's failure."""
    cause: BaseException = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, ApplicationError) and cause.type:
        return f"{cause.type}: {cause.message}"
    message = getattr(cause, "message", None) or str(cause)
    return f"activity failed: {message}"
