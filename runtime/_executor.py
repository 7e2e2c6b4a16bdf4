"""Runtime layer: executors — what runs a routed Call's Activity and gives back its ``ToolResult``.

Imports ``_binding``, ``_registry``, ``_result``, ``_events``, pydantic and the standard library.

The loop (``_agent``) routes each Call of a step once into a ``RoutedCall`` (its tool, route,
Activity, arguments, timeout and stable id) and hands the explicit ones to an ``Executor``:
``InProcessExecutor`` runs the Activity in this process (sync functions in a worker thread,
coroutines and async generators on the loop, a per-call timeout, an exception or a timeout
becoming a failed result); ``toolbind.temporal.TemporalExecutor`` runs it as a Temporal activity on
a worker. Either way an Activity reads the call it serves with ``current_call()`` (its stable id
is what the HTTP client sends as an ``Idempotency-Key``).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ._binding import ToolBinding
from ._events import Route
from ._registry import ActivityFn, RegisteredActivity
from ._result import ToolResult

__all__ = [
    "DEFAULT_ACTIVITY_TIMEOUT",
    "CallContext",
    "Executor",
    "InProcessExecutor",
    "Pending",
    "RoutedCall",
    "current_call",
]

DEFAULT_ACTIVITY_TIMEOUT = 30.0
_Result = ToolResult[Any]  # subscripted once: pydantic's generic lookup is not free


@dataclass(frozen=True, slots=True)
class Pending:
    """What an Activity returns to say "the result comes later" (gateway-v3 async tools).

    The pending store then keeps the call as a ``PendingToolCall`` until its result arrives
    (``toolbind.runtime.pending`` tells the six pending names apart).

    Attributes:
        ttl: seconds the call may stay pending (None: the store's default).
        message: what the model is told meanwhile.
        arguments: what the pending store keeps as the call's arguments (None: the call's own;
            a call parked for approval keeps the whole call).
    """

    ttl: float | None = None
    message: str = "The result will arrive later as a tool_result event; continue meanwhile."
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutedCall:
    """One Call of a step, routed once: everything the loop and an executor need to know of it.

    Attributes:
        run_id, step, index: the run, the step's index and the call's place in the answer.
        call_id: unique within the run (``call-<invocation>-<step>-<index>``).
        tool: the tool's name; ``binding`` its ToolBinding (None when the model named no tool
            offered — the Response model never lets that through, but a hand-made one might).
        route: ``explicit`` (``activity`` runs it), ``latent`` (the model's ``_output`` is the
            result), ``async`` (pending: the result is submitted later) or ``missing``.
        call: the validated Call model; ``dumped`` its JSON form (by alias, meta fields included);
            ``arguments`` the same without the meta fields.
        timeout: seconds the Activity may take (its own, else ``LoopSettings.activity_timeout``).
        activity_context: the ``ActivityContext`` given to an Activity that takes a second
            argument (``def fn(call, ctx)``; None: the Activity is called with the call alone).
        refused: why the call cannot run (a variable reference that names nothing, an
            ``_instance`` the context lacks): its failed result, the Activity not called.
        approval: the spec marks the tool ``x-requires-approval`` (``RequireApproval`` parks
            such a call, and calls of the tools it names, until a human decides).
        approved: a human approved the call: it runs without waiting again.
    """

    run_id: str
    step: int
    index: int
    call_id: str
    tool: str
    route: Route
    call: Any
    dumped: dict[str, Any]
    arguments: dict[str, Any]
    binding: ToolBinding | None
    activity: RegisteredActivity | None
    visible: bool
    timeout: float
    activity_context: Any = None
    refused: str | None = None
    approval: bool = False
    approved: bool = False

    @property
    def key(self) -> str:
        """The call's stable id: the same on every attempt, in every process that runs it (the
        ``Idempotency-Key`` the HTTP client sends for it)."""
        return f"{self.run_id}:{self.call_id}"

    @property
    def context(self) -> CallContext:
        """What the Activity may read of the call (``current_call()``)."""
        return CallContext(run_id=self.run_id, call_id=self.call_id, tool=self.tool, key=self.key)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """The call an Activity is serving (``current_call()``): its run, id, tool and stable key.

    Any Activity can ask for it; an Activity that takes a second argument is also given the
    wider ``ActivityContext`` (its deps, and the part of the run's ``Context`` it may see)."""

    run_id: str
    call_id: str
    tool: str
    key: str
    attempt: int = 1


_CURRENT: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "toolbind_current_call", default=None
)


def current_call() -> CallContext | None:
    """The call the running Activity serves (None outside one). ``.key`` is stable across retries
    and workers: pass it on to make a side effect happen once (the HTTP client sends it as the
    ``Idempotency-Key`` of an operation that declares that header)."""
    return _CURRENT.get()


