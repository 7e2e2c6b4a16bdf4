"""toolbind.runtime.temporal: durable, scaled-out agent runs on Temporal (extra ``toolbind[temporal]``).

Imports ``temporalio`` (the SDK) and the runtime; nothing imports this module but its users (and
``toolbind worker``): ``import toolbind.runtime`` stays free of Temporal.

* ``TemporalExecutor`` — the ``Executor`` that runs each explicit Call as a Temporal activity
  (activity type ``tool:<name>``) on a task queue (one for all, one per toolset or one per tool),
  with a retry policy and timeouts per tool (``ToolPolicy``: defaults below, overridden in code or
  by an ``x-toolbind-retry`` object in the spec). Inside a workflow it schedules the activity;
  outside one (``Agent(executor=TemporalExecutor(client=...))``) it runs a one-call workflow.
* The durable loop — ``Agent.run`` as the workflow ``toolbind.run``: the LLM request is an activity
  (``toolbind.llm``); the loop, routing and feedback are the Agent's own code, run as deterministic
  workflow code; a pending tool (``external``/``space``) is a workflow wait resolved by the update
  or signal ``tool_result`` (``DurableAgent.submit``, or ``temporal_pending`` behind the usual
  ``pending_app`` endpoint ``POST /runs/{run_id}/tool-results``).
  ``DurableAgent`` takes the run options that are data (``tools`` by name, ``tool_choice``,
  ``context`` as workflow data, ``mode``, ``tool_selection=k``, ``requires_approval``) and refuses
  with a ``UsageError`` what cannot cross (``deps``: ``worker(deps=...)`` gives the workers theirs;
  a ``ToolSelector`` object; an ``instructor.Mode``).
* Live events — each workflow (the run, a one-call workflow) hosts a Workflow Stream
  (``temporalio.contrib.workflow_streams``): the run publishes its events (topic ``events``) and an
  Activity that reports progress publishes each item there while it runs (a signal, flushed before
  the activity completes, so before its result); ``DurableAgent.astream``/``events`` and
  ``TemporalExecutor`` (outside a workflow) follow it.
* ``worker(...)`` / ``toolbind worker`` — a worker registering the workflow, the LLM activity and
  every tool Activity (generated HTTP Activities and user functions).

Each Activity runs with ``current_call()`` set: ``.key`` (``run_id:call_id``, where the call id is
``call-<invocation>-<step>-<index>``, deterministic in a workflow) is the same on every retry and
every worker — the ``Idempotency-Key`` the HTTP client sends, and what a user Activity passes on to
make its side effect happen once. Without one, a retried Activity's side effect happens at least
once (a worker lost after the effect, before its completion was recorded, runs it again).

Default ``ToolPolicy``: start-to-close = the Activity's own timeout, else the Agent's
``activity_timeout`` (30 s); heartbeat timeout 10 s (the worker heartbeats every third of it while
the Activity runs, so a lost worker is noticed in 10 s and the call retried elsewhere); 3 attempts,
1 s first interval, backoff 2, at most 30 s between attempts.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypedDict, Unpack, cast

from pydantic import BaseModel
from pydantic_core import to_jsonable_python
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import RawValue, RetryPolicy
from temporalio.contrib.workflow_streams import WorkflowStream, WorkflowStreamClient
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.worker import Worker

from ._agent import DEFAULT_CALL_TAG, Agent, ContextLike
from ._binding import ToolBinding
from ._context import Context
from ._events import AgentEvent, CallRecord, RunResult, Step
from ._executor import _CURRENT, Pending, RoutedCall, invoke, to_result  # pyright: ignore[reportPrivateUsage]
from ._pending import PendingToolCall
from ._registry import ActivityFn, ActivityRegistry, ToolRegistry
from ._response import Composition
from ._result import ToolResult
from ._state import ActivityContext, takes_context
from ._stream import Emit
from .contract import RETRY_KEY
from .errors import AgentError, LLMError, ResponseValidationError, UsageError
from .types import ToolResponse

__all__ = [
    "DEFAULT_POLICY",
    "DurableAgent",
    "RunOptions",
    "TemporalExecutor",
    "ToolPolicy",
    "policies_from_spec",
    "temporal_pending",
    "worker",
]

WORKFLOW = "toolbind.run"
CALL_WORKFLOW = "toolbind.call"
LLM_ACTIVITY = "toolbind.llm"
TOOL_PREFIX = "tool:"
SUBMIT = "tool_result"
EVENTS = "events"
"""The topic of a run's (and a one-call workflow's) Workflow Stream: its user-facing events."""
EXTENSION = RETRY_KEY
DEFAULT_PENDING_TTL = 24 * 3600.0
_Result = ToolResult[Any]
Queues = Literal["one", "toolset", "tool"]


# -- policies ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """How one tool's activity is scheduled (None: the default; see the module docstring).

    ``x-toolbind-retry`` in a spec holds the same fields in camelCase (``maxAttempts``,
    ``initialInterval``, ``backoff``, ``maxInterval``, ``startToClose``, ``heartbeat``,
    ``taskQueue``, ``nonRetryable``; seconds as numbers), at the document's root (every tool) or
    in a tool / OpenAPI operation (that tool)."""

    task_queue: str | None = None
    start_to_close: float | None = None
    heartbeat: float | None = None
    max_attempts: int | None = None
    initial_interval: float | None = None
    backoff: float | None = None
    max_interval: float | None = None
    non_retryable: tuple[str, ...] | None = None

    def over(self, base: ToolPolicy) -> ToolPolicy:
        """This policy's fields where set, ``base``'s elsewhere."""
        return ToolPolicy(
            **{
                name: getattr(self, name)
                if getattr(self, name) is not None
                else getattr(base, name)
                for name in _POLICY_FIELDS
            }
        )

    @classmethod
    def from_extension(cls, value: Any, where: str) -> ToolPolicy:
        """Read an ``x-toolbind-retry`` object.

        Raises:
            UsageError: not an object, an unknown field or a value of the wrong type (located).
        """
        if not isinstance(value, Mapping):
            raise UsageError(f"{where}: error: {EXTENSION} must be an object")
        fields: dict[str, Any] = {}
        for key, raw in cast("Mapping[str, Any]", value).items():
            item: Any = raw
            name = _CAMEL.get(key)
            if name is None:
                raise UsageError(
                    f"{where}/{key}: error: unknown {EXTENSION} field — expected one of "
                    f"{', '.join(sorted(_CAMEL))}"
                )
            if name == "task_queue":
                ok = isinstance(item, str) and bool(item)
            elif name == "non_retryable":
                ok = isinstance(item, list) and all(
                    isinstance(x, str) for x in cast("list[Any]", item)
                )
                if ok:
                    item = tuple(cast("list[str]", raw))
            elif name == "max_attempts":
                ok = isinstance(item, int) and not isinstance(item, bool) and item >= 0
            else:
                ok = isinstance(item, int | float) and not isinstance(item, bool) and item > 0
            if not ok:
                raise UsageError(f"{where}/{key}: error: {item!r} is not a valid {key}")
            fields[name] = item
        return cls(**fields)

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            initial_interval=timedelta(seconds=self.initial_interval or 1.0),
            backoff_coefficient=self.backoff or 2.0,
            maximum_interval=timedelta(seconds=self.max_interval or 30.0),
            maximum_attempts=self.max_attempts if self.max_attempts is not None else 3,
            non_retryable_error_types=list(self.non_retryable or ()),
        )


_POLICY_FIELDS = (
    "task_queue",
    "start_to_close",
    "heartbeat",
    "max_attempts",
    "initial_interval",
    "backoff",
    "max_interval",
    "non_retryable",
)
_CAMEL = {
    "taskQueue": "task_queue",
    "startToClose": "start_to_close",
    "heartbeat": "heartbeat",
    "maxAttempts": "max_attempts",
    "initialInterval": "initial_interval",
    "backoff": "backoff",
    "maxInterval": "max_interval",
    "nonRetryable": "non_retryable",
}
DEFAULT_POLICY = ToolPolicy(
    heartbeat=10.0, max_attempts=3, initial_interval=1.0, backoff=2.0, max_interval=30.0
)


def policies_from_spec(
    path: str | os.PathLike[str], tools: Sequence[ToolBinding]
) -> dict[str, ToolPolicy]:
    """The ``x-toolbind-retry`` policies of a spec file (JSON or YAML), tool name → policy: the
    document's root one for every tool of the spec, a tool's (seeds format: in the tool's schema;
    OpenAPI: in the operation, matched by ``operationId``) over it.

    Raises:
        UsageError: a malformed extension (located by file and JSON pointer).
    """
    from toolbind.yaml12 import load_yaml

    text = Path(path).read_text(encoding="utf-8")
    document: Any = load_yaml(text)
    if not isinstance(document, Mapping):
        return {}
    doc = cast("Mapping[str, Any]", document)
    root = ToolPolicy()
    if EXTENSION in doc:
        root = ToolPolicy.from_extension(doc[EXTENSION], f"{path}#")
    own: dict[str, ToolPolicy] = {}
    # the seeds' format: a map name → tool schema (or those under ``tools``)
    tools_section: Any = doc.get("tools", doc if "paths" not in doc else None)
    section = "/tools" if "tools" in doc else ""
    if isinstance(tools_section, Mapping):
        for name, schema in cast("Mapping[str, Any]", tools_section).items():
            if isinstance(schema, Mapping) and EXTENSION in schema:
                own[str(name)] = ToolPolicy.from_extension(
                    cast("Mapping[str, Any]", schema)[EXTENSION], f"{path}#{section}/{name}"
                )
    paths: Any = doc.get("paths")
    if isinstance(paths, Mapping):
        for route, item in cast("Mapping[str, Any]", paths).items():
            if not isinstance(item, Mapping):
                continue
            for method, op in cast("Mapping[str, Any]", item).items():
                if isinstance(op, Mapping) and EXTENSION in op:
                    operation = cast("Mapping[str, Any]", op)
                    pointer = (
                        f"{path}#/paths/{str(route).replace('~', '~0').replace('/', '~1')}/{method}"
                    )
                    own[str(operation.get("operationId", pointer))] = ToolPolicy.from_extension(
                        operation[EXTENSION], pointer
                    )
    found: dict[str, ToolPolicy] = {}
    for tool in tools:
        names = (tool.name, tool.original_name, tool.provider_name)
        mine = next((own[n] for n in names if n is not None and n in own), ToolPolicy())
        policy = mine.over(root)
        if policy != ToolPolicy():
            found[tool.name] = policy
    return found


# -- the executor --------------------------------------------------------------------------------


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
            raise ValueError(f"TemporalExecutor(queues={queues!r}): expected one, toolset or tool")
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
            return _Result.fail(_failure_text(exc), execution="explicit")
        except WorkflowFailureError as exc:
            return _Result.fail(_failure_text(exc), execution="explicit")
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
            {**self._payload(call), "queue": self.queue(call), "policy": _policy_dict(policy)},
            id=f"toolbind-call-{call.key}",
            task_queue=self.task_queue,
        )
        if not _reports_progress(call.activity.fn if call.activity is not None else None):
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


def _reports_progress(fn: Any) -> bool:
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


def _failure_text(exc: BaseException) -> str:
    """The innermost cause's message, as the in-process executor words an Activity's failure."""
    cause: BaseException = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, ApplicationError) and cause.type:
        return f"{cause.type}: {cause.message}"
    message = getattr(cause, "message", None) or str(cause)
    return f"activity failed: {message}"


def _policy_dict(policy: ToolPolicy) -> dict[str, Any]:
    return {name: getattr(policy, name) for name in _POLICY_FIELDS}


# -- the worker's world --------------------------------------------------------------------------


@dataclass(slots=True)
class _World:
    """What a worker hosts: the tools, their Activities, the executor's configuration."""

    tools: ToolRegistry
    activities: ActivityRegistry
    executor: TemporalExecutor
    llm_queue: str
    activity_timeout: float
    router: Agent
    deps: Any = None
    composer: dict[Any, Any] = field(default_factory=dict[Any, Any])


