"""toolbind.runtime.temporal, runtime layer (imports temporalio's client, pydantic, the runtime's
Agent defaults, context and events, and this package's ``_names`` and ``_transcript``): the
durable agent, the client that starts runs on a Temporal cluster and follows them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, TypedDict, Unpack, cast

from pydantic import BaseModel
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.workflow_streams import WorkflowStreamClient

from .._agent import ContextLike, LoopSettings, ModelSettings
from .._binding import ToolBinding
from .._context import Context
from .._events import AgentEvent, RunResult
from ..capabilities import Capability
from ..errors import UsageError
from ._names import EVENTS, SUBMIT, WORKFLOW
from ._transcript import EVENT_FIELDS, load_result


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
        model, instructions, settings: as for ``Agent`` (``settings.api_key`` stays unset: the
            workers' key is theirs); ``loop``: its ``end_on_output`` (an Activity's timeout is
            the worker's, ``worker(activity_timeout=...)``).
        mode: ``composed``, ``native`` or ``auto`` (an ``instructor.Mode`` is the workers' to
            choose).
        capabilities: the Agent's capabilities a workflow can rebuild from data:
            ``RequireApproval(tools)`` and ``ToolSelection(k)`` (BM25: deterministic, so it runs
            in the workflow); any other (a ``ToolSelector`` object, a pending store, MCP
            servers) cannot cross to the workers: ``UsageError``.
        task_queue: the workers' queue (the workflow and the LLM activity run there).
        wait_pending: before each step, wait for the results of the run's pending calls (until
            each call's ttl); False: go on at once, as the in-process loop does.
        heartbeat: seconds the LLM activity may go without a heartbeat (its worker heartbeats
            every third of it while the model answers) before the worker is taken for lost and
            the model request is sent again from another one.

    Raises:
        UsageError: ``mode`` not a mode's name, ``settings.api_key`` set, ``heartbeat`` not
            positive.
    """

    def __init__(
        self,
        client: Client,
        *,
        llm: str,
        model: str,
        task_queue: str = "toolbind",
        capabilities: Sequence[Capability] = (),
        instructions: str | None = None,
        mode: str = "composed",
        settings: ModelSettings | None = None,
        loop: LoopSettings | None = None,
        api_key_env: str | None = None,
        wait_pending: bool = True,
        heartbeat: float = 10.0,
    ) -> None:
        from .._native import MODES

        if not isinstance(mode, str) or mode not in MODES:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UsageError(
                f"DurableAgent(mode={mode!r}): expected one of {', '.join(MODES)} (an "
                "instructor.Mode object does not cross to the workers)"
            )
        if not heartbeat > 0:
            raise UsageError(f"DurableAgent(heartbeat={heartbeat!r}): expected seconds > 0")
        s = settings or ModelSettings()
        if s.api_key is not None:
            raise UsageError(
                "DurableAgent(settings=ModelSettings(api_key=...)): a key does not cross to the "
                "workers: name the variable that holds theirs, DurableAgent(api_key_env=...)"
            )
        self.client = client
        self.task_queue = task_queue
        self.end_on_output = (loop or LoopSettings()).end_on_output
        self.instructions = instructions
        self.wait_pending = wait_pending
        # each capability as the workflow's data (the workflow builds the same ones again)
        self.capabilities: dict[str, Any] = {"tool_selection": None, "requires_approval": []}
        for capability in capabilities:
            self.capabilities.update(capability.durable())
        self.llm: dict[str, Any] = {
            "base_url": llm,
            "model": model,
            "max_retries": s.max_retries,
            "max_calls": s.max_calls,
            "meta_fields": s.meta_fields,
            "call_tag": s.call_tag,
            "tools_in_prompt": s.tools_in_prompt,
            "mode": mode,
            "timeout": s.timeout,
            "http_retries": s.http_retries,
            "api_key_env": api_key_env,
            "request_kwargs": dict(s.request_kwargs),
            # the activity's own bound: every retry of instructor, each request's timeout
            "activity_timeout": s.timeout * (s.max_retries + 1) * (s.http_retries + 1) + 10,
            "heartbeat": heartbeat,
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
            raise UsageError(f"start(max_steps={max_steps!r}): expected at least 1")
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
            **self.capabilities,
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
                fields: dict[str, Any] = {name: data.get(name) for name in EVENT_FIELDS}
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
