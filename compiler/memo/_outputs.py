"""Compiler layer (memo): what of a previous output directory can be reused, and how to tell.

Imports ``_load`` (digests), ``_cachedir``, ``_tree``, ``_write``, ``diagnostics`` and ``ir``;
``_layer`` uses ``Previous``, the driver ``Signatures.record`` (through the package).

The manifest (``toolbind.json``) records, for each package, under ``incremental``:

* ``source``, ``options``: the spec as shown and a digest of everything else its output depends
  on (toolbind's version, the ``$ref`` policy, ``--strict``, the package name);
* ``inputs``: every file the spec's compilation read (the spec and each file it ``$ref``s, shown
  path → digest of the bytes); a spec that read a URL, or an MCP configuration (its live
  servers' tools, listed at build time), is never reused;
* ``diagnostics``: what reading and rendering it reported (said again when it is reused);
* ``files``: per generated file, the digest of the text as rendered and as formatted; for a
  module of a large package's ``_models/``, instead of the first, its key: a digest of what the
  module is rendered from (its classes and aliases, their imports, the version and options).

A spec whose options and inputs are unchanged, and whose generated files are still as written
(digests checked), is not read again: its files are taken from the previous output, linked into
the new one and read only if their text is asked for (``Texts``). A spec that
is compiled again still reuses each file whose rendered text is unchanged instead of formatting
it again, and each model module whose key is unchanged instead of rendering it again (its file
read back, digest checked; a file not as written makes the package render whole). Either way
the tree is the one a full run writes, byte for byte.

Checking a digest means reading the file: on a large tree, reading the thousands of files that
did not change cost more than compiling the one spec that did. ``Signatures`` keeps, outside the
output (``_cachedir``), what each file looked like when its digest was last
confirmed — inode, size, modification and change times, as git's index and black's cache do; a
file that still looks so is taken as confirmed without being read. Any write, rename or
``chmod`` changes the change time, which nobody can set back, so an edited file is always read
and checked; a missing, unreadable or stale record only means reading the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .._cachedir import cache_dir
from .._load import as_object, digest
from .._tree import Kept, Texts
from .._write import MANIFEST
from ..diagnostics import Diagnostic
from ..ir import SourceLocation

INCREMENTAL = "incremental"
# An input modified less than this before a run began is not recorded: a file system's
# timestamps may lag the clock by up to their granularity (2 s on FAT), so an edit made while
# the run read the file could otherwise carry a time from before the run.
_RACY_NS = 3_000_000_000


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


def _signatures_file(out: Path) -> Path | None:
    name = hashlib.sha256(os.fsencode(os.path.abspath(out))).hexdigest()[:24]
    return cache_dir("signatures", f"{name}.json")


def _looks(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class Signatures:
    """How each file of an output directory, and each input of its specs, looked when its
    digest was last confirmed (absolute path → inode, size, mtime and ctime in ns, digest)."""

    def __init__(self, out: Path | None) -> None:
        self.file = None if out is None else _signatures_file(out)
        self.known: dict[str, list[Any]] = {}
        if self.file is None:
            return
        try:
            data = json.loads(self.file.read_bytes())
        except (OSError, ValueError):
            return
        top = as_object(data) or {}
        table = top.get("files") if top.get("format") == 1 else None
        self.known = cast("dict[str, list[Any]]", table) if isinstance(table, dict) else {}

    def confirmed(self, path: str, want: str) -> bool:
        """Whether ``path`` looks as it did when its digest was ``want``."""
        record = self.known.get(path)
        if not isinstance(record, list) or len(record) != 5 or record[4] != want:
            return False
        return record[:4] == _looks(path)

    @staticmethod
    def record(out: Path, manifest: str, started_ns: int) -> None:
        """Keep how ``out``'s files and its specs' inputs look now, with the digests
        ``manifest`` (the one just written) gives them. Best effort: a cache that cannot be
        written is left as it was."""
        target = _signatures_file(out)
        if target is None:
            return
        try:
            data = as_object(json.loads(manifest)) or {}
        except ValueError:
            return
        files: dict[str, list[Any]] = {}
        for entry in (as_object(data.get(INCREMENTAL)) or {}).values():
            table = as_object(entry) or {}
            for rel, digests in (as_object(table.get("files")) or {}).items():
                if isinstance(digests, list) and len(cast("list[Any]", digests)) == 2:
                    path = os.path.join(out, rel)
                    looks = _looks(path)
                    if looks is not None:
                        files[path] = [*looks, cast("list[Any]", digests)[1]]
            for shown, want in (as_object(table.get("inputs")) or {}).items():
                path = os.path.abspath(shown)
                looks = _looks(path)
                # (an input changed during the run, or just before it: read next time)
                if isinstance(want, str) and looks is not None and looks[2] < started_ns - _RACY_NS:
                    files[path] = [*looks, want]
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                # (dumps: json.dump writes through the pure-Python encoder, chunk by chunk)
                handle.write(json.dumps({"format": 1, "out": str(out), "files": files}))
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@dataclass(frozen=True, slots=True)
class Reused:
    """A package taken from the previous output."""

    files: Texts  # relative path → text (kept files, read when asked for)
    read: list[Diagnostic]
    rendered: list[Diagnostic]
    entry: dict[str, Any]


class Previous:
    """The previous output directory's manifest, for reuse."""

    def __init__(self, out: Path | None) -> None:
        self.out = None if out is None else Path(os.path.abspath(out))  # (as signatures are)
        self.by_source: dict[str, tuple[str, dict[str, Any]]] = {}
        self.signatures = Signatures(out)
        if out is None:
            return
        try:
            data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
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
            if self.signatures.confirmed(os.path.abspath(shown), want):
                continue
            try:
                if digest(Path(shown).read_bytes()) != want:
                    return None
            except OSError:
                return None
        files = Texts()
        for rel, digests in (as_object(entry.get("files")) or {}).items():
            kept = self.kept(rel, digests)
            if kept is None:
                return None
            files.keep(rel, kept)
        try:
            read = [diagnostic_from_json(d) for d in entry.get("read_diagnostics", [])]
            rendered = [diagnostic_from_json(d) for d in entry.get("render_diagnostics", [])]
        except (KeyError, TypeError):
            return None
        return Reused(files=files, read=read, rendered=rendered, entry=entry)

    def parses(self, source: str, rel: str) -> dict[str, Any] | None:
        """The JSON object kept for ``source``'s package in ``rel``, if that file is still as
        written."""
        text = self.kept_text(source, rel)
        if text is None:
            return None
        try:
            return as_object(json.loads(text))
        except ValueError:
            return None

    def kept_text(self, source: str, rel: str) -> str | None:
        """The text of ``source``'s package's file ``rel``, if it is still as written."""
        return self.text(rel, self.digests(source, rel))

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

    def kept(self, rel: str, digests: object) -> Kept | None:
        """The previous file ``rel`` if it is still as written (``digests``: what the manifest
        records of it); it is read only when its signature does not confirm it."""
        if self.out is None or not isinstance(digests, list):
            return None
        pair = cast("list[Any]", digests)
        if len(pair) != 2 or not isinstance(pair[1], str):
            return None
        path = os.path.join(self.out, rel)
        if self.signatures.confirmed(path, pair[1]):
            return Kept(path, pair[1])
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            return None
        return Kept(path, pair[1], data) if digest(data) == pair[1] else None

    def text(self, rel: str, digests: object) -> str | None:
        """The previous formatted text of ``rel`` if it is still as written."""
        kept = self.kept(rel, digests)
        try:
            return None if kept is None else kept.text()
        except (OSError, UnicodeDecodeError):
            return None

    def formatted(self, source: str, rel: str, raw_digest: str) -> Kept | None:
        """The previous formatted file ``rel`` when it was rendered to the same raw text."""
        found = self.by_source.get(source)
        if found is None:
            return None
        digests = (as_object(found[1].get("files")) or {}).get(rel)
        if not isinstance(digests, list) or not digests or digests[0] != raw_digest:
            return None
        return self.kept(rel, cast("list[Any]", digests))
