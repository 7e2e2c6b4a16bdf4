"""Streaming: ``Agent.astream`` against the scripted server streaming SSE chunks.

The server cuts the text and each call's arguments into a few characters per chunk, as providers
stream them. Asserted: the order of the events (never their timing) — a call's start, its partial
arguments growing, then the validated call, then its result; the output's text deltas, in order,
making up the output.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from types import ModuleType
from typing import Any

from tests.runtime.conftest import ACTIVITIES
from tests.scripted_llm import Reply, ScriptedLLM, tools
from toolbind.runtime import Agent, AgentEvent


def collect(agent: Agent, question: str, **kwargs: Any) -> list[AgentEvent]:
    async def run() -> list[AgentEvent]:
        async with agent:
            return [event async for event in agent.astream(question, **kwargs)]

    return asyncio.run(run())


def of_call(events: list[AgentEvent], call_id: str) -> list[tuple[str, Any]]:
    return [(e.type, e.data) for e in events if e.call_id == call_id]


def check_call(events: list[AgentEvent], call_id: str, arguments: dict[str, Any]) -> None:
    """start → partial arguments, growing → the validated call's arguments → complete."""
    seen = of_call(events, call_id)
    kinds = [k for k, _ in seen]
    assert kinds[0] == "tool-call.start"
    assert kinds[-1] == "tool-call.complete"
    partial = [d["partial"] for k, d in seen if k == "tool-input-delta" and "partial" in d]
    validated = [
        i for i, (k, d) in enumerate(seen) if k == "tool-input-delta" and "partial" not in d
    ]
    assert len(partial) >= 2, seen  # the arguments arrived in pieces, told as they came
    assert partial[-1] == arguments
    for before, after in itertools.pairwise(partial):  # each a growing prefix
        for key, value in before.items():
            assert (isinstance(value, str) and after[key].startswith(value)) or after[key] == value
    # the validated call comes after every partial delta and before the result
    last_partial = max(
        i for i, (k, d) in enumerate(seen) if k == "tool-input-delta" and "partial" in d
    )
    assert validated == [len(seen) - 2] and last_partial < validated[0]
    assert kinds.count("tool-call.start") == 1


def test_native_stream_partial_arguments_then_the_call_then_text(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        tools(
            ("weatherCheck", {"location": "Paris"}),
            ("sendEmail", {"recipient": "ann@example.com", "subject": "Weather"}),
            chunk=5,
        ),
        Reply(text="Sunny in Paris, and mailed.", chunk=4),
    )
    tools_ = [t for t in seeds.TOOLS if t.name in ACTIVITIES]
    agent = Agent(url, model="m", tools=tools_, activities=ACTIVITIES, mode="native")
    events = collect(agent, "Weather in Paris, mail it to ann@example.com")
    assert server.requests[0]["stream"] is True
    first = [e for e in events if e.step == 0 and e.call_id]
    ids = list(dict.fromkeys(e.call_id for e in first if e.call_id))
    assert len(ids) == 2
    check_call(events, ids[0], {"location": "Paris"})
    check_call(events, ids[1], {"recipient": "ann@example.com", "subject": "Weather"})
    texts = [e.data["delta"] for e in events if e.type == "text-delta"]
    assert len(texts) > 1 and "".join(texts) == "Sunny in Paris, and mailed."
    assert events[-1].type == "run.complete"
    result = events[-1].result
    assert result is not None and result.output == "Sunny in Paris, and mailed."
    assert [c.tool for c in result.steps[0].calls] == ["weatherCheck", "sendEmail"]


def test_composed_stream_reads_calls_and_output_from_the_partial_answer(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        Reply(
            arguments={
                "calls": [{"_tool": "weatherCheck", "location": "Reykjavik"}],
                "output": None,
            },
            chunk=6,
        ),
        Reply(arguments={"calls": [], "output": "Cold and windy in Reykjavik."}, chunk=5),
    )
    agent = Agent(url, model="m", tools=seeds.TOOLS, activities=ACTIVITIES)
    events = collect(agent, "Weather in Reykjavik?")
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "Response"},
    }
    call_id = next(e.call_id for e in events if e.type == "tool-call.start")
    assert call_id is not None
    check_call(events, call_id, {"location": "Reykjavik"})
    texts = [e.data["delta"] for e in events if e.type == "text-delta"]
    assert len(texts) > 1 and "".join(texts) == "Cold and windy in Reykjavik."
    # the text arrives in the step that gives it, after the first step's call completed
    complete = next(i for i, e in enumerate(events) if e.type == "tool-call.complete")
    first_text = next(i for i, e in enumerate(events) if e.type == "text-delta")
    assert complete < first_text
    result = events[-1].result
    assert result is not None and result.output == "Cold and windy in Reykjavik."


