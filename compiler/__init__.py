"""toolbind.compiler: tool specs in, typed bindings packages out.

Compiler layer, the package's face. Imports the kernel's ``_face`` only: the names load on first
use (PEP 562), so the ``toolbind`` command imports only what its subcommand needs.

Data flows one way: ``frontends`` (spec → IR) → ``backends`` (IR → text); IR → IR passes go in
``passes/`` when one is needed. The public surface is small; everything else is private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbind._face import lazy

# What this package exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._api": ("compile_to_directory", "composed_schema", "generate_tree", "load_package"),
    "._driver": ("GeneratedTree",),
    "._model": ("model_from_schema", "read_tool_schema"),
    ".diagnostics": ("Diagnostic",),
    ".errors": ("CompileError", "OutputError", "SelectionError", "SpecError"),
}

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
if TYPE_CHECKING:
    from ._api import compile_to_directory, composed_schema, generate_tree, load_package
    from ._driver import GeneratedTree
    from ._model import model_from_schema, read_tool_schema
    from .diagnostics import Diagnostic
    from .errors import CompileError, OutputError, SelectionError, SpecError

__all__ = [
    "CompileError",
    "Diagnostic",
    "GeneratedTree",
    "OutputError",
    "SelectionError",
    "SpecError",
    "compile_to_directory",
    "composed_schema",
    "generate_tree",
    "load_package",
    "model_from_schema",
    "read_tool_schema",
]
# -- end of the block written from _EXPORTS --

__getattr__, __dir__ = lazy(__name__, _EXPORTS)
