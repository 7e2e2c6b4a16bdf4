"""Integration: a real local model (SmolLM2-135M-Instruct via llama.cpp) fills the seeds' weatherCheck.

The server is ``python -m llama_cpp.server`` started by ``demo/llm_server.py`` on 127.0.0.1; the
request is the shape instructor's TOOLS mode sends (``tools`` + a named ``tool_choice``, which the
server turns into a grammar), through the real ``openai`` client. Checks are loose on content (a
135M model) and strict on shape: the arguments must validate as the faithful ``WeatherCheckCall``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from demo.llm_server import llama_cpp_installed, llama_server
from generated.seeds import (
    TOOLS,
    SendEmailCall,
    SentimentAnalysisCall,
    WeatherCheckCall,
)
from toolbind.runtime import Agent, ModelSettings
from toolbind.runtime.exports import call_from_strict, openai_strict_tools, openai_tools

MISSING = "llama-cpp-python[server] is not installed — `make llm` builds it (~10 min on 2 cores)"


@pytest.fixture(autouse=True)
def _local_model_installed() -> None:
    """Skip without the local model — except under CI=true, where a skip would hide the test."""
    if llama_cpp_installed():
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: the local-model integration test must run, but {MISSING}")
    pytest.skip(MISSING)


def test_agent_request_against_smollm2_returns_validated_calls() -> None:
    """``Agent.request`` (instructor, TOOLS mode) against the real model: validated, typed Calls."""
    from demo.run import TASK, act_example, send_email, weather_check

    names = ("weatherCheck", "sentimentAnalysis", "sendEmail")
    tools = [t for t in TOOLS if t.name in names]

    with llama_server() as server:
        agent = Agent(
            server.base_url,
            model=server.model,
            tools=tools,
            activities={"weatherCheck": weather_check, "sendEmail": send_email},
            settings=ModelSettings(
                max_retries=3, request_kwargs={"temperature": 0, "max_tokens": 300}
            ),
        )
        example = act_example(agent.composition().tag)  # several tools: function (auto)
        response = agent.request([*example, {"role": "user", "content": TASK}])
    assert isinstance(response, agent.composition().response)
    calls = list(response.calls)
    assert calls, response
    assert all(
        isinstance(c, WeatherCheckCall | SentimentAnalysisCall | SendEmailCall) for c in calls
    )
    chosen = {c.tool for c in calls}
    assert chosen <= set(names)
    assert "weatherCheck" in chosen  # loose: the task asks for all three
    for call in calls:
        if isinstance(call, WeatherCheckCall):
            assert call.location.strip()
        elif isinstance(call, SendEmailCall):
            assert call.recipient.strip() and call.subject.strip()
    assert server.process.poll() is not None


def test_smollm2_fills_weather_check_through_a_named_tool_choice() -> None:
    from openai import OpenAI

    weather = next(t for t in TOOLS if t.name == "weatherCheck")
    faithful = openai_tools([weather], {"weatherCheck"})
    strict = openai_strict_tools([weather], {"weatherCheck"})
    assert not strict.refused
    choice: Any = {"type": "function", "function": {"name": "weatherCheck"}}

    with llama_server() as server:
        client = OpenAI(base_url=server.base_url, api_key="local", max_retries=0, timeout=300)
        for tools, from_strict in [(faithful, False), (strict.tools, True)]:
            completion = client.chat.completions.create(
                model=server.model,
                messages=[{"role": "user", "content": "What is the weather in Paris right now?"}],
                tools=tools,  # pyright: ignore[reportArgumentType]
                tool_choice=choice,
                max_tokens=128,
                temperature=0,
            )
            calls = completion.choices[0].message.tool_calls or []
            assert len(calls) == 1, completion
            call = calls[0]
            assert call.type == "function"
            assert call.function.name == "weatherCheck"
            arguments: dict[str, Any] = json.loads(call.function.arguments)
            if from_strict:
                model = call_from_strict(weather, arguments, {"weatherCheck"})
            else:
                model = WeatherCheckCall.model_validate(arguments)
            assert isinstance(model, WeatherCheckCall)
            assert model.tool == "weatherCheck"
            assert isinstance(model.location, str) and model.location.strip()
    assert server.process.poll() is not None  # stopped on the way out


def test_astream_against_smollm2_tells_partial_arguments_before_the_call() -> None:
    """Streaming against the real server (llama-cpp-python's SSE chunks: the tool's name repeated
    in every chunk), composed and native: partial arguments, then the validated call."""
    import asyncio

    from demo.run import weather_check

    weather = [t for t in TOOLS if t.name == "weatherCheck"]
    with llama_server() as server:
        for mode in ("composed", "native"):
            agent = Agent(
                server.base_url,
                model=server.model,
                tools=weather,
                activities={"weatherCheck": weather_check},
                mode=mode,
                settings=ModelSettings(
                    max_retries=2, request_kwargs={"temperature": 0, "max_tokens": 200}
                ),
            )

            async def run(agent: Agent = agent) -> list[Any]:
                async with agent:
                    stream = agent.astream(
                        "What is the weather in Paris right now?",
                        tool_choice="weatherCheck",
                        max_steps=1,
                    )
                    return [(e.type, e.data) async for e in stream]

            events = asyncio.run(run())
            kinds = [k for k, _ in events]
            partial = [
                i for i, (k, d) in enumerate(events) if k == "tool-input-delta" and "partial" in d
            ]
            whole = [
                i
                for i, (k, d) in enumerate(events)
                if k == "tool-input-delta" and "partial" not in d
            ]
            assert kinds[0] == "tool-call.start", (mode, kinds)
            assert partial and len(whole) == 1 and max(partial) < whole[0], (mode, events)
            assert kinds[whole[0] + 1] == "tool-call.complete", (mode, events)
            location = events[whole[0]][1]["arguments"]["location"]
            assert isinstance(location, str) and location.strip()
    assert server.process.poll() is not None
