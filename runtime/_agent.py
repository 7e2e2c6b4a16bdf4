"""Runtime layer: ``Agent`` — the loop (steps, routing, events, feedback to the model, pending tools).

Imports ``_registry``, ``_response``, ``_compose``, ``_result``, ``_events`` (the records),
``_llm`` (the model call: client, instructor request, error mapping), ``_executor`` (what runs an
explicit call's Activity: ``InProcessExecutor`` by default), ``contract``, ``errors``, pydantic;
``instructor`` and ``openai`` are imported when an Agent is built (so ``import toolbind.runtime``
stays light), and ``http._gateway`` (the HTTP executor) when a tool with an HTTP ``execution``
config is first routed.

One step: compose the registered tools (and the output) into the seeds' ``{output, calls}``
schema, ask the LLM through instructor (TOOLS mode by default: the Response schema is one function
the model is made to call), validate the answer against the Response model — an invalid answer
goes back to the model with the validation errors (tool, field, keyword) for ``max_retries``
retries, then ``ResponseValidationError`` carries the last raw response — then route each Call once (a ``RoutedCall``):

* explicit (an Activity resolved by ``_activity`` > same-name > none): the ``Executor`` runs the
  Activity (sync, async or async generator; per-call timeout; calls run concurrently unless an
  Activity opts out); an exception or timeout becomes a failed ``ToolResult``, never a crash;
* latent (no Activity): the ``_output`` the model produced is the result. The composed schema
  makes ``_output`` optional (the seeds' rule) and the Response model holds to that schema, so a
  latent call without one is valid: its result is null, with ``metadata["output"] = "absent"``;
* async (gateway-v3 ``space``, ``external`` without a URL, or an Activity that returns
  ``Pending``): the call is added to the pending store and its result, once submitted, is
  delivered to the model as an event at a later step of the same run.

Results go back as a tool message (AgentB's envelope per call); ``run`` loops until ``output`` is
set or ``max_steps`` is reached and returns the transcript. ``astream`` yields the user-facing
events (gateway-v3 names; only tools whose ``visible`` flag is on) while the run goes.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from toolbind._compose import (
    AUTO_TAG,
    META_FIELD_CHOICES,
    TOOL_TAG,
    MetaFields,
    describe_tools,
    resolve_activity,
)

from ._aio import drain
from ._binding import ToolBinding
from ._context import Context, ContextMessage
from ._delegate import Delegates, Delegation, call_scopes
from ._events import (
    AgentEvent,
    CallRecord,
    EventType,
    PendingCall,
    PendingSink,
    Route,
    RunResult,
    Step,
)
from ._executor import (
    DEFAULT_ACTIVITY_TIMEOUT,
    Executor,
    InProcessExecutor,
    Pending,
    RoutedCall,
)
from ._guardrails import Guardrails, GuardrailSpec
from ._llm import InstructorModel, ModelCall
from ._native import MODES, wants_native
from ._registry import (
    Activity,
    ActivityFn,
    ActivityRegistry,
    RegisteredActivity,
    Tool,
    ToolRegistry,
)
from ._response import Composition, OutputSpec, compose
from ._result import ToolResult
from ._selection import ToolSelector, as_selector, offered_tools
from ._state import RunContext, takes_context
from ._stream import Emit
from .contract import META_FIELDS
from .errors import AgentError, LLMError, ResponseValidationError, UsageError
from .types import ToolResponse

if TYPE_CHECKING:
    import instructor

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "CallRecord",
    "ExecutionFactory",
    "LLMError",
    "Pending",
    "PendingCall",
    "PendingSink",
    "ResponseValidationError",
    "RunResult",
    "Step",
]

T = TypeVar("T")
DEFAULT_CALL_TAG = AUTO_TAG
"""What ``Agent(call_tag=...)`` offers by default: ``_tool`` when one tool is offered, ``function``
when several (measured: bench/bfcl.py, README)."""
_Result = ToolResult[Any]  # subscripted once: pydantic's generic lookup is not free
DEFAULT_MAX_CALLS = 100

APPROVAL = "_approval"
"""The key of a pending call's arguments that holds a call parked for approval."""

RUNS_ELSEWHERE = frozenset({"gateway", "internal"})
"""Execution types whose tools run somewhere (an MCP server, the gateway): never latent."""

ContextLike = Context | Iterable[ContextMessage | Mapping[str, Any]] | None
"""What ``run(..., context=...)`` takes: a ``Context`` or RFC context items (data/state/input)."""

ExecutionFactory = Callable[[ToolBinding], ActivityFn | None]
"""Makes the Activity of a tool with a declarative ``execution`` config (e.g. gateway HTTP), or
None when it cannot; the Agent calls it for tools that have no registered Activity."""


