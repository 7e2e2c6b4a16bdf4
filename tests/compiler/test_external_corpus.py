"""Tests (the corpus suite): the corpus checks of the fast suite, over a corpus outside the repository.

``make test-corpus CORPUS=path`` (``pytest -m corpus --corpus=path``) runs them on every file of
``path`` laid out as ``tests/corpus`` (``openapi/``, ``tools/``, ``jsonschema-test-suite/``);
``make test`` leaves them out and says so at the end (tests/conftest.py). A file with the same
bytes as the repository's copy skips, saying so: the fast suite checks that copy already. Imports
toolbind and the fast suite's own checks (called, not re-collected).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.compiler import test_conformance, test_nothing_dropped, test_openapi
from tests.conftest import CORPUS, REPO, external_corpus, session_dir
from tests.http import test_api_json
from toolbind.compiler import load_package
from toolbind.compiler._driver import build, write_tree

pytestmark = pytest.mark.corpus

#: The corpus parts, each a folder and the files of it the suite checks.
PARTS = {
    "spec": ("openapi", ("*.json", "*.yaml")),
    "tool_file": ("tools", ("**/*.json",)),
}


def _params(root: Path | None, folder: str, patterns: tuple[str, ...]) -> list[Any]:
    """One param per file of ``root/folder``; a skipped one saying why when there are none."""
    if root is None:  # left out by tests/conftest.py: the items only need to exist
        return [pytest.param(None, id="no-corpus")]
    base = root / folder
    files = sorted({p for pattern in patterns for p in base.glob(pattern) if p.is_file()})
    # possible_answer/ holds BFCL's ground truth (answers, not tools)
    files = [p for p in files if "possible_answer" not in p.parts]
    if not files:
        return [pytest.param(None, id="none", marks=pytest.mark.skip(f"no {folder}/ in {root}"))]
    return [pytest.param(p, id=p.relative_to(base).as_posix()) for p in files]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    root = external_corpus(metafunc.config)
    for name, (folder, patterns) in PARTS.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, _params(root, folder, patterns))


@pytest.fixture
def root(request: pytest.FixtureRequest) -> Path:
    """The corpus ``--corpus`` names (the items are left out without it)."""
    given = external_corpus(request.config)
    assert given is not None
    return given


def _checked_here(path: Path, root: Path, folder: str) -> None:
    """Skip ``path`` when the repository holds the same bytes: the fast suite checks them."""
    copy = CORPUS / folder / path.relative_to(root / folder)
    if copy.is_file() and copy.read_bytes() == path.read_bytes():
        pytest.skip(f"same bytes as the repository's tests/corpus/{folder}: make test checks it")


def test_spec_compiles_and_imports(spec: Path, root: Path) -> None:
    """What ``test_corpus_spec_compiles_and_imports`` checks of the repository's specs."""
    _checked_here(spec, root, "openapi")
    tree = build([spec], formatted=False)
    assert [d.render() for d in tree.diagnostics if d.severity == "error"] == []
    out = session_dir("toolbind-external-")
    write_tree(tree, out)
    ((name, _),) = tree.packages.items()
    pkg = load_package(out, name)
    http = __import__(f"{pkg.__name__}.http", fromlist=["API"])
    assert len(http.API.operations) == test_openapi.operation_count(spec)
    assert set(http.OPERATIONS) == set(http.API.operations)
    for operation in http.API.operations:
        assert re.match(test_openapi.PROVIDER_NAME, operation), operation


def test_spec_api_reads_back_equal(spec: Path, root: Path) -> None:
    _checked_here(spec, root, "openapi")
    test_api_json.test_every_corpus_api_reads_back_equal(spec)


def test_spec_drops_nothing_in_silence(spec: Path, root: Path) -> None:
    _checked_here(spec, root, "openapi")
    test_nothing_dropped.test_everything_read_is_emitted_or_reported(spec)


def test_tool_file_compiles_and_imports(tool_file: Path, root: Path) -> None:
    _checked_here(tool_file, root, "tools")
    out = session_dir("toolbind-external-tools-")
    tree = build([tool_file], formatted=False)
    assert [d.render() for d in tree.diagnostics if d.severity == "error"] == []
    write_tree(tree, out)
    for name in tree.packages:
        assert all(tool.name for tool in load_package(out, name).TOOLS)


def test_json_schema_test_suite_conforms(root: Path, tmp_path: Path) -> None:
    """Drafts 2020-12 and 7 of the corpus' JSON-Schema-Test-Suite, as ``test_conformance``
    checks the repository's copy (its XFAIL table is the copy's: not held to here)."""
    suite = root / "jsonschema-test-suite"
    if not suite.is_dir():
        pytest.skip(f"no jsonschema-test-suite/ in {root}")
    mine = CORPUS / "jsonschema-test-suite"
    files = sorted(p.relative_to(suite) for p in suite.rglob("*.json"))
    if all(
        (mine / f).is_file() and (mine / f).read_bytes() == (suite / f).read_bytes() for f in files
    ):
        pytest.skip(
            "same bytes as the repository's tests/corpus/jsonschema-test-suite: make test checks it"
        )
    out = tmp_path / "report.json"
    drafts = test_conformance.FAST_DRAFTS
    command = [sys.executable, str(REPO / "bench" / "conformance.py"), "--no-peer"]
    command += ["--corpus", str(root), "--json", str(out)]
    subprocess.run([*command, *(f"--draft={d}" for d in drafts)], check=True, capture_output=True)
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    test_conformance.test_every_group_compiles_and_995_percent_agree(report)
    test_conformance.test_json_and_python_validation_agree(report)
