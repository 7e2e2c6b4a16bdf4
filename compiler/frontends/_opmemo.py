"""Compiler layer (frontends): the hook through which an OpenAPI operation's lowering is replayed.

Imports ``ir``, ``diagnostics`` and ``naming``; ``openapi`` uses it. Nothing here keeps anything
between runs: a layer around the read stage (``memo``, which imports this module, never the
reverse) hands the reader the previous run's records (``keeping_operations``, an ``Operations``)
and keeps the ones it makes (``memo._operations``).

Lowering an operation does more than make its tool: it claims the tool's name, reports, counts,
notes what it reported once, and lowers the definitions its schemas reach first. A record holds
all of it — the tool and the HTTP operation, and those changes to the reader's state (a
``Delta``) — and the places of the document the lowering read: the operation, its path item's
parameters and servers, and every ``$ref`` it followed (of its own schemas and of the
definitions it lowered).

In a run after an edit that a kept parse located (``memo._parses.ParseCache.changes``: the entries
parsed again), the operations are read in the order a full run reads them. One that read none
of the places changed, while everything before it went as last time, has its record applied
instead of being lowered. Any other is lowered, and its changes compared with its record's:
the same (an edited description), and the operations after it may still be taken from their
records; different (a name, a definition, a count), and every operation after it is lowered.
An edit of what every operation reads (the version, Swagger 2.0's default media types), one
that touches an ``$id`` or anchor, or records made from another text, version or options:
everything is lowered. An operation that reads another document is lowered every time. The package
and every report are the full run's, in the same order; a test compares them over random edits.

Records are pickles of IR values (frozen dataclasses), read back by an unpickler that admits
only the IR's, the diagnostics' and the HTTP contract's classes; the file holding them is
checked by digest like every kept file and keyed on what made it (``memo``).
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import hashlib
import io
import pickle
import sys
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ..diagnostics import Diagnostic, Diagnostics
from ..ir import Definition, SourceLocation, ToolSpec
from ..naming import Rename, ToolNames

if TYPE_CHECKING:
    from ._jsonschema import SchemaLowerer

_T = TypeVar("_T")
_ALLOWED_MODULES = (
    "toolbind.compiler.ir",
    "toolbind.compiler.diagnostics",
    "toolbind.compiler.naming",
    "toolbind.contract",
)


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


@dataclass(slots=True)
class Delta:
    """What lowering one operation changed of the reader's state, in order."""

    diagnostics: list[Diagnostic]
    taken: list[str]
    renames: list[Rename]
    counts: dict[tuple[str, str], int]
    schemes: list[tuple[str, SourceLocation]]
    definitions: list[Definition]
    reserved: list[str]
    cycles: list[str]
    unread: list[str]
    dropped: list[tuple[str, str, SourceLocation]]
    nullable: list[tuple[str, SourceLocation]]

    def same_state(self, other: Delta) -> bool:
        """Whether ``other`` leaves the state as this does (the reports aside)."""
        return (
            set(self.taken) == set(other.taken)
            and self.renames == other.renames
            and self.counts == other.counts
            and self.schemes == other.schemes
            and self.definitions == other.definitions
            and set(self.reserved) == set(other.reserved)
            and set(self.cycles) == set(other.cycles)
            and set(self.unread) == set(other.unread)
            and self.dropped == other.dropped
            and self.nullable == other.nullable
        )


_SHORT = {module.rsplit(".", 1)[1]: module for module in _ALLOWED_MODULES}
_MAKERS: dict[str, Callable[..., Any]] = {}


def _fields(kind: type[Any]) -> tuple[str, ...]:
    """The names of a dataclass's fields, in order (none for any other class)."""
    return tuple(cast("dict[str, Any]", getattr(kind, "__dataclass_fields__", {})))


def _maker_name(kind: type[Any]) -> str:
    """The name ``kind``'s maker is pickled by: its module, class and a digest of its fields
    (a class whose fields changed since makes a record unreadable, never a wrong value)."""
    layout = hashlib.sha256(repr(_fields(kind)).encode()).hexdigest()[:12]
    return f"_make__{kind.__module__.rsplit('.', 1)[1]}__{kind.__name__}__{layout}"


