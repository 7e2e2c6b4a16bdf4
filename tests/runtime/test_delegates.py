"""Delegates and scopes (related/014, 015) through ``Agent.run`` against the
scripted OpenAI-protocol server: the documents' worked examples with their inputs and expected
sub-request contexts, execution-time and upfront resolution, scopes for an Activity, and the
limits (depth, loops, LLM requests) as typed, located failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.test_agent_context import answer
from tests.scripted_llm import ScriptedLLM
from toolbind.runtime import (
    ActivityContext,
    ActivityRegistry,
    Agent,
    DelegateRequest,
    Delegates,
    ToolRegistry,
)
from toolbind.runtime.context import Context
from toolbind.runtime.errors import DelegateDefinitionError


def system_of(body: dict[str, Any]) -> str | None:
    first = body["messages"][0]
    return first["content"] if first.get("role") == "system" else None


def context_message(body: dict[str, Any]) -> str:
    """The rendered context a request carries (the user message the Agent adds for it)."""
    (found,) = [
        m["content"]
        for m in body["messages"]
        if m.get("role") == "user" and str(m.get("content", "")).startswith("Context (")
    ]
    return found


def rendered(items: list[dict[str, Any]]) -> str:
    return Context.of(items).render()


TRANSLATOR = {
    "context": [{"type": "system", "message": "You are a translator."}],
    "schema": {
        "type": "object",
        "properties": {"translation": {"type": "string"}},
        "required": ["translation"],
    },
}


def test_015_instancing_with_scoped_delegates(llm: tuple[ScriptedLLM, str]) -> None:
    """015 "Instancing with Scoped Delegates": two instances, two delegated calls; each
    sub-request's context is the delegate's own plus that instance's state, nothing else."""
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "translate",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "translate"},
                "_delegate": {"const": "translatorDelegate"},
                "_scopes": {"type": "array", "items": {"enum": ["state", "input"]}},
                "_outputPath": {"const": "†state.result"},
            },
        },
    )
    server.add(
        # the LLM's solution, as the document gives it
        answer(
            {
                "_tool": "translate",
                "_delegate": "translatorDelegate",
                "_instance": "①",
                "_scopes": ["state"],
            },
            {
                "_tool": "translate",
                "_delegate": "translatorDelegate",
                "_instance": "②",
                "_scopes": ["state"],
            },
        ),
        answer(output={"translation": "same"}),  # the two sub-requests (run concurrently)
        answer(output={"translation": "same"}),
        answer(output="translated"),
    )
    context = Context.of(
        [
            {"type": "state", "_instance": "①", "text": "Hello"},
            {"type": "state", "_instance": "②", "text": "Bonjour"},
        ]
    )
    agent = Agent(
        url,
        model="scripted",
        tools=registry,
        activities=ActivityRegistry(),
        capabilities=[Delegates(requests={"translatorDelegate": TRANSLATOR})],
    )
    result = agent.run("Translate both", context=context)
    assert result.output == "translated" and len(server.requests) == 4
    subs = [b for b in server.requests if system_of(b) == "You are a translator."]
    assert len(subs) == 2
    # CONTEXT FOR DELEGATE ① / ② (015): the system message, then only that instance's state
    assert sorted(context_message(b) for b in subs) == sorted(
        [
            rendered([{"type": "state", "text": "Hello"}]),
            rendered([{"type": "state", "text": "Bonjour"}]),
        ]
    )
    for record in result.steps[0].calls:
        assert record.route == "explicit" and record.result.success, record.result
        assert record.result.data == {"translation": "same"}
        assert record.result.metadata["execution"] == "delegate"
    # each output written in its own instance; nothing leaked into the global state
    assert context.view("state", "①") == {"text": "Hello", "result": {"translation": "same"}}
    assert context.view("state", "②") == {"text": "Bonjour", "result": {"translation": "same"}}
    assert context.view("state") is None
    # the parent offered _delegate and _scopes right after _activity, as the tool declares them
    item = server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["calls"]["items"]
    assert list(item["properties"])[:5] == [
        "_tool",
        "_activity",
        "_delegate",
        "_scopes",
        "_instance",
    ]


