"""The Agent composes capabilities: a user's own capability wraps each call and the toolset like
the built-in ones, they apply in their ``order``, a delegate's sub-request keeps only what each
keeps for a child, and every mistake in the constructor is a ``UsageError`` naming its argument."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.runtime.test_agent_context import answer
from tests.runtime.test_guardrails import registry
from tests.scripted_llm import ScriptedLLM
from toolbind.runtime import Agent, LoopSettings, ModelSettings, UsageError
from toolbind.runtime.capabilities import (
    Capability,
    Delegates,
    Guardrails,
    McpServers,
    PendingDelivery,
    RequireApproval,
    ToolSelection,
)
from toolbind.runtime.pending import PendingStore


class Audit(Capability):
    """A user's capability: it sees each call before it runs and each result after."""

    order: ClassVar[int] = 60

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def wrap_call(self, routed: Any, proceed: Any) -> Any:
        self.seen.append(("call", routed.tool))
        value = await proceed(routed)
        self.seen.append(("result", getattr(value, "data", None)))
        return value


def _lookup(call: Any) -> dict[str, Any]:
    return {"user": call.user}


def _allow(call: Any) -> None:
    return None


def test_a_capability_of_ones_own_wraps_each_call(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(answer({"_tool": "lookup", "user": "ann"}), answer(output="done"))
    audit = Audit()
    agent = Agent(
        url,
        model="scripted",
        tools=registry(),
        activities={"lookup": _lookup},
        capabilities=[audit, Guardrails(input=[_allow])],
    )
    result = agent.run("who is ann?")
    assert result.output == "done"
    assert audit.seen == [("call", "lookup"), ("result", {"user": "ann"})]
    # applied in their order: guardrails (50), the user's (60), approval (90), delegates (80)
    kinds = [type(c).__name__ for c in agent.capabilities]
    assert kinds == ["Guardrails", "Audit", "Delegation", "RequireApproval"]


def test_a_child_keeps_what_each_capability_keeps(tmp_path: Any) -> None:
    with PendingStore(tmp_path / "p.sqlite3") as store:
        agent = Agent(
            "http://127.0.0.1:9/v1",
            model="m",
            tools=registry(),
            capabilities=[PendingDelivery(store), ToolSelection(1), Guardrails()],
        )
        child = agent.spawn([], agent.model_call)
    kept = sorted(type(c).__name__ for c in child.capabilities)
    assert kept == ["Delegation", "Guardrails", "RequireApproval"]
    assert child.tools == [] and list(child.toolset) == []
    assert len(list(agent.toolset)) == 2  # the parent's own are untouched


def test_constructor_mistakes_name_the_argument() -> None:
    url = "http://127.0.0.1:9/v1"
    with pytest.raises(UsageError, match=r"Agent\(capabilities="):
        Agent(url, model="m", capabilities=[object()])  # type: ignore[list-item]
    with pytest.raises(UsageError, match=r"Agent\(capabilities="):
        Agent(url, model="m", capabilities=Guardrails())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"Agent\(settings="):
        Agent(url, model="m", settings={"max_retries": 1})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"Agent\(loop="):
        Agent(url, model="m", loop=ModelSettings())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"ModelSettings\(max_retries=-1\)"):
        ModelSettings(max_retries=-1)
    with pytest.raises(UsageError, match=r"ModelSettings\(max_calls=0\)"):
        ModelSettings(max_calls=0)
    with pytest.raises(UsageError, match=r"arun\(max_steps=0\)"):
        Agent(url, model="m").run("go", max_steps=0)
    assert LoopSettings().end_on_output is False


def test_what_crosses_to_a_durable_run_is_data(tmp_path: Any) -> None:
    assert RequireApproval({"b", "a"}).durable() == {"requires_approval": ["a", "b"]}
    assert ToolSelection(3).durable() == {"tool_selection": 3}
    with PendingStore(tmp_path / "p.sqlite3") as store:
        for capability in (PendingDelivery(store), Guardrails(), Delegates()):
            with pytest.raises(UsageError, match=type(capability).__name__):
                capability.durable()
    assert McpServers.order < Delegates.order < RequireApproval.order
