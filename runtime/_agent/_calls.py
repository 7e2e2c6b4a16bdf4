"""Runtime layer: how the Agent routes and runs a step's calls — the toolset of its own tools, the
composition of a request, each Call routed once and run through the capabilities' chain. Imports
``_capability``, ``capabilities.context``, ``_compose``, ``_events``, ``_executor``,
``_registry``, ``_response``, ``_result``, ``_state``, ``contract``, ``errors``, ``types``;
``http._gateway`` when a tool with an HTTP ``execution`` config is first routed.

A call is routed once (a ``RoutedCall``):

* explicit (an Activity resolved by ``_activity`` > same-name > none): the ``Executor`` runs the
  Activity (sync, async or async generator; per-call timeout; calls run concurrently unless an
  Activity opts out); an exception or timeout becomes a failed ``ToolResult``, never a crash;
* latent (no Activity): the ``_output`` the model produced is the result. The composed schema
  makes ``_output`` optional (the seeds' rule) and the Response model holds to that schema, so a
  latent call without one is valid: its result is null, with ``metadata["output"] = "absent"``;
* async (gateway-v3 ``space``, ``external`` without a URL, or an Activity that returns
  ``Pending``): a capability that keeps pending calls (``PendingDelivery``) parks it.

Each call passes through the run's context (``RunState``) and the Agent's capabilities
(guardrails, approval, ...) before the route decides what it gives.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from toolbind._compose import resolve_activity

from .._binding import RUNS_ELSEWHERE, ToolBinding
from .._capability import Capability, Outcome, Toolset, chain, in_order, visible
from .._events import AgentEvent, CallRecord, EventType, Route
from .._executor import Executor, Pending, RoutedCall
from .._registry import ActivityFn, ActivityRegistry, RegisteredActivity, ToolRegistry
from .._response import Composition, OutputSpec, compose
from .._result import ToolResult
from .._state import RunContext, call_scopes, takes_context
from ..capabilities.context import RunState
from ..contract import META_FIELDS
from ..errors import UsageError
from ..types import ToolResponse

if TYPE_CHECKING:
    from ._settings import LoopSettings, ModelSettings

__all__ = ["Dispatch", "ExecutionFactory", "OwnTools"]

_Result = ToolResult[Any]  # subscripted once: pydantic's generic lookup is not free

ExecutionFactory = Callable[[ToolBinding], ActivityFn | None]
"""Makes the Activity of a tool with a declarative ``execution`` config (e.g. gateway HTTP), or
None when it cannot; the Agent calls it for tools that have no registered Activity."""

_NO_STORE = (
    "tool {tool!r} answers asynchronously but the Agent has no pending store "
    "(Agent(capabilities=[PendingDelivery(PendingStore(...))]))"
)


class OwnTools:
    """The innermost toolset: the Agent's own tools and the Activities registered for them."""

    def __init__(
        self, tools: ToolRegistry | list[ToolBinding], activities: ActivityRegistry
    ) -> None:
        self.tools = tools
        self.activities = activities

    def __iter__(self) -> Iterator[ToolBinding]:
        return iter(self.tools)

    def get(self, name: str) -> ToolBinding | None:
        if isinstance(self.tools, ToolRegistry):
            return self.tools.get(name)
        return next((t for t in self.tools if t.name == name), None)

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        name = resolve_activity(tool, self.activities.names)
        return self.activities.get(name) if name else None

    async def refresh(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


class Dispatch:
    """The Agent's composition, routing and execution of calls (the loop is ``Agent``'s)."""

    tools: ToolRegistry | list[ToolBinding]
    activities: ActivityRegistry
    capabilities: list[Capability]
    toolset: Toolset
    settings: ModelSettings
    loop_settings: LoopSettings
    executor: Executor
    execution_activity: ExecutionFactory
    _compositions: dict[Any, Composition]
    _http_executions: list[Any]
    _made_activities: dict[int, tuple[ToolBinding, RegisteredActivity | None]]

    # -- the tools

    def _binding(self, name: str) -> ToolBinding | None:
        return self.toolset.get(name)

    def _all_tools(self) -> list[ToolBinding]:
        """Every tool the Agent can offer, as its capabilities offer them."""
        return list(self.toolset)

    def _route(self, tool: ToolBinding) -> tuple[Route, RegisteredActivity | None]:
        found = self.toolset.activity(tool)
        if found is not None:
            return "explicit", found
        if tool.execution:
            made = self._made_activities.get(id(tool))
            if made is None or made[0] is not tool:  # built once per tool (and kept with it)
                fn = self.execution_activity(tool)
                raw_timeout = tool.execution.get("timeout")
                seconds = raw_timeout / 1000 if isinstance(raw_timeout, int | float) else None
                made = (tool, RegisteredActivity(fn, seconds) if fn is not None else None)
                self._made_activities[id(tool)] = made
            if made[1] is not None:
                return "explicit", made[1]
        execution = tool.execution or {}
        has_url = bool(execution.get("url") or execution.get("webhookUrl"))
        if tool.execution_type == "space" or (tool.execution_type == "external" and not has_url):
            return "async", None
        if resolve_activity(tool, self.activities.names) or tool.execution_type in RUNS_ELSEWHERE:
            return "missing", None  # never latent: its result is not the model's to invent
        return "latent", None

    def composition(
        self,
        output: OutputSpec = None,
        tool_choice: str = "auto",
        tools: Iterable[ToolBinding] | None = None,
        instances: Sequence[str] = (),
    ) -> Composition:
        """The composed schema (and ``.response`` type) of a request offering ``tools`` (default:
        all of the Agent's, its MCP servers' included; ``instances``: a multi-instance context's
        ids, offered as ``_instance``)."""
        tools = self._all_tools() if tools is None else list(tools)
        routed: dict[str, Route] = {t.name: self._route(t)[0] for t in tools}
        _refuse_stranded(tools, routed, self.activities)
        not_latent = frozenset(n for n, r in routed.items() if r != "latent")
        out_key: Any = (
            json.dumps(output, sort_keys=True, default=str)
            if isinstance(output, Mapping)
            else output
        )
        s = self.settings
        key = (
            tuple(id(t) for t in tools),
            not_latent,
            out_key,
            s.max_calls,
            tool_choice,
            s.meta_fields,
            tuple(instances),
            s.call_tag,
        )
        # the cached Composition holds the tools, so their ids stay unique while the key lives
        found = self._compositions.get(key)
        if found is None:
            if len(self._compositions) >= 64:
                self._compositions.clear()
            found = compose(
                tools,
                output,
                activities=not_latent,
                max_calls=s.max_calls,
                tool_choice=tool_choice,
                meta_fields=s.meta_fields,
                instances=instances,
                tag=s.call_tag,
            )
            self._compositions[key] = found
        return found

    def _http_execution(self, binding: ToolBinding) -> ActivityFn | None:
        """The default ``execution_activity``: the gateway's HTTP executor, run in a thread."""
        execution = binding.execution or {}
        if binding.execution_type == "space" or not (
            execution.get("url") or execution.get("webhookUrl")
        ):
            return None  # async: the result is submitted later
        from ..errors import HttpConfigurationError
        from ..http._gateway import HttpExecution

        try:
            executor = HttpExecution.from_binding(binding)
        except HttpConfigurationError as exc:
            message = str(exc)  # never holds a secret value

            def misconfigured(call: Any) -> ToolResult[Any]:
                return _Result.fail(message, error_type="configuration", execution="explicit")

            return misconfigured
        self._http_executions.append(executor)
        output_model = binding.output_model if binding.output_schema is not None else None

        def via_http(call: Any) -> ToolResult[Any]:
            # the sync client, in the worker thread ``_invoke`` gives sync Activities: it is not
            # tied to one event loop (each sync ``run`` has its own)
            return executor.call(call, output_model)

        return via_http

    # -- routing

    def _route_calls(
        self, run_id: str, step: int, prefix: str, response: ToolResponse[Any, Any]
    ) -> list[RoutedCall]:
        """Each Call of the answer routed once into its record (``call_id``: ``prefix-step-i``);
        its references resolve when it runs (after the calls whose outputs it may read)."""
        return [
            self._route_call(run_id, step, index, f"{prefix}-{step}-{index}", call)
            for index, call in enumerate(response.calls)
        ]

    def _route_call(
        self, run_id: str, step: int, index: int, call_id: str, call: Any
    ) -> RoutedCall:
        """One Call routed: its Activity, whether its spec says it waits for approval."""
        tool: str = call.tool
        binding = self._binding(tool)
        route, activity = self._route(binding) if binding else ("missing", None)
        dumped: dict[str, Any] = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return RoutedCall(
            run_id=run_id,
            step=step,
            index=index,
            call_id=call_id,
            tool=tool,
            route=route,
            call=call,
            dumped=dumped,
            arguments={k: v for k, v in dumped.items() if k not in META_FIELDS},
            binding=binding,
            activity=activity,
            visible=visible(binding) if binding else True,
            timeout=(activity.timeout if activity else None) or self.loop_settings.activity_timeout,
            approval=bool(binding and binding.requires_approval),
        )

    # -- execution

    async def _execute(
        self,
        run_id: str,
        step: int,
        prefix: str,
        response: ToolResponse[Any, Any],
        emit: Callable[[AgentEvent], None],
        state: RunContext | None = None,
    ) -> list[CallRecord]:
        """Run a step's calls: concurrently, except an Activity that opted out, or a call that
        reads the context (its references may name what earlier calls write), runs alone (after
        the calls before it, before those after it); the records in the answer's order."""
        calls = self._route_calls(run_id, step, prefix, response)
        records: list[CallRecord | None] = [None] * len(calls)
        batch: list[RoutedCall] = []

        async def flush() -> None:
            done = await asyncio.gather(*(self._execute_one(c, emit, state) for c in batch))
            for routed, record in zip(batch, done, strict=True):
                records[routed.index] = record
            batch.clear()

        for routed in calls:
            if (
                routed.route == "explicit" and routed.activity and not routed.activity.concurrent
            ) or (state is not None and state.depends(routed.call)):
                await flush()
                records[routed.index] = await self._execute_one(routed, emit, state)
            else:
                batch.append(routed)
        await flush()
        return [r for r in records if r is not None]

    async def _execute_one(
        self,
        routed: RoutedCall,
        emit: Callable[[AgentEvent], None],
        state: RunContext | None = None,
    ) -> CallRecord:
        """One call through the run's context and the capabilities, its events told."""
        around = self.capabilities if state is None else [RunState(state), *self.capabilities]
        for capability in in_order(around):
            routed = capability.prepare_call(routed)
        record = CallRecord(
            call_id=routed.call_id,
            tool=routed.tool,
            route=routed.route,
            arguments=routed.arguments,
            result=_Result.ok(None),
            visible=routed.visible,
        )
        event = _teller(routed, emit)

        def progress(item: Any) -> None:
            plain = to_jsonable_python(item, by_alias=True)
            record.progress.append(plain)
            event("tool-result", {"preliminary": True, "output": plain})

        event("tool-call.start", {"reasoning": routed.dumped.get("_reasoningForCall")})
        # the validated call's whole arguments: a key of their own, never a streamed piece's
        event("tool-input-delta", {"arguments": routed.arguments})
        value = await chain(around, partial(self._run_call, progress=progress, state=state))(routed)
        if isinstance(value, Pending):
            record.result = await self._park(routed, value)
            record.repeats = record.result.metadata.get("repeats")
            record.pending = record.result.success and record.repeats is None
        else:
            record.result = value
        kind: EventType = (
            "tool-call.pending"
            if record.pending
            else "tool-call.complete"
            if record.result.success
            else "tool-call.error"
        )
        event(kind, record.result.model_dump(mode="json"))
        return record

    async def _run_call(
        self, routed: RoutedCall, *, progress: Callable[[Any], None], state: RunContext | None
    ) -> Outcome:
        """What the call's route gives, once every capability let it through."""
        if routed.refused is not None:
            return _Result.fail(routed.refused)
        if routed.route == "latent":
            if "_output" in routed.dumped:
                return _Result.ok(routed.dumped["_output"], execution="latent")
            return _Result.ok(None, execution="latent", output="absent")  # optional: none given
        if routed.route == "missing":
            binding = routed.binding
            name = (binding.activity if binding else None) or routed.tool
            return _Result.fail(
                f"no Activity named {name!r} is registered for tool {routed.tool!r}"
            )
        if routed.route == "async" or routed.activity is None:
            return Pending(arguments=routed.arguments)
        if state is not None and takes_context(routed.activity.fn):
            given = state.for_call(
                run_id=routed.run_id,
                step=routed.step,
                call_id=routed.call_id,
                tool=routed.tool,
                instance=routed.dumped.get("_instance"),
                reporter=progress,
                scopes=_scopes(routed),
            )
            routed = replace(routed, activity_context=given)
        value = await self.executor.execute(routed, progress)
        if isinstance(value, Pending) and value.arguments is None:
            # the store keeps the arguments as the call ran (its references resolved)
            value = replace(value, arguments=routed.arguments)
        return value

    async def _park(self, routed: RoutedCall, marker: Pending) -> ToolResult[Any]:
        """The result the model reads while a call waits: the first capability that keeps it."""
        for capability in self.capabilities:
            kept = await capability.park(routed, marker)
            if kept is not None:
                return kept
        return _Result.fail(_NO_STORE.format(tool=routed.tool), execution="async")


def _scopes(routed: RoutedCall) -> list[Any] | None:
    return call_scopes(routed.dumped, routed.binding)


def _teller(routed: RoutedCall, emit: Callable[[AgentEvent], None]) -> Callable[..., None]:
    """``event(kind, data)``: one of the call's events, told through ``emit``."""

    def event(kind: EventType, data: Any = None) -> None:
        emit(
            AgentEvent(
                type=kind,
                run_id=routed.run_id,
                step=routed.step,
                call_id=routed.call_id,
                tool=routed.tool,
                data=data,
                visible=routed.visible,
            )
        )

    return event


def _refuse_stranded(
    tools: Sequence[ToolBinding], routed: Mapping[str, Route], activities: ActivityRegistry
) -> None:
    """Refuse tools that run elsewhere (an MCP server, the gateway) and cannot run here."""
    stranded = [
        t.name
        for t in tools
        if routed[t.name] == "missing"
        and t.execution_type in RUNS_ELSEWHERE
        and not resolve_activity(t, activities.names)
    ]
    if stranded:
        raise UsageError(
            f"{len(stranded)} tool(s) run elsewhere and have no way to run here: "
            f"{', '.join(stranded[:10])}{' …' if len(stranded) > 10 else ''} (an MCP tool runs on "
            "its server, a gateway tool on the gateway). Register an Activity for each "
            "(Activity.register(name, fn)), give it an `execution` config, or leave it out of "
            "Agent(tools=...): such a tool is never run latently, where the model's guess would "
            "come back as its result."
        )
