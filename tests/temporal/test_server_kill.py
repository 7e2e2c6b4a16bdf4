"""The Temporal server killed (SIGKILL) while a durable run is in progress: the real dev server,
a real ``toolbind worker`` process, the scripted OpenAI-protocol server.

Started with ``--db-filename`` and started again on the same port and file, the server has lost
nothing: the worker and the client reconnect by themselves, the run finishes, its history and
transcript hold every step once, the model is not asked again and a keyed effect happens once.
Gone for good — or started again without its file, so the run is unknown to it — a client call
fails with ``temporalio.service.RPCError`` within the client's retry bound (``RetryConfig``:
10 s by default), never hangs.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from tests._servers import serve_asgi
from tests.scripted_llm import ScriptedLLM, call
from tests.temporal._support import HERE, DevServer, WorkerProcess, effects_in, wait_for_effects
from toolbind.runtime.temporal import DurableAgent

EFFECTS = HERE / "effects.py"
GREET = {"_tool": "greetUser", "userName": "Ann"}
DOWN = 3.0
"""Seconds the server stays dead before it is started again."""
RECOVERY_BOUND = 120.0
"""Seconds from the restarted server being healthy to the run's result: generous (the worker's
polls back off up to a few seconds; the keyed tool's 2 s heartbeat timeout, then its retry)."""
GONE_BOUND = 10.0 + 3.0
"""The client's retry bound (``RetryConfig.max_elapsed_time_millis``, 10 s by default) + slack."""


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM(
        call({"output": None, "calls": [GREET]}), call({"output": "done", "calls": []})
    )
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


@pytest.mark.slow
def test_a_server_killed_mid_run_and_restarted_on_its_file_loses_nothing(
    tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    db, gate = tmp_path / "effects.sqlite3", tmp_path / "gate"
    temporal = DevServer(tmp_path / "temporal.db")
    address = temporal.start()
    env = {"TOOLBIND_TEST_DB": str(db), "TOOLBIND_TEST_GATE": str(gate)}
    queue = f"server-kill-{uuid.uuid4().hex[:6]}"
    worker = WorkerProcess(address, queue, EFFECTS, tmp_path / "worker.log", env=env)
    try:
        worker.ready()

        async def main() -> tuple[Any, list[str], float, float]:
            client = await Client.connect(address)
            runs = DurableAgent(client, llm=url, model="scripted", task_queue=queue)
            handle = await runs.start("greet Ann")
            await asyncio.to_thread(
                wait_for_effects, db, 1
            )  # the keyed tool made its effect, waits
            temporal.kill()  # mid-run: an activity in flight, a workflow task to come
            await asyncio.sleep(DOWN)
            started = time.monotonic()
            await asyncio.to_thread(temporal.start)
            up = time.monotonic()
            gate.touch()
            result = await asyncio.wait_for(runs.result(handle), RECOVERY_BOUND)
            recovered = time.monotonic() - up
            history = await handle.fetch_history()
            kinds = [e.WhichOneof("attributes") or "" for e in history.events]
            return result, kinds, up - started, recovered

        result, kinds, restart, recovered = asyncio.run(main())
        assert worker.proc.poll() is None, "the worker outlived the server's death"
    finally:
        worker.stop()
        temporal.stop()
    print(
        f"\nTemporal | server killed mid-run, restarted on its file | restart {restart:.1f} s, "
        f"then the result in {recovered:.1f} s"
    )
    assert result.finished and result.output == "done"
    (step, _last) = result.steps
    assert [(c.tool, c.result.success, c.result.data) for c in step.calls] == [
        ("greetUser", True, "hello Ann")
    ]
    assert effects_in(db) == {"greetUser": 1}  # keyed: once, whatever was retried
    assert len(server.requests) == 2  # the model was not asked again for the first step
    # the history runs from its start to its completion: nothing before the kill is gone
    assert kinds[0] == "workflow_execution_started_event_attributes"
    assert kinds[-1] == "workflow_execution_completed_event_attributes"
    assert kinds.count("activity_task_completed_event_attributes") == 3  # model, tool, model


@pytest.mark.slow
@pytest.mark.parametrize("restart", ["gone for good", "restarted without its file"])
def test_a_server_gone_fails_the_clients_call_in_bounded_time(
    restart: str, tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    _, url = llm
    temporal = DevServer()  # in memory: a restart forgets every run
    address = temporal.start()
    try:

        async def main() -> tuple[BaseException, float]:
            client = await Client.connect(address)
            # no worker: the run waits for its first step
            runs = DurableAgent(client, llm=url, model="scripted", task_queue="nobody")
            handle = await runs.start("hello")
            waiting = asyncio.create_task(runs.result(handle))
            await asyncio.sleep(0.5)
            temporal.kill()
            killed = time.monotonic()
            if restart == "restarted without its file":
                await asyncio.to_thread(temporal.start)
            try:
                await asyncio.wait_for(waiting, 120)
            except RPCError as exc:
                return exc, time.monotonic() - killed
            raise AssertionError("the run's result came from a server that is gone")

        failure, seconds = asyncio.run(main())
    finally:
        temporal.stop()
    print(f"\nTemporal | server {restart} | RPCError {failure} | {seconds:.1f} s")
    assert isinstance(failure, RPCError)
    if restart == "gone for good":
        assert failure.status == RPCStatusCode.UNAVAILABLE
        assert seconds < GONE_BOUND
    else:  # the restart's time is not the client's to bound
        assert failure.status == RPCStatusCode.NOT_FOUND
