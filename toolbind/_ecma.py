"""Kernel layer: JSON Schema ``pattern`` regular expressions with ECMA-262 meaning. Imports regex.

JSON Schema patterns are ECMA-262 regular expressions. Python's ``re`` differs where it matters
for validation: it cannot compile ``\\p{…}`` property escapes, its ``\\d``/``\\w`` match any
Unicode digit/word character (ECMA-262: ASCII only), and its ``$`` also matches before a final
newline. The ``regex`` package supplies the missing syntax (``\\p{Letter}``, ``(?<name>…)``);
``translate`` rewrites the classes and anchors whose meaning differs (and ``\\k<name>``,
``\\cX``, ES2025's modifier groups ``(?i:…)``, ``(?m-s:…)``), and refuses Python's syntax that is
not ECMA-262's (``(?P<n>…)``, ``(?#…)``, inline flags ``(?i)``, letter escapes such as ``\\a`` or
``\\Z``): the ``format: regex`` assertion and ``pattern`` decide by this one reading. Not covered
(and rare in specs): ``\\D``/``\\W`` inside a character class keep Python's Unicode meaning.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

_OUTSIDE_CLASS = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
_INSIDE_CLASS = {"d": "0-9", "w": "A-Za-z0-9_"}


_CLASS_ESCAPES = frozenset("dDwWsS")
# The letters ECMA-262 gives an escape meaning; any other letter escape is a syntax error there
# (an identity escape only names a syntax character).
_ECMA_LETTER_ESCAPES = frozenset("bBcdDfknpPrsStuvwWx")
# What may follow ``(?`` in ECMA-262: a non-capturing group, lookaround, a named group.
_GROUP_STARTS = (":", "=", "!", "<=", "<!")
# ES2025's modifier group: ``(?ims-ims:…)`` turns flags on (and off) inside it.
_MODIFIERS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?:")
# ECMA-262's line terminators: where ``^``/``$`` match under the ``m`` flag.
_LINE_START = r"(?<![^\n\r\u2028\u2029])"
_LINE_END = r"(?![^\n\r\u2028\u2029])"


def _not_ecma(pattern: str, at: int, what: str) -> Exception:
    import regex

    return regex.error(f"{what} is not ECMA-262 syntax", pattern, at)


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262) rewritten for the ``regex`` package with the same meaning.

    Besides the classes and anchors above: ``[]`` matches nothing and ``[^]`` any character
    (Python reads ``]`` there as a literal); a class escape at either end of a range in a
    character class (``[\\w-.]``, common in real specs) makes the ``-`` a literal, as ECMA-262's
    Annex B says, where Python refuses the pattern.
    """
    out: list[str] = []
    i = 0
    in_class = False
    after_class_escape = False  # the previous class atom was \d, \w, \s (or negated)
    flags = [frozenset[str]()]  # the modifiers in force: the pattern's, then each open group's
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            if n.isascii() and n.isalpha() and n not in _ECMA_LETTER_ESCAPES:
                raise _not_ecma(pattern, i, f"the escape \\{n}")
            control = pattern[i + 2] if n == "c" and i + 2 < len(pattern) else ""
            if control.isascii() and control.isalpha():  # a control escape: \cA is U+0001
                out.append(f"\\x{ord(control) % 32:02x}")
                i += 3
                continue
            end = pattern.find(">", i + 3) if pattern.startswith("k<", i + 1) else -1
            if end > i + 3 and not in_class:  # a named backreference
                out.append(f"(?P={pattern[i + 3 : end]})")
                i = end + 1
                continue
            table = _INSIDE_CLASS if in_class else _OUTSIDE_CLASS
            out.append(table.get(n, pattern[i : i + 2]))
            after_class_escape = in_class and n in _CLASS_ESCAPES
            i += 2
            continue
        if c == "(" and not in_class and pattern.startswith("(?", i):
            rest = pattern[i + 2 :]
            named = rest.startswith("<") and not rest.startswith(("<=", "<!"))
            modifiers = None if rest.startswith(":") else _MODIFIERS.match(pattern, i)
            if modifiers is not None:
                on, off = modifiers.group(1), modifiers.group(2) or ""
                if not _valid_modifiers(on, off):
                    raise _not_ecma(pattern, i, f"the modifiers {modifiers.group(0)!r}")
                outer = flags[-1]
                inner = (outer | set(on)) - set(off)
                flags.append(inner)
                # (i: the regex package's own scoped flag; m and s: read where ^ $ . are)
                case = "" if ("i" in inner) == ("i" in outer) else "i" if "i" in inner else "-i"
                out.append(f"(?{case}:")
                i = modifiers.end()
                continue
            if not (rest.startswith(_GROUP_STARTS) or named):
                raise _not_ecma(pattern, i, f"the group {pattern[i : i + 4]!r}")
        if c == "(" and not in_class:
            flags.append(flags[-1])
        elif c == ")" and not in_class and len(flags) > 1:
            flags.pop()
        elif c == "^" and not in_class and "m" in flags[-1]:
            c = _LINE_START
        elif c == "." and not in_class and "s" in flags[-1]:
            c = "[\\s\\S]"  # dotAll: any character, line terminators included
        if c == "[" and not in_class:
            if pattern.startswith("[]", i):
                out.append("(?!)")  # the empty class: matches nothing
                i += 2
                continue
            if pattern.startswith("[^]", i):
                out.append("[\\s\\S]")  # any character, newlines included
                i += 3
                continue
            in_class = True
            out.append(c)
            if pattern.startswith("[^", i):
                out.append("^")
                i += 1
            i += 1
            if i < len(pattern) and pattern[i] == "]":
                pass  # cannot happen after the cases above
            after_class_escape = False
            continue
        if in_class and c == "-" and i + 1 < len(pattern) and pattern[i + 1] != "]":
            next_is_escape = (
                pattern[i + 1] == "\\" and i + 2 < len(pattern) and pattern[i + 2] in _CLASS_ESCAPES
            )
            if after_class_escape or next_is_escape:
                out.append("\\-")  # Annex B: a range with a class escape at an end is literal
                i += 1
                after_class_escape = False
                continue
        if c == "]" and in_class:
            in_class = False
        elif c == "$" and not in_class:
            # ECMA-262 ``$`` is the end of the input, only; with the m flag, of a line too
            c = _LINE_END if "m" in flags[-1] else r"\Z"
        out.append(c)
        after_class_escape = False
        i += 1
    return "".join(out)


