"""A composed answer cut off inside ``calls`` (the token limit, usually a model repeating a call):
read up to its last complete call instead of retried, and the step says so (``runtime/_salvage``);
likewise raw control characters inside strings, read as themselves.

Against the scripted OpenAI-protocol server: llama-cpp-python's way (the JSON cut short, reported
as ``finish_reason: "tool_calls"``), the OpenAI way (``finish_reason: "length"``), the streamed
composed path, and what must never be salvaged (malformed JSON, a cut outside ``calls``, a
complete call that is invalid).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.runtime.test_streaming import collect
from tests.scripted_llm import Reply, ScriptedLLM, call
from toolbind.runtime import Agent, ModelSettings, ToolRegistry
from toolbind.runtime._salvage import cut_off_calls
from toolbind.runtime.errors import ResponseValidationError

WEATHER: dict[str, Any] = {
    "type": "object",
    "description": "The weather in a city",
    "properties": {
        "_tool": {"type": "string", "const": "weather"},
        "city": {"type": "string"},
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["city"],
}


def _agent(url: str, **options: Any) -> Agent:
    tools = ToolRegistry()
    tools.register("weather", WEATHER)
    return Agent(
        url, model="scripted", tools=tools, **options, settings=ModelSettings(max_retries=1)
    )


def _looping(*cities: str, repeats: int = 4) -> str:
    """What a looping model writes: the calls, then the last one again until the limit cuts it."""
    items = [json.dumps({"_tool": "weather", "city": c}) for c in cities]
    items += [items[-1]] * repeats
    return '{"calls": [' + ", ".join(items) + ', {"_tool": "weather", "ci'


def test_a_cut_off_answer_keeps_its_complete_calls_without_a_retry(
    llm: tuple[ScriptedLLM, str],
) -> None:
    server, url = llm
    server.add(call(_looping("Paris", "Oslo")))  # finish_reason "tool_calls", as llama.cpp says
    agent = _agent(url)
    response = agent.request("Weather in Paris and Oslo?", tool_choice="required")
    assert [c.city for c in response.calls] == ["Paris", "Oslo"]
    assert response.output is None
    assert len(server.requests) == 1  # no retry
    step = agent.last_step
    assert step is not None and step.llm_requests == 1
    (said,) = step.notes
    assert "cut off inside calls" in said and "kept its 2 complete call(s)" in said
    assert "dropped 4 repeat(s)" in said


def test_finish_reason_length_is_salvaged_the_same_way(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(Reply(arguments=_looping("Rome", repeats=0), finish_reason="length"))
    agent = _agent(url)
    response = agent.request("Weather in Rome?", tool_choice="required")
    assert [c.city for c in response.calls] == ["Rome"]
    assert len(server.requests) == 1
    assert agent.last_step is not None and len(agent.last_step.notes) == 1


def test_an_answer_cut_off_before_any_whole_call_is_not_retried_unchanged(
    llm: tuple[ScriptedLLM, str],
) -> None:
    """At temperature 0 the same cut-off answer would come back; it fails at
    once, saying why (raise ``max_tokens``), with the answer it got."""
    server, url = llm
    server.add(Reply(arguments='{"calls": [{"_tool": "weather", "ci', finish_reason="length"))
    agent = _agent(url)
    with pytest.raises(ResponseValidationError, match="cut off") as caught:
        agent.request("Weather?", tool_choice="required")
    assert len(server.requests) == 1
    assert caught.value.last_response is not None


def test_the_streamed_composed_path_salvages_too(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(call(_looping("Lima", "Quito", repeats=2)))
    agent = _agent(url)
    events = collect(agent, "Weather?", tool_choice="required", max_steps=1)
    assert any(e.type == "tool-input-delta" for e in events)
    result = events[-1].result
    assert result is not None
    step = result.steps[0]
    assert step.response is not None
    assert [c.city for c in step.response.calls] == ["Lima", "Quito"]
    assert len(server.requests) == 1 and "dropped 2 repeat(s)" in step.notes[0]


@pytest.mark.parametrize(
    "text",
    [
        # malformed, not cut off: a missing comma (never repaired)
        '{"calls": [{"_tool": "weather", "city": "Paris"} {"_tool": "weather", "city": "Rome"}]}',
        # malformed inside a cut-off answer: nothing after the break is trusted
        '{"calls": [{"_tool": "weather", "city": "Paris"}, {"_tool": "weather" "city": "Ro',
        # cut off before any call was complete: nothing to keep
        '{"calls": [{"_tool": "weath',
        # a brace too many: broken, not cut
        '{"calls": [{"_tool": "weather", "city": "Paris"}}, {"_tool"',
    ],
)
def test_what_is_not_a_cut_off_answer_is_retried_as_before(
    llm: tuple[ScriptedLLM, str], text: str
) -> None:
    server, url = llm
    server.add(call(text), call({"calls": [{"_tool": "weather", "city": "Paris"}], "output": None}))
    agent = _agent(url)
    response = agent.request("Weather in Paris?", tool_choice="required")
    assert [c.city for c in response.calls] == ["Paris"]
    assert len(server.requests) == 2  # the invalid answer went back for a retry
    assert agent.last_step is not None and agent.last_step.notes == []


def test_a_raw_newline_inside_a_string_is_read_as_the_character(
    llm: tuple[ScriptedLLM, str],
) -> None:
    server, url = llm
    server.add(call('{"calls": [{"_tool": "weather", "city": "New\nYork"}], "output": null}'))
    agent = _agent(url)
    response = agent.request("Weather in New York?", tool_choice="required")
    assert [c.city for c in response.calls] == ["New\nYork"]
    assert len(server.requests) == 1
    assert agent.last_step is not None and "raw control characters" in agent.last_step.notes[0]
    # what was recorded is what the model sent, not the reading
    sent = agent.last_step.raw_responses[0]["choices"][0]["message"]["tool_calls"][0]
    assert "New\nYork" in sent["function"]["arguments"]


def test_a_complete_call_that_is_invalid_is_not_kept(llm: tuple[ScriptedLLM, str]) -> None:
    """Salvage only reads what was cut: the kept calls are validated like a whole answer, and
    an invalid one makes the whole answer invalid (its feedback goes back, then it fails)."""
    server, url = llm
    bad = '{"calls": [{"_tool": "weather", "city": "Paris", "unit": "kelvin"}, {"_tool": "wea'
    server.add(call(bad), call(bad))
    agent = _agent(url)
    with pytest.raises(ResponseValidationError):
        agent.request("Weather?", tool_choice="required")
    assert len(server.requests) == 2
    assert agent.last_step is not None and agent.last_step.notes == []


_CALL = st.fixed_dictionaries(
    {"_tool": st.just("weather"), "city": st.text(max_size=8)},
    optional={"unit": st.sampled_from(["c", "f"])},
)


@given(st.lists(_CALL, min_size=1, max_size=6), st.data())
def test_any_cut_inside_calls_keeps_exactly_the_distinct_complete_calls(
    calls: list[dict[str, Any]], data: st.DataObject
) -> None:
    text, ends = '{"calls": [', list[int]()
    for index, item in enumerate(calls):
        text += (", " if index else "") + json.dumps(item)
        ends.append(len(text))
    cut = data.draw(st.integers(min_value=len('{"calls": ['), max_value=len(text)))
    salvaged = cut_off_calls(text[:cut])
    distinct: list[dict[str, Any]] = []
    for item, end in zip(calls, ends, strict=True):
        if end <= cut and item not in distinct:
            distinct.append(item)
    if not distinct:
        assert salvaged is None
    else:
        assert salvaged is not None and salvaged[0] == {"calls": distinct}
    assert cut_off_calls(text + '], "output": null}') is None  # whole: nothing to salvage


def test_whole_json_is_never_salvaged() -> None:
    assert cut_off_calls('{"calls": [{"_tool": "weather", "city": "x"}], "output": null}') is None
    assert cut_off_calls('{"output": "text"') is None  # no calls array to read


def test_an_answer_nested_too_deep_to_read_is_refused_not_salvaged(
    llm: tuple[ScriptedLLM, str],
) -> None:
    """Python's JSON reader raises RecursionError, not ValueError, on deep nesting: neither
    reading nor salvaging lets it escape (the fuzz test of hostile answers found it)."""
    server, url = llm
    deep = '{"calls": ' + "[" * 100_000
    server.add(call(deep), call(deep + "]" * 100_000 + "}"))
    agent = _agent(url)
    with pytest.raises(ResponseValidationError):
        agent.request("Weather?", tool_choice="required")
    assert len(server.requests) == 2
    assert agent.last_step is not None and agent.last_step.notes == []
