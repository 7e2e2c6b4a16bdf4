"""Compiler layer (memo): the render stage's steps (``_steps.Steps``) around a previous output.

Imports ``_steps`` only. The layer (``_layer.Memo.render``) gives one ``RenderSteps`` to each
package's render: a file whose key is the one the previous output's manifest records for it
is not made (the layer takes the previous file); a whole-package step whose key is the one
of the previous run's result (kept in ``.toolbind-cache/<package>.render.json``) is read back
instead of made; and what this run made is kept for the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from .._steps import Steps

_T = TypeVar("_T")


class RenderSteps(Steps):
    """One package's render steps (``prefix``: the package's directory in the tree, with
    ``/``).

    ``known``: path in the tree → the key its file was made from last time; ``kept``: the
    previous run's step results (``made`` of that run), as read back; ``text``: a previous
    file's text by path in the tree, as written (None: none is read); ``keep``: whether the
    results made are kept for a next run."""

    def __init__(
        self,
        prefix: str,
        known: Mapping[str, str],
        kept: Mapping[str, Any] | None,
        text: Callable[[str], str | None] | None,
        *,
        keep: bool,
    ) -> None:
        self.prefix = prefix
        self.known = known
        self.kept = kept or {}
        self.text = text
        self.keep = keep
        self.keys: dict[str, str] = {}
        """Each keyed file's key (path in the tree)."""
        self.skipped: list[str] = []
        """The keyed files not made: the previous output has them (paths in the tree)."""
        self.made: dict[str, Any] = {}
        """The step results for the next run (JSON values; one read back is the very value
        ``kept`` held)."""
        self.loaded: set[str] = set()

    def file(self, path: str, key: str) -> bool:
        """Made unless the previous output's file was made from ``key``."""
        rel = self.prefix + path
        self.keys[rel] = key
        if self.known.get(rel) == key:
            self.skipped.append(rel)
            return False
        return True

    def run(
        self,
        name: str,
        key: str,
        make: Callable[[], _T],
        save: Callable[[_T], dict[str, Any]],
        load: Callable[[dict[str, Any]], _T | None],
    ) -> _T:
        """Read back when the previous run's result was made from ``key`` and reads back
        whole; else made (and, with ``keep``, saved at once: ``save`` may read the state
        ``make`` left)."""
        was = self.kept.get(name)
        if isinstance(was, dict) and cast("dict[str, Any]", was).get("key") == key:
            result = load(cast("dict[str, Any]", was))
            if result is not None:
                self.made[name] = was
                self.loaded.add(name)
                return result
        result = make()
        if self.keep:
            self.made[name] = {"key": key, **save(result)}
        return result

    def output(self, path: str, step: str) -> str | None:
        """The previous output's file, when ``step``'s result was read back."""
        if step not in self.loaded or self.text is None:
            return None
        return self.text(self.prefix + path)
