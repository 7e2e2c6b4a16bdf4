"""Compiler layer, a pass (imports the IR and the kernel's contract only): tools a model could not tell apart by what it
reads.

Two operations of one spec may carry the same summary and description — Appwrite's "Validate
Template" on two paths, a copied "List items" — and the model reads each tool's description to
choose between them. ``told_apart`` ends each such description with its operation's method and
path (``POST /templates/validate``), which no two operations share; a description no other tool
has is left as it is, so a spec without collisions compiles to the same output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

from toolbind.contract import HttpOperation

from ..ir import SpecPackage

__all__ = ["told_apart"]


def told_apart(pkg: SpecPackage) -> SpecPackage:
    """``pkg`` with every description that more than one of its HTTP operations carries ended
    by the operation's ``METHOD /path`` (unchanged when no two descriptions are the same)."""
    operations: Mapping[str, HttpOperation] = pkg.http.operations if pkg.http is not None else {}
    counts = Counter(
        t.description.strip() for t in pkg.tools if t.description and t.name in operations
    )
    if not any(n > 1 for n in counts.values()):
        return pkg
    tools = tuple(
        replace(t, description=f"{t.description}\n\n{op.method} {op.path}")
        if t.description
        and counts[t.description.strip()] > 1
        and (op := operations.get(t.name)) is not None
        else t
        for t in pkg.tools
    )
    return replace(pkg, tools=tools)
