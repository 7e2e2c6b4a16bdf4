"""The runtime core against a real HTTP server speaking the OpenAI protocol (scripted answers).

The real openai client and instructor run: every request crosses a socket to ``ScriptedLLM``,
which records it, so the tests assert how many LLM requests were made and what was fed back.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from pydantic import BaseModel, Field

from tests._servers import serve_asgi
from tests.conftest import REPO
from tests.scripted_llm import Reply, ScriptedLLM, call, error
from toolbind._compose import compose as compose_schema
from toolbind._compose import for_grammar
from toolbind.compiler import load_package
from toolbind.runtime import (
    Activity,
    ActivityRegistry,
    Agent,
    AgentEvent,
    ModelSettings,
    Tool,
    ToolBinding,
    ToolRegistry,
    ToolResult,
    compose,
)
from toolbind.runtime.capabilities import PendingDelivery
from toolbind.runtime.errors import LLMError, RegistrationError, ResponseValidationError, UsageError
from toolbind.runtime.pending import Pending, PendingStore, pending_app


@pytest.fixture(scope="module")
def seeds() -> ModuleType:
    return load_package(REPO / "generated", "seeds")


@pytest.fixture
def tools(seeds: ModuleType) -> ToolRegistry:
    return ToolRegistry(seeds.TOOLS)


def weather(call: Any) -> dict[str, Any]:
    return {"temperature": 21.5, "conditions": f"sunny in {call.location}"}


@pytest.fixture
def activities() -> ActivityRegistry:
    return ActivityRegistry({"weatherCheck": weather})


def answer(*calls: dict[str, Any], output: Any = None) -> Reply:
    return call({"output": output, "calls": list(calls)})


WEATHER = {"_tool": "weatherCheck", "location": "Paris"}
SENTIMENT = {
    "_tool": "sentimentAnalysis",
    "text": "This is the best!",
    "_output": {"sentiment": "positive", "confidence": 0.99},
}


# -- registries ---------------------------------------------------------------------------------


def test_tool_from_a_raw_schema_gets_a_faithful_model() -> None:
    registry = ToolRegistry()
    binding = registry.register(
        "sentimentAnalysis",
        {
            "type": "object",
            "description": "Analyzes text sentiment",
            "properties": {
                "_tool": {"type": "string", "const": "sentimentAnalysis"},
                "text": {"type": "string", "minLength": 2},
                "_output": {
                    "type": "object",
                    "properties": {"sentiment": {"type": "string"}},
                    "additionalProperties": False,
                },
            },
            "required": ["text"],
        },
    )
    assert registry.names == ["sentimentAnalysis"]
    ok = binding.call_model.model_validate({"_tool": "sentimentAnalysis", "text": "hi"})
    assert ok.model_dump(by_alias=True, exclude_unset=True) == {
        "_tool": "sentimentAnalysis",
        "text": "hi",
    }
    for bad in (
        {"_tool": "sentimentAnalysis", "text": "h"},  # minLength
        {"_tool": "sentimentAnalysis", "text": 12},  # no coercion
        {"_tool": "sentimentAnalysis", "text": "hi", "_output": {"extra": 1}},  # closed output
    ):
        with pytest.raises(ValueError):
            binding.call_model.model_validate(bad)
    assert binding.output_model.model_validate({"sentiment": "x"})
    assert dict(binding.parameters)["properties"] == {"text": {"type": "string", "minLength": 2}}
    assert binding.output_schema is not None


def test_bad_registrations_are_located() -> None:
    """A registered schema is read by the compiler's seeds reader: its diagnostics, located."""
    registry = ToolRegistry()
    where = re.escape("tool 'a': <Tool.register('a')>")
    with pytest.raises(RegistrationError, match=where + r"#/properties/_tool/const: error: .*'b'"):
        registry.register("a", {"properties": {"_tool": {"const": "b"}}})
    with pytest.raises(
        RegistrationError, match=where + r"#/properties/_secret: error: unknown meta"
    ):
        registry.register("a", {"properties": {"_secret": {}}})
    with pytest.raises(
        RegistrationError, match=where + r"#/properties/x/type: error: unknown type"
    ):
        registry.register("a", {"properties": {"x": {"type": "nonsense"}}})
    with pytest.raises(RegistrationError, match="not callable"):
        ActivityRegistry().register("a", 3)  # pyright: ignore[reportArgumentType, reportCallIssue]


