"""CLI layer: the ``toolbind`` command (generate, schema, scaffold, test, diff, serve, worker).

Above the compiler, the runtime and the contract tester: imports all three, and none of them imports
this package. Thin: parse, call the library, render diagnostics, return an exit code.

``main`` is the console script's entry point; ``python -m toolbind.cli`` runs it too.
"""

from __future__ import annotations

from ._main import main as main

__all__ = ["main"]
