"""Provider exports: OpenAI (faithful and strict), Anthropic, Gemini, MCP.

The OpenAI strict export is checked by ``strict_violations`` — the published Structured Outputs
rules written as a validator that lists violations with JSON pointers — over every tool of
``specs/`` and of the corpus; the checker itself is tested on schemas that break each rule. Strict
responses (generated from the strict schemas) map back to valid faithful Calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import ValidationError

from tests.compiler.test_corpus_tools import TOOL_DIRS, corpus_tools
from tests.conftest import NO_CORPUS, REPO, CompileSpec, instances_of, session_dir
from toolbind.runtime import ToolBinding
from toolbind.runtime.errors import NotStrictable
from toolbind.runtime.exports import (
    ExportIssue,
    anthropic_tools,
    call_from_strict,
    gemini_tools,
    mcp_tools,
    openai_strict_schema,
    openai_strict_tools,
    openai_tools,
    strict_violations,
)
from toolbind.runtime.exports._common import call_schema
from toolbind.runtime.types import json_equal


@pytest.fixture(scope="session")
def spec_tools() -> list[ToolBinding]:

    from toolbind.compiler import compile_to_directory, load_package

    out = session_dir("toolbind-specs-")
    tree = compile_to_directory([REPO / "specs"], out)
    tools: list[ToolBinding] = []
    for name in sorted(tree.packages):
        module: ModuleType = load_package(out, name)
        tools.extend(module.TOOLS)
    return tools


@pytest.fixture(scope="session")
def all_corpus_tools() -> list[ToolBinding]:
    """The corpus tools, compiled once per session ([] when the corpus is not beside the repo)."""
    return corpus_tools()


needs_corpus = pytest.mark.skipif(not TOOL_DIRS[0].is_dir(), reason=NO_CORPUS)


def resolve(schema: Any, pointer: str) -> Any:
    node: Any = schema
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = cast("list[Any]", node)[int(token)]
        else:
            node = cast("dict[str, Any]", node)[token]
    return node


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        items = cast("dict[str, Any]", value).items()
        return {k: without_nulls(v) for k, v in items if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in cast("list[Any]", value)]
    return value


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        n = cast("dict[str, Any]", node)
        yield n
        for key, value in n.items():
            if key not in ("enum", "const", "required", "default", "examples"):
                yield from walk(value)
    elif isinstance(node, list):
        for value in cast("list[Any]", node):
            yield from walk(value)


# -- the rule checker ---------------------------------------------------------------------------


def kinds(schema: Any) -> dict[str, str]:
    return {issue.pointer: issue.kind for issue in strict_violations(schema)}


def closed(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def test_checker_accepts_a_conforming_schema() -> None:
    schema = closed(
        {
            "name": {"type": "string", "pattern": "^[a-z]+$", "description": "who"},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
            "tags": {"type": "array", "items": {"enum": ["a", "b", None]}, "maxItems": 3},
            "pick": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}]},
            "kind": {"const": "x"},
        }
    )
    schema["$defs"] = {"Pet": closed({"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}})}
    assert strict_violations(schema) == []


@pytest.mark.parametrize(
    ("schema", "pointer", "kind"),
    [
        ({"anyOf": [closed({})]}, "", "root"),
        ({"type": "array", "items": {"type": "string"}}, "", "root"),
        ({"type": "object", "properties": {}, "required": []}, "", "additionalProperties"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": [],
                "additionalProperties": False,
            },
            "",
            "required",
        ),
        (
            closed({"m": {"type": "object", "additionalProperties": False}}),
            "/properties/m",
            "free-form object",
        ),
        (closed({"a": {"type": "string", "minLength": 1}}), "/properties/a", "keyword minLength"),
        (closed({"a": {"allOf": [{"type": "string"}]}}), "/properties/a", "keyword allOf"),
        (
            closed({"a": {"not": {"type": "string"}, "type": "integer"}}),
            "/properties/a",
            "keyword not",
        ),
        (
            closed(
                {
                    "a": {
                        "type": "object",
                        "properties": {},
                        "required": [],
                        "additionalProperties": False,
                        "patternProperties": {},
                    }
                }
            ),
            "/properties/a",
            "keyword patternProperties",
        ),
        (closed({"a": {"type": "string", "format": "uri"}}), "/properties/a", "format"),
        (closed({"a": {}}), "/properties/a", "untyped"),
        (closed({"a": True}), "/properties/a", "boolean schema"),
        (closed({"a": {"type": "date"}}), "/properties/a", "type"),
        (closed({"a": {"type": "array"}}), "/properties/a", "items"),
        (closed({"a": {"$ref": "#/$defs/Missing"}}), "/properties/a", "$ref"),
        (closed({"a": {"type": "string", "required": ["x"]}}), "/properties/a", "object keyword"),
        (closed({"a": {"enum": []}}), "/properties/a", "enum"),
    ],
)
def test_checker_finds_each_rule(schema: dict[str, Any], pointer: str, kind: str) -> None:
    found = kinds(schema)
    assert found.get(pointer) == kind or kind in {
        i.kind for i in strict_violations(schema) if i.pointer == pointer
    }, found


def test_checker_counts_the_limits() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        deep = closed({"x": deep})
    assert "limit" in kinds(deep).values()
    ten: dict[str, Any] = {"type": "string"}
    for _ in range(10):
        ten = closed({"x": ten})
    assert strict_violations(ten) == []

    wide = closed(
        {f"p{i}": closed({f"q{j}": {"type": "string"} for j in range(100)}) for i in range(50)}
    )
    assert [i.message for i in strict_violations(wide)] == ["5050 properties (at most 5000)"]
    many = closed({f"e{i}": {"enum": list(range(21))} for i in range(50)})
    assert any("1050 enum values" in i.message for i in strict_violations(many))
    long_enum = closed({"e": {"enum": [f"{i:0>70}" for i in range(251)]}})
    assert any("251 strings" in i.message for i in strict_violations(long_enum))
    names = closed({"n" * 60_001: {"type": "string"}, "m" * 60_000: {"type": "string"}})
    assert any("characters" in i.message for i in strict_violations(names))


# -- the strict transform -----------------------------------------------------------------------


def check_export(tools: list[ToolBinding], activities: set[str]) -> tuple[int, Counter[str]]:
    """Each tool is exported (and passes the checker) or refused with located reasons."""
    export = openai_strict_tools(tools, activities)
    for entry in export.tools:
        function = entry["function"]
        assert function["strict"] is True
        assert strict_violations(function["parameters"]) == [], function["name"]
    exported = 0
    reasons: Counter[str] = Counter()
    for tool in tools:
        try:
            schema = openai_strict_schema(tool, activities)
        except NotStrictable as exc:
            assert exc.issues
            composed = call_schema(tool, activities)
            for issue in exc.issues:
                assert issue.tool == tool.name and issue.message and issue.kind
                resolve(composed, issue.pointer)  # every reason points at a real place
                reasons[issue.kind] += 1
            continue
        exported += 1
        assert strict_violations(schema) == [], tool.name
    assert exported == len(export.tools)
    assert reasons == Counter(i.kind for i in export.refused)
    return exported, reasons


@pytest.mark.parametrize("explicit", [False, True], ids=["latent", "explicit"])
def test_every_specs_tool_is_strict_or_refused_with_reasons(
    spec_tools: list[ToolBinding], explicit: bool
) -> None:
    activities: set[str] = {t.name for t in spec_tools} if explicit else set()
    exported, _ = check_export(spec_tools, activities)
    assert exported > 0


@needs_corpus
@pytest.mark.parametrize("explicit", [False, True], ids=["latent", "explicit"])
def test_every_corpus_tool_is_strict_or_refused_with_reasons(
    all_corpus_tools: list[ToolBinding], explicit: bool
) -> None:
    activities: set[str] = {t.name for t in all_corpus_tools} if explicit else set()
    exported, reasons = check_export(all_corpus_tools, activities)
    assert exported > len(all_corpus_tools) // 2 if explicit else exported > 0
    assert reasons  # the corpus has free-form maps and untyped values: they are reported


def test_refusal_reasons_are_located(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        {
            "tools": [
                {
                    "name": "setMeta",
                    "description": "d",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "labels": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                            },
                            "note": {"type": "string", "maxLength": 10},
                            "blob": {},
                        },
                        "required": ["labels"],
                    },
                }
            ]
        }
    )
    (tool,) = pkg.TOOLS
    with pytest.raises(NotStrictable) as caught:
        openai_strict_schema(tool, {"setMeta"})
    found = {(i.pointer, i.kind) for i in caught.value.issues}
    assert found == {
        ("/properties/labels", "free-form object"),
        ("/properties/note/maxLength", "keyword maxLength"),
        ("/properties/blob", "unconstrained value"),
    }
    assert all(i.tool == "setMeta" for i in caught.value.issues)
    assert "setMeta: #/properties/labels:" in str(caught.value)


def test_enum_of_objects_is_refused(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        {
            "tools": [
                {
                    "name": "pick",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"p": {"enum": [{"x": 1}, "y"]}},
                        "required": ["p"],
                    },
                }
            ]
        }
    )
    with pytest.raises(NotStrictable) as caught:
        openai_strict_schema(pkg.TOOLS[0], {"pick"})
    assert [(i.pointer, i.kind) for i in caught.value.issues] == [("/properties/p", "enum")]


def seeds_tools() -> list[ToolBinding]:
    import importlib

    return list(importlib.import_module("generated.seeds").TOOLS)


def test_strict_shape_of_weather_check() -> None:
    weather = next(t for t in seeds_tools() if t.name == "weatherCheck")
    schema = openai_strict_schema(weather, {"weatherCheck"})
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["_tool", "_activity", "_reasoningForCall", "location"]
    assert schema["properties"]["location"] == {
        "type": "string",
        "description": 'City name, e.g. "Paris"',
    }
    assert schema["properties"]["_reasoningForCall"]["type"] == ["string", "null"]
    assert schema["properties"]["_activity"] == {
        "anyOf": [{"const": "weatherCheck"}, {"type": "null"}]
    }


def test_a_strict_response_maps_back_to_the_faithful_model() -> None:
    weather = next(t for t in seeds_tools() if t.name == "weatherCheck")
    arguments = json.dumps(
        {"_tool": "weatherCheck", "_activity": None, "_reasoningForCall": None, "location": "Paris"}
    )
    call = call_from_strict(weather, arguments, {"weatherCheck"})
    assert type(call) is weather.call_model
    assert call.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "_tool": "weatherCheck",
        "location": "Paris",
    }
    # the faithful model still refuses what the faithful schema refuses
    with pytest.raises(ValidationError):
        call_from_strict(weather, {"_tool": "weatherCheck", "location": None})
    sentiment = next(t for t in seeds_tools() if t.name == "sentimentAnalysis")
    latent = call_from_strict(
        sentiment,
        {
            "_tool": "sentimentAnalysis",
            "_activity": "",
            "_reasoningForCall": "asked",
            "_output": {"sentiment": "positive", "confidence": None},
            "text": "great",
        },
    )
    assert latent.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "_tool": "sentimentAnalysis",
        "_activity": "",
        "_reasoningForCall": "asked",
        "_output": {"sentiment": "positive"},
        "text": "great",
    }


def test_a_null_the_faithful_schema_allows_is_kept(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        {
            "tools": [
                {
                    "name": "find",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "cursor": {"type": ["string", "null"]},
                            "limit": {"type": "integer"},
                            "filter": {"$ref": "#/$defs/Filter"},
                        },
                        "$defs": {
                            "Filter": {
                                "type": "object",
                                "properties": {
                                    "tag": {"type": "string"},
                                    "any": {"type": "boolean"},
                                },
                                "required": ["tag"],
                            }
                        },
                    },
                }
            ]
        }
    )
    (tool,) = pkg.TOOLS
    schema = openai_strict_schema(tool, {"find"})
    assert strict_violations(schema) == []
    call = call_from_strict(
        tool,
        {
            "_tool": "find",
            "_activity": "find",
            "_reasoningForCall": None,
            "cursor": None,
            "limit": None,
            "filter": {"tag": "x", "any": None},
        },
        {"find"},
    )
    assert call.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "_tool": "find",
        "_activity": "find",
        "cursor": None,
        "filter": {"tag": "x"},
    }


def test_generated_strict_responses_map_back(
    spec_tools: list[ToolBinding], all_corpus_tools: list[ToolBinding]
) -> None:
    """Instances of the strict schema (what a strict model can write) are valid faithful Calls."""
    sample = [*spec_tools, *all_corpus_tools[::40]]
    checked = 0
    for tool in sample:
        activities = {tool.name}
        try:
            schema = openai_strict_schema(tool, activities)
        except NotStrictable:
            continue
        checked += 1

        @settings(
            max_examples=5,
            suppress_health_check=[
                HealthCheck.too_slow,
                HealthCheck.filter_too_much,
                HealthCheck.data_too_large,
            ],
            deadline=None,
        )
        @given(instances_of(schema))
        def round_trip(instance: Any) -> None:
            call = call_from_strict(tool, instance, activities)  # noqa: B023
            dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
            # the same values, but for nulls (dropped where strict mode forced them)
            assert json_equal(without_nulls(dumped), without_nulls(instance))
            assert set(dumped) <= set(instance)

        round_trip()
    assert checked > 20


# -- the other providers ------------------------------------------------------------------------


def test_openai_and_anthropic_and_mcp_shapes(spec_tools: list[ToolBinding]) -> None:
    seeds = [t for t in spec_tools if "seeds" in t.source]
    (weather_openai,) = [
        t for t in openai_tools(seeds, {"weatherCheck"}) if t["function"]["name"] == "weatherCheck"
    ]
    assert weather_openai["type"] == "function"
    params = weather_openai["function"]["parameters"]
    assert params["properties"]["_activity"] == {"const": "weatherCheck"}
    assert "strict" not in weather_openai["function"]

    anthropic = anthropic_tools(seeds)
    assert [t["name"] for t in anthropic] == [t.provider_name for t in seeds]
    assert anthropic[0]["input_schema"]["properties"]["_tool"] == {"const": "sentimentAnalysis"}

    listed = mcp_tools(spec_tools)
    assert set(listed) == {"tools"}
    # the seeds' own tools (another spec in specs/ may define a tool of the same name)
    by_name = {t["name"]: t for t in mcp_tools(seeds)["tools"]}
    assert by_name["weatherCheck"]["outputSchema"]["properties"]["temperature"] == {
        "type": "number"
    }
    assert "outputSchema" not in by_name["greetUser"]
    for entry in listed["tools"]:
        assert entry["inputSchema"]["type"] == "object"
        for node in walk(entry["inputSchema"]):
            ref = node.get("$ref")
            if isinstance(ref, str):  # every $ref resolves inside the tool's own schema
                resolve(entry["inputSchema"], ref[1:])
    annotated = [t for t in spec_tools if t.annotations]
    if annotated:
        (entry,) = mcp_tools(annotated[:1])["tools"]
        assert entry["annotations"] == dict(annotated[0].annotations or {})


GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}
GEMINI_KEYS = {
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
    "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
    "pattern", "anyOf", "items", "minimum", "maximum",
}  # fmt: skip


def check_gemini(node: Any, pointer: str = "") -> None:
    """``node`` uses only Gemini's Schema fields, recursively."""
    assert isinstance(node, dict), pointer
    n = cast("dict[str, Any]", node)
    assert set(n) <= GEMINI_KEYS, (pointer, set(n) - GEMINI_KEYS)
    if "type" in n:
        assert n["type"] in GEMINI_TYPES, pointer
    if "enum" in n:
        assert all(isinstance(v, str) for v in n["enum"]), pointer
    if "nullable" in n:
        assert n["nullable"] is True
    if "format" in n:
        assert n["format"] in {"float", "double", "int32", "int64", "enum", "date-time"}, pointer
    for name, sub in n.get("properties", {}).items():
        check_gemini(sub, f"{pointer}/properties/{name}")
    for name in n.get("required", []):
        assert name in n["properties"], pointer
    if "items" in n:
        check_gemini(n["items"], f"{pointer}/items")
    for i, branch in enumerate(n.get("anyOf", [])):
        check_gemini(branch, f"{pointer}/anyOf/{i}")


