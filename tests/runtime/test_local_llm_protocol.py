"""Integration: the agent protocol against the real local model (SmolLM2-135M via
llama.cpp, ``make llm``): one multi-step scenario per feature — state at an ``_outputPath`` with an
Activity's context, instancing, a delegate with scopes, approval, guardrails.

A 135M model is weak: each scenario forces its first call (``tool_choice``: the grammar the server
builds from the schema makes the model call that tool) and asserts what toolbind does with it —
where the output is written, which instance it lands in, that the delegate ran on the scoped
context, that the call is parked — never the model's judgment. Slow (a minute or more on 2 cores):
``make test-slow`` runs them when the model is installed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from demo.llm_server import LlamaServer, llama_server
from tests.runtime.test_local_llm import (
    _local_model_installed,  # pyright: ignore[reportPrivateUsage, reportUnusedImport]  # noqa: F401 (autouse: skips without the model)
)
from toolbind.runtime import (
    ActivityContext,
    ActivityRegistry,
    Agent,
    Delegates,
    ModelSettings,
    ToolRegistry,
)
from toolbind.runtime.capabilities import Guardrails, PendingDelivery
from toolbind.runtime.context import Context
from toolbind.runtime.pending import PendingStore

pytestmark = pytest.mark.slow

SETTINGS: dict[str, Any] = {"temperature": 0, "max_tokens": 200}


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    with llama_server() as running:
        yield running


def agent(server: LlamaServer, tools: ToolRegistry, activities: Any, **kw: Any) -> Agent:
    return Agent(
        server.base_url,
        model=server.model,
        tools=tools,
        activities=activities,
        **kw,
        settings=ModelSettings(max_retries=3, request_kwargs=SETTINGS),
    )


def dumped(call: Any) -> dict[str, Any]:
    return call.model_dump(mode="json", by_alias=True, exclude_unset=True)


def test_state_written_at_its_output_path_with_the_activity_context(server: LlamaServer) -> None:
    """Items 1, 2, 5: the forced call's output lands at the prescribed path (with ``_call``
    metadata), the Activity got the run's deps, and the next step shows the model the update."""
    tools = ToolRegistry()
    tools.register(
        "setStatus",
        {
            "type": "object",
            "description": "Set the user's status.",
            "properties": {
                "_tool": {"const": "setStatus"},
                "_outputPath": {"const": "†state.user.status"},
                "status": {"enum": ["active", "inactive"]},
            },
            "required": ["status"],
        },
    )
    seen: list[str] = []

    def set_status(call: Any, ctx: ActivityContext[str]) -> str:
        seen.append(ctx.deps)
        return dumped(call)["status"]

    context = Context.of([{"type": "state", "state": {"user": {"name": "Alex"}}}])
    result = agent(server, tools, {"setStatus": set_status}).run(
        "Alex left the company: make him inactive.",
        context=context,
        tool_choice="setStatus",
        max_steps=2,
        deps="the-db",
    )
    assert seen and set(seen) == {"the-db"}
    first = result.steps[0].calls[0]
    assert first.result.success and first.result.metadata["outputPath"] == "†state.user.status"
    assert context["state.user.status"] in ("active", "inactive")
    assert context["state.user.name"] == "Alex"  # the rest of the state untouched
    written = [m for m in context.messages if m.call is not None]
    assert written and written[0].call is not None and written[0].call["_tool"] == "setStatus"
    assert any("Context updated" in str(m.get("content")) for m in result.messages)


def test_instanced_outputs_land_in_the_instance_each_call_names(server: LlamaServer) -> None:
    """Item 3: two instances; each call's output is written in the instance it names, the global
    state stays empty."""
    tools = ToolRegistry()
    tools.register(
        "classify",
        {
            "type": "object",
            "description": "Classify one comment of one instance.",
            "properties": {
                "_tool": {"const": "classify"},
                "_instance": {"enum": ["a", "b"]},
                "_outputPath": {"const": "†state.verdict"},
                "label": {"enum": ["spam", "ok"]},
            },
            "required": ["_instance", "label"],
        },
    )

    def classify(call: Any) -> dict[str, Any]:
        return {"label": dumped(call)["label"], "instance": dumped(call)["_instance"]}

    context = Context.of(
        [
            {"type": "input", "_instance": "a", "comment": "Buy cheap watches now!!!"},
            {"type": "input", "_instance": "b", "comment": "Thanks, that fixed my bug."},
        ]
    )
    result = agent(server, tools, {"classify": classify}).run(
        "Classify the comment of each instance (a and b).",
        context=context,
        tool_choice="classify",
        max_steps=2,
    )
    calls = [c for s in result.steps for c in s.calls if c.result.success]
    assert calls
    for record in calls:
        data: Any = record.result.data
        instance: str = data["instance"]
        assert context.view("state", instance)["verdict"]["instance"] == instance
    assert context.view("state") is None