# -- the agent -----------------------------------------------------------------------------------


class Agent:
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
        max_retries: how many times an invalid answer is sent back with its errors.
        max_calls: the most calls one answer may hold; a longer ``calls`` is an invalid answer
            (fed back like any other), so a model cannot start 10^5 Activities in one step.
        end_on_output: end a run at the first step that sets ``output``. By default a step that
            sets ``output`` but also made explicit calls (whose results the model has not seen)
            goes on: its output is provisional, the model sees the results and answers again (the
            RFC allows calls and output together; an output written before the results came back
            is a guess). The run ends on an output given with no such call, or with only latent
            calls (their results are the model's own) or pending ones (delivered to a later run).
        meta_fields: ``"all"`` (default: the seeds' composition, ``_tool``, ``_activity``,
            ``_reasoningForCall`` and a latent tool's ``_output``) or ``"needed"`` (``_tool`` and a
            latent tool's ``_output`` only: fewer prompt tokens; answers are read and routed the
            same way).
        call_tag: the key each call names its tool under in what the model is sent (composed
            mode): ``"auto"`` by default — ``_tool`` (the seeds' wire format) when one tool is
            offered, ``function`` (the instructor baseline's tag) when several: on BFCL with
            SmolLM2, ``function`` stopped the model copying the first call's tool into the next
            on multi-function questions but lost on single-function ones, and ``auto`` chose the
            right functions more often than either (bench/README.md) —, or a fixed key such as
            ``"_tool"`` or ``"function"``. Only the request changes: the answer is read back as
            ``_tool``; the Calls, their dumps and exports stay the seeds'. Where an offered tool
            takes a parameter of that name, ``call_tag + "_name"`` is offered instead, else
            ``_tool``.
        tools_in_prompt: also list the offered tools in a system message (``name(params) —
            description``, each parameter's description; ``describe_tools``). For servers whose
            chat template does not show the tool schema to the model (llama.cpp with many GGUF
            templates, SmolLM2's among them: only the grammar built from the schema reaches the
            model, never a description); a provider that renders tools itself needs none.
        mode: how tools are offered: ``"composed"`` (default: the seeds' single ``Response``
            function, ``{calls, output}``), ``"native"`` (the provider's own tool calling: each
            tool its own function, parallel calls, the final text or a ``final_output``
            function; validated into the same Calls), or ``"auto"`` (native for a request that
            offers no latent tool). An ``instructor.Mode`` instead picks the instructor mode of
            the composed requests (default ``Mode.TOOLS``: works with servers that support named
            ``tool_choice`` but not the ``json_schema`` response format, e.g. llama.cpp).
        instructions: a system message put first in every conversation.
        timeout: seconds per LLM HTTP request (only when the Agent builds the client).
        http_retries: the OpenAI client's own retries of 5xx/connection errors (same condition).
        api_key: API key for a client built from a URL (default ``$OPENAI_API_KEY``); never
            recorded anywhere: it (and the key of a client passed in) is scrubbed from errors,
            the transcript and the log records of openai, instructor and httpx, also when a
            server echoes it back.
        activity_timeout: default seconds one Activity call may take.
        pending: the store of async pending calls (``PendingStore``); without one, an async tool
            call fails with a clear error.
        execution_activity: builds Activities for tools with a declarative ``execution`` config.
            Default: the gateway HTTP executor (``HttpExecution``) for every config with a
            ``url``/``webhookUrl`` (``space`` tools and configs without a URL stay async); a
            config error (e.g. an unset ``${env.NAME}``) becomes that tool's failed result.
        request_kwargs: extra arguments for each completion request (``temperature``, ...).
        executor: what runs the Activity of each explicit call (default ``InProcessExecutor``:
            in this process; ``toolbind.temporal.TemporalExecutor``: Temporal activities on workers).
        tool_selection: offer only the most relevant tools per request (large toolsets): a number
            k (BM25 over names, descriptions and parameter names: ``BM25Selector(k)``, needs
            ``toolbind[select]``) or any ``ToolSelector`` (``select(query, tools)``, sync or
            async: embeddings, an LLM router); None offers every tool.
        requires_approval: names of tools whose explicit calls wait for a human (besides those
            a spec marks ``x-requires-approval: true``): each is parked
            in the ``pending`` store (arguments ``{"_approval": <the call>}``) until a decision is
            submitted — ``store.submit(run_id, call_id, {"approved": True})`` or ``POST
            /runs/{run_id}/tool-results`` — then run (approved) or answered to the model as
            denied (``{"approved": False, "reason": ...}``, or an ``error``), at a later step.
        mcp_servers: MCP servers whose tools the Agent also offers (an MCP configuration: a file,
            ``{"mcp": {"servers": [...]}}`` or the list of servers): listed at the start of a
            run and again after a server announces a change; each call goes to its server
            (``toolbind.runtime.mcp``). Sessions are reused within a sync ``run`` and until
            ``aclose`` for async users.
        delegates: how calls of a tool that declares ``_delegate`` run (related/014): each is a
            new, isolated sub-request of this Agent (same client, the saved Request's tools,
            the run's ``deps``), given the parent context its ``_scopes`` allow (015) and its
            parameters as the input; its output is the call's result. A ``Delegates`` (saved
            Requests by name, ``resolution="upfront"``, depth and LLM-request/token limits) or
            a mapping name → saved Request (a path, a dict, a ``DelegateRequest``).
        input_guardrails, output_guardrails: functions that may reject a call before it runs
            (``fn(call)``) or its result before the model sees it (``fn(call, result)``): None
            or True lets it through, a string (the reason) or False rejects it, and the reason
            goes back to the model as the call's failed result. A list applies to every tool, a
            mapping tool name → function(s) to those tools (``"*"``: every tool).

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
        max_retries: int = 2,
        max_calls: int = DEFAULT_MAX_CALLS,
        end_on_output: bool = False,
        meta_fields: MetaFields = "all",
        call_tag: str = DEFAULT_CALL_TAG,
        tools_in_prompt: bool = False,
        mode: instructor.Mode | str | None = None,
        instructions: str | None = None,
        timeout: float = 60.0,
        http_retries: int = 2,
        api_key: str | None = None,
        activity_timeout: float = DEFAULT_ACTIVITY_TIMEOUT,
        pending: PendingSink | None = None,
        execution_activity: ExecutionFactory | None = None,
        request_kwargs: Mapping[str, Any] | None = None,
        executor: Executor | None = None,
        mcp_servers: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any] | None = None,
        tool_selection: int | ToolSelector | None = None,
        requires_approval: Collection[str] = (),
        delegates: Delegates | Mapping[str, Any] | None = None,
        input_guardrails: GuardrailSpec = None,
        output_guardrails: GuardrailSpec = None,
    ) -> None:
        self.last_step: Step | None = None
        """The Step of the latest ``request``/``arequest``: ``.llm_requests``, ``.usage``."""
        self.mode = mode if isinstance(mode, str) else "composed"
        if self.mode not in MODES:
            raise ValueError(f"Agent(mode={mode!r}): expected one of {', '.join(MODES)}")
        self._model: ModelCall = InstructorModel(
            client,
            mode=None if isinstance(mode, str) else mode,
            timeout=timeout,
            http_retries=http_retries,
            api_key=api_key,
        )
        self._redact = self._model.redact
        if max_retries < 0:
            raise ValueError("Agent(max_retries=...) must be >= 0")
        if max_calls < 1:
            raise ValueError("Agent(max_calls=...) must be >= 1")
        if meta_fields not in META_FIELD_CHOICES:
            raise ValueError(
                f"Agent(meta_fields={meta_fields!r}): expected one of {', '.join(META_FIELD_CHOICES)}"
            )
        self.meta_fields = meta_fields
        if (
            not isinstance(call_tag, str)  # pyright: ignore[reportUnnecessaryIsInstance]
            or not call_tag
            or (call_tag in META_FIELDS and call_tag != TOOL_TAG)
            or call_tag in ("calls", "output")
        ):
            raise ValueError(
                f"Agent(call_tag={call_tag!r}): expected a key name for the tool of each call, "
                f"such as 'function' or {TOOL_TAG!r}, or {AUTO_TAG!r} (not another meta field)"
            )
        self.call_tag = call_tag
        self.tools_in_prompt = tools_in_prompt
        self.model = model
        if tools is None:
            self.tools: ToolRegistry | list[ToolBinding] = Tool
        elif isinstance(tools, ToolRegistry):
            self.tools = tools
        elif isinstance(tools, ModuleType):
            registry = ToolRegistry()
            registry.register_package(tools)
            self.tools = registry
        else:
            self.tools = list(tools)
        if activities is None:
            self.activities = Activity
        elif isinstance(activities, ActivityRegistry):
            self.activities = activities
        else:
            self.activities = ActivityRegistry(activities)
        self.max_retries = max_retries
        self.max_calls = max_calls
        self.end_on_output = end_on_output
        self.instructions = instructions
        self.activity_timeout = activity_timeout
        self.pending = pending
        self.execution_activity: ExecutionFactory = execution_activity or self._http_execution
        self._http_executions: list[Any] = []  # HttpExecution objects the default factory made
        self.request_kwargs = dict(request_kwargs or {})
        self.tool_selection = as_selector(tool_selection)
        self.requires_approval = frozenset(requires_approval)
        self.delegation = Delegation.of(self, delegates)
        self.guardrails = Guardrails(input_guardrails, output_guardrails)
        self._compositions: dict[Any, Composition] = {}
        self._made_activities: dict[int, tuple[ToolBinding, RegisteredActivity | None]] = {}

        self.executor: Executor = executor or InProcessExecutor()
        self._mcp = _mcp_toolbox(mcp_servers)

    # -- composition and routing

    def _route(self, tool: ToolBinding) -> tuple[Route, RegisteredActivity | None]:
        if (delegated := self.delegation.activity(tool)) is not None:
            return "explicit", delegated  # the catch-all Delegate Activity (related/014)
        name = resolve_activity(tool, self.activities.names)
        if name and (found := self.activities.get(name)) is not None:
            return "explicit", found
        if self._mcp is not None and (via_mcp := self._mcp.activity(tool)) is not None:
            return "explicit", via_mcp
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
        if name or tool.execution_type in RUNS_ELSEWHERE:
            return "missing", None  # never latent: its result is not the model's to invent
        return "latent", None

    def _all_tools(self) -> list[ToolBinding]:
        """Every tool the Agent can offer: its own, then its MCP servers'."""
        found = [*self.tools, *(self._mcp.bindings if self._mcp is not None else ())]
        return [self.delegation.bind(t) for t in found]  # upfront-resolved delegates merged

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
        routed = {t.name: self._route(t)[0] for t in tools}
        stranded = [
            t.name
            for t in tools
            if routed[t.name] == "missing"
            and t.execution_type in RUNS_ELSEWHERE
            and not resolve_activity(t, self.activities.names)
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
        not_latent = frozenset(n for n, r in routed.items() if r != "latent")
        out_key: Any = (
            json.dumps(output, sort_keys=True, default=str)
            if isinstance(output, Mapping)
            else output
        )
        key = (
            tuple(id(t) for t in tools),
            not_latent,
            out_key,
            self.max_calls,
            tool_choice,
            self.meta_fields,
            tuple(instances),
            self.call_tag,
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
                max_calls=self.max_calls,
                tool_choice=tool_choice,
                meta_fields=self.meta_fields,
                instances=instances,
                tag=self.call_tag,
            )
            self._compositions[key] = found
        return found

    # -- the client

    def _http_execution(self, binding: ToolBinding) -> ActivityFn | None:
        """The default ``execution_activity``: the gateway's HTTP executor, run in a thread."""
        execution = binding.execution or {}
        if binding.execution_type == "space" or not (
            execution.get("url") or execution.get("webhookUrl")
        ):
            return None  # async: the result is submitted later
        from .errors import HttpConfigurationError
        from .http._gateway import HttpExecution

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

    async def aclose(self) -> None:
        """Close the HTTP clients the Agent made: the LLM client built from a URL (a no-op for
        clients passed in) and the connection pools of the default HTTP executors."""
        await self._model.aclose()
        for executor in self._http_executions:
            await asyncio.to_thread(executor.close)
        if self._mcp is not None:
            await self._mcp.aclose()

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
            raise RuntimeError(
                "Agent.run/request called inside an event loop: use arun/arequest instead"
            )

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
            self._all_tools(),
            messages,
            subset=subset,
            selector=self.tool_selection,
            tool_choice=tool_choice,
        )
        composition = self.composition(output, tool_choice, offered, instances)
        step.offered, step.composition = [t.name for t in composition.tools], composition
        if self.tools_in_prompt and composition.tools:
            messages = _with_tools_listed(
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
                max_retries=self.max_retries,
                request_kwargs=self.request_kwargs,
                agent_mode=self.mode,
                emit=emit,
            )
        return await self._model.ask(
            messages,
            composition.response,
            step,
            model=self.model,
            max_retries=self.max_retries,
            request_kwargs=self.request_kwargs,
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
        these (names or bindings) this time; ``Agent(tool_selection=...)`` narrows them further.

        Raises:
            ResponseValidationError: the answers stayed invalid after ``max_retries`` retries.
            LLMError: the request failed (HTTP error, timeout).
            ValueError: ``tool_choice`` names no tool offered.
        """
        step = Step(index=0)
        self.last_step = step  # its requests, raw responses and usage, also when this raises
        if self._mcp is not None:
            await self._mcp.refresh()
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
                an ``_instance`` (related/005-013). A ``Context`` given is updated in place;
                ``RunResult.context`` is the context after the run.
            deps: the run's dependencies (a database handle, a user id), given to each Activity
                that takes a second argument, as ``ActivityContext.deps``.

        Raises:
            ResponseValidationError, LLMError: as for ``arequest``; tool failures never raise.
        """
        result: RunResult | None = None
        if max_steps < 1:
            raise ValueError("arun(max_steps=...) must be >= 1")
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
        ``tool-input-delta`` (``data["delta"]``: the whole arguments) and its result.
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
            else [_message(m, i) for i, m in enumerate(messages)]
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
        rid = run_id or uuid.uuid4().hex
        subset = None if tools is None else list(tools)
        prefix = self._call_prefix()
        convo = self._conversation(messages)
        state = RunContext(Context.of(context) if context is not None else None, deps)
        instances = state.instances
        if (shown_context := state.render()) is not None:
            convo.append({"role": "user", "content": shown_context})
        steps: list[Step] = []
        outstanding: dict[str, CallRecord] = {}
        final: Any = None
        finished = False
        for index in range(max_steps):
            step = Step(index=index)
            steps.append(step)
            if index:
                await self._before_step(outstanding)
            if self._mcp is not None:  # tools/list at start and after list_changed
                await self._mcp.refresh()
            shown = self.composition(output).shown if self.pending is not None else {}
            for event in await self._deliver_pending(rid, step, convo, outstanding, shown, state):
                yield event
            queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
            started: set[str] = set()  # calls whose start the stream told
            emit = _streamed(rid, index, f"{prefix}-{index}", queue, started, self._binding)
            asking = asyncio.create_task(
                self._ask(
                    convo,
                    output,
                    step,
                    tool_choice if index == 0 else "auto",
                    subset,
                    emit if stream else None,
                    instances,
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
            put = _unless_started(queue, started)  # the stream told these calls' start
            task = asyncio.create_task(self._execute(rid, index, prefix, response, put, state))
            async for event in drain(queue, task):  # the consumer stops: the calls stop too
                yield event
            step.calls = task.result()
            for record in step.calls:
                if record.pending:
                    outstanding[record.call_id] = record
            asked = step.composition or self.composition(
                output, tool_choice if index == 0 else "auto", instances=instances
            )
            if step.mode == "native":
                from ._native import feed_back

                results = [
                    {"call_id": r.call_id, "tool": asked.shown.get(r.tool, r.tool)}
                    | r.result.model_dump(mode="json")
                    for r in step.calls
                ]
                feed_back(convo, step.raw_responses[-1], asked, results, _for_the_model)
            else:
                _feed_back(convo, response, step, asked)
            if (update := state.updates()) is not None:
                convo.append({"role": "user", "content": update})
            if response.output is not None:
                final = response.output  # provisional while results the model hasn't seen exist
                unseen = [r for r in step.calls if r.route in ("explicit", "missing")]
                if self.end_on_output or not unseen:
                    finished = True
                    break
        result = RunResult(
            run_id=rid,
            output=final,
            finished=finished,
            steps=steps,
            messages=convo,
            pending=sorted(outstanding),
            context=state.context,
        )
        yield AgentEvent(type="run.complete", run_id=rid, step=len(steps) - 1, result=result)

    def _call_prefix(self) -> str:
        """The prefix of this invocation's call ids: they must not repeat when a run is resumed
        (same run_id, steps counted from 0 again)."""
        return f"call-{uuid.uuid4().hex[:8]}"

    async def _before_step(self, outstanding: Mapping[str, CallRecord]) -> None:
        """A hook before each step after the first (the durable loop waits here for pending
        results); ``outstanding``: the pending calls not delivered yet."""

    async def _deliver_pending(
        self,
        run_id: str,
        step: Step,
        convo: list[dict[str, Any]],
        outstanding: dict[str, CallRecord],
        shown: Mapping[str, str],
        state: RunContext | None = None,
    ) -> list[AgentEvent]:
        if self.pending is None:
            return []
        events: list[AgentEvent] = []
        for item in self.pending.collect(run_id):
            ok = item.status in ("resolved", "delivered") and item.error is None
            envelope: ToolResult[Any] = (
                _Result.ok(item.result, execution="async")
                if ok
                else _Result.fail(
                    item.error or f"the call {item.status} before a result arrived",
                    execution="async",
                )
            )
            parked: Any = item.arguments.get(APPROVAL)
            if isinstance(parked, dict):  # a call that waited for approval: decided now
                envelope = await self._decide(run_id, item, cast("dict[str, Any]", parked), state)
                ok = envelope.success
            known = outstanding.pop(item.call_id, None)
            binding = self._binding(item.tool)
            visible = known.visible if known else _visible(binding) if binding else True
            record = CallRecord(
                call_id=item.call_id,
                tool=item.tool,
                route="async",
                arguments=dict(item.arguments),
                result=envelope,
                visible=visible,
            )
            step.delivered.append(record)
            convo.append(
                {
                    "role": "user",
                    "content": _for_the_model(
                        {
                            "event": "tool_result",
                            "call_id": item.call_id,
                            "tool": shown.get(item.tool, item.tool),
                            "result": envelope.model_dump(mode="json"),
                        }
                    ),
                }
            )
            events.append(
                AgentEvent(
                    type="tool-call.complete" if ok else "tool-call.error",
                    run_id=run_id,
                    step=step.index,
                    call_id=item.call_id,
                    tool=item.tool,
                    data=envelope.model_dump(mode="json"),
                    visible=visible,
                )
            )
        return events

    async def _decide(
        self, run_id: str, item: PendingCall, parked: dict[str, Any], state: RunContext | None
    ) -> ToolResult[Any]:
        """The result of a call parked for approval: run it when approved, else the denial."""
        decision: Any = item.result
        approved = (
            item.error is None
            and item.status in ("resolved", "delivered")
            and isinstance(decision, dict)
            and cast("dict[str, Any]", decision).get("approved") is True
        )
        if not approved:
            reason: Any = (
                cast("dict[str, Any]", decision).get("reason")
                if isinstance(decision, dict)
                else None
            )
            why = item.error or (reason if isinstance(reason, str) else None)
            if item.status not in ("resolved", "delivered"):
                why = f"no decision before the call {item.status}"
            return _Result.fail(
                f"a human denied this call{': ' + why if why else ''}", execution="approval"
            )
        binding = self._binding(item.tool)
        if binding is None:
            return _Result.fail(f"tool {item.tool!r} is no longer offered", execution="approval")
        try:
            call = binding.call_model.model_validate(parked)
        except ValidationError as exc:
            return _Result.fail(f"the approved call no longer validates: {exc}")
        step_key, _, index = item.call_id.rpartition("-")  # call-<invocation>-<step>-<index>
        step = int(step_key.rpartition("-")[2])
        routed = self._route_call(run_id, step, int(index), item.call_id, call)
        record = await self._execute_one(routed, lambda _: None, state, approved=True)
        return record.result

    def _binding(self, name: str) -> ToolBinding | None:
        found = (
            self.tools.get(name)
            if isinstance(self.tools, ToolRegistry)
            else next((t for t in self.tools if t.name == name), None)
        )
        if found is None and self._mcp is not None:
            found = next((t for t in self._mcp.bindings if t.name == name), None)
        return self.delegation.bind(found) if found is not None else None

    # -- execution

    def _route_calls(
        self,
        run_id: str,
        step: int,
        prefix: str,
        response: ToolResponse[Any, Any],
    ) -> list[RoutedCall]:
        """Each Call of the answer routed once into its record (``call_id``: ``prefix-step-i``);
        its references resolve when it runs (after the calls whose outputs it may read)."""
        return [
            self._route_call(run_id, step, index, f"{prefix}-{step}-{index}", call)
            for index, call in enumerate(response.calls)
        ]

    def _route_call(
        self,
        run_id: str,
        step: int,
        index: int,
        call_id: str,
        call: Any,
    ) -> RoutedCall:
        """One Call routed: its Activity, whether it waits for approval."""
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
            visible=_visible(binding) if binding else True,
            timeout=(activity.timeout if activity else None) or self.activity_timeout,
            approval=tool in self.requires_approval or bool(binding and binding.requires_approval),
        )

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
        approved: bool = False,
    ) -> CallRecord:
        if state is not None:  # its references resolved now (or the reason it cannot run)
            routed = _prepared(routed, state)
        rejected = (  # an input guardrail's verdict, before the call runs or is parked
            await self.guardrails.check_input(routed.tool, routed.call)
            if routed.refused is None
            else None
        )
        record = CallRecord(
            call_id=routed.call_id,
            tool=routed.tool,
            route=routed.route,
            arguments=routed.arguments,
            result=_Result.ok(None),
            visible=routed.visible,
        )

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

        def progress(item: Any) -> None:
            plain = to_jsonable_python(item, by_alias=True)
            record.progress.append(plain)
            event("tool-result", {"preliminary": True, "output": plain})

        event("tool-call.start", {"reasoning": routed.dumped.get("_reasoningForCall")})
        event("tool-input-delta", {"delta": json.dumps(routed.arguments)})
        value: ToolResult[Any] | Pending
        parks = routed.route == "explicit" and routed.approval and not approved
        if rejected is not None:
            value = rejected
        elif routed.refused is not None:
            value = _Result.fail(routed.refused)
        elif routed.route == "latent":
            if "_output" in routed.dumped:
                value = _Result.ok(routed.dumped["_output"], execution="latent")
            else:  # optional in the composed schema: the model gave none
                value = _Result.ok(None, execution="latent", output="absent")
        elif routed.route == "missing":
            binding = routed.binding
            name = (binding.activity if binding else None) or routed.tool
            value = _Result.fail(
                f"no Activity named {name!r} is registered for tool {routed.tool!r}"
            )
        elif routed.route == "async" or routed.activity is None:
            value = Pending()
        elif parks:
            value = Pending(
                message="The call waits for a human's approval; its result comes later."
            )
        else:
            if state is not None and takes_context(routed.activity.fn):
                given = state.for_call(
                    run_id=routed.run_id,
                    step=routed.step,
                    call_id=routed.call_id,
                    tool=routed.tool,
                    instance=routed.dumped.get("_instance"),
                    reporter=progress,
                    scopes=call_scopes(routed.dumped, routed.binding),
                )
                routed = replace(routed, activity_context=given)
            value = await self.executor.execute(routed, progress)
        if isinstance(value, Pending):
            parked = {APPROVAL: routed.dumped} if parks else routed.arguments
            record.result = self._make_pending(
                routed.run_id, routed.call_id, routed.tool, parked, value
            )
            record.pending = record.result.success
        else:
            record.result = await self.guardrails.check_output(routed.tool, routed.call, value)
            if state is not None and record.result is value:  # not what a guardrail withheld
                # the output appended at its _outputPath (008)
                record.result = state.record(routed.call, routed.binding, record.result)
        kind: EventType = (
            "tool-call.pending"
            if record.pending
            else "tool-call.complete"
            if record.result.success
            else "tool-call.error"
        )
        event(kind, record.result.model_dump(mode="json"))
        return record

    def _make_pending(
        self,
        run_id: str,
        call_id: str,
        tool: str,
        arguments: dict[str, Any],
        marker: Pending,
    ) -> ToolResult[Any]:
        if self.pending is None:
            return _Result.fail(
                f"tool {tool!r} answers asynchronously but the Agent has no pending store "
                "(Agent(pending=PendingStore(...)))",
                execution="async",
            )
        try:
            self.pending.add(
                run_id=run_id, call_id=call_id, tool=tool, arguments=arguments, ttl=marker.ttl
            )
        except Exception as exc:
            return _Result.fail(f"could not record the pending call: {exc}", execution="async")
        return _Result.ok(
            {"status": "pending", "pendingToolCallId": call_id, "message": marker.message},
            execution="async",
        )


# -- helpers -------------------------------------------------------------------------------------


def _prepared(routed: RoutedCall, state: RunContext) -> RoutedCall:
    """``routed`` with its variable references resolved in the run's context (related/007), or
    ``refused`` saying why it cannot run."""
    call, refused = state.prepare(routed.call, routed.binding)
    if refused is not None:
        return replace(routed, refused=refused)
    if call is routed.call:
        return routed
    dumped: dict[str, Any] = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
    arguments = {k: v for k, v in dumped.items() if k not in META_FIELDS}
    return replace(routed, call=call, dumped=dumped, arguments=arguments)


def _mcp_toolbox(servers: Any) -> Any:
    if servers is None:
        return None
    from ._mcp_client import McpToolbox

    return McpToolbox(servers)


def _streamed(
    run_id: str,
    step: int,
    step_key: str,
    queue: asyncio.Queue[AgentEvent],
    started: set[str],
    binding: Callable[[str], ToolBinding | None],
) -> Emit:
    """The ``emit`` of a streamed step: its deltas as events, with the call ids the validated
    calls will have (``step_key-index``)."""

    def emit(kind: str, index: int | None, tool: str | None, data: Any) -> None:
        call_id = None if index is None else f"{step_key}-{index}"
        if kind == "tool-call.start" and call_id is not None:
            started.add(call_id)
        found = binding(tool) if tool else None
        queue.put_nowait(
            AgentEvent(
                type=cast("EventType", kind),
                run_id=run_id,
                step=step,
                call_id=call_id,
                tool=tool,
                data=data,
                visible=_visible(found) if found else True,
            )
        )

    return emit


def _unless_started(
    queue: asyncio.Queue[AgentEvent], started: set[str]
) -> Callable[[AgentEvent], None]:
    def put(event: AgentEvent) -> None:
        if event.type != "tool-call.start" or event.call_id not in started:
            queue.put_nowait(event)

    return put


def _visible(binding: ToolBinding) -> bool:
    if binding.execution_type == "internal":  # gateway-v3: internal results are never shown
        return False
    return binding.visible if binding.visible is not None else True


def _feed_back(
    convo: list[dict[str, Any]],
    response: ToolResponse[Any, Any],
    step: Step,
    asked: Composition,
) -> None:
    """Append the step's answer and its results (one tool message) to the conversation.

    The model reads its own answer as it was asked for it: each tool under the name it was
    offered (``asked.shown``: never ``name@record``), under the key it was offered
    (``asked.tag``)."""
    call_id = f"step-{step.index}"
    function, shown = asked.response.__name__, asked.shown
    arguments = response.model_dump_json(by_alias=True, exclude_unset=True)
    if shown or asked.tag != TOOL_TAG:
        answer = response.model_dump(mode="json", by_alias=True, exclude_unset=True)
        answer["calls"] = [_as_offered(c, shown, asked.tag) for c in answer.get("calls", [])]
        arguments = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    if step.raw_responses:
        try:
            tool_calls = step.raw_responses[-1]["choices"][0]["message"]["tool_calls"]
            call_id = tool_calls[0]["id"] or call_id
        except (KeyError, IndexError, TypeError):
            pass
    convo.append(
        {
            "role": "assistant",
            # the answer as text too: chat templates that ignore tool_calls (SmolLM2's, among
            # others) show the model its own answer; and an empty content would not do — instructor
            # turns a falsy content into [], which llama.cpp's server refuses for an assistant
            "content": arguments,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": function,
                        "arguments": arguments,
                    },
                }
            ],
        }
    )
    if step.calls:
        content: Any = {
            "results": [
                {
                    "call_id": r.call_id,
                    "tool": shown.get(r.tool, r.tool),
                    **r.result.model_dump(mode="json"),
                }
                for r in step.calls
            ]
        }
    elif response.output is None:
        content = {"results": [], "note": "No calls and no output: call tools or give the output."}
    else:
        content = {"results": []}
    convo.append({"role": "tool", "tool_call_id": call_id, "content": _for_the_model(content)})


