"""The agent loop's contract with a real model: the schema the model is sent and the validator that
reads its answer are the same contract (a grammar-constrained model follows the schema exactly).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import unload
from tests.scripted_llm import ScriptedLLM, call
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import Agent, LoopSettings, ModelSettings, ToolRegistry, compose
from toolbind.runtime.errors import UsageError

SENTIMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Analyzes text sentiment",
    "properties": {
        "_tool": {"type": "string", "const": "sentimentAnalysis"},
        "text": {"type": "string"},
        "_output": {
            "type": "object",
            "properties": {"sentiment": {"type": "string"}},
            "required": ["sentiment"],
        },
    },
    "required": ["text"],
}


def _latent_tools() -> ToolRegistry:
    tools = ToolRegistry()
    tools.register("sentimentAnalysis", SENTIMENT_SCHEMA)
    return tools


def test_a_latent_tools_output_is_optional_in_the_schema_and_in_the_validator() -> None:
    tools = _latent_tools()
    composition = compose(tools)
    item = composition["properties"]["calls"]["items"]
    assert "_output" in item["properties"] and "_output" not in item["required"]
    # exactly what the schema requires, nothing more: valid
    answer = {"output": None, "calls": [{"_tool": "sentimentAnalysis", "text": "great"}]}
    parsed = composition.response.model_validate(answer)
    assert parsed.calls[0].output is None


def test_zero_config_tools_work_with_a_model_that_sends_only_what_the_schema_requires(
    llm: tuple[ScriptedLLM, str],
) -> None:
    """The defect: with no Activity registered every tool is latent; the Response model refused a
    call without ``_output`` although the composed schema does not require it, so a model under a
    grammar built from that schema never produced a valid answer (0 of 20 on BFCL)."""
    server, url = llm
    server.add(call({"output": None, "calls": [{"_tool": "sentimentAnalysis", "text": "great"}]}))
    server.add(call({"output": "positive", "calls": []}))
    agent = Agent(
        url, model="scripted", tools=_latent_tools(), settings=ModelSettings(max_retries=0)
    )
    result = agent.run("How does 'great' sound?")
    assert result.finished and result.output == "positive"
    assert len(server.requests) == 2  # no retry was needed
    record = result.steps[0].calls[0]
    assert record.route == "latent" and record.result.success
    assert record.result.data is None and record.result.metadata["output"] == "absent"
    (tool_message,) = server.tool_messages(1)
    fed = json.loads(tool_message["content"])["results"][0]
    assert fed["data"] is None and fed["metadata"]["output"] == "absent"


def test_a_latent_output_given_is_still_validated_by_its_schema(
    llm: tuple[ScriptedLLM, str],
) -> None:
    server, url = llm
    bad = {"_tool": "sentimentAnalysis", "text": "x", "_output": {"mood": "?"}}
    good = {"_tool": "sentimentAnalysis", "text": "x", "_output": {"sentiment": "neutral"}}
    server.add(call({"output": None, "calls": [bad]}))
    server.add(call({"output": None, "calls": [good]}))
    agent = Agent(
        url, model="scripted", tools=_latent_tools(), settings=ModelSettings(max_retries=1)
    )
    response = agent.request("Mood of x?")
    assert response.calls[0].output is not None
    feedback = json.dumps(server.requests[1]["messages"])
    assert "sentiment" in feedback and "required" in feedback


# -- tool_choice, and calls before output -------------------------------------------------------

WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Current weather",
    "properties": {"_tool": {"const": "weatherCheck"}, "location": {"type": "string"}},
    "required": ["location"],
}


def _two_tools() -> ToolRegistry:
    tools = _latent_tools()
    tools.register("weatherCheck", WEATHER_SCHEMA)
    return tools


def test_calls_come_before_output_in_the_composed_schema() -> None:
    composition = compose(_two_tools())
    assert list(composition["properties"]) == ["calls", "output"]
    assert composition["required"] == ["calls", "output"]


def test_tool_choice_is_in_the_schema_and_holds_the_answer() -> None:
    tools = _two_tools()
    required = compose(tools, tool_choice="required")
    assert required["properties"]["calls"]["minItems"] == 1
    assert required["properties"]["output"] == {"type": "null"}
    with pytest.raises(ValueError, match="field calls: no call; this step needs at least one"):
        required.response.model_validate({"calls": [], "output": "just text"})
    one = compose(tools, tool_choice="weatherCheck")
    assert one["properties"]["calls"]["items"]["properties"]["_tool"] == {"const": "weatherCheck"}
    with pytest.raises(ValueError, match="sentimentAnalysis"):
        one.response.model_validate(
            {"calls": [{"_tool": "sentimentAnalysis", "text": "x"}], "output": None}
        )
    assert one.response.model_validate(
        {"calls": [{"_tool": "weatherCheck", "location": "Oslo"}], "output": None}
    ).calls
    none = compose(tools, tool_choice="none")
    assert none["properties"]["calls"]["maxItems"] == 0
    assert none["properties"]["output"] == {"type": "string"}
    with pytest.raises(ValueError, match="field output: required this step"):
        none.response.model_validate({"calls": [], "output": None})
    with pytest.raises(ValueError, match="tool_choice='nope': expected auto, required, none"):
        compose(tools, tool_choice="nope")


def test_required_tool_choice_feeds_a_text_only_answer_back_then_the_run_ends(
    llm: tuple[ScriptedLLM, str],
) -> None:
    server, url = llm
    server.add(call({"calls": [], "output": "It is sunny."}))  # what a small model does
    server.add(call({"calls": [{"_tool": "weatherCheck", "location": "Oslo"}], "output": None}))
    server.add(call({"calls": [], "output": "Sunny in Oslo."}))
    agent = Agent(url, model="scripted", tools=_two_tools(), settings=ModelSettings(max_retries=1))
    result = agent.run("Weather in Oslo?", tool_choice="required")
    assert result.finished and result.output == "Sunny in Oslo."
    assert [c.tool for c in result.steps[0].calls] == ["weatherCheck"]
    retry = json.dumps(server.requests[1]["messages"])
    assert "this step needs at least one" in retry
    first_schema = server.requests[0]["tools"][0]["function"]["parameters"]
    last_schema = server.requests[2]["tools"][0]["function"]["parameters"]
    assert first_schema["properties"]["calls"]["minItems"] == 1
    assert "minItems" not in last_schema["properties"]["calls"]  # later steps: auto


def test_each_step_tells_its_llm_requests_and_token_usage(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    bad = {"calls": [{"_tool": "weatherCheck"}], "output": None}  # location missing: one retry
    server.add(call(bad))
    server.add(call({"calls": [{"_tool": "weatherCheck", "location": "Oslo"}], "output": None}))
    server.add(call({"calls": [], "output": "done"}))
    result = Agent(
        url, model="scripted", tools=_two_tools(), settings=ModelSettings(max_retries=1)
    ).run("go")
    assert [s.llm_requests for s in result.steps] == [2, 1]
    assert result.llm_requests == 3 == len(server.requests)
    assert result.steps[0].usage == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}
    assert result.usage == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


def test_an_output_given_beside_explicit_calls_is_provisional(llm: tuple[ScriptedLLM, str]) -> None:
    """The defect: with every tool explicit, all ran and the run "finished" at step 0 with an
    output the model wrote before any result came back."""
    server, url = llm
    weather = {"_tool": "weatherCheck", "location": "Oslo"}
    server.add(call({"calls": [weather], "output": "Probably sunny."}))  # a guess
    server.add(call({"calls": [], "output": "Rain in Oslo."}))  # after seeing the result

    def rain(call: Any) -> dict[str, str]:
        return {"conditions": "rain"}

    activities = {"weatherCheck": rain}
    agent = Agent(url, model="scripted", tools=_two_tools(), activities=activities)
    result = agent.run("Weather in Oslo?")
    assert result.finished and result.output == "Rain in Oslo." and len(result.steps) == 2
    assert result.steps[0].response is not None
    assert result.steps[0].response.output == "Probably sunny."  # kept in the transcript
    fed = json.loads(server.tool_messages(1)[0]["content"])["results"][0]
    assert fed["data"] == {"conditions": "rain"}

    server.add(call({"calls": [weather], "output": "Probably sunny."}))
    ending = Agent(
        url,
        model="scripted",
        tools=_two_tools(),
        activities=activities,
        loop=LoopSettings(end_on_output=True),
    )
    first = ending.run("Weather in Oslo?")
    assert first.finished and first.output == "Probably sunny." and len(first.steps) == 1


def test_an_output_beside_latent_calls_only_ends_the_run(llm: tuple[ScriptedLLM, str]) -> None:
    server, url = llm
    latent = {"_tool": "sentimentAnalysis", "text": "x", "_output": {"sentiment": "calm"}}
    server.add(call({"calls": [latent], "output": "calm"}))
    result = Agent(url, model="scripted", tools=_two_tools()).run("Mood?")
    assert result.finished and result.output == "calm" and len(result.steps) == 1


# -- the model is offered the spec's own names -------------------------------


def _records(tmp_path: Path) -> ModuleType:
    """A BFCL file where ``find`` is defined differently in two records (``find@r1``,
    ``find@r2`` in the package)."""

    def fn(name: str, prop: str) -> dict[str, Any]:
        return {
            "name": name,
            "description": f"{name} by {prop}",
            "parameters": {"type": "dict", "properties": {prop: {"type": "string"}}},
        }

    records = [
        {"id": "r1", "question": "q1", "function": [fn("find", "case"), fn("other", "x")]},
        {"id": "r2", "question": "q2", "function": [fn("find", "court")]},
    ]
    spec = tmp_path / "records.jsonl"
    spec.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    return load_package(tmp_path / "out", "records")


def test_a_toolset_offers_the_specs_own_names_and_maps_them_back(
    tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """The defect: the model was offered ``_tool: "find@r1"`` (the package's disambiguation) and
    copied it. Within one toolset the spec's names are unique: the model sees ``find``; its call
    is read as ``find@r1`` and routed to that tool's Activity."""
    pkg = _records(tmp_path)
    try:
        toolset = [t for t in pkg.TOOLS if t.name in pkg.TOOLSETS["r1"]]
        assert [t.name for t in toolset] == ["find@r1", "other"]
        composition = compose(toolset)
        consts = [
            s["properties"]["_tool"]["const"]
            for s in composition["properties"]["calls"]["items"]["anyOf"]
        ]
        assert consts == ["find", "other"]
        answer = {"calls": [{"_tool": "find", "case": "Smith v. Jones"}], "output": None}
        (parsed,) = composition.response.model_validate(answer).calls
        assert (
            parsed.tool == "find@r1" and type(parsed).__name__ == pkg.TOOLS[0].call_model.__name__
        )

        server, url = llm
        # the model copies the offered names, _activity included
        echoed = {"_tool": "find", "_activity": "find", "case": "Smith v. Jones"}
        server.add(call({"calls": [echoed], "output": None}))
        server.add(call({"calls": [], "output": "found it"}))
        seen: list[str] = []

        def find(call: Any) -> dict[str, Any]:
            seen.append(call.case)
            return {"case": call.case}

        agent = Agent(url, model="scripted", tools=toolset, activities={"find@r1": find})
        result = agent.run("Find Smith v. Jones")
        assert result.output == "found it" and seen == ["Smith v. Jones"]
        record = result.steps[0].calls[0]
        assert record.tool == "find@r1" and record.route == "explicit"
        sent = server.requests[0]["tools"][0]["function"]["parameters"]
        assert "find@r1" not in json.dumps(sent)  # the internal name never reaches the model
        # a tool_choice may name the tool either way
        assert compose(toolset, tool_choice="find").response is not None
        assert compose(toolset, tool_choice="find@r1")["properties"]["calls"]["minItems"] == 1

        # both variants offered together: the spec's name is ambiguous, the package's names stay
        both = compose([t for t in pkg.TOOLS if t.name.startswith("find")])
        consts = [
            s["properties"]["_tool"]["const"] for s in both["properties"]["calls"]["items"]["anyOf"]
        ]
        assert consts == ["find@r1", "find@r2"]
    finally:
        unload("records")


def test_the_transcript_and_the_feedback_name_tools_as_they_were_offered(
    tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """The model reads its own answers, the results and the retry feedback under the names it was
    offered: a transcript that echoed ``find@r1`` taught the model the internal name again."""
    pkg = _records(tmp_path)
    try:
        toolset = [t for t in pkg.TOOLS if t.name in pkg.TOOLSETS["r1"]]
        server, url = llm
        # two tools offered: each call names its tool under function (call_tag="auto")
        server.add(call({"calls": [{"function": "nope", "case": "x"}], "output": None}))
        server.add(
            call(
                {"calls": [{"function": "find", "_activity": "find", "case": "x"}], "output": None}
            )
        )
        server.add(call({"calls": [], "output": "done"}))
        routed: list[str] = []

        def find(call: Any) -> dict[str, int]:
            routed.append(call.case)
            return {"n": 1}

        agent = Agent(url, model="scripted", tools=toolset, activities={"find@r1": find})
        result = agent.run("Find x")
        assert result.output == "done" and routed == ["x"]
        assert [c.tool for c in result.steps[0].calls] == ["find@r1"]  # the package's name
        feedback = json.dumps(server.requests[1]["messages"])
        assert "expected tags: 'find', 'other'" in feedback
        last = server.requests[2]["messages"]
        answer = json.loads(next(m["content"] for m in last if m["role"] == "assistant"))
        assert answer["calls"] == [{"function": "find", "_activity": "find", "case": "x"}]
        (results,) = [json.loads(m["content"]) for m in last if m["role"] == "tool"]
        assert [r["tool"] for r in results["results"]] == ["find"]
        for request in server.requests:
            assert "find@r1" not in json.dumps(request)  # nowhere, on any request
    finally:
        unload("records")


def test_a_closed_object_output_refuses_an_extra_key(llm: tuple[ScriptedLLM, str]) -> None:
    """The composed schema closes an object output (``additionalProperties: false``); the
    Response model accepted (and dropped) an extra key. Now the answer is fed back and retried."""
    from pydantic import BaseModel

    class Summary(BaseModel):
        summary: str

    composition = compose(_latent_tools(), Summary)
    assert composition["properties"]["output"]["additionalProperties"] is False
    with pytest.raises(ValueError, match="unexpected key 'mood'"):
        composition.response.model_validate(
            {"calls": [], "output": {"summary": "ok", "mood": "calm"}}
        )
    server, url = llm
    server.add(call({"calls": [], "output": {"summary": "ok", "mood": "calm"}}))
    server.add(call({"calls": [], "output": {"summary": "ok"}}))
    result = Agent(url, model="scripted", tools=_latent_tools()).run("Sum up", output=Summary)
    assert result.output == Summary(summary="ok") and len(server.requests) == 2
    fed_back = json.dumps(server.requests[1]["messages"])
    assert "unexpected key 'mood'" in fed_back and "additionalProperties" in fed_back


def test_rfc_context_items_are_read_or_refused_clearly(llm: tuple[ScriptedLLM, str]) -> None:
    """RFC-style context items crashed with instructor's raw ValueError: a text item is a user
    message; a tool item, or a message without a role, is a UsageError saying what to do."""
    from toolbind.runtime import UsageError

    server, url = llm
    server.add(call({"calls": [], "output": "hello"}))
    agent = Agent(url, model="scripted", tools=_latent_tools())
    response = agent.request([{"type": "text", "text": "Say hello"}])
    assert response.output == "hello"
    assert server.requests[0]["messages"][-1] == {"role": "user", "content": "Say hello"}
    tool_item = {"type": "tool", "tool": {"greetUser": {"type": "object"}}}
    with pytest.raises(UsageError, match=r"messages\[0\] is an RFC \{type: 'tool'\}.*greetUser"):
        agent.request([tool_item, {"type": "text", "text": "hi"}])
    with pytest.raises(UsageError, match=r"messages\[1\] has no role"):
        agent.request([{"role": "user", "content": "hi"}, {"content": "no role"}])
    assert len(server.requests) == 1  # nothing was sent for the refused ones


# -- the meta fields say what they are for, and can be left out ----------------


def test_reasoning_for_call_is_described_and_precedes_the_arguments() -> None:
    item = compose(_latent_tools())["properties"]["calls"]["items"]
    names = list(item["properties"])
    assert names.index("_reasoningForCall") < names.index("text")  # before every argument
    assert "why this call" in item["properties"]["_reasoningForCall"]["description"]
    assert "_reasoningForCall" not in item["required"]


def test_meta_fields_needed_offers_only_what_reading_the_answer_needs(
    llm: tuple[ScriptedLLM, str],
) -> None:
    """``meta_fields="needed"``: ``_tool`` and a latent tool's ``_output``; no ``_activity``
    const, no ``_reasoningForCall`` (measured: a small model never filled it). The answer is read
    and routed as with every meta field."""
    tools = _two_tools()
    full = compose(tools, activities={"weatherCheck"})
    lean = compose(tools, activities={"weatherCheck"}, meta_fields="needed")
    latent, explicit = lean["properties"]["calls"]["items"]["anyOf"]
    assert list(latent["properties"]) == ["_tool", "_output", "text"]
    assert list(explicit["properties"])[:1] == ["_tool"]
    assert "_activity" not in explicit["properties"]
    assert len(json.dumps(lean)) < len(json.dumps(full))
    with pytest.raises(ValueError, match="meta_fields='none'"):
        compose(tools, meta_fields="none")

    server, url = llm
    weather = {"_tool": "weatherCheck", "location": "Oslo"}
    mood = {"_tool": "sentimentAnalysis", "text": "x", "_output": {"sentiment": "calm"}}
    server.add(call({"calls": [weather, mood], "output": None}))
    server.add(call({"calls": [], "output": "Cold and calm."}))
    checked: list[str] = []

    def weather_check(call: Any) -> dict[str, Any]:
        checked.append(call.location)
        return {"temperature": -3}

    agent = Agent(
        url,
        model="scripted",
        tools=tools,
        activities={"weatherCheck": weather_check},
        settings=ModelSettings(meta_fields="needed"),
    )
    result = agent.run("Weather in Oslo, and my mood?")
    assert result.output == "Cold and calm." and checked == ["Oslo"]
    routes = [(c.tool, c.route) for c in result.steps[0].calls]
    assert routes == [("weatherCheck", "explicit"), ("sentimentAnalysis", "latent")]
    sent = json.dumps(server.requests[0]["tools"])
    assert "_reasoningForCall" not in sent and "_activity" not in sent
    with pytest.raises(UsageError, match="meta_fields"):
        Agent(url, model="scripted", tools=tools, settings=ModelSettings(meta_fields="some"))


# -- what the model reads of the tools ------------------------------------------


def _one(call: Any) -> dict[str, int]:
    return {"n": 1}


def test_tools_in_prompt_lists_the_offered_tools_in_the_system_message(
    tmp_path: Path, llm: tuple[ScriptedLLM, str]
) -> None:
    """llama.cpp renders the GGUF's chat template, and SmolLM2's ignores ``tools``: only the
    grammar built from the schema reaches the model, no description. ``tools_in_prompt=True``
    lists the tools (offered names, parameters, descriptions, enums, defaults) in the system
    message of each request; the run's own transcript is left as it is."""
    pkg = _records(tmp_path)
    try:
        toolset = [t for t in pkg.TOOLS if t.name in pkg.TOOLSETS["r1"]]
        server, url = llm
        server.add(call({"calls": [{"_tool": "find", "case": "x"}], "output": None}))
        server.add(call({"calls": [], "output": "done"}))
        agent = Agent(
            url,
            model="scripted",
            tools=toolset,
            activities={"find@r1": _one},
            instructions="Be brief.",
            settings=ModelSettings(tools_in_prompt=True),
        )
        result = agent.run("Find x")
        assert result.output == "done"
        for request in server.requests:
            system = request["messages"][0]
            assert system["role"] == "system" and system["content"].startswith("Be brief.\n\n")
            assert "- find(case?: string) — find by case" in system["content"]
            assert "- other(x?: string) — other by x" in system["content"]
            assert "find@r1" not in json.dumps(request)
        assert [m["content"] for m in result.messages if m["role"] == "system"] == ["Be brief."]

        plain = Agent(url, model="scripted", tools=toolset)
        server.add(call({"calls": [{"_tool": "other", "x": "1"}], "output": None}))
        plain.request("Other")
        assert server.requests[-1]["messages"] == [{"role": "user", "content": "Other"}]
    finally:
        unload("records")


def test_describe_tools_reads_types_enums_defaults_and_descriptions() -> None:
    from toolbind._compose import describe_tools

    tools = ToolRegistry()
    tools.register(
        "weather",
        {
            "type": "object",
            "description": "Current   weather\nfor a city.",
            "properties": {
                "city": {"type": "string", "description": "City, State"},
                "unit": {"enum": ["c", "f"], "default": "f", "description": "Unit."},
                "days": {"type": "array", "items": {"type": "integer"}},
                "note": {"type": ["string", "null"]},
            },
            "required": ["city"],
        },
    )
    assert describe_tools(tools).splitlines() == [
        '- weather(city: string, unit?: "c"|"f", days?: array of integer, note?: string)'
        " — Current weather for a city.",
        "    city: City, State",
        '    unit: Unit. (default "f")',
    ]
    assert describe_tools(tools, max_chars=10).splitlines()[0].endswith("— Current w…")


MCP_TOOLS = {
    "tools": [
        {
            "name": "get_forecast",
            "description": "The forecast for a city (runs on the MCP server).",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"summary": {"type": "string"}},
                "required": ["summary"],
            },
        }
    ]
}