def _router(tools: ToolRegistry, activities: ActivityRegistry, timeout: float) -> Agent:
    # an Agent that never calls a model: its routing (Activities by name, gateway HTTP
    # executions) and composition are the same code the in-process loop runs
    return Agent(
        "http://127.0.0.1:9/v1",
        model="-",
        tools=tools,
        activities=activities,
        activity_timeout=timeout,
    )


def _tool_activity(world: _World) -> Callable[..., Any]:
    @activity.defn(dynamic=True)
    async def tool_call(args: Sequence[RawValue]) -> str:
        info = activity.info()
        name = info.activity_type.removeprefix(TOOL_PREFIX)
        payload = cast(
            "dict[str, Any]", activity.payload_converter().from_payload(args[0].payload, dict)
        )
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
        call = binding.call_model.model_validate_json(json.dumps(payload["call"]))
        items: list[Any] = []
        loop = asyncio.get_running_loop()
        # an Activity that can report progress (an async generator, or one that takes an
        # ActivityContext) tells it live: each item published to the calling workflow's stream
        # (a signal, sent before the activity completes), which the run's client follows
        stream = (
            WorkflowStreamClient.from_within_activity(batch_interval=timedelta(milliseconds=50))
            if _reports_progress(found.fn)
            else None
        )

        def publish(plain: Any) -> None:
            if stream is not None:
                stream.topic(EVENTS).publish(
                    {
                        "type": "tool-result",
                        "run_id": payload["run_id"],
                        "step": int(payload.get("step", 0)),
                        "call_id": payload["call_id"],
                        "tool": name,
                        "visible": payload.get("visible", True),
                        "data": {"preliminary": True, "output": plain},
                        "attempt": info.attempt,
                    },
                    force_flush=True,
                )

        def progress(item: Any) -> None:
            plain = to_jsonable_python(item, by_alias=True)
            items.append(plain)
            activity.heartbeat(plain)
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                publish(plain)
            else:  # a sync Activity's ctx.progress, from its worker thread
                loop.call_soon_threadsafe(publish, plain)

        async def beat() -> None:
            period = max(0.2, (info.heartbeat_timeout or timedelta(seconds=30)).total_seconds() / 3)
            while True:
                await asyncio.sleep(period)
                activity.heartbeat()

        from ._executor import CallContext

        token = _CURRENT.set(
            CallContext(
                run_id=payload["run_id"],
                call_id=payload["call_id"],
                tool=name,
                key=payload["key"],
                attempt=info.attempt,
            )
        )
        # an Activity that takes an ActivityContext gets the call's ids and progress here, the
        # worker's deps (a run's own do not cross the wire) and a copy of the run's context
        given = (
            ActivityContext(
                run_id=payload["run_id"],
                step=int(payload.get("step", 0)),
                call_id=payload["call_id"],
                tool=name,
                deps=world.deps,
                instance=payload["call"].get("_instance"),
                context=Context.of(payload["context"]) if payload.get("context") else None,
                reporter=progress,
            )
            if takes_context(found.fn)
            else None
        )
        beating = asyncio.create_task(beat())
        try:
            async with stream if stream is not None else contextlib.nullcontext():
                value = await invoke(found.fn, call, progress, given)
            # leaving the stream flushed it: the items are in the workflow's history before
            # the activity's completion
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # retried by the policy; the last failure becomes the result
            raise ApplicationError(str(exc), type=type(exc).__name__) from None
        finally:
            beating.cancel()
            _CURRENT.reset(token)
        if isinstance(value, Pending):
            return json.dumps(
                {"pending": {"ttl": value.ttl, "message": value.message}, "progress": items}
            )
        result = to_result(value, binding).model_dump(mode="json")
        return json.dumps({"result": result, "progress": items})

    return tool_call


