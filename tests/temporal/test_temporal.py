"""Durable runs on Temporal: the real dev server, real ``toolbind worker`` processes, the scripted
OpenAI-protocol LLM server, the real pending-results endpoint.

The mixed run (explicit, latent, pending) gives the same transcript in process and through
Temporal; the fault tests kill -9 the worker running an Activity and the worker running the
workflow, restart one, and count every side effect in a SQLite file.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import openai
import pytest

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from temporalio.client import Client

from tests._servers import serve_asgi
from tests.scripted_llm import Reply, ScriptedLLM, call
from tests.scripted_llm import tools as tools_reply
from tests.temporal._support import (
    HERE,
    SPEC,
    WorkerProcess,
    dev_server,
    effects_in,
    wait_for_effects,
)
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import Agent, AgentEvent, ToolRegistry
from toolbind.runtime.capabilities import PendingDelivery, RequireApproval, ToolSelection
from toolbind.runtime.pending import PendingStore, pending_app
from toolbind.runtime.temporal import (
    DurableAgent,
    TemporalExecutor,
    ToolPolicy,
    dump_result,
    policies_from_spec,
    temporal_pending,
)

ACTIVITIES = HERE / "activities.py"
EFFECTS = HERE / "effects.py"
WEATHER = {"_tool": "weatherCheck", "location": "Paris"}
SENTIMENT = {
    "_tool": "sentimentAnalysis",
    "text": "This is the best!",
    "_output": {"sentiment": "positive", "confidence": 0.99},
}
EMAIL = {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "hi"}


def answer(*calls: dict[str, Any], output: Any = None) -> Reply:
    return call({"output": output, "calls": list(calls)})


@pytest.fixture(scope="module")
def temporal() -> Iterator[str]:
    with dev_server() as address:
        yield address


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM()
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> ToolRegistry:
    root = tmp_path_factory.mktemp("seeds")
    # a name of its own: another test's "seeds" package (without this spec's x-toolbind-retry)
    # may already sit in sys.modules, and importing "seeds" would hand back that one
    compile_to_directory([SPEC], root, package_names={str(SPEC): "temporal_seeds"})
    return ToolRegistry(load_package(root, "temporal_seeds").TOOLS)


def normalised(data: Any) -> Any:
    """A transcript with the per-invocation part of call ids and the run id made equal."""
    text = json.dumps(data, sort_keys=True)
    return json.loads(re.sub(r"call-[0-9a-f]{8}-", "call-X-", text))


def test_x_toolbind_retry_is_read_from_the_spec(tools: ToolRegistry) -> None:
    found = policies_from_spec(SPEC, list(tools))
    assert found["greetUser"] == ToolPolicy(
        heartbeat=2, max_attempts=5, initial_interval=0.2, max_interval=1
    )
    assert "weatherCheck" not in found
    with pytest.raises(Exception, match=r"seeds\.yaml#/x/maxAtempts: error: unknown"):
        ToolPolicy.from_extension({"maxAtempts": 3}, f"{SPEC}#/x")


def test_the_mixed_run_gives_the_same_transcript_in_process_and_through_temporal(
    temporal: str, tools: ToolRegistry, tmp_path: Path
) -> None:
    from tests.temporal.activities import ACTIVITIES as FNS

    script = (answer(WEATHER, SENTIMENT, EMAIL), answer(output="all done"))

    # in process: the SQLite pending store behind the endpoint
    in_process = ScriptedLLM(*script)
    with (
        serve_asgi(in_process.app) as url,
        PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store,
        serve_asgi(pending_app(store)) as endpoint,
    ):
        # a sync openai client: astream's events without streaming the model's answer (astream
        # streams through an async client; the durable loop's LLM activity never streams), so
        # both sides send and record the same non-streamed requests
        llm = openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed")
        agent = Agent(
            llm,
            model="scripted",
            tools=tools,
            activities=FNS,
            capabilities=[PendingDelivery(store)],
        )

        async def local() -> list[AgentEvent]:
            events: list[AgentEvent] = []
            async with httpx.AsyncClient(base_url=endpoint) as client:
                async for event in agent.astream("mail and weather", run_id="mixed"):
                    events.append(event)
                    if event.type == "tool-call.pending":
                        reply = await client.post(
                            f"/runs/{event.run_id}/tool-results",
                            json={"call_id": event.call_id, "result": {"sent": True}},
                        )
                        assert reply.status_code == 200
            return events

        events = asyncio.run(local())
        llm.close()
    expected = events[-1].result
    assert expected is not None and expected.output == "all done"

    # through Temporal: a worker process, the same endpoint in front of the durable run
    durable = ScriptedLLM(*script)
    queue = f"mixed-{uuid.uuid4().hex[:6]}"
    run_id = f"mixed-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "worker.log").ready()
    try:
        with (
            serve_asgi(durable.app) as url,
            serve_asgi(pending_app(temporal_pending(temporal))) as endpoint,
        ):

            async def remote() -> Any:
                client = await Client.connect(temporal)
                runs = DurableAgent(client, llm=f"{url}/v1", model="scripted", task_queue=queue)
                handle = await runs.start("mail and weather", run_id=run_id)
                pending = await _wait_for_pending(runs, run_id)
                async with httpx.AsyncClient(base_url=endpoint) as http:
                    reply = await http.post(
                        f"/runs/{run_id}/tool-results",
                        json={"call_id": pending["call_id"], "result": {"sent": True}},
                    )
                    assert reply.status_code == 200, reply.text
                    assert reply.json()["status"] == "resolved"
                    again = await http.post(
                        f"/runs/{run_id}/tool-results",
                        json={"call_id": pending["call_id"], "result": {"sent": True}},
                    )
                    assert again.status_code == 409  # resolved once, as with the SQLite store
                return await runs.result(handle)

            got = asyncio.run(remote())
    finally:
        worker.stop()
    assert got.output == "all done" and got.finished
    mine, theirs = dump_result(expected), dump_result(got)
    for side in (mine, theirs):
        side.pop("run_id")
        for step in side["steps"]:
            step.pop("response")  # typed in process; the durable run keeps the raw answers
    assert normalised(theirs) == normalised(mine)
    assert normalised(durable.requests) == normalised(in_process.requests)
    first = got.steps[0].calls
    assert [(c.tool, c.route, c.pending) for c in first] == [
        ("weatherCheck", "explicit", False),
        ("sentimentAnalysis", "latent", False),
        ("sendEmail", "explicit", True),
    ]
    assert first[0].progress == [  # the last item is the result, not progress
        {"stage": "looking up Paris", "tool": "weatherCheck", "step": 0},  # its ActivityContext
    ]
    assert [(d.tool, d.result.data) for d in got.steps[1].delivered] == [
        ("sendEmail", {"sent": True})
    ]


async def _wait_for_pending(runs: DurableAgent, run_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = [p for p in await runs.pending(run_id) if p["status"] == "pending"]
        except Exception:  # the workflow has not started yet
            found = []
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError("the run never parked its pending call")


# -- faults -------------------------------------------------------------------------------------


def _fault_run(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str], kill: str
) -> tuple[Any, dict[str, int]]:
    server, url = llm
    server.add(
        answer({"_tool": "greetUser", "userName": "Ann"}, {**SENTIMENT, "text": "ok"}),
        answer(output="done"),
    )
    db, gate = tmp_path / "effects.sqlite3", tmp_path / "gate"
    env = {"TOOLBIND_TEST_DB": str(db), "TOOLBIND_TEST_GATE": str(gate)}
    queue = f"fault-{uuid.uuid4().hex[:6]}"
    tool_queue = ["--queues", "tool"]

    def loop_worker(n: int) -> WorkerProcess:
        return WorkerProcess(
            temporal, queue, EFFECTS, tmp_path / f"loop{n}.log", extra=tool_queue, env=env
        )

    def tool_worker(n: int) -> WorkerProcess:
        # one process polls both tools' queues (``--queues tool``: QUEUE.<tool>)
        return WorkerProcess(
            temporal,
            f"{queue}.greetUser",
            EFFECTS,
            tmp_path / f"tools{n}.log",
            extra=["--no-workflows", "--no-llm"],
            env=env,
        )

    def sentiment_worker(n: int) -> WorkerProcess:
        return WorkerProcess(
            temporal,
            f"{queue}.sentimentAnalysis",
            EFFECTS,
            tmp_path / f"sentiment{n}.log",
            extra=["--no-workflows", "--no-llm"],
            env=env,
        )

    procs = [loop_worker(0), tool_worker(0), sentiment_worker(0)]
    try:
        for p in procs:
            p.ready()
        # the spec's x-toolbind-retry (heartbeat 2 s): a lost worker is noticed in 2 s
        assert "2 x-toolbind-retry policies" in procs[0].log.read_text()

        async def main() -> Any:
            client = await Client.connect(temporal)
            runs = DurableAgent(client, llm=url, model="scripted", task_queue=queue)
            handle = await runs.start("greet and judge")
            await asyncio.to_thread(wait_for_effects, db, 2)
            if kill == "activity":  # both Activities made their effect and wait: kill them
                procs[1].kill()
                procs[2].kill()
                procs.extend([tool_worker(1).ready(), sentiment_worker(1).ready()])
            else:  # the workflow's worker dies mid-step, while its Activities run
                procs[0].kill()
                procs.append(loop_worker(1).ready())
            gate.touch()
            return await asyncio.wait_for(runs.result(handle), 120)

        result = asyncio.run(main())
    finally:
        for p in procs:
            p.stop()
    return result, effects_in(db)


@pytest.mark.slow
def test_killing_the_activity_worker_mid_call_retries_it_once_keyed_effects_happen_once(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    result, effects = _fault_run(temporal, tmp_path, llm, kill="activity")
    assert result.finished and result.output == "done"
    calls = result.steps[0].calls
    assert [(c.tool, c.result.success) for c in calls] == [
        ("greetUser", True),
        ("sentimentAnalysis", True),
    ]
    assert calls[0].result.data == "hello Ann"
    # with its idempotency key: exactly once; without: once per attempt (documented at least once)
    assert effects == {"greetUser": 1, "sentimentAnalysis": 2}


@pytest.mark.slow
def test_killing_the_workflow_worker_mid_step_loses_nothing_and_repeats_nothing(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    result, effects = _fault_run(temporal, tmp_path, llm, kill="workflow")
    assert result.finished and result.output == "done"
    assert [c.result.success for c in result.steps[0].calls] == [True, True]
    assert effects == {"greetUser": 1, "sentimentAnalysis": 1}
    server, _ = llm
    assert len(server.requests) == 2  # the LLM step was not asked again


@pytest.mark.slow
def test_a_pending_call_resolved_while_no_worker_runs_is_delivered_when_one_starts(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(answer(EMAIL), answer(output="sent"))
    queue = f"pending-{uuid.uuid4().hex[:6]}"
    run_id = f"pending-{uuid.uuid4().hex[:6]}"
    first = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w0.log").ready()
    second: WorkerProcess | None = None
    try:
        with serve_asgi(pending_app(temporal_pending(temporal, update_timeout=1))) as endpoint:

            async def main() -> Any:
                nonlocal second
                client = await Client.connect(temporal)
                runs = DurableAgent(client, llm=url, model="scripted", task_queue=queue)
                handle = await runs.start("mail", run_id=run_id)
                pending = await _wait_for_pending(runs, run_id)
                first.kill()  # no worker runs now
                async with httpx.AsyncClient(base_url=endpoint, timeout=30) as http:
                    reply = await http.post(
                        f"/runs/{run_id}/tool-results",
                        json={"call_id": pending["call_id"], "result": {"sent": True}},
                    )
                assert reply.status_code == 200, reply.text
                assert reply.json()["status"] == "submitted"  # recorded, not yet delivered
                second = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w1.log").ready()
                return await asyncio.wait_for(runs.result(handle), 120)

            result = asyncio.run(main())
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert result.output == "sent" and result.finished and result.pending == []
    delivered = result.steps[1].delivered
    assert [(d.tool, d.result.data) for d in delivered] == [("sendEmail", {"sent": True})]


def test_the_in_process_loop_runs_its_activities_on_temporal_workers(
    temporal: str, tools: ToolRegistry, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """``Agent(executor=TemporalExecutor(client=...))``: the loop stays here, each explicit call
    runs as a one-call workflow on a worker process (its progress comes back too)."""
    from tests.temporal.activities import ACTIVITIES as FNS

    server, url = llm
    server.add(answer(WEATHER), answer(output="ok"))
    queue = f"calls-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w.log").ready()
    try:

        async def main() -> Any:
            client = await Client.connect(temporal)
            executor = TemporalExecutor(client=client, task_queue=queue)
            agent = Agent(url, model="scripted", tools=tools, activities=FNS, executor=executor)
            result = await agent.arun("weather", run_id="here")
            key = f"here:{result.steps[0].calls[0].call_id}"
            described = await client.get_workflow_handle(f"toolbind-call-{key}").describe()
            await agent.aclose()
            return result, described

        result, described = asyncio.run(main())
    finally:
        worker.stop()
    record = result.steps[0].calls[0]
    assert record.result.data == {"temperature": 21.5, "conditions": "sunny in Paris"}
    assert record.progress[0] == {"stage": "looking up Paris", "tool": "weatherCheck", "step": 0}
    assert described.status is not None and described.status.name == "COMPLETED"
    assert result.output == "ok"


@pytest.mark.slow
def test_cancelling_a_durable_run_cancels_its_running_activity(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    from temporalio.client import WorkflowFailureError

    server, url = llm
    server.add(answer({"_tool": "greetUser", "userName": "Ann"}))
    started, cancelled = tmp_path / "started", tmp_path / "cancelled"
    env = {"TOOLBIND_TEST_STARTED": str(started), "TOOLBIND_TEST_CANCELLED": str(cancelled)}
    queue = f"cancel-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w.log", env=env).ready()
    try:

        async def main() -> None:
            client = await Client.connect(temporal)
            runs = DurableAgent(client, llm=url, model="scripted", task_queue=queue)
            handle = await runs.start("greet")
            await asyncio.to_thread(_wait_for, started)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()

        asyncio.run(main())
        _wait_for(cancelled)  # the Activity heard it (it heartbeats) and stopped
    finally:
        worker.stop()


def _wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


# -- DurableAgent's run options ------------------------------------------------------------------


def _durable_and_in_process(
    temporal: str,
    tools: ToolRegistry,
    tmp_path: Path,
    script: tuple[Reply, ...],
    agent_options: dict[str, Any],
    run_options: dict[str, Any],
) -> tuple[Any, Any, ScriptedLLM, ScriptedLLM]:
    """The same run in process (``Agent.arun``) and durable (``DurableAgent.run``): results and
    the scripted servers (their requests)."""
    from tests.temporal.activities import ACTIVITIES as FNS

    in_process, durable = ScriptedLLM(*script), ScriptedLLM(*script)
    with serve_asgi(in_process.app) as url:
        agent = Agent(f"{url}/v1", model="scripted", tools=tools, activities=FNS, **agent_options)

        async def local() -> Any:
            try:
                return await agent.arun("weather", run_id="options", **run_options)
            finally:
                await agent.aclose()

        mine = asyncio.run(local())
    queue = f"options-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "worker.log").ready()
    try:
        with serve_asgi(durable.app) as url:

            async def remote() -> Any:
                client = await Client.connect(temporal)
                runs = DurableAgent(
                    client, llm=f"{url}/v1", model="scripted", task_queue=queue, **agent_options
                )
                return await runs.run("weather", run_id=f"options-{queue}", **run_options)

            theirs = asyncio.run(remote())
    finally:
        worker.stop()
    return mine, theirs, in_process, durable


def _same_transcript(mine: Any, theirs: Any) -> None:
    a, b = dump_result(mine), dump_result(theirs)
    for side in (a, b):
        side.pop("run_id")
        for step in side["steps"]:
            step.pop("response")
    assert normalised(b) == normalised(a)


def test_a_durable_run_takes_a_tool_subset_native_mode_a_tool_choice_and_a_context(
    temporal: str, tools: ToolRegistry, tmp_path: Path
) -> None:
    """tools= (a per-run subset), mode="native", tool_choice="required" and context= (carried as
    workflow data: the model sees it, a Call's reference resolves in it, the run gives it back)
    make the same requests and transcript through Temporal as in process."""
    script = (tools_reply(("weatherCheck", {"location": "†state.city"})), Reply(text="Sunny."))
    mine, theirs, in_process, durable = _durable_and_in_process(
        temporal,
        tools,
        tmp_path,
        script,
        {"mode": "native"},
        {
            "tools": ["weatherCheck", "sendEmail"],
            "tool_choice": "required",
            "context": [{"type": "state", "state": {"city": "Paris"}}],
        },
    )
    assert theirs.output == mine.output == "Sunny." and theirs.finished
    first = theirs.steps[0]
    assert first.mode == "native" and first.offered == ["weatherCheck", "sendEmail"]
    request = durable.requests[0]
    assert sorted(f["function"]["name"] for f in request["tools"]) == ["sendEmail", "weatherCheck"]
    assert request["tool_choice"] == "required"
    assert "Paris" in json.dumps(request["messages"])  # the context, shown to the model
    assert first.calls[0].arguments == {"location": "Paris"}  # the reference, resolved
    assert first.calls[0].result.data == {"temperature": 21.5, "conditions": "sunny in Paris"}
    assert theirs.context is not None and mine.context is not None
    assert theirs.context.to_items() == mine.context.to_items()
    _same_transcript(mine, theirs)
    assert normalised(durable.requests) == normalised(in_process.requests)


@pytest.mark.slow  # a worker process each: the fast suite's budget
def test_a_durable_run_selects_tools_by_bm25_as_in_process(
    temporal: str, tools: ToolRegistry, tmp_path: Path
) -> None:
    pytest.importorskip("bm25s", reason="the select extra is not installed")
    script = (answer(WEATHER), answer(output="ok"))
    mine, theirs, in_process, durable = _durable_and_in_process(
        temporal, tools, tmp_path, script, {"capabilities": [ToolSelection(1)]}, {}
    )
    assert theirs.steps[0].offered == mine.steps[0].offered == ["weatherCheck"]
    _same_transcript(mine, theirs)
    assert normalised(durable.requests) == normalised(in_process.requests)


@pytest.mark.slow  # a worker process each: the fast suite's budget
def test_a_durable_run_waits_for_a_humans_approval_before_running_the_call(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(answer(WEATHER), answer(output="approved and done"))
    queue = f"approve-{uuid.uuid4().hex[:6]}"
    run_id = f"approve-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w.log").ready()
    try:

        async def main() -> Any:
            client = await Client.connect(temporal)
            runs = DurableAgent(
                client,
                llm=url,
                model="scripted",
                task_queue=queue,
                capabilities=[RequireApproval(["weatherCheck"])],
            )
            handle = await runs.start("weather", run_id=run_id)
            parked = await _wait_for_pending(runs, run_id)
            assert parked["tool"] == "weatherCheck"
            assert parked["arguments"]["_approval"]["location"] == "Paris"  # not run yet
            await runs.submit(run_id, parked["call_id"], {"approved": True})
            return await runs.result(handle)

        result = asyncio.run(main())
    finally:
        worker.stop()
    assert result.output == "approved and done" and result.finished
    assert result.steps[0].calls[0].pending  # parked, not run
    delivered = result.steps[1].delivered
    assert [(d.tool, d.result.success) for d in delivered] == [("weatherCheck", True)]
    assert delivered[0].result.data == {"temperature": 21.5, "conditions": "sunny in Paris"}


def test_what_cannot_cross_the_workflow_boundary_is_refused_with_the_reason() -> None:
    import instructor

    from toolbind.runtime.errors import UsageError

    client: Any = None  # never contacted: each refusal comes first
    runs = DurableAgent(client, llm="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(UsageError, match=r"deps= cannot cross the workflow boundary.*worker\("):
        asyncio.run(runs.start("x", deps={"db": object()}))

    class Selector:
        def select(self, query: str, tools: Any) -> Any:
            return tools

    with pytest.raises(UsageError, match=r"deterministic.*number k"):
        DurableAgent(
            client, llm="u", model="m", capabilities=[ToolSelection(cast(Any, Selector()))]
        )
    with pytest.raises(UsageError, match=r"instructor\.Mode object does not cross"):
        DurableAgent(client, llm="u", model="m", mode=cast(Any, instructor.Mode.TOOLS))


# -- live progress ---------------------------------------------------------------------------------


def _gated_worker(temporal: str, queue: str, tmp_path: Path) -> tuple[WorkerProcess, Path]:
    gate = tmp_path / "progress-seen"
    env = {"TOOLBIND_TEST_PROGRESS_GATE": str(gate)}
    return WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w.log", env=env).ready(), gate


def _progress_was_live(events: list[AgentEvent]) -> None:
    """weatherCheck waited, after its first item, until the client had seen that item: the gate
    it reports opened only if the item reached the client while the Activity still ran."""
    kinds = [(e.type, e.tool) for e in events if e.tool == "weatherCheck"]
    results = [e.data["output"] for e in events if e.type == "tool-result"]
    assert results[:2] == [
        {"stage": "looking up Paris", "tool": "weatherCheck", "step": 0},
        {"gate": "opened"},  # not "still shut": the first item arrived live
    ]
    assert kinds.index(("tool-result", "weatherCheck")) < kinds.index(
        ("tool-call.complete", "weatherCheck")
    )
    assert kinds[-1] == ("tool-call.complete", "weatherCheck")  # no progress after the result


@pytest.mark.slow  # a worker process each: the fast suite's budget
def test_progress_of_an_activity_on_a_worker_reaches_the_agents_event_stream_live(
    temporal: str, tools: ToolRegistry, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """``Agent(executor=TemporalExecutor(client=...)).astream``: the call's progress items come
    through the one-call workflow's stream while the Activity runs, before its result."""
    from tests.temporal.activities import ACTIVITIES as FNS

    server, url = llm
    server.add(answer(WEATHER), answer(output="ok"))
    queue = f"live-{uuid.uuid4().hex[:6]}"
    worker, gate = _gated_worker(temporal, queue, tmp_path)
    try:

        async def main() -> list[AgentEvent]:
            client = await Client.connect(temporal)
            executor = TemporalExecutor(client=client, task_queue=queue)
            agent = Agent(url, model="scripted", tools=tools, activities=FNS, executor=executor)
            events: list[AgentEvent] = []
            async for event in agent.astream("weather"):
                events.append(event)
                if event.type == "tool-result":
                    gate.touch()
            await agent.aclose()
            return events

        events = asyncio.run(main())
    finally:
        worker.stop()
    _progress_was_live(events)
    result = events[-1].result
    assert result is not None and result.output == "ok"
    assert result.steps[0].calls[0].progress[1] == {"gate": "opened"}


@pytest.mark.slow  # a worker process of its own (39 s): the fast suite's budget
def test_a_durable_runs_events_stream_live_progress_included(
    temporal: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """``DurableAgent.astream``: the run's events through its Workflow Stream — the call's
    start, its progress as the Activity reports it, its result, the run's end."""
    server, url = llm
    server.add(answer(WEATHER, SENTIMENT), answer(output="ok"))
    queue = f"live-{uuid.uuid4().hex[:6]}"
    worker, gate = _gated_worker(temporal, queue, tmp_path)
    try:

        async def main() -> list[AgentEvent]:
            client = await Client.connect(temporal)
            runs = DurableAgent(client, llm=url, model="scripted", task_queue=queue)
            events: list[AgentEvent] = []
            async for event in runs.astream("weather"):
                events.append(event)
                if event.type == "tool-result":
                    gate.touch()
            return events

        events = asyncio.run(main())
    finally:
        worker.stop()
    _progress_was_live(events)
    assert [e.type for e in events if e.tool == "sentimentAnalysis"] == [
        "tool-call.start",
        "tool-input-delta",
        "tool-call.complete",
    ]
    last = events[-1]
    assert last.type == "run.complete" and last.result is not None
    assert last.result.output == "ok" and last.result.finished
    assert last.result.steps[0].calls[0].progress[1] == {"gate": "opened"}
