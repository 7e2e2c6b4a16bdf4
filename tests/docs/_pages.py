"""Test support (docs): the fenced blocks of the documentation's pages, with the markers that say
what the tests do with each. Imports the standard library only.

A block is preceded by zero or more marker lines (HTML comments, invisible on the site):

- ``<!-- run -->``: a ``sh`` block the tests run (``python`` blocks run unless marked otherwise);
- ``<!-- not-run: REASON -->``: never run, and counted with its reason in the tests' output;
- ``<!-- output -->``: a ``text`` block that is exactly what the runnable block before it prints;
- ``<!-- output-contains -->``: each of its lines is within a line that block prints (a day, a
  timing, a long repr: what cannot be shown whole);
- ``<!-- llm: NAME -->``: the block talks to a model: the test serves the scripted answers ``NAME``;
- ``<!-- requires: MODULE -->``: run only where ``MODULE`` imports (else counted as not run, with
  the module named: a name another part of toolbind brings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!-- ([a-z-]+)(?::\s*(.*?))? -->$")
RUNNABLE = ("sh", "python")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a page: its language, text, markers, section and first line."""

    page: str
    lang: str
    code: str
    markers: dict[str, str]
    section: str
    line: int

    @property
    def where(self) -> str:
        """``page:line`` of the fence, for messages."""
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        """Whether the tests run this block (before ``requires`` is checked)."""
        if self.lang not in RUNNABLE or "not-run" in self.markers:
            return False
        return self.lang == "python" or "run" in self.markers


def pages() -> list[Path]:
    """Every Markdown page of the docs, sorted."""
    return sorted(DOCS.rglob("*.md"))


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` in order, each with its markers and section."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(DOCS).as_posix()
    found: list[Block] = []
    section = ""
    markers: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        marker = _MARKER.match(line)
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        if marker:
            markers[marker.group(1)] = marker.group(2) or ""
        elif fence and line != "```":
            end = lines.index("```", index + 1)
            code = "\n".join(lines[index + 1 : end]) + "\n"
            found.append(Block(name, fence.group(1), code, markers, section, index + 1))
            markers, index = {}, end
        elif line.strip():
            markers = {}
        index += 1
    return found
