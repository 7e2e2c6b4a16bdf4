"""CLI layer: ``toolbind test`` — compile specs, check every tool's contract, report.

Imports ``toolbind.testing``'s runner, checks and Activity loader, and rich. ``cli/_app.py`` parses the command line and calls ``run``.
Results (a table per spec file, then a block per failure) go to ``out``; progress and usage
errors to ``err``. Exit codes: 0 every contract holds, 1 a contract is broken (or a spec has
errors, or a part of a contract could not be checked — no instance could be generated — unless
``--allow-unchecked``), 2 usage errors (unknown ``--tool``, an ``--activities`` module that
can't be imported). A part not checked is never a pass: its cells say ``not checked``, the tool's
result ``UNCHECKED``, a ``NOT CHECKED`` line says why, and the summary counts such tools.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from toolbind.errors import UsageError
from toolbind.testing._activities import activities_in, load_activities
from toolbind.testing._checks import NO_OUTPUT_SCHEMA, PartResult, RunSettings
from toolbind.testing._contract import ContractError
from toolbind.testing._runner import ToolReport, check_tool, compile_specs


class CommandLineError(UsageError):
    """A mistake on the command line: exit code 2, the message without a traceback."""


def run(
    specs: Sequence[Path],
    *,
    activities: str | None,
    examples: int,
    tools: Sequence[str],
    seed: int,
    out: Console,
    err: Console,
    allow_refs: Sequence[str] = (),
    allow_unchecked: bool = False,
    jobs: int | None = None,
    budget: float | None = None,
) -> int:
    """Run the contract tests; the exit code. Raises ``SpecError`` and ``CommandLineError``.

    ``jobs``: tools checked at once, each in a process of its own (None: one per CPU).
    ``budget``: seconds each part of a contract may take (None: no limit)."""
    compiled = compile_specs(specs, allow_refs)
    try:
        selected = compiled.tools
        if tools:
            known = {t.name for _, t in selected}
            unknown = [t for t in tools if t not in known]
            if unknown:
                names = ", ".join(sorted(known))
                raise CommandLineError(
                    f"--tool {', '.join(unknown)}: no such tool in {', '.join(map(str, specs))} "
                    f"(tools: {names})"
                )
            selected = [(s, t) for s, t in selected if t.name in tools]
        found: dict[str, Callable[..., Any]] = {}
        unknown_activities: list[str] = []
        if activities is not None:
            try:
                module = load_activities(activities)
                found, unknown_activities = activities_in(module, [t for _, t in compiled.tools])
            except ContractError as exc:
                raise CommandLineError(f"--activities {exc}") from None
            if not found:
                raise CommandLineError(
                    f"--activities {activities}: no Activity for any tool — define ACTIVITIES "
                    "(tool name → function, as `toolbind scaffold` writes) or functions named "
                    "like the tools"
                )
        how = RunSettings(max_examples=examples, seed=seed, database=False, budget=budget)
        reports = _check_all(selected, found, how, err, jobs)
    finally:
        compiled.close()
    return _report(
        reports, specs, examples, seed, activities, unknown_activities, out, allow_unchecked
    )


def _check_all(
    selected: list[tuple[str, Any]],
    found: dict[str, Callable[..., Any]],
    how: RunSettings,
    err: Console,
    jobs: int | None = None,
) -> list[ToolReport]:
    """Every selected tool's report, in order: checked here one after another, or — ``jobs``
    above 1 (None: one per CPU), more than one tool, on Linux — in forked
    processes that inherit the imported packages and Activities, each tool's run the same as
    here (its own seeded hypothesis run). A worker that dies (an Activity exiting the process)
    leaves the tools not reported yet to be checked here, as without ``--jobs``."""
    reports: list[ToolReport | None] = [None] * len(selected)
    workers = min(jobs or _cpus(), len(selected))
    start = time.monotonic()
    with _progress(err, len(selected)) as advance:
        # (fork on Linux only: macOS's system libraries are not safe to use after a fork)
        if workers > 1 and sys.platform.startswith("linux"):
            _checked_in_workers(selected, found, how, workers, reports, advance)
        for i, (source, tool) in enumerate(selected):
            if reports[i] is None:
                advance(f"checking {tool.name}", time.monotonic() - start)
                reports[i] = check_tool(source, tool, how, found.get(tool.name))
    return [r for r in reports if r is not None]


def _cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says; a container's
    machine may have many more than it is given)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


# what the forked workers check (set before they are forked: they inherit it)
_work: list[tuple[list[tuple[str, Any]], dict[str, Callable[..., Any]], RunSettings]] = []


def _check_in_worker(i: int) -> tuple[PartResult, PartResult, PartResult | None, str | None]:
    selected, found, how = _work[0]
    source, tool = selected[i]
    r = check_tool(source, tool, how, found.get(tool.name))
    return r.call, r.output, r.activity, r.activity_name


def _checked_in_workers(
    selected: list[tuple[str, Any]],
    found: dict[str, Callable[..., Any]],
    how: RunSettings,
    workers: int,
    reports: list[ToolReport | None],
    advance: Callable[[str, float], None],
) -> None:
    _work[:] = [(selected, found, how)]
    start = time.monotonic()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            pending = {pool.submit(_check_in_worker, i): i for i in range(len(selected))}
            for done in as_completed(pending):
                i = pending[done]
                source, tool = selected[i]
                call, output, activity, name = done.result()
                reports[i] = ToolReport(source, tool, call, output, activity, name)
                advance(f"checked {tool.name}", time.monotonic() - start)
    except BrokenProcessPool:
        pass  # (the tools not reported are checked in this process)
    finally:
        _work.clear()


@contextlib.contextmanager
def _progress(err: Console, total: int) -> Generator[Callable[[str, float], None]]:
    """``advance(what, elapsed)``: one more tool is being checked, or was (``what`` says
    which); a progress line on a terminal once the run has taken more than a second."""
    progress: Progress | None = None
    task: Any = None
    count = 0

    def advance(name: str, elapsed: float) -> None:
        nonlocal progress, task, count
        if progress is None and err.is_terminal and elapsed > 1.0:
            progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=err,
                transient=True,
            )
            progress.start()
            task = progress.add_task("", total=total)
        if progress is not None:
            progress.update(task, completed=count, description=name)
        count += 1

    try:
        yield advance
    finally:
        if progress is not None:
            progress.stop()


def _cell(part: PartResult | None, invalid: bool = False) -> str:
    if part is None:
        return "[dim]–[/dim]"
    if part.failure is not None:
        failed_invalid = part.failure.check == "rejects invalid"
        if failed_invalid == invalid or part.part == "Activity":
            return "[bold red]✗ FAIL[/bold red]"
    if part.skipped == NO_OUTPUT_SCHEMA:
        return "[dim]any JSON[/dim]"
    count = part.invalid if invalid else part.examples
    if part.unchecked and (invalid or not count):
        # valid instances checked before no invalid mutation was found still count
        return "[bold yellow]not checked[/bold yellow]"
    if invalid and count == 0:
        return "[dim]none[/dim]"
    return f"[green]✓[/green] {count}"


def _result(report: ToolReport) -> str:
    if not report.ok:
        return "[bold red]FAIL[/bold red]"
    if any(p.unchecked for p in report.parts):
        return "[bold yellow]UNCHECKED[/bold yellow]"
    return "[green]pass[/green]"


def _report(
    reports: list[ToolReport],
    specs: Sequence[Path],
    examples: int,
    seed: int,
    activities: str | None,
    unknown_activities: list[str],
    out: Console,
    allow_unchecked: bool = False,
) -> int:
    """Print the results (a table per spec file, then the failures and what was not checked)
    and the summary; the exit code."""
    sources = list(dict.fromkeys(r.source for r in reports))
    for source in sources:
        out.print(_table(source, [r for r in reports if r.source == source], activities))
    _print_problems(reports, activities, unknown_activities, out)
    failed_tools = sum(not r.ok for r in reports)
    unchecked_tools = sum(r.ok and any(p.unchecked for p in r.parts) for r in reports)
    passed = len(reports) - failed_tools - unchecked_tools
    checked = sum(p.examples + p.invalid for r in reports for p in r.parts)
    summary = (
        f"{len(reports)} tool(s) from {len(sources)} spec(s): {passed} passed, "
        f"{failed_tools} failed, {unchecked_tools} not fully checked; {checked} instances "
        f"checked ({examples} examples per property, seed {seed})"
    )
    out.print()
    if failed_tools or unknown_activities:
        out.print(
            f"{summary} — {failed_tools} tool(s) FAILED",
            style="bold red",
            markup=False,
            soft_wrap=True,
        )
        return 1
    if unchecked_tools:
        return _unchecked_verdict(summary, unchecked_tools, allow_unchecked, out)
    out.print(f"{summary} — every contract holds", style="green", markup=False, soft_wrap=True)
    return 0


def _table(source: str, reports: list[ToolReport], activities: str | None) -> Table:
    """One spec file's tools, a row each."""
    # names and paths as Text: a ``[...]`` in them is no markup
    table = Table(title=Text(source), title_justify="left", show_lines=False)
    table.add_column("tool", overflow="fold")
    table.add_column("Call valid", justify="right")
    table.add_column("Call invalid", justify="right")
    table.add_column("Output valid", justify="right")
    table.add_column("Output invalid", justify="right")
    if activities is not None:
        table.add_column("Activity", justify="right")
    table.add_column("result")
    for r in reports:
        row: list[str | Text] = [
            Text(r.tool.name),
            _cell(r.call),
            _cell(r.call, invalid=True),
            _cell(r.output),
            _cell(r.output, invalid=True),
        ]
        if activities is not None:
            row.append(_cell(r.activity) if r.activity else "[dim]no Activity[/dim]")
        row.append(_result(r))
        table.add_row(*row)
    return table