TOOLS_HEADER = "Tools you can call (each call names its tool in `{tag}`):\n"


def _with_tools_listed(
    messages: list[dict[str, Any]], listing: str, tag: str = TOOL_TAG
) -> list[dict[str, Any]]:
    """``messages`` for one request, the tool listing added to the system message (a new one
    first when there is none); the conversation itself is left as it is."""
    text = TOOLS_HEADER.format(tag=tag) + listing
    if (
        messages
        and messages[0].get("role") == "system"
        and isinstance(messages[0].get("content"), str)
    ):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{text}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def _as_offered(call: Any, shown: Mapping[str, str], tag: str = TOOL_TAG) -> Any:
    """A dumped call with ``_tool`` (and a same-name ``_activity``) as the model was offered them:
    the names ``shown``, the tool's under ``tag``."""
    if not isinstance(call, dict):
        return call
    out = dict(cast("dict[str, Any]", call))
    for meta in ("_tool", "_activity"):
        value = out.get(meta)
        if isinstance(value, str) and value in shown:
            out[meta] = shown[value]
    if tag != TOOL_TAG and TOOL_TAG in out:
        out = {tag: out[TOOL_TAG], **{k: v for k, v in out.items() if k != TOOL_TAG}}
    return out


def _for_the_model(content: Any) -> str:
    """A tool message's text: every configured secret (credentials, ``headers=``, ``${env.X}``
    values, OAuth tokens) scrubbed — results keep the API's own data, the model never sees one."""
    from ._secrets import scrub_everywhere

    return scrub_everywhere(json.dumps(content))


