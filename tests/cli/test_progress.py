"""Long work shows a progress line on a terminal and nothing off one (CI, pipes, files)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO

OPENAI = "tests/corpus/openapi/openai__openapi.yaml"  # about a second to compile on each side


def _on_a_terminal(argv: list[str], timeout: float = 300) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal: its exit code and all it wrote."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "TERM")}
    process = subprocess.Popen(
        argv, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, cwd=REPO, env=env
    )
    os.close(follower)
    written = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower closed: the process is done
                break
            if not chunk:
                break
            written += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=30), written.decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pseudo-terminal")
def test_diff_of_two_large_specs_shows_what_it_is_doing_on_a_terminal() -> None:
    argv = [sys.executable, "-m", "toolbind.cli", "diff", OPENAI, OPENAI, "--fail-on", "none"]
    code, written = _on_a_terminal(argv)
    assert code == 0, written
    assert f"reading {OPENAI}" in written or "comparing" in written, written[-2000:]
    assert "0 change(s)" in written
    piped = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False, timeout=300)
    assert piped.returncode == 0
    assert "reading" not in piped.stderr and "\x1b[" not in piped.stderr  # quiet off a terminal


def test_a_bench_loop_shows_a_bar_on_a_terminal_and_nothing_off_one() -> None:
    code = (
        "import sys, time; sys.path.insert(0, 'bench'); from _progress import steps\n"
        "for spec in steps(['a.yaml', 'b.yaml'], 'specs'): time.sleep(0.3)\n"
        "print('figures')\n"
    )
    status, written = _on_a_terminal([sys.executable, "-c", code], timeout=60)
    assert status == 0 and "specs: a.yaml" in written and "figures" in written, written
    piped = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert (piped.stdout, piped.stderr) == ("figures\n", "")
