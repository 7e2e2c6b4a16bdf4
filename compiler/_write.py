"""Compiler layer: the write stage — an output directory replaced all-or-nothing, and read back.

Imports ``_load`` (paths as shown), ``_tree``, ``diagnostics``, ``errors`` and ``ir``.

An output directory holds the generated packages, the manifest (``MANIFEST``: which packages
toolbind wrote there, from which specs, and what the next run may reuse) and ``PARSES``, what
is kept for the next run only. It is replaced whole: the new tree is written (or staged by the
format stage) in a directory beside it and swapped in with two renames; an interrupted run
leaves the previous tree (a crash between the two renames is repaired by the next run). A
directory that toolbind did not write (no manifest) is never replaced.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from ._load import as_object, display_path
from ._tree import GeneratedTree
from .diagnostics import Diagnostic
from .errors import OutputError
from .ir import SourceLocation

MANIFEST = "toolbind.json"
"""The manifest, at the top of an output: the packages toolbind wrote there."""
PARSES = ".toolbind-cache"
"""Where an output keeps what only the next run uses (``memo``: the parses of large YAML specs,
their operations' lowering, large packages' render memos): not generated code, ignored by git
(its own ``.gitignore``) and by ``--check``."""


def kept_file(rel: str) -> bool:
    """Whether ``rel`` (a path in an output) is kept for the next run rather than generated."""
    return rel.split("/", 1)[0] == PARSES


def file_ancestor(path: Path) -> Path | None:
    """The closest existing ancestor of ``path`` when it is a file (``path`` can't be made)."""
    for parent in Path(os.path.abspath(path)).parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def write_files(root: Path, files: Mapping[str, str], made: set[str] | None = None) -> None:
    made = set() if made is None else made  # (1,500 files of a large package, a few directories)
    for rel, text in sorted(files.items()):
        target = root / rel
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        target.write_text(text, encoding="utf-8", newline="\n")


def recover(out: Path) -> None:
    """Finish a swap that a killed run left half-done."""
    for old in sorted(out.parent.glob(f".{out.name}.old-*")):
        if not out.exists():
            old.rename(out)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in out.parent.glob(f".{out.name}.new-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def check_output_dir(out: Path, inputs: Iterable[Path] = ()) -> None:
    """Refuse an output path that toolbind must not replace: a file, a path inside a file, a
    directory holding files toolbind did not write, or one holding the specs being compiled."""
    out = Path(os.path.abspath(out))
    shown = display_path(out)
    inside = file_ancestor(out)
    if inside is not None:
        raise OutputError(
            f"{shown}: {display_path(inside)} is a file — expected -o to name a directory "
            "(hint: choose another -o)"
        )
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise OutputError(f"{shown}: the output path is a file — expected a directory")
    target = out.resolve()
    for spec in inputs:
        where = spec.resolve()
        if where == target or target in where.parents:
            raise OutputError(
                f"{shown}: the output directory holds the spec {display_path(spec)}, which "
                "replacing it would delete — expected an output directory apart from the specs "
                "(hint: choose another -o)"
            )
    if not out.is_dir():
        return
    entries = {p.name for p in out.iterdir()}
    if not entries:
        return
    if MANIFEST not in entries:
        raise OutputError(
            f"{shown}: the directory holds files toolbind did not write (no {MANIFEST}) "
            "— expected an empty directory or a previous toolbind output (hint: choose another -o)"
        )
    written = _manifest_packages(out / MANIFEST)
    if written is None:
        raise OutputError(
            f"{shown}: {MANIFEST} is not a manifest toolbind wrote — expected an empty directory "
            "or a previous toolbind output (hint: choose another -o)"
        )
    foreign = sorted(entries - set(written) - {MANIFEST, PARSES, "__pycache__"})
    if foreign:
        listed = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
        raise OutputError(
            f"{shown}: the directory holds files toolbind did not write ({listed}) — expected "
            "only the packages its toolbind.json lists (hint: move them, or choose another -o)"
        )


def staging(out: Path) -> Path:
    return out.parent / f".{out.name}.new-{os.getpid()}"


def swap(new: Path, out: Path) -> None:
    """Move the complete tree ``new`` to ``out``, replacing what was there."""
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
        new.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(out)


def _manifest_packages(manifest: Path) -> list[str] | None:
    """The package names a toolbind manifest lists, or None when the file is not one."""
    sources = manifest_sources(manifest)
    return None if sources is None else list(sources)


def manifest_sources(manifest: Path) -> dict[str, str] | None:
    """A toolbind manifest's packages (name → the spec it was made from), or None when the
    file is missing or is not one."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    top = as_object(data)
    packages = as_object(top.get("packages")) if top is not None else None
    return None if packages is None else {k: str(v) for k, v in packages.items()}


def write_tree(tree: GeneratedTree, out: Path, inputs: Iterable[Path] = ()) -> None:
    """Replace ``out`` with ``tree`` all-or-nothing (``inputs``: the specs, never replaced)."""
    out = out.absolute()
    if out.parent.is_dir():
        recover(out)
    check_output_dir(out, inputs)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = staging(out)
    try:
        write_files(new, tree.files)
        swap(new, out)
    finally:
        if new.exists():
            shutil.rmtree(new, ignore_errors=True)


def shadowing_in_project(tree: GeneratedTree, out: Path) -> list[Diagnostic]:
    """Warnings for packages named like a top-level module or package of the project ``out``
    is in (its parent directory, where ``python`` and pytest run): importing either may get
    the other."""
    found: list[Diagnostic] = []
    parent = out.absolute().parent
    for name, source in sorted(tree.packages.items()):
        for candidate in (parent / name, parent / f"{name}.py"):
            if candidate != out.absolute() and candidate.exists():
                found.append(
                    Diagnostic(
                        loc=SourceLocation(file=source),
                        severity="warning",
                        found=f"the generated package {name!r} has the name of "
                        f"{display_path(candidate)}, beside the output directory: whichever "
                        "comes first on sys.path hides the other",
                        expected="a package name nothing else uses",
                        hint=f"name it with --package {source}=OTHER, or write it elsewhere (-o)",
                    )
                )
                break
    return found


def diff_tree(tree: GeneratedTree, out: Path) -> list[str]:
    """Unified diffs between ``tree`` and what ``out`` holds (empty when up to date).

    The generated output is compared, not what was kept for the next run: the kept parses
    (``PARSES``) and the manifest's ``incremental`` section, whose digests of the spec bytes
    change with an edit that changes no output (whitespace, a comment)."""
    current: dict[str, str] = {}
    if out.is_dir():
        for path in sorted(out.rglob("*")):
            rel = path.relative_to(out).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and not kept_file(rel):
                try:
                    current[rel] = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    current[rel] = "<binary>"
    diffs: list[str] = []
    for rel in sorted(set(current) | {rel for rel in tree.files if not kept_file(rel)}):
        old = current.get(rel)
        new = tree.files.get(rel)
        if old == new or (rel == MANIFEST and _generated_part(old) == _generated_part(new)):
            continue
        diffs.append(
            "".join(
                difflib.unified_diff(
                    (old or "").splitlines(keepends=True),
                    (new or "").splitlines(keepends=True),
                    fromfile=f"a/{rel}" if old is not None else "/dev/null",
                    tofile=f"b/{rel}" if new is not None else "/dev/null",
                )
            )
        )
    return diffs


def _generated_part(manifest: str | None) -> object:
    """A manifest without its ``incremental`` section (None when it is not one)."""
    try:
        data = as_object(json.loads(manifest or ""))
    except ValueError:
        return None
    if data is None:
        return None
    return {k: v for k, v in data.items() if k != "incremental"}
