"""toolbind.compiler.normalise: real specs' quirks as small named rules, in front of lowering.

One module per family of quirks; each exports ``RULES``, a tuple of ``Rule``. ``table()`` is the
list the docs show (``docs/reference/normalise.md``'s table is generated from it).
"""

from __future__ import annotations

from ._rule import Fixed, Rule, note, run, run_located, warn

__all__ = ["Fixed", "Rule", "note", "run", "run_located", "table", "warn"]


def table() -> list[tuple[str, str, str, str, str]]:
    """Every rule: (family, name, what it accepts, what it makes of it, the warning), sorted."""
    from . import _families  # the families register here, so this face stays small

    return sorted((r.family, r.name, r.accepts, r.makes, r.warning) for r in _families.ALL)