def _llm_activity(world: _World) -> Callable[..., Any]:
    models: dict[str, Any] = {}

    @activity.defn(name=LLM_ACTIVITY)
    async def ask(payload: dict[str, Any]) -> str:
        from ._llm import InstructorModel
        from ._response import compose

        llm = cast("dict[str, Any]", payload["llm"])
        key = json.dumps([llm["base_url"], llm["timeout"], llm["http_retries"]])
        model = models.get(key)
        if model is None:
            model = models[key] = InstructorModel(
                llm["base_url"],
                timeout=llm["timeout"],
                http_retries=llm["http_retries"],
                api_key=os.environ.get(llm.get("api_key_env") or "OPENAI_API_KEY"),
            )
        # the request the workflow composed: the same tools (a per-run subset, the selected ones),
        # output, tool choice and instances, composed here the same way
        offered: list[str] = payload.get("offered") or [t.name for t in world.tools]
        instances = tuple(payload.get("instances") or ())
        ckey = json.dumps(
            [
                offered,
                payload["not_latent"],
                payload["output"],
                payload["tool_choice"],
                llm["max_calls"],
                llm["meta_fields"],
                instances,
                llm.get("call_tag", "_tool"),
            ],
            sort_keys=True,
        )
        composition = world.composer.get(ckey)
        if composition is None:
            tools = [b for b in (world.tools.get(n) for n in offered) if b is not None]
            composition = world.composer[ckey] = compose(
                tools,
                payload["output"],
                activities=frozenset(payload["not_latent"]),
                max_calls=llm["max_calls"],
                tool_choice=payload["tool_choice"],
                meta_fields=llm["meta_fields"],
                instances=instances,
                tag=llm.get("call_tag", "_tool"),
            )
        messages = cast("list[dict[str, Any]]", payload["messages"])  # tools listed, if asked
        native = bool(payload.get("native"))
        step = Step(index=payload["step"], mode="native" if native else "composed")
        try:
            if native:
                response = await model.ask_native(
                    messages,
                    composition,
                    step,
                    model=llm["model"],
                    tool_choice=payload["tool_choice"],
                    max_retries=llm["max_retries"],
                    request_kwargs=dict(llm["request_kwargs"]),
                    agent_mode=llm.get("mode") or "composed",
                )
            else:
                response = await model.ask(
                    messages,
                    composition.response,
                    step,
                    model=llm["model"],
                    max_retries=llm["max_retries"],
                    request_kwargs=dict(llm["request_kwargs"]),
                )
        except ResponseValidationError as exc:
            raise ApplicationError(
                str(exc),
                {
                    "errors": exc.errors,
                    "attempts": exc.attempts,
                    "last_response": exc.last_response,
                    "requests": step.requests,
                    "raw_responses": step.raw_responses,
                },
                type="ResponseValidationError",
                non_retryable=True,
            ) from None
        except LLMError as exc:
            raise ApplicationError(
                str(exc),
                {"requests": step.requests, "raw_responses": step.raw_responses},
                type="LLMError",
                non_retryable=True,
            ) from None
        return json.dumps(
            {
                "response": response.model_dump(mode="json", by_alias=True, exclude_unset=True),
                "requests": step.requests,
                "raw_responses": step.raw_responses,
            }
        )

    return ask


