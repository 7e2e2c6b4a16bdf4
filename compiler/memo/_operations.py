"""Compiler layer (memo): each OpenAPI operation's lowering, kept for the next run.

Imports ``_load`` (``as_object``), ``ir``, ``_records`` and ``_parses`` (what an edit changed);
the memo layer (``_layer``) gives the read stage a ``_replay.ReadSteps`` over an ``OperationMemo``.

Data flow: the previous run's ``.toolbind-cache/<package>.operations.json`` (read back as a
JSON object) and the kept parse's ``Changes`` → ``records`` (the records, and the places the
edit changed, when both are certain: same layout, same key, same source text) → each operation
taken from its record or lowered (``_replay.Replay``) → ``keep`` → ``text()``, this
run's records for the next. The key is the layer's: toolbind's version and the options.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from .._load import as_object
from ..ir import escape_pointer_token
from ._parses import Changes
from ._records import Record

FORMAT = 1
"""The records' layout: a record of another is never read."""

# The top-level keys every operation reads without a pointer (the version, which says how
# schemas are read; Swagger 2.0's default media types; the meta-schema): an edit of one, and
# every operation is lowered. Any other place an edit touches is compared with what each
# operation read (the paths mapping itself, a component, a security scheme a $ref names...).
_READ_BY_ALL = frozenset({"openapi", "swagger", "consumes", "produces", "$schema"})
# Keys that make a schema a resource or an anchor: where ``$ref``s lead may change with them.
_NAMING_KEYS = frozenset({"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$schema"})


@dataclass
class OperationMemo:
    """The previous run's records for the documents compiled in a block, and the ones made."""

    previous: dict[str, Any] | None
    """What the previous run kept (``text()``), as read back; None: nothing."""
    changes: dict[str, Changes]
    """The kept parses' changes, by shown path (``ParseCache.changes``)."""
    key: str
    """A digest of what else the lowering depends on (version, options)."""
    made: dict[str, Any] | None = None

    def records(self, shown: str) -> tuple[list[Record], list[str]] | None:
        """The previous records for document ``shown`` and the places changed since (JSON
        pointers), when both are certain; else None."""
        change = self.changes.get(shown)
        prev = self.previous
        if change is None or change.entries is None or prev is None:
            return None
        if (
            prev.get("format") != FORMAT
            or prev.get("key") != self.key
            or prev.get("source") != shown
            or prev.get("text") != change.before
        ):
            return None
        rows = prev.get("records")
        if not isinstance(rows, list):
            return None
        records: list[Record] = []
        for row in cast("list[Any]", rows):
            if not isinstance(row, list) or len(cast("list[Any]", row)) != 3:
                return None
            pointer, reads, payload = cast("list[Any]", row)
            if not isinstance(pointer, str) or not isinstance(payload, str):
                return None
            if reads is not None and not (
                isinstance(reads, list)
                and all(isinstance(r, str) for r in cast("list[Any]", reads))
            ):
                return None
            records.append(Record(pointer, cast("list[str] | None", reads), payload))
        places: list[str] = []
        for path, _ in change.entries:
            if not path or path[0] in _READ_BY_ALL:
                return None
            places.append("".join("/" + escape_pointer_token(t) for t in path))
        return records, places

    def changed_names(self, shown: str, value: Any) -> bool:
        """Whether an entry changed in ``shown`` holds, before or after, a key that names a
        resource or an anchor (``value``: the document now)."""
        change = self.changes.get(shown)
        for path, old in change.entries or [] if change is not None else []:
            now: Any = value
            for token in path:
                now = (as_object(now) or {}).get(token)
            if _names(old) or _names(now):
                return True
        return False

    def keep(self, shown: str, records: list[Record]) -> None:
        change = self.changes.get(shown)
        if change is None:
            return
        self.made = {
            "format": FORMAT,
            "key": self.key,
            "source": shown,
            "text": change.after,
            "records": [[r.pointer, r.reads, r.payload] for r in records],
        }

    def text(self) -> str | None:
        """What to keep for the next run (None: nothing was recorded)."""
        if self.made is None:
            return None
        return (
            json.dumps(self.made, ensure_ascii=False, separators=(",", ":"), check_circular=False)
            + "\n"
        )


def _names(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            table = cast("dict[str, Any]", item)
            if not _NAMING_KEYS.isdisjoint(table):
                return True
            stack.extend(table.values())
        elif isinstance(item, list):
            stack.extend(cast("list[Any]", item))
    return False
