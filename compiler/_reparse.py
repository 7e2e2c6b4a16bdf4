"""Compiler layer: parsing an edited YAML document again from its previous parse.

Imports PyYAML only; ``_load`` calls it.

A large YAML spec costs about a second to parse even with libyaml, most of it constructing
Python objects. When the previous text and its parsed value are at hand, an edit that stays
inside one entry of a block mapping (a description, an operation, a schema) needs only that
entry parsed again: ``splice`` finds the smallest such entry from the lines the two texts do
not share, parses the old and the new entry alone, and puts the new value in place of the old.

The result is the value a full parse gives, or None (the caller then parses the whole text):

* the entry is found by indentation only on a document that is one block mapping at column 0,
  with no directives or document markers, and no line breaks other than ``\\n``;
* the old entry, parsed alone, must give exactly the value the previous parse holds there
  (so its bounds are right), and the new one a mapping of the same single key;
* neither entry may hold an anchor or an alias (an anchor's value can be used elsewhere);
* the key must not be written twice among its siblings (PyYAML keeps the last one).

Every check that fails, and every YAML error in an entry, falls back to the full parse, which
then reports the error with its line and column in the whole file.
"""

from __future__ import annotations

import array
import base64
import json
import sys
from collections.abc import Callable
from typing import Any, cast

import yaml

_MARKS = ("\n%", "\n---", "\n...", "\r", "\x85", "\u2028", "\u2029")


def _unsupported(text: str) -> bool:
    """Whether ``text`` may hold directives, document markers or line breaks other than
    ``\\n`` (substring tests: a regular expression over megabytes costs more than the rest)."""
    if text.startswith(("%", "---", "...")):
        return True
    return any(mark in text for mark in _MARKS)


def _unsupported_near(text: str, start: int, end: int) -> bool:
    """``_unsupported`` for a text whose characters outside ``[start, end)`` are those of a
    text known to hold none of the marks (each is at most four characters long)."""
    if start < 4 and text.startswith(("%", "---", "...")):
        return True
    window = text[max(0, start - 4) : end + 4]
    return any(mark in window for mark in _MARKS)


class Lines:
    """What ``splice`` needs of a text besides the text, kept beside its parse so that a large
    text need not be scanned for it again: each line's indentation (``_indents``; a text has
    one only when it holds nothing ``_unsupported``)."""

    __slots__ = ("indents",)

    def __init__(self, indents: list[int]) -> None:
        self.indents = indents

    @staticmethod
    def of(text: str) -> Lines | None:
        return None if _unsupported(text) else Lines(_indents(text.split("\n")))

    def dumps(self) -> str:
        """The indentations as base64 of little-endian 32-bit integers."""
        packed = array.array("i", self.indents)
        if sys.byteorder == "big":
            packed.byteswap()
        return base64.b64encode(packed.tobytes()).decode("ascii")

    @staticmethod
    def loads(data: object, text: str) -> Lines | None:
        """``dumps``'s text read back, if it is one line's indentation for each of ``text``'s
        lines; else None."""
        if not isinstance(data, str):
            return None
        packed = array.array("i")
        try:
            packed.frombytes(base64.b64decode(data.encode("ascii"), validate=True))
        except ValueError:
            return None
        if sys.byteorder == "big":
            packed.byteswap()
        if len(packed) != text.count("\n") + 1:
            return None
        return Lines(packed.tolist())


_CHUNK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start with in common (compared a chunk at a time:
    a loop over the lines of a large spec cost more than the rest of the splice)."""
    n = min(len(a), len(b))
    at = 0
    while at < n and a[at : at + _CHUNK] == b[at : at + _CHUNK]:
        at += _CHUNK
    end = min(at + _CHUNK, n)
    while at < end and a[at] == b[at]:
        at += 1
    return min(at, n)


def _common_suffix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` end with in common."""
    n = min(len(a), len(b))
    at = 0  # characters from the end
    while (
        at < n
        and a[len(a) - at - min(_CHUNK, n - at) : len(a) - at]
        == b[len(b) - at - min(_CHUNK, n - at) : len(b) - at]
    ):
        at += min(_CHUNK, n - at)
    end = min(at + _CHUNK, n)
    while at < end and a[len(a) - 1 - at] == b[len(b) - 1 - at]:
        at += 1
    return at


