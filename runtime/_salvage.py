"""Runtime layer: the complete calls of a composed answer that was cut off inside ``calls``.

Imports the standard library only.

A small model constrained by a grammar often repeats the same call until ``max_tokens`` ends the
answer mid-call (a decoding loop: greedy decoding makes the same choice again at every item).
Some servers report that as ``finish_reason: "length"``; llama-cpp-python reports
``"tool_calls"``, and the arguments then are JSON cut short. Retrying costs a whole request
whose prompt carries the looping answer back, and at temperature 0 the model mostly loops again.
Instead, such an answer is read up to its last complete call: every call the model finished is
kept (a call that repeats an earlier one word for word is dropped — the repeats are the loop, not
requests), the one the limit cut is dropped, and the step says so (``Step.notes``). The kept data
is then validated exactly as a whole answer would be. Only a text that is a cut-off *prefix* of
JSON, cut inside the ``calls`` array, is read this way; malformed JSON is never repaired.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["cut_off_calls"]

_DECODER = json.JSONDecoder()
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
    try:
        json.loads(text)
    except ValueError:
        pass
    else:
        return None  # whole: nothing to salvage
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


def _is_prefix(text: str) -> bool:
    """Whether ``text`` is a prefix of some JSON value (cut off, not malformed)."""
    depth: list[str] = []
    at = _skip(text, 0)
    in_string = escaped = False
    for char in text[at:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char < " ":
                return False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            depth.append("}" if char == "{" else "]")
        elif char in "}]" and (not depth or depth.pop() != char):
            return False
    # a prefix never closes its outermost value: that would have decoded (or broken) above
    return bool(depth) or in_string or _literal_prefix(text[at:])


def _literal_prefix(text: str) -> bool:
    stripped = text.strip()
    return any(w.startswith(stripped) for w in ("true", "false", "null")) or bool(
        stripped and (stripped[0].isdigit() or stripped[0] == "-")
    )
