"""``toolbind test`` on recursive schemas: checked through a bounded unrolling, and what cannot be
checked is never a pass.

A recursive ``Filter`` (Qdrant's shape: a ``Condition`` is a field match or a nested ``Filter``)
used to be skipped with hypothesis-jsonschema's error — the whole composed schema, 875 KB for
Qdrant — printed as ``pass`` under "every contract holds", exit 0. Now its Calls are generated from
``$defs`` inlined a few levels deep (every instance validated against the real schema), and a
part no instance can be generated for is ``not checked``: the tool ``UNCHECKED``, one bounded
line saying why, counted in the summary, exit 1 unless ``--allow-unchecked``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import InvalidArgument
from rich.console import Console

from tests.cli.test_cli import toolbind
from toolbind.cli._test import run
from toolbind.testing import _unroll
from toolbind.testing._checks import MAX_REASON, brief, run_model
from toolbind.testing._checks import RunSettings as Settings
from toolbind.testing._contract import Contract
from toolbind.testing._strategies import json_instances
from toolbind.testing._unroll import recursive_defs, unroll

pytest_plugins = ["pytester"]

PADDING = "a" * 3000  # what the old skip message dumped, with the rest of the schema

# a Filter's conditions may be Filters (Qdrant); the description makes a dumped schema obvious
RECURSIVE = f"""\
openapi: 3.0.3
info: {{title: recursive filter, version: "1"}}
paths:
  /points/search:
    post:
      operationId: search
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                filter: {{$ref: '#/components/schemas/Filter'}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {{type: object, properties: {{n: {{type: integer}}}}}}
components:
  schemas:
    Filter:
      type: object
      properties:
        must:
          type: array
          items: {{$ref: '#/components/schemas/Condition'}}
        description: {{type: string, description: "{PADDING}"}}
    Condition:
      anyOf:
        - {{type: object, properties: {{key: {{type: string}}}}, required: [key]}}
        - $ref: '#/components/schemas/Filter'
"""

# a Tree must have a child Tree: no finite instance, so no Call of `plant` can be generated
ENDLESS = """\
openapi: 3.0.3
info: {title: recursion without a way out, version: "1"}
paths:
  /tree:
    post:
      operationId: plant
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                tree: {$ref: '#/components/schemas/Tree'}
              required: [tree]
      responses:
        '204': {description: planted}
  /ping:
    get:
      operationId: ping
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {n: {type: integer}}}
components:
  schemas:
    Tree:
      type: object
      properties:
        child: {$ref: '#/components/schemas/Tree'}
      required: [child]
