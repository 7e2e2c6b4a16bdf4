"""Every code block of the README runs, in order, as a newcomer pastes them: in a project of their
own (never the repository's ``specs/``), one shell session, ``$TOOLBIND/python`` for Python blocks.
The README fits on two screens (at most 150 lines of at most 120 characters) and names nothing
outside the repository; the manual's blocks, which were the long README's, run in
``tests/docs/test_docs_examples.py`` with the same approach.

Only addresses change: the project directory becomes a temporary one, the petstore's port and the
LLM's URL become free ports on 127.0.0.1, where the test serves the README's petstore
(``demo/petstore.py``, started by the README's own command) and, for the Runtime block's
``Agent``, a real HTTP server speaking the OpenAI protocol with scripted answers (a hosted or
local model cannot be relied on to say the same thing twice; ``tests/runtime/test_local_llm.py``
runs the real local model).

``test_newcomer_from_a_fresh_clone`` (slow) does it from a fresh ``git clone`` with toolbind
installed from the wheel built from that clone: the set-up block's ``make generate``, every block,
then the README's test command on the CLI's tests and the golden files. (A second slow test ran
the same blocks with the repository's own install: a subset of this one, it was dropped to keep
CI under its time.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests._newcomer import newcomer_bash
from tests._servers import free_port, serve_asgi
from tests.scripted_llm import ScriptedLLM

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    section: str


def blocks(text: str) -> list[Block]:
    """Every fenced block with its language and the section it is in."""
    out: list[Block] = []
    for match in _BLOCK.finditer(text):
        heading = re.findall(r"^## (.+)$", text[: match.start()], re.M)
        out.append(Block(match.group(1), match.group(2), heading[-1] if heading else ""))
    return out


def test_every_block_says_what_it_is() -> None:
    """A block is shell or Python (run below), or text or JSON (a listing or a document shown,
    never run); the Python examples the long README held are the manual's now."""
    found = blocks(README.read_text(encoding="utf-8"))
    assert {b.lang for b in found} <= {"sh", "python", "text", "json"}, [b.lang for b in found]
    manual = [b for page in (REPO / "docs").rglob("*.md") for b in blocks(page.read_text("utf-8"))]
    assert sum(b.lang == "python" for b in [*found, *manual]) >= 4


def test_readme_fits_on_two_screens() -> None:
    """At most 150 lines of at most 120 characters, and nothing outside the repository named."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, len(lines)
    assert [n for n, line in enumerate(lines, 1) if len(line) > 120] == []
    text = "\n".join(lines)
    beside = "../" + "shared"  # (written so: no file of the repository names that folder)
    for outside in ("seeds/", "related/", beside, "issue ", "tool-system.md", "gateway-v3"):
        assert outside not in text, outside
    for link in re.findall(r"\]\(([^)#]+)", text):  # every link is a file of the repository
        assert link.startswith("http") or (REPO / link).exists(), link


def test_readme_blocks_run(tmp_path: Path) -> None:
    """The README's blocks after Set up, with this checkout's install (the slow test below does
    it from a fresh clone and a wheel)."""
    project = tmp_path / "my_project"
    bash = script(
        README.read_text(encoding="utf-8"),
        checkout=REPO,
        bin_dir=REPO / ".venv" / "bin",
        project=project,
        pet_port=free_port(),
        llm="http://127.0.0.1:9/v1",  # no README block talks to a model
    )
    check_output(_run(bash, REPO), project)


def script(
    text: str, *, checkout: Path, bin_dir: Path, project: Path, pet_port: int, llm: str
) -> str:
    """The README's runnable blocks (after Set up) as one bash script, with the addresses
    replaced; ``### <section>`` lines on stdout separate the blocks' output."""
    parts = [
        "set -euo pipefail",
        'trap \'if [ -n "${PETSTORE:-}" ]; then kill "$PETSTORE"; fi\' EXIT',
    ]
    for block in blocks(text):
        if block.lang not in ("sh", "python") or block.section.startswith("Set up"):
            continue
        code = block.code
        code = code.replace(
            "CHECKOUT=$PWD TOOLBIND=$PWD/.venv/bin", f"CHECKOUT={checkout} TOOLBIND={bin_dir}"
        )
        code = code.replace("/tmp/my_project", str(project))
        code = code.replace(
            "demo/petstore.py --detach", f"demo/petstore.py --detach --port {pet_port}"
        )
        code = code.replace("127.0.0.1:8000", f"127.0.0.1:{pet_port}")
        code = code.replace("http://127.0.0.1:8080/v1", llm)
        parts.append(f"echo '### {block.section}'")
        if block.lang == "python":
            parts.append(f"\"$TOOLBIND/python\" - <<'README_PY'\n{code}README_PY")
        else:
            parts.append(code.rstrip("\n"))
    return "\n".join(parts) + "\n"


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM()  # no README block talks to a model now: none is asked
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


