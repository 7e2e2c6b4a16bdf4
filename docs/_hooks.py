"""Docs layer (mkdocs hook): the reference pages' generated parts. Imports the standard library,
and ``toolbind.compiler.normalise`` when a page asks for the rules table.

A page asks for a part with a marker line; the hook replaces it when the site is built, so the
reference says what the code does today:

- ``<!-- generated: cli -->``: every command's ``--help``, as the ``toolbind`` console script
  prints it (run as a subprocess: the help is the commands' own, wherever the typer app lives);
- ``<!-- generated: normalise-table -->``: ``toolbind.compiler.normalise.table()`` as a table.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

_COMMAND = re.compile(r"^│ ([a-z][a-z-]*)\s{2,}\S", re.M)


def _toolbind() -> list[str]:
    """The console script beside this interpreter (a venv's ``bin/``), else the one on PATH."""
    beside = Path(sys.executable).with_name("toolbind")
    found = str(beside) if beside.exists() else shutil.which("toolbind")
    if found is None:
        raise RuntimeError("the toolbind console script is not installed beside mkdocs")
    return [found]


def _help(*args: str) -> str:
    # a fixed width and no colours: the page does not depend on the terminal that built it
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [*_toolbind(), *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return "\n".join(line.rstrip() for line in done.stdout.strip("\n").splitlines())


def cli_reference() -> str:
    """Markdown for ``toolbind --help`` and each command's ``--help``."""
    top = _help()
    parts = ["## `toolbind`", "", "```text", top, "```", ""]
    commands_box = top.split("Commands", 1)[-1]
    for name in _COMMAND.findall(commands_box):
        parts += [f"## `toolbind {name}`", "", "```text", _help(name), "```", ""]
    return "\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def normalise_table() -> str:
    """Markdown for every normalising rule (family, name, accepts, makes, warning)."""
    from toolbind.compiler.normalise import table

    rows = table()
    if not rows:
        return "*No rule is registered yet: the table is empty in this version.*\n"
    lines = [
        "| family | rule | accepts | makes of it | warning |",
        "|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


_PARTS = {"cli": cli_reference, "normalise-table": normalise_table}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each ``<!-- generated: NAME -->`` line with its part."""

    def part(match: re.Match[str]) -> str:
        return _PARTS[match.group(1)]()

    return re.sub(r"^<!-- generated: ([a-z-]+) -->$", part, markdown, flags=re.M)