def test_an_invalid_streamed_answer_is_fed_back_and_retried(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        Reply(arguments={"calls": [{"_tool": "weatherCheck", "location": 7}], "output": None}),
        Reply(arguments={"calls": [], "output": "done"}),
    )
    agent = Agent(url, model="m", tools=seeds.TOOLS, activities=ACTIVITIES)
    events = collect(agent, "Weather?", max_steps=1)
    assert "location" in server.tool_messages(1)[-1]["content"]
    result = events[-1].result
    assert result is not None and result.output == "done" and result.llm_requests == 2


def test_a_refused_streamed_answer_is_marked_discarded_before_the_retry(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    """The retry streams the call again under the same id: an ``attempt.discarded`` event comes
    between, so each attempt's raw pieces join into its own arguments; the validated call's whole
    arguments have a key of their own."""
    server, url = llm
    server.add(
        tools(("weatherCheck", {"location": 7}), chunk=5),  # refused: location is a string
        tools(("weatherCheck", {"location": "Paris"}), chunk=5),
        Reply(text="Sunny.", chunk=4),
    )
    weather = [t for t in seeds.TOOLS if t.name == "weatherCheck"]
    agent = Agent(url, model="m", tools=weather, activities=ACTIVITIES, mode="native")
    events = collect(agent, "Weather in Paris?", max_steps=2)
    marks = [i for i, e in enumerate(events) if e.type == "attempt.discarded"]
    assert len(marks) == 1
    mark = events[marks[0]]
    assert mark.step == 0 and mark.data["attempt"] == 1 and "location" in mark.data["errors"]
    (call_id,) = {e.call_id for e in events if e.type == "tool-call.start"}
    attempts = (events[: marks[0]], events[marks[0] + 1 :])
    for attempt, arguments in zip(attempts, ({"location": 7}, {"location": "Paris"}), strict=True):
        told = [e for e in attempt if e.call_id == call_id]
        assert told[0].type == "tool-call.start"
        pieces = [
            e.data["delta"] for e in told if e.type == "tool-input-delta" and "delta" in e.data
        ]
        assert json.loads("".join(pieces)) == arguments
    whole = [
        e.data for e in attempts[1] if e.type == "tool-input-delta" and "partial" not in e.data
    ]
    assert whole == [{"arguments": {"location": "Paris"}}]


def test_partial_arguments_are_the_tools_parameters_in_both_modes(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    """A latent call's ``_output`` is its result, not an argument: never among the partial
    arguments, composed or native — the same keys as the validated call's arguments."""
    server, url = llm
    latent = [t for t in seeds.TOOLS if t.name == "sentimentAnalysis"]
    result = {"sentiment": "positive", "confidence": 0.9}
    call = {"text": "I love it", "_output": result}
    server.add(
        Reply(arguments={"calls": [{"_tool": "sentimentAnalysis", **call}], "output": None}),
        Reply(arguments={"calls": [], "output": "positive"}),
        tools(("sentimentAnalysis", call), chunk=5),
        Reply(text="positive"),
    )
    for mode in ("composed", "native"):
        agent = Agent(url, model="m", tools=latent, activities={}, mode=mode)
        events = collect(agent, "How does 'I love it' sound?", max_steps=2)
        partial = [e.data["partial"] for e in events if "partial" in (e.data or {})]
        assert partial and all(set(p) <= {"text"} for p in partial), (mode, partial)
        assert partial[-1] == {"text": "I love it"}
        whole = [e.data for e in events if e.type == "tool-input-delta" and "partial" not in e.data]
        assert whole == [{"arguments": {"text": "I love it"}}]
        done = next(e for e in events if e.type == "tool-call.complete")
        assert done.data["data"] == result