def test_gemini_declarations(
    spec_tools: list[ToolBinding], all_corpus_tools: list[ToolBinding]
) -> None:
    export = gemini_tools([*spec_tools, *all_corpus_tools])
    assert len(export.declarations) == len(spec_tools) + len(all_corpus_tools)
    text = json.dumps(export.declarations)
    assert '"$ref"' not in text and '"additionalProperties"' not in text and '"const"' not in text
    for declaration in export.declarations:
        assert set(declaration) <= {"name", "description", "parameters"}
        check_gemini(declaration["parameters"])
    weather = next(d for d in export.declarations if d["name"] == "weatherCheck")
    assert weather["parameters"]["properties"]["_reasoningForCall"]["type"] == "STRING"
    assert weather["parameters"]["properties"]["_tool"] == {
        "type": "STRING",
        "enum": ["weatherCheck"],
    }
    assert all(isinstance(n, ExportIssue) and n.tool for n in export.notes)


def test_gemini_inlines_definitions_and_cuts_recursion(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        {
            "tools": [
                {
                    "name": "tree",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "root": {"$ref": "#/$defs/Node"},
                            "when": {"type": ["string", "null"]},
                        },
                        "$defs": {
                            "Node": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "children": {
                                        "type": "array",
                                        "items": {"$ref": "#/$defs/Node"},
                                    },
                                },
                            }
                        },
                    },
                }
            ]
        }
    )
    export = gemini_tools(pkg.TOOLS, recursion=2)
    (declaration,) = export.declarations
    root = declaration["parameters"]["properties"]["root"]
    assert root["type"] == "OBJECT" and root["properties"]["label"] == {"type": "STRING"}
    second = root["properties"]["children"]["items"]
    assert second["properties"]["label"] == {"type": "STRING"}
    cut = second["properties"]["children"]["items"]
    assert cut["type"] == "OBJECT" and "properties" not in cut
    assert declaration["parameters"]["properties"]["when"] == {"type": "STRING", "nullable": True}
    (note,) = [n for n in export.notes if n.kind == "recursion"]
    assert note.pointer == "/properties/root/properties/children/items/properties/children/items"
    check_gemini(declaration["parameters"])