def _maker(name: str) -> Callable[..., Any] | None:
    """The function that makes an IR dataclass from its fields' values in order (made once per
    class: a frozen dataclass's own ``__setstate__`` looks its fields up for every object, and
    a loop over them cost most of reading the records back)."""
    found = _MAKERS.get(name)
    if found is not None:
        return found
    parts = name.split("__")
    if len(parts) != 4 or parts[1] not in _SHORT:
        return None
    kind = getattr(sys.modules.get(_SHORT[parts[1]]), parts[2], None)
    if not isinstance(kind, type) or not hasattr(kind, "__dataclass_fields__"):
        return None
    if _maker_name(kind) != name:
        return None
    fields = _fields(kind)
    args = ", ".join(f"v{i}" for i in range(len(fields)))
    body = "".join(f"    s(o, {f!r}, v{i})\n" for i, f in enumerate(fields))
    scope: dict[str, Any] = {"n": object.__new__, "s": object.__setattr__, "k": kind}
    exec(f"def make({args}):\n    o = n(k)\n{body}    return o\n", scope)
    made = cast("Callable[..., Any]", scope["make"])
    made.__module__, made.__name__, made.__qualname__ = __name__, name, name
    _MAKERS[name] = made
    globals()[name] = made  # (where pickle looks for it by name when writing)
    return made


class _Pickler(pickle.Pickler):
    """Writes each IR dataclass as a call of its maker (``_maker``) with its fields' values,
    and every string as one object per text: a pickle writes an object met twice once, so
    which equal strings are one object (a YAML parse and a JSON one differ) would show in its
    bytes, and the file kept must be the one a full run writes."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.strings: dict[str, str] = {}

    def reducer_override(self, obj: Any) -> Any:
        kind = cast("type[Any]", type(obj))
        if kind.__module__ in _ALLOWED_MODULES and hasattr(kind, "__dataclass_fields__"):
            made, get = _writer(kind)
            strings, canonical = self.strings, self.canonical
            # (inline: this runs for every object of the IR, ~70,000 for a large spec)
            values = [
                strings.setdefault(v, v)
                if type(v) is str
                else canonical(v)
                if type(v) in _CONTAINERS
                else v
                for v in get(obj)
            ]
            return made, tuple(values)
        return NotImplemented

    def canonical(self, value: Any) -> Any:
        """``value`` with its strings (not those of the dataclasses in it: each is written
        through ``reducer_override``) the table's."""
        kind = cast("type[Any]", type(value))
        if kind is str:
            return self.strings.setdefault(value, value)
        if kind is tuple:
            items = cast("tuple[Any, ...]", value)
            if not any(type(v) is str or type(v) in _CONTAINERS for v in items):
                return items  # (the IR's tuples of nodes: written as they are)
            return tuple([self.canonical(v) for v in items])
        if kind is list:
            return [self.canonical(v) for v in cast("list[Any]", value)]
        if kind is dict:
            return {
                self.canonical(k): self.canonical(v)
                for k, v in cast("dict[Any, Any]", value).items()
            }
        return value


_CONTAINERS = frozenset({tuple, list, dict})
_WRITERS: dict[type[Any], tuple[Callable[..., Any], Callable[[Any], tuple[Any, ...]]]] = {}


def _writer(kind: type[Any]) -> tuple[Callable[..., Any], Callable[[Any], tuple[Any, ...]]]:
    """``kind``'s maker, and what reads its fields' values in order."""
    found = _WRITERS.get(kind)
    if found is None:
        made = _maker(_maker_name(kind))
        assert made is not None
        names = _fields(kind)

        def each(obj: Any) -> tuple[Any, ...]:
            return tuple(getattr(obj, n) for n in names)

        # (attrgetter of one name gives the value, not a tuple of it)
        get = (
            cast("Callable[[Any], tuple[Any, ...]]", attrgetter(*names)) if len(names) > 1 else each
        )
        found = _WRITERS[kind] = (made, get)
    return found


class _Unpickler(pickle.Unpickler):
    """Reads back IR values only: no global but the IR dataclasses' makers (a damaged file
    can't run code)."""

    def find_class(self, module: str, name: str) -> Any:
        made = _maker(name) if module == __name__ else None
        if made is None:
            raise pickle.UnpicklingError(f"{module}.{name} makes no IR class")
        return made


