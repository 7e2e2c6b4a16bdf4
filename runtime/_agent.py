"""Runtime layer: ``Agent`` — the instructor request loop, execution routing, events, pending tools.

Imports ``_registry``, ``_response``, ``_compose``, ``_result``, ``contract``, ``errors``, pydantic;
``instructor`` and ``openai`` are imported when an Agent is built (so ``import toolbind.runtime``
stays light), and ``http._gateway`` (the HTTP executor) when a tool with an HTTP ``execution``
config is first routed.

One step: compose the registered tools (and the output) into the seeds' ``{output, calls}``
schema, ask the LLM through instructor (TOOLS mode by default: the Response schema is one function
the model is made to call), validate the answer against the Response model — an invalid answer
goes back to the model with the validation errors (tool, field, keyword) for ``max_retries``
retries, then ``ResponseValidationError`` carries the last raw response — then route each Call:

* explicit (an Activity resolved by ``_activity`` > same-name > none): run the Activity (sync,
  async or async generator; per-call timeout; calls run concurrently unless an Activity opts out);
  an exception or timeout becomes a failed ``ToolResult``, never a crash of the loop;
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
import copy
import inspect
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
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ._binding import ToolBinding
from ._compose import META_FIELD_CHOICES, MetaFields, describe_tools, resolve_activity
from ._context import Context, ContextMessage
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
from ._state import RunContext, takes_context
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
_Result = ToolResult[Any]  # subscripted once: pydantic's generic lookup is not free
DEFAULT_ACTIVITY_TIMEOUT = 30.0
DEFAULT_MAX_CALLS = 100

Route = Literal["explicit", "latent", "async", "missing"]

APPROVAL = "_approval"
"""The key of a pending call's arguments that holds a call parked for approval."""

RUNS_ELSEWHERE = frozenset({"gateway", "internal"})
"""Execution types whose tools run somewhere (an MCP server, the gateway): never latent."""
EventType = Literal[
    "tool-call.start",
    "tool-input-delta",
    "tool-result",
    "tool-call.pending",
    "tool-call.complete",
    "tool-call.error",
    "run.complete",
]


# -- async pending tools -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pending:
    """What an Activity returns to say "the result comes later" (gateway-v3 async tools).

    Attributes:
        ttl: seconds the call may stay pending (None: the store's default).
        message: what the model is told meanwhile.
    """

    ttl: float | None = None
    message: str = "The result will arrive later as a tool_result event; continue meanwhile."


class PendingCall(Protocol):
    """A pending tool call as the store reports it (``runtime._pending.PendingToolCall``)."""

    @property
    def run_id(self) -> str: ...
    @property
    def call_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def arguments(self) -> Mapping[str, Any]: ...
    @property
    def status(self) -> str: ...
    @property
    def result(self) -> Any: ...
    @property
    def error(self) -> str | None: ...


class PendingSink(Protocol):
    """The pending store the Agent needs (``runtime._pending.PendingStore`` satisfies it)."""

    def add(
        self,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        ttl: float | None = None,
    ) -> Any: ...

    def collect(self, run_id: str) -> Sequence[PendingCall]: ...


ContextLike = Context | Iterable[ContextMessage | Mapping[str, Any]] | None
"""What ``run(..., context=...)`` takes: a ``Context`` or RFC context items (data/state/input)."""

ExecutionFactory = Callable[[ToolBinding], ActivityFn | None]
"""Makes the Activity of a tool with a declarative ``execution`` config (e.g. gateway HTTP), or
None when it cannot; the Agent calls it for tools that have no registered Activity."""


# -- events and transcript -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEvent:
    """One event of a run (gateway-v3 names).

    ``tool-call.start`` → ``tool-input-delta`` (the call's arguments, whole) → ``tool-result``
    (a progress yield of an async-generator Activity; zero or more) → ``tool-call.complete`` or
    ``tool-call.error`` (or ``tool-call.pending``, then complete/error when the result arrives).
    The last event of ``astream`` is ``run.complete`` with the ``RunResult``.
    """

    type: EventType
    run_id: str
    step: int
    call_id: str | None = None
    tool: str | None = None
    data: Any = None
    visible: bool = True
    result: RunResult | None = None


