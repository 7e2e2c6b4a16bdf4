"""A meta field the model may not give is refused as any other key its tool's schema refuses.

The defect: on a tool an Activity runs whose schema refuses extra keys
(``additionalProperties: false``), the composed schema the model is sent has no ``_output``, yet
a call that gave one was accepted and the value dropped in silence — while any other undeclared
key was refused with feedback. Now both are told to the model in the same words, and the Activity
runs only on the corrected call. Through the Agent, the real openai client and instructor, against
the scripted OpenAI-protocol server on 127.0.0.1.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.scripted_llm import ScriptedLLM, call
from toolbind.runtime import ActivityRegistry, Agent, ToolRegistry

ADD = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "_tool": {"const": "add"},
        "a": {"type": "integer"},
        "b": {"type": "integer"},
        "_output": {"type": "integer"},
    },
    "required": ["a", "b"],
}


@pytest.mark.parametrize(("key", "value"), [("_output", 99), ("c", 1)])
def test_output_from_the_model_is_refused_like_any_extra_key(
    llm: tuple[ScriptedLLM, str], key: str, value: Any
) -> None:
    server, url = llm
    tools = ToolRegistry()
    tools.register("add", ADD)
    ran: list[tuple[int, int]] = []

    def add(c: Any) -> int:
        ran.append((c.a, c.b))
        return c.a + c.b

    good = {"_tool": "add", "a": 2, "b": 3}
    server.add(
        call({"output": None, "calls": [{**good, key: value}]}),
        call({"output": None, "calls": [good]}),
        call({"output": "5", "calls": []}),
    )
    agent = Agent(url, model="scripted", tools=tools, activities=ActivityRegistry({"add": add}))
    result = agent.run("add 2 and 3")
    assert result.output == "5"
    fed_back = server.tool_messages(1)[0]["content"]
    line = f"- calls[0] (tool 'add') field {key}: Extra inputs are not permitted, found {value}"
    assert line + " (keyword: additionalProperties)" in fed_back, fed_back
    assert ran == [(2, 3)]  # only the corrected call ran