class _ActivityModel:
    """The durable loop's model call (``ModelCall``): each request is the LLM activity. The
    Agent's own step code picks the tools, lists them and decides composed or native; the
    activity composes the same request on a worker and asks the model there."""

    streams = False

    def __init__(self, loop: _DurableLoop) -> None:
        self.loop = loop

    async def ask(
        self,
        messages: list[dict[str, Any]],
        response_model: type[ToolResponse[Any, Any]],
        step: Step,
        *,
        model: str,
        max_retries: int,
        request_kwargs: dict[str, Any],
    ) -> ToolResponse[Any, Any]:
        return await self._ask(messages, step, native=False)

    async def ask_native(
        self,
        messages: list[dict[str, Any]],
        composition: Composition,
        step: Step,
        *,
        model: str,
        tool_choice: str,
        max_retries: int,
        request_kwargs: dict[str, Any],
        agent_mode: str,
        emit: Emit | None = None,
    ) -> ToolResponse[Any, Any]:
        return await self._ask(messages, step, native=True)

    async def aclose(self) -> None:
        return None

    async def _ask(
        self, messages: list[dict[str, Any]], step: Step, *, native: bool
    ) -> ToolResponse[Any, Any]:
        loop = self.loop
        composition = step.composition
        assert composition is not None  # the Agent's step composes before it asks
        config = loop.config
        payload = {
            "messages": messages,
            "output": composition.output,
            "tool_choice": composition.tool_choice,
            "offered": [t.name for t in composition.tools],
            "instances": list(composition.instances),
            "not_latent": sorted(
                t.name for t in composition.tools if loop.route_of(t.name) != "latent"
            ),
            "native": native,
            "step": step.index,
            "llm": config["llm"],
        }
        try:
            text: str = await workflow.execute_activity(
                LLM_ACTIVITY,
                payload,
                task_queue=loop.world.llm_queue,
                start_to_close_timeout=timedelta(seconds=config["llm"]["activity_timeout"]),
                retry_policy=RetryPolicy(maximum_attempts=3),
                activity_id=f"llm-{config['invocation']}-{step.index}",
                result_type=str,
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError):
                details: dict[str, Any] = (
                    cast("dict[str, Any]", cause.details[0]) if cause.details else {}
                )
                step.requests.extend(details.get("requests", []))
                step.raw_responses.extend(details.get("raw_responses", []))
                if cause.type == "ResponseValidationError":
                    raise ResponseValidationError(
                        cause.message,
                        errors=details.get("errors", ""),
                        attempts=int(details.get("attempts", 1)),
                        last_response=details.get("last_response"),
                    ) from None
                raise LLMError(cause.message) from None
            raise LLMError(f"the LLM request failed: {_failure_text(exc)}") from None
        out = cast("dict[str, Any]", json.loads(text))
        step.requests.extend(out["requests"])
        step.raw_responses.extend(out["raw_responses"])
        return composition.response.model_validate_json(json.dumps(out["response"]))