@dataclass(slots=True, kw_only=True)
class CallRecord:
    """One call of a step and what became of it.

    Attributes:
        call_id: unique within the run, also across resumed invocations
            (``call-<invocation>-<step>-<index>``).
        route: ``explicit``, ``latent``, ``async`` or ``missing`` (``_activity`` names no Activity).
        result: the envelope; for a pending call, ``data`` is ``{"status": "pending"}`` until the
            delivered result is recorded in a later step's ``delivered``.
        progress: what an async-generator Activity yielded along the way.
    """

    call_id: str
    tool: str
    route: Route
    arguments: dict[str, Any]
    result: ToolResult[Any]
    visible: bool
    pending: bool = False
    progress: list[Any] = field(default_factory=list[Any])


@dataclass(slots=True, kw_only=True)
class Step:
    """One LLM step: every request attempt, raw response, the validated response, the calls."""

    index: int
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    raw_responses: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    response: ToolResponse[Any, Any] | None = None
    calls: list[CallRecord] = field(default_factory=list[CallRecord])
    delivered: list[CallRecord] = field(default_factory=list[CallRecord])

    @property
    def llm_requests(self) -> int:
        """How many requests this step sent the model (1, plus one per retry)."""
        return len(self.requests)

    @property
    def usage(self) -> dict[str, int]:
        """Token usage of this step's responses, as the server reported it (``prompt_tokens``,
        ``completion_tokens``, ``total_tokens``; summed over retries; 0 where not reported)."""
        return _usage(self.raw_responses)


