"""The context protocol as pure runtime (data, variables, output, state, expressions,
instancing): the protocol's worked examples with their inputs and expected results, and a
property test of the output's read-time reconstruction against a plain dict."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbind.runtime._context import MISSING
from toolbind.runtime.context import Context, ContextMessage, parse_reference
from toolbind.runtime.errors import InvalidReference, UnresolvedReference

# -- 008's worked example: "Appending and Resolving" -------------------------------------------


def test_008_appending_and_resolving() -> None:
    # 1. initial state
    context = Context.of([{"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}}])
    # 2./3. the call executes; its output is appended, not merged
    call = {
        "_tool": "updateUserStatus",
        "newStatus": "inactive",
        "_outputPath": "†data.user.status",
    }
    context.write(call["_outputPath"], "inactive", call=call, date="2025-10-26T12:00:00Z")
    assert context.to_items() == [
        {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}},
        {
            "type": "data",
            "data": {"user": {"status": "inactive"}},
            "_call": call,
            "_outputPath": "†data.user.status",
            "_date": "2025-10-26T12:00:00Z",
        },
    ]
    # 4. resolution, newest first
    assert context["†data.user.status"] == "inactive"
    assert context["†data.user.name"] == "Alex"
    assert context.view("data") == {"user": {"name": "Alex", "status": "inactive"}}
    # the metadata is hidden from the model
    shown = context.render()
    assert "inactive" in shown and "_call" not in shown and "2025-10-26" not in shown


def test_005_messages_of_one_identity_merge() -> None:
    context = Context.of(
        [
            {
                "type": "data",
                "kind": "user",
                "description": "Represents the current user.",
                "data": {"name": "John Doe"},
                "schema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "age": {"type": "number"},
                        "city": {"type": "string"},
                    },
                },
            },
            {"type": "data", "kind": "user", "data": {"age": 30}},
        ]
    )
    assert context.view("user") == {"name": "John Doe", "age": 30}
    text = context.render()
    assert "## Data: ¶user" in text
    assert '"name": "John Doe"' in text and '"age": 30' in text
    assert "Represents the current user." in text and "Schema for ¶user:" in text


def test_009_tools_share_state_through_paths_and_references() -> None:
    # one tool writes, the next reads what it wrote (009 "Multi-Step Tools")
    context = Context.of(
        [{"type": "state", "state": {}, "schema": {"properties": {"summary": {"type": "string"}}}}]
    )
    context.write("†state.summary", "short text", call={"_tool": "summarize"})
    call = {"_tool": "translate", "text": "†state.summary", "lang": "fr"}
    assert context.resolve_refs(call) == {"_tool": "translate", "text": "short text", "lang": "fr"}
    assert context.state.summary.value == "short text"
    assert str(context.state.summary) == "†state.summary"


def test_methods_reconstructed_at_read_time() -> None:
    context = Context.of(
        [{"type": "state", "state": {"tags": ["a"], "user": {"x": 1, "y": {"a": 1}}}}]
    )
    context.write("†state.tags", "b", method="push")
    context.write("†state.tags", ["c", "d"], method="concat")
    context.write("†state.user", {"y": {"b": 2}}, method="merge")
    context.write("†state.user", {"z": 3}, method="assign")
    assert context["state.tags"] == ["a", "b", "c", "d"]
    assert context["state.user"] == {"x": 1, "y": {"a": 1, "b": 2}, "z": 3}
    context.write("†state.user", {"y": {"c": 3}}, method="assign")  # shallow: y replaced
    assert context["state.user.y"] == {"c": 3}
    context.write("†state.tags", [], method="set")  # a set ends the search
    context.write("†state.tags", "e", method="push")
    assert context["state.tags"] == ["e"]
    # messages are appended, never merged at write time
    assert len(context) == 8


def test_expressions_011() -> None:
    context = Context.of([{"type": "state", "state": {"default": 1, "userProfile": {"id": 7}}}])
    assert context.resolve("†state.userInput || †state.default") == 1
    assert context.lookup("†state.userProfile && †state.permissions") is MISSING
    context.write("†state.permissions", ["read"])
    assert context.resolve("†state.userProfile && †state.permissions") == ["read"]
    # output paths: && fans out, || picks by the call's success
    context.write("†data.user.summary && †data.audit.summary", "s")
    assert context["data.user.summary"] == context["data.audit.summary"] == "s"
    context.write("†data.user.verified || †data.user.failed", {"ok": False}, success=False)
    assert context.get("†data.user.verified") is None
    assert context["data.user.failed"] == {"ok": False}


def test_references_are_checked() -> None:
    assert parse_reference("†data.user.name").path == ("user", "name")
    assert parse_reference("†state").path == ()
    for bad in ("data.user", "†data..x", "†", "†data. x"):
        with pytest.raises(InvalidReference):
            parse_reference(bad)
    with pytest.raises(InvalidReference):
        Context().resolve("†a || †b && †c")
    with pytest.raises(UnresolvedReference, match=r"†input\.missing resolves to nothing"):
        Context.of([{"type": "input", "input": {}}]).resolve("†input.missing")


def test_round_trip_through_items() -> None:
    context = Context.of([{"type": "state", "_instance": "①", "text": "Hello"}])
    context.write("†state.n", 1, method="push", instance="①", call={"_tool": "t"}, date="d")
    again = Context.of(context.to_items())
    assert again.to_items() == context.to_items()
    assert again.view("state", "①") == {"text": "Hello", "n": [1]}


# -- 013's worked examples ----------------------------------------------------------------------


def test_013_batch_input_instances_are_isolated() -> None:
    context = Context.of(
        [
            {"type": "input", "_instance": "①", "comment": "This is a great post!"},
            {"type": "input", "_instance": "②", "comment": "I disagree with this..."},
            {"type": "input", "_instance": "③", "comment": "This is spam."},
        ]
    )
    assert context.instances == ("①", "②", "③")
    assert context.resolve("†input.comment", "③") == "This is spam."
    # the same reference, routed to each instance
    for instance, decision in (("①", "approve"), ("②", "approve"), ("③", "reject")):
        context.write("†state.decision", decision, instance=instance)
    assert [context.instance(i).state.decision.value for i in context.instances] == [
        "approve",
        "approve",
        "reject",
    ]
    assert context.view("state") is None  # nothing was written globally
    with pytest.raises(UnresolvedReference, match="resolves to nothing"):
        context.resolve("†input.comment")  # no global input


# 013's "Global Input with Instanced State": a global instruction, two employees' states
EMPLOYEES_013: list[dict[str, Any]] = [
    {
        "type": "input",
        "instruction": "Give employee B them a new, high-priority task to "
        "'Finalize the quarterly report'.",
    },
    {
        "type": "state",
        "_instance": "employee_A",
        "task": "Draft initial proposal",
        "status": "In Progress",
    },
    {
        "type": "state",
        "_instance": "employee_B",
        "task": "Review team submissions",
        "status": "Blocked",
    },
]


def test_013_global_input_with_instanced_state() -> None:
    context = Context.of(EMPLOYEES_013)
    # the global input is seen by every instance
    assert context.resolve("†input.instruction", "employee_A").startswith("Give employee B")
    # the targeted call writes into employee_B's state only
    context.write(
        "†state",
        {"task": "Finalize the quarterly report", "status": "High Priority"},
        instance="employee_B",
    )
    assert context.view("state", "employee_B") == {
        "task": "Finalize the quarterly report",
        "status": "High Priority",
    }
    assert context.view("state", "employee_A") == {
        "task": "Draft initial proposal",
        "status": "In Progress",
    }


def test_targeted_input_overrides_global() -> None:
    context = Context.of(
        [
            {"type": "input", "lang": "en", "tone": "plain"},
            {"type": "input", "_instance": "①", "lang": "fr"},
        ]
    )
    assert context.view("input", "①") == {"lang": "fr", "tone": "plain"}
    assert context.view("input") == {"lang": "en", "tone": "plain"}


# -- the property: read-time reconstruction == applying the writes in order to a plain dict -----

KEYS = st.sampled_from(["a", "b", "c"])
PATHS = st.lists(KEYS, min_size=0, max_size=3).map(tuple)
LEAVES = st.one_of(st.integers(-3, 3), st.text("xy", max_size=2), st.none(), st.booleans())
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=6,
)
METHOD = st.sampled_from(["set", "merge", "assign", "push", "concat"])
WRITES = st.lists(st.tuples(PATHS, METHOD, VALUES), max_size=12)


def _deep(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        out: dict[str, Any] = dict(cast("dict[str, Any]", a))
        for k, v in cast("dict[str, Any]", b).items():
            out[k] = _deep(out[k], v) if k in out else v
        return out
    return b


def plain_apply(doc: dict[str, Any], path: tuple[str, ...], method: str, value: Any) -> None:
    """The reference model: mutate a plain dict in place, the obvious way."""
    box: dict[str, Any] = {"root": doc.get("root", MISSING)}
    node: dict[str, Any] = box
    keys = ("root", *path)
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    last = keys[-1]
    old: Any = node.get(last, MISSING)
    new: Any = copy.deepcopy(value)
    result: Any
    if method == "set":
        result = new
    elif method == "merge":
        result = _deep(old, new)
    elif method == "assign":
        if isinstance(old, dict) and isinstance(new, dict):
            result = {**cast("dict[str, Any]", old), **cast("dict[str, Any]", new)}
        else:
            result = new
    elif method == "push":
        result = [new] if old is MISSING else [*old, new] if isinstance(old, list) else [old, new]
    else:
        items: list[Any] = cast("list[Any]", new) if isinstance(new, list) else [new]
        if old is MISSING:
            result = items
        else:
            result = [*old, *items] if isinstance(old, list) else [old, *items]
    node[last] = result
    doc["root"] = box["root"]


def plain_read(doc: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = doc.get("root", MISSING)
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = cast("dict[str, Any]", node)[key]
    return node


@settings(max_examples=200, deadline=None)
@given(initial=st.dictionaries(KEYS, VALUES, max_size=3), writes=WRITES, read=PATHS)
def test_any_sequence_of_writes_reads_as_a_plain_dict(
    initial: dict[str, Any], writes: list[tuple[tuple[str, ...], str, Any]], read: tuple[str, ...]
) -> None:
    context = Context.of([{"type": "state", "state": initial}])
    doc: dict[str, Any] = {}
    plain_apply(doc, (), "merge", initial)  # a given message is a patch (merged)
    for path, method, value in writes:
        context.write(str(ContextMessage(kind="state", path=path).reference), value, method=method)  # type: ignore[arg-type]
        plain_apply(doc, path, method, value)
    expected = plain_read(doc, read)
    found = context.lookup(ContextMessage(kind="state", path=read).reference)
    assert found == expected or (found is MISSING and expected is MISSING)