def test_015_scoping_a_delegates_context(llm: tuple[ScriptedLLM, str], tmp_path: Path) -> None:
    """015 "Scoping a Delegate's Context": the Orchestrator's state is appended to the
    Summarizer's own context (a YAML file beside nothing: found through ``delegates``); the
    parent's input, not scoped, never reaches it."""
    server, url = llm
    summarizer = tmp_path / "summarizer.yaml"
    summarizer.write_text(
        "context:\n"
        "  - type: system\n"
        "    message: You are an expert summarizer.\n"
        "schema:\n"
        "  type: string\n",
        encoding="utf-8",
    )
    registry = ToolRegistry()
    registry.register(
        "summarizeArticle",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "summarizeArticle"},
                "_delegate": {"type": "string", "enum": ["SummarizerAgent"]},
                "_scopes": {"const": ["state"]},
            },
        },
    )
    server.add(
        answer({"_tool": "summarizeArticle", "_delegate": "SummarizerAgent", "_scopes": ["state"]}),
        answer(output="A short summary."),
        answer(output="done"),
    )
    agent = Agent(
        url,
        model="scripted",
        tools=registry,
        activities=ActivityRegistry(),
        capabilities=[Delegates(requests={"SummarizerAgent": summarizer})],
    )
    result = agent.run(
        "Summarize the article",
        context=[
            {"type": "state", "articleText": "A long and complex article..."},
            {"type": "input", "secret": "not for the summarizer"},
        ],
    )
    (record,) = result.steps[0].calls
    assert record.result.success and record.result.data == "A short summary."
    sub = server.requests[1]
    assert system_of(sub) == "You are an expert summarizer."
    assert context_message(sub) == rendered(
        [{"type": "state", "articleText": "A long and complex article..."}]
    )
    assert "not for the summarizer" not in json.dumps(sub["messages"], ensure_ascii=False)
    # the parent's model gets the delegate's output as the call's result
    told = json.loads(server.tool_messages(2)[0]["content"])
    assert told["results"][0]["data"] == "A short summary."


SPEAKER_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "recipientId": {"type": "string"},
        "messageBody": {"type": "string"},
    },
}
SPEAKER: dict[str, Any] = {
    "context": [
        {"type": "system", "message": "You are an expert in messaging in English."},
        {"type": "input", "schema": SPEAKER_INPUT},
        {
            "type": "tool",
            "tool": {
                "deliver": {
                    "type": "object",
                    "properties": {
                        "recipientId": {"type": "string"},
                        "messageBody": {"type": "string"},
                    },
                    "required": ["recipientId", "messageBody"],
                }
            },
        },
    ],
    "schema": {
        "type": "object",
        "properties": {"status": {"type": "string"}},
        "required": ["status"],
    },
}
SPEAKER_URL = "http://example.com/agents/speaker_EN"


def speaker_agent(
    url: str, tmp_path: Path, activities: ActivityRegistry, **options: Any
) -> tuple[Agent, Path]:
    """An orchestrator offering ``sendMessage``, delegated to 014's speaker_EN (a saved file)."""
    saved = tmp_path / "speaker_EN.json"
    saved.write_text(json.dumps(SPEAKER), encoding="utf-8")
    registry = ToolRegistry()
    send_message_tool(registry)
    delegates = Delegates(requests={SPEAKER_URL: saved}, **options)
    agent = Agent(
        url,
        model="scripted",
        tools=registry,
        activities=activities,
        capabilities=[delegates],
    )
    return agent, saved


def send_message_tool(registry: ToolRegistry) -> None:
    registry.register(
        "sendMessage",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "sendMessage"},
                "_delegate": {"const": SPEAKER_URL},
                "userId": {"type": "string"},
                "text": {"type": "string"},
            },
        },
    )