def _valid_modifiers(on: str, off: str) -> bool:
    """Whether ``(?on-off:`` is a modifier group ECMA-262 allows: flags among i, m and s, none
    twice, none both turned on and off, and at least one (``(?i-:`` is one, ``(?-:`` none)."""
    both = on + off
    return bool(both) and set(both) <= set("ims") and len(set(both)) == len(both)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled ECMA-262 ``pattern`` (``search`` it: JSON Schema patterns are unanchored).

    Raises:
        regex.error: ``pattern`` is not a valid regular expression.
    """
    import regex  # on first use: a generated package imports this module, few use patterns

    return regex.compile(translate(pattern))


# -- the subset Rust's regex crate reads alike ----------------------------------------------------
# pydantic-core checks a ``str_schema(pattern=...)`` in Rust, without a call into Python per value:
# about a third of the cost of a Call with a few patterned ids. Rust's regex crate reads a small,
# common subset of ECMA-262 exactly as ECMA-262 does — ASCII literals, classes of ASCII members and
# ranges, groups, alternation, counted and plain quantifiers, ``^``/``$`` (the input's ends in both
# without flags) — once ``\d``/``\w`` are spelled as their ASCII classes (Rust's are Unicode-wide).
# Everything else (``.``, ``\s``, ``\b``, lookaround, backreferences, non-ASCII, set operators
# ``&&``/``--``/``~~`` that Rust reads in classes) keeps the ``regex`` package's reading.
_NATIVE_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]"}
_NATIVE_CLASS_ESCAPES = {"d": "0-9", "w": "0-9A-Za-z_"}
_SYNTAX = frozenset("^$\\.*+?()[]{}|/-")  # escaped, each is itself in both engines
_COUNTED = re.compile(r"\{(\d{1,3})(?:,(\d{0,3}))?\}")
_QUANTIFIABLE_END = frozenset(")]")  # besides a literal or an escape


def native_pattern(pattern: str) -> str | None:
    """``pattern`` (ECMA-262) spelled for Rust's regex crate with the same matches, or None when
    it uses anything outside the subset both engines read alike (then ``compile_pattern``'s
    reading is the one to use)."""
    if not pattern.isascii() or any(ord(c) < 0x20 or c == "\x7f" for c in pattern):
        return None
    out: list[str] = []
    i, depth, quantifiable = 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        piece: str | None
        if c == "\\":
            piece = _native_escape(pattern[i + 1 : i + 2], _NATIVE_ESCAPES)
            step, quantifiable = 2, True
        elif c == "[":
            piece, step = _native_class(pattern, i)
            quantifiable = True
        elif c == "{":
            counted = _COUNTED.match(pattern, i)
            if counted is None or not quantifiable or not _counts_ok(counted):
                return None
            piece, step, quantifiable = counted.group(0), counted.end() - i, False
        elif c in "*+?":
            # a quantifier after an atom; ``?`` after a quantifier makes it lazy in both
            lazy = c == "?" and out and out[-1][-1:] in "*+?}" and not quantifiable
            if not (quantifiable or lazy):
                return None
            piece, step, quantifiable = c, 1, False
        elif c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                return None  # lookaround, named groups, modifiers
            depth += 1
            piece = "(?:" if pattern.startswith("(?:", i) else "("
            step, quantifiable = len(piece), False
        elif c == ")":
            depth -= 1
            piece, step, quantifiable = ")", 1, depth >= 0
        elif c in ".}]":
            return None  # ``.`` excludes other line ends in ECMA-262; stray braces differ
        else:
            piece, step = c, 1
            quantifiable = c not in "^$|"
        if piece is None or depth < 0:
            return None
        out.append(piece)
        i += step
    return "".join(out) if depth == 0 else None


def _native_escape(letter: str, table: dict[str, str]) -> str | None:
    if letter in table:
        return table[letter]
    return f"\\{letter}" if letter in _SYNTAX else None


def _native_class(pattern: str, start: int) -> tuple[str | None, int]:
    """The class opening at ``start`` spelled for Rust, and its length; None if outside the
    subset (empty, nested ``[``, a set operator, a class escape at a range's end, \\D \\W \\s)."""
    i = start + 1
    out = ["["]
    if pattern.startswith("^", i):
        out.append("^")
        i += 1
    members = 0
    while i < len(pattern) and pattern[i] != "]":
        c = pattern[i]
        if c == "[" or pattern.startswith(("&&", "--", "~~"), i):
            return None, 0
        if c == "\\":
            letter = pattern[i + 1 : i + 2]
            piece = _native_escape(letter, _NATIVE_CLASS_ESCAPES)
            if piece is None or (letter in _NATIVE_CLASS_ESCAPES and _beside_dash(pattern, i)):
                return None, 0
            out.append(piece)
            i += 2
        else:
            out.append("\\^" if c == "^" else c)
            i += 1
        members += 1
    if i >= len(pattern) or members == 0:
        return None, 0
    out.append("]")
    return "".join(out), i + 1 - start


def _beside_dash(pattern: str, at: int) -> bool:
    """Whether the class escape at ``at`` is a range's end (``[\\w-.]``: a literal ``-`` by
    ECMA-262's Annex B, an error in Rust)."""
    return pattern[at - 1 : at] == "-" or pattern[at + 2 : at + 3] == "-"


def _counts_ok(counted: re.Match[str]) -> bool:
    """A counted quantifier Rust's size limits take anywhere: ``{n}``, ``{n,}``, ``{n,m}``
    with n ≤ m ≤ 100."""
    low = int(counted.group(1))
    high = counted.group(2)
    return low <= 100 and (not high or low <= int(high) <= 100)
