"""Test support: a newcomer's shell, for the tests that run the README's and the manual's blocks.
Imports the standard library only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def newcomer_bash(bash_script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``bash_script`` in a newcomer's shell (none of this test run's Python or pytest
    settings); assert it exits 0, showing both streams if not."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "VIRTUAL_ENV", "PYTEST_XDIST_WORKER")
    }
    result = subprocess.run(
        ["bash", "-c", bash_script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result
