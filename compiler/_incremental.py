"""Compiler layer: incremental regeneration — what of a previous output can be reused.

Imports ``_load`` (digests), ``diagnostics`` and ``ir``; the driver calls it.

The manifest (``toolbind.json``) records, for each package, under ``incremental``:

* ``source``, ``options``: the spec as shown and a digest of everything else its output depends
  on (toolbind's version, the ``$ref`` policy, ``--strict``, the package name);
* ``inputs``: every file the spec's compilation read (the spec and each file it ``$ref``s, shown
  path → digest of the bytes); a spec that read a URL is never reused;
* ``diagnostics``: what reading and rendering it reported (said again when it is reused);
* ``files``: per generated file, the digest of the text as rendered and as formatted; for a
  module of a large package's ``_models/``, instead of the first, its key: a digest of what the
  module is rendered from (its classes and aliases, their imports, the version and options).

A spec whose options and inputs are unchanged, and whose generated files are still as written
(digests checked), is not read again: its files are taken from the previous output. A spec that
is compiled again still reuses each file whose rendered text is unchanged instead of formatting
it again, and each model module whose key is unchanged instead of rendering it again (its file
read back, digest checked; a file not as written makes the package render whole). Either way
the tree is the one a full run writes, byte for byte.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ._load import as_object, digest
from .diagnostics import Diagnostic
from .ir import SourceLocation

INCREMENTAL = "incremental"


def options_digest(version: str, name: str, refs: object, strict: bool) -> str:
    return digest(json.dumps([version, name, repr(refs), strict]).encode())


def diagnostic_to_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "file": d.loc.file,
        "pointer": d.loc.pointer,
        "severity": d.severity,
        "found": d.found,
        "expected": d.expected,
        "hint": d.hint,
        "line": d.line,
        "column": d.column,
    }


def diagnostic_from_json(data: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        loc=SourceLocation(file=data["file"], pointer=data["pointer"]),
        severity=data["severity"],
        found=data["found"],
        expected=data["expected"],
        hint=data["hint"],
        line=data["line"],
        column=data["column"],
    )


@dataclass(frozen=True, slots=True)
class Reused:
    """A package taken from the previous output."""

    files: dict[str, str]  # relative path → text
    read: list[Diagnostic]
    rendered: list[Diagnostic]
    entry: dict[str, Any]


class Previous:
    """The previous output directory's manifest, for reuse."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.by_source: dict[str, tuple[str, dict[str, Any]]] = {}
        if out is None:
            return
        try:
            data = json.loads((out / "toolbind.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return
        top = as_object(data) or {}
        cache = as_object(top.get(INCREMENTAL)) or {}
        for name, entry in cache.items():
            table = as_object(entry)
            if table is not None and isinstance(table.get("source"), str):
                self.by_source[table["source"]] = (name, table)

    def reuse(self, source: str, name: str, options: str) -> Reused | None:
        """The package of ``source`` as previously generated, when nothing it depends on changed
        and its files are as toolbind wrote them; else None."""
        found = self.by_source.get(source)
        if found is None or self.out is None:
            return None
        prev_name, entry = found
        if prev_name != name or entry.get("options") != options:
            return None
        inputs = as_object(entry.get("inputs")) or {}
        if not inputs:
            return None
        for shown, want in inputs.items():
            if not isinstance(want, str):
                return None
            try:
                if digest(Path(shown).read_bytes()) != want:
                    return None
            except OSError:
                return None
        files: dict[str, str] = {}
        for rel, digests in (as_object(entry.get("files")) or {}).items():
            text = self.text(rel, digests)
            if text is None:
                return None
            files[rel] = text
        try:
            read = [diagnostic_from_json(d) for d in entry.get("read_diagnostics", [])]
            rendered = [diagnostic_from_json(d) for d in entry.get("render_diagnostics", [])]
        except (KeyError, TypeError):
            return None
        return Reused(files=files, read=read, rendered=rendered, entry=entry)

    def parses(self, source: str, rel: str) -> dict[str, Any] | None:
        """The parses kept for ``source``'s package in ``rel`` (``ParseCache``), if that file
        is still as written."""
        found = self.by_source.get(source)
        if found is None:
            return None
        text = self.text(rel, (as_object(found[1].get("files")) or {}).get(rel))
        if text is None:
            return None
        try:
            return as_object(json.loads(text))
        except ValueError:
            return None

    def digests(self, source: str, rel: str) -> object:
        """What the manifest records of ``rel`` in ``source``'s package (``text`` checks it)."""
        found = self.by_source.get(source)
        return None if found is None else (as_object(found[1].get("files")) or {}).get(rel)

    def keys(self, source: str, options: str) -> dict[str, str]:
        """What each file of ``source``'s package was rendered from last time (a digest of its
        text, or the key its module was rendered from), when the options were the same."""
        found = self.by_source.get(source)
        if found is None or found[1].get("options") != options:
            return {}
        keys: dict[str, str] = {}
        for rel, digests in (as_object(found[1].get("files")) or {}).items():
            if isinstance(digests, list) and digests and isinstance(digests[0], str):
                keys[rel] = digests[0]
        return keys

    def path(self, rel: str) -> str:
        assert self.out is not None
        return os.path.join(self.out, rel)  # str paths: a large tree has thousands of files

    def text(self, rel: str, digests: object) -> str | None:
        """The previous formatted text of ``rel`` if it is still as written."""
        if self.out is None or not isinstance(digests, list):
            return None
        pair = cast("list[Any]", digests)
        if len(pair) != 2:
            return None
        try:
            with open(os.path.join(self.out, rel), "rb") as file:
                data = file.read()
        except OSError:
            return None
        if digest(data) != pair[1]:
            return None
        return data.decode("utf-8")

    def formatted(self, source: str, rel: str, raw_digest: str) -> str | None:
        """The previous formatted text of ``rel`` when it was rendered to the same raw text."""
        found = self.by_source.get(source)
        if found is None:
            return None
        digests = (as_object(found[1].get("files")) or {}).get(rel)
        if not isinstance(digests, list) or not digests or digests[0] != raw_digest:
            return None
        return self.text(rel, cast("list[Any]", digests))