def _usage(responses: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    total: dict[str, int] = dict.fromkeys(("prompt_tokens", "completion_tokens", "total_tokens"), 0)
    for response in responses:
        reported: Any = response.get("usage")
        if isinstance(reported, dict):
            for key in total:
                value: Any = cast("dict[str, Any]", reported).get(key)
                if isinstance(value, int):
                    total[key] += value
    return total


@dataclass(slots=True, kw_only=True)
class RunResult:
    """The outcome of ``run``: the final output (None when ``max_steps`` ran out) and transcript."""

    run_id: str
    output: Any
    finished: bool
    steps: list[Step]
    messages: list[dict[str, Any]]
    pending: list[str]
    context: Context | None = None
    """The run's context (``run(..., context=...)``) with the outputs the calls wrote, or None."""

    @property
    def llm_requests(self) -> int:
        """How many requests the run sent the model, retries included."""
        return sum(step.llm_requests for step in self.steps)

    @property
    def usage(self) -> dict[str, int]:
        """The run's token usage (every step's, retries included)."""
        return _usage(r for step in self.steps for r in step.raw_responses)


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
        tools_in_prompt: also list the offered tools in a system message (``name(params) —
            description``, each parameter's description; ``describe_tools``). For servers whose
            chat template does not show the tool schema to the model (llama.cpp with many GGUF
            templates, SmolLM2's among them: only the grammar built from the schema reaches the
            model, never a description); a provider that renders tools itself needs none.
        mode: the instructor mode (default ``Mode.TOOLS``: works with servers that support named
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
        requires_approval: names of tools whose explicit calls wait for a human (besides those
            a spec marks ``x-requires-approval: true``): each is parked
            in the ``pending`` store (arguments ``{"_approval": <the call>}``) until a decision is
            submitted — ``store.submit(run_id, call_id, {"approved": True})`` or ``POST
            /runs/{run_id}/tool-results`` — then run (approved) or answered to the model as
            denied (``{"approved": False, "reason": ...}``, or an ``error``), at a later step.

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
        tools_in_prompt: bool = False,
        mode: instructor.Mode | None = None,
        instructions: str | None = None,
        timeout: float = 60.0,
        http_retries: int = 2,
        api_key: str | None = None,
        activity_timeout: float = DEFAULT_ACTIVITY_TIMEOUT,
        pending: PendingSink | None = None,
        execution_activity: ExecutionFactory | None = None,
        request_kwargs: Mapping[str, Any] | None = None,
        requires_approval: Collection[str] = (),
    ) -> None:
        import instructor as _instructor
        import openai

        from ._secrets import Redactor

        self.last_step: Step | None = None
        """The Step of the latest ``request``/``arequest``: ``.llm_requests``, ``.usage``."""
        chosen = mode if mode is not None else _instructor.Mode.TOOLS
        self._mode = chosen
        raw: Any = client
        # a client the Agent builds from a URL is its own: made in the event loop that uses it
        # (httpx connections belong to one loop) and closed by ``aclose`` / after each sync call
        self._owned: dict[str, Any] | None = None
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._async = True
        self._redact = Redactor()
        if isinstance(raw, str):
            key = api_key or os.environ.get("OPENAI_API_KEY")
            self._owned = {
                "base_url": raw,
                "api_key": key or "not-needed",
                "timeout": timeout,
                "max_retries": http_retries,
            }
            if key:
                self._redact.add(key)
        elif isinstance(raw, _instructor.AsyncInstructor):
            self._client = raw
        elif isinstance(raw, _instructor.Instructor):
            self._client, self._async = raw, False
        elif isinstance(raw, openai.AsyncOpenAI):
            self._client = _instructor.from_openai(raw, mode=chosen)
        elif isinstance(raw, openai.OpenAI):
            self._client, self._async = _instructor.from_openai(raw, mode=chosen), False
        else:
            raise TypeError(
                "Agent(client=...): expected a base URL, an openai client or an instructor "
                f"client, found {type(raw).__name__}"
            )
        given_key = getattr(getattr(raw, "client", raw), "api_key", None)  # a client passed in
        if isinstance(given_key, str):
            self._redact.add(given_key)
        if max_retries < 0:
            raise ValueError("Agent(max_retries=...) must be >= 0")
        if max_calls < 1:
            raise ValueError("Agent(max_calls=...) must be >= 1")
        if meta_fields not in META_FIELD_CHOICES:
            raise ValueError(
                f"Agent(meta_fields={meta_fields!r}): expected one of {', '.join(META_FIELD_CHOICES)}"
            )
        self.meta_fields = meta_fields
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
        self.requires_approval = frozenset(requires_approval)
        self._compositions: dict[Any, Composition] = {}
        self._executors: dict[int, tuple[ToolBinding, RegisteredActivity | None]] = {}

    # -- composition and routing

    def _route(self, tool: ToolBinding) -> tuple[Route, RegisteredActivity | None]:
        name = resolve_activity(tool, self.activities.names)
        if name and (found := self.activities.get(name)) is not None:
            return "explicit", found
        if tool.execution:
            made = self._executors.get(id(tool))
            if made is None or made[0] is not tool:  # built once per tool (and kept with it)
                fn = self.execution_activity(tool)
                raw_timeout = tool.execution.get("timeout")
                seconds = raw_timeout / 1000 if isinstance(raw_timeout, int | float) else None
                made = (tool, RegisteredActivity(fn, seconds) if fn is not None else None)
                self._executors[id(tool)] = made
            if made[1] is not None:
                return "explicit", made[1]
        execution = tool.execution or {}
        has_url = bool(execution.get("url") or execution.get("webhookUrl"))
        if tool.execution_type == "space" or (tool.execution_type == "external" and not has_url):
            return "async", None
        if name or tool.execution_type in RUNS_ELSEWHERE:
            return "missing", None  # never latent: its result is not the model's to invent
        return "latent", None

    def composition(
        self, output: OutputSpec = None, tool_choice: str = "auto", instances: Sequence[str] = ()
    ) -> Composition:
        """The composed schema (and ``.response`` type) the next request will use
        (``instances``: a multi-instance context's ids, offered as ``_instance``)."""
        tools = list(self.tools)
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
            )
            self._compositions[key] = found
        return found

    # -- the client

    def _instructor(self) -> Any:
        if self._owned is None:
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            import instructor as _instructor
            import openai

            raw = openai.AsyncOpenAI(**self._owned)
            self._client, self._client_loop = _instructor.from_openai(raw, mode=self._mode), loop
        return self._client

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
        if self._owned is not None and self._client is not None:
            client, self._client, self._client_loop = self._client, None, None
            await client.client.close()
        for executor in self._http_executions:
            await asyncio.to_thread(executor.close)

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
        instances: Sequence[str] = (),
    ) -> ToolResponse[Any, Any]:
        from instructor.core.exceptions import (
            IncompleteOutputException,
            InstructorError,
            InstructorRetryException,
        )
        from instructor.core.hooks import HookName, Hooks

        composition = self.composition(output, tool_choice, instances)
        response_model = composition.response
        if self.tools_in_prompt and composition.tools:
            messages = _with_tools_listed(messages, describe_tools(composition.tools))
        hooks = Hooks()

        answered = [False]  # whether the latest request got a completion back

        def on_kwargs(*args: Any, **kwargs: Any) -> None:
            answered[0] = False
            # what went to the model (never the client's credentials: they are not kwargs)
            step.requests.append(
                {
                    k: copy.deepcopy(kwargs[k])
                    for k in ("model", "messages", "tool_choice")
                    if k in kwargs
                }
            )

        def on_response(response: Any) -> None:
            answered[0] = True
            step.raw_responses.append(_scrub(_dump(response), self._redact))

        hooks.on(HookName.COMPLETION_KWARGS, on_kwargs)
        hooks.on(HookName.COMPLETION_RESPONSE, on_response)
        create: Callable[..., Any] = self._instructor().create
        self._redact.scrub_logs()  # the loggers instructor made when wrapping the client
        kwargs: dict[str, Any] = {
            "messages": messages,
            "response_model": response_model,
            "max_retries": self.max_retries,
            # None, not False: a validate-time strict=False would override the models' field-level
            # Strict() and coerce "1" or true to an integer; the models are as strict as their schemas
            "strict": None,
            "hooks": hooks,
            "model": self.model,
            **self.request_kwargs,
        }
        redact = self._redact
        failure: AgentError
        try:
            if self._async:
                result = await cast("Awaitable[Any]", create(**kwargs))
            else:
                result = await asyncio.to_thread(create, **kwargs)
            return cast("ToolResponse[Any, Any]", result)
        except InstructorRetryException as exc:
            failed = list(exc.failed_attempts or [])
            cause = exc.__cause__ or exc
            # did the last request get a completion? If not, the request itself failed (HTTP
            # error, timeout, a body that is no completion), maybe after invalid answers
            if not answered[0] or not failed:
                after = f" (after {len(failed)} invalid answer(s))" if failed else ""
                failure = LLMError(
                    redact(f"the LLM request failed{after}: {type(cause).__name__}: {cause}")
                )
            else:
                last = failed[-1]
                errors = redact(str(last.exception))
                failure = ResponseValidationError(
                    f"the model's answer was still invalid after {len(failed)} attempt(s) "
                    f"(max_retries={self.max_retries}); last errors:\n{errors}",
                    errors=errors,
                    attempts=len(failed),
                    last_response=(
                        _scrub(_dump(last.completion), redact)
                        if last.completion is not None
                        else None
                    ),
                )
        except IncompleteOutputException as exc:
            # the completion was cut off (finish_reason "length"): an answer, but not a whole one
            last_completion: Any = exc.last_completion
            errors = (
                "the answer was cut off (finish_reason 'length': the max_tokens limit was "
                "reached before the arguments were complete)"
            )
            failure = ResponseValidationError(
                f"the model's answer was incomplete; {errors}",
                errors=errors,
                attempts=max(1, len(step.requests)),
                last_response=(
                    _scrub(_dump(last_completion), redact) if last_completion is not None else None
                ),
            )
        except InstructorError as exc:
            failure = LLMError(redact(f"the LLM request failed: {type(exc).__name__}: {exc}"))
        # raised outside the except blocks: no __context__ keeps the client's exception (whose
        # text may hold what a server echoed, the API key included)
        raise failure

    async def arequest(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        tool_choice: str = "auto",
    ) -> ToolResponse[Any, Any]:
        """One LLM step: the validated Response (``.calls`` typed per tool, ``.output``);
        ``agent.last_step`` keeps the step's requests and token usage (``.llm_requests``, ``.usage``).

        ``tool_choice``: ``auto`` (calls and/or output), ``required`` (at least one call and no
        output), ``none`` (the output, no call) or a tool's name (only that tool, called at least
        once). The composed schema says so and the answer is held to it.

        Raises:
            ResponseValidationError: the answers stayed invalid after ``max_retries`` retries.
            LLMError: the request failed (HTTP error, timeout).
            ValueError: ``tool_choice`` names no tool offered.
        """
        step = Step(index=0)
        self.last_step = step  # its requests, raw responses and usage, also when this raises
        return await self._ask(self._conversation(messages), output, step, tool_choice)

    def request(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        tool_choice: str = "auto",
    ) -> ToolResponse[Any, Any]:
        """``arequest`` for synchronous code (not from inside a running event loop)."""
        return self._sync(self.arequest(messages, output, tool_choice=tool_choice))

    # -- the loop

    async def arun(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        output: OutputSpec = None,
        *,
        max_steps: int = 8,
        run_id: str | None = None,
        tool_choice: str = "auto",
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
        events = self._events(messages, output, max_steps, run_id, tool_choice, context, deps)
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
        context: ContextLike = None,
        deps: Any = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the loop, yielding the user-facing events as they happen (``tool_choice``,
        ``context`` and ``deps`` as for ``arun``).

        Only calls of visible tools (``visible`` flag; default: every execution type but
        ``internal``) appear; the last event is ``run.complete`` with ``.result``.
        """
        events = self._events(messages, output, max_steps, run_id, tool_choice, context, deps)
        async for event in events:
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
        context: ContextLike = None,
        deps: Any = None,
    ) -> AsyncIterator[AgentEvent]:
        rid = run_id or uuid.uuid4().hex
        # call ids must not repeat when a run is resumed (same run_id, steps counted from 0 again)
        prefix = f"call-{uuid.uuid4().hex[:8]}"
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
            shown = self.composition(output).shown if self.pending is not None else {}
            for event in await self._deliver_pending(rid, step, convo, outstanding, shown, state):
                yield event
            try:
                response = await self._ask(
                    convo, output, step, tool_choice if index == 0 else "auto", instances
                )
            except AgentError as exc:
                exc.steps = steps  # the transcript so far, for the caller's diagnosis
                raise
            step.response = response
            queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
            task = asyncio.create_task(
                self._execute(rid, f"{prefix}-{index}", response, queue.put_nowait, state)
            )
            try:
                while True:
                    getter = asyncio.create_task(queue.get())
                    done, _ = await asyncio.wait(
                        {getter, task}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if getter in done:
                        yield getter.result()
                        continue
                    getter.cancel()
                    break
                while not queue.empty():
                    yield queue.get_nowait()
            finally:
                if not task.done():  # the consumer stopped listening: stop the calls too
                    task.cancel()
            step.calls = task.result()
            for record in step.calls:
                if record.pending:
                    outstanding[record.call_id] = record
            asked = self.composition(output, tool_choice if index == 0 else "auto", instances)
            _feed_back(convo, response, step, asked.response.__name__, asked.shown)
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
        step_key, _, index = item.call_id.rpartition("-")
        record = await self._execute_one(
            run_id, step_key, int(index), call, lambda _: None, state, approved=True
        )
        return record.result

    def _binding(self, name: str) -> ToolBinding | None:
        if isinstance(self.tools, ToolRegistry):
            return self.tools.get(name)
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    # -- execution

    async def _execute(
        self,
        run_id: str,
        step_key: str,
        response: ToolResponse[Any, Any],
        emit: Callable[[AgentEvent], None],
        state: RunContext | None = None,
    ) -> list[CallRecord]:
        calls = list(response.calls)
        records: list[CallRecord | None] = [None] * len(calls)
        batch: list[tuple[int, Any]] = []

        async def flush() -> None:
            done = await asyncio.gather(
                *(self._execute_one(run_id, step_key, i, c, emit, state) for i, c in batch)
            )
            for (i, _), record in zip(batch, done, strict=True):
                records[i] = record
            batch.clear()

        for index, call in enumerate(calls):
            binding = self._binding(call.tool)
            route, activity = self._route(binding) if binding else ("missing", None)
            if (activity is not None and not activity.concurrent and route == "explicit") or (
                state is not None and state.depends(call)  # reads what earlier calls write
            ):
                # opted out: runs alone, after the calls before it and before those after it
                await flush()
                records[index] = await self._execute_one(run_id, step_key, index, call, emit, state)
            else:
                batch.append((index, call))
        await flush()
        return [r for r in records if r is not None]

    async def _execute_one(
        self,
        run_id: str,
        step_key: str,
        index: int,
        call: Any,
        emit: Callable[[AgentEvent], None],
        state: RunContext | None = None,
        approved: bool = False,
    ) -> CallRecord:
        call_id = f"{step_key}-{index}"
        step = int(step_key.rpartition("-")[2])
        tool: str = call.tool
        binding = self._binding(tool)
        refused: str | None = None  # the context's reason the call cannot run (a bad reference)
        needs_approval = tool in self.requires_approval or bool(
            binding and binding.requires_approval
        )
        if state is not None:
            call, refused = state.prepare(call, binding)
        dumped: dict[str, Any] = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        arguments = {k: v for k, v in dumped.items() if k not in META_FIELDS}
        visible = _visible(binding) if binding else True
        route, activity = self._route(binding) if binding else ("missing", None)
        record = CallRecord(
            call_id=call_id,
            tool=tool,
            route=route,
            arguments=arguments,
            result=_Result.ok(None),
            visible=visible,
        )

        def event(kind: EventType, data: Any = None) -> None:
            emit(
                AgentEvent(
                    type=kind,
                    run_id=run_id,
                    step=step,
                    call_id=call_id,
                    tool=tool,
                    data=data,
                    visible=visible,
                )
            )

        event("tool-call.start", {"reasoning": dumped.get("_reasoningForCall")})
        event("tool-input-delta", {"delta": json.dumps(arguments)})
        value: Any
        if refused is not None:
            value = _Result.fail(refused)
        elif route == "latent":
            if "_output" in dumped:
                value = _Result.ok(dumped["_output"], execution="latent")
            else:  # optional in the composed schema: the model gave none
                value = _Result.ok(None, execution="latent", output="absent")
        elif route == "missing":
            name = (binding.activity if binding else None) or tool
            value = _Result.fail(f"no Activity named {name!r} is registered for tool {tool!r}")
        elif route == "async" or activity is None:
            value = Pending()
        elif needs_approval and not approved:
            value = Pending(
                message="The call waits for a human's approval; its result comes later."
            )
        else:
            timeout = activity.timeout or self.activity_timeout

            def progress(item: Any) -> None:
                plain = to_jsonable_python(item, by_alias=True)
                record.progress.append(plain)
                event("tool-result", {"preliminary": True, "output": plain})

            given = (
                state.for_call(
                    run_id=run_id,
                    step=step,
                    call_id=call_id,
                    tool=tool,
                    instance=dumped.get("_instance"),
                    reporter=progress,
                )
                if state is not None and takes_context(activity.fn)
                else None
            )
            try:
                value = await asyncio.wait_for(_invoke(activity.fn, call, progress, given), timeout)
            except TimeoutError:
                value = _Result.fail(
                    f"activity for {tool!r} timed out after {timeout:g}s", execution="explicit"
                )
            except Exception as exc:  # an Activity's failure is a result, never a crash
                value = _Result.fail(f"{type(exc).__name__}: {exc}", execution="explicit")
        if isinstance(value, Pending):
            parked = (
                {APPROVAL: dumped}
                if route == "explicit" and needs_approval and not approved
                else arguments
            )
            record.result = self._make_pending(run_id, call_id, tool, parked, value)
            record.pending = record.result.success
        else:
            record.result = _to_result(value, binding)
            if state is not None:  # the output appended at its _outputPath (008)
                record.result = state.record(call, binding, record.result)
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


def _visible(binding: ToolBinding) -> bool:
    if binding.execution_type == "internal":  # gateway-v3: internal results are never shown
        return False
    return binding.visible if binding.visible is not None else True


async def _invoke(
    fn: ActivityFn, call: Any, progress: Callable[[Any], None], context: Any = None
) -> Any:
    args = (call,) if context is None else (call, context)  # ActivityContext: fn(call, ctx)
    if inspect.isasyncgenfunction(fn):
        last: Any = None
        async for item in fn(*args):
            progress(item)
            last = item
        return last
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await asyncio.to_thread(fn, *args)
    if inspect.isawaitable(value):
        value = await value
    return value


def _to_result(value: Any, binding: ToolBinding | None) -> ToolResult[Any]:
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


def _scrub(value: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """``value`` (a JSON-ready dump) with every secret ``redact`` knows replaced."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return {"repr": redact(repr(value))}
    clean = redact(text)
    return value if clean == text else cast("dict[str, Any]", json.loads(clean))


def _dump(response: Any) -> dict[str, Any]:
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(mode="json"))
    return {"repr": repr(response)}


