"""pyright (strict) and ruff over the sources, tests and generated/ — part of `make test`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BIN = Path(sys.executable).parent
# every folder of Python the project writes (make lint checks the same)
SOURCES = ("toolbind", "cli", "compiler", "runtime", "testing", "tests", "bench", "demo", "docs")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=REPO, capture_output=True, text=True, check=False)


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_pyright_strict_is_clean() -> None:
    result = run(str(BIN / "pyright"), "--outputjson")
    import json

    report = json.loads(result.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], "\n".join(
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}" for d in errors[:20]
    )
    assert report["summary"]["filesAnalyzed"] > 20


def test_ruff_lint_and_format_are_clean() -> None:
    lint = run(str(BIN / "ruff"), "check", *SOURCES)
    assert lint.returncode == 0, lint.stdout
    fmt = run(str(BIN / "ruff"), "format", "--check", *SOURCES)
    assert fmt.returncode == 0, fmt.stdout