class Executor(Protocol):
    """Runs the Activity of a routed explicit call and gives back its result (never raises for a
    failure of the Activity: that is a failed ``ToolResult``). ``progress`` receives what an
    async-generator Activity yields along the way; ``Pending`` says the result comes later."""

    async def execute(
        self, call: RoutedCall, progress: Callable[[Any], None]
    ) -> ToolResult[Any] | Pending: ...


class InProcessExecutor:
    """Activities in this process: sync ones in a worker thread, async ones on the loop, each
    call bounded by its ``timeout``."""

    async def execute(
        self, call: RoutedCall, progress: Callable[[Any], None]
    ) -> ToolResult[Any] | Pending:
        activity = call.activity
        if activity is None:  # the loop routes only explicit calls here
            return _Result.fail(f"no Activity for tool {call.tool!r}", execution="explicit")
        token = _CURRENT.set(call.context)
        try:
            value = await asyncio.wait_for(
                invoke(activity.fn, call.call, progress, call.activity_context), call.timeout
            )
        except TimeoutError:
            return _Result.fail(
                f"activity for {call.tool!r} timed out after {call.timeout:g}s",
                execution="explicit",
            )
        except Exception as exc:  # an Activity's failure is a result, never a crash
            return _Result.fail(f"{type(exc).__name__}: {exc}", execution="explicit")
        finally:
            _CURRENT.reset(token)
        if isinstance(value, Pending):
            return value
        return to_result(value, call.binding)


async def invoke(
    fn: ActivityFn, call: Any, progress: Callable[[Any], None], context: Any = None
) -> Any:
    """Run an Activity (sync, coroutine or async generator: the last item yielded is its value);
    ``context``: its ``ActivityContext``, given as a second argument when not None."""
    args = (call,) if context is None else (call, context)  # ActivityContext: fn(call, ctx)
    if inspect.isasyncgenfunction(fn):
        return await _last_item(fn(*args), progress)
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await asyncio.to_thread(fn, *args)
    if inspect.isawaitable(value):
        value = await value
    return value


_END: Any = object()


async def _next(items: AsyncIterator[Any]) -> Any:
    try:
        return await anext(items)
    except StopAsyncIteration:
        return _END


async def _last_item(items: AsyncIterator[Any], progress: Callable[[Any], None]) -> Any:
    """The last item an async-generator Activity yields (its value); each item before it is told
    to ``progress`` (never a ``ToolResult``: that is the result).

    An item is the last only if the generator ends after it, so the next item is awaited in a
    task of its own: an item is told as soon as the generator, going on, waits on something or
    yields again — a progress display is never held back until the next item — and an item
    after which the generator ends without waiting on anything is the value, never progress."""
    context = contextvars.copy_context()  # one context for every item: the generator's own
    last: Any = None
    held = False  # whether ``last`` is not told yet: progress, or the value
    ahead: asyncio.Task[Any] | None = None
    try:
        while True:
            ahead = asyncio.create_task(_next(items), context=context)
            if held:
                await asyncio.sleep(0)  # the generator goes on as far as it goes at once
                if not _ended(ahead):
                    _tell(last, progress)
                    held = False
            item = await ahead
            if item is _END:
                return last
            if held:
                _tell(last, progress)
            last, held = item, True
    finally:
        if ahead is not None and not ahead.done():
            ahead.cancel()  # the Activity timed out or the run stopped: the generator stops too


def _ended(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` (the next item) found the generator ended."""
    return (
        task.done() and not task.cancelled() and task.exception() is None and task.result() is _END
    )


def _tell(item: Any, progress: Callable[[Any], None]) -> None:
    if not isinstance(item, ToolResult):  # a ToolResult yielded is the result, not progress
        progress(item)


def to_result(value: Any, binding: ToolBinding | None) -> ToolResult[Any]:
    """An Activity's return value as the envelope (checked against the tool's output schema)."""
    if isinstance(value, ToolResult):
        return cast("ToolResult[Any]", value)
    if isinstance(value, BaseModel):
        data = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return _Result.ok(data, execution="explicit")
    try:
        data = to_jsonable_python(value, by_alias=True)
    except Exception as exc:
        return _Result.fail(f"the Activity returned a non-JSON value: {exc}")
    if binding is not None and binding.output_schema is not None:
        try:
            binding.output_model.model_validate(data)
        except ValidationError as exc:
            return _Result.fail(
                f"the Activity's output does not match {binding.name!r}'s output schema: "
                + "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()
                ),
                data=data,
                execution="explicit",
            )
    return _Result.ok(data, execution="explicit")
