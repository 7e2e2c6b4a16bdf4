"""Docs layer (mkdocs hook): the reference pages' generated parts. Imports the standard library,
and ``toolbind.compiler.normalise`` when a page asks for the rules table.

A page asks for a part with a marker line; the hook replaces it when the site is built, so the
reference says what the code does today:

- ``<!-- generated: cli -->``: every command's ``--help``, as the ``toolbind`` console script
  prints it (run as a subprocess: the help is the commands' own, wherever the typer app lives);
- ``<!-- generated: normalise-table -->``: ``toolbind.compiler.normalise.table()`` as a table;
- ``<!-- generated: capabilities-api -->``: the Agent's capabilities (mkdocstrings), where the
  installed version has them.

It also points mkdocstrings at the toolbind being built: an editable install maps
``toolbind.compiler`` onto ``compiler/`` with an import hook, which griffe (reading files, not
importing) cannot follow, so the hook lays out a ``toolbind/`` tree of links to the packages as
imported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
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
    import importlib

    # by name: pyright, run on docs/ outside the project's include, resolves no toolbind import
    table: Callable[[], list[tuple[str, ...]]] = importlib.import_module(
        "toolbind.compiler.normalise"
    ).table
    rows = table()
    if not rows:
        return "*No rule is registered yet: the table is empty in this version.*\n"
    lines = [
        "| family | rule | accepts | makes of it | warning |",
        "|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def capabilities_api() -> str:
    """``toolbind.runtime.capabilities``'s API, where this version has the package."""
    import importlib.util

    if importlib.util.find_spec("toolbind.runtime.capabilities") is None:
        return "*This version has no `toolbind.runtime.capabilities` package.*\n"
    return "::: toolbind.runtime.capabilities\n    options:\n      show_root_heading: false\n"


_PARTS = {
    "cli": cli_reference,
    "normalise-table": normalise_table,
    "capabilities-api": capabilities_api,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each ``<!-- generated: NAME -->`` line with its part."""

    def part(match: re.Match[str]) -> str:
        return _PARTS[match.group(1)]()

    return re.sub(r"^<!-- generated: ([a-z-]+) -->$", part, markdown, flags=re.M)


_SUBPACKAGES = ("compiler", "runtime", "testing", "cli")
API_TREE = Path(__file__).resolve().parents[1] / "build" / "docs-api"
"""Where the link tree is laid out (mkdocs.yml's mkdocstrings ``paths``; build/ is ignored by git)."""


def link_tree() -> None:
    """Lay out ``API_TREE/toolbind/`` with a link to each public package as Python imports it."""
    import importlib

    root = API_TREE / "toolbind"
    shutil.rmtree(API_TREE, ignore_errors=True)
    root.mkdir(parents=True)
    kernel = importlib.import_module("toolbind")
    for location in getattr(kernel, "__path__", []):  # the kernel's own modules, if it has any
        if not Path(location).is_dir():  # an editable install's path hook entry
            continue
        for entry in Path(location).iterdir():
            if not (root / entry.name).exists() and entry.name not in _SUBPACKAGES:
                (root / entry.name).symlink_to(entry)
    for name in _SUBPACKAGES:
        try:
            module = importlib.import_module(f"toolbind.{name}")
        except ImportError:
            continue
        (root / name).symlink_to(Path(module.__path__[0]))
    if not (root / "__init__.py").exists():
        (root / "__init__.py").write_text("")


link_tree()  # when mkdocs loads the hook: before mkdocstrings reads a module
