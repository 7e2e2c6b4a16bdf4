"""Runtime layer: JSON Schema ``pattern`` regular expressions with ECMA-262 meaning. Imports regex.

JSON Schema patterns are ECMA-262 regular expressions. Python's ``re`` differs where it matters
for validation: it cannot compile ``\\p{…}`` property escapes, its ``\\d``/``\\w`` match any
Unicode digit/word character (ECMA-262: ASCII only), and its ``$`` also matches before a final
newline. The ``regex`` package supplies the missing syntax (``\\p{Letter}``, ``(?<name>…)``);
``translate`` rewrites the classes and anchors whose meaning differs. Not covered (and rare in
specs): ``\\D``/``\\W`` inside a character class keep Python's Unicode meaning, and ``\\cX``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

_OUTSIDE_CLASS = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
_INSIDE_CLASS = {"d": "0-9", "w": "A-Za-z0-9_"}


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262) rewritten for the ``regex`` package with the same meaning."""
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            table = _INSIDE_CLASS if in_class else _OUTSIDE_CLASS
            out.append(table.get(n, pattern[i : i + 2]))
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        elif c == "$" and not in_class:
            c = r"\Z"  # ECMA-262 ``$`` (no multiline flag) is the end of the input, only
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled ECMA-262 ``pattern`` (``search`` it: JSON Schema patterns are unanchored).

    Raises:
        regex.error: ``pattern`` is not a valid regular expression.
    """
    import regex  # on first use: a generated package imports this module, few use patterns

    return regex.compile(translate(pattern))
