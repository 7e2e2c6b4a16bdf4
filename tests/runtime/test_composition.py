"""Schema composition follows the seeds: agent-tool-rfc.md's composed example, meta-field rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO, CompileSpec
from toolbind.compiler import composed_schema
from toolbind.contract import resolve_activity
from toolbind.runtime import ToolBinding, compose

SPECS = REPO / "specs" / "seeds.yaml"
SUMMARY = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}

# agent-tool-rfc.md, "Composed Schema (for the LLM)", verbatim …
RFC_EXAMPLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {
            "type": ["object", "null"],
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
            "additionalProperties": False,
        },
        "calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"_tool": {"const": "greetUser"}, "userName": {"type": "string"}},
                "required": ["_tool", "userName"],
            },
        },
    },
    "required": ["calls", "output"],
}


def rfc_with_meta_rules() -> dict[str, Any]:
    """… plus the documented meta-field rules of tool-system.md / tool-system.ru.md."""
    expected = json.loads(json.dumps(RFC_EXAMPLE))
    item = expected["properties"]["calls"]["items"]
    item["properties"] = {
        "_tool": {"const": "greetUser"},
        "_activity": {"const": ""},  # no Activity: latent
        "_reasoningForCall": {  # added by the system, saying what it is for
            "type": "string",
            "description": "Optional: why this call, in one short sentence, before its arguments.",
        },
        "_output": {},  # latent: optional output, any JSON (greetUser declares none)
        "userName": {"type": "string"},
    }
    return expected


def test_greet_user_matches_the_rfc_example(tmp_path: Path) -> None:
    out_file = tmp_path / "summary.json"
    out_file.write_text(json.dumps(SUMMARY), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolbind.cli",
            "schema",
            "specs/seeds.yaml",
            "--tool",
            "greetUser",
            "--output-schema",
            str(out_file),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == rfc_with_meta_rules()
    # meta fields come first, in the documented order
    props = json.loads(result.stdout)["properties"]["calls"]["items"]["properties"]
    assert list(props) == ["_tool", "_activity", "_reasoningForCall", "_output", "userName"]


def test_without_output_schema_output_is_nullable_text() -> None:
    schema = composed_schema(SPECS, tool="greetUser")
    assert schema["properties"]["output"] == {"type": ["string", "null"]}


def test_all_tools_become_any_of_in_spec_order() -> None:
    schema = composed_schema(SPECS)
    variants = schema["properties"]["calls"]["items"]["anyOf"]
    assert [v["properties"]["_tool"]["const"] for v in variants] == [
        "sentimentAnalysis",
        "weatherCheck",
        "sendEmail",
        "greetUser",
    ]
    weather = variants[1]
    assert weather["description"] == "Gets the current weather for a location"
    assert weather["properties"]["_output"]["properties"]["temperature"] == {"type": "number"}
    assert "_output" not in weather["required"]


def test_activity_resolution_order(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        {
            "plain": {
                "type": "object",
                "properties": {"_tool": {"const": "plain"}, "x": {"type": "string"}},
            },
            "pinned": {
                "type": "object",
                "properties": {
                    "_tool": {"const": "pinned"},
                    "_activity": {"type": "string", "const": "someActivity"},
                    "_output": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                },
            },
        }
    )
    plain, pinned = module.TOOLS
    assert isinstance(plain, ToolBinding)
    # latent fallback, same-name convention, explicit _activity always wins
    assert resolve_activity(plain) == ""
    assert resolve_activity(plain, {"plain"}) == "plain"
    assert resolve_activity(pinned, {"pinned"}) == "someActivity"
    composed = compose(module.TOOLS, activities={"plain"})
    items = composed["properties"]["calls"]["items"]["anyOf"]
    # explicit tools don't ask the LLM for _output; latent ones offer it, optional
    assert "_output" not in items[0]["properties"]
    assert items[0]["properties"]["_activity"] == {"const": "plain"}
    assert "_output" not in items[1]["properties"]
    assert items[1]["properties"]["_activity"] == {"const": "someActivity"}
    latent = compose(module.TOOLS[:1])["properties"]["calls"]["items"]
    assert latent["properties"]["_output"] == {}
    assert latent["required"] == ["_tool"]


def test_shared_definitions_are_written_once(compile_spec: CompileSpec) -> None:
    address = {
        "type": "object",
        "properties": {"street": {"type": "string"}},
        "required": ["street"],
    }
    module = compile_spec(
        {
            "$defs": {"Address": address},
            "tools": [
                {
                    "name": "ship",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"to": {"$ref": "#/$defs/Address"}},
                    },
                },
                {
                    "name": "bill",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"at": {"$ref": "#/$defs/Address"}},
                    },
                },
            ],
        }
    )
    composed = compose(module.TOOLS)
    assert composed["$defs"] == {"Address": address}
    text = json.dumps(composed)
    assert text.count('"street": {') == 1
    assert composed["properties"]["calls"]["items"]["anyOf"][0]["properties"]["to"] == {
        "$ref": "#/$defs/Address"
    }


def test_packages_ship_their_composed_schema() -> None:
    shipped = json.loads((REPO / "generated" / "seeds" / "schema.json").read_text(encoding="utf-8"))
    assert shipped.pop("$comment").startswith("DO NOT EDIT: generated by toolbind ")
    assert shipped == composed_schema(SPECS)
    assert shipped["required"] == ["calls", "output"]


def test_a_property_named_like_a_data_keyword_keeps_its_definition(
    compile_spec: CompileSpec,
) -> None:
    # Harbor's ``Instance`` has a property named ``default`` (a $ref): the definitions reached
    # only through it were dropped from tools.json and from composed schemas, so the tool's
    # schema held a $ref to nothing (``toolbind test`` died on jsonschema's RefResolutionError)
    flag = {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}
    kind = {"type": "string", "enum": ["a", "b"]}
    properties = {n: {"$ref": "#/$defs/Flag"} for n in ("default", "const", "examples", "example")}
    properties["enum"] = {"$ref": "#/$defs/Kind"}
    tools = [
        {"name": name, "inputSchema": {"type": "object", "properties": properties}}
        for name in ("set0", "set1")
    ]
    module = compile_spec({"$defs": {"Flag": flag, "Kind": kind}, "tools": tools})
    for tool in module.TOOLS:
        refs = {
            ref.removeprefix("#/$defs/")
            for ref in re.findall(r'"\$ref": "([^"]+)"', json.dumps(tool.parameters))
        }
        assert refs <= set(tool.defs), (tool.name, refs, set(tool.defs))
    composed = compose(module.TOOLS)
    assert {"Flag", "Kind"} <= set(composed["$defs"])
    call = {"_tool": "set1", "default": {"on": True}, "enum": "b"}
    validator: Any = jsonschema.Draft202012Validator(composed)
    validator.validate({"calls": [call], "output": None})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"calls": [{**call, "enum": "c"}], "output": None})