def test_014_flexible_input_mapping_at_execution_time(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """014's example: the caller's ``userId``/``text`` go in as the input, beside the delegate's
    own expected schema; the delegate's model maps them onto its tool; its output is the
    result. The delegate is a saved Request file (its tool compiled by toolbind); the URL is
    mapped to it, never fetched."""
    server, url = llm
    delivered: list[dict[str, Any]] = []

    def deliver(c: Any) -> dict[str, Any]:
        delivered.append(c.model_dump(mode="json", by_alias=True, exclude_unset=True))
        return {"queued": True}

    server.add(
        # CALL GENERATED BY THE ORCHESTRATOR
        answer(
            {
                "_tool": "sendMessage",
                "_delegate": SPEAKER_URL,
                "userId": "u_123",
                "text": "Hello, world!",
            }
        ),
        # the delegate's model bridges the gap: userId → recipientId, text → messageBody
        answer({"_tool": "deliver", "recipientId": "u_123", "messageBody": "Hello, world!"}),
        answer(output={"status": "sent"}),
        answer(output="message sent"),
    )
    agent, saved = speaker_agent(url, tmp_path, ActivityRegistry({"deliver": deliver}))
    result = agent.run("Tell u_123 hello")
    assert result.output == "message sent"
    (record,) = result.steps[0].calls
    assert record.result.success and record.result.data == {"status": "sent"}, record.result
    assert record.result.metadata["delegate"] == str(saved)
    assert record.result.metadata["llm_requests"] == 2
    assert delivered == [
        {"_tool": "deliver", "recipientId": "u_123", "messageBody": "Hello, world!"}
    ]
    # FINAL CONTEXT FOR THE SUB-REQUEST: the system message, and the raw input with the
    # delegate's expected input schema
    sub = server.requests[1]
    assert system_of(sub) == "You are an expert in messaging in English."
    assert context_message(sub) == rendered(
        [
            {
                "type": "input",
                "input": {"userId": "u_123", "text": "Hello, world!"},
                "schema": SPEAKER_INPUT,
            }
        ]
    )
    # the sub-request offered the delegate's own tool, not the parent's
    offered = json.dumps(sub["tools"])
    assert "deliver" in offered and "sendMessage" not in offered


def test_014_upfront_resolution_merges_input_and_output(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """Upfront: the parent's model sees the delegate's input schema merged into the tool's
    parameters; the delegate's output schema is the tool's output contract."""
    server, url = llm
    server.add(
        answer({"_tool": "sendMessage", "recipientId": "u_123", "messageBody": "Hi"}),
        answer(output={"status": "sent"}),
        answer(output="ok"),
    )
    agent, _ = speaker_agent(url, tmp_path, ActivityRegistry(), resolution="upfront")
    (offered,) = agent.composition().tools
    assert offered.output_schema == SPEAKER["schema"]
    assert agent.run("hi").steps[0].calls[0].result.data == {"status": "sent"}
    item = server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["calls"]["items"]
    properties = list(item["properties"])
    assert properties[:3] == ["_tool", "_activity", "_delegate"]
    assert {"userId", "text", "recipientId", "messageBody"} <= set(properties)
    assert "_output" not in properties  # the delegate produces it, the model does not
    sub = context_message(server.requests[1])
    assert '"recipientId": "u_123"' in sub


def test_an_anonymous_delegate_sees_only_its_scopes(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "draftReply",
        {
            "type": "object",
            "description": "Draft a reply to the customer.",
            "properties": {
                "_tool": {"const": "draftReply"},
                "_delegate": {"const": "anonymous"},
                "_scopes": {"const": ["input.customer"]},
                "_output": {"type": "object", "properties": {"reply": {"type": "string"}}},
                "tone": {"type": "string"},
            },
        },
    )
    server.add(
        answer({"_tool": "draftReply", "tone": "warm"}),
        answer(output={"reply": "Dear Ann"}),
        answer(output="drafted"),
    )
    agent = Agent(url, model="scripted", tools=registry, activities=ActivityRegistry())
    result = agent.run(
        "reply",
        context=[
            {"type": "input", "customer": {"name": "Ann"}, "ticket": "refund please"},
            {"type": "state", "internalNotes": "VIP"},
        ],
    )
    (record,) = result.steps[0].calls
    assert record.result.data == {"reply": "Dear Ann"}
    sub = server.requests[1]
    assert "draftReply" in str(system_of(sub)) and "Draft a reply" in str(system_of(sub))
    shown = context_message(sub)
    assert '"name": "Ann"' in shown and '"tone": "warm"' in shown
    assert "refund please" not in shown and "VIP" not in shown
    # the delegate is asked for the tool's output schema; the parent did not offer _output
    sub_output = sub["tools"][0]["function"]["parameters"]["properties"]["output"]
    assert "reply" in json.dumps(sub_output)
    parent_item = server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["calls"]
    assert "_output" not in parent_item["items"]["properties"]


def test_015_scopes_give_an_activity_only_their_context(llm: tuple[ScriptedLLM, str]) -> None:
    """015 "Providing Context to an Activity": ``_scopes: ["state"]`` hands the state to the
    Activity; what is not scoped (the input) is not in its context."""
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "logEvent",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "logEvent"},
                "_scopes": {"type": "array", "items": {"enum": ["state", "input"]}},
                "eventName": {"type": "string"},
            },
            "required": ["eventName"],
        },
    )
    tracked: list[tuple[str, Any, Any]] = []

    def log_event(c: Any, ctx: ActivityContext[None]) -> str:
        event = c.model_dump(by_alias=True)["eventName"]
        tracked.append((event, ctx.state.userId.get(), ctx.get("†input.page")))
        return "logged"

    server.add(
        answer(
            {"_tool": "logEvent", "_scopes": ["state"], "eventName": "user_login"},
            {"_tool": "logEvent", "eventName": "page_view"},  # no _scopes: the whole context
        ),
        answer(output="ok"),
    )
    agent = Agent(
        url,
        model="scripted",
        tools=registry,
        activities=ActivityRegistry({"logEvent": log_event}),
    )
    agent.run(
        "log it",
        context=[{"type": "state", "userId": "u_42"}, {"type": "input", "page": "/home"}],
    )
    assert sorted(tracked) == [("page_view", "u_42", "/home"), ("user_login", "u_42", None)]


