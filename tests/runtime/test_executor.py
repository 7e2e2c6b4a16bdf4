"""The Executor seam: the loop routes each call once and hands the explicit ones to an executor."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REPO
from tests.scripted_llm import Reply, ScriptedLLM, call
from toolbind.compiler import load_package
from toolbind.runtime import Agent, ToolRegistry, ToolResult
from toolbind.runtime.execution import CallContext, InProcessExecutor, RoutedCall, current_call
from toolbind.runtime.pending import Pending


@pytest.fixture(scope="module")
def seeds() -> ModuleType:
    return load_package(REPO / "generated", "seeds")


def answer(*calls: dict[str, Any], output: Any = None) -> Reply:
    return call({"output": output, "calls": list(calls)})


class Recording(InProcessExecutor):
    """The in-process executor, keeping every routed call it was given."""

    def __init__(self) -> None:
        self.seen: list[RoutedCall] = []

    async def execute(
        self, call: RoutedCall, progress: Callable[[Any], None]
    ) -> ToolResult[Any] | Pending:
        self.seen.append(call)
        return await super().execute(call, progress)


def test_only_explicit_calls_reach_the_executor_once_each_with_a_stable_key(
    llm: tuple[ScriptedLLM, str], seeds: ModuleType
) -> None:
    server, url = llm
    contexts: list[CallContext | None] = []

    def weather(call: Any) -> dict[str, Any]:
        contexts.append(current_call())  # in the worker thread, too
        return {"temperature": 20.0, "conditions": call.location}

    latent = {
        "_tool": "sentimentAnalysis",
        "text": "fine",
        "_output": {"sentiment": "positive", "confidence": 0.9},
    }
    server.add(
        answer(
            {"_tool": "weatherCheck", "location": "Oslo"},
            latent,
            {"_tool": "weatherCheck", "location": "Lima"},
        ),
        answer(output="done"),
    )
    executor = Recording()
    agent = Agent(
        url,
        model="scripted",
        tools=ToolRegistry(seeds.TOOLS),
        activities={"weatherCheck": weather},
        executor=executor,
    )
    result = agent.run("go", run_id="run-1")
    assert result.finished and result.output == "done"
    assert [(c.tool, c.step, c.index, c.route) for c in executor.seen] == [
        ("weatherCheck", 0, 0, "explicit"),
        ("weatherCheck", 0, 2, "explicit"),
    ]
    records = result.steps[0].calls
    assert [r.route for r in records] == ["explicit", "latent", "explicit"]
    assert [c.call_id for c in executor.seen] == [records[0].call_id, records[2].call_id]
    assert all(c.key == f"run-1:{c.call_id}" for c in executor.seen)
    assert sorted(c.key for c in contexts if c is not None) == sorted(c.key for c in executor.seen)
    assert current_call() is None  # set only while an Activity runs
    assert records[0].result.data == {"temperature": 20.0, "conditions": "Oslo"}
