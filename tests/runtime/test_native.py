"""Native tool calling: ``Agent(mode="native" | "auto")`` against the scripted
OpenAI-protocol server — each tool its own function, parallel calls validated into the same Call
union and routed the same way, the final text or a structured ``final_output``."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runtime.conftest import ACTIVITIES
from tests.scripted_llm import Reply, ScriptedLLM, call, tools
from toolbind.runtime import ActivityContext, Agent, ModelSettings
from toolbind.runtime.capabilities import PendingDelivery, RequireApproval
from toolbind.runtime.errors import ResponseValidationError, UsageError
from toolbind.runtime.pending import PendingStore


def functions(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request.get("tools", [])}


def explicit(seeds: ModuleType) -> list[Any]:
    return [t for t in seeds.TOOLS if t.name in ACTIVITIES]


def test_parallel_native_calls_run_and_are_fed_back_per_call_id(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        tools(
            ("weatherCheck", {"location": "Paris"}),
            ("sendEmail", {"recipient": "a@b.c", "subject": "Weather"}),
        ),
        Reply(text="Sunny in Paris; mail sent."),
    )
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    result = agent.run("Weather in Paris, and mail it to a@b.c")
    assert result.finished and result.output == "Sunny in Paris; mail sent."
    first = result.steps[0]
    assert first.mode == "native"
    assert [(c.tool, c.route, c.result.data) for c in first.calls] == [
        ("weatherCheck", "explicit", {"temperature": 21.5, "conditions": "sunny in Paris"}),
        ("sendEmail", "explicit", {"sent": True}),
    ]
    offered = functions(server.requests[0])
    assert set(offered) == {"weatherCheck", "sendEmail"}  # each tool its own function
    assert "_tool" not in offered["weatherCheck"]["parameters"]["properties"]
    assert offered["weatherCheck"]["parameters"]["required"] == ["location"]
    assert server.requests[0]["tool_choice"] == "auto"
    # the second request: the assistant's own tool calls, then one tool message per call id
    messages = server.requests[1]["messages"]
    assistant = messages[-3]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1_0", "call_1_1"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["call_1_0", "call_1_1"]
    assert json.loads(results[0]["content"])["data"]["conditions"] == "sunny in Paris"


class Forecast(BaseModel):
    city: str
    celsius: float


def test_structured_output_through_final_output(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        tools(("final_output", {"city": "Paris", "celsius": 21.5, "extra": 1})),
        tools(("final_output", {"city": "Paris", "celsius": 21.5})),
    )
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    result = agent.run("Forecast for Paris", output=Forecast)
    assert result.output == Forecast(city="Paris", celsius=21.5)
    offered = functions(server.requests[0])
    assert offered["final_output"]["parameters"]["properties"].keys() == {"city", "celsius"}
    # the extra key broke the closed output: fed back on the call's id, then answered again
    feedback = server.tool_messages(1)
    assert feedback[0]["tool_call_id"] == "call_1_0" and "extra" in feedback[0]["content"]
    assert result.llm_requests == 2


def test_an_unknown_function_is_fed_back_then_tool_choice_maps(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        tools(("deleteEverything", {})),
        tools(("weatherCheck", {"location": "Oslo"})),
    )
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    response = agent.request("Weather in Oslo", tool_choice="required")
    assert [(c.tool, c.location) for c in response.calls] == [("weatherCheck", "Oslo")]
    assert server.requests[0]["tool_choice"] == "required"
    feedback = server.tool_messages(1)[0]["content"]
    assert "deleteEverything" in feedback and "weatherCheck" in feedback
    server.add(tools(("weatherCheck", {"location": "Rome"})))
    agent.request("Weather in Rome", tool_choice="weatherCheck")
    assert server.requests[2]["tool_choice"] == {
        "type": "function",
        "function": {"name": "weatherCheck"},
    }


def test_required_with_no_call_is_invalid_and_fails_after_the_retries(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(Reply(text="I think it is sunny."), Reply(text="Sunny."))
    agent = Agent(
        url,
        model="m",
        tools=explicit(seeds),
        activities=ACTIVITIES,
        mode="native",
        settings=ModelSettings(max_retries=1),
    )
    with pytest.raises(ResponseValidationError, match="at least one"):
        agent.request("Weather in Oslo", tool_choice="required")
    assert server.requests[1]["messages"][-1]["role"] == "user"  # no call id to answer on


def test_auto_is_native_without_latent_tools_and_composed_with_one(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        tools(("weatherCheck", {"location": "Paris"})),
        call({"calls": [{"_tool": "sentimentAnalysis", "text": "great"}], "output": None}),
    )
    agent = Agent(url, model="m", tools=seeds.TOOLS, activities=ACTIVITIES, mode="auto")
    agent.request("Weather in Paris", tools=["weatherCheck", "sendEmail"])
    assert set(functions(server.requests[0])) == {"weatherCheck", "sendEmail"}
    response = agent.request("How does 'great' sound?")  # sentimentAnalysis is latent
    assert set(functions(server.requests[1])) == {"Response"}
    assert [c.tool for c in response.calls] == ["sentimentAnalysis"]
    with pytest.raises(UsageError, match="mode"):
        Agent(url, model="m", mode="fancy")


def test_required_with_one_tool_is_sent_as_that_tool(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(tools(("weatherCheck", {"location": "Oslo"})))
    agent = Agent(url, model="m", tools=explicit(seeds)[:1], activities=ACTIVITIES, mode="native")
    agent.request("Weather in Oslo", tool_choice="required")
    assert server.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "weatherCheck"},
    }


def test_tools_in_prompt_reaches_a_native_request(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(tools(("weatherCheck", {"location": "Oslo"})))
    agent = Agent(
        url,
        model="m",
        tools=explicit(seeds),
        activities=ACTIVITIES,
        mode="native",
        settings=ModelSettings(tools_in_prompt=True),
    )
    agent.request("Weather in Oslo")
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "- weatherCheck(location: string)" in system["content"]


def test_native_calls_carry_instances_deps_and_wait_for_approval(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """Native mode with the context, deps and approval."""
    server, url = llm
    seen: list[tuple[Any, Any, int]] = []

    def weather_with_context(call: Any, ctx: ActivityContext[str]) -> dict[str, Any]:
        seen.append((ctx.deps, ctx.instance, ctx.get("†state.n")))
        return {"temperature": 1.0, "conditions": f"{ctx.deps} in {call.location}"}

    server.add(
        tools(
            ("weatherCheck", {"location": "Paris", "_instance": "b"}),
            ("sendEmail", {"recipient": "a@b.c", "subject": "Weather"}),
        ),
        Reply(text="Mail waits for approval."),
    )
    context = [
        {"type": "state", "_instance": "a", "state": {"n": 1}},
        {"type": "state", "_instance": "b", "state": {"n": 2}},
    ]
    with PendingStore(tmp_path / "pending.sqlite3", ttl=60) as store:
        agent = Agent(
            url,
            model="m",
            tools=explicit(seeds),
            activities={"weatherCheck": weather_with_context, "sendEmail": ACTIVITIES["sendEmail"]},
            mode="native",
            capabilities=[RequireApproval({"sendEmail"}), PendingDelivery(store)],
        )
        result = agent.run("Weather in Paris, mail it", context=context, deps="deps")
        parked = [p.tool for p in store.pending(result.run_id)]
    offered = functions(server.requests[0])
    assert offered["weatherCheck"]["parameters"]["properties"]["_instance"]["enum"] == ["a", "b"]
    assert seen == [("deps", "b", 2)]  # the Activity's context: deps, its instance's state
    weather, mail = result.steps[0].calls
    assert weather.result.data == {"temperature": 1.0, "conditions": "deps in Paris"}
    assert mail.pending and parked == ["sendEmail"]  # not run: it waits for a human
    assert result.steps[0].mode == "native" and result.output == "Mail waits for approval."


@pytest.mark.parametrize("mode", ["native", "auto", "composed"])
def test_tool_choice_none_accepts_the_answer_without_calls(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str], mode: str
) -> None:
    # tool_choice="none" was refused with "this step needs at least one (of none)"
    server, url = llm

    def answer(text: str) -> Reply:
        return call({"calls": [], "output": text}) if mode == "composed" else Reply(text=text)

    server.add(answer("Sunny in Oslo."), answer("Sunny."))
    agent = Agent(
        url,
        model="m",
        tools=explicit(seeds),
        activities=ACTIVITIES,
        mode=mode,
        settings=ModelSettings(max_retries=0),
    )
    response = agent.request("Weather in Oslo?", tool_choice="none")
    assert response.calls == [] and response.output == "Sunny in Oslo."
    assert len(server.requests) == 1  # valid at once: no retry
    if mode != "composed":  # the functions stay listed, and "none" says not to call them
        assert server.requests[0]["tool_choice"] == "none"
        assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {"weatherCheck"}
    result = agent.run("Weather in Oslo?", tool_choice="none")
    assert result.finished and result.output == "Sunny." and len(server.requests) == 2


WRITTEN = {
    "qwen": '<tool_call>\n{"name": "weatherCheck", "arguments": {"location": "Paris"}}\n</tool_call>',
    "fenced": '```json\n{"name": "weatherCheck", "arguments": {"location": "Paris"}}\n```',
    "bare": '{"name": "weatherCheck", "arguments": {"location": "Paris"}}',
    "array": '[{"name": "weatherCheck", "arguments": "{\\"location\\": \\"Paris\\"}"}]',
}


@pytest.mark.parametrize("form", sorted(WRITTEN))
def test_tool_calls_written_as_text_are_read_validated_and_fed_back(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str], form: str
) -> None:
    # llama-cpp-python's server parses no tool call for tool_choice "auto"/"required": the
    # model's call arrives as text, in one of the forms models are trained to write
    server, url = llm
    server.add(Reply(text=WRITTEN[form]), Reply(text="Sunny in Paris."))
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    result = agent.run("Weather in Paris?")
    assert result.finished and result.output == "Sunny in Paris."
    first = result.steps[0]
    assert [(c.tool, c.route) for c in first.calls] == [("weatherCheck", "explicit")]
    assert first.calls[0].result.data == {"temperature": 21.5, "conditions": "sunny in Paris"}
    assert first.notes == [
        "tool calls read from the answer's text (weatherCheck): the server returned none, and "
        "the model wrote them as text"
    ]
    # recorded as the model sent it; fed back as a call with an id and its tool message
    assert first.raw_responses[0]["choices"][0]["message"]["content"] == WRITTEN[form]
    messages = server.requests[1]["messages"]
    assert messages[-2]["tool_calls"][0]["id"] == "text_call_0"
    assert messages[-1]["role"] == "tool" and messages[-1]["tool_call_id"] == "text_call_0"


def test_text_naming_no_offered_function_stays_text(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    text = '{"name": "Paris", "arguments": {"population": 2100000}}'
    server.add(Reply(text=text))
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    result = agent.run("Some JSON about Paris, please")
    assert result.finished and result.output == text and result.steps[0].notes == []


def test_invalid_arguments_written_as_text_are_fed_back_and_retried(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        Reply(
            text='<tool_call>{"name": "weatherCheck", "arguments": {"city": "Paris"}}</tool_call>'
        ),
        Reply(text=WRITTEN["qwen"]),
        Reply(text="Sunny."),
    )
    agent = Agent(url, model="m", tools=explicit(seeds), activities=ACTIVITIES, mode="native")
    result = agent.run("Weather in Paris?")
    assert result.finished and result.output == "Sunny."
    retry = server.requests[1]["messages"]
    assert retry[-2]["tool_calls"][0]["function"]["name"] == "weatherCheck"
    assert retry[-1]["role"] == "tool" and "location" in retry[-1]["content"]
