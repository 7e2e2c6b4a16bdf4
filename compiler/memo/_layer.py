"""Compiler layer (memo): the one place that decides what of a previous run is reused.

Imports ``_load`` (digests), ``_steps``, ``_tree``, ``_write`` (the
output's layout), ``_version``, ``diagnostics`` and this package's modules; ``_operations`` and
``_replay`` (and with them the frontends) only when a spec is read. The driver builds one
``Memo`` per run and passes each stage through it; no stage imports this.

Every reuse is keyed the same way: ``options`` (a digest of toolbind's version and of
everything else a package's output depends on: its name, the ``$ref`` policy, ``--strict``)
together with the digests of the inputs the stage read (the spec files' bytes, the kept
parse's text, a model module's key). A key that differs, or a kept file that is not as the
manifest records it, means the step runs as in a full run.

Data flow, per spec (``build`` in the driver):

1. ``reused``: the package as the previous output holds it, when its options and every input
   are unchanged — no stage runs;
2. ``reading`` around the read stage: the steps the loader and the reader are given
   (``_replay.ReadSteps``: the kept parses, the operations' records); what they keep for the
   next run comes back as ``KeptReads``;
3. ``render`` around the render stage: the steps the backend is given (``_render.RenderSteps``:
   the previous files' keys and step results), the files it did not make taken from the
   previous output (or a whole render when one is not as written), then every file whose
   rendered text is unchanged taken as formatted;
4. ``holds``, ``entry``: whether the previous output is this tree already, and what the
   manifest records of each package for the next run.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolbind._version import VERSION

from .._load import digest
from .._steps import Steps
from .._tree import Kept, Texts
from .._write import MANIFEST, PARSES
from ..diagnostics import Diagnostic, Diagnostics
from ._outputs import Previous, Reused, diagnostic_to_json
from ._parses import ParseCache
from ._render import RenderSteps


class RenderStage(Protocol):
    """The render stage of one package, as the layer calls it."""

    def __call__(self, diags: Diagnostics, steps: Steps) -> dict[str, str]:
        """The package's files (paths in the tree), but those ``steps`` say are not made."""
        ...


def _parses_file(name: str) -> str:
    return f"{PARSES}/{name}.json"


def _operations_file(name: str) -> str:
    return f"{PARSES}/{name}.operations.json"


def _memo_file(name: str) -> str:
    return f"{PARSES}/{name}.render.json"


@dataclass(slots=True)
class KeptReads:
    """What the read stage of one spec leaves for the next run (texts of ``PARSES`` files)."""

    parses: str | None = None
    operations: str | None = None


@dataclass(slots=True)
class Package:
    """One package's files as the layer gives them to the format stage."""

    files: Texts
    rendered: list[Diagnostic]
    formatted: set[str]
    """The files that are the previous output's, formatted already."""
    origin: dict[str, str] = field(default_factory=dict[str, str])
    """Those of them the previous output holds (path in the tree → path on disk)."""
    raw: dict[str, str] = field(default_factory=dict[str, str])
    """Each file's key: its key, or the digest of its text as rendered."""
    reused: Reused | None = None