def _indents(lines: list[str]) -> list[int]:
    """Each line's indentation, or -1 for a line that holds nothing but a comment or spaces."""
    # (one pass, no list of the stripped lines: this runs over every line of a large spec)
    return [
        len(line) - len(body) if (body := line.lstrip(" ")) and body[0] != "#" else -1
        for line in lines
    ]


def _end(indents: list[int], lines: list[str], start: int, stop: int, k: int) -> int:
    """Where the mapping entry starting at line ``start`` (indentation ``k``) ends: the next
    line at a smaller indentation, or at ``k`` that is not a ``-`` item (a sequence may be a
    key's value at the key's own indentation)."""
    for i in range(start + 1, stop):
        n = indents[i]
        if n < 0 or n > k:
            continue
        if n < k or not lines[i][k:].startswith("-"):
            return i
    return stop


def _key_of(line: str, load: Callable[[str], Any]) -> tuple[str, bool] | None:
    """The key of a mapping entry's first line, and whether the value is on the next lines
    (nothing after the colon); None for anything else."""
    body = line.strip()
    if not body or body[0] in "-?[{&*!|>%@`":
        return None
    try:
        value = load(body + "\n")
    except yaml.YAMLError:
        return None
    if not isinstance(value, dict) or len(cast("dict[object, Any]", value)) != 1:
        return None
    ((key, inner),) = cast("dict[object, Any]", value).items()
    if not isinstance(key, str):
        return None
    return key, inner is None and body.rstrip().endswith(":")


def _plain_events(text: str, loader: type[Any]) -> bool:
    """Whether ``text`` parses without errors, anchors or aliases."""
    parser: Any = loader(text)
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return False
        return True
    except yaml.YAMLError:
        return False
    finally:
        parser.dispose()


def splice(
    old_text: str,
    old_value: Any,
    new_text: str,
    loader: type[Any],
    accept: Callable[[str, Any, int], bool],
    changed: list[tuple[list[str], Any]] | None = None,
    lines: Lines | None = None,
) -> Any | None:
    """``new_text`` parsed, built from ``old_value`` (the parse of ``old_text``, which this
    changes in place) and a parse of the one entry the edit is in; None when that is not
    certain to equal a full parse.

    ``lines``: ``old_text``'s (``Lines``), when known; made ``new_text``'s when this returns
    a value.

    ``accept(text, value, depth)`` vets the new entry's text before it is parsed (``value`` is
    None then) and its value after (``depth``: how deep in the document it sits); a False makes
    the caller parse the whole text.

    ``changed``: where the value was replaced is appended to it (the entry's path of keys and
    its previous value); nothing when the texts are the same.
    """
    if old_text == new_text:
        return old_value
    prefix = _common_prefix(old_text, new_text)
    suffix = min(_common_suffix(old_text, new_text), min(len(old_text), len(new_text)) - prefix)
    if lines is None:
        if _unsupported(old_text) or _unsupported(new_text):
            return None
    elif _unsupported_near(new_text, prefix, len(new_text) - suffix):
        return None
    old = old_text.split("\n")
    new = new_text.split("\n")
    if lines is not None and len(lines.indents) != len(old):
        return None
    shortest = min(len(old), len(new))
    # the lines before the first character that differs are the same in both (counted in the
    # text, not compared line by line), and so are the lines after the last; the loops then
    # take the lines around those characters
    first = min(old_text.count("\n", 0, prefix), shortest)
    while first < shortest and old[first] == new[first]:
        first += 1
    tail = min(old_text.count("\n", len(old_text) - suffix), shortest - first)
    while tail < shortest - first and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_changed_end, new_changed_end = len(old) - tail, len(new) - tail
    old_ind = _indents(old) if lines is None else lines.indents
    new_ind = old_ind[:first] + _indents(new[first:new_changed_end]) + old_ind[old_changed_end:]

    def load(text: str) -> Any:
        return yaml.load(text, Loader=loader)  # a safe loader: plain data only

    path: list[str] = []
    chunk: tuple[int, int, int] | None = None  # (start, old end, new end) of the entry
    lo, old_hi, new_hi, k = 0, len(old), len(new), 0
    while True:
        # [lo, hi) is a block mapping whose keys sit at indentation k: find the entry that
        # holds the changed lines (the last key line at or before the first of them)
        start = min(first, old_hi - 1)
        while start >= lo and (old_ind[start] != k or old[start][k:].startswith("-")):
            if 0 <= old_ind[start] < k:
                start = lo - 1
                break
            start -= 1
        if start < lo or start >= len(new) or new_ind[start] != k or new[start][k:].startswith("-"):
            break  # (the key line itself may be edited: it must still start an entry)
        old_end = _end(old_ind, old, start, old_hi, k)
        new_end = _end(new_ind, new, start, new_hi, k)
        if old_end < old_changed_end or new_end < new_changed_end:
            break
        key = _key_of(old[start], load)
        if key is None or not _unique(old, old_ind, lo, old_hi, k, key[0], load):
            break
        path.append(key[0])
        chunk = (start, old_end, new_end)
        if not key[1] or start == first:  # a value on the key's line, or the key line edited
            break
        inner = next((i for i in range(start + 1, old_end) if old_ind[i] >= 0), None)
        if inner is None or old_ind[inner] <= k or old[inner][old_ind[inner] :].startswith("-"):
            break
        lo, old_hi, new_hi, k = start + 1, old_end, new_end, old_ind[inner]
    if chunk is None:
        return None
    value = _finish(old, new, chunk, path, old_value, load, accept, loader, changed)
    if value is not None and lines is not None:
        lines.indents = new_ind
    return value


