"""``toolbind worker``: bad input is a located error or a usage error, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.temporal._support import SPEC

pytest.importorskip("temporalio", reason="the temporal extra is not installed")

TOOLBIND = str(Path(sys.executable).parent / "toolbind")


def _worker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLBIND, "worker", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["no_such_package"], 2, "no_such_package: neither a spec file nor an importable package"),
        (["json"], 2, "json: not a generated toolbind package (no TOOLS)"),
        (["tests/bad_specs/no_tools.json"], 1, "no_tools.json#/tools: error: the document holds"),
        ([str(SPEC), "--queues", "some"], 2, "--queues 'some': expected one, toolset or tool"),
        ([str(SPEC), "--address", "127.0.0.1:9"], 2, "--address 127.0.0.1:9: cannot reach"),
    ],
)
def test_bad_input_is_said_plainly(args: list[str], code: int, said: str) -> None:
    done = _worker(*args)
    assert done.returncode == code, done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_retry_extension_is_located(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "greetUser:\n  type: object\n  x-toolbind-retry: {maxAttempts: -1}\n"
        "  properties: {userName: {type: string}}\n",
        encoding="utf-8",
    )
    done = _worker(str(spec))
    assert done.returncode == 2
    assert "tools.yaml#/greetUser/maxAttempts: error: -1 is not a valid maxAttempts" in done.stderr
    assert "Traceback" not in done.stderr