class Memo:
    """The reuse of one previous output (``out``; None: nothing is reused) by one run.

    ``keep``: whether this run keeps what only the next run needs (the parses, the operations'
    records, the render memos): only an output written in place has a next run.
    """

    def __init__(self, out: Path | None, *, keep: bool) -> None:
        self.prev = Previous(out)
        self.keep = keep

    @staticmethod
    def options(name: str, refs: object, strict: bool, format_checks: bool = True) -> str:
        """The key of a package's options: toolbind's version and what else its output
        depends on besides its inputs."""
        # (format checks off only is named: the key of a default run stays what it was)
        off = [] if format_checks else ["no-format-checks"]
        return digest(json.dumps([VERSION, name, repr(refs), strict, *off]).encode())

    def reused(self, source: str, name: str, options: str) -> Reused | None:
        """The package of ``source`` from the previous output when nothing it depends on
        changed (no stage runs for it); else None."""
        return self.prev.reuse(source, name, options)

    @contextlib.contextmanager
    def reading(
        self, source: str, name: str, options: str, *, every: bool = True
    ) -> Generator[tuple[Steps, KeptReads]]:
        """Around the read stage of ``source`` (named ``name`` last time; "" when unknown): the
        steps to read it through (the kept parses, and the previous run's operations' records
        for a run that reads every operation: ``every``); the ``KeptReads`` is filled when the
        block ends."""
        from ._operations import OperationMemo
        from ._replay import ReadSteps

        parses = ParseCache(
            ParseCache.read(self.prev.kept_text(source, _parses_file(name))) if name else None
        )
        operations = OperationMemo(
            self.prev.parses(source, _operations_file(name)) if name else None,
            parses.changes,
            options,
        )
        kept = KeptReads()
        steps = ReadSteps(parses, operations, every=every)
        yield steps, kept
        steps.finish()
        if self.keep:
            kept.parses, kept.operations = parses.text(), operations.text()

    def take(self, reused: Reused) -> Package:
        """A reused package's files, every one the previous output's."""
        return Package(
            files=reused.files,
            rendered=reused.rendered,
            formatted=set(reused.files),
            origin={rel: self.prev.path(rel) for rel in reused.files},
            reused=reused,
        )

    def render(
        self, source: str, name: str, options: str, stage: RenderStage, kept: KeptReads
    ) -> Package:
        """Around the render stage of ``source``'s package: the files as a full render gives
        them, those already in the previous output taken from it."""
        prev = self.prev
        known = prev.keys(source, options)
        was = prev.parses(source, _memo_file(name)) if known and self.keep else None
        own = Diagnostics()
        steps = RenderSteps(
            f"{name}/",
            known,
            was,
            lambda rel: prev.text(rel, prev.digests(source, rel)),
            keep=self.keep,
        )
        files = stage(own, steps)
        # a module not rendered again is the previous output's file, bytes confirmed; one that
        # is not as written makes the package render whole
        taken = {rel: prev.kept(rel, prev.digests(source, rel)) for rel in steps.skipped}
        if any(k is None for k in taken.values()):
            own = Diagnostics()
            steps = RenderSteps(f"{name}/", {}, None, None, keep=self.keep)
            files = stage(own, steps)
            taken = {}
        keys, memo = steps.keys, steps.made
        texts = Texts(files)
        for rel, text in (
            (_parses_file(name), kept.parses),
            (_operations_file(name), kept.operations),
            (_memo_file(name), self._memo_text(source, name, memo, was)),
        ):
            if text is not None:
                texts[rel] = text
        made = Package(files=texts, rendered=own.items, formatted=set())
        made.raw = {rel: keys.get(rel) or digest(text.encode()) for rel, text in texts.items()}
        for rel, k in taken.items():
            assert k is not None
            self._keep(made, rel, k)
            made.raw[rel] = keys[rel]
        for rel in list(texts):
            done = None if rel in taken else prev.formatted(source, rel, made.raw[rel])
            if done is not None:
                self._keep(made, rel, done)
        return made

    def _keep(self, made: Package, rel: str, kept: Kept) -> None:
        made.files.keep(rel, kept)
        made.formatted.add(rel)
        made.origin[rel] = self.prev.path(rel)

    def _memo_text(
        self, source: str, name: str, memo: dict[str, Any], was: Mapping[str, Any] | None
    ) -> str | None:
        """The render memo's file for the next run (None: none to keep)."""
        if not memo or not self.keep:
            return None
        rel = _memo_file(name)
        # every entry taken as it was: the previous file is the same text
        same = was is not None and memo.keys() == was.keys()
        same = same and all(memo[k] is (was or {})[k] for k in memo)
        text = self.prev.text(rel, self.prev.digests(source, rel)) if same else None
        return text or (
            json.dumps(memo, ensure_ascii=False, separators=(",", ":"), check_circular=False) + "\n"
        )

    @staticmethod
    def entry(
        made: Package,
        source: str,
        options: str,
        reads: Mapping[str, str | None],
        read: list[Diagnostic],
        tree: Texts,
    ) -> dict[str, Any] | None:
        """What the manifest records for reusing a package next time (None: not reusable:
        it read nothing, a URL or something live)."""
        if made.reused is not None:
            return made.reused.entry
        if not reads or any(d is None for d in reads.values()):
            return None
        return {
            "source": source,
            "options": options,
            "inputs": dict(sorted(reads.items())),
            "read_diagnostics": [diagnostic_to_json(d) for d in read],
            "render_diagnostics": [diagnostic_to_json(d) for d in made.rendered],
            "files": {rel: [made.raw[rel], tree.digest(rel)] for rel in sorted(made.files)},
        }

    def holds(self, files: Texts, manifest: str) -> bool:
        """Whether the previous output is exactly ``files`` (those of reused packages, whose
        digests were checked, and the parses' ``.gitignore``) and ``manifest``."""
        out = self.prev.out
        if out is None:
            return False
        try:
            if (out / MANIFEST).read_text(encoding="utf-8") != manifest:
                return False
            there: set[str] = set()
            for top, dirs, names in os.walk(out):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                rel = Path(top).relative_to(out).as_posix()
                there.update(name if rel == "." else f"{rel}/{name}" for name in names)
            ignore = f"{PARSES}/.gitignore"
            if ignore in files and (out / ignore).read_text(encoding="utf-8") != files[ignore]:
                return False
        except (OSError, UnicodeDecodeError):
            return False
        return there == {*files, MANIFEST}
