"""Where the third-party corpus is, for every benchmark and test: one rule, stated in the README.

``$TOOLBIND_CORPUS`` when set, else ``../shared/corpus`` beside the repository root. A script
whose corpus part is missing stops with exit 2 and says where it looked and how to point it
elsewhere — never a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus_root() -> Path:
    """``$TOOLBIND_CORPUS``, else ``../shared/corpus`` beside the repository."""
    return Path(os.environ.get("TOOLBIND_CORPUS") or REPO.parent / "shared" / "corpus")


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
