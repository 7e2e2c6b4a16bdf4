"""Kernel layer: the version stamped into generated headers (and into incremental keys).

Standard library only. ``importlib.metadata`` costs ~25 ms to import (email, csv, zipfile...),
a twentieth of a ``generate`` that reuses every package: the version is read from the first
``toolbind`` ``.dist-info`` on ``sys.path`` (where ``importlib.metadata`` finds it), and from
``importlib.metadata`` itself whenever that look is unsure (an ``.egg-info``, a zip, no
``Version`` line).
"""

import os
import re
import sys

_DIST = re.compile(r"toolbind-[^-]+\.(dist-info|egg-info)", re.IGNORECASE)


def _from_dist_info() -> str | None:
    """The ``Version`` of the first ``toolbind`` distribution on ``sys.path``, when it is a
    ``.dist-info`` directory; None to ask ``importlib.metadata``."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip, or a path that is not there: importlib.metadata knows
            if entry and os.path.isfile(entry):
                return None
            continue
        found = [n for n in names if _DIST.fullmatch(n) or n.lower().startswith("toolbind.egg")]
        if not found:
            continue
        if len(found) != 1 or not found[0].lower().endswith(".dist-info"):
            return None
        try:
            with open(os.path.join(entry or ".", found[0], "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Version: "):
                        return line[len("Version: ") :].strip() or None
                    if not line.strip():  # the headers end at the first empty line
                        return None
        except OSError:
            return None
        return None
    return None


def _version() -> str:
    found = _from_dist_info()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolbind")
    except PackageNotFoundError:  # pragma: no cover - a source tree without an install
        return "0.0.0+source"


VERSION = _version()
__version__ = VERSION
"""The same, by the name ``toolbind.__version__`` gives it."""
