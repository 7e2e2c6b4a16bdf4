"""``toolbind generate`` killed with SIGKILL mid-way never leaves a broken output directory.

The output is replaced all-or-nothing (written beside it, then swapped in with two renames; a
kill between them is repaired by the next run). Each iteration starts a run that turns the output
from one complete tree into another and kills it at a different moment: after a random delay
anywhere in the run, as soon as its temporary directory appears (while it writes), or as soon as
the swap starts. Afterwards the output, as the next run will see it once repaired, is exactly
one of the two complete trees, and a final run leaves nothing else behind.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")

CLI = [sys.executable, "-c", "from toolbind.cli import main; main()"]
PACKAGES = 12  # spec files per tree: enough files that writing them takes a moment


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _start(specs: Path, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, "generate", str(specs), "-o", "out"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _generate(specs: Path, cwd: Path) -> None:
    proc = _start(specs, cwd)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()


def _effective(work: Path) -> dict[str, bytes] | None:
    """The output as the next run sees it after repairing an interrupted swap."""
    out = work / "out"
    if out.is_dir():
        return _tree(out)
    olds = sorted(work.glob(".out.old-*"))
    return _tree(olds[0]) if olds else None


def _wait_for(work: Path, pattern: str, proc: subprocess.Popen[bytes]) -> None:
    while proc.poll() is None and not any(work.glob(pattern)):
        time.sleep(0.0005)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two spec directories (A: the seeds' tools, B: GitHub's MCP tools) and a work dir."""
    base = tmp_path_factory.mktemp("kill")
    a, b = base / "a", base / "b"
    a.mkdir()
    b.mkdir()
    for i in range(PACKAGES):
        shutil.copy(REPO / "specs" / "seeds.yaml", a / f"tools{i:02}.yaml")
        shutil.copy(REPO / "specs" / "github_mcp.json", b / f"tools{i:02}.json")
    work = base / "work"
    work.mkdir()
    return a, b, work


@pytest.mark.slow  # kill -9 at random moments of real runs
def test_kill_9_mid_generate_leaves_a_complete_tree(trees: tuple[Path, Path, Path]) -> None:
    a, b, work = trees
    _generate(a, work)
    complete = {"a": _tree(work / "out")}
    started = time.monotonic()
    _generate(b, work)
    full_run = time.monotonic() - started
    complete["b"] = _tree(work / "out")
    assert complete["a"] != complete["b"]

    rng = random.Random(6)
    current = "b"
    outcomes: list[tuple[str, int | None, str]] = []
    kill_points = ["delay"] * 6 + ["writing", "swapping"] * 2
    for i, point in enumerate(kill_points):
        target = "a" if current == "b" else "b"
        proc = _start(a if target == "a" else b, work)
        if point == "delay":
            time.sleep(rng.uniform(0, full_run * 1.1))
        elif point == "writing":
            _wait_for(work, ".out.new-*", proc)
        else:
            _wait_for(work, ".out.old-*", proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        seen = _effective(work)
        assert seen is not None, f"kill {i} ({point}): the output is gone"
        assert seen in (complete[current], complete[target]), (
            f"kill {i} ({point}): the output is neither the previous tree nor the new one"
        )
        became = target if seen == complete[target] else current
        outcomes.append((point, proc.returncode, became))
        current = became
    # the next run repairs whatever the kills left and cleans up after them
    target = "a" if current == "b" else "b"
    _generate(a if target == "a" else b, work)
    assert _tree(work / "out") == complete[target]
    assert sorted(p.name for p in work.iterdir()) == ["out"], outcomes
    # at least one kill landed before the swap: the previous tree was left as it was
    assert any(rc == -signal.SIGKILL for _, rc, _ in outcomes)
