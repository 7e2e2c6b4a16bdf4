"""A large package's tools are usable lazily.

``generated/github_mcp`` (116 tools, models split under ``_models/``) is imported in a fresh
interpreter, so ``sys.modules`` shows exactly what each step loaded: registering every tool and
composing a few builds no model class, the first validated call of one tool imports only the
modules its models need (not ``models``), and the whole-package names (``Call``, ``CallAdapter``, ``Response``)
still work, built on first use. Registering reads ``tools_index.json`` (each tool's entry, its
schemas' byte spans in ``tools.json``): a tool's schemas, and each shared definition, are parsed
on first use, and equal what the whole file gives.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from toolbind.runtime import ToolBinding, compose
from toolbind.runtime.errors import RegistrationError

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
sys.path.insert(0, {generated!r})
from toolbind.runtime import Tool, compose

def loaded():
    return sorted(m for m in sys.modules if m.startswith("github_mcp.") and m != "github_mcp.tools")

import github_mcp
Tool.register_package(github_mcp)
names = [t.name for t in github_mcp.TOOLS]
after_register = loaded()
schema = compose([Tool[n] for n in names[:10]])
after_compose = loaded()
binding = Tool["get_me"]
call = binding.call_model.model_validate({{"_tool": "get_me"}})
after_call = loaded()
total_modules = len(list((__import__("pathlib").Path(github_mcp.__file__).parent / "_models").glob("*.py")))
union_call = github_mcp.CallAdapter.validate_python({{"_tool": "list_issues", "owner": "o", "repo": "r"}})
from github_mcp.tools import Call, Response
print(json.dumps({{
    "tools": len(names),
    "after_register": after_register,
    "after_compose": after_compose,
    "composed": len(schema["properties"]["calls"]["items"]["anyOf"]),
    "after_call": after_call,
    "total_modules": total_modules,
    "call": type(call).__name__,
    "same_model": binding.call_model is github_mcp.GetMeCall,
    "union_call": type(union_call).__name__,
    "response": Response.__name__,
    "call_is_alias": Call is github_mcp.Call,
    "calls_loaded": "github_mcp._calls" in sys.modules,
}}))
"""


def test_register_and_compose_build_no_model_and_one_call_loads_one_tool() -> None:
    code = PROBE.format(generated=str(REPO / "generated"))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    facts = json.loads(run.stdout)
    assert facts["tools"] == 116  # of 117 listed: ui_get is for the server's UI only
    # names, descriptions and schemas come from tools.json: no model module, no union
    assert facts["after_register"] == []
    assert facts["after_compose"] == []
    assert facts["composed"] == 10
    # the first validated call imports the few modules get_me's models need (named by
    # tools.py), not `models` and its map of every model
    loaded_models = [m for m in facts["after_call"] if m.startswith("github_mcp._models.")]
    assert "github_mcp.models" not in facts["after_call"]
    assert 0 < len(loaded_models) <= 3, loaded_models
    assert facts["total_modules"] > 50
    assert facts["call"] == "GetMeCall" and facts["same_model"]
    # the package-wide names still work (they load every tool's models, on first use)
    assert facts["union_call"] == "ListIssuesCall"
    assert facts["response"].startswith("ToolResponse")
    assert facts["call_is_alias"] and facts["calls_loaded"]


def test_a_small_package_binds_its_models_eagerly() -> None:
    from generated.seeds import TOOLS, SentimentAnalysisCall

    first = TOOLS[0]
    assert first.models == (first.call_model, first.output_model)
    assert first.call_model is SentimentAnalysisCall


USE_PHASE = """
import json, sys
sys.path.insert(0, {generated!r})
import github_mcp
from toolbind.runtime import Tool, compose
Tool.register_package(github_mcp)
compose(list(Tool)[:10])
Tool["get_me"].call_model.model_validate({{"_tool": "get_me"}})
from toolbind import _formats
print(json.dumps({{
    "modules": sorted(sys.modules),
    "grammars_compiled": _formats._uri_grammar.cache_info().currsize,
}}))
"""

# What registering a package, composing and one validated call must not load: the HTTP
# client, the LLM stack, the compiler and its template/YAML engines, the schema validator,
# the runtime's HTTP/contract layer (a package's import needs only what
# registering needs; the rest loads when an Activity or an Agent runs).
NOT_ON_THE_USE_PATH = (
    "httpx",
    "instructor",
    "openai",
    "jsonschema",
    "yaml",
    "jinja2",
    "toolbind.compiler",
    "toolbind.contract",
    "toolbind.runtime.contract",
    "toolbind.runtime.http",
    "toolbind.runtime._agent",
)