@dataclass(slots=True)
class Record:
    """One operation's lowering: where it is, what it read (None: it must be lowered every
    time), and its result and ``Delta`` (pickled, base64)."""

    pointer: str
    reads: list[str] | None
    payload: str

    def load(self) -> tuple[Any, Delta] | None:
        try:
            data = base64.b64decode(self.payload.encode("ascii"), validate=True)
            value = _Unpickler(io.BytesIO(data)).load()
        except Exception:  # (a damaged record: lowered again)
            return None
        if not isinstance(value, tuple) or len(cast("tuple[Any, ...]", value)) != 2:
            return None
        result, fields = cast("tuple[Any, Any]", value)
        if not isinstance(fields, tuple) or len(cast("tuple[Any, ...]", fields)) != 11:
            return None
        # the operation's own: a record in another's place (a damaged file) is lowered again
        tool = cast("tuple[Any, ...]", result)[0] if isinstance(result, tuple) else None
        if not isinstance(tool, ToolSpec) or tool.loc.pointer != self.pointer:
            return None
        return cast("tuple[Any, ...]", result), Delta(*cast("tuple[Any, ...]", fields))

    @staticmethod
    def make(pointer: str, reads: list[str] | None, result: Any, delta: Delta) -> Record:
        fields = (
            delta.diagnostics,
            delta.taken,
            delta.renames,
            delta.counts,
            delta.schemes,
            delta.definitions,
            delta.reserved,
            delta.cycles,
            delta.unread,
            delta.dropped,
            delta.nullable,
        )
        buffer = io.BytesIO()
        pickler = _Pickler(buffer)
        pickler.dump(pickler.canonical((result, fields)))
        data = buffer.getvalue()
        return Record(pointer, reads, base64.b64encode(data).decode("ascii"))


class Operations(Protocol):
    """What a layer around the read stage offers the OpenAPI reader: the previous run's
    records and a place for this run's (``memo._operations.OperationMemo``)."""

    @property
    def changes(self) -> Mapping[str, object]:
        """The documents whose edit a kept parse located, by shown path."""
        ...

    def records(self, shown: str) -> tuple[list[Record], list[str]] | None:
        """The previous records for ``shown`` and the places changed since (JSON pointers)."""
        ...

    def changed_names(self, shown: str, value: Any) -> bool:
        """Whether an edit of ``shown`` touched a key that names a resource or an anchor."""
        ...

    def keep(self, shown: str, records: list[Record]) -> None:
        """This run's records for ``shown``."""
        ...


_MEMO: contextvars.ContextVar[Operations | None] = contextvars.ContextVar(
    "toolbind_operations", default=None
)


@contextlib.contextmanager
def keeping_operations(memo: Operations) -> Generator[Operations]:
    """Lower the OpenAPI documents read in the block through ``memo`` (``Replay``)."""
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def current() -> Operations | None:
    return _MEMO.get()


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
    reads: list[str] | None = None
    """What the operation being lowered read (None: something a record can't say)."""
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

    def read(self, pointer: str | None) -> None:
        """The operation being lowered read the document at ``pointer`` (None: something no
        pointer into this document names)."""
        if self.reads is None:
            return
        if pointer is None:
            self.reads = None
        else:
            self.reads.append(pointer)

    def _dirty(self, reads: list[str]) -> bool:
        for place in self.places or ():
            prefix = place + "/"
            for r in reads:
                if r == place or r.startswith(prefix) or place.startswith(r + "/"):
                    return True
        return False

    # -- one operation -------------------------------------------------------------------------

    def operation(self, pointer: str, own: list[str] | None, lower: Callable[[], _T]) -> _T:
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
        self.reads = list(own) if own is not None else None
        log: list[str | None] = []
        self.lowerer.ref_log = log
        try:
            result = lower()
        finally:
            self.lowerer.ref_log = None
        for key in log:
            file, _, at = (key or "").partition("#")
            self.read(at if key is not None and file == self.shown and "@" not in at else None)
        reads, self.reads = self.reads, None
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