# -- the durable loop (workflow code) ------------------------------------------------------------


class _WorkflowPending:
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


class _DurableLoop(Agent):
    """The Agent's loop as workflow code: the model call is an activity (``_ActivityModel``),
    explicit calls go to the TemporalExecutor, pending calls park in the workflow."""

    def __init__(self, world: _World, config: Mapping[str, Any], pending: _WorkflowPending) -> None:
        super().__init__(
            "http://127.0.0.1:9/v1",  # never contacted: the LLM request is an activity
            model=config["llm"]["model"],
            tools=world.tools,
            activities=world.activities,
            max_retries=config["llm"]["max_retries"],
            max_calls=config["llm"]["max_calls"],
            end_on_output=config["end_on_output"],
            meta_fields=config["llm"]["meta_fields"],
            call_tag=config["llm"].get("call_tag", "_tool"),
            tools_in_prompt=config["llm"]["tools_in_prompt"],
            mode=config["llm"].get("mode") or "composed",
            instructions=config["instructions"],
            activity_timeout=world.activity_timeout,
            pending=pending,
            executor=world.executor,
            tool_selection=config.get("tool_selection"),
            requires_approval=config.get("requires_approval") or (),
        )
        self.world = world
        self.config = config
        self._parked = pending
        self._compositions = world.composer  # composed once per worker, not once per run
        self._model = _ActivityModel(self)

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


_WORLDS: dict[str, _World] = {}
"""Task queue → what the worker polling it hosts (the workflow classes are module-level)."""


def _world() -> _World:
    return _WORLDS[workflow.info().task_queue]


@workflow.defn(name=WORKFLOW, sandboxed=False)
class RunWorkflow:
    def __init__(self) -> None:
        self.pending = _WorkflowPending()
        self.stream = WorkflowStream()  # the run's events, for DurableAgent.astream

    @workflow.run
    async def run(self, config: dict[str, Any]) -> str:
        loop = _DurableLoop(_world(), config, self.pending)
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
                    events.publish(_event_dict(event))
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
                    "steps": [_step_dict(s) for s in exc.steps or []],
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


# -- transcripts as JSON -------------------------------------------------------------------------


_EVENT_FIELDS = ("type", "run_id", "step", "call_id", "tool", "data", "visible")
_RECORD_FIELDS = ("call_id", "tool", "route", "arguments", "visible", "pending", "progress")


def _event_dict(event: AgentEvent) -> dict[str, Any]:
    return {name: getattr(event, name) for name in _EVENT_FIELDS}


def _record_dict(record: CallRecord) -> dict[str, Any]:
    fields = {name: getattr(record, name) for name in _RECORD_FIELDS}
    return {**fields, "result": record.result.model_dump(mode="json")}


