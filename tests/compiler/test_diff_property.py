"""Property test of ``toolbind diff``'s classification.

For random pairs (schema, mutated schema): a change set with nothing breaking Calls (no
``calls``, no ``unknown``) never turns an instance valid under the old schema invalid under the
new one; a change classified as breaking Calls carries a witness that the old schema's faithful
model accepts and — when the report says it is rejected — the new one's refuses.

Instances are drawn by hypothesis-jsonschema from the old schema read on its declared surface
(``additionalProperties: false`` where the schema leaves it open: a model fills the parameters it
is shown), and validated with the generated (faithful) models of ``model_from_schema``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from toolbind.compiler import model_from_schema
from toolbind.compiler._diff import diff_json_schemas
from toolbind.testing._strategies import json_instances

NAMES = ("a", "b", "c", "d")


def _string(lo: int | None, hi: int | None, enum: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if lo is not None:
        out["minLength"] = lo
        if hi is not None:
            out["maxLength"] = lo + hi
    if enum:
        out["enum"] = enum
    return out


def _number(kind: str, lo: int | None, hi: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    if lo is not None:
        out["minimum"] = lo
        if hi is not None:
            out["maximum"] = lo + hi
    return out


def _array(items: dict[str, Any], most: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": items}
    if most:
        out["maxItems"] = most
    return out


def _any_of(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [a, b]}


def _scalar() -> st.SearchStrategy[dict[str, Any]]:
    strings = st.builds(
        _string,
        st.none() | st.integers(0, 3),
        st.none() | st.integers(0, 3),
        st.none()
        | st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3, unique=True),
    )
    numbers = st.builds(
        _number,
        st.sampled_from(["integer", "number"]),
        st.none() | st.integers(-5, 5),
        st.none() | st.integers(0, 10),
    )
    others: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
        [{"type": "boolean"}, {"type": ["string", "null"]}, {}]
    )
    return strings | numbers | others


def _schema(depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    leaf = _scalar()
    if depth >= 2:
        return leaf
    arrays = st.builds(_array, leaf | _object(depth + 1), st.none() | st.integers(1, 3))
    unions = st.builds(_any_of, leaf, _object(depth + 1))
    return leaf | arrays | unions | _object(depth + 1)


def _object(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        _make_object,
        st.dictionaries(st.sampled_from(NAMES), _schema(depth), min_size=1, max_size=3),
        st.sets(st.sampled_from(NAMES)),
        st.booleans(),
    )


def _make_object(props: dict[str, Any], required: set[str], closed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    req = sorted(r for r in required if r in props)
    if req:
        out["required"] = req
    if closed:
        out["additionalProperties"] = False
    return out


MUTATIONS = (
    "remove",
    "add",
    "add-required",
    "flip-required",
    "replace",
    "close",
    "open",
    "bound",
    "enum",
    "describe",
)


@st.composite
def mutated(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(schema)
    objects = list(_objects_in(new))
    target = draw(st.sampled_from(objects))
    props: dict[str, Any] = target["properties"]
    kind = draw(st.sampled_from(MUTATIONS))
    name = draw(st.sampled_from(sorted(props)))
    if kind == "remove" and len(props) > 1:
        del props[name]
        target["required"] = [r for r in target.get("required", []) if r != name]
    elif kind in ("add", "add-required"):
        fresh = next((n for n in NAMES if n not in props), None)
        if fresh is not None:
            props[fresh] = draw(_scalar())
            if kind == "add-required":
                target["required"] = sorted({*target.get("required", []), fresh})
    elif kind == "flip-required":
        req = set(target.get("required", []))
        req ^= {name}
        target["required"] = sorted(req)
    elif kind == "replace":
        props[name] = draw(_scalar())
    elif kind == "close":
        target["additionalProperties"] = False
    elif kind == "open":
        target.pop("additionalProperties", None)
    elif kind == "bound":
        prop = props[name]
        key = draw(st.sampled_from(["minimum", "maximum", "minLength", "maxLength", "maxItems"]))
        if key in prop:
            prop[key] = max(0, prop[key] + draw(st.sampled_from([-1, 1])))
        else:
            prop[key] = draw(st.integers(0, 3))
    elif kind == "enum":
        prop = props[name]
        if "enum" in prop:
            values = list(prop["enum"])
            if draw(st.booleans()) and len(values) > 1:
                values.pop()
            else:
                values.append("v")
            prop["enum"] = values
        else:
            prop["enum"] = ["x", "y"]
            prop["type"] = "string"
    else:
        props[name] = {**props[name], "description": "changed"}
    if not target.get("required"):
        target.pop("required", None)
    return new


def _objects_in(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        table = cast("dict[str, Any]", schema)
        if table.get("type") == "object" and table.get("properties"):
            yield table
        for v in table.values():
            yield from _objects_in(v)
    elif isinstance(schema, list):
        for v in cast("list[Any]", schema):
            yield from _objects_in(v)


def declared(schema: Any) -> Any:
    """The schema on its declared surface: objects closed where they leave it open."""
    if isinstance(schema, dict):
        out = {k: declared(v) for k, v in cast("dict[str, Any]", schema).items()}
        if out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [declared(v) for v in cast("list[Any]", schema)]
    return schema


def accepts(model: type[BaseModel], value: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(value))
    except ValidationError:
        return False
    return True


@pytest.mark.filterwarnings("ignore")
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_safe_for_calls_never_refuses_an_old_call_and_breaking_has_a_witness(
    data: st.DataObject,
) -> None:
    old = data.draw(_object(1), label="old")
    shared = [n for n, v in old["properties"].items() if v.get("type") in ("object", "array")]
    if shared and data.draw(st.booleans(), label="via $ref"):
        # a property's schema moved to $defs and referenced: changes inside it are found too
        name = shared[0]
        old["$defs"] = {"Shared": old["properties"][name]}
        old["properties"][name] = {"$ref": "#/$defs/Shared"}
    new = data.draw(mutated(old), label="new")
    changes = diff_json_schemas(old, new)
    old_model = model_from_schema(old)
    new_model = model_from_schema(new)
    breaking = [c for c in changes if c.audience in ("calls", "unknown")]
    if not breaking:
        for _ in range(5):
            instance = data.draw(json_instances(declared(old)), label="old call")
            assert accepts(old_model, instance)
            assert accepts(new_model, instance), (
                f"classified safe for Calls, but {instance} is refused by the new schema: {changes}"
            )
    for c in changes:
        if c.audience != "calls":
            continue
        assert c.witness is not None, f"{c.rule} has no witness"
        witness = json.loads(c.witness)
        assert accepts(old_model, witness), f"{c.rule}: the old schema refuses {witness}"
        if c.rejected:
            assert not accepts(new_model, witness), f"{c.rule}: the new schema accepts {witness}"


_ATOMS = st.sampled_from(
    ["a", "Z", "7", r"\d", r"\w", r"\s", r"\.", "[A-F]", "[a-z0-9_]", "[^abc]", r"[\d-]", "."]
)


@st.composite
def _bodies(draw: st.DrawFn, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.booleans()):
            atom = f"({draw(_bodies(depth + 1))})"
        else:
            atom = draw(_ATOMS)
        if depth < 2 and draw(st.integers(0, 5)) == 0:
            atom = f"(?:{atom}|{draw(_ATOMS)})"
        parts.append(atom + draw(st.sampled_from(["", "?", "*", "+", "{2}", "{1,3}", "{3,}"])))
    return "".join(parts)


@st.composite
def _patterns(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["{}", "^{}", "{}$", "^{}$"])).format(draw(_bodies()))


@given(_patterns())
def test_the_witness_string_for_a_pattern_is_matched_by_it(pattern: str) -> None:
    # the shortest-match writer behind pattern witnesses: whatever it writes, the pattern (as
    # ECMA-262 reads it, through the runtime's translation) matches
    from toolbind.compiler.passes.subset import (
        _pattern_sample,  # pyright: ignore[reportPrivateUsage]
    )
    from toolbind.runtime.contract import compile_pattern

    sample = _pattern_sample(pattern)
    assert sample is not None, pattern
    assert compile_pattern(pattern).search(sample) is not None, (pattern, sample)
