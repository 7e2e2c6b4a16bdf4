"""The call tag the model is offered: ``Agent(call_tag=...)``.

What the model fills names each call's tool under ``_tool`` when one tool is offered and under
``function`` when several (the default, ``call_tag="auto"``: under ``_tool`` a small model copied the
first call's tool into the next on multi-function questions: bench/bfcl.py), or under a key asked for; the answer is read back as ``_tool``, so the Calls, their dumps and ``compose()`` keep the seeds' wire format. Against
the scripted OpenAI-protocol server: what the request carries, how an answer validates, a tool
whose own parameter has the tag's name, the retry feedback, the transcript and the streamed deltas.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from tests.runtime.conftest import ACTIVITIES
from tests.runtime.test_streaming import collect
from tests.scripted_llm import Reply, ScriptedLLM, call
from toolbind.runtime import Agent, ModelSettings, ToolRegistry, compose
from toolbind.runtime.errors import UsageError


def items(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The call schemas of a composed request."""
    params = request["tools"][0]["function"]["parameters"]
    found = params["properties"]["calls"]["items"]
    return found.get("anyOf", [found])


def registry(*params: str) -> ToolRegistry:
    """One tool, ``lookup``, taking a string parameter for each of ``params``."""
    tools = ToolRegistry()
    tools.register(
        "lookup",
        {
            "type": "object",
            "properties": {p: {"type": "string"} for p in params},
            "required": list(params),
        },
    )
    return tools


def test_the_request_offers_function_and_the_answer_reads_back_as_tool(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        call({"calls": [{"function": "weatherCheck", "location": "Oslo"}], "output": None}),
        call({"calls": [], "output": "Sunny."}),
    )
    agent = Agent(
        url,
        model="m",
        tools=seeds.TOOLS,
        activities=ACTIVITIES,
        settings=ModelSettings(call_tag="function"),
    )
    result = agent.run("Weather in Oslo?")
    schemas = items(server.requests[0])
    assert [next(iter(s["properties"])) for s in schemas] == ["function"] * len(schemas)
    assert all(s["required"][0] == "function" for s in schemas)
    assert '"_tool"' not in json.dumps(server.requests[0]["tools"])
    (record,) = result.steps[0].calls
    assert record.tool == "weatherCheck" and record.arguments == {"location": "Oslo"}
    assert record.result.data == {"temperature": 21.5, "conditions": "sunny in Oslo"}
    # the Call is the seeds' (its dump names the tool in _tool); the model reads its own answer
    # as it wrote it
    response = result.steps[0].response
    assert response is not None
    assert response.calls[0].model_dump(by_alias=True)["_tool"] == "weatherCheck"
    echoed = [m for m in server.requests[1]["messages"] if m["role"] == "assistant"]
    assert json.loads(echoed[0]["content"])["calls"] == [
        {"function": "weatherCheck", "location": "Oslo"}
    ]
    # compose() itself, and an Agent asked for it, keep the seeds' _tool
    assert "_tool" in compose(seeds.TOOLS)["properties"]["calls"]["items"]["anyOf"][0]["required"]
    seeds_agent = Agent(url, model="m", tools=seeds.TOOLS, settings=ModelSettings(call_tag="_tool"))
    assert seeds_agent.composition().tag == "_tool"
    # by default ("auto") several tools are offered under function, one under _tool
    assert Agent(url, model="m", tools=seeds.TOOLS).composition().tag == "function"
    assert all(
        s["required"][0] == "_tool"
        for s in seeds_agent.composition()["properties"]["calls"]["items"]["anyOf"]
    )


