"""Every MCP and BFCL tool of the corpus compiles, imports, and round-trips (``make test``: one
tool in five, the same ones each run, 25 examples each; ``make test-slow``: the other 1,793, 10
examples each — ``conftest.sweep_settings``).

For each tool, hypothesis-jsonschema generates instances of the tool's composed Call schema
(meta fields + parameters, as the LLM sees it); the generated Call model must accept each one,
in Python and in JSON mode, and dump it back (by alias, unset fields excluded) to equal JSON.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import find, given
from hypothesis.errors import Unsatisfiable
from pydantic import ValidationError

from tests.conftest import CORPUS, NO_CORPUS, instances_of, sampled, session_dir, sweep_settings
from toolbind.compiler import compile_to_directory, load_package
from toolbind.contract import tool_schema
from toolbind.runtime import ToolBinding
from toolbind.runtime.types import json_equal

TOOL_DIRS = [
    CORPUS / "tools" / "github-mcp-server",
    CORPUS / "tools" / "bfcl",
    CORPUS / "tools" / "bfcl" / "multi_turn_func_doc",
]

pytestmark = pytest.mark.skipif(not TOOL_DIRS[0].is_dir(), reason=NO_CORPUS)


@cache
def corpus_packages() -> dict[str, ModuleType]:

    out = session_dir("toolbind-corpus-")
    tree = compile_to_directory(TOOL_DIRS, out)
    return {name: load_package(out, name) for name in sorted(tree.packages)}


def corpus_tools() -> list[ToolBinding]:
    if not TOOL_DIRS[0].is_dir():
        return []
    tools: list[ToolBinding] = []
    for module in corpus_packages().values():
        tools.extend(module.TOOLS)
    return tools


def call_schema(tool: ToolBinding) -> dict[str, Any]:
    schema = tool_schema(tool)
    if tool.defs:
        schema["$defs"] = dict(tool.defs)
    return schema


def test_every_corpus_file_becomes_a_package() -> None:
    packages = corpus_packages()
    mcp_files = sorted(p.stem for p in TOOL_DIRS[0].glob("*.json"))
    assert len(mcp_files) == 117
    mcp_tools = [t for t in corpus_tools() if "github-mcp-server" in t.source]
    assert len(mcp_tools) == 116  # ui_get.json's tool is for the server's UI only: left out
    bfcl_files = [*TOOL_DIRS[1].glob("*.json"), *TOOL_DIRS[2].glob("*.json")]
    assert len(packages) == 117 + len(bfcl_files)


@pytest.mark.slow  # every one of 2,243 tools (22 s): the fast suite's budget
def test_every_corpus_model_builds() -> None:
    for module in corpus_packages().values():
        for tool in module.TOOLS:
            assert tool.call_model.model_rebuild(force=True) is not False
            assert tool.output_model.model_rebuild(force=True) is not False
        module.CallAdapter.rebuild(force=True)
        assert module.Response[str].model_validate({"output": "done", "calls": []}).output == "done"


def test_bfcl_functions_are_all_there() -> None:
    """Every BFCL function name of the corpus is a tool (qualified where definitions differ)."""
    expected: set[str] = set()
    for path in [*TOOL_DIRS[1].glob("*.json"), *TOOL_DIRS[2].glob("*.json")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                for fn in record.get("function", [record]):
                    expected.add(fn["name"])
    found = {t.original_name or t.name for t in corpus_tools() if "bfcl" in t.source}
    assert found == expected


# Tools whose schema admits no instance at all. The compiler warns about each, keeps JSON Schema's
# meaning (nothing is valid), and the test checks both facts instead of generating instances.
UNSATISFIABLE: dict[str, tuple[str, dict[str, Any]]] = {
    "extract_parameters_v1": (
        "metrics is `type: array` with string `enum` values: no value satisfies both",
        {"targets": [], "metrics": ["trust"]},
    ),
}


# one tool in five in ``make test`` (and every tool with a known-unsatisfiable schema); the rest
# in ``make test-slow``
@pytest.mark.parametrize(
    "tool",
    sampled(corpus_tools(), 5, keep=lambda t: t.name in UNSATISFIABLE),
    ids=lambda t: f"{Path(t.source.split('#')[0]).stem}:{t.name}",
)
def test_call_model_round_trips(tool: ToolBinding, request: pytest.FixtureRequest) -> None:
    schema = call_schema(tool)
    if tool.name in UNSATISFIABLE:
        _, closest = UNSATISFIABLE[tool.name]
        with pytest.raises(Unsatisfiable):
            find(instances_of(schema), lambda _: True)
        with pytest.raises(ValidationError):
            tool.call_model.model_validate({"_tool": tool.name, **closest})
        return

    @given(instances_of(schema))
    @sweep_settings(request)
    def check(instance: Any) -> None:
        model = tool.call_model.model_validate(instance)
        dumped = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
        assert json_equal(dumped, instance), (instance, dumped)
        again = tool.call_model.model_validate_json(json.dumps(instance))
        assert json_equal(
            again.model_dump(mode="json", by_alias=True, exclude_unset=True), instance
        )

    check()


def test_round_trip_sees_the_meta_fields() -> None:
    """The strategy really produces calls with ``_tool`` (a guard against an empty property)."""
    tool = next(t for t in corpus_tools() if t.name == "get_me")
    schema = call_schema(tool)
    assert schema["properties"]["_tool"] == {"const": "get_me"}
    assert schema["required"][0] == "_tool"