# -- limits: depth, loops, the tree's LLM requests ------------------------------------------------


def chain_request(name: str, next_delegate: str | None) -> dict[str, Any]:
    context: list[dict[str, Any]] = [{"type": "system", "message": f"You are {name}."}]
    if next_delegate is not None:
        context.append(
            {
                "type": "tool",
                "tool": {
                    "ask": {
                        "type": "object",
                        "properties": {
                            "_delegate": {"const": next_delegate},
                            "q": {"type": "string"},
                        },
                    }
                },
            }
        )
    return {"context": context, "schema": {"type": "string"}}


def ask_registry(target: str) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        "ask",
        {
            "type": "object",
            "properties": {"_delegate": {"const": target}, "q": {"type": "string"}},
        },
    )
    return registry


def test_a_delegate_loop_is_refused(llm: tuple[ScriptedLLM, str], tmp_path: Path) -> None:
    server, url = llm
    (tmp_path / "a.json").write_text(json.dumps(chain_request("A", "b.json")), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(chain_request("B", "a.json")), encoding="utf-8")
    server.add(
        answer({"_tool": "ask", "q": "x"}),  # parent → a.json
        answer({"_tool": "ask", "q": "x"}),  # A → b.json
        answer({"_tool": "ask", "q": "x"}),  # B → a.json: a loop, refused without a request
        answer(output="B gave up"),
        answer(output="A gave up"),
        answer(output="done"),
    )
    delegates = Delegates(requests={"a.json": tmp_path / "a.json", "b.json": tmp_path / "b.json"})
    agent = Agent(
        url,
        model="scripted",
        tools=ask_registry("a.json"),
        activities={},
        capabilities=[delegates],
    )
    result = agent.run("go")
    assert result.output == "done" and len(server.requests) == 6
    loop_told = json.loads(server.tool_messages(3)[-1]["content"])["results"][0]
    assert loop_told["success"] is False
    assert loop_told["metadata"]["error_type"] == "DelegateLoop"
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert loop_told["error"].startswith(f"{a} → {b} → {a}: error: delegate {a} enters itself")


