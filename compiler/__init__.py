"""toolbind.compiler: tool specs in, typed bindings packages out.

Data flows one way: ``frontends`` (spec → IR) → ``backends`` (IR → text); IR → IR passes go in
``passes/`` when one is needed.
The public surface is small; everything else is private. The names load on first use (PEP 562),
so the ``toolbind`` command imports only what its subcommand needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

# What this package exports, and the module each name lives in: the one list of them. ``__all__``
# and the TYPE_CHECKING imports repeat the names because pyright reads only literals
# (tests/runtime/test_surface.py checks that the three agree).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._api": ("compile_to_directory", "composed_schema", "generate_tree", "load_package"),
    "._driver": ("GeneratedTree",),
    "._model": ("model_from_schema", "read_tool_schema"),
    ".diagnostics": ("Diagnostic",),
    ".errors": ("CompileError", "OutputError", "SelectionError", "SpecError"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
