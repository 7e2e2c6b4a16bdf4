"""Test support: read the ``read → emitted`` counts ``toolbind generate -v`` prints per OpenAPI spec."""

from __future__ import annotations

import re

FATES = ("emitted", "reported", "filtered", "overridden")
"""What becomes of each item a spec declares: nothing else is allowed."""


def read_counts(note: str) -> dict[str, dict[str, int]]:
    """``operations 12 → 12 emitted; parameters in path 5 → 4 emitted, 1 reported`` as
    ``{"operations": {"read": 12, "emitted": 12}, ...}``."""
    out: dict[str, dict[str, int]] = {}
    for part in note.split("read → emitted: ", 1)[1].split("; "):
        found = re.fullmatch(r"(.+?) (\d+) → (.*)", part)
        assert found is not None, part
        kind, read, fates = found.groups()
        out[kind] = {"read": int(read)} | {
            fate: int(n) for n, fate in (f.split(" ", 1) for f in fates.split(", "))
        }
    return out
