"""CLI layer: ``toolbind generate``, the command a build runs most, without typer or rich.

Imports the compiler's driver, loader and diagnostics; ``_main`` (the console script's entry
point) and ``_app`` (the typer app, every other command) import this. Typer, click and rich cost about a fifth of a ``generate`` that reuses every
package, and most of what a one-description regeneration spends before it reads anything. So a
``generate`` command line in a plain form (``plain_arguments``: the options as ``GENERATE``
declares them) is run here without importing them, and printed as rich prints it when stderr is
no terminal (``say``); anything else — ``--help``, another command, an option typer must coerce or
report — goes to the typer app, whose ``generate`` runs ``run`` too. A test holds ``GENERATE`` to
what typer reads from ``_app.generate``'s declaration, so the two cannot disagree.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbind.compiler._driver import (
    MANIFEST,
    GeneratedTree,
    OutputError,
    SelectionError,
    build,
    check_output_dir,
    diff_tree,
    manifest_sources,
    write_into,
)
from toolbind.compiler._load import RefPolicy
from toolbind.compiler.diagnostics import Diagnostic
from toolbind.compiler.errors import SpecError

if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of ``generate`` as typer reads it: its options (none: the arguments), a
    flag or a value (a list when repeatable) of ``str`` or ``Path``, its default."""

    name: str
    decls: tuple[str, ...]
    flag: bool
    many: bool
    element: type[Any]
    readable: bool
    default: Any


GENERATE = (
    Param("specs", (), flag=False, many=True, element=Path, readable=False, default=None),
    Param("out", ("--out", "-o"), False, False, Path, True, Path("generated")),
    Param("check", ("--check",), True, False, bool, True, False),
    Param("verbose", ("--verbose", "-v"), True, False, bool, True, False),
    Param("tag", ("--tag",), False, True, str, True, None),
    Param("path", ("--path",), False, True, str, True, None),
    Param("operation", ("--operation",), False, True, str, True, None),
    Param("allow_ref", ("--allow-ref",), False, True, str, True, None),
    Param("strict", ("--strict",), True, False, bool, True, False),
    Param("package", ("--package",), False, True, str, True, None),
    Param("full", ("--full",), True, False, bool, True, False),
    Param("mcp_config", ("--mcp-config",), False, True, Path, False, None),
    Param("no_format_checks", ("--no-format-checks",), True, False, bool, True, False),
)
"""``cli.generate``'s parameters, in order (``tests/cli`` compares them with typer's reading)."""


def plain_arguments(argv: list[str]) -> dict[str, Any] | None:
    """``generate``'s keyword arguments from ``argv`` (the words after ``generate``), as typer
    would pass them, when every word is in a plain form; None for anything else, which typer
    then parses (and reports): an option spelled as declared (``--out``, ``-o``) with its value
    in the next word, a flag without a value, a list option repeated, the rest spec paths.
    ``--help``, ``--opt=value``, ``-oDIR``, ``--``, an unknown or repeated scalar option, a
    value that starts with ``-`` or is empty, a path that exists unreadable: None."""
    by_decl = {decl: p for p in GENERATE for decl in p.decls}
    positional = next(p for p in GENERATE if not p.decls)
    values: dict[str, Any] = {p.name: p.default for p in GENERATE}
    given: set[str] = set()
    words = iter(argv)
    for word in words:
        if word.startswith("-"):
            param = by_decl.get(word)
            if param is None or (param.name in given and not param.many):
                return None
            given.add(param.name)
            if param.flag:
                values[param.name] = True
                continue
            value: Any = next(words, None)
            if value is None or not value or value.startswith("-"):
                return None
        elif word:
            param, value = positional, word
        else:
            return None
        if param.element is Path:
            value = Path(value)
            if param.readable and os.path.exists(value) and not os.access(value, os.R_OK):
                return None
        values[param.name] = [*(values[param.name] or ()), value] if param.many else value
    return values


# -- what the user reads ---------------------------------------------------------------------

_console: list[Console] = []
# where rich decides on its own that stderr is a terminal (or one that shows colours)
_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS")


def stderr_console() -> Console:
    """The one rich console on stderr (made on first use)."""
    if not _console:
        from rich.console import Console

        # emoji=False: rich replaces ``:name:`` codes even with markup off, and a diagnostic
        # quoting ``/v1/a:x:b`` or an enum value ``:ok:`` was printed with emoji in their place
        _console.append(Console(stderr=True, highlight=False, soft_wrap=True, emoji=False))
    return _console[0]


