"""Contract tests for users: ``toolbind.testing``, ``toolbind test`` and the pytest plugin.

Each scenario is a real project in ``tmp_path``: a spec, the package ``toolbind generate`` makes
from it, and an Activity module importing that package — checked by the ``toolbind`` command in
a subprocess, or by the library functions in-process.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from pydantic import BaseModel, Field, ValidationError

from generated.seeds import SentimentAnalysisCall, SentimentAnalysisOutput, WeatherCheckOutput
from tests.cli.test_cli import toolbind
from tests.conftest import REPO
from toolbind import testing as toolbind_testing
from toolbind.compiler import load_package, model_from_schema
from toolbind.runtime import ToolBinding
from toolbind.testing import (
    ContractError,
    ContractViolation,
    check_activity,
    check_contract,
    check_rejects_invalid,
    check_roundtrip,
    contract_schema,
    invalid_instances_for,
    strategies_for,
)

pytest_plugins = ["pytester"]

GENERATED = REPO / "generated"

SCORING = """\
scoreText:
  type: object
  description: Scores a text
  properties:
    _tool: { type: string, const: scoreText }
    text: { type: string }
    _output:
      type: object
      properties:
        score: { type: integer, maximum: 10 }
      required: [score]
      additionalProperties: false
  required: [text]
echo:
  type: object
  properties:
    _tool: { type: string, const: echo }
    words: { type: array, items: { type: string, maxLength: 8 }, maxItems: 3 }
    _output: { type: array, items: { type: string } }
  required: [words]
"""

GOOD_ACTIVITIES = """\
from generated.scoring import EchoCall, EchoOutput, ScoreTextCall, ScoreTextOutput


async def scoreText(call: ScoreTextCall) -> ScoreTextOutput:
    return ScoreTextOutput(score=min(len(call.text), 10))


def echo(call: EchoCall) -> EchoOutput:
    return EchoOutput(call.words)
"""


def project(tmp_path: Path, activities: str) -> Path:
    """specs/scoring.yaml, its generated package under generated/, and acts.py."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "scoring.yaml").write_text(SCORING, encoding="utf-8")
    result = toolbind("generate", "specs", "-o", "generated", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / "acts.py").write_text(activities, encoding="utf-8")
    return tmp_path


def seeds_tools() -> dict[str, ToolBinding]:
    return {t.name: t for t in load_package(GENERATED, "seeds").TOOLS}


# --- toolbind test -------------------------------------------------------------------------------


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_toolbind_test_passes_on_the_specs() -> None:
    result = toolbind("test", "specs/", "--examples", "5")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("specs/seeds.yaml", "specs/github_mcp.json", "greetUser", "list_issues"):
        assert name in result.stdout
    manifest = json.loads((GENERATED / "toolbind.json").read_text(encoding="utf-8"))
    packages = sorted(manifest["packages"])
    tools = sum(len(load_package(GENERATED, p).TOOLS) for p in packages)
    assert f"{tools} tool(s) from {len(packages)} spec(s)" in result.stdout
    assert "every contract holds" in result.stdout


