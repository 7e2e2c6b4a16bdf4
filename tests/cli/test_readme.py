"""Every code block of the README runs, in order, as a newcomer pastes them: in a project of their
own (never the repository's ``specs/``), one shell session, ``$TOOLBIND/python`` for Python blocks.

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

from tests._servers import free_port, serve_asgi
from tests.scripted_llm import Reply, ScriptedLLM, call

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
    never run)."""
    found = blocks(README.read_text(encoding="utf-8"))
    assert {b.lang for b in found} <= {"sh", "python", "text", "json"}, [b.lang for b in found]
    assert sum(b.lang == "python" for b in found) >= 4


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


def _llm_script() -> tuple[Reply, ...]:
    return (
        # the MCP block: an Agent over the time server's tools, answered at once
        call({"calls": [], "output": "It is noon in Tokyo."}),
        call({"calls": [{"_tool": "greetUser", "userName": "Ann"}], "output": None}),
        call({"calls": [{"_tool": "greetUser", "userName": "Bo"}], "output": None}),
        call({"calls": [], "output": "I greeted Bo."}),
        # the Context block: a dynamic _outputPath and a reference, then the output
        call(
            {
                "calls": [
                    {
                        "_tool": "setStatus",
                        "user": "†data.user.name",
                        "status": "inactive",
                        "_outputPath": "†data.user.status",
                    }
                ],
                "output": None,
            }
        ),
        call({"calls": [], "output": "done"}),
        # the approval block: one call parked, an answer meanwhile, then the resumed run
        call({"calls": [{"_tool": "transfer", "amount": 50}], "output": None}),
        call({"calls": [], "output": "Waiting for approval."}),
        call({"calls": [], "output": "Sent 20."}),
        # the delegates block: a delegated call and a refund its guardrail rejects (no request),
        # the summarizer's sub-request, then the output
        call(
            {
                "calls": [{"_tool": "summarize", "words": 10}, {"_tool": "refund", "amount": 500}],
                "output": None,
            }
        ),
        call({"calls": [], "output": {"summary": "A short summary."}}),
        call({"calls": [], "output": "done"}),
    )


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM(*_llm_script())
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


def _run(bash_script: str, cwd: Path) -> dict[str, str]:
    # a newcomer's shell: none of this test run's Python or pytest settings
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
    sections: dict[str, str] = {}
    current = ""
    for line in result.stdout.splitlines():
        if line.startswith("### "):
            current = line[4:]
            sections.setdefault(current, "")
        else:
            sections[current] = sections.get(current, "") + line + "\n"
    return sections


def check_output(out: dict[str, str], project: Path, llm: ScriptedLLM) -> None:
    """What each block prints is what the README says it prints."""
    example = out["Example"].splitlines()
    assert example[0] == "GreetUserCall Ann"
    assert "userName='Bo'" in example[1]
    assert example[2].startswith("greetUser {'type': 'object'")
    assert (project / "tools_pkg" / "my_tools" / "__init__.py").is_file()
    contract = out["Contract tests for your specs"]
    assert contract.count("every contract holds") == 2, contract
    assert re.search(r"\b1 passed\b", contract), contract  # the pytest item of greetUser
    openapi = out["OpenAPI: every operation a typed tool with an HTTP Activity"]
    assert "True 200 root=[Pet(name='Rex', tag='dog', id=1), Pet(" in openapi
    assert "Kit" not in openapi  # limit=2 reached the server
    http = out["Calling HTTP APIs (`toolbind.runtime.http`)"]
    assert http.strip() == "False 404 http_status {'code': 404, 'message': 'no such resource'}"
    runtime = out["Runtime (`toolbind.runtime`: registries, `Agent`)"].splitlines()
    assert "userName='Ann'" in runtime[0] and "GreetUserCall" in runtime[0]
    assert runtime[1] == "I greeted Bo. [('greetUser', {'greeting': 'Hello, Bo'})]"
    context = out[
        "Context, state and output paths (`Context`, `run(..., context=...)`)"
    ].splitlines()
    assert context[0] == ("inactive Alex {'user': 'Alex', 'status': 'inactive'}")
    assert context[1] == (
        "{'user': {'name': 'Alex', 'status': 'inactive', 'tags': ['vip']}} †data.user.status"
    )
    approval = out["Activity context and approval (`ActivityContext`, `RequireApproval`)"]
    assert approval.splitlines() == ["True ['transfer']", "{'sent': 20} Sent 20."]
    delegates = out[
        "Delegates, scopes and guardrails (`Delegates`, `_delegate`, `_scopes`, `Guardrails`)"
    ]
    assert delegates.splitlines() == [
        "{'summary': 'A short summary.'} <delegates['summarizer']>",
        "rejected by guardrail at_most_100: 500 is over the refund limit",
    ]
    sub = str(llm.requests[10]["messages"])
    assert "You are an expert summarizer." in sub and "A long article..." in sub
    assert "not for the summarizer" not in sub
    assert len(llm.requests) == 12
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
        check_output(out, project, llm[0])
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
