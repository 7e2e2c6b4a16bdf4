"""``Agent.run(..., context=...)`` against the scripted OpenAI-protocol server: variable references,
``_outputPath`` / ``_outputMethod`` (output into the state) and instancing through a real socket,
the real openai client and instructor."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._servers import serve_asgi
from tests.runtime.test_context import EMPLOYEES_013
from tests.scripted_llm import Reply, ScriptedLLM, call
from toolbind.runtime import ActivityContext, ActivityRegistry, Agent, AgentEvent, ToolRegistry
from toolbind.runtime.capabilities import PendingDelivery, RequireApproval
from toolbind.runtime.context import Context
from toolbind.runtime.pending import PendingStore, pending_app


def answer(*calls: dict[str, Any], output: Any = None) -> Reply:
    return call({"output": output, "calls": list(calls)})


def args(payload: Any) -> dict[str, Any]:
    return payload.model_dump(mode="json", by_alias=True, exclude_unset=True)


def tools() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        "updateUserStatus",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "updateUserStatus"},
                "_outputPath": {
                    "type": "string",
                    "description": "Path to store the new status.",
                    "pattern": "^†",
                },
                "newStatus": {"type": "string"},
            },
            "required": ["newStatus"],
        },
    )
    registry.register(
        "summarize",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "summarize"},
                "_outputPath": {"type": "string", "const": "†state.summary"},
                "text": {"type": "string"},
            },
            "required": ["text"],
        },
    )
    registry.register(
        "shout",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "shout"},
                "_outputPath": {"type": "string", "pattern": "^†"},
                "_outputMethod": {"enum": ["set", "push", "concat", "merge", "assign"]},
                "text": {"type": "string"},
            },
            "required": ["text"],
        },
    )
    return registry


def activities() -> ActivityRegistry:
    def update(c: Any) -> Any:
        return args(c)["newStatus"]

    def summarize(c: Any) -> str:
        return " ".join(args(c)["text"].split()[:2])

    def shout(c: Any) -> str:
        return args(c)["text"].upper()

    return ActivityRegistry({"updateUserStatus": update, "summarize": summarize, "shout": shout})


def agent(url: str) -> Agent:
    return Agent(url, model="scripted", tools=tools(), activities=activities())


def contents(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


def test_008_output_path_through_agent_run(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(
        answer(
            {
                "_tool": "updateUserStatus",
                "newStatus": "inactive",
                "_outputPath": "†data.user.status",
            }
        ),
        answer(output="done"),
    )
    context = Context.of([{"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}}])
    result = agent(url).run("Deactivate Alex", context=context)
    assert result.output == "done" and result.context is context
    assert context["†data.user.status"] == "inactive"
    assert context["†data.user.name"] == "Alex"
    written = context.messages[-1]
    assert written.call is not None and written.call["newStatus"] == "inactive"
    assert written.date is not None and written.path == ("user", "status")
    # the model saw the initial context, then the update; never the metadata
    first, second = contents(server.requests[0]), contents(server.requests[1])
    assert "## Data: ¶data" in first and '\\"status\\": \\"active\\"' in first
    assert "Context updated" in second and '\\"status\\": \\"inactive\\"' in second
    assert "_date" not in second and written.date not in second
    # the tool is offered with its _outputPath, meta fields first
    schema = server.requests[0]["tools"][0]["function"]["parameters"]
    (offered,) = [
        s
        for s in schema["properties"]["calls"]["items"]["anyOf"]
        if s["properties"]["function"]["const"] == "updateUserStatus"  # several tools offered
    ]
    assert list(offered["properties"]) == ["function", "_outputPath", "newStatus"]
    assert offered["properties"]["_outputPath"]["pattern"] == "^†"
    assert result.steps[0].calls[0].result.metadata["outputPath"] == "†data.user.status"


def test_prescribed_path_and_chaining_in_one_answer(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(
        answer(
            {"_tool": "summarize", "text": "†input.article"},  # prescribed: †state.summary
            {"_tool": "shout", "text": "†state.summary", "_outputPath": "†state.loud"},
        ),
        answer(output="ok"),
    )
    context = Context.of(
        [
            {"type": "input", "input": {"article": "long body of text here"}},
            {"type": "state", "state": {}, "schema": {"properties": {"summary": {}, "loud": {}}}},
        ]
    )
    result = agent(url).run("Summarize then shout", context=context)
    assert context["state.summary"] == "long body"
    assert context["state.loud"] == "LONG BODY"  # read what the call before it wrote
    summarize, shout = result.steps[0].calls
    assert summarize.arguments == {"text": "long body of text here"}  # resolved
    assert shout.arguments["text"] == "long body"
    assert "Schema for ¶state" in contents(server.requests[0])


def test_methods_and_a_bad_reference_go_back_to_the_model(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(
        answer(
            {"_tool": "shout", "text": "a", "_outputPath": "†state.log", "_outputMethod": "push"},
            {"_tool": "shout", "text": "b", "_outputPath": "†state.log", "_outputMethod": "push"},
            {"_tool": "shout", "text": "†input.nothing"},
        ),
        answer(output="ok"),
    )
    result = agent(url).run("log", context=[{"type": "state", "state": {"log": ["start"]}}])
    assert result.context is not None
    assert result.context["state.log"] == ["start", "A", "B"]
    failed = result.steps[0].calls[2].result
    assert not failed.success and "†input.nothing resolves to nothing" in str(failed.error)
    (results,) = [json.loads(m["content"]) for m in server.tool_messages(1)]
    assert "†input.nothing resolves to nothing" in results["results"][2]["error"]


def test_a_dynamic_path_against_its_pattern_is_fed_back(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(
        answer({"_tool": "shout", "text": "x", "_outputPath": "state.x"}),  # no dagger
        answer({"_tool": "shout", "text": "x", "_outputPath": "†state.x"}),
        answer(output="ok"),
    )
    result = agent(url).run("x", context=[{"type": "state", "state": {}}])
    assert result.context is not None and result.context["state.x"] == "X"
    retry = contents(server.requests[1])
    assert "_outputPath" in retry and "pattern" in retry


def test_013_global_input_with_instanced_state(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "updateTask",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "updateTask"},
                "_outputPath": {"type": "string", "pattern": "^†"},
                "newTask": {"type": "string"},
                "newStatus": {"type": "string"},
            },
        },
    )
    server.add(
        answer(
            {
                "_tool": "updateTask",
                "_instance": "employee_B",
                "newTask": "Finalize the quarterly report",
                "newStatus": "High Priority",
                "_outputPath": "†state",
            }
        ),
        answer(output="done"),
    )

    def update_task(c: Any) -> dict[str, Any]:
        return {"task": args(c)["newTask"], "status": args(c)["newStatus"]}

    update = ActivityRegistry({"updateTask": update_task})
    context = Context.of(EMPLOYEES_013)
    Agent(url, model="scripted", tools=registry, activities=update).run("go", context=context)
    assert context.view("state", "employee_B") == {
        "task": "Finalize the quarterly report",
        "status": "High Priority",
    }
    assert context.view("state", "employee_A") == {
        "task": "Draft initial proposal",
        "status": "In Progress",
    }
    # every tool is offered an _instance of the context's ids
    item = server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["calls"]["items"]
    assert item["properties"]["_instance"]["enum"] == ["employee_A", "employee_B"]


COMMENTS = [f"comment number {i} " + "word " * (i % 7) for i in range(20)]
CLASSIFY = {
    "type": "object",
    "properties": {
        "_tool": {"const": "classify"},
        "_outputPath": {"const": "†state.verdict"},
        "text": {"type": "string"},
    },
    "required": ["text"],
}


def classify(c: Any) -> dict[str, Any]:
    text = args(c)["text"]
    words = len(text.split())
    return {"words": words, "decision": "reject" if words > 5 else "approve"}


def test_one_request_over_20_instances_equals_20_requests(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register("classify", CLASSIFY)
    acts = ActivityRegistry({"classify": classify})
    ids = [f"i{n}" for n in range(20)]
    # one request over 20 instances
    server.add(
        answer(*({"_tool": "classify", "_instance": i, "text": "†input.comment"} for i in ids)),
        answer(output="done"),
    )
    batch = Context.of(
        [
            {"type": "input", "_instance": i, "comment": c}
            for i, c in zip(ids, COMMENTS, strict=True)
        ]
    )
    Agent(url, model="scripted", tools=registry, activities=acts).run("moderate", context=batch)
    assert len(server.requests) == 2
    # twenty separate requests
    separate: list[Any] = []
    for comment in COMMENTS:
        server.add(answer({"_tool": "classify", "text": "†input.comment"}), answer(output="done"))
        one = Context.of([{"type": "input", "comment": comment}])
        Agent(url, model="scripted", tools=registry, activities=acts).run("moderate", context=one)
        separate.append(one.view("state"))
    assert len(server.requests) == 2 + 2 * 20
    assert [batch.view("state", i) for i in ids] == separate
    assert {s["verdict"]["decision"] for s in separate} == {"approve", "reject"}  # not all the same
    assert batch.view("state") is None  # nothing leaked into the global context


def test_a_latent_output_is_written_at_its_prescribed_path(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "think",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "think"},
                "_outputPath": {"const": "†state.plan"},
                "_output": {"type": "object", "properties": {"steps": {"type": "array"}}},
                "goal": {"type": "string"},
            },
        },
    )
    server.add(
        answer({"_tool": "think", "goal": "x", "_output": {"steps": ["a", "b"]}}),
        answer(output="ok"),
    )
    agent = Agent(url, model="scripted", tools=registry, activities=ActivityRegistry())
    result = agent.run("plan", context=[{"type": "state", "state": {}}])
    assert result.context is not None and result.context["state.plan"] == {"steps": ["a", "b"]}
    assert result.steps[0].calls[0].route == "latent"


# -- the Activity context -----------------------------------------------------


@dataclass
class Deps:
    users: dict[str, str]


def test_an_activity_gets_a_typed_context(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "lookup",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "lookup"},
                "_outputPath": {"const": "†state.found"},
                "key": {"type": "string"},
            },
        },
    )
    seen: list[tuple[str, int, str, str | None]] = []

    def lookup(call: Any, ctx: ActivityContext[Deps]) -> dict[str, Any]:
        seen.append((ctx.run_id, ctx.step, ctx.call_id, ctx.instance))
        ctx.progress({"looking": args(call)["key"]})
        return {"name": ctx.deps.users[args(call)["key"]], "lang": ctx.get("†input.lang")}

    def plain(call: Any) -> str:  # one parameter: called with the call only, as before
        return "plain"

    registry.register("plain", {"type": "object", "properties": {"_tool": {"const": "plain"}}})
    server.add(
        answer(
            {"_tool": "lookup", "_instance": "a", "key": "u1"},
            {"_tool": "lookup", "_instance": "b", "key": "u2"},
            {"_tool": "plain"},
        ),
        answer(output="ok"),
    )
    agent = Agent(
        url,
        model="scripted",
        tools=registry,
        activities=ActivityRegistry({"lookup": lookup, "plain": plain}),
    )
    context = Context.of(
        [
            {"type": "input", "_instance": "a", "lang": "en"},
            {"type": "input", "_instance": "b", "lang": "fr"},
        ]
    )
    result = agent.run(
        "look up", context=context, deps=Deps(users={"u1": "Ann", "u2": "Bo"}), run_id="r1"
    )
    calls = result.steps[0].calls
    # (the two calls run concurrently: in either order)
    assert sorted(seen, key=str) == [
        ("r1", 0, calls[0].call_id, "a"),
        ("r1", 0, calls[1].call_id, "b"),
    ]
    assert calls[0].progress == [{"looking": "u1"}]
    assert context.view("state", "a") == {"found": {"name": "Ann", "lang": "en"}}
    assert context.view("state", "b") == {"found": {"name": "Bo", "lang": "fr"}}
    assert calls[2].result.data == "plain"


# -- approval -----------------------------------------------------------------


def _transfer_tools() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        "transfer",
        {
            "type": "object",
            "properties": {"_tool": {"const": "transfer"}, "amount": {"type": "integer"}},
            "required": ["amount"],
        },
    )
    return registry


def _recording_transfer() -> tuple[list[int], Any]:
    """A ``transfer`` Activity and the amounts it was run with."""
    ran: list[int] = []

    def transfer(call: Any) -> dict[str, Any]:
        ran.append(args(call)["amount"])
        return {"sent": args(call)["amount"]}

    return ran, transfer


@pytest.mark.parametrize("marked", ["in code", "in the spec"])
def test_a_call_requiring_approval_waits_for_a_human(
    llm: tuple[ScriptedLLM, str], tmp_path: Path, marked: str
) -> None:
    """Parked in the real SQLite store; the decisions are POSTed to the real endpoint; the
    approved call runs (and writes its _outputPath), the denied one never runs."""
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "transfer",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "transfer"},
                "_outputPath": {"const": "†state.receipts"},
                "_outputMethod": {"const": "push"},
                "amount": {"type": "integer"},
            },
            "required": ["amount"],
            **({"x-requires-approval": True} if marked == "in the spec" else {}),
        },
    )
    assert registry["transfer"].requires_approval == (marked == "in the spec")
    assert "x-requires-approval" not in registry["transfer"].parameters
    ran, transfer = _recording_transfer()

    server.add(
        answer({"_tool": "transfer", "amount": 10}, {"_tool": "transfer", "amount": 5000}),
        answer(output="waiting for approval"),
        answer(output="one sent, one denied"),
    )
    context = Context.of([{"type": "state", "state": {}}])
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store:
        agent = Agent(
            url,
            model="scripted",
            tools=registry,
            activities=ActivityRegistry({"transfer": transfer}),
            capabilities=[
                PendingDelivery(store),
                RequireApproval({"transfer"} if marked == "in code" else ()),
            ],
        )
        first = agent.run("pay", context=context)
        assert ran == [] and first.output == "waiting for approval"
        small, large = first.steps[0].calls
        assert small.pending and large.pending
        parked = store.get(first.run_id, small.call_id)
        assert parked is not None and parked.arguments["_approval"]["amount"] == 10
        with serve_asgi(pending_app(store)) as endpoint:
            path = f"{endpoint}/runs/{first.run_id}/tool-results"
            for call_id, decision in (
                (small.call_id, {"approved": True}),
                (large.call_id, {"approved": False, "reason": "over the limit"}),
            ):
                reply = httpx.post(path, json={"call_id": call_id, "result": decision})
                assert reply.status_code == 200, reply.text
        second = agent.run(first.messages, run_id=first.run_id, context=context)
    assert ran == [10]  # the approved call ran, the denied one never did
    delivered = {d.call_id: d.result for d in second.steps[0].delivered}
    assert delivered[small.call_id].success and delivered[small.call_id].data == {"sent": 10}
    denied = delivered[large.call_id]
    assert not denied.success and denied.error == "a human denied this call: over the limit"
    assert context["state.receipts"] == [{"sent": 10}]
    told = contents(server.requests[2])
    assert "over the limit" in told and '\\"sent\\": 10' in told


def test_a_call_run_after_approval_keeps_its_progress(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """An async-generator Activity approved on resume: its progress is told (``tool-result``
    events before the call's result) and recorded, as when it runs without approval."""
    server, url = llm
    registry = _transfer_tools()

    async def transfer(call: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"stage": "checking"}
        await asyncio.sleep(0)
        yield {"sent": args(call)["amount"]}

    server.add(
        answer({"_tool": "transfer", "amount": 10}),
        answer(output="waiting for approval"),
        answer(output="sent"),
    )
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store:
        agent = Agent(
            url,
            model="scripted",
            tools=registry,
            activities=ActivityRegistry({"transfer": transfer}),
            capabilities=[PendingDelivery(store), RequireApproval({"transfer"})],
        )
        first = agent.run("pay 10")
        (parked,) = first.steps[0].calls
        store.submit(first.run_id, parked.call_id, {"approved": True})

        async def resume() -> list[AgentEvent]:
            async with agent:
                return [e async for e in agent.astream(first.messages, run_id=first.run_id)]

        events = asyncio.run(resume())
    told = [(e.type, e.data) for e in events if e.call_id == parked.call_id]
    assert told == [
        ("tool-result", {"preliminary": True, "output": {"stage": "checking"}}),
        ("tool-call.complete", told[-1][1]),
    ]
    assert told[-1][1]["data"] == {"sent": 10}
    result = events[-1].result
    assert result is not None and result.output == "sent"
    (delivered,) = result.steps[0].delivered
    assert delivered.progress == [{"stage": "checking"}]
    assert delivered.result.data == {"sent": 10}


def test_a_call_repeating_one_that_waits_for_approval_is_not_asked_again(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """A model that calls ``transfer`` again after each "waits for approval" result: one human
    decision per distinct call (the same answer's twin included), the repeat told it already
    waits, and a step that only repeats waiting calls pauses the run instead of looping on."""
    server, url = llm
    ran, transfer = _recording_transfer()

    server.add(
        answer({"_tool": "transfer", "amount": 50}, {"_tool": "transfer", "amount": 50}),
        answer({"_tool": "transfer", "amount": 50}, {"_tool": "transfer", "amount": 60}),
        answer({"_tool": "transfer", "amount": 60}),
        answer({"_tool": "transfer", "amount": 50}),  # resumed, still undecided
        answer(output="never asked"),
    )
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store:
        agent = Agent(
            url,
            model="scripted",
            tools=_transfer_tools(),
            activities=ActivityRegistry({"transfer": transfer}),
            capabilities=[PendingDelivery(store), RequireApproval({"transfer"})],
        )
        first = agent.run("Send 50, then 60", max_steps=8)
        waiting = store.pending(first.run_id)
        assert [p.arguments["_approval"]["amount"] for p in waiting] == [50, 60]
        assert len(first.steps) == 3 and len(server.requests) == 3
        assert not first.finished and first.output is None
        fifty, twin = first.steps[0].calls
        sixty = first.steps[1].calls[1]
        assert fifty.pending and sixty.pending and not twin.pending
        assert sorted(first.pending) == sorted([fifty.call_id, sixty.call_id])
        for repeat in (twin, first.steps[1].calls[0]):
            assert repeat.repeats == fifty.call_id and not repeat.pending
            result = repeat.result
            assert result is not None and result.success and result.data is not None
            assert result.data["status"] == "pending"
            assert result.data["pendingToolCallId"] == fifty.call_id
        assert first.steps[2].calls[0].repeats == sixty.call_id
        said = contents(server.requests[2])
        assert "already waits for a human" in said
        # a resumed run before any decision: the store still knows the call waits
        second = agent.run(first.messages, run_id=first.run_id)
        assert len(second.steps) == 1 and not second.finished
        assert second.steps[0].calls[0].repeats == fifty.call_id
        assert second.pending == [fifty.call_id]
        assert len(store.pending(first.run_id)) == 2
    assert ran == []
