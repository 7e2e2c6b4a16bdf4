"""Runtime layer: what of a composed answer that is not strict JSON can still be read as it was meant.

Imports the standard library only.

Two things, and nothing else, are read (each noted on the step: ``Step.notes``):

- **a raw control character inside a string** (a newline or tab the model wrote as itself instead of
  ``\\n``/``\\t``): JSON forbids it, but it has one meaning — the character — and Python's own reader
  takes it with ``strict=False``. Retrying instead costs a request and mostly brings it back.
- **an answer cut off inside ``calls``**, below.

A small model constrained by a grammar often repeats the same call until ``max_tokens`` ends the
answer mid-call (a decoding loop: greedy decoding makes the same choice again at every item).
Some servers report that as ``finish_reason: "length"``; llama-cpp-python reports
``"tool_calls"``, and the arguments then are JSON cut short. Retrying costs a whole request
whose prompt carries the looping answer back, and at temperature 0 the model mostly loops again.
Instead, such an answer is read up to its last complete call: every call the model finished is
kept (a call that repeats an earlier one word for word is dropped — the repeats are the loop, not
requests), the one the limit cut is dropped, and the step says so (``Step.notes``). The kept data
is then validated exactly as a whole answer would be. Only a text that is a cut-off *prefix* of
JSON, cut inside the ``calls`` array, is read this way; malformed JSON (a missing comma, a bracket
too many) is never repaired.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["CONTROL_NOTE", "cut_off_calls", "lenient_json"]

_DECODER = json.JSONDecoder(strict=False)  # raw control characters in strings: see above
CONTROL_NOTE = (
    "the answer had raw control characters (a newline, a tab) inside strings, which JSON writes "
    "escaped: read as those characters"
)


def lenient_json(text: str) -> Any:
    """``text`` read as JSON that may hold raw control characters inside strings.

    Raises:
        ValueError: ``text`` is not JSON even so.
    """
    return _DECODER.decode(text)


_SPACE = " \t\n\r"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _array_start(text: str, key: str) -> tuple[dict[str, Any], int] | None:
    """The top-level fields decoded before ``key`` and where the ``key`` array's items begin;
    None unless ``text`` is an object whose ``key`` array opens after whole fields."""
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return None
    before: dict[str, Any] = {}
    at += 1
    while True:
        at = _skip(text, at)
        if not text.startswith('"', at):
            return None
        try:
            name, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        at = _skip(text, at)
        if not text.startswith(":", at):
            return None
        at = _skip(text, at + 1)
        if name == key:
            return (before, at + 1) if text.startswith("[", at) else None
        try:
            before[str(name)], at = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        at = _skip(text, at)
        if not text.startswith(",", at):
            return None
        at += 1


def cut_off_calls(text: str, key: str = "calls") -> tuple[dict[str, Any], str] | None:
    """``text`` read up to its last complete call, if it is JSON cut off inside ``key``.

    Returns:
        The answer's data — the fields before ``key``, ``key`` with the complete calls (a call
        that repeats an earlier one dropped) — and a note saying what was kept and dropped; None
        when ``text`` is whole JSON, is not cut off inside ``key``, or holds no complete call.
    """
    found = _array_start(text, key)
    if found is None:
        return None
    before, at = found
    items: list[Any] = []
    while True:
        at = _skip(text, at)
        if at >= len(text):
            break  # cut off between items
        try:
            item, at = _DECODER.raw_decode(text, at)
        except ValueError:
            # cut off inside this item — or malformed: it must be a prefix of JSON to be cut
            if not _is_prefix(text[at:]):
                return None
            break
        items.append(item)
        at = _skip(text, at)
        if at >= len(text):
            break
        if text[at] != ",":
            return None  # the array closed (or broke): not cut off inside it
        at += 1
    seen: set[str] = set()
    kept: list[Any] = []
    for item in items:
        canonical = json.dumps(item, sort_keys=True)
        if canonical not in seen:
            seen.add(canonical)
            kept.append(item)
    if not kept:
        return None
    repeats = len(items) - len(kept)
    said = f"kept its {len(kept)} complete call(s)"
    if repeats:
        said += f", dropped {repeats} repeat(s) of them"
    text_note = (
        f"the answer was cut off inside {key} (the token limit; a model repeating a call until "
        f"the limit does this): {said} and the incomplete one at the end"
    )
    return {**before, key: kept}, text_note


# what may complete a cut-off JSON text up to its open brackets: nothing, the rest of a string
# (value, key, or after a dangling escape), a value after ':' or ',', the rest of a literal or number
_STRING_ENDS = ('"', 'n"', '0"', '00"', '000"', '0000"')  # a value's end (after an escape too)
_COMPLETIONS = (
    "",
    *_STRING_ENDS,
    *(end + ":null" for end in _STRING_ENDS),  # a key's end
    ":null",
    "null",
    '"k":null',
    "0",
    *("rue", "ue", "e", "alse", "lse", "se", "ull", "ll", "l"),
)


def _is_prefix(text: str) -> bool:
    """Whether ``text`` is a prefix of some JSON value (cut off, not malformed): some short
    completion of its last token, then the closing of its open brackets, makes it whole JSON."""
    for middle in _COMPLETIONS:
        candidate = text + middle
        closers = _closers(candidate)
        if closers is not None:
            try:
                _DECODER.decode(candidate + closers)
            except ValueError:
                continue
            return True
    return False


def _closers(text: str) -> str | None:
    """The brackets that close what ``text`` opened; None if it is inside a string or closes a
    bracket it did not open."""
    depth: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth.append("}" if char == "{" else "]")
        elif char in "}]" and (not depth or depth.pop() != char):
            return None
    return None if in_string else "".join(reversed(depth))