# -- the command line ---------------------------------------------------------------------------


def toolbind(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolbind.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "300"},
    )


def test_schema_command_prints_each_format() -> None:
    seeds = "specs/seeds.yaml"
    strict = toolbind("schema", seeds, "--format", "openai-strict")
    assert strict.returncode == 0, strict.stderr
    tools = json.loads(strict.stdout)
    assert [t["function"]["name"] for t in tools] == [
        "sentimentAnalysis",
        "weatherCheck",
        "sendEmail",
    ]
    assert all(strict_violations(t["function"]["parameters"]) == [] for t in tools)
    assert (
        "specs/seeds.yaml#/greetUser: warning: tool 'greetUser' cannot be made strict:"
        " at #/properties/_output of its composed schema" in strict.stderr
    )
    assert "3 tool(s) strict, 1 refused" in strict.stderr

    explicit = toolbind("schema", seeds, "--format", "openai-strict", "--explicit")
    assert len(json.loads(explicit.stdout)) == 4 and "0 refused" in explicit.stderr

    printed: dict[str, Any] = {}
    for fmt in ("openai", "anthropic", "gemini", "mcp"):
        result = toolbind("schema", seeds, "--format", fmt, "--tool", "weatherCheck")
        assert result.returncode == 0, result.stderr
        printed[fmt] = json.loads(result.stdout)
    assert printed["openai"][0]["function"]["name"] == "weatherCheck"
    assert printed["anthropic"][0]["input_schema"]["properties"]["location"]["type"] == "string"
    gemini = printed["gemini"]["functionDeclarations"][0]["parameters"]
    assert gemini["properties"]["location"]["type"] == "STRING"
    (mcp,) = printed["mcp"]["tools"]
    assert mcp["name"] == "weatherCheck" and mcp["outputSchema"]["type"] == "object"


