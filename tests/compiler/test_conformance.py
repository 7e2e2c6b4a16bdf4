"""The JSON-Schema-Test-Suite, in CI: toolbind's models agree with it as ``bench/conformance.py``
reports, and every miss is one the XFAIL table names (with its reason).

Runs the benchmark itself (without the datamodel-code-generator peer) so that the figures in the
README and the closing notes are the ones CI checks: in every draft and both format modes every
group compiles, at least 99.5 % of the tests agree, nothing crashes, JSON and Python validation
never disagree, and the misses of the main suite are exactly the XFAIL table. Drafts 2020-12 and 7
run in the fast suite; 2019-09, 6 and 4 (the same code paths, read differently) in test-slow.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any, cast

import pytest

from tests.conftest import CORPUS, NO_CORPUS, REPO

SUITE = CORPUS / "jsonschema-test-suite"

pytestmark = pytest.mark.skipif(not SUITE.is_dir(), reason=NO_CORPUS)


FAST_DRAFTS = ("draft2020-12", "draft7")
SLOW_DRAFTS = ("draft2019-09", "draft6", "draft4")


def run_bench(out_dir: Any, drafts: tuple[str, ...]) -> dict[str, Any]:
    out = out_dir / "report.json"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "conformance.py"),
            "--no-peer",
            "--corpus",
            str(CORPUS),
            "--json",
            str(out),
            *(f"--draft={d}" for d in drafts),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(FAST_DRAFTS, id="2020-12+7"),
        pytest.param(SLOW_DRAFTS, id="slow-drafts", marks=pytest.mark.slow),
    ],
)
def report(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    drafts = cast("tuple[str, ...]", request.param)
    return run_bench(tmp_path_factory.mktemp("conformance"), drafts)


def xfail_table() -> dict[tuple[str, str, str, str], str]:
    spec = importlib.util.spec_from_file_location("_conformance", REPO / "bench" / "conformance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    sys.path.insert(0, str(REPO / "bench"))  # for its helper module ``_suite``
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "bench"))
    return cast("dict[tuple[str, str, str, str], str]", module.XFAIL)


def test_every_group_compiles_and_995_percent_agree(report: dict[str, Any]) -> None:
    main = [t for t in report["totals"] if t["suite"] == "main"]
    drafts = cast("list[str]", report["meta"]["drafts"])
    assert {(t["draft"], t["mode"]) for t in main} == {
        (d, m) for d in drafts for m in ("annotation", "assertion")
    }
    for total in main:
        ours = total["implementations"]["toolbind"]
        where = f"{total['draft']} {total['mode']}"
        assert ours["compiled"] == total["groups"], where
        assert ours["agree"] / total["tests"] >= 0.995, (where, ours)
        assert ours["crashes"] == 0 and ours["compile_crashes"] == 0, where


def test_json_and_python_validation_agree(report: dict[str, Any]) -> None:
    assert report["toolbind_json_mode_disagreements"] == []
    assert report["toolbind_crashes"] == []


def test_misses_are_exactly_the_xfail_table(report: dict[str, Any]) -> None:
    table = xfail_table()
    assert all(reason.strip() for reason in table.values())
    drafts = set(cast("list[str]", report["meta"]["drafts"]))
    table = {key: why for key, why in table.items() if key[0] in drafts}
    misses = {
        (m["draft"], m["file"], m["group"], m["test"])
        for m in report["misses"]
        if m["implementation"] == "toolbind" and m["suite"] == "main"
    }
    assert misses - table.keys() == set(), "a miss the XFAIL table does not explain"
    assert table.keys() - misses == set(), "an XFAIL entry that passes now: remove it"


def test_format_assertion_mode_is_measured(report: dict[str, Any]) -> None:
    formats = [t for t in report["totals"] if t["suite"] != "main"]
    assert formats, "the optional/format suites ran"
    assert {t["draft"] for t in formats} == set(cast("list[str]", report["meta"]["drafts"]))
    for total in formats:
        ours = total["implementations"]["toolbind"]
        reference = total["implementations"]["jsonschema"]
        assert ours["compiled"] == total["groups"]
        # by the RFC grammars, never behind jsonschema (its format checkers installed)
        assert ours["agree"] >= reference["agree"], (total["draft"], ours, reference)
        # A floor, not the figure: the closing note reports the measured value.
        assert ours["agree"] / total["tests"] >= 0.99, (total["draft"], ours)