def test_an_imported_mcp_tool_never_runs_latently(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    """The defect: a tool imported from an MCP ``tools/list`` with no Activity ran
    latently — the model's invented ``_output`` came back as a successful result. An MCP tool runs
    on its server: a ``gateway`` tool, not visible, refused before anything is sent when nothing
    here can run it, and offered without ``_output`` when an Activity can."""
    from toolbind.runtime import ActivityRegistry, UsageError

    spec = tmp_path / "weather_mcp.json"
    spec.write_text(json.dumps(MCP_TOOLS), encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "weather_mcp")
    try:
        (binding,) = pkg.TOOLS
        assert binding.execution_type == "gateway" and binding.visible is False
        server, url = llm
        server.add(
            call(
                {
                    "output": None,
                    "calls": [
                        {"_tool": "get_forecast", "city": "Oslo", "_output": {"summary": "sunny"}}
                    ],
                }
            )
        )
        with pytest.raises(UsageError, match="get_forecast"):
            Agent(
                url, model="scripted", tools=list(pkg.TOOLS), settings=ModelSettings(max_retries=0)
            ).request("Oslo?")
        assert server.requests == []  # refused before anything was sent

        def forecast(c: Any) -> dict[str, str]:
            return {"summary": f"rain in {c.city}"}

        activities = ActivityRegistry()
        activities.register("get_forecast", forecast)
        agent = Agent(url, model="scripted", tools=list(pkg.TOOLS), activities=activities)
        item = agent.composition()["properties"]["calls"]["items"]
        assert "_output" not in item["properties"]  # nothing for the model to invent
        server.requests.clear()
        server.add(call({"output": None, "calls": [{"_tool": "get_forecast", "city": "Oslo"}]}))
        server.add(call({"output": "It rains.", "calls": []}))
        result = agent.run("Oslo?")
        record = result.steps[0].calls[0]
        assert record.route == "explicit"
        assert record.result.model_dump(mode="json")["data"] == {"summary": "rain in Oslo"}
    finally:
        unload("weather_mcp")
