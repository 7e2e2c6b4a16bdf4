"""The RFC's Call extensions in a spec: ``_outputPath``, ``_outputMethod``,
``_instance`` and ``_delegate`` are read where a tool declares them, checked, typed in the
generated Call model, listed after ``_activity`` in the composed schema and in every export, and
absent from tools that do not use them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import CompileSpec
from toolbind.cli._export import provider_export
from toolbind.compiler import SpecError, composed_schema, read_tool_schema

STATUS: dict[str, Any] = {
    "type": "object",
    "description": "Update a user's status.",
    "properties": {
        "_tool": {"type": "string", "const": "updateUserStatus"},
        "_outputPath": {
            "type": "string",
            "description": "Path to store the user summary.",
            "pattern": "^†",
        },
        "_outputMethod": {"enum": ["set", "merge"]},
        "newStatus": {"type": "string"},
    },
    "required": ["newStatus"],
}
SUMMARY = {
    "type": "object",
    "properties": {
        "_tool": {"type": "string", "const": "summarize"},
        "_outputPath": {"type": "string", "const": "†data.user.summary"},
        "_delegate": {"type": "string", "const": "anonymous"},
        "text": {"type": "string"},
    },
    "additionalProperties": False,
}
PLAIN = {
    "type": "object",
    "properties": {"_tool": {"const": "plain"}, "x": {"type": "integer"}},
}


def test_generated_call_models_type_the_extensions(compile_spec: CompileSpec) -> None:
    module = compile_spec([STATUS, SUMMARY, PLAIN])
    call = module.UpdateUserStatusCall.model_validate(
        {"_tool": "updateUserStatus", "newStatus": "x", "_outputPath": "†data.user.status"}
    )
    assert call.output_path == "†data.user.status" and call.output_method is None
    for bad in (
        {"_outputPath": "data.user.status"},  # pattern
        {"_outputMethod": "push"},  # not in the tool's enum
        {"_outputPath": None},  # absent, never null
    ):
        with pytest.raises(ValidationError):
            module.UpdateUserStatusCall.model_validate(
                {"_tool": "updateUserStatus", "newStatus": "x", **bad}
            )
    summary = module.SummarizeCall.model_validate({"_tool": "summarize", "text": "t"})
    assert summary.output_path is None  # the prescribed value is filled in when the call runs
    with pytest.raises(ValidationError):  # const, and closed: still takes its meta fields
        module.SummarizeCall.model_validate({"_tool": "summarize", "_outputPath": "†data.x"})
    module.SummarizeCall.model_validate({"_tool": "summarize", "_delegate": "anonymous"})
    assert not hasattr(module.PlainCall(x=1), "output_path")
    tools = {t.name: t for t in module.TOOLS}
    assert tools["updateUserStatus"].extensions == {
        "_outputPath": STATUS["properties"]["_outputPath"],
        "_outputMethod": {"enum": ["set", "merge"]},
    }
    assert tools["plain"].extensions is None


def test_exports_list_the_extensions_after_activity(tmp_path: Path) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps([STATUS, SUMMARY, PLAIN]), encoding="utf-8")
    openai, _ = provider_export(spec, "openai")
    by_name: dict[str, Any] = {f["function"]["name"]: f["function"] for f in openai}
    assert list(by_name["updateUserStatus"]["parameters"]["properties"]) == [
        "_tool",
        "_activity",
        "_outputPath",
        "_outputMethod",
        "_reasoningForCall",
        "_output",
        "newStatus",
    ]
    assert list(by_name["summarize"]["parameters"]["properties"])[:4] == [
        "_tool",
        "_activity",
        "_delegate",
        "_outputPath",
    ]
    assert not any(k in by_name["plain"]["parameters"]["properties"] for k in ("_outputPath",))
    mcp, _ = provider_export(spec, "mcp")
    tool: dict[str, Any] = next(t for t in mcp["tools"] if t["name"] == "summarize")
    # as the compiler normalises it (a const string needs no type)
    assert tool["inputSchema"]["properties"]["_outputPath"] == {"const": "†data.user.summary"}


@pytest.mark.parametrize(
    ("meta", "pointer", "message"),
    [
        ({"_outputMethod": {"const": "replace"}}, "_outputMethod/const", "one of set, merge"),
        ({"_outputPath": {"const": "data.x"}}, "_outputPath/const", "no variable reference"),
        ({"_outputPath": {"enum": ["†a", "†b..c"]}}, "_outputPath/enum/1", "†<kind>"),
        ({"_delegate": {"const": 3}}, "_delegate/const", "a string"),
        ({"_scopes": {"const": "input"}}, "_scopes/const", "a list of context kinds"),
        ({"_scopes": {"enum": [["state"], ["a..b"]]}}, "_scopes/enum/1", "_scopes item"),
        ({"x-requires-approval": "yes"}, "", "a boolean"),
    ],
)
def test_bad_extension_values_are_located(meta: dict[str, Any], pointer: str, message: str) -> None:
    top = {k: v for k, v in meta.items() if k.startswith("x-")}
    props = {k: v for k, v in meta.items() if not k.startswith("x-")}
    schema = {"type": "object", "properties": {"_tool": {"const": "t"}, **props}, **top}
    pointer = pointer or "x-requires-approval"
    with pytest.raises(SpecError) as caught:
        read_tool_schema("t", schema, source="t.json")
    text = str(caught.value)
    where = pointer if top else f"properties/{pointer}"
    assert f"t.json#/{where}: error:" in text and message in text


def test_a_spec_marks_a_tool_as_requiring_approval(compile_spec: CompileSpec) -> None:
    module = compile_spec([{**PLAIN, "x-requires-approval": True}, STATUS])
    plain, status = module.TOOLS
    assert plain.requires_approval and not status.requires_approval
    assert "x-requires-approval" not in plain.parameters  # never shown to the model


DELEGATED = {
    "type": "object",
    "properties": {
        "_tool": {"const": "translate"},
        "_delegate": {"const": "translator.json"},
        "_scopes": {"type": "array", "items": {"enum": ["state", "input"]}},
        "text": {"type": "string"},
    },
}


def test_scopes_are_typed_and_listed_only_where_a_tool_declares_them(
    compile_spec: CompileSpec, tmp_path: Path
) -> None:
    """``_scopes`` (related/015): a typed Call field, and in the composed schema and every provider
    export right after ``_delegate``, before the parameters; absent from the tools without it."""
    module = compile_spec([DELEGATED, PLAIN])
    call = module.TranslateCall.model_validate(
        {"_tool": "translate", "_scopes": ["state"], "text": "hi"}
    )
    assert call.scopes == ["state"] and call.delegate is None
    assert call.model_dump(by_alias=True, exclude_unset=True)["_scopes"] == ["state"]
    with pytest.raises(ValidationError):  # items constrained by the tool's enum
        module.TranslateCall.model_validate({"_tool": "translate", "_scopes": ["secrets"]})
    assert not hasattr(module.PlainCall(x=1), "scopes")
    spec = tmp_path / "delegated.json"
    spec.write_text(json.dumps([DELEGATED, PLAIN]), encoding="utf-8")

    def props(schema: dict[str, Any]) -> list[str]:
        return list(schema["properties"])

    composed = composed_schema(spec)
    items = composed["properties"]["calls"]["items"]["anyOf"]
    exported: dict[str, list[list[str]]] = {"composed": [props(items[0]), props(items[1])]}
    openai, _ = provider_export(spec, "openai")
    exported["openai"] = [props(f["function"]["parameters"]) for f in openai]
    strict, _ = provider_export(spec, "openai-strict", explicit=True)  # PLAIN's _output: untyped
    exported["openai-strict"] = [props(f["function"]["parameters"]) for f in strict]
    anthropic, _ = provider_export(spec, "anthropic")
    exported["anthropic"] = [props(t["input_schema"]) for t in anthropic]
    gemini, _ = provider_export(spec, "gemini")
    exported["gemini"] = [props(d["parameters"]) for d in gemini["functionDeclarations"]]
    mcp, _ = provider_export(spec, "mcp")
    exported["mcp"] = [props(t["inputSchema"]) for t in mcp["tools"]]
    for fmt, (translate, plain) in exported.items():
        assert translate[:5] == [
            "_tool",
            "_activity",
            "_delegate",
            "_scopes",
            "_reasoningForCall",
        ], fmt
        assert translate[-1] == "text", fmt
        assert not {"_scopes", "_delegate"} & set(plain), fmt
        assert "_output" not in translate, fmt  # the delegate produces it (related/014)


def test_a_saved_request_compiles_its_tools(compile_spec: CompileSpec, tmp_path: Path) -> None:
    """A delegate's saved Request (related/014) is a spec toolbind compiles: its ``{type: tool}``
    items become typed tools; a tool that is no schema is located."""
    from tests.runtime.test_delegates import SPEAKER

    module = compile_spec(SPEAKER)
    assert [t.name for t in module.TOOLS] == ["deliver"]
    call = module.DeliverCall.model_validate(
        {"_tool": "deliver", "recipientId": "u_123", "messageBody": "hi"}
    )
    assert call.recipientId == "u_123"
    with pytest.raises(ValidationError):
        module.DeliverCall.model_validate({"_tool": "deliver", "recipientId": "u_123"})
    bad = tmp_path / "bad_request.json"
    bad.write_text(
        json.dumps({"context": [{"type": "tool", "tool": {"ok": {"type": "object"}, "x": 3}}]})
    )
    with pytest.raises(SpecError, match=r"bad_request.json#/context/0/tool/x: error: tool 'x'"):
        composed_schema(bad)
