"""Every code block of the documentation runs, page by page, as a reader pastes them: in a project of
their own, one shell session per page, ``$TOOLBIND/python`` for Python blocks (the approach of
``tests/cli/test_readme.py``). Each page starts where *Get started* leaves the reader: its ``sh``
blocks (the spec and the generated package) run first.

Only addresses change: the project directory becomes a temporary one, the petstore's port and the
model's URL become free ports on 127.0.0.1, where the test serves the petstore
(``demo/petstore.py``, started by the page's own command) and, for blocks marked ``llm``, the
scripted OpenAI-protocol server of ``tests/scripted_llm.py`` with the answers written below.
A block's printed output is compared with the page's ``output`` block, line for line. Blocks not
run are marked with their reason (``tests/docs/_pages.py``) and counted in a warning.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._newcomer import newcomer_bash
from tests._servers import free_port, serve_asgi
from tests.docs._pages import DOCS, RUNNABLE, Block, blocks, pages
from tests.docs._scripts import LLM_SCRIPTS
from tests.scripted_llm import ScriptedLLM

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
GET_STARTED = DOCS / "get-started.md"


def _available(block: Block) -> bool:
    module = block.markers.get("requires")
    if not module:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _address(code: str, project: Path, pet_port: int, llm: str) -> str:
    code = code.replace("CHECKOUT=$PWD TOOLBIND=$PWD/.venv/bin", f"CHECKOUT={REPO} TOOLBIND={BIN}")
    code = code.replace("/tmp/my_project", str(project))
    code = code.replace("demo/petstore.py --detach", f"demo/petstore.py --detach --port {pet_port}")
    code = code.replace("127.0.0.1:8000", f"127.0.0.1:{pet_port}")
    return code.replace("http://127.0.0.1:8080/v1", llm)


def script(run: list[Block], prelude: list[Block], project: Path, pet_port: int, llm: str) -> str:
    """The prelude's and the page's runnable blocks as one bash script; ``### N`` lines on stdout
    separate the output of block N of ``run``."""
    parts = [
        "set -euo pipefail",
        'trap \'if [ -n "${PETSTORE:-}" ]; then kill "$PETSTORE"; fi\' EXIT',
    ]
    if prelude:  # braces, not a subshell: its cd and exports hold for the page
        body = "\n".join(_address(b.code, project, pet_port, llm).rstrip("\n") for b in prelude)
        parts.append(f"{{\n{body}\n}} >/dev/null")
    for number, block in enumerate(run):
        parts.append(f"echo '### {number}'")
        code = _address(block.code, project, pet_port, llm)
        if block.lang == "python":
            parts.append(f"\"$TOOLBIND/python\" - <<'DOCS_PY'\n{code}DOCS_PY")
        else:
            parts.append(code.rstrip("\n"))
    return "\n".join(p for p in parts if p) + "\n"


def _outputs(stdout: str) -> dict[int, str]:
    found: dict[int, list[str]] = {}
    current = -1
    for line in stdout.splitlines():
        if line.startswith("### ") and line[4:].isdigit():
            current = int(line[4:])
            found[current] = []
        elif current >= 0:
            found[current].append(line.rstrip())
    return {k: "\n".join(v).strip("\n") for k, v in found.items()}


def _expected(page: list[Block], run: list[Block]) -> list[tuple[int, Block]]:
    """(index in ``run``, output block) for each ``output`` block after a block that runs."""
    pairs: list[tuple[int, Block]] = []
    last: Block | None = None
    for block in page:
        if (
            ("output" in block.markers or "output-contains" in block.markers)
            and last is not None
            and last in run
        ):
            pairs.append((run.index(last), block))
        elif block.lang in RUNNABLE:
            last = block
    return pairs


def _prelude() -> list[Block]:
    return [b for b in blocks(GET_STARTED) if b.lang == "sh" and b.runs]


PAGES = [p for p in pages() if any(b.runs for b in blocks(p))]


@pytest.fixture
def llm_url(request: pytest.FixtureRequest) -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM()
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_page_blocks_run(path: Path, tmp_path: Path, llm_url: tuple[ScriptedLLM, str]) -> None:
    """The page's runnable blocks run in order and print what the page shows."""
    page = blocks(path)
    run = [b for b in page if b.runs and _available(b)]
    server, url = llm_url
    for block in run:
        if "llm" in block.markers:
            server.add(*LLM_SCRIPTS[block.markers["llm"]])
    prelude = [] if path == GET_STARTED else _prelude()
    bash = script(run, prelude, tmp_path / "my_project", free_port(), url)
    done = newcomer_bash(bash, REPO)
    printed = _outputs(done.stdout)
    for number, shown in _expected(page, run):
        said = printed.get(number, "")
        if "output-contains" in shown.markers:  # timings vary: each shown line is in a printed one
            for line in shown.code.strip("\n").splitlines():
                assert any(line in got for got in said.splitlines()), (
                    run[number].where,
                    line,
                    said,
                )
            continue
        assert said == shown.code.strip("\n"), (
            f"{run[number].where} printed\n{printed.get(number)}\nbut {shown.where} shows\n"
            f"{shown.code}"
        )
    assert not server.script, f"{path.name}: scripted answers left unused: {list(server.script)}"
    assert not (REPO / "generated" / "my_tools").exists()


def test_every_block_is_accounted_for() -> None:
    """Every sh or python block either runs or says why not; the counts are reported."""
    counts: Counter[str] = Counter()
    for path in pages():
        for block in blocks(path):
            if block.lang not in RUNNABLE:
                continue
            assert block.runs or "not-run" in block.markers, (
                f"{block.where}: a {block.lang} block neither marked <!-- run --> nor "
                "<!-- not-run: reason -->"
            )
            if not block.runs:
                counts[f"not run ({block.markers['not-run']})"] += 1
            elif not _available(block):
                counts[f"not run (needs {block.markers['requires']}, not importable here)"] += 1
            else:
                counts["run"] += 1
    assert counts["run"] >= 10, counts
    summary = "; ".join(f"{n} {what}" for what, n in sorted(counts.items()))
    warnings.warn(f"docs code blocks: {summary}", UserWarning, stacklevel=1)


def test_every_page_is_in_the_nav() -> None:
    """mkdocs --strict warns about a page left out of the nav; so does this test, sooner."""
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for path in pages():
        assert path.relative_to(DOCS).as_posix() in nav, path
