"""Compiler layer (normalise): regular expressions in other languages' dialects. Imports
``_rule``, ``_schema`` and the kernel's ECMA-262 pattern compiler.

``(?i)^(all|none)$`` (PayPal's) is Java's and Python's inline flag group, which ECMA-262 has not;
ES2025's modifier group says the same over the rest: ``(?i:^(all|none)$)``. (OpenAPI's, lenient
runs: a JSON Schema's ``pattern`` agrees with ``format: regex``, which refuses it.)
"""

from __future__ import annotations

import re
from typing import Any

from toolbind.contract import compile_pattern

from ..ir import SourceLocation
from ._rule import Fixed, warn
from ._schema import SchemaContext, schema_object, schema_rule

_INLINE_FLAGS = re.compile(r"\(\?([ims]+)\)")
"""Inline flags at a pattern's start (``(?i)``): Java's and Python's, not ECMA-262's."""


def _compiles(pattern: str) -> bool:
    import regex  # (here, not at the top: the ``regex`` module costs a tenth of toolbind's import)

    try:
        compile_pattern(pattern)
    except regex.error:
        return False
    return True


def _inline_flags(value: Any, at: SourceLocation, ctx: SchemaContext) -> Fixed | None:
    fragment = schema_object(value)
    if not ctx.lenient or fragment is None:
        return None
    pattern = fragment.get("pattern")
    if not isinstance(pattern, str):
        return None
    lead = _INLINE_FLAGS.match(pattern)
    if lead is None or len(set(lead[1])) != len(lead[1]) or _compiles(pattern):
        return None
    read = f"(?{lead[1]}:{pattern[lead.end() :]})"
    if not _compiles(read):
        return None
    said = warn(
        at.child("pattern"),
        f"pattern {pattern!r} starts with {lead[0]!r}, an inline flag group ECMA-262 has not "
        f"(Java's, Python's); read as {read!r}, the flags over the whole pattern",
        "an ECMA-262 regular expression",
        hint=f"write {read!r} (ECMA-262's modifier group)",
    )
    return Fixed(value={**fragment, "pattern": read}, diagnostics=(said,))


INLINE_REGEX_FLAGS = schema_rule(
    name="inline-regex-flags",
    family="schema-patterns",
    accepts="a pattern starting with an inline flag group: (?i), (?s), (?m) (Java's, Python's)",
    makes="ECMA-262's modifier group over the rest: (?i:...)",
    warning="pattern <p> starts with '(?i)', an inline flag group ECMA-262 has not (Java's, "
    "Python's); read as <read>, the flags over the whole pattern",
    apply=_inline_flags,
    when=lambda c: c.lenient,
    keys=("pattern",),
    phases=("pattern",),
)

RULES = (INLINE_REGEX_FLAGS,)
