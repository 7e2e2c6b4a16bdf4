"""CLI layer: the console script's entry point, ``main``. Imports ``_generate`` (the plain
``generate`` path, without typer, click or rich) and, only for any other command line, ``_app``.

Neither of the two imports this module, so the fast path and the typer app stay one-way.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import NoReturn

from ._generate import plain_arguments, run, say

__all__ = ["main"]


def _exit_now(code: int) -> NoReturn:
    """End a ``generate`` process once its output is flushed, without the interpreter's
    teardown (as mypy's ``hard_exit`` does): freeing a large spec's parse, IR and rendered text
    object by object, and the collection that comes with it, took 40–70 ms, a twentieth of a
    one-description regeneration. Everything ``generate`` writes is written and closed by
    then; nothing it starts registers work for exit."""
    for stream in (sys.stdout, sys.stderr):
        # (a closed pipe: nothing more can be said on it)
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def main() -> None:
    """Console-script entry point: a plain ``generate`` without typer (``_generate``), anything
    else in the typer app (``_app``, imported only then)."""
    direct = plain_arguments(sys.argv[2:]) if sys.argv[1:2] == ["generate"] else None
    if direct is None:
        from ._app import app_main  # (typer, click and rich: only when needed)

        app_main()
        return
    # no cyclic collection for the rest of a process that ends in ``_exit_now``: the one that
    # ``build`` re-enabling it set off walked every object it had made (about 40 ms on the
    # largest spec) to free next to nothing
    gc.disable()
    try:
        code = run(**direct)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        say([("interrupted; the output directory was left as it was", None)])
        code = 130
    _exit_now(code)
