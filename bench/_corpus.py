"""Bench helper: where the third-party corpus is, for every benchmark — one rule, stated in the README.

``$TOOLBIND_CORPUS`` when set, else the copy kept in the repository (``tests/corpus``: its README
names each file's source and license). A script whose corpus part is missing stops with exit 2
and says where it looked and how to point it elsewhere — never a traceback. Imports only the
standard library.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The corpus the repository holds (what the tests read too).
IN_REPO = REPO / "tests" / "corpus"


def corpus_root() -> Path:
    """``$TOOLBIND_CORPUS``, else the repository's ``tests/corpus``."""
    return Path(os.environ.get("TOOLBIND_CORPUS") or IN_REPO)


def require(path: Path, what: str) -> Path:
    """``path`` if it exists; else a one-line error on stderr and exit 2."""
    if not path.exists():
        print(
            f"error: {what} not found at {path} — set TOOLBIND_CORPUS to the corpus directory "
            "(or pass --corpus)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return path


def left_out(path: Path, what: str) -> bool:
    """Whether ``path`` is missing (said on stderr: ``what`` is left out of the run). The
    repository's copy lacks a few files some figures were first measured on; a corpus that has
    them (``$TOOLBIND_CORPUS``) brings them back."""
    if path.exists():
        return False
    print(
        f"note: {path} not in the corpus: {what} left out (set TOOLBIND_CORPUS to a corpus "
        "that has it)",
        file=sys.stderr,
    )
    return True