def test_registering_and_a_first_call_load_only_what_they_need() -> None:
    code = USE_PHASE.format(generated=str(REPO / "generated"))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    facts = json.loads(run.stdout)
    loaded = [
        m
        for m in facts["modules"]
        if any(m == top or m.startswith(top + ".") for top in NOT_ON_THE_USE_PATH)
    ]
    assert loaded == []
    # the URI/IRI grammars (tens of milliseconds to compile) wait for a format assertion
    assert facts["grammars_compiled"] == 0


# -- tools_index.json: registering parses no schema ------------------------------------------


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """generated/github_mcp under another import name (its imports are relative)."""
    target = tmp_path / name
    shutil.copytree(
        REPO / "generated" / "github_mcp", target, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    return target


def _tools(name: str) -> tuple[ToolBinding, ...]:
    try:
        return importlib.import_module(f"{name}.tools").TOOLS
    finally:  # the copy is gone with tmp_path: forget it
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def test_the_index_registers_every_tool_and_each_schema_is_read_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _copy(tmp_path, monkeypatch, "lazy_index_read")
    data = json.loads((package / "tools.json").read_text(encoding="utf-8"))
    tools = _tools("lazy_index_read")
    assert [t.name for t in tools] == [e["name"] for e in data["tools"]]
    assert [t.description for t in tools] == [e.get("description") for e in data["tools"]]
    # registered from the index: no tool's schemas parsed yet
    assert not any("parameters" in vars(t) for t in tools)
    assert tools[5].parameters == data["tools"][5]["parameters"]
    assert "parameters" in vars(tools[5]) and "parameters" not in vars(tools[6])
    # every schema as the whole file gives it; one shared $defs, parsed per definition
    defs = tools[0].defs
    some = sorted(data["$defs"])[:3]
    assert [defs[n] for n in some] == [data["$defs"][n] for n in some]
    for tool, entry in zip(tools, data["tools"], strict=True):
        assert tool.parameters == entry["parameters"]
        assert tool.output_schema == entry["output_schema"]
        assert tool.defs is defs
    assert dict(defs) == data["$defs"] and len(defs) == len(data["$defs"])
    assert "NoSuchDefinition" not in defs
    with pytest.raises(AttributeError, match="no attribute 'paramters'"):
        getattr(tools[0], "paramters")  # noqa: B009  (a misspelt field stays an error)


def test_lazy_bindings_equal_and_compose_as_the_whole_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _copy(tmp_path, monkeypatch, "lazy_index_on")
    (_copy(tmp_path, monkeypatch, "lazy_index_off") / "tools_index.json").unlink()
    lazy, whole = _tools("lazy_index_on"), _tools("lazy_index_off")
    assert "_schemas" in vars(lazy[0]) and "_schemas" not in vars(whole[0])
    picked = [lazy[n] for n in (0, 7, 30, 55, 90, 115)]
    assert compose(picked) == compose([whole[n] for n in (0, 7, 30, 55, 90, 115)])
    assert lazy == whole  # every field (models aside), schemas and defs read on the way
    renamed = replace(lazy[1], name="other")  # a registry renaming a tool copies it whole
    assert renamed.parameters == whole[1].parameters and renamed.name == "other"


def test_a_tools_json_changed_since_generation_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _copy(tmp_path, monkeypatch, "lazy_index_edited")
    path = package / "tools.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"][0]["description"] = "edited"
    data["tools"][0]["parameters"]["properties"] = {}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tools = _tools("lazy_index_edited")
    assert "_schemas" not in vars(tools[0])  # the index no longer fits: not used
    assert tools[0].description == "edited"
    assert tools[0].parameters["properties"] == {}


def test_a_broken_tools_json_is_a_located_registration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _copy(tmp_path, monkeypatch, "lazy_index_broken")
    path = package / "tools.json"
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(RegistrationError) as caught:
        _tools("lazy_index_broken")
    message = str(caught.value)
    assert message.startswith("lazy_index_broken/tools.json: error: EOF while parsing")
    assert "line " in message and "(hint: regenerate the package" in message