def test_mcp_tools_are_exported_as_they_run_never_asking_the_model_for_their_output(
    tmp_path: Path,
) -> None:
    """The defect (found exporting ``excel-mcp-server``'s 46 tools with ``toolbind schema
    --format openai-strict``): an MCP tool runs on its server and is never latent, yet the exports,
    ``toolbind schema`` and a package's ``schema.json`` composed it latent — ``_activity: ""`` and
    an ``_output`` for the model to invent (for which most "cannot be made strict")."""
    from toolbind.cli._export import provider_export
    from toolbind.compiler import composed_schema

    spec = tmp_path / "tools.json"
    tool = {
        "name": "read_range",
        "inputSchema": {"type": "object", "properties": {"sheet": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"range": {"type": "string"}}},
    }
    spec.write_text(json.dumps({"tools": [tool]}), encoding="utf-8")
    (openai,), _ = provider_export(spec, "openai")
    params = openai["function"]["parameters"]["properties"]
    assert "_output" not in params and params["_activity"] == {"const": "read_range"}
    (strict,), refused = provider_export(spec, "openai-strict")
    assert refused == [] and "_output" not in strict["function"]["parameters"]["properties"]
    composed = composed_schema(spec)["properties"]["calls"]["items"]["properties"]
    assert "_output" not in composed and composed["_activity"] == {"const": "read_range"}


