"""Compiler layer (memo): the read stage's steps (``_steps.Steps``): an OpenAPI document's
operations lowered in order, or taken from the previous run's records.

Imports ``_steps``, ``diagnostics``, ``ir``, ``naming``, ``_records`` and, for its types,
``_parses``, ``_operations`` and
``frontends`` (the OpenAPI reader's ``Context`` and the ``SchemaLowerer``, whose state a record
changes: the layer may know a stage's insides, the stage never knows the layer). The layer
(``_layer.Memo.reading``) gives a ``ReadSteps`` to the read stage: the loader parses each YAML
file through ``Steps.parse`` (a large one parsed again from its kept parse), the OpenAPI reader lowers
each operation through ``Steps.part``, with its pointer and the places it reads, and reports the
``$ref``s it follows as it goes (``Context.read_log``, ``SchemaLowerer.ref_log``).

In a run after an edit that a kept parse located (``_parses.ParseCache.changes``: the entries
parsed again), the operations are read in the order a full run reads them. One that read none
of the places changed, while everything before it went as last time, has its record applied
instead of being lowered. Any other is lowered, and its changes compared with its record's:
the same (an edited description), and the operations after it may still be taken from their
records; different (a name, a definition, a count), and every operation after it is lowered.
An edit of what every operation reads (the version, Swagger 2.0's default media types), one
that touches an ``$id`` or anchor, or records made from another text, version or options:
everything is lowered. An operation that reads another document is lowered every time. The
package and every report are the full run's, in the same order; a test compares them over
random edits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, TypeVar, cast

from .._steps import Steps
from ..diagnostics import Diagnostics
from ..ir import SourceLocation
from ..naming import ToolNames
from ._records import Delta, Record

if TYPE_CHECKING:
    from ..frontends._jsonschema import SchemaLowerer
    from ..frontends.openapi._context import Context
    from ._operations import OperationMemo
    from ._parses import ParseCache

_T = TypeVar("_T")


class LoggedSet(set[str]):
    """A set that lists what was added to it, in order (the state an operation changes)."""

    __slots__ = ("log",)

    def __init__(self, items: Iterable[str] = ()) -> None:
        super().__init__(items)
        self.log: list[str] = []

    def add(self, element: str) -> None:
        if element not in self:
            self.log.append(element)
            super().add(element)

    def update(self, *others: Iterable[str]) -> None:
        for other in others:
            for element in other:
                self.add(element)


@dataclass
class _Snapshot:
    diags: int
    renames: int
    counts: dict[tuple[str, str], int]
    schemes: int
    definitions: int
    dropped: dict[str, int]
    nullable: int


@dataclass
class Replay:
    """One document's operations, lowered or taken from their records, in order."""

    reader: Context
    shown: str
    diags: Diagnostics
    names: ToolNames
    counts: Counter[tuple[str, str]]
    schemes: dict[str, SourceLocation]
    lowerer: SchemaLowerer
    previous: list[Record]
    places: list[str] | None
    """The places changed (JSON pointers); None: every operation is lowered."""
    made: list[Record] = field(default_factory=lambda: list[Record]())
    at: int = 0
    synced: bool = True
    """Whether the state is the one the previous run had before this operation."""
    taken: int = 0

    def __post_init__(self) -> None:
        self.names.taken = LoggedSet(self.names.taken)
        low = self.lowerer
        low._reserved = LoggedSet(low._reserved)  # pyright: ignore[reportPrivateUsage]
        low._cycles_checked = LoggedSet(low._cycles_checked)  # pyright: ignore[reportPrivateUsage]
        low._unread_reported = LoggedSet(low._unread_reported)  # pyright: ignore[reportPrivateUsage]
        if self.places is None:
            self.synced = False

    # -- what an operation reads ---------------------------------------------------------------

    def _dirty(self, reads: list[str]) -> bool:
        for place in self.places or ():
            prefix = place + "/"
            for r in reads:
                if r == place or r.startswith(prefix) or place.startswith(r + "/"):
                    return True
        return False

    # -- one operation -------------------------------------------------------------------------

    def operation(self, pointer: str, own: Sequence[str] | None, lower: Callable[[], _T]) -> _T:
        """The result of ``lower()`` (the operation at ``pointer``, reading ``own`` besides
        its ``$ref``s, or None when it reads another document), from its record when that
        is certain to be the same."""
        record: Record | None = None
        if self.synced and self.at < len(self.previous):
            record = self.previous[self.at]
            if record.pointer != pointer:
                record, self.synced = None, False
        self.at += 1
        loaded = None
        if record is not None and record.reads is not None and not self._dirty(record.reads):
            loaded = record.load()
            if loaded is not None:
                self._apply(loaded[1])
                self.made.append(record)
                self.taken += 1
                return cast("_T", loaded[0])
        before = self._snapshot()
        result, reads = self._lowered(own, lower)
        delta = self._delta(before)
        if self.synced:
            if record is None:
                self.synced = False
            else:
                if loaded is None:
                    loaded = record.load()
                self.synced = loaded is not None and delta.same_state(loaded[1])
        self.made.append(Record.make(pointer, reads, result, delta))
        return result

    def _lowered(
        self, own: Sequence[str] | None, lower: Callable[[], _T]
    ) -> tuple[_T, list[str] | None]:
        """``lower()``, and what it read: ``own``, then the places of this document the reader
        and the lowerer report (None: something no pointer into this document names)."""
        derefs: list[str | None] = []
        refs: list[str | None] = []
        self.reader.read_log, self.lowerer.ref_log = derefs, refs
        try:
            result = lower()
        finally:
            self.reader.read_log = self.lowerer.ref_log = None
        if own is None or None in derefs:
            return result, None
        reads = [*own, *cast("list[str]", derefs)]
        for key in refs:
            file, _, at = (key or "").partition("#")
            if key is None or file != self.shown or "@" in at:
                return result, None
            reads.append(at)
        return result, reads

    def _snapshot(self) -> _Snapshot:
        cast("LoggedSet", self.names.taken).log.clear()
        low = self.lowerer
        for logged in (low._reserved, low._cycles_checked, low._unread_reported):  # pyright: ignore[reportPrivateUsage]
            cast("LoggedSet", logged).log.clear()
        return _Snapshot(
            diags=len(self.diags.items),
            renames=len(self.names.renames),
            counts=dict(self.counts),
            schemes=len(self.schemes),
            definitions=len(low.definitions),
            dropped={k: len(v) for k, v in low.dropped_extensions.items()},
            nullable=len(low.x_nullable),
        )

    def _delta(self, s: _Snapshot) -> Delta:
        low = self.lowerer
        dropped: list[tuple[str, str, SourceLocation]] = []
        for k, table in low.dropped_extensions.items():
            dropped.extend(
                (k, at, loc) for at, loc in islice(table.items(), s.dropped.get(k, 0), None)
            )
        return Delta(
            diagnostics=self.diags.items[s.diags :],
            # (sorted: what a set literal adds comes in the order of its hashes, which vary)
            taken=sorted(cast("LoggedSet", self.names.taken).log),
            renames=self.names.renames[s.renames :],
            counts={
                k: n - s.counts.get(k, 0) for k, n in self.counts.items() if n != s.counts.get(k, 0)
            },
            schemes=list(islice(self.schemes.items(), s.schemes, None)),
            definitions=list(islice(low.definitions.values(), s.definitions, None)),
            reserved=sorted(cast("LoggedSet", low._reserved).log),  # pyright: ignore[reportPrivateUsage]
            cycles=sorted(cast("LoggedSet", low._cycles_checked).log),  # pyright: ignore[reportPrivateUsage]
            unread=sorted(cast("LoggedSet", low._unread_reported).log),  # pyright: ignore[reportPrivateUsage]
            dropped=dropped,
            nullable=list(islice(low.x_nullable.items(), s.nullable, None)),
        )

    def _apply(self, d: Delta) -> None:
        low = self.lowerer
        self.diags.items.extend(d.diagnostics)
        self.names.taken.update(d.taken)
        self.names.renames.extend(d.renames)
        for k, n in d.counts.items():
            self.counts[k] += n
        for k, loc in d.schemes:
            self.schemes.setdefault(k, loc)
        for definition in d.definitions:
            low.definitions[definition.key] = definition
        low._reserved.update(d.reserved)  # pyright: ignore[reportPrivateUsage]
        low._cycles_checked.update(d.cycles)  # pyright: ignore[reportPrivateUsage]
        low._unread_reported.update(d.unread)  # pyright: ignore[reportPrivateUsage]
        for k, at, loc in d.dropped:
            low.dropped_extensions.setdefault(k, {})[at] = loc
        for at, loc in d.nullable:
            low.x_nullable[at] = loc


