"""Compiler layer: ``toolbind diff`` — read two versions of specs (files, directories or git
revisions) to IR, compare them with ``passes.diff`` and render the report.

Imports the driver's spec reading, ``passes.diff`` and the standard library.

A git revision is written ``REV:PATH`` (``main:specs/x.yaml``, ``HEAD~1:specs/``): the
revision's copy of PATH's directory is extracted to a temporary directory (so its ``$ref``s to
sibling files read the same revision) and shown in diagnostics and the report as ``REV:PATH``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ._driver import find_specs, read_spec
from ._load import NO_EXTRA_REFS, RefPolicy, display_path
from .diagnostics import Diagnostic, Diagnostics
from .errors import SelectionError, SpecError
from .frontends._jsonschema import SchemaLowerer
from .ir import SchemaNode, SourceLocation, SpecPackage
from .passes.diff import AUDIENCES, BREAKING, Change, diff_packages, diff_schemas
from .passes.subset import SchemaTable

FailOn = Literal["breaking", "any", "none"]
ReportFormat = Literal["text", "json", "markdown"]


@dataclass(frozen=True, slots=True)
class DiffReport:
    """The changes between two versions of a set of specs, and what was compared."""

    old: str
    new: str
    changes: list[Change]
    diagnostics: list[Diagnostic]

    def fails(self, on: FailOn) -> bool:
        if on == "none":
            return False
        if on == "any":
            return bool(self.changes)
        return any(c.audience in BREAKING for c in self.changes)

    def counts(self) -> dict[str, int]:
        return {a: sum(c.audience == a for c in self.changes) for a in AUDIENCES}


def diff_specs(
    old: str,
    new: str,
    refs: RefPolicy = NO_EXTRA_REFS,
    progress: Callable[[str], None] | None = None,
) -> DiffReport:
    """Compare the specs ``old`` and ``new`` (a file, a directory or ``REV:PATH``).

    Two files are compared with each other whatever their names; two directories (or
    revisions of one) spec by spec, matched by file name. ``progress`` is told each step
    (reading a side, comparing a spec) as it starts.

    Raises:
        SpecError: either side has errors (each located in its own version).
        SelectionError: a side is neither a path nor a git revision of one.
    """
    diags = Diagnostics()
    with _materialised(old) as (old_path, old_shown), _materialised(new) as (new_path, new_shown):
        tell: Callable[[str], None] = progress or _quiet
        tell(f"reading {old_shown}")
        old_pkgs = _read(old_path, old_shown, diags, refs)
        tell(f"reading {new_shown}")
        new_pkgs = _read(new_path, new_shown, diags, refs)
        if diags.has_errors:
            raise SpecError(diags.items)
    changes: list[Change] = []
    if len(old_pkgs) == 1 and len(new_pkgs) == 1 and not old_path.is_dir():
        pairs = [(next(iter(old_pkgs.values())), next(iter(new_pkgs.values())))]
    else:
        pairs = [(old_pkgs.get(k), new_pkgs.get(k)) for k in sorted({*old_pkgs, *new_pkgs})]
    for a, b in pairs:
        either = b or a
        tell(f"comparing {either.source if either is not None else old_shown}")
        changes.extend(diff_packages(a, b))
    return DiffReport(old=old, new=new, changes=changes, diagnostics=diags.items)


def _quiet(_: str) -> None:
    """No progress is shown."""


def diff_json_schemas(
    old: Any, new: Any, *, side: Literal["params", "output"] = "params"
) -> list[Change]:
    """The changes from one JSON Schema to another, read as a tool's parameters (or Output);
    witnesses are instances of the schemas themselves.

    Raises:
        SpecError: either schema has errors (located as ``<old>#…`` / ``<new>#…``).
    """
    diags = Diagnostics()
    nodes: list[tuple[SchemaNode, SchemaTable]] = []
    for source, schema in (("<old>", old), ("<new>", new)):
        lowerer = SchemaLowerer(diags=diags, allow_remote_files=False)
        node = lowerer.lower_root(schema, SourceLocation(file=source), root=schema, path=None)
        nodes.append((node, SchemaTable(lowerer.sorted_definitions(), source)))
    if diags.has_errors:
        raise SpecError(diags.items)
    (a, told), (b, tnew) = nodes
    return diff_schemas(a, b, told, tnew, side=side)


def _read(path: Path, shown: str, diags: Diagnostics, refs: RefPolicy) -> dict[str, SpecPackage]:
    """Each spec of ``path`` lowered, keyed by file name; sources shown under ``shown``."""
    found: dict[str, SpecPackage] = {}
    for spec in find_specs([path], diags):
        where = shown if not path.is_dir() else f"{shown.rstrip('/')}/{spec.name}"
        pkg = read_spec(spec, where, diags, None, refs)
        if pkg is not None:
            found[spec.name] = pkg
    return found


@contextmanager
def _materialised(spec: str) -> Generator[tuple[Path, str]]:
    """A path to read ``spec`` from, and how to show it: the path itself, or a temporary
    extraction of a git revision's copy."""
    path = Path(spec)
    rev, sep, rel = spec.partition(":")
    if path.exists() or not sep or not rev or len(rev) == 1:  # "C:\\..." is a path
        yield path, display_path(path) if path.exists() else spec
        return
    top = _git(["rev-parse", "--show-toplevel"], Path.cwd())
    if top is None:
        raise SelectionError(f"{spec}: no such file, and not in a git repository for REV:PATH")
    root = Path(top.strip())
    prefix = _git(["rev-parse", "--show-prefix"], Path.cwd()) or ""
    target = PurePosixPath(prefix.strip()) / rel if rel else PurePosixPath(prefix.strip() or ".")
    kind = _git(["cat-file", "-t", f"{rev}:{target}"], root)
    if kind is None:
        raise SelectionError(
            f"{spec}: git has no {target} at revision {rev!r} — expected REV:PATH naming a "
            "file or directory of that revision"
        )
    folder = target if kind.strip() == "tree" else target.parent
    tmp = Path(tempfile.mkdtemp(prefix="toolbind-diff-"))
    try:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", rev, "--", str(folder)],
            cwd=root,
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            raise SelectionError(f"{spec}: git archive failed: {archive.stderr.decode().strip()}")
        tar_path = tmp / "rev.tar"
        tar_path.write_bytes(archive.stdout)
        with tarfile.open(tar_path) as tar:
            tar.extractall(tmp / "tree", filter="data")
        local = tmp / "tree" / target
        if not (local.exists() or local.is_dir()):
            local.mkdir(parents=True, exist_ok=True)
        yield local, spec
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return result.stdout if result.returncode == 0 else None


# -- rendering ------------------------------------------------------------------------------

_LABEL = {
    "calls": "breaks Calls",
    "activities": "breaks Activities",
    "unknown": "unknown",
    "prompt": "prompt only",
    "safe": "safe",
}


def _where(c: Change) -> str:
    if c.old is not None and c.new is not None:
        return f"{c.old} → {c.new}"
    return str(c.old or c.new)


def render(report: DiffReport, fmt: ReportFormat) -> str:
    """The report as text (one line per change), JSON or a Markdown table."""
    if fmt == "json":
        return (
            json.dumps(
                {
                    "old": report.old,
                    "new": report.new,
                    "summary": report.counts(),
                    "changes": [c.to_json() for c in report.changes],
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    if fmt == "markdown":
        lines = [
            f"### toolbind diff `{report.old}` → `{report.new}`",
            "",
            _summary(report),
            "",
        ]
        if report.changes:
            lines += [
                "| who breaks | rule | tools | where | what | witness |",
                "|---|---|---|---|---|---|",
            ]
            for c in report.changes:
                witness = f"`{c.witness}`" if c.witness else ""
                lines.append(
                    f"| {_LABEL[c.audience]} | {c.rule} | {', '.join(c.tools)} | "
                    f"`{_where(c)}` | {_cell(c.message)} | {_cell(witness)} |"
                )
        return "\n".join(lines) + "\n"
    lines: list[str] = []
    for c in report.changes:
        tools = f" ({', '.join(c.tools)})" if c.tools else ""  # (a change to the whole API)
        line = f"{_where(c)}: {_LABEL[c.audience]}: {c.rule}{tools} — {c.message}"
        if c.witness:
            line += f" (witness: {c.witness}{'' if c.rejected or c.audience != 'calls' else ', still accepted'})"
        lines.append(line)
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def _summary(report: DiffReport) -> str:
    counts = report.counts()
    parts = [f"{n} {_LABEL[a]}" for a, n in counts.items() if n]
    return f"{len(report.changes)} change(s)" + (f": {', '.join(parts)}" if parts else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_json(report: DiffReport) -> dict[str, Any]:
    return json.loads(render(report, "json"))
