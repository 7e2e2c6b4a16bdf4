"""`toolbind.compiler.model_from_schema`: any JSON Schema → a model, through the generate pipeline."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.compiler.test_models import seeds_tool
from toolbind.compiler import SpecError, model_from_schema


def test_object_root_is_a_model_named_by_title() -> None:
    pet = model_from_schema(
        {
            "title": "Pet",
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#"}},
            },
            "required": ["name"],
        }
    )
    assert pet.__name__ == "Pet"
    value: dict[str, Any] = {"name": "a", "kids": [{"name": "b", "kids": []}]}
    assert pet.model_validate(value).model_dump(mode="json", exclude_unset=True) == value
    with pytest.raises(ValidationError):
        pet.model_validate({"kids": []})


ROOT_CASES: list[tuple[Any, list[Any], list[Any]]] = [
    ({"type": "integer", "minimum": 3}, [3, 4.0, 10**20], [2, 3.5, "4", True, None]),
    ({"enum": ["a", 1, None]}, ["a", 1, 1.0, None], ["b", True, 2]),
    ({"type": ["string", "null"]}, ["x", None], [1, [], {}]),
    (
        {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
        [[], [1, 2.5]],
        [[1, 1.0], ["1"]],
    ),
    (True, [None, 1, "x", [1], {"a": 1}], []),
    (False, [], [None, 1, "x"]),
    (
        {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "boolean"}]},
        ["", "a", False],
        ["ab", 0],
    ),
]


def test_remotes_resolve_absolute_refs_without_fetching() -> None:
    remotes = {
        "https://example.com/defs.json": {
            "$defs": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}
        }
    }
    model = model_from_schema(
        {
            "type": "object",
            "properties": {"c": {"$ref": "https://example.com/defs.json#/$defs/code"}},
        },
        name="Coded",
        remotes=remotes,
    )
    assert model.model_validate({"c": "AB"}).model_dump(exclude_unset=True) == {"c": "AB"}
    with pytest.raises(ValidationError):
        model.model_validate({"c": "ab"})
    with pytest.raises(SpecError, match="points to a URL"):
        model_from_schema({"$ref": "https://example.com/other.json"})


def test_bad_schema_is_a_located_error() -> None:
    with pytest.raises(SpecError) as info:
        model_from_schema({"type": "object", "properties": {"a": {"type": "strin"}}})
    (diagnostic,) = [d for d in info.value.diagnostics if d.severity == "error"]
    assert diagnostic.render().startswith(
        "<schema>#/properties/a/type: error: unknown type 'strin'"
    )


def test_same_model_as_generate(compile_spec: Any) -> None:
    """The runtime path and the generated package agree on what a tool's parameters accept."""
    params: dict[str, Any] = {
        "q": {"type": "string", "minLength": 2},
        "n": {"type": "integer", "default": 5},
    }
    module = compile_spec([seeds_tool("s", params, ["q"])])
    model = model_from_schema({"type": "object", "properties": params, "required": ["q"]}, name="S")
    for value in ({"q": "ab"}, {"q": "ab", "n": 1}, {"q": "a"}, {"n": 1}, {"q": "ab", "n": "1"}):
        try:
            model.model_validate(value)
            expected = True
        except ValidationError:
            expected = False
        try:
            module.SCall.model_validate({"_tool": "s", **value})
            generated = True
        except ValidationError:
            generated = False
        assert expected == generated, value


def test_refs_resolve_against_id_base_uris_and_anchors() -> None:
    schema = {
        "$id": "https://example.com/root.json",
        "type": "object",
        "properties": {
            "a": {"$ref": "item.json"},
            "b": {"$ref": "#big"},
            "c": {"$ref": "https://example.com/lib/defs.json#/$defs/flag"},
        },
        "$defs": {
            "item": {
                "$id": "item.json",
                "type": "array",
                "items": {"$ref": "#/$defs/inner"},
                "$defs": {"inner": {"type": "integer"}},
            },
            "big": {"$anchor": "big", "type": "integer", "minimum": 100},
        },
    }
    remotes = {"https://example.com/lib/defs.json": {"$defs": {"flag": {"type": "boolean"}}}}
    model = model_from_schema(schema, name="Rooted", remotes=remotes)
    assert model.model_validate({"a": [1, 2], "b": 100, "c": True}).model_dump(
        exclude_unset=True
    ) == {
        "a": [1, 2],
        "b": 100,
        "c": True,
    }
    for bad in ({"a": ["x"]}, {"b": 99}, {"c": 1}):
        with pytest.raises(ValidationError):
            model.model_validate(bad)


