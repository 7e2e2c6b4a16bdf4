"""Compiler layer (memo): the parses of large YAML specs, kept from one run to the next.

Imports ``_load`` (documents, the JSON checks), ``_reparse`` and PyYAML's loaders; the memo
layer (``_layer``) gives the read stage a ``_replay.ReadSteps`` over a ``ParseCache``, which the
stage never sees.

Data flow: the previous run's ``.toolbind-cache/<package>.json`` (``ParseCache.read``) → for
each large YAML file ``load_document`` reads, ``ParseCache.load`` splices the edited entry into
the kept value (``_reparse.splice``) or parses the whole text → the ``Document`` the read stage
goes on with, ``changes`` (which entries were parsed again: the operations' memo keys on it)
and ``text()``, this run's parses for the next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from toolbind.yaml12 import TextDatesLoader, YamlLoader, noting_yaml11

from .._load import Diagnostic, Document, as_object, digest, parse_yaml, plainly_json, yaml_too_deep

PARSE_CACHE_MIN_BYTES = 256 * 1024
"""YAML files at least this large keep their parse for the next run (``ParseCache``)."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What of a document kept in a ``ParseCache`` changed since the kept parse."""

    before: str | None
    """The digest of the kept parse's text (None: there was none)."""
    after: str
    """The digest of the text read now."""
    entries: list[tuple[list[str], Any]] | None
    """Each mapping entry parsed again (its path of keys, its previous value): the rest of the
    document is as it was; None when unknown (the whole text was parsed)."""


_PARSES_FORMAT = 2
"""The layout of ``ParseCache.text()``: a file of another is not read."""


class ParseCache:
    """The parses of large YAML files, kept from one run to the next.

    Parsing a large YAML spec costs about a second even with libyaml; an edited one is parsed
    again from its previous parse and the one entry the edit is in (``_reparse.splice``), with
    the same value a full parse gives. ``previous``: shown path → ``{"dates", "text", "value"}``
    from the last run; ``text()`` is what this run read, for the next.
    """

    def __init__(self, previous: dict[str, Any] | None = None) -> None:
        self.previous = dict(previous or {})
        # shown path → (its entry, its value as JSON, its text)
        self.kept: dict[str, tuple[dict[str, Any], str, str]] = {}
        self.changes: dict[str, Changes] = {}
        """Per document kept (shown path): what changed since the kept parse."""

    def parse(
        self, name: str, text: str, shown: str, *, dates_as_text: bool, size: int
    ) -> Document | Diagnostic | None:
        """A YAML file's parse (``_replay.ReadSteps.parse``): one large enough to be worth
        keeping is parsed here; None: parse it as usual."""
        if size < PARSE_CACHE_MIN_BYTES:
            return None
        return self.load(name, text, shown, dates_as_text)

    def load(self, name: str, text: str, shown: str, dates_as_text: bool) -> Document | Diagnostic:
        from ._reparse import Lines, splice

        loader = TextDatesLoader if dates_as_text else YamlLoader
        prev = as_object(self.previous.pop(name, None))
        value: Any = None
        was: str | None = None
        lines: Lines | None = None
        changed: list[tuple[list[str], Any]] = []
        if (
            prev is not None
            and prev.get("dates") is dates_as_text
            and isinstance(prev.get("text"), str)
            and (isinstance(prev.get("value"), (dict, list)))
        ):
            was = digest(prev["text"].encode())
            lines = Lines.loads(prev.get("lines"), prev["text"])
            # an entry with an integer key is no plain JSON: ``_accept`` refuses it, and the
            # full parse below reads it with its warning; so is one YAML 1.1 reads otherwise
            with noting_yaml11() as read:
                value = splice(prev["text"], prev["value"], text, loader, _accept, changed, lines)
            if read:
                value = None
        if value is None or lines is None:
            lines = Lines.of(text)  # (spliced: ``splice`` made the old text's the new one's)
        if value is not None:
            result: Document | Diagnostic = Document(shown, value)
            entries: list[tuple[list[str], Any]] | None = changed
        else:
            entries = None
            result = parse_yaml(text, shown, dates_as_text=dates_as_text)
            if isinstance(result, Diagnostic) or result.warnings or not plainly_json(result.value):
                # a value with aliases is not kept: JSON would unshare them; nor one read with
                # an assumption, whose warning only a full parse gives again
                return result
        self.changes[shown] = Changes(
            before=was, after=digest(text.encode()), entries=entries if was else None
        )
        dumped = None
        if value is not None and isinstance(prev, dict) and isinstance(prev.get("json"), str):
            # (nothing changed: the same text, the same value)
            dumped = _spliced_json(prev["json"], result.value, changed) if changed else prev["json"]
        shape = None if lines is None else lines.dumps()
        self.kept[name] = (
            {"dates": dates_as_text, "lines": shape, "text": len(text)},
            # (a parse of YAML or JSON holds no cycle: the encoder need not look for one)
            dumped or json.dumps(result.value, check_circular=False),
            text,
        )
        return result

    def text(self) -> str | None:
        """The parses to keep (None: none): a first line, a JSON object with the layout's
        ``format`` and ``parses``, shown path → entry (its ``dates`` flag, its ``Lines`` and
        the length of its text), then a line of each
        entry's value as JSON, then each entry's text as it is, all in the same order. (As a
        JSON string, escaping a large spec's text and reading it back cost more than the rest
        of the file; on a line of its own, a value is written again by replacing the part an
        edit changed, ``_spliced_json``.)"""
        if not self.kept:
            return None
        names = sorted(self.kept)
        head = json.dumps({"format": _PARSES_FORMAT, "parses": {k: self.kept[k][0] for k in names}})
        values = "".join(self.kept[k][1] + "\n" for k in names)
        return head + "\n" + values + "".join(self.kept[k][2] for k in names)

    @staticmethod
    def read(kept: str | None) -> dict[str, Any] | None:
        """What ``text()`` wrote, as ``ParseCache`` takes it (shown path → ``{"dates", "lines",
        "text", "value", "json"}``, ``json`` the value's line); None when ``kept`` is not such a
        text."""
        if kept is None:
            return None
        head, newline, rest = kept.partition("\n")
        try:
            top = as_object(json.loads(head)) if newline else None
        except ValueError:
            return None
        if top is None or top.get("format") != _PARSES_FORMAT:
            return None
        table = as_object(top.get("parses"))
        if table is None:
            return None
        names = sorted(table)
        out: dict[str, Any] = {}
        for name in names:
            line, newline, rest = rest.partition("\n")
            entry = as_object(table[name])
            try:
                value = json.loads(line) if newline and entry is not None else None
            except ValueError:
                return None
            if entry is None or value is None:
                return None
            out[name] = {**entry, "value": value, "json": line}
        at = 0
        for name in names:
            size = out[name].get("text")
            if type(size) is not int or size < 0 or at + size > len(rest):
                return None
            out[name]["text"] = rest[at : at + size]
            at += size
        return out if at == len(rest) else None