def test_depth_and_llm_request_limits(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    requests = {
        "one": chain_request("one", "two"),
        "two": chain_request("two", "three"),
        "three": chain_request("three", None),
    }
    # depth: one → two is depth 2; two → three would be 3 > max_depth=2
    server.add(
        answer({"_tool": "ask", "q": "x"}),
        answer({"_tool": "ask", "q": "x"}),
        answer({"_tool": "ask", "q": "x"}),
        answer(output="two done"),
        answer(output="one done"),
        answer(output="done"),
    )
    agent = Agent(
        url,
        model="scripted",
        tools=ask_registry("one"),
        activities={},
        capabilities=[Delegates(requests=requests, max_depth=2)],
    )
    assert agent.run("go").output == "done"
    deepest = json.loads(server.tool_messages(3)[-1]["content"])["results"][0]
    assert deepest["metadata"]["error_type"] == "DelegateLimitExceeded"
    assert "ask(three)" in deepest["error"] and "delegate depth 3" in deepest["error"]
    assert "expected at most 2 nested delegates" in deepest["error"]
    # LLM requests: the tree may make one; "one" needs a second step, which is refused
    server.requests.clear()
    server.add(
        answer({"_tool": "ask", "q": "x"}),
        answer({"_tool": "ask", "q": "x"}),  # one's first step: it calls two
        answer(output="done"),
    )
    agent = Agent(
        url,
        model="scripted",
        tools=ask_registry("one"),
        activities={},
        capabilities=[Delegates(requests=requests, max_llm_requests=1)],
    )
    record = agent.run("go").steps[0].calls[0]
    assert not record.result.success
    assert record.result.metadata["error_type"] == "DelegateLimitExceeded"
    assert "made 1 LLM requests — expected at most 1" in str(record.result.error)
    assert len(server.requests) == 3  # parent, one's step 1; two never asked; parent again


def test_a_bad_saved_request_is_a_located_failure(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    server, url = llm
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"context": [{"type": "system", "message": "x"}, {"type": "video"}]}))
    server.add(answer({"_tool": "ask", "q": "x"}), answer(output="done"))
    agent = Agent(
        url,
        model="scripted",
        tools=ask_registry(str(bad)),
        activities={},
    )
    record = agent.run("go").steps[0].calls[0]
    assert record.result.metadata["error_type"] == "DelegateDefinitionError"
    assert str(record.result.error).startswith(f"{bad}#/context/1: error: context item")
    with pytest.raises(Exception, match=r"missing.json: error: cannot read the delegate"):
        DelegateRequest.load(tmp_path / "missing.json")