BASE_AND_BOOL_CASES: list[tuple[Any, list[Any], list[Any]]] = [
    # a base schema beside anyOf/oneOf/$ref: every part holds, not just the first
    ({"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 0}]}, [7, -1], [3, "x"]),
    ({"type": "string", "oneOf": [{"minLength": 2}, {"maxLength": 3}]}, ["a", "abcd"], ["ab", 1]),
    (
        {"$defs": {"s": {"type": "array"}}, "$ref": "#/$defs/s", "maxItems": 1},
        [[], [1]],
        [[1, 2], {}],
    ),
    # JSON equality: booleans are not numbers
    ({"const": False}, [False], [0, 0.0]),
    ({"enum": [True, "x"]}, [True, "x"], [1, 1.0, False]),
]


@pytest.mark.parametrize(("schema", "good", "bad"), ROOT_CASES + BASE_AND_BOOL_CASES)
def test_non_object_roots_are_root_models(schema: Any, good: list[Any], bad: list[Any]) -> None:
    model = model_from_schema(schema, name="Value")
    for value in good:
        assert model.model_validate(value).model_dump(mode="json") == value
    for value in bad:
        with pytest.raises(ValidationError):
            model.model_validate(value)


def test_draft_decides_how_ref_siblings_read() -> None:
    schema = {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 2}
    with pytest.warns(UserWarning, match="maxLength check nothing"):  # said, not silent
        draft7_model = model_from_schema(schema, draft="draft7")
    assert draft7_model.model_validate("abc").model_dump() == "abc"
    with pytest.raises(ValidationError):  # 2019-09 on: $ref sits beside its siblings
        model_from_schema(schema).model_validate("abc")
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **schema}
    with pytest.warns(UserWarning, match="maxLength check nothing"):
        assert model_from_schema(draft7).model_validate("abc").model_dump() == "abc"
    with pytest.raises(ValueError, match="draft='draft8': expected one of draft4"):
        model_from_schema(schema, draft="draft8")  # pyright: ignore[reportArgumentType]


def test_draft4_id_names_resources_and_anchors() -> None:
    # draft 4 spells $id as ``id``: a plain-name fragment is an anchor, and an
    # absolute ``id`` is the base URI of the refs below it (in remotes too)
    anchored = {
        "allOf": [{"$ref": "#foo"}],
        "definitions": {"A": {"id": "#foo", "type": "integer"}},
    }
    model = model_from_schema(anchored, draft="draft4")
    assert model.model_validate(1).model_dump() == 1
    with pytest.raises(ValidationError):
        model.model_validate("a")
    with pytest.raises(SpecError, match="names an anchor that does not exist"):
        model_from_schema(anchored)  # 2020-12: ``id`` is no keyword, '#foo' names nothing
    by_uri = model_from_schema(
        {"$schema": "http://json-schema.org/draft-04/schema#", "$ref": "http://x/r.json#/items"},
        remotes={
            "http://x/r.json": {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "id": "http://x/sub/",
                "items": {"$ref": "int.json"},
            },
            "http://x/sub/int.json": {"type": "integer"},
        },
    )
    assert by_uri.model_validate(3).model_dump() == 3
    with pytest.raises(ValidationError):
        by_uri.model_validate("3")


def test_recursive_ref_2019_09() -> None:
    # $recursiveRef was ignored, so this accepted {"foo": {"bar": false}}
    plain = model_from_schema(
        {"properties": {"foo": {"$recursiveRef": "#"}}, "additionalProperties": False},
        draft="draft2019-09",
    )
    assert plain.model_validate({"foo": {"foo": {}}}).model_dump(exclude_unset=True) == {
        "foo": {"foo": {}}
    }
    with pytest.raises(ValidationError):
        plain.model_validate({"foo": {"bar": False}})
    # with "$recursiveAnchor": true on both, the ref in the inner resource comes back to the
    # outer one (which allows integers), through the dynamic scope
    tree = {
        "$id": "https://example.com/strict.json",
        "$recursiveAnchor": True,
        "anyOf": [{"type": "integer"}, {"$ref": "tree.json"}],
        "$defs": {
            "tree": {
                "$id": "tree.json",
                "$recursiveAnchor": True,
                "anyOf": [
                    {"type": "string"},
                    {"type": "object", "additionalProperties": {"$recursiveRef": "#"}},
                ],
            }
        },
    }
    model = model_from_schema(tree, draft="draft2019-09")
    model.model_validate({"a": {"b": 1}})
    tree["$recursiveAnchor"] = False  # the run is broken: the ref stays in tree.json
    with pytest.raises(ValidationError):
        model_from_schema(tree, draft="draft2019-09").model_validate({"a": {"b": 1}})


def test_vocabulary_of_the_meta_schema_is_honoured() -> None:
    # a meta-schema without the validation vocabulary switches minimum off
    vocabulary: dict[str, bool] = {
        "https://json-schema.org/draft/2020-12/vocab/core": True,
        "https://json-schema.org/draft/2020-12/vocab/applicator": True,
    }
    meta: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "http://x/meta.json",
        "$vocabulary": vocabulary,
    }
    schema = {"$schema": "http://x/meta.json", "properties": {"n": {"minimum": 10}, "b": False}}
    model = model_from_schema(schema, remotes={"http://x/meta.json": meta})
    assert model.model_validate({"n": 1}).model_dump(exclude_unset=True) == {"n": 1}
    with pytest.raises(ValidationError):  # the applicator vocabulary still applies
        model.model_validate({"b": 1})
    required = {**meta, "$vocabulary": {**vocabulary, "http://x/vocab/odd": True}}
    with pytest.raises(SpecError, match=r"<schema>#/\$schema: error: .* requires the vocabulary"):
        model_from_schema(schema, remotes={"http://x/meta.json": required})
    optional = {**meta, "$vocabulary": {**vocabulary, "http://x/vocab/odd": False}}
    model_from_schema(schema, remotes={"http://x/meta.json": optional})


def test_unevaluated_properties_see_through_applicators() -> None:
    model = model_from_schema(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [{"properties": {"b": {"type": "integer"}}, "required": ["b"]}, True],
            "unevaluatedProperties": False,
        }
    )
    model.model_validate({"a": "x", "b": 1})  # b is evaluated by the matching anyOf branch
    with pytest.raises(ValidationError, match="unevaluatedProperties"):
        model.model_validate({"a": "x", "c": 1})
    with pytest.raises(ValidationError, match="unevaluatedProperties"):
        model.model_validate_json(
            '{"a": "x", "b": "not an int"}'
        )  # the branch fails: b unevaluated