class ReadSteps(Steps):
    """The read stage's steps: a large YAML file parsed again from its kept parse where it
    can be (``parses``), each OpenAPI document's operations lowered through a ``Replay`` where
    the previous run's records may serve (``operations``; ``every``: this run reads every
    operation, no filter), every other step made."""

    def __init__(self, parses: ParseCache, operations: OperationMemo, *, every: bool) -> None:
        self.parses = parses
        self.operations = operations
        self.every = every
        self.replays: list[tuple[object, Replay | None]] = []

    def parse(
        self, name: str, text: str, make: Callable[[], _T], *, shown: str, dates: bool, size: int
    ) -> _T:
        """From the kept parse (``_parses.ParseCache``) when the file is large enough to keep;
        else made."""
        found = self.parses.parse(name, text, shown, dates_as_text=dates, size=size)
        return make() if found is None else cast("_T", found)

    def part(
        self, reader: object, pointer: str, reads: Sequence[str] | None, make: Callable[[], _T]
    ) -> _T:
        """Taken from the record of the operation at ``pointer`` when that is certain to be
        the same (``Replay``); else made (and recorded)."""
        replay = self._replay(reader)
        return make() if replay is None else replay.operation(pointer, reads, make)

    def _replay(self, reader: object) -> Replay | None:
        for seen, replay in self.replays:
            if seen is reader:
                return replay
        from ..frontends.openapi._context import Context

        replay = None
        ops = self.operations
        if (
            self.every
            and isinstance(reader, Context)
            and reader.path is not None
            and reader.doc.path in ops.changes
        ):
            shown = reader.doc.path
            found = ops.records(shown)
            if found is not None and ops.changed_names(shown, reader.spec):
                found = None
            replay = Replay(
                reader=reader,
                shown=shown,
                diags=reader.diags,
                names=reader.names,
                counts=reader.counts,
                schemes=reader.named_schemes,
                lowerer=reader.lowerer,
                previous=found[0] if found is not None else [],
                places=found[1] if found is not None else None,
            )
        self.replays.append((reader, replay))
        return replay

    def finish(self) -> None:
        """Keep each document's records for the next run (the read stage is over)."""
        for _, replay in self.replays:
            if replay is not None:
                self.operations.keep(replay.shown, replay.made)
        self.replays.clear()
