"""A large package's tools are usable lazily (issue 13 item 7).

``generated/github_mcp`` (117 tools, models split under ``_models/``) is imported in a fresh
interpreter, so ``sys.modules`` shows exactly what each step loaded: registering every tool and
composing a few builds no model class, the first validated call of one tool imports only the
modules its models need, and the whole-package names (``Call``, ``CallAdapter``, ``Response``)
still work, built on first use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert facts["tools"] == 117
    # names, descriptions and schemas come from tools.json: no model module, no union
    assert facts["after_register"] == []
    assert facts["after_compose"] == []
    assert facts["composed"] == 10
    # the first validated call imports `models` and the few modules get_me's models need
    loaded_models = [m for m in facts["after_call"] if m.startswith("github_mcp._models.")]
    assert "github_mcp.models" in facts["after_call"]
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
from toolbind.runtime import _formats
print(json.dumps({{
    "modules": sorted(sys.modules),
    "grammars_compiled": _formats._uri_grammar.cache_info().currsize,
}}))
"""

# What registering a package, composing and one validated call must not load: the HTTP
# client, the LLM stack, the compiler and its template/YAML engines, the schema validator,
# the runtime's HTTP/contract layer (issue 13, must-show 4: a package's import needs only what
# registering needs; the rest loads when an Activity or an Agent runs).
NOT_ON_THE_USE_PATH = (
    "httpx",
    "instructor",
    "openai",
    "jsonschema",
    "yaml",
    "jinja2",
    "toolbind.compiler",
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