def _unique(
    lines: list[str],
    indents: list[int],
    lo: int,
    hi: int,
    k: int,
    key: str,
    load: Callable[[str], Any],
) -> bool:
    """Whether ``key`` is written once among the entries of the block [lo, hi)."""
    entries = [
        lines[i][k:] for i in range(lo, hi) if indents[i] == k and not lines[i][k:].startswith("-")
    ]
    try:
        value = load("\n".join(entries) + "\n")
    except yaml.YAMLError:
        return False
    if not isinstance(value, dict) or key not in value:
        return False
    # a line that does not hold a key of its own (a flow value going on) makes the count lower
    return len(cast("dict[object, Any]", value)) == len(entries)


def _finish(
    old: list[str],
    new: list[str],
    chunk: tuple[int, int, int],
    path: list[str],
    old_value: Any,
    load: Callable[[str], Any],
    accept: Callable[[str, Any, int], bool],
    loader: type[Any],
    changed: list[tuple[list[str], Any]] | None,
) -> Any | None:
    start, old_end, new_end = chunk
    parent: Any = old_value
    for token in path[:-1]:
        if not isinstance(parent, dict) or token not in parent:
            return None
        parent = cast("dict[str, Any]", parent)[token]
    if not isinstance(parent, dict) or path[-1] not in parent:
        return None
    table = cast("dict[str, Any]", parent)
    old_chunk = "\n".join(old[start:old_end]) + "\n"
    new_chunk = "\n".join(new[start:new_end]) + "\n"
    if not accept(new_chunk, None, 0):
        return None
    if not _plain_events(old_chunk, loader) or not _plain_events(new_chunk, loader):
        return None
    try:
        was = load(old_chunk)
        now = load(new_chunk)
    except yaml.YAMLError:
        return None
    key = path[-1]
    if not isinstance(was, dict) or not isinstance(now, dict):
        return None
    was_table = cast("dict[object, Any]", was)
    now_table = cast("dict[object, Any]", now)
    if list(was_table) != [key] or list(now_table) != [key]:
        return None
    if json.dumps(was_table[key]) != json.dumps(table[key]):
        return None  # the bounds found are not the entry's: parse the whole text
    if not accept(new_chunk, now_table[key], len(path)):
        return None
    if changed is not None:
        changed.append((list(path), table[key]))
    table[key] = now_table[key]
    return old_value
