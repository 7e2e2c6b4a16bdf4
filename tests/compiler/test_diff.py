"""``toolbind diff``: the change-pair corpus, witnesses checked with the faithful
models, git revisions, directories, output formats and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolbind.cli._app import app
from toolbind.compiler._diff import diff_json_schemas, diff_specs

CORPUS = Path(__file__).parent.parent / "diff_corpus"
PAIRS = sorted(
    p for group in ("handmade", "real") for p in (CORPUS / group).iterdir() if p.is_dir()
)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["diff", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_corpus_has_forty_pairs_of_each_kind_together() -> None:
    real = [p for p in PAIRS if p.parent.name == "real"]
    assert len(PAIRS) >= 40 and len(real) >= 20


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p.parent.name}/{p.name}" for p in PAIRS])
def test_toolbind_diff_agrees_with_the_expected_classification(pair: Path) -> None:
    old = next(pair.glob("old.*"))
    new = next(pair.glob("new.*"))
    code, out, err = run(str(old), str(new), "--format", "json", "--fail-on", "none")
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    got = sorted([c["rule"], c["audience"], sorted(c["tools"])] for c in report["changes"])
    expected = json.loads((pair / "expected.json").read_text())["changes"]
    assert got == expected
    for c in report["changes"]:
        if c["audience"] == "calls":
            assert c["witness"] is not None, c
        assert c["old"] is None or c["old"].split("#")[0].endswith(f"{pair.name}/{old.name}")
        assert c["new"] is None or c["new"].split("#")[0].endswith(f"{pair.name}/{new.name}")
    breaking = any(c[1] in ("calls", "activities", "unknown") for c in expected)
    code, _, _ = run(str(old), str(new), "--format", "text")
    assert code == (1 if breaking else 0)


def test_a_witness_is_accepted_by_the_old_model_and_refused_by_the_new() -> None:
    from pydantic import ValidationError

    from toolbind.compiler import model_from_schema

    old = {
        "type": "object",
        "properties": {
            "unit": {"enum": ["c", "f", "k"]},
            "days": {"type": "integer", "maximum": 10},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["unit"],
    }
    new = {
        "type": "object",
        "properties": {
            "unit": {"enum": ["c", "f"]},
            "days": {"type": "integer", "maximum": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        },
        "required": ["unit", "days"],
    }
    changes = diff_json_schemas(old, new)
    assert {c.rule for c in changes} == {
        "enum-narrowed",
        "bounds-narrowed",
        "array-bounds-narrowed",
        "param-now-required",
    }
    old_model, new_model = model_from_schema(old), model_from_schema(new)
    for c in changes:
        assert c.audience == "calls" and c.rejected and c.witness is not None
        old_model.model_validate_json(c.witness)
        with pytest.raises(ValidationError):
            new_model.model_validate_json(c.witness)


def test_output_narrowing_breaks_activities_and_widening_is_safe() -> None:
    old = {"type": "object", "properties": {"n": {"type": "number"}}}
    narrower = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    audiences = {c.rule: c.audience for c in diff_json_schemas(old, narrower, side="output")}
    assert audiences == {"type-narrowed": "activities", "output-field-now-required": "activities"}
    assert {c.audience for c in diff_json_schemas(narrower, old, side="output")} == {"safe"}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_revisions_and_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pair = CORPUS / "handmade" / "enum-narrowed"
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(pair / "old.json", specs / "weather.json")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "v1")
    shutil.copy(pair / "new.json", specs / "weather.json")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("HEAD:specs/weather.json", "specs/weather.json", "--format", "json")
    assert code == 1, err
    report = json.loads(out)
    assert [c["rule"] for c in report["changes"]] == ["enum-narrowed"]
    assert report["changes"][0]["old"].startswith("HEAD:specs/weather.json#/0/function")
    # a revision of a directory against the working directory, matched by file name
    code, out, err = run("HEAD:specs", "specs", "--format", "json")
    assert code == 1, err
    assert [c["rule"] for c in json.loads(out)["changes"]] == ["enum-narrowed"]
    # nothing changed between a revision and itself
    code, out, _ = run("HEAD:specs/weather.json", "HEAD:specs/weather.json")
    assert code == 0 and out.startswith("0 change(s)")
    code, _, err = run("HEAD:specs/missing.json", "specs/weather.json")
    assert code == 2 and "no specs/missing.json at revision 'HEAD'" in err


def test_a_spec_only_on_one_side_of_a_directory_diff(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    shutil.copy(CORPUS / "handmade" / "unchanged" / "old.json", old / "a.json")
    shutil.copy(CORPUS / "handmade" / "unchanged" / "old.json", new / "b.json")
    report = diff_specs(str(old), str(new))
    assert sorted(c.rule for c in report.changes) == ["tool-added", "tool-removed"]


def test_formats_fail_on_and_bad_input() -> None:
    pair = CORPUS / "handmade" / "param-added-optional"
    old, new = str(pair / "old.json"), str(pair / "new.json")
    code, out, _ = run(old, new)
    assert code == 0 and "safe: param-added-optional (get_weather)" in out
    assert run(old, new, "--fail-on", "any")[0] == 1
    code, out, _ = run(old, new, "--format", "markdown")
    assert code == 0 and "| safe | param-added-optional | get_weather |" in out
    assert run(old, new, "--format", "yaml")[0] == 2
    assert run(old, new, "--fail-on", "sometimes")[0] == 2
    code, _, err = run(old, str(pair / "nope.json"))
    assert code == 1 and "nope.json#: error: no such file or directory" in err
    broken = CORPUS / "handmade" / "param-added-optional" / "expected.json"
    code, _, err = run(old, str(broken))
    assert code == 1 and "error:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "spec",
    [
        "readme-examples__polymorphism.json",
        "readme-examples__discriminators.json",
        "readme__readme-api.json",
        "readme-examples__schema-circular.json",
    ],
)
def test_only_the_edited_description_changes_in_a_real_spec(spec: str, tmp_path: Path) -> None:
    """No false change (nor an undecided one) where shared oneOf/allOf/recursive schemas are
    written the same in both versions."""
    source = Path(__file__).parents[1] / "corpus" / "openapi" / spec
    doc = json.loads(source.read_text(encoding="utf-8"))
    operation = next(
        op
        for item in doc["paths"].values()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    )
    operation["description"] = "edited"
    edited = tmp_path / spec
    edited.write_text(json.dumps(doc), encoding="utf-8")
    report = diff_specs(str(source), str(edited))
    assert [(c.rule, c.audience) for c in report.changes] == [
        ("tool-description-changed", "prompt")
    ]


SERVED = """\
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com/v1"}, {url: "https://eu.example.com/v1"}]
paths:
  /w:
    get:
      operationId: getW
      parameters:
        - {name: unit, in: query, required: true, schema: {type: string, enum: [c, f, k]}}
        - name: code
          in: query
          required: true
          schema: {type: string, pattern: "^[A-Z]{3}\\\\d{2}$"}
        - name: filter
          in: query
          description: A filter
          schema: {type: string, maxLength: 10}
      responses: {"200": {description: ok}}