def test_last_registration_wins_but_toolsets_conflict_loudly(seeds: ModuleType) -> None:
    registry = ToolRegistry()
    registry.register_package(seeds)
    first = registry["greetUser"]
    registry.register("greetUser", {"properties": {"who": {"type": "string"}}})
    assert registry["greetUser"] is not first  # last one wins for a single registration
    other = replace(first, source="specs/other.yaml#/greetUser")
    registry.register_bindings(seeds.TOOLS)  # the same toolset again: fine
    with pytest.raises(RegistrationError) as info:
        registry.register_bindings([other])
    assert "specs/seeds.yaml" in str(info.value) and "specs/other.yaml" in str(info.value)
    registry.register_bindings([other], replace=True)
    assert registry["greetUser"].source == "specs/other.yaml#/greetUser"


def test_decorators_and_module_defaults() -> None:
    try:

        @Tool.register("echoTool")
        class EchoCall(BaseModel):
            """Echoes text."""

            text: str

        @Activity.register("echoTool", timeout=2, concurrent=False)
        def echo(call: Any) -> dict[str, Any]:
            return {"echo": call.text}

        binding = Tool["echoTool"]
        assert issubclass(binding.call_model, EchoCall) and binding.description == "Echoes text."
        assert binding.parameters["properties"] == {"text": {"title": "Text", "type": "string"}}
        entry = Activity.get("echoTool")
        assert entry is not None and entry.fn is echo and entry.timeout == 2
        assert not entry.concurrent
    finally:
        Tool.unregister("echoTool")
        Activity.unregister("echoTool")


def test_zero_config_activity_matching(tools: ToolRegistry) -> None:
    explicit = replace(tools["greetUser"], activity="greeter")
    composition = compose(
        [tools["weatherCheck"], tools["sentimentAnalysis"], explicit],
        activities={"weatherCheck", "greetUser"},
    )
    assert composition.activities == {
        "weatherCheck": "weatherCheck",  # same-name Activity
        "sentimentAnalysis": "",  # none: latent
        "greetUser": "greeter",  # explicit _activity beats the same-name Activity
    }


# -- composition and the Response type ----------------------------------------------------------


class Summary(BaseModel):
    summary: str


def test_compose_returns_the_seeds_schema_and_its_response(tools: ToolRegistry) -> None:
    composition = compose(tools, Summary, activities={"weatherCheck"})
    assert composition == compose_schema(list(tools), Summary, activities={"weatherCheck"})
    items = composition["properties"]["calls"]["items"]["anyOf"]
    assert [i["properties"]["_activity"] for i in items] == [
        {"const": ""},
        {"const": "weatherCheck"},
        {"const": ""},
        {"const": ""},
    ]
    response = composition.response
    parsed = response.model_validate_json(
        json.dumps({"output": {"summary": "ok"}, "calls": [WEATHER, SENTIMENT]})
    )
    assert isinstance(parsed.output, Summary)
    assert [type(c).__name__ for c in parsed.calls] == ["WeatherCheckCall", "SentimentAnalysisCall"]
    # a latent tool's _output is optional in the composed schema, so in the validator too
    latent = response.model_validate(
        {"output": None, "calls": [{"_tool": "sentimentAnalysis", "text": "x"}]}
    )
    assert latent.calls[0].output is None
    with pytest.raises(ValueError, match=r"calls\[0\] \(tool 'nope'\).*keyword: _tool"):
        response.model_validate({"output": None, "calls": [{"_tool": "nope"}]})
    # what a model is sent: the composed schema written for a grammar builder (the same answers)
    assert response.model_json_schema()["properties"] == for_grammar(composition)["properties"]


# -- request / run ------------------------------------------------------------------------------