def _print_problems(
    reports: list[ToolReport], activities: str | None, unknown_activities: list[str], out: Console
) -> None:
    """A block per failure, a line per part not checked, a line per Activity of no tool."""
    failures = [(r, p) for r in reports for p in r.parts if p.failure is not None]
    for r, part in failures:
        assert part.failure is not None
        out.print()
        flaky = " (flaky: it did not fail every time)" if part.flaky else ""
        out.print(
            f"FAIL {r.source} · {part.failure.render()}{flaky}", markup=False, highlight=False
        )
    for r in reports:
        for part in (p for p in r.parts if p.unchecked):
            out.print(
                f"NOT CHECKED {r.source} · {r.tool.name} {part.part}: {part.skipped}",
                style="yellow",
                markup=False,
                highlight=False,
                soft_wrap=True,  # one line each, whole, for a CI log's grep
            )
    for name in unknown_activities:
        out.print(
            f"FAIL ACTIVITIES[{name!r}] in {activities}: no tool of that name",
            markup=False,
            style="red",
        )


def _unchecked_verdict(summary: str, unchecked_tools: int, allow: bool, out: Console) -> int:
    """The verdict when every contract checked holds but some were not fully checked."""
    verdict = (
        f"{summary} — every contract checked holds, but {unchecked_tools} tool(s) not fully checked"
    )
    if allow:
        out.print(
            f"{verdict}; accepted with --allow-unchecked",
            style="yellow",
            markup=False,
            soft_wrap=True,
        )
        return 0
    out.print(
        f"{verdict}; exit 1 (--allow-unchecked accepts this)",
        style="bold yellow",
        markup=False,
        soft_wrap=True,
    )
    return 1