def test_a_delegate_runs_on_its_scoped_context(server: LlamaServer) -> None:
    """Item 4: the forced call is delegated: a sub-request (the delegate's system message, the
    scoped state, the call's input) whose output is the call's result."""
    tools = ToolRegistry()
    tools.register(
        "summarize",
        {
            "type": "object",
            "description": "Summarize the article in the state.",
            "properties": {
                "_tool": {"const": "summarize"},
                "_delegate": {"const": "summarizer"},
                "_scopes": {"const": ["state"]},
                "words": {"type": "integer"},
            },
            "required": ["words"],
        },
    )
    summarizer = {
        "context": [{"type": "system", "message": "You are an expert summarizer."}],
        "schema": {
            "type": "object",
            "properties": {"summary": {"type": "string", "maxLength": 80}},
            "required": ["summary"],
        },
    }
    result = agent(
        server,
        tools,
        ActivityRegistry(),
        capabilities=[Delegates(requests={"summarizer": summarizer})],
    ).run(
        "Summarize the article.",
        context=[
            {"type": "state", "articleText": "The city opened a new library with 10,000 books."},
            {"type": "input", "private": "not for the delegate"},
        ],
        tool_choice="summarize",
        max_steps=1,
    )
    (record,) = result.steps[0].calls
    assert record.route == "explicit"
    assert record.result.metadata["execution"] == "delegate", record.result
    assert record.result.metadata["delegate"] == "<delegates['summarizer']>"
    assert record.result.metadata["llm_requests"] >= 1  # the sub-request was made
    if record.result.success:  # the model's part: a 135M model may fail its output schema
        summary: Any = record.result.data
        assert isinstance(summary["summary"], str)
    else:
        assert str(record.result.error).startswith("delegate <delegates['summarizer']>: ")


def test_approval_parks_the_call_and_runs_it_once_approved(
    server: LlamaServer, tmp_path: Path
) -> None:
    """Item 6 (approval): the forced call waits in the pending store; approved, it runs at the
    next run's first step."""
    tools = ToolRegistry()
    tools.register(
        "transfer",
        {
            "type": "object",
            "description": "Transfer money.",
            "properties": {"_tool": {"const": "transfer"}, "amount": {"type": "integer"}},
            "required": ["amount"],
            "x-requires-approval": True,
        },
    )
    ran: list[int] = []

    def transfer(call: Any) -> dict[str, Any]:
        ran.append(dumped(call)["amount"])
        return {"sent": dumped(call)["amount"]}

    with PendingStore(tmp_path / "pending.sqlite3", ttl=300) as store:
        pay = agent(server, tools, {"transfer": transfer}, capabilities=[PendingDelivery(store)])
        first = pay.run("Send 25 dollars to Bob.", tool_choice="transfer", max_steps=1)
        records = first.steps[0].calls
        assert records and all(r.pending for r in records) and ran == []
        amounts: list[int] = []
        for record in records:
            parked = store.get(first.run_id, record.call_id)
            assert parked is not None and parked.arguments["_approval"]["_tool"] == "transfer"
            amounts.append(parked.arguments["_approval"]["amount"])
            store.submit(first.run_id, record.call_id, {"approved": True})
        second = pay.run(first.messages, run_id=first.run_id, max_steps=1)
    assert sorted(ran) == sorted(amounts)  # each approved call ran once, when the run resumed
    delivered = second.steps[0].delivered
    assert len(delivered) == len(records)
    assert all(
        d.result.success and d.result.data == {"sent": d.arguments["_approval"]["amount"]}
        for d in delivered
    )


def test_an_input_guardrail_rejects_and_the_model_is_told(server: LlamaServer) -> None:
    """Item 6 (guardrails): the forced call is rejected before it runs; the reason is in what the
    model reads at the next step."""
    tools = ToolRegistry()
    tools.register(
        "deleteAccount",
        {
            "type": "object",
            "description": "Delete a user's account.",
            "properties": {"_tool": {"const": "deleteAccount"}, "user": {"type": "string"}},
            "required": ["user"],
        },
    )
    ran: list[Any] = []

    def delete_account(call: Any) -> str:
        ran.append(call)
        return "deleted"

    def read_only(call: Any) -> str:
        return "this agent is read-only: no account may be deleted"

    result = agent(
        server,
        tools,
        {"deleteAccount": delete_account},
        capabilities=[Guardrails(input={"deleteAccount": [read_only]})],
    ).run("Delete the account of user bob.", tool_choice="deleteAccount", max_steps=2)
    assert ran == []
    record = result.steps[0].calls[0]
    assert record.result.error == (
        "rejected by guardrail read_only: this agent is read-only: no account may be deleted"
    )
    told = [m for m in result.messages if m.get("role") == "tool"]
    assert "this agent is read-only" in json.dumps(told[0]["content"])