def test_request_sends_the_composed_schema_and_returns_typed_calls(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer(WEATHER))
    agent = Agent(url, model="scripted", tools=tools, activities=activities)
    response = agent.request("Weather in Paris?")
    assert len(server.requests) == 1
    (call_,) = response.calls
    assert type(call_).__name__ == "WeatherCheckCall" and call_.location == "Paris"
    sent = server.requests[0]
    function = sent["tools"][0]["function"]
    expected = agent.composition()
    assert function["parameters"]["properties"] == for_grammar(expected)["properties"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": function["name"]}}
    assert sent["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


def test_run_routes_explicit_and_latent_calls_and_feeds_results_back(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer(WEATHER, SENTIMENT), answer(output="Sunny, and you sound happy."))
    agent = Agent(
        url, model="scripted", tools=tools, activities=activities, instructions="Be brief."
    )
    result = agent.run("Weather in Paris, and my mood?")
    assert result.finished and result.output == "Sunny, and you sound happy."
    assert len(server.requests) == 2 and len(result.steps) == 2
    first = result.steps[0]
    assert [(c.tool, c.route) for c in first.calls] == [
        ("weatherCheck", "explicit"),
        ("sentimentAnalysis", "latent"),
    ]
    assert first.calls[0].result.data == {"temperature": 21.5, "conditions": "sunny in Paris"}
    assert first.calls[1].result.data == {"sentiment": "positive", "confidence": 0.99}
    assert len(first.requests) == 1 and len(first.raw_responses) == 1
    (tool_message,) = server.tool_messages(1)
    fed = json.loads(tool_message["content"])["results"]
    assert [(r["tool"], r["success"], r["data"]) for r in fed] == [
        ("weatherCheck", True, {"temperature": 21.5, "conditions": "sunny in Paris"}),
        ("sentimentAnalysis", True, {"sentiment": "positive", "confidence": 0.99}),
    ]
    assert server.requests[1]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_arun_with_a_typed_output_and_max_steps(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer(output={"summary": "done"}), answer(WEATHER), answer(WEATHER))
    agent = Agent(url, model="scripted", tools=tools, activities=activities)

    async def main() -> None:
        result = await agent.arun("hi", Summary)
        assert isinstance(result.output, Summary) and result.output.summary == "done"
        limited = await agent.arun("again", Summary, max_steps=2)
        assert not limited.finished and limited.output is None and len(limited.steps) == 2
        response = await agent.arequest("one more", Summary)
        assert response.calls == [] and response.output == Summary(summary="x")

    server.add(answer(output={"summary": "x"}))
    asyncio.run(main())
    assert len(server.requests) == 4


# -- faults: each recovers within the retry budget or ends with a clear error -------------------


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"output": null, "calls": [{"_tool": "weatherCheck", "loc', "json_invalid"),
        (
            json.dumps({"output": None, "calls": [{"_tool": "fetchStock"}]}),
            "calls[0] (tool 'fetchStock'): Input tag 'fetchStock'",
        ),
        (
            json.dumps({"output": None, "calls": [{"_tool": "weatherCheck", "location": 7}]}),
            "calls[0] (tool 'weatherCheck') field location: Input should be a valid string, "
            "found 7 (keyword: type)",
        ),
        (
            json.dumps(
                {
                    "output": None,
                    "calls": [{"_tool": "sentimentAnalysis", "text": "x", "_output": 3}],
                }
            ),
            "calls[0] (tool 'sentimentAnalysis') field _output",
        ),
    ],
    ids=["invalid-json", "unknown-tool", "wrong-type", "latent-bad-output"],
)
def test_invalid_answers_are_fed_back_and_recovered(
    llm: tuple[ScriptedLLM, str],
    tools: ToolRegistry,
    activities: ActivityRegistry,
    bad: str,
    expected: str,
) -> None:
    server, url = llm
    server.add(call(bad), answer(output="fine"))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(max_retries=1),
    )
    result = agent.run("go")
    assert result.output == "fine" and len(server.requests) == 2
    (feedback,) = server.tool_messages(1)
    assert feedback["content"].startswith("Invalid response (fix each and answer again):\n")
    assert expected in feedback["content"]
    assert len(result.steps[0].requests) == 2 and len(result.steps[0].raw_responses) == 2


def test_wrong_types_feedback_names_tool_field_and_keyword(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer({"_tool": "sendEmail", "recipient": 5}), answer(output="ok"))
    Agent(url, model="scripted", tools=tools, activities=activities).run("mail")
    text = server.tool_messages(1)[0]["content"]
    assert (
        "- calls[0] (tool 'sendEmail') field recipient: Input should be a valid string, found 5 "
        "(keyword: type)" in text
    )
    assert "- calls[0] (tool 'sendEmail') field subject: Field required (keyword: required)" in text


def test_composed_retry_feedback_is_the_problems_without_pydantic_boilerplate(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    """What the model reads of an invalid answer: where, what, and what it gave — no error
    count, type names, input dump or documentation URL (tokens that teach it nothing)."""
    server, url = llm
    server.add(answer({"_tool": "weatherCheck", "location": 5}), answer(output="ok"))
    Agent(url, model="scripted", tools=tools, activities=activities).run("weather")
    (feedback,) = server.tool_messages(1)
    assert feedback["content"] == (
        "Invalid response (fix each and answer again):\n"
        "- calls[0] (tool 'weatherCheck') field location: Input should be a valid string, "
        "found 5 (keyword: type)"
    )


def test_the_transcript_echoes_the_answer_in_the_schemas_order(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    """The model's composed answer goes back to it with its keys as the schema orders them
    (``calls`` before ``output``): the model reads its own answer as it was asked to write it."""
    server, url = llm
    server.add(answer(WEATHER), answer(output="done"))
    Agent(url, model="scripted", tools=tools, activities=activities).run("weather")
    asked = list(server.requests[0]["tools"][0]["function"]["parameters"]["properties"])
    assert asked == ["calls", "output"]
    echoed = next(m for m in server.requests[1]["messages"] if m["role"] == "assistant")
    assert list(json.loads(echoed["content"])) == asked
    assert list(json.loads(echoed["tool_calls"][0]["function"]["arguments"])) == asked


def test_retries_exhausted_end_with_a_clear_error(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    bad = {"output": None, "calls": [{"_tool": "weatherCheck"}]}
    server.add(call(bad), call(bad), call(bad), answer(output="never reached"))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(max_retries=2),
    )
    with pytest.raises(ResponseValidationError) as info:
        agent.run("go")
    assert len(server.requests) == 3  # 1 + max_retries
    err = info.value
    assert err.attempts == 3
    assert "calls[0] (tool 'weatherCheck') field location: Field required" in err.errors
    assert err.last_response is not None
    raw = err.last_response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(raw) == bad


def test_http_500_is_retried_by_the_client(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(error(500), answer(output="after a 500"))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(http_retries=1),
    )
    assert agent.run("go").output == "after a 500"
    assert len(server.requests) == 2


def test_persistent_http_errors_end_with_llm_error(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(error(500), error(503), answer(output="too late"))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(http_retries=1),
    )
    with pytest.raises(LLMError, match=r"InternalServerError|503|500"):
        agent.run("go")
    assert len(server.requests) == 2


def test_a_slow_reply_times_out(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(Reply(arguments={"output": "slow", "calls": []}, delay=1.5))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(timeout=0.3, http_retries=0),
    )
    with pytest.raises(LLMError, match="Timeout"):
        agent.run("go")
    assert len(server.requests) == 1


# -- execution ----------------------------------------------------------------------------------


def test_independent_calls_run_concurrently_unless_opted_out(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    running = 0
    peak = 0
    lock = threading.Lock()

    async def slow_weather(call: Any) -> dict[str, Any]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        await asyncio.sleep(0.2)
        with lock:
            running -= 1
        return {"conditions": call.location}

    def sync_weather(call: Any) -> dict[str, Any]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.2)
        with lock:
            running -= 1
        return {"conditions": call.location}

    three = [{"_tool": "weatherCheck", "location": c} for c in ("A", "B", "C")]
    for fn in (slow_weather, sync_weather):
        registry = ActivityRegistry()
        registry.register("weatherCheck", fn)
        server.add(answer(*three), answer(output="ok"))
        peak = 0
        result = Agent(url, model="scripted", tools=tools, activities=registry).run("go")
        assert peak == 3, fn.__name__
        assert [c.result.data for c in result.steps[0].calls] == [
            {"conditions": "A"},
            {"conditions": "B"},
            {"conditions": "C"},
        ]
        registry.register("weatherCheck", fn, concurrent=False)
        server.add(answer(*three), answer(output="ok"))
        peak = 0
        Agent(url, model="scripted", tools=tools, activities=registry).run("go")
        assert peak == 1, fn.__name__


def test_activity_failures_and_timeouts_become_failed_results(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    registry = ActivityRegistry()

    @registry.register("weatherCheck")
    def broken(call: Any) -> dict[str, Any]:
        raise ConnectionError(f"weather API down for {call.location}")

    @registry.register("sendEmail", timeout=0.2)
    async def hanging(call: Any) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {"sent": True}

    @registry.register("greetUser")
    def wrong_shape(call: Any) -> Any:
        return {"anything": "goes"}  # greetUser declares no output: any JSON is fine

    server.add(
        answer(
            WEATHER,
            {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "hi"},
            {"_tool": "greetUser", "userName": "Ann"},
        ),
        answer(output="recovered"),
    )
    result = Agent(url, model="scripted", tools=tools, activities=registry).run("go")
    assert result.output == "recovered"
    weather_, email, greet = result.steps[0].calls
    assert not weather_.result.success
    assert weather_.result.error == "ConnectionError: weather API down for Paris"
    assert not email.result.success and "timed out after 0.2s" in (email.result.error or "")
    assert greet.result.success and greet.result.data == {"anything": "goes"}
    fed = json.loads(server.tool_messages(1)[0]["content"])["results"]
    assert [r["success"] for r in fed] == [False, False, True]


def test_an_activity_output_that_breaks_the_schema_is_a_failed_result(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm

    def too_hot(call: Any) -> dict[str, Any]:
        return {"temperature": "hot"}

    registry = ActivityRegistry({"weatherCheck": too_hot})
    server.add(answer(WEATHER), answer(output="ok"))
    result = Agent(url, model="scripted", tools=tools, activities=registry).run("go")
    record = result.steps[0].calls[0]
    assert not record.result.success and "temperature" in (record.result.error or "")


def test_an_explicit_activity_that_is_missing_fails_clearly(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    registry = ToolRegistry([replace(tools["weatherCheck"], activity="weatherService")])
    server.add(answer(WEATHER), answer(output="ok"))
    result = Agent(url, model="scripted", tools=registry, activities={}).run("go")
    record = result.steps[0].calls[0]
    assert record.route == "missing"
    assert (
        record.result.error
        == "no Activity named 'weatherService' is registered for tool 'weatherCheck'"
    )


def test_execution_configs_go_through_the_injected_executor(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    seen: list[str] = []
    http_tool = replace(
        tools["weatherCheck"],
        execution_type="gateway",
        execution={"url": "https://api.example/weather", "method": "GET", "timeout": 5000},
    )

    def factory(binding: ToolBinding) -> Any:
        seen.append(binding.name)

        def via_http(call: Any) -> dict[str, Any]:
            return {"conditions": f"via {binding.execution and binding.execution['url']}"}

        return via_http

    server.add(answer(WEATHER), answer(output="ok"))
    agent = Agent(
        url, model="scripted", tools=[http_tool], activities={}, execution_activity=factory
    )
    assert agent.composition()["properties"]["calls"]["items"]["properties"]["_activity"] == {
        "const": "weatherCheck"
    }
    result = agent.run("go")
    assert result.steps[0].calls[0].result.data == {"conditions": "via https://api.example/weather"}
    assert seen == ["weatherCheck"]  # the executor is built once per tool


def test_execution_configs_run_over_http_by_default(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``execution_activity``: the gateway's HTTP executor runs the config against a real app."""
    server, url = llm
    app = FastAPI()
    seen: list[tuple[str, str | None, str | None]] = []

    @app.get("/weather/{city}")
    def weather_api(city: str, request: Request) -> dict[str, Any]:
        seen.append((city, request.query_params.get("units"), request.headers.get("x-key")))
        return {"temperature": 18.5, "conditions": f"rain in {city}"}

    monkeypatch.setenv("TOOLBIND_TEST_WEATHER_KEY", "k-SECRET-42")
    monkeypatch.delenv("TOOLBIND_TEST_UNSET", raising=False)
    with serve_asgi(app) as base:
        http_weather = replace(
            tools["weatherCheck"],
            execution_type="gateway",
            execution={
                "url": base + "/weather/{{input.location}}?units=metric",
                "method": "GET",
                "headers": {"X-Key": "${env.TOOLBIND_TEST_WEATHER_KEY}"},
                "timeout": 5000,
            },
        )
        misconfigured = replace(
            tools["sendEmail"],
            execution_type="external",
            execution={
                "url": base + "/mail",
                "headers": {"Authorization": "Bearer ${env.TOOLBIND_TEST_UNSET}"},
            },
        )
        email = {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "hi"}
        city = {"_tool": "weatherCheck", "location": "Saint-Denis & co?"}
        server.add(answer(city, email), answer(output="ok"))
        agent = Agent(url, model="scripted", tools=[http_weather, misconfigured], activities={})
        items = agent.composition()["properties"]["calls"]["items"]
        variants = items.get("anyOf") or items.get("oneOf") or [items]
        assert [v["properties"]["_activity"] for v in variants] == [  # routed as explicit
            {"const": "weatherCheck"},
            {"const": "sendEmail"},
        ]
        result = agent.run("weather and mail")
    assert result.output == "ok"
    weather_call, email_call = result.steps[0].calls
    assert weather_call.route == "explicit" and weather_call.result.success
    assert weather_call.result.model_dump(mode="json")["data"] == {  # the typed output, dumped
        "temperature": 18.5,
        "conditions": "rain in Saint-Denis & co?",
    }
    assert seen == [("Saint-Denis & co?", "metric", "k-SECRET-42")]  # encoded, never split
    assert email_call.route == "explicit" and not email_call.result.success
    assert "TOOLBIND_TEST_UNSET" in (email_call.result.error or "")
    assert "k-SECRET-42" not in json.dumps(server.requests) + repr(result)
    assert len(server.requests) == 2


# -- events: visibility and progress ------------------------------------------------------------


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in stream]


def test_astream_yields_progress_and_respects_visibility(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    registry = ActivityRegistry()

    @registry.register("weatherCheck")
    async def analyse(call: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"status": "loading", "text": "Loading..."}
        await asyncio.sleep(0.01)
        yield {"temperature": 3, "conditions": "snow"}

    hidden = replace(tools["sendEmail"], execution_type="internal", visible=True)

    def send(call: Any) -> dict[str, Any]:
        return {"sent": True}

    registry.register("sendEmail", send)
    server.add(
        answer(WEATHER, {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "s"}),
        answer(output="done"),
    )
    agent = Agent(url, model="scripted", tools=[tools["weatherCheck"], hidden], activities=registry)
    events = asyncio.run(collect(agent.astream("go")))
    # astream streams the answer: its partial arguments and text are tests/runtime/test_streaming.py's
    events = [e for e in events if e.type != "text-delta" and "partial" not in (e.data or {})]
    kinds = [(e.type, e.tool) for e in events]
    assert kinds == [
        ("tool-call.start", "weatherCheck"),
        ("tool-input-delta", "weatherCheck"),
        ("tool-result", "weatherCheck"),  # the first item; the last is the result
        ("tool-call.complete", "weatherCheck"),
        ("run.complete", None),
    ]
    assert events[1].data == {"arguments": {"location": "Paris"}}
    assert events[2].data == {
        "preliminary": True,
        "output": {"status": "loading", "text": "Loading..."},
    }
    final = events[-1].result
    assert final is not None and final.output == "done"
    weather_, email = final.steps[0].calls
    assert weather_.result.data == {"temperature": 3, "conditions": "snow"}
    assert email.result.data == {"sent": True} and not email.visible  # internal: hidden, not lost


def test_the_last_item_of_an_async_generator_is_its_result_not_progress(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    """Each item but the last is progress (told while the Activity goes on); the last is final."""
    server, url = llm
    told_before_next: list[bool] = []
    events_so_far: list[AgentEvent] = []

    async def analyse(call: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"status": "loading"}
        await asyncio.sleep(0.01)
        # the first item was told while the Activity went on, not when the next one came
        told_before_next.append(any(e.type == "tool-result" for e in events_so_far))
        yield {"status": "analysing"}
        await asyncio.sleep(0.01)
        yield {"temperature": 3, "conditions": "snow"}

    server.add(answer(WEATHER), answer(output="done"))
    agent = Agent(
        url,
        model="scripted",
        tools=[tools["weatherCheck"]],
        activities=ActivityRegistry({"weatherCheck": analyse}),
    )

    async def run() -> list[AgentEvent]:
        async for event in agent.astream("go"):
            events_so_far.append(event)
        return events_so_far

    events = asyncio.run(run())
    results = [e.data for e in events if e.type == "tool-result"]
    assert results == [
        {"preliminary": True, "output": {"status": "loading"}},
        {"preliminary": True, "output": {"status": "analysing"}},
    ]
    assert told_before_next == [True]
    final = events[-1].result
    assert final is not None
    (record,) = final.steps[0].calls
    assert record.progress == [{"status": "loading"}, {"status": "analysing"}]
    assert record.result.data == {"temperature": 3, "conditions": "snow"}
    complete = next(e for e in events if e.type == "tool-call.complete")
    assert complete.data["data"] == {"temperature": 3, "conditions": "snow"}


def test_the_visible_flag_overrides_the_default(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    quiet = replace(tools["weatherCheck"], visible=False)
    server.add(answer(WEATHER), answer(output="ok"))
    agent = Agent(url, model="scripted", tools=[quiet], activities=activities)
    events = asyncio.run(collect(agent.astream("go")))
    # the hidden tool's streamed arguments are hidden too; the output's text is the user's
    assert [e.type for e in events] == ["text-delta", "run.complete"]
    assert events[-1].result is not None
    assert events[-1].result.steps[0].calls[0].result.success


# -- async pending tools ------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PendingStore]:
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as real:
        yield real


def test_pending_results_arrive_as_events_on_a_later_step(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, store: PendingStore
) -> None:
    """The real SQLite store as the Agent's sink; the result is POSTed to the real endpoint."""
    server, url = llm
    space_email = replace(tools["sendEmail"], execution_type="space")
    registry = ActivityRegistry()

    @registry.register("weatherCheck")
    def later(call: Any) -> Pending:
        return Pending(ttl=60)

    email = {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "hi"}
    server.add(answer(email, WEATHER), answer(), answer(output="all done"))
    agent = Agent(
        url,
        model="scripted",
        tools=[space_email, tools["weatherCheck"]],
        activities=registry,
        capabilities=[PendingDelivery(store)],
    )
    answers: list[tuple[int, Any]] = []

    async def main(endpoint: str) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        async with httpx.AsyncClient(base_url=endpoint) as client:
            async for event in agent.astream("mail and weather"):
                events.append(event)
                if event.type == "tool-call.pending" and event.tool == "sendEmail":
                    path = f"/runs/{event.run_id}/tool-results"
                    body = {"call_id": event.call_id, "result": {"sent": True}}
                    for _ in range(2):  # the second submission is refused
                        reply = await client.post(path, json=body)
                        answers.append((reply.status_code, reply.json()))
        return events

    with serve_asgi(pending_app(store)) as endpoint:
        events = asyncio.run(main(endpoint))
    result = events[-1].result
    assert result is not None and result.output == "all done"
    first = result.steps[0]
    assert [c.pending for c in first.calls] == [True, True]
    assert first.calls[0].result.data is not None
    assert first.calls[0].result.data["status"] == "pending"
    assert [status for status, _ in answers] == [200, 409]
    assert answers[0][1]["status"] == "resolved" and answers[0][1]["result"] == {"sent": True}
    delivered = result.steps[1].delivered
    assert [(d.tool, d.result.data) for d in delivered] == [("sendEmail", {"sent": True})]
    assert result.steps[2].delivered == []  # delivered exactly once
    assert result.pending == [first.calls[1].call_id]  # weatherCheck never answered
    assert first.calls[1].call_id.endswith("-0-1")
    stored_email = store.get(result.run_id, first.calls[0].call_id)
    assert stored_email is not None and stored_email.status == "delivered"
    assert stored_email.tool == "sendEmail"
    assert dict(stored_email.arguments) == {"recipient": "a@b.c", "subject": "hi"}
    assert [(p.call_id, p.tool) for p in store.pending(result.run_id)] == [
        (first.calls[1].call_id, "weatherCheck")
    ]
    assert store.collect(result.run_id) == []  # nothing left to hand over
    inbox = [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]
    assert json.loads(inbox["content"]) == {
        "event": "tool_result",
        "call_id": first.calls[0].call_id,
        "tool": "sendEmail",
        "result": {
            "success": True,
            "data": {"sent": True},
            "error": None,
            "metadata": {"execution": "async"},
        },
    }
    assert [e.type for e in events if e.tool == "sendEmail"][-1] == "tool-call.complete"
    assert len(server.requests) == 3


def test_async_tools_without_a_store_fail_clearly(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    server, url = llm
    external = replace(tools["sendEmail"], execution_type="external", execution={"method": "POST"})
    server.add(answer({"_tool": "sendEmail", "recipient": "a", "subject": "b"}), answer(output="x"))
    result = Agent(url, model="scripted", tools=[external], activities={}).run("go")
    record = result.steps[0].calls[0]
    assert record.route == "async" and not record.result.success
    assert "no pending store" in (record.result.error or "")


def test_results_never_carry_the_api_key(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer(WEATHER), answer(output="ok"))
    secret = "sk-test-SECRET-123"
    result = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(api_key=secret),
    ).run("go")
    assert secret not in repr(result) and secret not in json.dumps(server.requests)
    assert ToolResult[Any].ok(1).success


def test_any_openai_or_instructor_client_works(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    import instructor
    import openai

    server, url = llm
    clients: list[Any] = [
        openai.OpenAI(base_url=url, api_key="unused"),
        openai.AsyncOpenAI(base_url=url, api_key="unused"),
        instructor.from_openai(openai.OpenAI(base_url=url, api_key="unused")),
    ]
    for client in clients:
        server.add(answer(WEATHER), answer(output="ok"))
        result = Agent(client, model="scripted", tools=tools, activities=activities).run("go")
        assert result.output == "ok" and result.steps[0].calls[0].result.success
        assert result.steps[0].requests[0]["model"] == "scripted"
    assert len(server.requests) == 6
    with pytest.raises(TypeError, match="expected a base URL"):
        Agent(42, model="x")


def test_raw_schema_tools_and_outputs_run_end_to_end(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    registry = ToolRegistry()
    registry.register(
        "lookup",
        {
            "type": "object",
            "properties": {
                "_tool": {"const": "lookup"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "_output": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "required": ["code"],
            "additionalProperties": False,
        },
    )
    summary = {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
    }
    server.add(
        answer({"_tool": "lookup", "code": "cdg", "_output": {"name": "x"}}),  # pattern
        answer({"_tool": "lookup", "code": "CDG", "_output": {"name": "Charles de Gaulle"}}),
        answer(output={"summary": 3}),  # wrong type in the output
        answer(output={"summary": "CDG is Charles de Gaulle"}),
    )
    agent = Agent(
        url, model="scripted", tools=registry, activities={}, settings=ModelSettings(max_retries=1)
    )
    result = agent.run("What is CDG?", summary)
    assert result.output.summary == "CDG is Charles de Gaulle"
    assert result.output.model_dump() == {"summary": "CDG is Charles de Gaulle"}
    assert len(server.requests) == 4
    assert "field code: string does not match pattern" in server.tool_messages(1)[0]["content"]
    assert "(keyword: pattern)" in server.tool_messages(1)[0]["content"]
    last = server.tool_messages(3)[-1]["content"]
    assert "field output.summary: Input should be a valid string, found 3 (keyword: type)" in last
    sent = server.requests[0]["tools"][0]["function"]["parameters"]
    assert sent["properties"]["output"]["additionalProperties"] is False
    assert sent["properties"]["calls"]["items"]["additionalProperties"] is False


def test_a_failed_run_keeps_its_transcript(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(answer(WEATHER), call("not json at all"), call("{}"))
    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(max_retries=1),
    )
    with pytest.raises(ResponseValidationError) as info:
        agent.run("go")
    steps = info.value.steps
    assert len(steps) == 2 and steps[0].calls[0].result.success
    assert len(steps[1].raw_responses) == 2 and steps[1].response is None
    assert len(server.requests) == 3


def test_a_run_resumes_with_its_run_id_and_gets_its_pending_result(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, store: PendingStore
) -> None:
    server, url = llm
    space_email = replace(tools["sendEmail"], execution_type="space")
    email = {"_tool": "sendEmail", "recipient": "a@b.c", "subject": "hi"}
    server.add(answer(email))
    first = Agent(
        url,
        model="scripted",
        tools=[space_email],
        activities={},
        capabilities=[PendingDelivery(store)],
    ).run("mail", max_steps=1)
    assert not first.finished and len(first.pending) == 1
    store.submit(first.run_id, first.pending[0], {"sent": True})  # while no run is going
    server.add(answer(email), answer(output="sent twice"))
    again = Agent(
        url,
        model="scripted",
        tools=[space_email],
        activities={},
        capabilities=[PendingDelivery(store)],
    )
    resumed = again.run(first.messages, run_id=first.run_id)
    assert resumed.output == "sent twice" and resumed.run_id == first.run_id
    (delivered,) = resumed.steps[0].delivered
    assert delivered.call_id == first.pending[0] and delivered.result.data == {"sent": True}
    new_id = resumed.steps[0].calls[0].call_id
    assert new_id != first.pending[0]  # no id collision: both calls are stored
    old, new = store.get(first.run_id, first.pending[0]), store.get(first.run_id, new_id)
    assert old is not None and old.status == "delivered"
    assert new is not None and new.status == "pending"
    assert resumed.pending == [new_id]


def test_a_pydantic_model_tool_joins_generated_ones(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm

    class Forecast(BaseModel):
        high: int

    class ForecastCall(BaseModel):
        """Forecast for a day."""

        city: str
        day: int
        output: Forecast | None = Field(default=None, alias="_output")

    tools.register("forecast", ForecastCall)
    with pytest.raises(RegistrationError, match="reserved for the meta field '_tool'"):

        class Bad(BaseModel):
            tool: str

        tools.register("bad", Bad)
    server.add(
        answer({"_tool": "forecast", "city": "Oslo", "day": 1}),  # latent, _output left out
        answer(WEATHER, {"_tool": "forecast", "city": "Oslo", "day": 1, "_output": {"high": 3}}),
        answer(output="ok"),
    )
    result = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(max_retries=1),
    ).run("go")
    assert result.output == "ok" and len(server.requests) == 3 and len(result.steps) == 3
    (absent,) = result.steps[0].calls  # optional in the schema: valid, its result null
    assert absent.route == "latent" and absent.result.success and absent.result.data is None
    weather_, forecast = result.steps[1].calls
    assert weather_.route == "explicit" and forecast.route == "latent"
    assert forecast.arguments == {"city": "Oslo", "day": 1}
    assert forecast.result.data == {"high": 3}
    item = [
        i
        for i in server.requests[0]["tools"][0]["function"]["parameters"]["properties"]["calls"][
            "items"
        ]["anyOf"]
        if i["properties"]["function"] == {"const": "forecast"}  # several tools: call_tag auto
    ]
    assert item[0]["properties"]["_output"]["properties"] == {
        "high": {"title": "High", "type": "integer"}
    }


def test_sync_calls_inside_an_event_loop_are_refused(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry
) -> None:
    _, url = llm

    async def main() -> None:
        async with Agent(url, model="scripted", tools=tools) as agent:
            with pytest.raises(UsageError, match="use arun/arequest"):
                agent.run("go")

    asyncio.run(main())


def test_a_plain_text_reply_is_fed_back_and_recovered(
    llm: tuple[ScriptedLLM, str], tools: ToolRegistry, activities: ActivityRegistry
) -> None:
    server, url = llm
    server.add(Reply(text="Sure! The weather is nice."), answer(output="fine"))
    result = Agent(
        url,
        model="scripted",
        tools=tools,
        activities=activities,
        settings=ModelSettings(max_retries=1),
    ).run("go")
    assert result.output == "fine" and len(server.requests) == 2
    feedback = [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]
    assert "No tool calls" in feedback["content"]
