"""Compiler layer: the format stage — generated Python formatted by the pinned ruff.

Imports ``_tree`` and ``_write`` (files written below a directory); runs ruff in a subprocess.
ruff formats files on disk, so a tree is formatted where it is staged (``format_in``): the
files are written once, beside the output they will replace.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._tree import Texts
from ._write import write_files

RUFF_ARGS = (
    "format",
    "--isolated",
    "--no-cache",
    "--line-length",
    "100",
    "--target-version",
    "py311",
    "--quiet",
)


def format_source(text: str) -> str:
    """ruff-format one module held in memory."""
    result = subprocess.run(
        [ruff_binary(), *RUFF_ARGS, "--stdin-filename", "module.py", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"toolbind generated code that ruff cannot format:\n{result.stderr}")
    return result.stdout


def ruff_binary() -> str:
    from ruff.__main__ import find_ruff_bin  # pyright: ignore[reportMissingTypeStubs]

    return str(find_ruff_bin())


def format_dir(directory: Path) -> None:
    """ruff-format every Python file below ``directory`` in one process (pinned ruff)."""
    format_paths(directory, ["."])


def format_paths(root: Path, rels: list[str]) -> None:
    """ruff-format some files below ``root`` (in batches, to keep command lines short)."""
    _finish_format(_start_format(root, rels))


def _start_format(root: Path, rels: list[str]) -> tuple[Path, list[list[str]], Any]:
    """ruff formatting ``rels`` below ``root``: the first batch started, the others to run
    one after another (``_finish_format`` runs them and waits)."""
    batches = [rels[start : start + 500] for start in range(0, len(rels), 500)]
    return root, batches[1:], _ruff(root, batches[0]) if batches else None


def _ruff(root: Path, rels: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ruff_binary(), *RUFF_ARGS, *rels],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish_format(running: tuple[Path, list[list[str]], Any]) -> None:
    """Run ``_start_format``'s other batches, waiting for each; generated code that ruff
    cannot format is a toolbind bug, not a user error."""
    root, rest, process = running
    while process is not None:
        _, err = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"toolbind generated code that ruff cannot format:\n{err}")
        process = _ruff(root, rest.pop(0)) if rest else None


def format_in(
    root: Path,
    files: Texts,
    todo: set[str] | None = None,
    origin: Mapping[str, str] | None = None,
) -> Texts:
    """Write ``files`` below ``root``, ruff-format them there (only ``todo`` when given: the
    others are formatted already) and read the formatted ones back.

    ``origin``: files a previous output holds with the same text, hard-linked instead of written
    (writing a large tree, and deleting the one it replaces, costs more than compiling it).
    With ``todo``, ruff formats those files while the rest are linked and written (on a large
    tree regenerated after an edit, linking its thousands of kept files took as long as
    ruff).
    """
    made = set[str]()  # directories made (str paths: thousands of files, one mkdir each)
    if todo is None:
        changed = {rel for rel in files if rel.endswith(".py")}  # ruff formats Python only
        write_files(root, files)
        format_dir(root)
    else:
        changed = {rel for rel in todo if rel.endswith(".py") and rel in files}
        write_files(root, {rel: files[rel] for rel in sorted(changed)}, made)
        running = _start_format(root, sorted(changed))
        try:
            linked = _link(root, origin or {}, made)
            # (a file kept from the previous output is read only if it could not be linked)
            rest = {rel: files[rel] for rel in files if rel not in linked and rel not in changed}
            write_files(root, rest, made)
        except BaseException:
            if running[2] is not None:  # (the stage is removed: ruff is not waited for)
                running[2].kill()
                running[2].wait()
            raise
        _finish_format(running)
    formatted = Texts()
    formatted.merge(files)
    for rel in changed:
        formatted[rel] = (root / rel).read_text(encoding="utf-8")
    return formatted


def _link(root: Path, origin: Mapping[str, str], made: set[str]) -> set[str]:
    """Hard-link each previous file of ``origin`` into ``root``; the ones linked."""
    linked = set[str]()
    for rel, source in origin.items():
        target = os.path.join(root, rel)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        try:
            os.link(source, target)
        except OSError:
            continue
        linked.add(rel)
    return linked