def _plain() -> bool:
    """Whether rich would print to stderr no colour and no cursor control."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
    return not tty and not any(os.environ.get(name) for name in _TERMINAL_ENV)


def say(lines: list[tuple[str, str | None]]) -> None:
    """Print ``(text, style)`` lines to stderr as one block. Where rich would print each text
    as it is (no terminal; printable text: no tab it expands, no control code it drops), they
    are written as they are; otherwise rich prints them (``tests/cli`` compares the two)."""
    if not lines:
        return
    if _plain() and all(text.isprintable() for text, _ in lines):
        sys.stderr.write("".join(f"{text}\n" for text, _ in lines))
        sys.stderr.flush()
        return
    from rich.text import Text

    stderr_console().print(Text("\n").join(Text(text, style=style or "") for text, style in lines))


def render(diagnostics: list[Diagnostic], *, notes: bool = False) -> None:
    """Print diagnostics, errors red, warnings yellow, notes (with ``notes``) dim; the same
    diagnostic at the same place once with its count — a component that hundreds of operations
    ``$ref`` would otherwise repeat one line hundreds of times."""
    texts = [d.render() for d in diagnostics]
    times = Counter(texts)
    printed: set[str] = set()
    lines: list[tuple[str, str | None]] = []
    for d, text in zip(diagnostics, texts, strict=True):
        if (d.severity == "note" and not notes) or text in printed:
            continue
        printed.add(text)
        style = {"error": "red", "warning": "yellow", "note": "dim"}[d.severity]
        suffix = f" [{times[text]} times: once per use]" if times[text] > 1 else ""
        lines.append((text + suffix, style))
    errors = sum(d.severity == "error" for d in diagnostics)
    if errors:
        lines.append((f"{errors} error{'s' if errors != 1 else ''}", "red"))
    say(lines)


def usage(message: str) -> int:
    """Say a usage error; its exit status."""
    say([(f"toolbind: error: {message}", "red")])
    return 2


def allowed_refs_error(allowed: list[str] | None) -> str | None:
    """What is wrong with the ``--allow-ref`` values, if anything."""
    try:
        RefPolicy.allowing(allowed or [])
    except ValueError as exc:
        return f"--allow-ref {exc}"
    return None


class LateProgress:
    """A progress line that appears only once a run has taken more than a second (on a
    terminal: rich is imported only then)."""

    def __init__(self, doing: str = "compiling") -> None:
        self.doing = doing
        self.start = time.monotonic()
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, item: str) -> None:
        if (
            self.progress is None
            and time.monotonic() - self.start > 1.0
            and not _plain()
            and stderr_console().is_terminal
        ):
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=stderr_console(),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("")
        if self.progress is not None:
            self.progress.update(self.task, description=f"{self.doing} {item}".strip())

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


# -- the command -----------------------------------------------------------------------------


def _package_names(given: list[str], inputs: list[Path]) -> dict[str, str] | str:
    """``--package`` values as spec → name (a bare NAME needs exactly one spec file), or what
    is wrong with them."""
    names: dict[str, str] = {}
    for item in given:
        spec, sep, name = item.rpartition("=")
        if not sep:
            if len(inputs) != 1 or inputs[0].is_dir():
                return (
                    f"--package {item}: with several specs (or a directory) say which spec: "
                    "--package SPEC=NAME"
                )
            spec, name = str(inputs[0]), item
        names[spec] = name
    return names


def run(
    specs: list[Path] | None = None,
    out: Path = Path("generated"),
    check: bool = False,
    verbose: bool = False,
    tag: list[str] | None = None,
    path: list[str] | None = None,
    operation: list[str] | None = None,
    allow_ref: list[str] | None = None,
    strict: bool = False,
    package: list[str] | None = None,
    full: bool = False,
    mcp_config: list[Path] | None = None,
    no_format_checks: bool = False,
) -> int:
    """``toolbind generate``; its exit status (``cli.generate`` documents each parameter)."""
    inputs = [*(specs or ([] if mcp_config else [Path("specs")])), *(mcp_config or [])]
    names = _package_names(package or [], inputs)
    if isinstance(names, str):
        return usage(names)
    wrong = allowed_refs_error(allow_ref)
    if wrong is not None:
        return usage(wrong)
    if not check:
        try:  # refuse an output path before spending a compilation on it (checked again later)
            check_output_dir(out, inputs)
        except OutputError as exc:
            return usage(str(exc))
    progress = LateProgress()
    select = None
    if tag or path or operation:  # (imported only then: a run reusing every package reads no spec)
        from toolbind.compiler.frontends.openapi import OperationFilter

        select = OperationFilter(
            tags=tuple(tag or ()), paths=tuple(path or ()), operations=tuple(operation or ())
        )
    refs = RefPolicy.allowing(allow_ref or [])
    before = {} if check else manifest_sources(out / MANIFEST) or {}
    options: dict[str, Any] = {
        "select": select or None,
        "refs": refs,
        "strict": strict,
        "names": names,
        "format_checks": not no_format_checks,
    }
    try:
        if check:
            tree = build(inputs, progress, **options)
        else:
            tree = write_into(inputs, out, progress, reuse=not full, **options)
    except SpecError as exc:
        progress.stop()
        render(exc.diagnostics, notes=verbose)
        return 1
    except (OutputError, SelectionError) as exc:
        progress.stop()
        return usage(str(exc))
    except OSError as exc:
        progress.stop()
        return usage(f"{out}: cannot write the output ({exc.strerror or exc})")
    progress.stop()
    render(tree.diagnostics, notes=verbose)
    return _compared(tree, out) if check else _written(tree, out, before)


def _compared(tree: GeneratedTree, out: Path) -> int:
    """``--check``'s report and exit status: whether ``out`` holds ``tree``."""
    if not out.is_dir():  # --check only reads: any directory can be compared
        try:
            check_output_dir(out)
        except OutputError as exc:
            return usage(str(exc))
    diffs = diff_tree(tree, out)
    if diffs:
        sys.stdout.write("".join(diffs))
        say([(f"{out}: {len(diffs)} file(s) are stale — run `toolbind generate`", "red")])
        return 1
    say([(f"{out}: up to date ({len(tree.packages)} package(s))", None)])
    return 0


def _written(tree: GeneratedTree, out: Path, before: dict[str, str]) -> int:
    """What was written to ``out`` (``before``: the packages it held, name → spec)."""
    lines: list[tuple[str, str | None]] = [
        (f"{source} → {out}/{name}/", None) for name, source in sorted(tree.packages.items())
    ]
    for name, source in sorted(before.items()):
        if name not in tree.packages:
            # the output holds exactly this run's packages: one a previous run made from
            # another spec is gone, which a user writing several specs' packages into one
            # directory, one run each, did not expect — said, never in silence
            lines.append(
                (
                    f"{out}/{name}/: removed — its spec, {source}, is not among this run's "
                    "(hint: pass every spec the directory should hold, or choose another -o)",
                    None,
                )
            )
    say(lines)
    return 0
