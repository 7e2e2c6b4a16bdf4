"""What a model is sent is a schema a grammar builder reads (``_compose.for_grammar``).

llama.cpp's json-schema-to-grammar (which llama-cpp-python runs on a forced function's parameters)
refuses the whole schema over one subschema it cannot read — an untyped parameter (``{description}``,
any value), a property no value satisfies (``not: {}``) — and the server then lets the model write
anything: on BFCL a small model answered ``{"arguments": ...}``. The request names every JSON type
for an unconstrained subschema and leaves out a property nothing satisfies; it accepts the same
answers as the composed schema the validator holds to.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO
from toolbind._compose import for_grammar
from toolbind.runtime import Agent, ToolRegistry, compose

ANY = ["string", "number", "boolean", "object", "array", "null"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "anything": {"description": "Any value"},
        "nothing": {"not": {}, "description": "An integer that must be one of some strings"},
        "needed": {"not": {}},
        "list": {"type": "array", "items": {"title": "x"}},
        "either": {"anyOf": [{"type": "string"}, {}]},
        "ref": {"$ref": "#/$defs/free"},
    },
    "required": ["needed"],
    "$defs": {"free": {"description": "free"}},
}


def test_unconstrained_subschemas_name_every_type_and_unsatisfiable_properties_are_left_out() -> (
    None
):
    sent = for_grammar(SCHEMA)
    props = sent["properties"]
    assert props["anything"] == {"description": "Any value", "type": ANY}
    assert "nothing" not in props  # optional, and no value satisfies it
    assert props["needed"] == {"not": {}}  # required: the tool cannot be called; left as it is
    assert props["list"]["items"] == {"title": "x", "type": ANY}
    assert props["either"]["anyOf"][1] == {"type": ANY}
    assert sent["$defs"]["free"] == {"description": "free", "type": ANY}
    assert SCHEMA["properties"]["anything"] == {"description": "Any value"}  # not changed


@pytest.mark.parametrize(
    "instance",
    [
        {"needed": 1},
        {"anything": None},
        {"anything": {"a": [1, "x"]}},
        {"anything": 1.5, "list": [True, None, "s"]},
        {"either": 3},
        {"ref": [1]},
        {"nothing": 1},
        {"nothing": "x"},
    ],
)
def test_the_same_answers_are_valid(instance: dict[str, Any]) -> None:
    """Valid under the request schema iff under the composed one — but for a value of a
    property nothing satisfies, which the request leaves out and the validator refuses."""
    composed = _valid(SCHEMA, instance)
    sent = _valid(for_grammar(SCHEMA), instance)
    assert composed == (sent and "nothing" not in instance)
    assert not _valid(SCHEMA, {"needed": 1, "nothing": 1})


def _valid(schema: dict[str, Any], instance: Any) -> bool:
    validator: Any = jsonschema.Draft202012Validator(schema)
    return bool(validator.is_valid(instance))


def test_the_composed_request_is_written_for_the_grammar_and_validated_as_composed() -> None:
    tools = ToolRegistry()
    tools.register(
        "estimate",
        {
            "type": "object",
            "properties": {
                "function": {"description": "A callable"},
                # what the BFCL frontend lowers `type: integer, enum: ["1", "dontcare"]` to
                "adults": {"not": {}, "description": "Number of adults"},
            },
            "required": ["function"],
        },
    )
    composition = compose(tools, tool_choice="required")
    sent = composition.response.model_json_schema()
    item = sent["properties"]["calls"]["items"]
    assert item["properties"]["function"]["type"] == ANY
    assert "adults" not in item["properties"]
    assert "type" not in composition["properties"]["calls"]["items"]["properties"]["function"]
    answer = {"output": None, "calls": [{"_tool": "estimate", "function": "lambda x: x**2"}]}
    assert composition.response.model_validate(answer).calls[0].tool == "estimate"


def test_a_latent_output_without_a_schema_is_sent_as_an_empty_schema() -> None:
    """A latent tool's ``_output`` without an output schema is ``{}`` in the request: a grammar
    builder reads it (as any object), six type names would cost ~20 prompt tokens per tool, and
    the validator still takes any value."""
    tools = ToolRegistry()
    tools.register("guess", {"type": "object", "properties": {"q": {"type": "string"}}})
    composition = compose(tools, tool_choice="required")
    sent = composition.response.model_json_schema()
    assert sent["properties"]["calls"]["items"]["properties"]["_output"] == {}
    for value in ("a text", 3, [1], {"k": "v"}):
        answer = {"output": None, "calls": [{"_tool": "guess", "q": "x", "_output": value}]}
        assert composition.response.model_validate(answer).calls[0].tool == "guess"


@pytest.mark.parametrize(
    ("tool_choice", "says"),
    [("required", "Tool calls"), ("guess", "Tool calls"), ("none", "output"), ("auto", "and/or")],
)
def test_the_response_function_says_in_one_line_what_this_step_takes(
    tool_choice: str, says: str
) -> None:
    """The composed function's description is sent with every request: one short line for the
    step's kind (a step that requires calls says nothing of the output, which is null)."""
    tools = ToolRegistry()
    tools.register("guess", {"type": "object", "properties": {"q": {"type": "string"}}})
    doc = compose(tools, tool_choice=tool_choice).response.__doc__ or ""
    assert says in doc and len(doc) <= 50
    assert ("output" in doc) == (tool_choice in ("auto", "none"))


@pytest.mark.slow
def test_every_bfcl_request_builds_a_llama_cpp_grammar() -> None:
    """With ``make llm``: every composed request of the BFCL development questions is read by
    llama-cpp-python's grammar builder (10 of 698 were not before), except the one whose
    required parameter no value satisfies (the tool cannot be called)."""
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="make llm")
    sys.path.insert(0, str(REPO / "bench"))
    try:
        bfcl: Any = importlib.import_module("bfcl")
        corpus: Any = importlib.import_module("_corpus")
    finally:
        sys.path.remove(str(REPO / "bench"))
    questions: list[Any] = bfcl.load(corpus.corpus_root(), list(bfcl.CATEGORIES), 1000)
    refused: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        pkg: Any = bfcl.compile_questions(questions, Path(tmp))
        by_name: dict[str, Any] = {t.name: t for t in pkg.TOOLS}
        for q in questions:
            qid: str = q.id
            tools = [by_name[n] for n in pkg.TOOLSETS[qid]]
            agent = Agent("http://127.0.0.1:9/v1", model="x", tools=tools)
            sent = agent.composition(None, "required", tools, ()).response.model_json_schema()
            try:
                grammar = llama_grammar.json_schema_to_gbnf(json.dumps(sent))
                llama_grammar.LlamaGrammar.from_string(grammar, verbose=False)
            except Exception:  # whatever the builder raises: no grammar
                refused.append(qid)
    assert len(questions) == 698
    assert refused == ["live_simple_71-35-0"], refused