def _step_dict(step: Step) -> dict[str, Any]:
    return {
        "index": step.index,
        "mode": step.mode,
        "offered": step.offered,
        "requests": step.requests,
        "raw_responses": step.raw_responses,
        "response": (
            step.response.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if step.response is not None
            else None
        ),
        "calls": [_record_dict(r) for r in step.calls],
        "delivered": [_record_dict(r) for r in step.delivered],
    }


def dump_result(result: RunResult) -> dict[str, Any]:
    """A RunResult as JSON (what the workflow returns; also to compare transcripts)."""
    return {
        "run_id": result.run_id,
        "output": to_jsonable_python(result.output, by_alias=True),
        "finished": result.finished,
        "pending": result.pending,
        "messages": result.messages,
        "steps": [_step_dict(s) for s in result.steps],
        "context": result.context.to_items() if result.context is not None else None,
    }


def _record(data: Mapping[str, Any]) -> CallRecord:
    fields = {name: data[name] for name in _RECORD_FIELDS}
    return CallRecord(**fields, result=_Result.model_validate(data["result"]))


def _steps(data: Sequence[Mapping[str, Any]]) -> list[Step]:
    return [
        Step(
            index=s["index"],
            mode=s.get("mode", "composed"),
            offered=list(s.get("offered", [])),
            requests=list(s["requests"]),
            raw_responses=list(s["raw_responses"]),
            calls=[_record(r) for r in s["calls"]],
            delivered=[_record(r) for r in s["delivered"]],
        )
        for s in data
    ]


# -- the client side -----------------------------------------------------------------------------


class RunOptions(TypedDict, total=False):
    """The options of ``DurableAgent.start``/``run``/``astream`` (``Agent.arun``'s)."""

    max_steps: int
    run_id: str | None
    tool_choice: str
    tools: Iterable[str | ToolBinding] | None
    context: ContextLike
    deps: Any


