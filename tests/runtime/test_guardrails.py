"""Input and output guardrails through ``Agent.run`` against the scripted
OpenAI-protocol server: a rejected call never runs, a rejected result never reaches the model,
and the reason goes back to the model as the call's failed result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.test_agent_context import answer, args
from tests.scripted_llm import ScriptedLLM
from toolbind.runtime import ActivityRegistry, Agent, ToolRegistry, ToolResult, UsageError
from toolbind.runtime.capabilities import Guardrails, PendingDelivery, RequireApproval
from toolbind.runtime.context import Context
from toolbind.runtime.pending import PendingStore


def registry() -> ToolRegistry:
    tools = ToolRegistry()
    tools.register(
        "transfer",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "transfer"},
                "_outputPath": {"const": "†state.receipt"},
                "amount": {"type": "integer"},
            },
            "required": ["amount"],
        },
    )
    tools.register(
        "lookup",
        {
            "type": "object",
            "properties": {"_tool": {"const": "lookup"}, "user": {"type": "string"}},
            "required": ["user"],
        },
    )
    return tools


def results_told(server: ScriptedLLM, index: int) -> list[dict[str, Any]]:
    return json.loads(server.tool_messages(index)[-1]["content"])["results"]


def test_input_and_output_guardrails_per_tool_and_per_agent(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    ran: list[tuple[str, Any]] = []

    def transfer(c: Any) -> dict[str, Any]:
        ran.append(("transfer", args(c)["amount"]))
        return {"sent": args(c)["amount"]}

    def lookup(c: Any) -> dict[str, Any]:
        ran.append(("lookup", args(c)["user"]))
        return {"user": args(c)["user"], "ssn": "123-45-6789"}

    def under_limit(c: Any) -> str | None:  # per tool: transfer only
        amount = args(c)["amount"]
        return f"{amount} is over the limit of 1000" if amount > 1000 else None

    seen: list[str] = []

    async def audit(c: Any) -> bool:  # per agent, async: sees every call
        seen.append(args(c)["_tool"])
        return True

    def no_ssn(c: Any, result: ToolResult[Any]) -> str | None:
        return "the result holds an SSN" if "ssn" in json.dumps(result.data) else None

    server.add(
        answer(
            {"_tool": "transfer", "amount": 10},
            {"_tool": "transfer", "amount": 5000},
            {"_tool": "lookup", "user": "ann"},
        ),
        answer(output="done"),
    )
    context = Context.of([{"type": "state", "state": {}}])
    agent = Agent(
        url,
        model="scripted",
        tools=registry(),
        activities=ActivityRegistry({"transfer": transfer, "lookup": lookup}),
        capabilities=[Guardrails(input={"*": [audit], "transfer": under_limit}, output=[no_ssn])],
    )
    result = agent.run("pay and look up", context=context)
    small, large, found = result.steps[0].calls
    # the rejected call never ran; the other two did
    assert sorted(ran, key=str) == [("lookup", "ann"), ("transfer", 10)]
    assert sorted(seen) == ["lookup", "transfer", "transfer"]
    assert small.result.success and small.result.data == {"sent": 10}
    assert not large.result.success
    assert large.result.error == "rejected by guardrail under_limit: 5000 is over the limit of 1000"
    assert large.result.metadata == {
        "execution": "guardrail",
        "guardrail": "under_limit",
        "stage": "input",
    }
    assert not found.result.success and found.result.data is None
    assert found.result.error == "rejected by guardrail no_ssn: the result holds an SSN"
    # only the allowed result was written at its _outputPath
    assert context.view("state") == {"receipt": {"sent": 10}}
    # the model is told the reasons, and never sees the withheld data
    told = results_told(server, 1)
    assert [r["success"] for r in told] == [True, False, False]
    assert "over the limit of 1000" in told[1]["error"]
    assert "123-45-6789" not in json.dumps(server.requests[1]["messages"])


def test_a_broken_guardrail_rejects_and_a_rejected_call_is_not_parked(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    server, url = llm
    ran: list[Any] = []

    def broken(c: Any) -> None:
        raise RuntimeError("policy service down")

    def transfer(c: Any) -> None:
        ran.append(c)

    server.add(answer({"_tool": "transfer", "amount": 1}), answer(output="stopped"))
    with PendingStore(tmp_path / "pending.sqlite3") as store:
        agent = Agent(
            url,
            model="scripted",
            tools=registry(),
            activities=ActivityRegistry({"transfer": transfer}),
            capabilities=[
                PendingDelivery(store),
                RequireApproval({"transfer"}),
                Guardrails(input=[broken]),
            ],
        )
        result = agent.run("pay")
        (record,) = result.steps[0].calls
        assert not record.pending and ran == []
        assert record.result.error == (
            "rejected by guardrail broken: RuntimeError: policy service down"
        )
        assert store.get(result.run_id, record.call_id) is None  # never parked for a human


def test_a_guardrail_that_is_no_function_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"Guardrails\(input=.*'transfer' is not a function"):
        Agent(
            "http://127.0.0.1:9/v1",
            model="m",
            capabilities=[Guardrails(input={"transfer": ["nope"]})],  # pyright: ignore[reportArgumentType]
        )
