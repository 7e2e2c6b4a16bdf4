"""Kernel layer: what a package face needs to load its names on first use (PEP 562). Standard
library only.

A face (``toolbind``, ``toolbind.compiler``, ``toolbind.runtime``) lists its exports once, as
``_EXPORTS`` (module → names); ``lazy`` makes its ``__getattr__`` and ``__dir__`` from that
table. Pyright reads only literal imports and a literal ``__all__``, so each face also holds a
block written from the same table (``tests/runtime/test_surface.py`` writes it with
``TOOLBIND_REGEN=1`` and otherwise checks that it is current).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["gathered", "lazy"]


def lazy(
    package: str, exports: Mapping[str, Sequence[str]], moved_to: Sequence[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the face of ``package``.

    Args:
        package: the face's module name (its ``__name__``).
        exports: each module (relative to ``package``, or absolute) and the names it gives.
        moved_to: sub-namespaces (``"pending"`` for ``package.pending``) whose names the face
            once exported itself: such a name still resolves, with a ``DeprecationWarning``
            naming where it lives now.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
            setattr(sys.modules[package], name, value)  # the next access costs nothing
            return value
        for sub in () if _not_moved(package, name) else moved_to:
            home = importlib.import_module(f"{package}.{sub}")
            if name in getattr(home, "__all__", ()):
                warnings.warn(
                    f"{package}.{name} moved to {package}.{sub}.{name}",
                    DeprecationWarning,
                    stacklevel=2,
                )
                return getattr(home, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


def _not_moved(package: str, name: str) -> bool:
    """Whether ``name`` is surely no name that moved: a private or dunder name (probed by
    ``hasattr`` here and there), or a sub-module of ``package`` (``from package import types``
    asks the face first, and must then import the module, not every sub-namespace)."""
    return name.startswith("_") or importlib.util.find_spec(f"{package}.{name}") is not None


def gathered(path: Iterable[str]) -> list[str]:
    """The search path of the ``toolbind`` package: ``path``, and, when ``path`` holds no
    sub-package (the kernel's folder of a checkout, found first on ``sys.path`` when the checkout
    is the working directory), every other ``toolbind`` folder on ``sys.path`` that does (where
    a strict editable install gathers them). What ``pkgutil.extend_path`` does, without the
    cost of importing it on every ``import toolbind.runtime.types``."""
    own = list(path)
    if any(os.path.isdir(os.path.join(p, "compiler")) for p in own):
        return own  # an installed toolbind: every sub-package is here
    found = (os.path.join(entry or os.curdir, "toolbind") for entry in sys.path)
    return own + [p for p in found if p not in own and os.path.isdir(os.path.join(p, "compiler"))]
