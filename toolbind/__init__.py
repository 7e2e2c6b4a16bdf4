"""toolbind: typed, validated tool bindings compiled from tool specs, and the runtime they run on.

Kernel layer, the package's face. Imports nothing when imported but the kernel's ``_face``: every
name loads on first use (PEP 562) — every ``import toolbind.runtime.types`` of a generated
package runs this module first, and pays for nothing it does not use.

- ``ToolbindError``, the root of every exception toolbind raises on purpose, and ``UsageError``,
  a developer's mistake (a bad spec, a bad registration, a bad argument);
- ``__version__``;
- the entry points: ``compile_to_directory`` and ``model_from_schema`` (the compiler),
  ``Agent``, ``Tool``, ``Activity`` and ``ToolBinding`` (the runtime).

The rest lives in the sub-packages: ``toolbind.compiler``, ``toolbind.runtime`` (with its
sub-namespaces ``types``, ``errors``, ``exports``, ``pending``, ``context``, ``execution``...),
``toolbind.testing``, ``toolbind.cli`` (the command), and the kernel's ``toolbind.contract`` and
``toolbind.errors``, which the compiler, the runtime and generated code share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _face

# The sub-packages live in folders of their own (compiler/, runtime/...), which an installed
# toolbind gathers in one folder: when this folder is found first on sys.path instead (a
# checkout's root as the working directory, beside a strict editable install), the installed one
# is searched too, or ``toolbind.compiler`` would not be found.
__path__ = _face.gathered(__path__)

# What ``import toolbind`` gives: each module and the names it lends (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._version": ("__version__",),
    ".errors": ("ToolbindError", "UsageError"),
    "toolbind.compiler": ("compile_to_directory", "model_from_schema"),
    "toolbind.runtime": ("Activity", "Agent", "Tool", "ToolBinding"),
}

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
if TYPE_CHECKING:
    from toolbind.compiler import compile_to_directory, model_from_schema
    from toolbind.runtime import Activity, Agent, Tool, ToolBinding

    from ._version import __version__
    from .errors import ToolbindError, UsageError

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
# -- end of the block written from _EXPORTS --

__getattr__, __dir__ = _face.lazy(__name__, _EXPORTS)