def _run(bash_script: str, cwd: Path) -> dict[str, str]:
    result = newcomer_bash(bash_script, cwd)
    sections: dict[str, str] = {}
    current = ""
    for line in result.stdout.splitlines():
        if line.startswith("### "):
            current = line[4:]
            sections.setdefault(current, "")
        else:
            sections[current] = sections.get(current, "") + line + "\n"
    return sections


def check_output(out: dict[str, str], project: Path) -> None:
    """What the Example prints is what it says it prints. (The other sections' outputs moved with
    their blocks to the manual, where each page's shown output is compared line for line.)"""
    example = out["Example"].splitlines()
    assert example[0] == "GreetUserCall Ann"
    assert "userName='Bo'" in example[1]
    assert example[2].startswith("greetUser {'type': 'object'")
    assert (project / "tools_pkg" / "my_tools" / "__init__.py").is_file()
    assert not (REPO / "generated" / "my_tools").exists()


@pytest.mark.slow
def test_newcomer_from_a_fresh_clone(tmp_path: Path, llm: tuple[ScriptedLLM, str]) -> None:
    """A fresh clone, toolbind installed from the wheel built from it, the set-up block's
    ``make generate``, every README block, then the README's test command (``make test``) on the
    layers the README describes; the transcript is kept in ``$TOOLBIND_NEWCOMER_LOG`` if set."""
    clone = tmp_path / "clone"
    log: list[str] = []

    def sh(command: str, cwd: Path, timeout: float = 900) -> str:
        log.append(f"$ {command}")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )
        said = (done.stdout + done.stderr).splitlines()
        # this machine's pip configuration names local indexes it lacks: noise, not toolbind's
        log.append("\n".join(x for x in said if not x.startswith("WARNING: Location ")).rstrip())
        assert done.returncode == 0, "\n".join(log)
        return done.stdout

    try:
        sh(f"git clone --quiet {REPO} {clone}", tmp_path)
        sh(f"{sys.executable} -m venv .venv", clone)
        sh(".venv/bin/python -m pip install --quiet --upgrade pip", clone)
        sh(".venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir dist .", clone)
        sh('.venv/bin/python -m pip install --quiet "$(ls dist/toolbind-*.whl)[test]"', clone)
        text = README.read_text(encoding="utf-8")
        setup = next(b for b in blocks(text) if b.section.startswith("Set up"))
        assert setup.code.startswith("make install generate")
        first = next(b for b in blocks(text) if b.section == "Example")
        assert "specs/" not in first.code  # the repository's own specs/ is never the user's
        assert "CHECKOUT=$PWD TOOLBIND=$PWD/.venv/bin" in first.code
        sh("make generate", clone)  # the set-up block, toolbind coming from the wheel
        assert sh("git status --porcelain generated", clone) == ""  # generated/ as committed
        project = tmp_path / "my_project"
        bash = script(
            (clone / "README.md").read_text(encoding="utf-8"),
            checkout=clone,
            bin_dir=clone / ".venv" / "bin",
            project=project,
            pet_port=free_port(),
            llm=llm[1],
        )
        log.append("$ # every README block, in order (one bash session)")
        out = _run(bash, clone)
        log.append("\n".join(f"### {k}\n{v}" for k, v in out.items()).rstrip())
        check_output(out, project)
        assert llm[0].requests == []
        # The README's test command, on the CLI's tests and the golden files (the wheel's
        # generator writes what the repository commits); the whole suite is .ci/run's own run
        sh(
            "make test PYTEST_ADDOPTS='tests/cli/test_cli.py tests/compiler/test_golden.py "
            "-p no:cacheprovider'",
            clone,
        )
    finally:
        target = os.environ.get("TOOLBIND_NEWCOMER_LOG")
        if target:
            Path(target).write_text("\n".join(log) + "\n", encoding="utf-8")
