"""Runtime layer (imports the kernel's ``_compose`` only): the one rule for the meta fields a
caller gives (``_output``, ``_activity``, ``_reasoningForCall``, ...), read against the schema
the caller was shown.

A Call model takes every meta field (its own parameters and the seeds' wire fields), so the
schema decides: a meta field the tool's composed schema does not list is refused where that
schema refuses extra keys (``additionalProperties: false``), exactly as any other undeclared key
is — ``_output`` given to a tool an Activity runs included — and one the schema fixes (a
``const``) must be that value. The Agent's Response and ``toolbind serve`` both apply it, so a
model is told the same thing through either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolbind._compose import META_FIELDS, TOOL_TAG

EXTRA = "Extra inputs are not permitted"
"""What a refused undeclared key is told (pydantic's words, which the rest of the feedback uses)."""


def refused_meta(
    schema: Mapping[str, Any], given: Mapping[str, Any], *, tag: str = TOOL_TAG
) -> list[tuple[str, str, str]]:
    """``(field, message, keyword)`` for each meta field of ``given`` (one call's arguments, as
    sent) that ``schema`` (the call's composed schema: its ``properties``,
    ``additionalProperties``) refuses. ``tag`` (and ``_tool``, which names the tool whatever the
    tag) is never an extra key: the call is matched by it."""
    raw: Any = schema.get("properties")
    props = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
    closed = schema.get("additionalProperties") is False
    problems: list[tuple[str, str, str]] = []
    for key, value in given.items():
        if key not in META_FIELDS and key != tag:
            continue
        declared: Any = props.get(key)
        if declared is None:
            if closed and key not in (TOOL_TAG, tag):
                problems.append((key, EXTRA, "additionalProperties"))
        elif isinstance(declared, dict) and "const" in declared:
            expected: Any = cast("dict[str, Any]", declared)["const"]
            if value != expected:
                problems.append((key, f"must be {expected!r}, found {value!r}", "const"))
    return problems


def call_schemas(composed: Mapping[str, Any], tag: str = TOOL_TAG) -> dict[str, Mapping[str, Any]]:
    """Each call schema of a composed ``{calls, output}`` schema, by the tool name its ``tag``
    const offers (``compose``'s ``calls.items``: one schema, or an ``anyOf`` of them)."""
    props: Any = composed.get("properties")
    calls: Any = cast("dict[str, Any]", props).get("calls") if isinstance(props, dict) else None
    items: Any = cast("dict[str, Any]", calls).get("items") if isinstance(calls, dict) else None
    if not isinstance(items, dict):
        return {}
    item = cast("dict[str, Any]", items)
    branches: Any = item.get("anyOf", [item])
    out: dict[str, Mapping[str, Any]] = {}
    for branch in cast("list[Any]", branches) if isinstance(branches, list) else []:
        if not isinstance(branch, dict):
            continue
        found: Any = cast("dict[str, Any]", branch).get("properties")
        named: Any = cast("dict[str, Any]", found).get(tag) if isinstance(found, dict) else None
        if isinstance(named, dict) and isinstance(
            const := cast("dict[str, Any]", named).get("const"), str
        ):
            out[const] = cast("dict[str, Any]", branch)
    return out
