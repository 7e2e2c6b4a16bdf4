"""Runtime layer: ``Agent`` — the loop (steps, events, feedback to the model) over the tools and
the capabilities it composes.

Imports ``_calls`` (routing and running the calls), ``_feedback`` (what is said to the model),
``_settings``, ``_capability``, ``capabilities.approval`` and ``_delegate`` (every Agent parks the
calls a spec marks ``x-requires-approval`` and delegates a tool that declares ``_delegate``),
``_registry``, ``_response``, ``_events``, ``_executor``,
``_llm`` (the model call), ``_native``, ``_selection``, ``_state``, ``_context``, ``errors``;
``instructor`` and ``openai`` are imported when an Agent is built (so ``import
toolbind.runtime`` stays light).

One step: compose the offered tools (and the output) into the seeds' ``{output, calls}`` schema,
ask the LLM through instructor (TOOLS mode by default: the Response schema is one function the
model is made to call), validate the answer against the Response model — an invalid answer goes
back to the model with the validation errors (tool, field, keyword) for ``max_retries`` retries,
then ``ResponseValidationError`` carries the last raw response — then run each Call (``_calls``).
Results go back as a tool message (AgentB's envelope per call); ``run`` loops until ``output`` is
set or ``max_steps`` is reached and returns the transcript. ``astream`` yields the user-facing
events (gateway-v3 names; only tools whose ``visible`` flag is on) while the run goes.

Every feature beyond that is a capability (``toolbind.runtime.capabilities``): it wraps the
toolset, a request's tools, the step or each call, and keeps its own state; the Agent keeps none.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolbind._compose import describe_tools

from .._aio import drain
from .._binding import ToolBinding
from .._capability import Capability, Run, Toolset, in_order
from .._context import Context, ContextMessage
from .._delegate import Delegates
from .._events import AgentEvent, CallRecord, RunResult, Step
from .._executor import Executor, InProcessExecutor
from .._llm import InstructorModel, ModelCall
from .._native import MODES, wants_native
from .._registry import Activity, ActivityFn, ActivityRegistry, Tool, ToolRegistry
from .._response import OutputSpec
from .._selection import offered_tools
from .._state import RunContext
from .._stream import Emit
from ..capabilities.approval import RequireApproval
from ..errors import AgentError, UsageError
from ..types import ToolResponse
from ._calls import Dispatch, ExecutionFactory, OwnTools
from ._feedback import feed_back_step, message, streamed, unless_started, with_tools_listed
from ._settings import LoopSettings, ModelSettings

if TYPE_CHECKING:
    import instructor

__all__ = ["Agent", "ContextLike"]

T = TypeVar("T")

ContextLike = Context | Iterable[ContextMessage | Mapping[str, Any]] | None
"""What ``run(..., context=...)`` takes: a ``Context`` or RFC context items (data/state/input)."""

_IN_LOOP = "Agent.run/request called inside an event loop: use arun/arequest instead"


class Agent(Dispatch):
    """An LLM agent over registered tools, through instructor.

    Args:
        client: an OpenAI-compatible base URL (the Agent builds an ``openai.AsyncOpenAI``), an
            ``openai.OpenAI``/``AsyncOpenAI`` client, or any instructor client
            (``instructor.from_provider(...)``).
        model: the model name sent with each request.
        tools: a ``ToolRegistry`` (default: the global ``Tool``), a generated package, or
            ``ToolBinding``s.
        activities: an ``ActivityRegistry`` (default: the global ``Activity``) or a name → function
            mapping.
        capabilities: what the Agent does beyond asking and running calls, each an object of
            ``toolbind.runtime.capabilities``: ``PendingDelivery(store)`` (async tools, delivered
            later), ``RequireApproval(tools)`` (calls that wait for a human; the tools a spec
            marks ``x-requires-approval`` always do), ``Guardrails(input=..., output=...)``,
            ``ToolSelection(k)`` (large toolsets), ``McpServers(config)``, ``Delegates(...)``.
        instructions: a system message put first in every conversation.
        mode: how tools are offered: ``"composed"`` (default: the seeds' single ``Response``
            function, ``{calls, output}``), ``"native"`` (the provider's own tool calling: each
            tool its own function, parallel calls, the final text or a ``final_output``
            function; validated into the same Calls), or ``"auto"`` (native for a request that
            offers no latent tool). An ``instructor.Mode`` instead picks the instructor mode of
            the composed requests (default ``Mode.TOOLS``: works with servers that support named
            ``tool_choice`` but not the ``json_schema`` response format, e.g. llama.cpp).
        settings: how the model is asked (``ModelSettings``: timeout, retries, API key, request
            arguments, the answer's shape).
        loop: how the loop treats answers and Activities (``LoopSettings``: ``end_on_output``,
            ``activity_timeout``).
        executor: what runs the Activity of each explicit call (default ``InProcessExecutor``:
            in this process; ``toolbind.temporal.TemporalExecutor``: Temporal activities on workers).
        execution_activity: builds Activities for tools with a declarative ``execution`` config.
            Default: the gateway HTTP executor (``HttpExecution``) for every config with a
            ``url``/``webhookUrl`` (``space`` tools and configs without a URL stay async); a
            config error (e.g. an unset ``${env.NAME}``) becomes that tool's failed result.

    Raises:
        UsageError: an argument of the wrong kind (the message names it).

    A client built from a URL is closed after each sync ``run``/``request``; async users close it
    with ``await agent.aclose()`` or ``async with agent:``.
    """

    def __init__(
        self,
        client: str | Any,
        *,
        model: str,
        tools: ToolRegistry | ModuleType | Iterable[ToolBinding] | None = None,
        activities: ActivityRegistry | Mapping[str, ActivityFn] | None = None,
        capabilities: Sequence[Capability] = (),
        instructions: str | None = None,
        mode: instructor.Mode | str | None = None,
        settings: ModelSettings | None = None,
        loop: LoopSettings | None = None,
        executor: Executor | None = None,
        execution_activity: ExecutionFactory | None = None,
    ) -> None:
        self.last_step: Step | None = None
        """The Step of the latest ``request``/``arequest``: ``.llm_requests``, ``.usage``."""
        self.mode = mode if isinstance(mode, str) else "composed"
        if self.mode not in MODES:
            raise UsageError(f"Agent(mode={mode!r}): expected one of {', '.join(MODES)}")
        self.settings = _given(settings, ModelSettings, "settings")
        self.loop_settings = _given(loop, LoopSettings, "loop")
        self._model: ModelCall = InstructorModel(
            client,
            mode=None if isinstance(mode, str) else mode,
            timeout=self.settings.timeout,
            http_retries=self.settings.http_retries,
            api_key=self.settings.api_key,
        )
        self._redact = self._model.redact
        self.model = model
        self.tools = _own_tools(tools)
        self.activities = (
            Activity
            if activities is None
            else activities
            if isinstance(activities, ActivityRegistry)
            else ActivityRegistry(activities)
        )
        self.instructions = instructions
        self.executor: Executor = executor or InProcessExecutor()
        self.execution_activity = execution_activity or self._http_execution
        self._http_executions: list[Any] = []  # HttpExecution objects the default factory made
        self._compositions = {}
        self._made_activities = {}
        self._compose(_checked(capabilities))

    def _compose(self, capabilities: Sequence[Capability]) -> None:
        """Bind ``capabilities`` to this Agent and wrap its toolset in them, in their order."""
        self.capabilities = in_order([c.bind(self) for c in capabilities])
        toolset: Toolset = OwnTools(self.tools, self.activities)
        for capability in self.capabilities:
            toolset = capability.wrap_toolset(toolset)
        self.toolset = toolset

    def spawn(self, tools: list[ToolBinding], model_call: ModelCall) -> Agent:
        """A child of this Agent for a delegate's sub-request: ``tools`` only, its requests sent
        through ``model_call``, each capability as it keeps itself for a child (``for_child``),
        no instructions."""
        child = copy.copy(self)
        child.tools = tools
        child.instructions = None
        child.last_step = None
        child._model = model_call
        child._compositions = {}
        child._made_activities = {}
        kept = (c.for_child() for c in self.capabilities)
        child._compose([c for c in kept if c is not None])
        return child

    @property
    def model_call(self) -> ModelCall:
        """How the Agent asks the model (the client's requests)."""
        return self._model

    # -- the client

    async def aclose(self) -> None:
        """Close the HTTP clients the Agent made: the LLM client built from a URL (a no-op for
        clients passed in), the connection pools of the default HTTP executors and what its
        toolset opened (MCP sessions)."""
        await self._model.aclose()
        for executor in self._http_executions:
            await asyncio.to_thread(executor.close)
        await self.toolset.aclose()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _sync(self, coro: Awaitable[T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            cast("Any", coro).close()
            raise UsageError(_IN_LOOP)

        async def main() -> T:
            try:
                return await coro
            finally:
                await self.aclose()

        return _run_sync(main())

    # -- one LLM step

    async def _ask(
        self,
        messages: list[dict[str, Any]],
        output: OutputSpec,
        step: Step,
        tool_choice: str = "auto",
        subset: Iterable[str | ToolBinding] | None = None,
        emit: Emit | None = None,
        instances: Sequence[str] = (),
    ) -> ToolResponse[Any, Any]:
        offered = await offered_tools(
            self._all_tools(), messages, subset=subset, tool_choice=tool_choice
        )
        for capability in self.capabilities:  # narrowed for this request (tool selection)
            offered = await capability.prepare_tools(offered, messages, tool_choice)
        composition = self.composition(output, tool_choice, offered, instances)
        step.offered, step.composition = [t.name for t in composition.tools], composition
        s = self.settings
        if s.tools_in_prompt and composition.tools:
            messages = with_tools_listed(
                messages, describe_tools(composition.tools), composition.tag
            )
        native = wants_native(self.mode, composition)
        if native:
            step.mode = "native"
        if native or (emit is not None and self._model.streams):
            # native: one function per tool; streamed: partial calls read as they arrive
            return await self._model.ask_native(
                messages,
                composition,
                step,
                model=self.model,
                tool_choice=tool_choice,
                max_retries=s.max_retries,
                request_kwargs=dict(s.request_kwargs),
                agent_mode=self.mode,
                emit=emit,
            )
        return await self._model.ask(
            messages,
            composition.response,
            step,
            model=self.model,
            max_retries=s.max_retries,
            request_kwargs=dict(s.request_kwargs),
        )

    async def arequest(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
    ) -> ToolResponse[Any, Any]:
        """One LLM step: the validated Response (``.calls`` typed per tool, ``.output``);
        ``agent.last_step`` keeps the step's requests and token usage (``.llm_requests``, ``.usage``).

        ``tool_choice``: ``auto`` (calls and/or output), ``required`` (at least one call and no
        output), ``none`` (the output, no call) or a tool's name (only that tool, called at least
        once). The composed schema says so and the answer is held to it. ``tools``: offer only
        these (names or bindings) this time; ``ToolSelection`` narrows them further.

        Raises:
            ResponseValidationError: the answers stayed invalid after ``max_retries`` retries.
            LLMError: the request failed (HTTP error, timeout).
            ValueError: ``tool_choice`` names no tool offered.
        """
        step = Step(index=0)
        self.last_step = step  # its requests, raw responses and usage, also when this raises
        await self.toolset.refresh()
        return await self._ask(self._conversation(messages), output, step, tool_choice, tools)

    def request(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
    ) -> ToolResponse[Any, Any]:
        """``arequest`` for synchronous code (not from inside a running event loop)."""
        return self._sync(self.arequest(messages, output, tool_choice=tool_choice, tools=tools))

    # -- the loop

    async def arun(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        max_steps: int = 8,
        run_id: str | None = None,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
        context: ContextLike = None,
        deps: Any = None,
    ) -> RunResult:
        """Run the loop until the model sets ``output`` or ``max_steps`` steps were made.

        Args:
            messages: the conversation so far (a string is one user message).
            output: the final output's type (pydantic model or JSON Schema); None for text.
            max_steps: the most LLM steps to make.
            run_id: resume a run (its pending results get delivered); a new id by default.
            tool_choice: the first step's (``arequest``'s values); later steps are ``auto``, so
                the run can end (as the OpenAI Agents SDK resets a required tool choice).
            tools: offer only these tools (names or bindings) in this run.
            context: data / state / input messages (a ``Context``, or RFC context items): the
                model sees them; Calls' variable references resolve in them and their outputs
                are appended at their ``_outputPath``; with ``_instance`` ids, every tool takes
                an ``_instance``. A ``Context`` given is updated in place;
                ``RunResult.context`` is the context after the run.
            deps: the run's dependencies (a database handle, a user id), given to each Activity
                that takes a second argument, as ``ActivityContext.deps``.

        Raises:
            ResponseValidationError, LLMError: as for ``arequest``; tool failures never raise.
        """
        result: RunResult | None = None
        if max_steps < 1:
            raise UsageError(f"arun(max_steps={max_steps!r}) must be >= 1")
        events = self._events(
            messages, output, max_steps, run_id, tool_choice, tools, context=context, deps=deps
        )
        async for event in events:
            if event.type == "run.complete":
                result = event.result
        assert result is not None
        return result

    def run(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        max_steps: int = 8,
        run_id: str | None = None,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
        context: ContextLike = None,
        deps: Any = None,
    ) -> RunResult:
        """``arun`` for synchronous code (not from inside a running event loop)."""
        return self._sync(
            self.arun(
                messages,
                output,
                max_steps=max_steps,
                run_id=run_id,
                tool_choice=tool_choice,
                tools=tools,
                context=context,
                deps=deps,
            )
        )

    async def astream(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        max_steps: int = 8,
        run_id: str | None = None,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
        context: ContextLike = None,
        deps: Any = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding the user-facing events as they happen (``tool_choice``,
        ``tools``, ``context`` and ``deps`` as for ``arun``).

        Only calls of visible tools (``visible`` flag; default: every execution type but
        ``internal``) appear; the last event is ``run.complete`` with ``.result``. The model's
        answer is streamed (async clients): ``text-delta`` events with the output's text, and for
        each call ``tool-call.start`` and ``tool-input-delta`` events with its partial arguments
        (``data["partial"]``) as they are generated, then the validated call's
        ``tool-input-delta`` (``data["arguments"]``: the whole arguments) and its result; an
        answer refused and asked again ends with ``attempt.discarded`` (see ``AgentEvent``).
        """
        async for event in self._events(
            messages,
            output,
            max_steps,
            run_id,
            tool_choice,
            tools,
            stream=True,
            context=context,
            deps=deps,
        ):
            if event.visible:
                yield event

    def _conversation(self, messages: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        given: list[dict[str, Any]] = (
            [{"role": "user", "content": messages}]
            if isinstance(messages, str)
            else [message(m, i) for i, m in enumerate(messages)]
        )
        system: dict[str, Any] = {"role": "system", "content": self.instructions}
        if self.instructions and (not given or given[0] != system):  # not again on a resume
            given.insert(0, system)
        return given

    async def _events(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec,
        max_steps: int,
        run_id: str | None,
        tool_choice: str = "auto",
        tools: Iterable[str | ToolBinding] | None = None,
        stream: bool = False,
        context: ContextLike = None,
        deps: Any = None,
    ) -> AsyncIterator[AgentEvent]:
        state = RunContext(Context.of(context) if context is not None else None, deps)
        run = self._run(run_id or uuid.uuid4().hex, output, self._conversation(messages), state)
        if (shown_context := state.render()) is not None:
            run.convo.append({"role": "user", "content": shown_context})
        subset = None if tools is None else list(tools)
        prefix = self._call_prefix()
        steps: list[Step] = []
        final: Any = None
        finished = False
        for index in range(max_steps):
            step = Step(index=index)
            steps.append(step)
            choice = tool_choice if index == 0 else "auto"
            async for event in self._step(run, step, steps, choice, subset, prefix, stream):
                yield event
            response = step.response
            assert response is not None
            if response.output is not None:
                final = response.output  # provisional while results the model hasn't seen exist
                unseen = [r for r in step.calls if r.route in ("explicit", "missing")]
                if self.loop_settings.end_on_output or not unseen:
                    finished = True
                    break
            if step.calls and all(r.repeats for r in step.calls):
                break  # only calls already waiting for a human: asking on would loop
        repeated = {r.repeats for s in steps for r in s.calls if r.repeats}
        result = RunResult(
            run_id=run.run_id,
            output=final,
            finished=finished,
            steps=steps,
            messages=run.convo,
            pending=sorted(run.outstanding.keys() | repeated),
            context=state.context,
        )
        yield AgentEvent(type="run.complete", run_id=run.run_id, step=len(steps) - 1, result=result)

    def _run(
        self, run_id: str, output: OutputSpec, convo: list[dict[str, Any]], state: RunContext
    ) -> Run:
        """The run as the capabilities' step hooks see it."""

        async def execute(call_id: str, call: Any, changes: Mapping[str, Any]) -> CallRecord:
            step_key, _, index = call_id.rpartition("-")  # call-<invocation>-<step>-<index>
            at = int(step_key.rpartition("-")[2])
            routed = self._route_call(run_id, at, int(index), call_id, call)
            # its events are the delivering capability's to tell (its progress is in the record)
            return await self._execute_one(replace(routed, **changes), lambda _: None, state)

        return Run(
            run_id=run_id,
            output=output,
            convo=convo,
            outstanding={},
            state=state,
            binding=self._binding,
            shown=lambda: self.composition(output).shown,
            execute=execute,
        )

    async def _step(
        self,
        run: Run,
        step: Step,
        steps: list[Step],
        tool_choice: str,
        subset: list[str | ToolBinding] | None,
        prefix: str,
        stream: bool,
    ) -> AsyncIterator[AgentEvent]:
        """One step: the hooks, the model's answer (streamed), its calls run, the feedback."""
        index, state = step.index, run.state
        assert state is not None
        if index:
            await self._before_step(run.outstanding)
        await self.toolset.refresh()  # MCP servers: tools/list at start and after list_changed
        for capability in self.capabilities:  # pending results delivered
            for event in await capability.before_step(run, step):
                yield event
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        started: set[str] = set()  # calls whose start the stream told
        emit = streamed(run.run_id, index, f"{prefix}-{index}", queue, started, self._binding)
        asking = asyncio.create_task(
            self._ask(
                run.convo,
                run.output,
                step,
                tool_choice,
                subset,
                emit if stream else None,
                state.instances,
            )
        )
        async for event in drain(queue, asking):
            yield event
        try:
            response = asking.result()
        except AgentError as exc:
            exc.steps = steps  # the transcript so far, for the caller's diagnosis
            raise
        step.response = response
        put = unless_started(queue, started)  # the stream told these calls' start
        task = asyncio.create_task(self._execute(run.run_id, index, prefix, response, put, state))
        async for event in drain(queue, task):  # the consumer stops: the calls stop too
            yield event
        step.calls = task.result()
        run.outstanding.update((r.call_id, r) for r in step.calls if r.pending)
        asked = step.composition or self.composition(
            run.output, tool_choice, instances=state.instances
        )
        feed_back_step(run.convo, step, response, asked)
        if (update := state.updates()) is not None:
            run.convo.append({"role": "user", "content": update})

    def _call_prefix(self) -> str:
        """The prefix of this invocation's call ids: they must not repeat when a run is resumed
        (same run_id, steps counted from 0 again)."""
        return f"call-{uuid.uuid4().hex[:8]}"

    async def _before_step(self, outstanding: Mapping[str, CallRecord]) -> None:
        """A hook before each step after the first (the durable loop waits here for pending
        results); ``outstanding``: the pending calls not delivered yet."""


# -- helpers -------------------------------------------------------------------------------------


def _given(value: Any, kind: type[T], name: str) -> T:
    """``value`` (or the default ``kind()``), checked to be a ``kind``."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise UsageError(
            f"Agent({name}={value!r}): expected {kind.__name__}(...) (toolbind.runtime)"
        )
    return value


def _own_tools(
    tools: ToolRegistry | ModuleType | Iterable[ToolBinding] | None,
) -> ToolRegistry | list[ToolBinding]:
    if tools is None:
        return Tool
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, ModuleType):
        registry = ToolRegistry()
        registry.register_package(tools)
        return registry
    return list(tools)


def _checked(capabilities: Sequence[Capability]) -> list[Capability]:
    """The capabilities given, checked; approval and delegates added when not given (an Agent
    always parks the calls a spec marks ``x-requires-approval`` and delegates the calls of a tool
    that declares ``_delegate``)."""
    given: Any = capabilities
    if isinstance(given, Capability) or not isinstance(given, Sequence):
        raise UsageError(
            f"Agent(capabilities={capabilities!r}): expected a list of capabilities "
            "(toolbind.runtime.capabilities)"
        )
    out = list(cast("Sequence[Any]", given))
    for item in out:
        if not isinstance(item, Capability):
            raise UsageError(
                f"Agent(capabilities=[..., {item!r}, ...]): {type(item).__name__} is not a "
                "capability (toolbind.runtime.capabilities)"
            )
    for kind in (RequireApproval, Delegates):
        if not any(isinstance(c, kind) for c in out):
            out.append(kind())
    return out


def _run_sync(coro: Awaitable[T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(cast("Any", coro))
    cast("Any", coro).close()
    raise UsageError(_IN_LOOP)