def _run_sync(coro: Awaitable[T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(cast("Any", coro))
    cast("Any", coro).close()
    raise RuntimeError("Agent.run/request called inside an event loop: use arun/arequest instead")


def _message(item: Any, index: int) -> dict[str, Any]:
    """One chat message; the RFC's context items are read too: ``{type: 'text', text}`` is a user
    message. A malformed item is the caller's mistake, said before anything is sent."""
    if not isinstance(item, Mapping):
        raise UsageError(
            f"messages[{index}] is a {type(item).__name__}: expected a chat message "
            "{role, content} or an RFC context item {type: 'text', text}"
        )
    message = dict(cast("Mapping[str, Any]", item))
    if "role" in message:
        return message
    kind = message.get("type")
    if kind == "text" and isinstance(message.get("text"), str):
        return {"role": "user", "content": message["text"]}
    if kind == "tool":
        names = ", ".join(map(str, cast("dict[str, Any]", message.get("tool") or {})))
        raise UsageError(
            f"messages[{index}] is an RFC {{type: 'tool'}} context item ({names or 'no tool'}): "
            "tools are offered from the Agent's registry — Tool.register(name, schema) or "
            "Agent(tools=...) — not from the messages"
        )
    raise UsageError(
        f"messages[{index}] has no role: expected a chat message {{role, content}} or an RFC "
        "context item {type: 'text', text}"
    )
