"""Testing layer: ``toolbind test`` — compile specs, check every tool's contract, report.

Imports ``_runner`` and rich. ``compiler/cli.py`` parses the command line and calls ``run``.
Results (a table per spec file, then a block per failure) go to ``out``; progress and usage
errors to ``err``. Exit codes: 0 every contract holds, 1 a contract is broken (or a spec has
errors), 2 usage errors (unknown ``--tool``, an ``--activities`` module that can't be imported).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from toolbind.runtime.errors import UsageError

from ._activities import activities_in, load_activities
from ._checks import NO_OUTPUT_SCHEMA, PartResult, RunSettings
from ._contract import ContractError
from ._runner import ToolReport, check_tool, compile_specs


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
) -> int:
    """Run the contract tests; the exit code. Raises ``SpecError`` and ``CommandLineError``."""
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
        how = RunSettings(max_examples=examples, seed=seed, database=False)
        reports = _check_all(selected, found, how, err)
    finally:
        compiled.close()
    return _report(reports, specs, examples, seed, activities, unknown_activities, out)


def _check_all(
    selected: list[tuple[str, Any]],
    found: dict[str, Callable[..., Any]],
    how: RunSettings,
    err: Console,
) -> list[ToolReport]:
    reports: list[ToolReport] = []
    progress: Progress | None = None
    task: Any = None
    start = time.monotonic()
    try:
        for i, (source, tool) in enumerate(selected):
            if progress is None and err.is_terminal and time.monotonic() - start > 1.0:
                progress = Progress(
                    SpinnerColumn(),
                    TextColumn("{task.description}"),
                    TimeElapsedColumn(),
                    console=err,
                    transient=True,
                )
                progress.start()
                task = progress.add_task("", total=len(selected))
            if progress is not None:
                progress.update(task, completed=i, description=f"checking {tool.name}")
            reports.append(check_tool(source, tool, how, found.get(tool.name)))
    finally:
        if progress is not None:
            progress.stop()
    return reports


def _cell(part: PartResult | None, invalid: bool = False) -> str:
    if part is None:
        return "[dim]–[/dim]"
    if part.failure is not None:
        failed_invalid = part.failure.check == "rejects invalid"
        if failed_invalid == invalid or part.part == "Activity":
            return "[bold red]✗ FAIL[/bold red]"
    if part.skipped == NO_OUTPUT_SCHEMA:
        return "[dim]any JSON[/dim]"
    if part.skipped:
        return "[yellow]skipped[/yellow]"
    count = part.invalid if invalid else part.examples
    if invalid and count == 0:
        return "[dim]none[/dim]"
    return f"[green]✓[/green] {count}"


def _report(
    reports: list[ToolReport],
    specs: Sequence[Path],
    examples: int,
    seed: int,
    activities: str | None,
    unknown_activities: list[str],
    out: Console,
) -> int:
    sources = list(dict.fromkeys(r.source for r in reports))
    with_activities = activities is not None
    for source in sources:
        # names and paths as Text: a ``[...]`` in them is no markup
        table = Table(title=Text(source), title_justify="left", show_lines=False)
        table.add_column("tool", overflow="fold")
        table.add_column("Call valid", justify="right")
        table.add_column("Call invalid", justify="right")
        table.add_column("Output valid", justify="right")
        table.add_column("Output invalid", justify="right")
        if with_activities:
            table.add_column("Activity", justify="right")
        table.add_column("result")
        for r in (r for r in reports if r.source == source):
            row: list[str | Text] = [
                Text(r.tool.name),
                _cell(r.call),
                _cell(r.call, invalid=True),
                _cell(r.output),
                _cell(r.output, invalid=True),
            ]
            if with_activities:
                row.append(_cell(r.activity) if r.activity else "[dim]no Activity[/dim]")
            row.append("[green]pass[/green]" if r.ok else "[bold red]FAIL[/bold red]")
            table.add_row(*row)
        out.print(table)
    failures = [(r, p) for r in reports for p in r.parts if p.failure is not None]
    for r, part in failures:
        assert part.failure is not None
        out.print()
        flaky = " (flaky: it did not fail every time)" if part.flaky else ""
        out.print(
            f"FAIL {r.source} · {part.failure.render()}{flaky}", markup=False, highlight=False
        )
    skipped = [
        (r, p) for r in reports for p in r.parts if p.skipped not in (None, NO_OUTPUT_SCHEMA)
    ]
    for r, part in skipped:
        out.print(
            f"skipped {r.tool.name} {part.part}: {part.skipped}", style="yellow", markup=False
        )
    for name in unknown_activities:
        out.print(
            f"FAIL ACTIVITIES[{name!r}] in {activities}: no tool of that name",
            markup=False,
            style="red",
        )
    failed_tools = sum(not r.ok for r in reports)
    checked = sum(p.examples + p.invalid for r in reports for p in r.parts)
    summary = (
        f"{len(reports)} tool(s) from {len(sources)} spec(s): {checked} instances checked "
        f"({examples} examples per property, seed {seed})"
    )
    out.print()
    if failed_tools or unknown_activities:
        out.print(f"{summary} — {failed_tools} tool(s) FAILED", style="bold red", markup=False)
        return 1
    out.print(f"{summary} — every contract holds", style="green", markup=False)
    return 0