"""


def _served(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_new_base_url_breaks_activities_and_a_dropped_server_is_named(tmp_path: Path) -> None:
    old = _served(tmp_path, "old.yaml", SERVED)
    moved = SERVED.replace("https://api.example.com/v1", "https://api.example.com/v2")
    new = _served(tmp_path, "new.yaml", moved.replace(', {url: "https://eu.example.com/v1"}', ""))
    code, out, _ = run(str(old), str(new))
    assert code == 1, out  # --fail-on breaking
    assert (
        "breaks Activities: server-changed — the default server is now https://api.example.com/v2 "
        "(was https://api.example.com/v1): HTTP Activities call another base URL, and a client "
        "that pinned the old one is refused" in out
    )
    assert "server-removed — server https://eu.example.com/v1 is no longer listed" in out
    added = _served(tmp_path, "added.yaml", SERVED.replace("}]\npaths", '}, {url: "/v3"}]\npaths'))
    code, out, _ = run(str(old), str(added), "--fail-on", "any")
    assert code == 1 and "safe: server-added — server /v3 was added" in out


def test_a_schema_moved_behind_a_ref_with_the_same_text_is_no_change(tmp_path: Path) -> None:
    old = _served(tmp_path, "old.yaml", SERVED)
    behind = SERVED.replace(
        "schema: {type: string, maxLength: 10}", 'schema: {$ref: "#/components/schemas/Filter"}'
    )
    new = _served(
        tmp_path,
        "new.yaml",
        behind + "components:\n  schemas:\n    Filter: {type: string, maxLength: 10}\n",
    )
    code, out, _ = run(str(old), str(new), "--fail-on", "any")
    assert (code, out.strip()) == (0, "0 change(s)")
    reworded = new.read_text(encoding="utf-8").replace("description: A filter", "description: B")
    code, out, _ = run(
        str(old), str(_served(tmp_path, "reworded.yaml", reworded)), "--fail-on", "any"
    )
    assert "prompt only: description-changed (getW)" in out and code == 1


def test_an_enum_narrowed_beside_a_required_pattern_breaks_calls_with_a_witness(
    tmp_path: Path,
) -> None:
    old = _served(tmp_path, "old.yaml", SERVED)
    new = _served(tmp_path, "new.yaml", SERVED.replace("enum: [c, f, k]", "enum: [c, f]"))
    code, out, _ = run(str(old), str(new), "--format", "json")
    assert code == 1
    (change,) = json.loads(out)["changes"]
    assert (change["rule"], change["audience"]) == ("enum-narrowed", "calls")
    assert change["witness"] == {"unit": "k", "code": "AAA00"}