def test_good_activities_pass(tmp_path: Path) -> None:
    root = project(tmp_path, GOOD_ACTIVITIES)
    result = toolbind("test", "specs", "--activities", "acts", "--examples", "20", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Activity" in result.stdout
    assert "every contract holds" in result.stdout


def test_an_activity_returning_what_the_output_schema_forbids_fails_readably(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path,
        GOOD_ACTIVITIES.replace(
            "ScoreTextOutput(score=min(len(call.text), 10))",
            "ScoreTextOutput.model_construct(score=len(call.text))",
        ),
    )
    result = toolbind("test", "specs", "--activities", "acts.py", "--examples", "50", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "FAIL specs/scoring.yaml · scoreText Activity scoreText" in out
    assert "returned a value its Output schema forbids" in out
    # hypothesis shrinks the Call to the shortest text that breaks `maximum: 10`
    assert 'counterexample: {"_tool": "scoreText", "text": "00000000000"}' in out
    assert 'returned:       {"score": 11}' in out
    assert "at /score (the returned value) — schema keyword `maximum`" in out
    assert "11 is greater than the maximum of 10" in out
    assert "1 tool(s) FAILED" in out
    assert "Traceback" not in out + result.stderr


def test_tools_checked_in_parallel_report_what_one_process_reports(tmp_path: Path) -> None:
    """``--jobs 2`` checks the tools in two forked processes: the same tables, the same
    shrunk counterexample (the failure comes back from its worker whole), the same exit code."""
    root = project(
        tmp_path,
        GOOD_ACTIVITIES.replace(
            "ScoreTextOutput(score=min(len(call.text), 10))",
            "ScoreTextOutput.model_construct(score=len(call.text))",
        ),
    )
    args = ("test", "specs", "--activities", "acts.py", "--examples", "30")
    one = toolbind(*args, "--jobs", "1", cwd=root)
    two = toolbind(*args, "--jobs", "2", cwd=root)
    assert one.returncode == two.returncode == 1, two.stdout + two.stderr
    assert two.stdout == one.stdout
    assert 'counterexample: {"_tool": "scoreText", "text": "00000000000"}' in two.stdout
    assert "Traceback" not in two.stdout + two.stderr


def test_a_worker_that_dies_leaves_its_tools_to_the_main_process(tmp_path: Path) -> None:
    """An Activity that ends the process it runs in (``os._exit``) only in a worker: the pool
    breaks, and the tools not reported yet are checked in the main process instead."""
    root = project(
        tmp_path,
        "import os\n\nMAIN = os.getpid()\n"
        + GOOD_ACTIVITIES.replace(
            "    return EchoOutput(call.words)",
            "    if os.getpid() != MAIN:\n        os._exit(3)\n    return EchoOutput(call.words)",
        ),
    )
    result = toolbind(
        "test", "specs", "--activities", "acts.py", "--examples", "10", "--jobs", "2", cwd=root
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 tool(s) from 1 spec(s): 2 passed" in result.stdout
    assert "every contract holds" in result.stdout


def test_an_activity_typed_with_a_stale_package_is_told_to_regenerate(tmp_path: Path) -> None:
    root = project(tmp_path, GOOD_ACTIVITIES)
    spec = root / "specs" / "scoring.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("maxLength: 8", "maxLength: 9"))
    result = toolbind("test", "specs", "--activities", "acts", "--examples", "10", cwd=root)
    assert result.returncode == 1
    assert "echo Activity echo: takes a EchoCall from generated.scoring.models whose schema" in (
        result.stdout
    )
    assert "regenerate that package" in result.stdout


def test_two_specs_defining_one_tool_name_are_told_apart(tmp_path: Path) -> None:
    """An Activity typed with spec A's Call, checked against spec B's tool of the same name: not
    a stale package (regenerating would not help) — the message names both specs."""
    root = project(tmp_path, GOOD_ACTIVITIES)
    other = SCORING.replace("maxLength: 8", "maxLength: 9")
    (root / "specs" / "wording.yaml").write_text(other, encoding="utf-8")
    assert toolbind("generate", "specs", "-o", "generated", cwd=root).returncode == 0
    result = toolbind("test", "specs", "--activities", "acts", "--examples", "10", cwd=root)
    assert result.returncode == 1
    out = " ".join(result.stdout.split())
    assert "FAIL specs/wording.yaml · echo Activity echo: takes a EchoCall from" in out
    assert "(the tool 'echo' of specs/scoring.yaml), not this one's (specs/wording.yaml)" in out
    assert "two specs define a tool of that name" in out
    assert "regenerate" not in out


def test_an_activity_whose_signature_does_not_take_the_call_fails(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        GOOD_ACTIVITIES.replace("def echo(call: EchoCall)", "def echo(call: ScoreTextCall)"),
    )
    result = toolbind("test", "specs", "--activities", "acts", "--examples", "10", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "echo Activity echo: does not accept the Call: parameter `call: ScoreTextCall` "
        "does not take a EchoCall"
    ) in result.stdout


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_activities_are_matched_through_the_activities_dict(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        GOOD_ACTIVITIES
        + "\n\ndef broken(call: EchoCall) -> EchoOutput:\n    raise RuntimeError('boom')\n"
        + "\n\nACTIVITIES = {'echo': broken, 'scoreText': scoreText, 'nope': echo}\n",
    )
    result = toolbind("test", "specs", "--activities", "acts", "--examples", "10", cwd=root)
    assert result.returncode == 1
    assert "echo Activity broken: raised RuntimeError: boom (at acts.py:" in result.stdout
    assert "ACTIVITIES['nope'] in acts: no tool of that name" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tool", "nope"], "--tool nope: no such tool"),
        (["--activities", "no.such.module"], "cannot import no.such.module: ModuleNotFoundError"),
        (["--activities", "missing.py"], "missing.py: no such file"),
        (["--activities", "empty"], "no Activity for any tool"),
        (["--examples", "0"], "--examples"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    root = project(tmp_path, GOOD_ACTIVITIES)
    (root / "empty.py").write_text("x = 1\n", encoding="utf-8")
    result = toolbind("test", "specs", *args, cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_activity_module_is_a_usage_error_located(tmp_path: Path) -> None:
    root = project(tmp_path, "import generated.scoring\n\n1 / 0\n")
    result = toolbind("test", "specs", "--activities", "acts", cwd=root)
    assert result.returncode == 2
    assert "cannot import acts: ZeroDivisionError: division by zero (at acts.py:3" in result.stderr
    assert "Traceback" not in result.stderr


def test_spec_errors_are_reported_like_generate(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    result = toolbind("test", str(tmp_path / "bad.json"), cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.json" in result.stderr and "error" in result.stderr
    assert "Traceback" not in result.stderr


# --- the library ---------------------------------------------------------------------------------


def test_the_plugin_loads_without_the_testing_extra() -> None:
    """pytest loads the plugin in every run: it must not import hypothesis or jsonschema."""
    import subprocess
    import sys

    code = (
        "import sys, toolbind.testing.pytest_plugin, toolbind.testing; "
        "print(sorted(m for m in ('hypothesis', 'jsonschema', 'hypothesis_jsonschema') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_public_surface() -> None:
    assert toolbind_testing.__all__ == [
        "ContractError",
        "ContractViolation",
        "check_activity",
        "check_contract",
        "check_rejects_invalid",
        "check_roundtrip",
        "contract_schema",
        "invalid_instances_for",
        "strategies_for",
    ]


INVALID_TOOLS = [
    "sentimentAnalysis",
    "weatherCheck",
    "sendEmail",
    "greetUser",
    "set_issue_fields",
    "list_issues",
    "create_pull_request",
    "get_file_contents",
]


def spec_tool(name: str) -> ToolBinding:
    for package in ("seeds", "github_mcp"):
        for tool in load_package(GENERATED, package).TOOLS:
            if tool.name == name:
                return tool
    raise LookupError(name)


def rejected_both_ways(model: type[BaseModel], examples: int) -> None:
    validator: Any = jsonschema.Draft202012Validator(contract_schema(model))
    seen: list[Any] = []

    @settings(max_examples=examples)
    @given(invalid_instances_for(model))
    def check(instance: Any) -> None:
        seen.append(instance)
        assert not validator.is_valid(instance)
        with pytest.raises(ValidationError):
            model.model_validate(instance)
        with pytest.raises(ValidationError):
            model.model_validate_json(json.dumps(instance))

    check()
    assert len(seen) >= examples


@pytest.mark.parametrize("name", INVALID_TOOLS)
def test_invalid_instances_are_rejected_by_jsonschema_and_the_models(name: str) -> None:
    tool = spec_tool(name)
    rejected_both_ways(tool.call_model, 30)
    if tool.output_schema is not None:
        rejected_both_ways(tool.output_model, 30)


def test_strategies_for_a_generated_model_class_use_its_binding() -> None:
    tool = seeds_tools()["greetUser"]
    instances: list[Any] = []

    @settings(max_examples=30)
    @given(strategies_for(tool.call_model))
    def collect(instance: Any) -> None:
        instances.append(instance)
        assert tool.call_model.model_validate(instance).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        ) == {**instance}

    collect()
    assert all(i["_tool"] == "greetUser" and isinstance(i["userName"], str) for i in instances)


def test_strategies_for_other_models_and_schemas() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}}
    pet = model_from_schema(schema, name="Counted")
    assert check_roundtrip(pet, schema=schema, max_examples=20) >= 20
    assert check_rejects_invalid(pet, schema=schema, max_examples=20) >= 20

    class Plain(BaseModel):
        x: int

    @settings(max_examples=20)
    @given(strategies_for(Plain), strategies_for({"type": "string", "maxLength": 2}))
    def fallback(plain: Any, text: Any) -> None:
        assert isinstance(plain["x"], int)
        assert isinstance(text, str) and len(text) <= 2

    fallback()
    with pytest.raises(ContractError, match="not a valid JSON Schema"):
        strategies_for({"type": 12})
    with pytest.raises(ContractError, match="no model to check"):
        check_roundtrip({"type": "string"})  # pyright: ignore[reportArgumentType]


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_the_checks_catch_a_model_that_breaks_its_schema() -> None:
    """A hand-written model too lax, and one too strict, for the schema it claims."""
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "maxLength": 3}},
        "required": ["code"],
    }

    class Lax(BaseModel):
        code: str

    class Strict(BaseModel):
        code: str = Field(min_length=1)

    with pytest.raises(ContractViolation) as lax:
        check_rejects_invalid(Lax, schema=schema, max_examples=50)
    assert lax.value.keyword in {"maxLength", "type", "required"}
    assert "accepts an instance its schema rejects" in lax.value.problem

    with pytest.raises(ContractViolation) as strict:
        check_roundtrip(Strict, schema=schema, max_examples=50)
    assert strict.value.instance == {"code": ""}
    assert "rejects an instance its schema accepts" in strict.value.problem
    assert (strict.value.pointer, strict.value.keyword) == ("/code", "minLength")


def test_check_contract_on_a_seed_tool() -> None:
    tool = seeds_tools()["sentimentAnalysis"]
    assert check_contract(tool, max_examples=20) >= 4 * 20


def test_check_activity_sync_async_and_failing() -> None:
    # the tool comes from `seeds` (load_package), the annotations from `generated.seeds`: two
    # copies of one package, whose look-alike classes count as the contract's own
    tool = seeds_tools()["sentimentAnalysis"]
    assert tool.call_model is not SentimentAnalysisCall

    def plain(call: Any) -> dict[str, Any]:
        return {"sentiment": "neutral", "confidence": len(call.text) / 100}

    async def typed(call: SentimentAnalysisCall) -> SentimentAnalysisOutput:
        return SentimentAnalysisOutput(sentiment="ok")

    assert check_activity(tool, plain, max_examples=15) >= 15
    assert check_activity(tool, typed, max_examples=15) >= 15

    def wrong(call: Any) -> dict[str, Any]:
        return {"sentiment": None if call.text else "empty"}

    with pytest.raises(ContractViolation) as failed:
        check_activity(tool, wrong, max_examples=30)
    assert failed.value.instance == {"_tool": "sentimentAnalysis", "text": "0"}
    assert failed.value.returned == {"sentiment": None}
    assert failed.value.pointer == "/sentiment"
    assert failed.value.keyword == "type"

    def two_args(call: Any, other: int) -> None: ...

    with pytest.raises(ContractViolation, match="other must have defaults"):
        check_activity(tool, two_args)

    def wrong_return(call: Any) -> WeatherCheckOutput:
        raise AssertionError("never called")

    with pytest.raises(ContractViolation, match="declares the return type WeatherCheckOutput"):
        check_activity(tool, wrong_return)


# --- the pytest plugin ---------------------------------------------------------------------------

PLUGIN_ACTIVITIES = """\
def scoreText(call):
    return {"score": len(call.text)}


async def echo(call):
    return list(call.words)
"""


def test_pytest_plugin_makes_one_item_per_tool(pytester: pytest.Pytester) -> None:
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "scoring.yaml").write_text(SCORING, encoding="utf-8")
    (pytester.path / "plugin_acts.py").write_text(PLUGIN_ACTIVITIES, encoding="utf-8")
    result = pytester.runpytest(
        "--toolbind-spec",
        "specs",
        "--toolbind-activities",
        "plugin_acts.py",
        "--toolbind-examples",
        "25",
        "-v",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*specs/scoring.yaml::scoreText FAILED*",
            "*specs/scoring.yaml::echo PASSED*",
            "*scoreText Activity scoreText: returned a value its Output schema forbids*",
            '*counterexample: {"_tool": "scoreText", "text": "00000000000"}*',
            "*schema keyword `maximum`*",
        ]
    )


def test_pytest_plugin_is_silent_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_pytest_plugin_reads_the_ini_options(pytester: pytest.Pytester) -> None:
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "scoring.yaml").write_text(SCORING, encoding="utf-8")
    pytester.makeini(
        textwrap.dedent(
            """\
            [pytest]
            toolbind_specs = specs
            """
        )
    )
    result = pytester.runpytest("--toolbind-examples", "10")
    result.assert_outcomes(passed=2)
