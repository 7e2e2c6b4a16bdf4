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
    from ._driver import GeneratedTree, OutputError
    from ._model import model_from_schema
    from .diagnostics import Diagnostic, SpecError

__all__ = [
    "Diagnostic",
    "GeneratedTree",
    "OutputError",
    "SpecError",
    "compile_to_directory",
    "composed_schema",
    "generate_tree",
    "load_package",
    "model_from_schema",
]

_WHERE: dict[str, str] = {
    "Diagnostic": ".diagnostics",
    "GeneratedTree": "._driver",
    "OutputError": "._driver",
    "SpecError": ".diagnostics",
    "compile_to_directory": "._api",
    "composed_schema": "._api",
    "generate_tree": "._api",
    "load_package": "._api",
    "model_from_schema": "._model",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