def test_014_music_makers_hierarchical_and_direct(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """014 "Music makers": the Producer delegates a song to the Composer, whose own tool delegates
    to the Sound-Designer (two levels); then the Producer calls the Sound-Designer directly. Each
    level offers its own tools only; each result flows back up as its caller's call output."""
    server, url = llm
    designer = {
        "context": [{"type": "system", "message": "You design sounds on synthesizers."}],
        "schema": {"type": "object", "properties": {"audio": {"type": "string"}}},
    }
    composer = {
        "context": [
            {"type": "system", "message": "You compose songs."},
            {
                "type": "tool",
                "tool": {
                    "synth": {
                        "type": "object",
                        "properties": {
                            "_delegate": {"const": "sound_designer.yaml"},
                            "sound": {"type": "string"},
                        },
                    }
                },
            },
        ],
        "schema": {"type": "object", "properties": {"song": {"type": "string"}}},
    }
    (tmp_path / "composer.json").write_text(json.dumps(composer), encoding="utf-8")
    (tmp_path / "sound_designer.yaml").write_text(json.dumps(designer), encoding="utf-8")
    producer = ToolRegistry()
    for name, target, param in (
        ("compose", "composer.json", "direction"),
        ("design", "sound_designer.yaml", "sound"),
    ):
        producer.register(
            name,
            {
                "type": "object",
                "properties": {"_delegate": {"const": target}, param: {"type": "string"}},
            },
        )
    server.add(
        answer({"_tool": "compose", "direction": "a sad ballad"}),  # Producer → Composer
        answer({"_tool": "synth", "sound": "C minor pad"}),  # Composer → Sound-Designer
        answer(output={"audio": "pad.wav"}),  # Sound-Designer (depth 2)
        answer(output={"song": "ballad over pad.wav"}),  # Composer
        answer({"_tool": "design", "sound": "rain foley"}),  # Producer → Sound-Designer
        answer(output={"audio": "rain.wav"}),
        answer(output="record done"),
    )
    delegates = Delegates(
        requests={
            "composer.json": tmp_path / "composer.json",
            "sound_designer.yaml": tmp_path / "sound_designer.yaml",
        }
    )
    agent = Agent(
        url,
        model="scripted",
        tools=producer,
        activities={},
        capabilities=[delegates],
    )
    result = agent.run("Make a record", max_steps=3)
    assert result.output == "record done" and len(server.requests) == 7
    song, effect = result.steps[0].calls[0], result.steps[1].calls[0]
    assert song.result.data == {"song": "ballad over pad.wav"}
    assert song.result.metadata["llm_requests"] == 2  # the Composer's own (not the nested one)
    assert effect.result.data == {"audio": "rain.wav"}

    def offered(index: int) -> str:
        return json.dumps(server.requests[index]["tools"])

    assert '"compose"' in offered(0) and '"synth"' not in offered(0)
    assert '"synth"' in offered(1) and '"compose"' not in offered(1)
    assert system_of(server.requests[2]) == "You design sounds on synthesizers."
    assert '"sound": "C minor pad"' in context_message(server.requests[2])
    assert '"sound": "rain foley"' in context_message(server.requests[5])
    # the Composer read the Sound-Designer's output as its call's result
    told = json.loads(server.tool_messages(3)[-1]["content"])["results"][0]
    assert told["data"] == {"audio": "pad.wav"}


def test_tool_choice_none_takes_an_output_without_calls(llm: tuple[ScriptedLLM, str]) -> None:
    """What a delegate without tools is asked: ``tool_choice="none"`` (it refused every answer,
    demanding a call it also forbade)."""
    server, url = llm
    server.add(answer(output={"translation": "Hallo"}))
    agent = Agent(url, model="scripted", tools=ask_registry("x.json"), activities={})
    result = agent.run("x", TRANSLATOR["schema"], tool_choice="none", max_steps=1)
    assert result.finished and len(server.requests) == 1
    assert result.output.model_dump() == {"translation": "Hallo"}


def test_upfront_resolution_of_a_missing_delegate_fails_before_any_request(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    server, url = llm
    agent = Agent(
        url,
        model="scripted",
        tools=ask_registry(str(tmp_path / "gone.json")),
        activities={},
        capabilities=[Delegates(resolution="upfront")],
    )
    with pytest.raises(DelegateDefinitionError, match=r"gone.json: error: cannot read"):
        agent.run("go")
    assert server.requests == []
