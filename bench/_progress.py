"""Bench helper: a progress bar over a bench's long loop, on a terminal only. Imports rich.

``steps(items, "specs")`` yields the items; on a terminal (stderr) it draws a rich progress bar
(the item being measured, done/total, elapsed time) that disappears when the loop ends, so the
figures the bench prints stay the only output. Off a terminal (CI, a pipe, a file) it draws
nothing: the output is the same as without it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sized
from typing import TypeVar

T = TypeVar("T")


def steps(items: Iterable[T], what: str, *, name: object = None) -> Iterator[T]:
    """``items``, with a bar on stderr when it is a terminal (``name(item)`` labels a step)."""
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    total = len(items) if isinstance(items, Sized) else None
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(what, total=total)
        for item in items:
            label = name(item) if callable(name) else getattr(item, "name", item)
            bar.update(task, description=f"{what}: {label}")
            yield item
            bar.advance(task)
