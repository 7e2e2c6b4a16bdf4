"""The Makefile as a newcomer meets it: its set-up targets say only what they do."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("target", ["help", "install", "llm", "test"])
def test_make_writes_nothing_on_stderr_while_reading_the_makefile(target: str) -> None:
    # ``-n`` reads the Makefile and expands the recipes without running them: anything on
    # stderr here is printed by every make call (the interpreter probe for LNbits' venv once
    # printed ``python3``/``python3.11`` there)
    result = subprocess.run(
        ["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_lnbits_python_is_chosen_when_the_recipe_runs_and_an_explicit_one_wins() -> None:
    def picked(*assign: str) -> str:
        result = subprocess.run(
            ["make", "-n", "install", *assign],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        line = next(x for x in result.stdout.splitlines() if "installing LNbits" in x)
        return line

    assert "$({ for p in" in picked()  # a shell substitution, run by the recipe
    assert "with /opt/py312/bin/python)" in picked("LNBITS_PYTHON=/opt/py312/bin/python")