def test_schema_command_usage_errors() -> None:
    bad = toolbind("schema", "specs/seeds.yaml", "--format", "yaml")
    assert bad.returncode == 2 and "--format 'yaml'" in bad.stderr and "Traceback" not in bad.stderr
    mixed = toolbind(
        "schema", "specs/seeds.yaml", "--format", "openai", "--output-schema", "x.json"
    )
    assert mixed.returncode == 2
    missing = toolbind("schema", "specs/seeds.yaml", "--format", "mcp", "--tool", "nope")
    assert missing.returncode == 1 and "no tool named 'nope'" in missing.stderr


def test_a_oneof_no_value_matches_twice_is_strict_as_anyof(compile_spec: CompileSpec) -> None:
    # Litestar writes every Optional[X] as oneOf [X, {type: null}]: 28 of Evidently's 66 tools
    # were refused ("'oneOf' has no strict-mode equivalent"), 5 are now (free-form maps)
    nullable_uuid = {"oneOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}
    body = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "author": {"oneOf": [{"$ref": "#/components/schemas/Id"}, {"type": "null"}]},
            "kind": {"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]},
        },
    }
    overlapping = {
        "oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^a"}]
    }

    def op(op_id: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "operationId": op_id,
            "parameters": [{"name": "team_id", "in": "query", "schema": nullable_uuid}],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": schema}},
            },
            "responses": {"201": {"description": "made"}},
        }

    pkg = compile_spec(
        {
            "openapi": "3.1.0",
            "info": {"title": "litestar", "version": "1"},
            "paths": {
                "/projects": {"post": op("addProject", body)},
                "/other": {
                    "post": op("addOther", {"type": "object", "properties": {"tag": overlapping}})
                },
            },
            "components": {"schemas": {"Id": {"type": "string", "format": "uuid"}}},
        }
    )
    add, other = sorted(pkg.TOOLS, key=lambda t: t.name != "addProject")
    schema = openai_strict_schema(add, {"addProject"})
    assert strict_violations(schema) == []
    assert "oneOf" not in json.dumps(schema)
    call = call_from_strict(
        add,
        {"_tool": "addProject", "_activity": "addProject", "_reasoningForCall": None,
         "team_id": None, "name": "p", "author": None, "kind": "b"},
        {"addProject"},
    )  # fmt: skip
    assert call.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "_tool": "addProject", "_activity": "addProject", "team_id": None, "name": "p",
        "author": None, "kind": "b",
    }  # fmt: skip
    with pytest.raises(NotStrictable) as caught:  # two strings: a value may match both
        openai_strict_schema(other, {"addOther"})
    assert [(i.pointer, i.kind) for i in caught.value.issues] == [
        ("/properties/tag/oneOf", "keyword oneOf")
    ]


def test_two_consts_json_schema_takes_for_one_value_are_not_told_apart() -> None:
    """A ``oneOf`` of ``const: 1`` and ``const: 1.0`` rejects 1 (it matches both): it is no
    ``anyOf``, whatever the JSON texts say; ``1`` and ``2.5`` are told apart."""
    from toolbind.runtime.exports._openai_strict import (
        _exclusive,  # pyright: ignore[reportPrivateUsage]
    )

    assert not _exclusive([{"const": 1}, {"const": 1.0}], {})
    assert not _exclusive([{"const": [1, {"a": 2}]}, {"const": [1.0, {"a": 2.0}]}], {})
    assert _exclusive([{"const": 1}, {"const": 2.5}], {})
