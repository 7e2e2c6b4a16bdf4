"""A durable run whose worker is killed (SIGKILL) while the model answers: the real dev server, two
real ``toolbind worker`` processes and the scripted OpenAI-protocol server answering slowly.

The LLM activity heartbeats while it waits for the model, so the lost worker is noticed within its
heartbeat timeout (10 s by default), not the activity's start-to-close bound (550 s with the default
``ModelSettings``); the other worker sends the model request again and the run finishes.
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

from tests._servers import serve_asgi
from tests.scripted_llm import ScriptedLLM, call
from tests.temporal._support import HERE, WorkerProcess, dev_server
from toolbind.runtime import ModelSettings
from toolbind.runtime.errors import UsageError
from toolbind.runtime.temporal import DurableAgent

ACTIVITIES = HERE / "activities.py"
RECOVERY_BOUND = 60.0
"""Seconds from the kill to the model request sent again: generous (the default heartbeat timeout
is 10 s, the first retry 1 s after it); without a heartbeat it was the 550 s start-to-close."""


@pytest.fixture(scope="module")
def temporal() -> Iterator[str]:
    with dev_server() as address:
        yield address


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_worker_killed_while_the_model_answers_is_noticed_in_seconds(
    temporal: str, tmp_path: Path
) -> None:
    # the first request's answer would come after 40 s: its worker is dead by then
    server = ScriptedLLM(call({"output": "slow", "calls": []}, delay=40))
    server.add(call({"output": "done", "calls": []}))
    queue = f"beat-{uuid.uuid4().hex[:6]}"
    first = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w0.log").ready()
    second: WorkerProcess | None = None
    try:
        with serve_asgi(server.app) as url:

            async def main() -> tuple[Any, float]:
                nonlocal second
                client = await Client.connect(temporal)
                runs = DurableAgent(client, llm=f"{url}/v1", model="scripted", task_queue=queue)
                handle = await runs.start("answer slowly")
                await asyncio.to_thread(_wait, lambda: server.requests, 120, "the model asked")
                second = WorkerProcess(temporal, queue, ACTIVITIES, tmp_path / "w1.log")
                await asyncio.to_thread(second.ready)
                killed = time.monotonic()
                first.kill()  # mid-request: the model has not answered
                assert first.proc.returncode == -9, first.log.read_text()
                await asyncio.to_thread(
                    _wait, lambda: len(server.requests) >= 2, 120, "the request sent again"
                )
                recovered = time.monotonic() - killed
                return await asyncio.wait_for(runs.result(handle), 60), recovered

            result, recovered = asyncio.run(main())
    finally:
        first.stop()
        if second is not None:
            second.stop()
    print(f"kill -> model request sent again: {recovered:.1f} s")
    assert recovered < RECOVERY_BOUND
    assert result.finished and result.output == "done"
    # sent twice (the lost attempt and its retry), recorded once: the transcript holds one step
    assert len(server.requests) == 2
    assert server.requests[0]["messages"] == server.requests[1]["messages"]
    assert len(result.steps) == 1


def test_the_heartbeat_bound_is_the_users_and_must_be_positive() -> None:
    with pytest.raises(UsageError, match=r"DurableAgent\(heartbeat=0\)"):
        DurableAgent(object(), llm="http://127.0.0.1:1/v1", model="m", heartbeat=0)  # type: ignore[arg-type]
    agent = DurableAgent(
        object(),  # type: ignore[arg-type]
        llm="http://127.0.0.1:1/v1",
        model="m",
        heartbeat=3,
        settings=ModelSettings(timeout=5),
    )
    assert agent.llm["heartbeat"] == 3 and agent.llm["activity_timeout"] == 5 * 3 * 3 + 10