class DurableAgent:
    """Starts durable runs (the workflow ``toolbind.run``) on a Temporal cluster.

    Args:
        client: a connected ``temporalio.client.Client``.
        llm: the OpenAI-compatible base URL the workers' LLM activity calls (its key: the
            workers' ``$OPENAI_API_KEY``, or the variable named by ``api_key_env``).
        model, max_retries, max_calls, end_on_output, meta_fields, call_tag, tools_in_prompt, mode,
        instructions, timeout, http_retries, request_kwargs, requires_approval: as for ``Agent``
            (``mode``: ``composed``, ``native`` or ``auto``; an ``instructor.Mode`` is the
            workers' to choose).
        tool_selection: a number k (BM25 over the tools: deterministic, so it runs in the
            workflow); a ``ToolSelector`` object cannot cross to the workers (code, and a selector
            that asks a service would be I/O in workflow code): ``UsageError``.
        task_queue: the workers' queue (the workflow and the LLM activity run there).
        wait_pending: before each step, wait for the results of the run's pending calls (until
            each call's ttl); False: go on at once, as the in-process loop does.
    """

    def __init__(
        self,
        client: Client,
        *,
        llm: str,
        model: str,
        task_queue: str = "toolbind",
        max_retries: int = 2,
        max_calls: int = 100,
        end_on_output: bool = False,
        meta_fields: str = "all",
        call_tag: str = DEFAULT_CALL_TAG,
        tools_in_prompt: bool = False,
        mode: str = "composed",
        instructions: str | None = None,
        timeout: float = 60.0,
        http_retries: int = 2,
        api_key_env: str | None = None,
        request_kwargs: Mapping[str, Any] | None = None,
        wait_pending: bool = True,
        tool_selection: int | None = None,
        requires_approval: Collection[str] = (),
    ) -> None:
        from ._native import MODES

        if not isinstance(mode, str) or mode not in MODES:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UsageError(
                f"DurableAgent(mode={mode!r}): expected one of {', '.join(MODES)} (an "
                "instructor.Mode object does not cross to the workers)"
            )
        given: Any = tool_selection
        if given is not None and (isinstance(given, bool) or not isinstance(given, int)):
            raise UsageError(
                f"DurableAgent(tool_selection={tool_selection!r}): a durable run selects tools in "
                "workflow code, which must be deterministic and cannot receive objects: give a "
                "number k (BM25) — a ToolSelector runs only in process (Agent(tool_selection=...))"
            )
        self.client = client
        self.task_queue = task_queue
        self.end_on_output = end_on_output
        self.instructions = instructions
        self.wait_pending = wait_pending
        self.tool_selection = tool_selection
        self.requires_approval = sorted(requires_approval)
        self.llm: dict[str, Any] = {
            "base_url": llm,
            "model": model,
            "max_retries": max_retries,
            "max_calls": max_calls,
            "meta_fields": meta_fields,
            "call_tag": call_tag,
            "tools_in_prompt": tools_in_prompt,
            "mode": mode,
            "timeout": timeout,
            "http_retries": http_retries,
            "api_key_env": api_key_env,
            "request_kwargs": dict(request_kwargs or {}),
            # the activity's own bound: every retry of instructor, each request's timeout
            "activity_timeout": timeout * (max_retries + 1) * (http_retries + 1) + 10,
        }

    async def start(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: type[BaseModel] | Mapping[str, Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> WorkflowHandle[Any, Any]:
        """Start a run; its workflow id is the run id (a new one by default). ``options``: as
        for ``Agent.arun`` — ``tools`` by name (or bindings), ``context`` (carried as workflow
        data; ``RunResult.context`` is the context after the run).

        Raises:
            UsageError: ``deps`` given — live objects (a database handle) cannot cross to the
                workers; give each worker its own: ``worker(..., deps=...)``.
        """
        import uuid

        max_steps = options.get("max_steps", 8)
        if max_steps < 1:
            raise ValueError("start(max_steps=...) must be >= 1")
        if options.get("deps") is not None:
            raise UsageError(
                "DurableAgent: deps= cannot cross the workflow boundary (a run's input is JSON "
                "data in its history; deps are live objects of this process): give the workers "
                "theirs, worker(..., deps=...), which every Activity's ActivityContext.deps gets"
            )
        schema = (
            output.model_json_schema()
            if isinstance(output, type)
            else dict(output)
            if output is not None
            else None
        )
        tools = options.get("tools")
        context = options.get("context")
        rid = options.get("run_id") or uuid.uuid4().hex
        config = {
            "messages": messages if isinstance(messages, str) else [dict(m) for m in messages],
            "output": schema,
            "max_steps": max_steps,
            "tool_choice": options.get("tool_choice", "auto"),
            "tools": None
            if tools is None
            else [t if isinstance(t, str) else t.name for t in tools],
            "context": None if context is None else Context.of(context).to_items(),
            "tool_selection": self.tool_selection,
            "requires_approval": self.requires_approval,
            "end_on_output": self.end_on_output,
            "instructions": self.instructions,
            "wait_pending": self.wait_pending,
            "invocation": uuid.uuid4().hex[:8],
            "llm": self.llm,
        }
        return await self.client.start_workflow(
            WORKFLOW, config, id=rid, task_queue=self.task_queue
        )

    async def run(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: type[BaseModel] | Mapping[str, Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunResult:
        """Start a run and wait for its RunResult (``steps[i].response`` is None: the answers are
        in ``raw_responses`` and ``messages``; a model output is validated into ``output`` when it
        is a pydantic model).

        Raises:
            ResponseValidationError, LLMError: as ``Agent.arun``; UsageError: as ``start``.
        """
        handle = await self.start(messages, output, **options)
        return await self.result(handle, output)

    async def astream(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: type[BaseModel] | Mapping[str, Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> AsyncIterator[AgentEvent]:
        """Start a run and yield its events as they happen (``Agent.astream``'s, but for the
        model's answer, which is not streamed): the run publishes them to its Workflow Stream,
        each Activity's progress (``tool-result``) as the Activity reports it; the last event
        is ``run.complete`` with the RunResult.

        Raises:
            as ``run``.
        """
        handle = await self.start(messages, output, **options)
        async for event in self.events(handle.id):
            yield event
        result = await self.result(handle, output)
        yield AgentEvent(
            type="run.complete",
            run_id=result.run_id,
            step=len(result.steps) - 1,
            result=result,
        )

    async def events(self, run_id: str, from_offset: int = 0) -> AsyncIterator[AgentEvent]:
        """A started run's visible events, from ``from_offset`` (0: its first), until it ends."""
        stream = WorkflowStreamClient.create(self.client, run_id)
        async for item in stream.subscribe(
            EVENTS, from_offset, poll_cooldown=timedelta(milliseconds=50)
        ):
            data = cast("dict[str, Any]", item.data)
            if data.get("visible", True):
                fields: dict[str, Any] = {name: data.get(name) for name in _EVENT_FIELDS}
                yield AgentEvent(**fields)

    async def result(
        self, handle: WorkflowHandle[Any, Any], output: type[BaseModel] | Any = None
    ) -> RunResult:
        """The RunResult of a started run (waits for it)."""
        raw: Any = await handle.result()
        data = cast("dict[str, Any]", json.loads(raw) if isinstance(raw, str) else raw)
        return load_result(data, output)

    async def submit(
        self, run_id: str, call_id: str, result: Any = None, *, error: str | None = None
    ) -> None:
        """Resolve a pending call of a run (a signal: recorded even while no worker runs)."""
        await self.client.get_workflow_handle(run_id).signal(
            SUBMIT, {"call_id": call_id, "result": result, "error": error}
        )

    async def pending(self, run_id: str) -> list[dict[str, Any]]:
        """The run's pending calls as its workflow holds them (a query: needs a worker)."""
        found: Any = await self.client.get_workflow_handle(run_id).query("pending")
        return cast("list[dict[str, Any]]", found)


def load_result(data: Mapping[str, Any], output: Any = None) -> RunResult:
    """The RunResult a workflow returned (raises the run's LLMError / ResponseValidationError)."""
    failure = cast("Mapping[str, Any] | None", data.get("failure"))
    if failure is not None:
        exc: AgentError
        if failure["type"] == "ResponseValidationError":
            exc = ResponseValidationError(
                failure["message"],
                errors=failure.get("errors") or "",
                attempts=int(failure.get("attempts") or 1),
                last_response=failure.get("last_response"),
            )
        else:
            exc = LLMError(failure["message"])
        exc.steps = _steps(data.get("steps", []))
        raise exc
    value: Any = data["output"]
    if isinstance(output, type) and issubclass(output, BaseModel) and value is not None:
        value = output.model_validate(value)
    return RunResult(
        run_id=data["run_id"],
        output=value,
        finished=data["finished"],
        steps=_steps(data["steps"]),
        messages=list(data["messages"]),
        pending=list(data["pending"]),
        context=Context.of(data["context"]) if data.get("context") is not None else None,
    )


@dataclass(frozen=True, slots=True)
class _Submitted:
    record: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return self.record


class temporal_pending:
    """What ``pending_app`` needs to resolve the pending calls of durable runs: each
    ``POST /runs/{run_id}/tool-results`` becomes the run's update (404 unknown call, 409 already
    resolved, as with the SQLite store) or, when no worker answers within ``update_timeout``
    seconds, its signal (recorded in the run's history, delivered when a worker starts).

    Args:
        address: the Temporal frontend (``127.0.0.1:7233``); connected on first use, in the
            server's event loop.
    """

    def __init__(
        self, address: str, *, namespace: str = "default", update_timeout: float = 5.0
    ) -> None:
        self.address = address
        self.namespace = namespace
        self.update_timeout = update_timeout
        self._client: Client | None = None

    async def submit(
        self, run_id: str, call_id: str, result: Any, *, error: str | None = None
    ) -> _Submitted:
        from temporalio.client import (
            WorkflowUpdateFailedError,
            WorkflowUpdateRPCTimeoutOrCancelledError,
        )
        from temporalio.service import RPCError, RPCStatusCode

        from .errors import AlreadyResolved, UnknownPendingCall

        if self._client is None:
            self._client = await Client.connect(self.address, namespace=self.namespace)
        handle = self._client.get_workflow_handle(run_id)
        body = {"call_id": call_id, "result": result, "error": error}
        try:
            update: Any = handle.execute_update  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            record: Any = await update(
                SUBMIT, body, rpc_timeout=timedelta(seconds=self.update_timeout)
            )
            return _Submitted(cast("dict[str, Any]", record))
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            kind = cause.type if isinstance(cause, ApplicationError) else None
            message = cause.message if isinstance(cause, ApplicationError) else str(exc)
            if kind == "AlreadyResolved":
                raise AlreadyResolved(message) from None
            raise UnknownPendingCall(message) from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise UnknownPendingCall(f"no run {run_id!r}") from None
            if exc.status not in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED):
                raise
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            pass
        # no worker answered: a signal waits in the run's history for the next one
        await handle.signal(SUBMIT, body)
        return _Submitted(
            {
                "run_id": run_id,
                "call_id": call_id,
                "status": "submitted",
                "result": result,
                "error": error,
            }
        )


# -- the worker ----------------------------------------------------------------------------------


def worker(
    client: Client,
    *,
    task_queue: str,
    tools: ToolRegistry | ModuleType | Sequence[ToolBinding],
    activities: ActivityRegistry | Mapping[str, ActivityFn] | None = None,
    executor: TemporalExecutor | None = None,
    workflows: bool = True,
    llm: bool = True,
    tool_activities: bool = True,
    activity_timeout: float = 30.0,
    max_concurrent_activities: int = 100,
    deps: Any = None,
) -> Worker:
    """A Temporal worker on ``task_queue`` hosting the durable loop (``workflows``), the LLM
    activity (``llm``) and the tools' Activities (``tool_activities``): ``activities`` (user
    functions) and the generated HTTP Activities given in it. Run it with ``await w.run()``
    (or ``async with w:``). Every worker of a deployment is given the same tools. ``deps``: what
    the Activities that take an ``ActivityContext`` get as ``ctx.deps`` (this process's
    database handle, client, ...: a durable run's own cannot cross the wire)."""
    if isinstance(tools, ToolRegistry):
        registry = tools
    elif isinstance(tools, ModuleType):
        registry = ToolRegistry()
        registry.register_package(tools)
    else:
        registry = ToolRegistry(list(tools))
    fns = (
        activities
        if isinstance(activities, ActivityRegistry)
        else ActivityRegistry(dict(activities or {}))
    )
    chosen = executor or TemporalExecutor(task_queue=task_queue)
    world = _World(
        tools=registry,
        activities=fns,
        executor=chosen,
        llm_queue=task_queue,
        activity_timeout=activity_timeout,
        router=_router(registry, fns, activity_timeout),
        deps=deps,
    )
    _WORLDS[task_queue] = world
    acts: list[Callable[..., Any]] = []
    if tool_activities:
        acts.append(_tool_activity(world))
    if llm:
        acts.append(_llm_activity(world))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[RunWorkflow, CallWorkflow] if workflows else [],
        activities=acts,
        max_concurrent_activities=max_concurrent_activities,
    )