"""

FILTER: dict[str, Any] = {
    "type": "object",
    "properties": {"filter": {"$ref": "#/$defs/Filter"}},
    "additionalProperties": False,
    "$defs": {
        "Filter": {
            "type": "object",
            "properties": {"must": {"type": "array", "items": {"$ref": "#/$defs/Condition"}}},
            "additionalProperties": False,
        },
        "Condition": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"key": {"type": "string", "$ref": "#/$defs/Key"}},
                    "required": ["key"],
                    "additionalProperties": False,
                },
                {"$ref": "#/$defs/Filter"},
            ]
        },
        "Key": {"minLength": 1},
        "Unused": {"$ref": "#/$defs/Unused"},
    },
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def filter_depth(value: Any) -> int:
    """How many Filters are nested in ``value`` (a Call's ``filter``)."""
    if not isinstance(value, dict) or "key" in value:
        return 0
    conditions = cast("list[Any]", cast("dict[str, Any]", value).get("must", []))
    return 1 + max((filter_depth(c) for c in conditions), default=0)


# --- toolbind test ---------------------------------------------------------------------------------


def test_a_recursive_call_schema_is_checked(tmp_path: Path) -> None:
    spec = write(tmp_path, "search.yaml", RECURSIVE)
    result = toolbind("test", str(spec), "--examples", "10", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if "│ search" in line)
    cells = [c.strip() for c in row.split("│")[2:7]]
    assert cells[:2] + cells[3:] == ["✓ 10"] * 3 + ["pass"], row
    # the Output's own schema (no definitions it does not reach): hypothesis may run one more
    assert cells[2] in ("✓ 10", "✓ 11"), row
    assert "not checked" not in result.stdout.lower()
    assert "1 passed, 0 failed, 0 not fully checked" in result.stdout
    assert "every contract holds" in result.stdout
    assert PADDING not in result.stdout


def test_a_part_that_cannot_be_checked_is_no_pass_and_exits_1(tmp_path: Path) -> None:
    spec = write(tmp_path, "tree.yaml", ENDLESS)
    result = toolbind("test", str(spec), "--examples", "10", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    plant = next(line for line in out.splitlines() if "│ plant" in line)
    assert plant.count("not checked") == 2 and "UNCHECKED" in plant, plant
    assert " pass " not in plant
    ping = next(line for line in out.splitlines() if "│ ping" in line)
    assert "pass" in ping
    assert (
        "NOT CHECKED tree.yaml · plant Call: no instance found: the schema is recursive "
        "($defs/Tree), with none within a few levels of nesting"
    ) in out
    assert "2 tool(s) from 1 spec(s): 1 passed, 0 failed, 1 not fully checked;" in out
    assert "every contract holds" not in out
    assert "every contract checked holds, but 1 tool(s) not fully checked" in out
    assert "exit 1 (--allow-unchecked accepts this)" in out
    assert "Traceback" not in result.stderr


def test_allow_unchecked_exits_0_and_still_says_what_was_not_checked(tmp_path: Path) -> None:
    spec = write(tmp_path, "tree.yaml", ENDLESS)
    result = toolbind(
        "test", str(spec), "--examples", "5", "--tool", "plant", "--allow-unchecked", cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NOT CHECKED" in result.stdout and "UNCHECKED" in result.stdout
    assert "0 passed, 0 failed, 1 not fully checked" in result.stdout
    assert "accepted with --allow-unchecked" in result.stdout
    assert "every contract holds" not in result.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_part_past_its_time_budget_is_not_checked_and_says_so(tmp_path: Path, jobs: str) -> None:
    """``--timeout``: a part still running after its budget (here: a million examples asked for,
    one second given) stops, is ``not checked`` with what it had checked, and the run exits 1 —
    in the main process and in the forked workers alike."""
    spec = write(tmp_path, "tree.yaml", ENDLESS)
    result = toolbind(
        "test",
        str(spec),
        "--tool",
        "ping",
        "--examples",
        "1000000",
        "--timeout",
        "1",
        "--jobs",
        jobs,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    ping = next(line for line in out.splitlines() if "│ ping" in line)
    assert "UNCHECKED" in ping, ping
    assert "NOT CHECKED tree.yaml · ping Call: not finished within 1 s (" in out
    assert re.search(r"\(\d+ instance\(s\) checked; the schema is [\d,]+ characters of JSON\)", out)
    assert "--timeout gives a part longer" in out
    assert "0 passed, 0 failed, 1 not fully checked" in out
    assert "Traceback" not in out + result.stderr


def test_allow_unchecked_is_in_the_help() -> None:
    result = toolbind("test", "--help")
    assert result.returncode == 0
    assert "--allow-unchecked" in result.stdout


def test_a_schema_too_big_to_unroll_is_not_checked_in_one_short_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hypothesis-jsonschema's own error embeds the whole schema: the line names the $defs."""
    monkeypatch.setattr(_unroll, "MAX_NODES", 0)  # no unrolling fits: the old path
    spec = write(tmp_path, "search.yaml", RECURSIVE)
    buffer = io.StringIO()
    out = Console(file=buffer, width=200, color_system=None)
    err = Console(file=io.StringIO())
    code = run([spec], activities=None, examples=5, tools=[], seed=0, out=out, err=err)
    text = buffer.getvalue()
    assert code == 1, text
    line = next(x for x in text.splitlines() if x.startswith("NOT CHECKED"))
    assert line == (
        f"NOT CHECKED {spec} · search Call: cannot generate instances: the schema is recursive "
        "($defs/Condition, $defs/Filter)"
    )
    assert PADDING[:100] not in text
    assert len(text) < 3000, len(text)
    assert "0 passed, 0 failed, 1 not fully checked" in text
    assert (
        run(
            [spec],
            activities=None,
            examples=5,
            tools=[],
            seed=0,
            out=Console(file=io.StringIO()),
            err=err,
            allow_unchecked=True,
        )
        == 0
    )


# --- the pytest plugin -----------------------------------------------------------------------------


def test_the_pytest_item_of_a_tool_not_fully_checked_is_skipped(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "specs").mkdir()
    (pytester.path / "specs" / "tree.yaml").write_text(ENDLESS, encoding="utf-8")
    result = pytester.runpytest("--toolbind-spec", "specs", "--toolbind-examples", "5", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*Call not checked: no instance found: the schema is recursive*"])


# --- the pieces --------------------------------------------------------------------------------------


def test_recursive_defs_are_those_the_root_reaches_through_themselves() -> None:
    assert recursive_defs(FILTER) == ["$defs/Condition", "$defs/Filter"]  # not Unused, not Key
    assert recursive_defs({"$defs": FILTER["$defs"]}) == []
    assert recursive_defs(True) == []
    assert unroll({"type": "object", "$defs": {"A": {"$ref": "#/$defs/A"}}}, 2) is None


def test_an_unrolling_inlines_the_recursion_and_cuts_it_with_false() -> None:
    flat = unroll(FILTER, 1)
    assert flat is not None
    assert flat["$defs"] == {"Key": {"minLength": 1}, "Unused": {"$ref": "#/$defs/Unused"}}
    text = repr(flat)
    assert "#/$defs/Filter" not in text and "#/$defs/Condition" not in text
    condition = flat["properties"]["filter"]["properties"]["must"]["items"]
    assert condition["anyOf"][1] is False  # the Filter one level deeper
    # Key reaches no recursion: hypothesis-jsonschema resolves it
    assert condition["anyOf"][0]["properties"]["key"] == {"type": "string", "$ref": "#/$defs/Key"}
    deeper = unroll(FILTER, 2)
    assert deeper is not None and len(repr(deeper)) > len(text)
    assert unroll(FILTER, 3, max_nodes=5) is None


def test_instances_of_a_recursive_schema_are_valid_and_nest() -> None:
    contract = Contract("Model", None, FILTER)
    validator = contract.validator()
    depths: list[int] = []

    @settings(
        max_examples=60,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(json_instances(FILTER))
    def check(instance: Any) -> None:
        assert validator.is_valid(instance)
        depths.append(filter_depth(instance.get("filter")))

    check()
    assert max(depths) >= 2, depths  # a Filter inside a Filter


def test_run_model_checks_a_recursive_model_both_ways() -> None:
    from toolbind.compiler import model_from_schema

    model = model_from_schema(FILTER, name="Search")
    result = run_model(Contract("Model", model, FILTER), Settings(max_examples=10, seed=0))
    assert result.failure is None and result.skipped is None, result
    assert result.examples >= 10 and result.invalid >= 10


def test_a_reason_is_one_bounded_line_without_the_schema() -> None:
    exc = InvalidArgument(
        f"Could not resolve recursive references in schema={{'description': '{PADDING}'}}"
    )
    assert brief(str(exc)) == "Could not resolve recursive references"
    long = brief("x" * 10_000 + "\nsecond line")
    assert len(long) == MAX_REASON and long.endswith("…")
    assert brief("") == "no reason given"