def _feed_back(
    convo: list[dict[str, Any]],
    response: ToolResponse[Any, Any],
    step: Step,
    function: str,
    shown: Mapping[str, str],
) -> None:
    """Append the step's answer and its results (one tool message) to the conversation.

    ``shown``: tool name → the name the model was offered it by, where they differ; the model
    reads its own answer and the results under the names it was given (never ``name@record``)."""
    call_id = f"step-{step.index}"
    arguments = response.model_dump_json(by_alias=True, exclude_unset=True)
    if shown:
        answer = response.model_dump(mode="json", by_alias=True, exclude_unset=True)
        answer["calls"] = [_as_offered(c, shown) for c in answer.get("calls", [])]
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


TOOLS_HEADER = "Tools you can call (each call names its tool in `_tool`):\n"


def _with_tools_listed(messages: list[dict[str, Any]], listing: str) -> list[dict[str, Any]]:
    """``messages`` for one request, the tool listing added to the system message (a new one
    first when there is none); the conversation itself is left as it is."""
    text = TOOLS_HEADER + listing
    if (
        messages
        and messages[0].get("role") == "system"
        and isinstance(messages[0].get("content"), str)
    ):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{text}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def _as_offered(call: Any, shown: Mapping[str, str]) -> Any:
    """A dumped call with ``_tool`` (and a same-name ``_activity``) as the model was offered them."""
    if not isinstance(call, dict):
        return call
    out = dict(cast("dict[str, Any]", call))
    for meta in ("_tool", "_activity"):
        value = out.get(meta)
        if isinstance(value, str) and value in shown:
            out[meta] = shown[value]
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
