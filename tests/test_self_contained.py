"""Tests: the repository stands on its own — no code, test, benchmark or build step reads the
third-party corpus from beside the checkout; what the tests read is ``tests/corpus``.

Reads the repository's files only (the standard library and pytest).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import CORPUS, REPO

#: Where the corpus once lived, however a path to it is spelled (written so that this file
#: does not match itself).
OUTSIDE = re.compile(r"\.\./shared|shared[/]corpus|\"shared\"\s*/\s*\"corpus\"")

#: What is checked: the code, the tests, the benchmarks, the demo and the build.
ROOTS = ("tests", "bench", "demo", "compiler", "runtime", "testing", "Makefile", ".ci")

#: Not the repository's own text: installed packages and caches.
SKIPPED_DIRS = {"node_modules", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}


def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.iterdir()):
        if path.is_dir() and path.name not in SKIPPED_DIRS:
            yield from _files(path)
        elif path.is_file():
            yield path


def test_nothing_reads_the_corpus_from_beside_the_checkout() -> None:
    provenance = CORPUS / "README.md"  # says where each file came from: not a path read
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for name in ROOTS
        for path in _files(REPO / name)
        if path != provenance
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        )
        if OUTSIDE.search(line)
    ]
    assert found == []


def test_the_corpus_is_in_the_repository() -> None:
    """What the tests read is here, each source's license beside its data."""
    assert (CORPUS / "README.md").is_file()
    for part in ("openapi", "jsonschema-test-suite", "tools/bfcl", "tools/github-mcp-server"):
        assert any(p.name.startswith("LICENSE") for p in (CORPUS / part).iterdir()), part
