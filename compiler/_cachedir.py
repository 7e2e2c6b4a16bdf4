"""Compiler layer: where toolbind keeps, between runs, what only makes the next one faster.

Standard library and ``platformdirs`` only; ``memo`` (file signatures) and the Python
backend (compiled templates) use it. Nothing kept here is ever needed: a missing, unreadable or
stale entry only means the work is done again. It lives outside any output directory (so an
output is the same bytes however it was made): in ``TOOLBIND_CACHE_DIR`` when set, else the
user's cache directory (``~/.cache/toolbind`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "TOOLBIND_CACHE_DIR"
"""Where toolbind's cache is instead of the user's cache directory (the tests set it)."""


def cache_dir(*parts: str) -> Path | None:
    """The cache's directory ``parts`` (not made here); None when there is no place for one."""
    root = os.environ.get(CACHE_DIR_ENV)
    if not root:
        try:
            import platformdirs

            root = platformdirs.user_cache_dir("toolbind")
        except Exception:  # (no home directory: nothing is kept)
            return None
    return Path(root, *parts)