def test_a_tool_with_a_parameter_of_that_name_keeps_it(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(call({"calls": [{"function_name": "lookup", "function": "sin"}], "output": None}))
    agent = Agent(
        url,
        model="m",
        tools=registry("function"),
        activities={"lookup": dict},
        settings=ModelSettings(call_tag="function"),
    )
    response = agent.request("Look up sin", tool_choice="required")
    (schema,) = items(server.requests[0])
    assert next(iter(schema["properties"])) == "function_name"
    assert schema["properties"]["function"] == {"type": "string"}
    (found,) = response.calls
    assert found.tool == "lookup"
    assert found.model_dump(by_alias=True, exclude_unset=True) == {
        "_tool": "lookup",
        "function": "sin",
    }
    # both names taken: the seeds' _tool
    both = Agent(
        url,
        model="m",
        tools=registry("function", "function_name"),
        settings=ModelSettings(call_tag="function"),
    )
    assert both.composition().tag == "_tool"


def test_feedback_names_the_tag_as_it_was_offered(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        call({"calls": [{"function": "nope", "location": "x"}], "output": None}),
        call({"calls": [{"location": "x"}], "output": None}),
        call({"calls": [{"function": "weatherCheck", "_tool": "sendEmail"}], "output": None}),
        call({"calls": [{"function": "weatherCheck", "location": "x"}], "output": None}),
    )
    agent = Agent(
        url,
        model="m",
        tools=seeds.TOOLS,
        activities=ACTIVITIES,
        settings=ModelSettings(max_retries=3, call_tag="function"),
    )
    response = agent.request("Weather?", tool_choice="required")
    assert [c.tool for c in response.calls] == ["weatherCheck"]
    told = [
        next(m["content"] for m in reversed(r["messages"]) if m["role"] in ("user", "tool"))
        for r in server.requests[1:]
    ]
    assert "'function'" in told[0] and "'nope'" in told[0]  # an unknown tool
    assert "| 'tool'" not in told[0]  # not the Python name of the discriminator
    assert "'function'" in told[1]  # no tool named
    assert "name the tool in function only" in told[2]  # two names for the tool
    assert not any("_tool" in t.replace("name the tool in function", "") for t in told[:2])


def test_streamed_deltas_read_the_tag(seeds: ModuleType, llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    server.add(
        Reply(
            arguments={
                "calls": [{"function": "weatherCheck", "location": "Reykjavik"}],
                "output": None,
            },
            chunk=6,
        ),
        Reply(arguments={"calls": [], "output": "Cold."}, chunk=5),
    )

    agent = Agent(
        url,
        model="m",
        tools=seeds.TOOLS,
        activities=ACTIVITIES,
        settings=ModelSettings(call_tag="function"),
    )
    events = collect(agent, "Weather in Reykjavik?")
    assert server.requests[0]["stream"] is True
    kinds = [(e.type, e.tool) for e in events if e.call_id]
    assert kinds[0] == ("tool-call.start", "weatherCheck")
    partial = [
        e.data["partial"] for e in events if e.type == "tool-input-delta" and "partial" in e.data
    ]
    assert len(partial) >= 2 and partial[-1] == {"location": "Reykjavik"}
    assert all("function" not in p for p in partial)  # the tag is no argument
    assert kinds[-1] == ("tool-call.complete", "weatherCheck")


def test_call_tag_must_be_a_key_name(llm: tuple[ScriptedLLM, str]) -> None:
    _, url = llm
    for bad in ("", "_activity", "_output", "calls"):
        with pytest.raises(UsageError, match="call_tag"):
            Agent(url, model="m", tools=registry("q"), settings=ModelSettings(call_tag=bad))


def test_auto_offers_tool_for_one_tool_and_function_for_several(
    seeds: ModuleType, llm: tuple[ScriptedLLM, str]
) -> None:
    server, url = llm
    server.add(
        call({"calls": [{"function": "weatherCheck", "location": "Oslo"}], "output": None}),
        call({"calls": [{"_tool": "weatherCheck", "location": "Oslo"}], "output": None}),
    )
    agent = Agent(
        url,
        model="m",
        tools=seeds.TOOLS,
        activities=ACTIVITIES,
        settings=ModelSettings(call_tag="auto"),
    )
    assert len(seeds.TOOLS) > 1
    assert agent.composition().tag == "function"
    several = agent.request("Weather in Oslo?", tool_choice="required")
    assert [next(iter(s["properties"])) for s in items(server.requests[0])] == ["function"] * len(
        seeds.TOOLS
    )
    # one tool offered (tool_choice names it): the seeds' _tool, read back alike
    assert agent.composition(tool_choice="weatherCheck").tag == "_tool"
    one = agent.request("Weather in Oslo?", tool_choice="weatherCheck")
    (schema,) = items(server.requests[1])
    assert next(iter(schema["properties"])) == "_tool"
    for response in (several, one):
        (found,) = response.calls
        assert found.model_dump(by_alias=True, exclude_unset=True) == {
            "_tool": "weatherCheck",
            "location": "Oslo",
        }
    # a tool taking a parameter named function keeps it: function_name is offered
    clash = ToolRegistry()
    clash.register("a", {"type": "object", "properties": {"function": {"type": "string"}}})
    clash.register("b", {"type": "object", "properties": {}})
    assert (
        Agent(url, model="m", tools=clash, settings=ModelSettings(call_tag="auto"))
        .composition()
        .tag
        == "function_name"
    )