def _spliced_json(old: str, value: Any, changed: list[tuple[list[str], Any]]) -> str | None:
    """``json.dumps(value)`` made from ``old`` (the dump of the value before one entry of it
    was replaced: ``changed`` holds its path and previous value) by replacing the text of the
    smallest object holding that entry that ``old`` holds exactly once (an object's text
    outside a string is always that object: a string cannot hold its unescaped quotes); None
    when that is not so."""
    if len(changed) != 1 or not changed[0][0]:
        return None
    path, before = changed[0]
    *up, key = path
    chain: list[dict[str, Any]] = []
    node: Any = value
    for token in up:
        if not isinstance(node, dict):
            return None
        chain.append(cast("dict[str, Any]", node))
        node = cast("dict[str, Any]", node).get(token)
    if not isinstance(node, dict) or key not in node:
        return None
    chain.append(cast("dict[str, Any]", node))
    holder = chain[-1]
    after = holder[key]
    for depth in range(len(chain) - 1, 0, -1):  # (the whole document: a plain dump)
        part = chain[depth]
        holder[key] = before
        try:
            was = json.dumps(part, check_circular=False)
        finally:
            holder[key] = after
        if old.count(was) == 1:
            at = old.index(was)
            return old[:at] + json.dumps(part, check_circular=False) + old[at + len(was) :]
    return None


def _accept(text: str, value: Any, depth: int) -> bool:
    """What ``splice`` asks of an entry parsed again: not too deep for the C loader (before it
    is parsed), plain JSON values not too deep in the document (after)."""
    if value is None:
        return not yaml_too_deep(text)
    return plainly_json(value, depth)
