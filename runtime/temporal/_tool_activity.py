"""toolbind.runtime.temporal, runtime layer (imports temporalio's activity API, the runtime's
executor, context and state modules, and this package's ``_names``, ``_beat``, ``_executor`` and
``_world``): the dynamic activity ``tool:<name>`` that runs a tool's Activity on a worker.

The call runs with ``current_call()`` set (its ``key`` is the same on every retry), heartbeats
while it runs, and an Activity that can report progress publishes each item live to the calling
workflow's stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, cast

from pydantic_core import to_jsonable_python
from temporalio import activity
from temporalio.common import RawValue
from temporalio.contrib.workflow_streams import WorkflowStreamClient
from temporalio.exceptions import ApplicationError

from .._binding import ToolBinding
from .._context import Context
from .._executor import _CURRENT, CallContext, Pending, invoke, to_result  # pyright: ignore[reportPrivateUsage]
from .._registry import RegisteredActivity
from .._state import ActivityContext, takes_context
from ._beat import beat
from ._executor import reports_progress
from ._names import EVENTS, TOOL_PREFIX
from ._world import World


def tool_activity(world: World) -> Callable[..., Any]:
    """The worker's tool activity: every ``tool:<name>`` of ``world``'s tools."""

    @activity.defn(dynamic=True)
    async def tool_call(args: Sequence[RawValue]) -> str:
        info = activity.info()
        name = info.activity_type.removeprefix(TOOL_PREFIX)
        payload = cast(
            "dict[str, Any]", activity.payload_converter().from_payload(args[0].payload, dict)
        )
        binding, found = _activity_of(world, name)
        call = binding.call_model.model_validate_json(json.dumps(payload["call"]))
        progress = _Progress(payload, name, info.attempt, live=reports_progress(found.fn))
        token = _CURRENT.set(
            CallContext(
                run_id=payload["run_id"],
                call_id=payload["call_id"],
                tool=name,
                key=payload["key"],
                attempt=info.attempt,
            )
        )
        given = (
            _activity_context(world, payload, name, progress) if takes_context(found.fn) else None
        )
        beating = asyncio.create_task(beat(info))
        try:
            stream = progress.stream
            async with stream if stream is not None else contextlib.nullcontext():
                value = await invoke(found.fn, call, progress, given)
                if stream is not None:
                    # flushed before leaving: the exit stops the background flusher, and one
                    # stopped just as a publish woke it can miss its cancellation on Python
                    # 3.11 (asyncio.wait_for) and keep the activity from completing
                    await stream.flush()
            # the items are in the workflow's history before the activity's completion
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # retried by the policy; the last failure becomes the result
            raise ApplicationError(str(exc), type=type(exc).__name__) from None
        finally:
            beating.cancel()
            _CURRENT.reset(token)
        if isinstance(value, Pending):
            return json.dumps(
                {
                    "pending": {"ttl": value.ttl, "message": value.message},
                    "progress": progress.items,
                }
            )
        result = to_result(value, binding).model_dump(mode="json")
        return json.dumps({"result": result, "progress": progress.items})

    return tool_call


def _activity_of(world: World, name: str) -> tuple[ToolBinding, RegisteredActivity]:
    """The tool's binding and the Activity this worker runs for it.

    Raises:
        ApplicationError: (not retried) the worker has no such tool, or no Activity for it.
    """
    binding = world.tools.get(name)
    if binding is None:
        raise ApplicationError(
            f"this worker has no tool {name!r}", type="UnknownTool", non_retryable=True
        )
    route, found = world.router._route(binding)  # pyright: ignore[reportPrivateUsage]
    if route != "explicit" or found is None:
        raise ApplicationError(
            f"this worker has no Activity for tool {name!r}",
            type="NoActivity",
            non_retryable=True,
        )
    return binding, found


class _Progress:
    """A call's progress: each item kept for the result and heartbeated; for an Activity that can
    report progress (an async generator, or one that takes an ActivityContext), also told live,
    published to the calling workflow's stream (a signal, sent before the activity completes),
    which the run's client follows."""

    def __init__(self, payload: Mapping[str, Any], tool: str, attempt: int, *, live: bool) -> None:
        self.items: list[Any] = []
        self.loop = asyncio.get_running_loop()
        self.payload = payload
        self.tool = tool
        self.attempt = attempt
        self.stream = (
            WorkflowStreamClient.from_within_activity(batch_interval=timedelta(milliseconds=50))
            if live
            else None
        )

    def publish(self, plain: Any) -> None:
        if self.stream is None:
            return
        payload = self.payload
        self.stream.topic(EVENTS).publish(
            {
                "type": "tool-result",
                "run_id": payload["run_id"],
                "step": int(payload.get("step", 0)),
                "call_id": payload["call_id"],
                "tool": self.tool,
                "visible": payload.get("visible", True),
                "data": {"preliminary": True, "output": plain},
                "attempt": self.attempt,
            },
            force_flush=True,
        )

    def __call__(self, item: Any) -> None:
        plain = to_jsonable_python(item, by_alias=True)
        self.items.append(plain)
        activity.heartbeat(plain)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.publish(plain)
        else:  # a sync Activity's ctx.progress, from its worker thread
            self.loop.call_soon_threadsafe(self.publish, plain)


def _activity_context(
    world: World, payload: Mapping[str, Any], tool: str, progress: Callable[[Any], None]
) -> ActivityContext[Any]:
    """What an Activity that takes an ActivityContext gets: the call's ids and progress, the
    worker's deps (a run's own do not cross the wire) and a copy of the run's context."""
    return ActivityContext(
        run_id=payload["run_id"],
        step=int(payload.get("step", 0)),
        call_id=payload["call_id"],
        tool=tool,
        deps=world.deps,
        instance=payload["call"].get("_instance"),
        context=Context.of(payload["context"]) if payload.get("context") else None,
        reporter=progress,
    )
