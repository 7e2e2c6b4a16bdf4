"""Compiler layer (memo): an OpenAPI operation's lowering as a record kept between runs.

Imports ``ir``, ``diagnostics`` and ``naming`` (the values a record holds). ``_replay`` makes
and applies records; ``_operations`` keeps them in ``.toolbind-cache/<package>.operations.json``.

Lowering an operation does more than make its tool: it claims the tool's name, reports, counts,
notes what it reported once, and lowers the definitions its schemas reach first. A record holds
all of it — the tool and the HTTP operation, and those changes to the reader's state (a
``Delta``) — and the places of the document the lowering read.

Records are pickles of IR values (frozen dataclasses), read back by an unpickler that admits
only the IR's, the diagnostics' and the HTTP contract's classes; the file holding them is
checked by digest like every kept file and keyed on what made it (``_layer``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, cast

from ..diagnostics import Diagnostic
from ..ir import Definition, SourceLocation, ToolSpec
from ..naming import Rename

_ALLOWED_MODULES = (
    "toolbind.compiler.ir",
    "toolbind.compiler.diagnostics",
    "toolbind.compiler.naming",
    "toolbind.contract",
)


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
