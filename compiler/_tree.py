"""Compiler layer: the generated tree — every file of an output by path, and what made it.

Imports ``_load`` (digests) and ``diagnostics``. The render stage makes a ``Texts``, the format
and write stages take it; the memo layer puts in it files of the previous output that are
read only when their text is asked for (``Kept``), so a large tree's reused files are linked,
never read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass

from ._load import digest
from .diagnostics import Diagnostic


@dataclass(frozen=True, slots=True)
class Kept:
    """A file of the previous output whose digest is confirmed: its text is read when asked
    for (``data``: its bytes, when confirming it read them already)."""

    path: str
    digest: str
    data: bytes | None = None

    def text(self) -> str:
        if self.data is not None:
            return self.data.decode("utf-8")
        with open(self.path, "rb") as file:
            return file.read().decode("utf-8")


class Texts(MutableMapping[str, str]):
    """A tree's files (relative path → text), where the files kept from the previous output
    are read only when their text is asked for: a large tree's reused files are linked into
    the new output and never read."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        self._items: dict[str, str | Kept] = dict(items or {})

    def __getitem__(self, rel: str) -> str:
        value = self._items[rel]
        if isinstance(value, Kept):
            text = self._items[rel] = value.text()
            return text
        return value

    def __setitem__(self, rel: str, text: str) -> None:
        self._items[rel] = text

    def __delitem__(self, rel: str) -> None:
        del self._items[rel]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, rel: object) -> bool:
        return rel in self._items

    def __repr__(self) -> str:
        return f"Texts({len(self._items)} files)"

    def keep(self, rel: str, kept: Kept) -> None:
        self._items[rel] = kept

    def merge(self, other: Texts) -> None:
        """``other``'s files, the kept ones still unread."""
        self._items.update(other._items)

    def digest(self, rel: str) -> str:
        """The digest of ``rel``'s text (a kept file's is known: it is not read for it)."""
        value = self._items[rel]
        return value.digest if isinstance(value, Kept) else digest(value.encode())


@dataclass(frozen=True, slots=True)
class GeneratedTree:
    """Every file of an output directory (relative POSIX path → text) and what made it."""

    files: Texts  # (a file reused from the previous output is read when its text is asked for)
    packages: dict[str, str]  # package name → spec source
    diagnostics: list[Diagnostic]
