"""toolbind: typed, validated tool bindings compiled from tool specs, and the runtime they run on.

Kernel layer, the package's face. Imports the kernel's ``errors`` (standard library only) when
imported; the version and the entry points load on first use (PEP 562, the entry points from
``toolbind.compiler`` and ``toolbind.runtime``): every ``import toolbind.runtime.types`` of a
generated package runs this module first, and pays for nothing it does not use.

- ``ToolbindError``, the root of every exception toolbind raises on purpose, and ``UsageError``,
  a developer's mistake (a bad spec, a bad registration, a bad argument);
- ``__version__``;
- ``compile_to_directory`` and ``model_from_schema`` (the compiler), ``Agent``, ``Tool``,
  ``Activity`` and ``ToolBinding`` (the runtime).

The rest lives in the sub-packages: ``toolbind.compiler``, ``toolbind.runtime`` (with
``toolbind.runtime.types``, ``.errors``, ``.exports``...), ``toolbind.testing``, and the kernel's
``toolbind.contract`` and ``toolbind.errors``, which the compiler, the runtime and generated code
share.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import ToolbindError, UsageError

if TYPE_CHECKING:  # the same names as _ENTRY_POINTS, for pyright (tests/runtime/test_surface.py)
    from toolbind.compiler import compile_to_directory, model_from_schema
    from toolbind.runtime import Activity, Agent, Tool, ToolBinding

    from ._version import VERSION as __version__

# Each entry point and the package it lives in: loaded on first use.
_ENTRY_POINTS = {
    "compile_to_directory": "toolbind.compiler",
    "model_from_schema": "toolbind.compiler",
    "Activity": "toolbind.runtime",
    "Agent": "toolbind.runtime",
    "Tool": "toolbind.runtime",
    "ToolBinding": "toolbind.runtime",
}

__all__ = [
    "Activity",
    "Agent",
    "Tool",
    "ToolBinding",
    "ToolbindError",
    "UsageError",
    "__version__",
    "compile_to_directory",
    "model_from_schema",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # (reading it looks through sys.path: only when asked)
        from ._version import VERSION

        globals()[name] = VERSION
        return VERSION
    where = _ENTRY_POINTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
