"""The bad-spec corpus: every file in ``tests/bad_specs/`` is a spec with one kind of mistake.

Each case runs the real CLI in a subprocess (from the repository root, so diagnostics name the
file ``tests/bad_specs/<case>``) against an output directory that already holds a previous
toolbind output, and must:

* exit with code 1, print nothing on stdout and no traceback anywhere;
* print exactly the diagnostics in ``tests/bad_specs/<case stem>.expected``;
* leave the output directory (and everything beside it) byte-for-byte as it was.

To regenerate the expected files after changing a message, run::

    TOOLBIND_REGEN=1 .venv/bin/python -m pytest tests/compiler/test_bad_specs.py

and read every changed ``.expected`` file: each line is what a user sees.
Files below ``tests/bad_specs/_refs/`` are what some cases ``$ref``; they are not cases.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES_DIR = ROOT / "tests" / "bad_specs"
SPEC_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
REGEN = os.environ.get("TOOLBIND_REGEN") == "1"
CLI = [sys.executable, "-c", "from toolbind.cli import main; main()"]

CASES = sorted(
    p.name for p in CASES_DIR.iterdir() if p.is_file() and p.suffix.lower() in SPEC_SUFFIXES
)


def _expected_path(case: str) -> Path:
    return CASES_DIR / f"{Path(case).stem}.expected"


def _env() -> dict[str, str]:
    """The environment for the CLI: UTF-8 output, no colours, no terminal tricks."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS")
    }
    env.update({"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"})
    return env


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def _snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory`` (relative POSIX path → bytes), directories as b"<dir>"."""
    return {
        p.relative_to(directory).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(directory.rglob("*"))
    }


@pytest.fixture(scope="module")
def previous_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output directory written by a successful run on the seeds' example spec."""
    work = tmp_path_factory.mktemp("previous")
    shutil.copy(ROOT / "specs" / "seeds.yaml", work / "seeds.yaml")
    result = _run(["generate", "seeds.yaml", "-o", "out"], cwd=work)
    assert result.returncode == 0, result.stderr
    out = work / "out"
    assert (out / "toolbind.json").is_file()
    assert (out / "seeds" / "__init__.py").is_file()
    return out


@pytest.fixture
def output_dir(previous_output: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(previous_output, out)
    return out


def _check_failed_run(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
    assert result.returncode == 1, f"exit code {result.returncode}\n{result.stderr}"
    assert result.stdout == ""


def test_corpus_is_complete() -> None:
    stems = [Path(c).stem for c in CASES]
    assert len(CASES) >= 24
    assert len(set(stems)) == len(stems), "two cases share a stem (and an .expected file)"
    orphans = {p.stem for p in CASES_DIR.glob("*.expected")} - set(stems)
    assert not orphans, f".expected files without a case: {sorted(orphans)}"
    if not REGEN:
        missing = [c for c in CASES if not _expected_path(c).is_file()]
        assert not missing, (
            f"cases without an .expected file (run with TOOLBIND_REGEN=1): {missing}"
        )


@pytest.mark.parametrize("case", CASES)
def test_bad_spec(case: str, output_dir: Path) -> None:
    before = _snapshot(output_dir.parent)
    result = _run(["generate", f"tests/bad_specs/{case}", "-o", str(output_dir)], cwd=ROOT)
    _check_failed_run(result)
    expected_file = _expected_path(case)
    if REGEN:
        expected_file.write_text(result.stderr, encoding="utf-8", newline="\n")
    assert result.stderr == expected_file.read_text(encoding="utf-8")
    assert _snapshot(output_dir.parent) == before, "the output directory was touched"

    # The format every diagnostic follows: located, then what was found — what was expected.
    *lines, count = result.stderr.splitlines()
    where = rf"tests/bad_specs/{re.escape(case)}(#.*?|:\d+:\d+)"
    errors = 0
    for line in lines:
        assert re.match(rf"{where}: (error|warning): \S.* — \S", line), line
        errors += ": error: " in line
    assert errors >= 1
    assert count == f"{errors} error{'s' if errors != 1 else ''}"


def test_diagnostics_of_several_files_are_reported_together(output_dir: Path) -> None:
    """One run over two bad files reports every diagnostic of both, in order, then the count."""
    cases = ["multiple_errors.json", "malformed_yaml.yaml"]
    before = _snapshot(output_dir.parent)
    result = _run(
        ["generate", *(f"tests/bad_specs/{c}" for c in cases), "-o", str(output_dir)], cwd=ROOT
    )
    _check_failed_run(result)
    expected_lines: list[str] = []
    for case in cases:
        *lines, _count = _expected_path(case).read_text(encoding="utf-8").splitlines()
        expected_lines += lines
    errors = sum(": error: " in line for line in expected_lines)
    assert errors >= 3
    assert result.stderr.splitlines() == [*expected_lines, f"{errors} errors"]
    assert _snapshot(output_dir.parent) == before, "the output directory was touched"
