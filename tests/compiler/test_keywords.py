"""Nothing ignored in silence: every keyword of every draft's official
meta-schema is enforced by toolbind, an annotation, or a located warning at compile time (an
error with ``strict=True`` / ``--strict``).

The keyword lists are read from the meta-schemas themselves (jsonschema-specifications, the same
documents toolbind resolves ``$ref``s to them with), following their ``allOf`` into the
vocabulary meta-schemas. "Enforced" is shown, not claimed: a probe schema with the keyword must
reject an instance that the schema without it accepts.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, cast
from urllib.parse import urljoin

import pytest
from jsonschema_specifications import REGISTRY  # pyright: ignore[reportMissingTypeStubs]
from pydantic import ValidationError

from toolbind.compiler import SpecError, model_from_schema

META = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}

#: Keywords that only annotate (``format`` by default: asserting it is format_assertion's).
#: ``$vocabulary`` means something in a meta-schema only (honoured there: test_model_from_schema).
ANNOTATIONS = {
    "$schema",
    "$comment",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "format",
}


def keywords(uri: str, seen: set[str] | None = None) -> set[str]:
    """The keywords a meta-schema lists (``properties``), with those of the meta-schemas its
    ``allOf`` refers to."""
    seen = set() if seen is None else seen
    if uri in seen:
        return set()
    seen.add(uri)
    contents = cast("dict[str, Any]", REGISTRY.contents(uri))  # pyright: ignore[reportUnknownMemberType]
    found = set(contents.get("properties", {}))
    for part in contents.get("allOf", []):
        if "$ref" in part:
            found |= keywords(urljoin(uri, part["$ref"]), seen)
    return found


def probe(keyword: str, draft: str) -> tuple[dict[str, Any], Any, Any] | None:
    """A schema that uses ``keyword``, an instance it must reject and one it must accept."""
    integer = {"type": "integer"}
    exclusive = (
        {"maximum": 1, "exclusiveMaximum": True} if draft == "draft4" else {"exclusiveMaximum": 1},
        {"minimum": 1, "exclusiveMinimum": True} if draft == "draft4" else {"exclusiveMinimum": 1},
    )
    recursive = {
        "$recursiveAnchor": True,
        "type": "object",
        "properties": {"a": {"$recursiveRef": "#"}},
    }
    conditional = {"if": integer, "then": {"minimum": 2}, "else": {"type": "string"}}
    probes: dict[str, tuple[dict[str, Any], Any, Any]] = {
        "type": ({"type": "string"}, 1, "a"),
        "enum": ({"enum": [1]}, 2, 1),
        "const": ({"const": 1}, 2, 1),
        "multipleOf": ({"multipleOf": 2}, 3, 4),
        "maximum": ({"maximum": 1}, 2, 1),
        "exclusiveMaximum": (exclusive[0], 1, 0),
        "minimum": ({"minimum": 1}, 0, 1),
        "exclusiveMinimum": (exclusive[1], 1, 2),
        "maxLength": ({"maxLength": 1}, "ab", "a"),
        "minLength": ({"minLength": 1}, "", "a"),
        "pattern": ({"pattern": "^a"}, "b", "a"),
        "items": ({"items": integer}, ["a"], [1]),
        "additionalItems": ({"items": [{}], "additionalItems": False}, [1, 2], [1]),
        "prefixItems": ({"prefixItems": [integer]}, ["a"], [1]),
        "maxItems": ({"maxItems": 1}, [1, 2], [1]),
        "minItems": ({"minItems": 1}, [], [1]),
        "uniqueItems": ({"uniqueItems": True}, [1, 1], [1, 2]),
        "contains": ({"contains": integer}, ["a"], [1]),
        "maxContains": ({"contains": integer, "maxContains": 1}, [1, 2], [1]),
        "minContains": ({"contains": integer, "minContains": 2}, [1], [1, 2]),
        "maxProperties": ({"maxProperties": 0}, {"a": 1}, {}),
        "minProperties": ({"minProperties": 1}, {}, {"a": 1}),
        "required": ({"required": ["a"]}, {}, {"a": 1}),
        "properties": ({"properties": {"a": integer}}, {"a": "x"}, {"a": 1}),
        "patternProperties": ({"patternProperties": {"^a": integer}}, {"ab": "x"}, {"ab": 1}),
        "additionalProperties": ({"additionalProperties": False}, {"a": 1}, {}),
        "dependencies": ({"dependencies": {"a": ["b"]}}, {"a": 1}, {"a": 1, "b": 1}),
        "dependentRequired": ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, {"a": 1, "b": 1}),
        "dependentSchemas": (
            {"dependentSchemas": {"a": {"required": ["b"]}}},
            {"a": 1},
            {"a": 1, "b": 1},
        ),
        "propertyNames": ({"propertyNames": {"maxLength": 1}}, {"ab": 1}, {"a": 1}),
        "if": (conditional, 1, 2),
        "then": (conditional, 1, 2),
        "else": (conditional, None, "a"),
        "allOf": ({"allOf": [integer]}, "a", 1),
        "anyOf": ({"anyOf": [integer]}, "a", 1),
        "oneOf": ({"oneOf": [integer, {"minimum": 0}]}, 1, -1),
        "not": ({"not": integer}, 1, "a"),
        "unevaluatedItems": ({"unevaluatedItems": False}, [1], []),
        "unevaluatedProperties": ({"unevaluatedProperties": False}, {"a": 1}, {}),
        "$ref": ({"$ref": "#/definitions/a", "definitions": {"a": integer}}, "x", 1),
        "definitions": ({"$ref": "#/definitions/a", "definitions": {"a": integer}}, "x", 1),
        "$defs": ({"$ref": "#/$defs/a", "$defs": {"a": integer}}, "x", 1),
        "$id": (
            {"$ref": "http://x.y/a", "definitions": {"a": {"$id": "http://x.y/a", **integer}}},
            "x",
            1,
        ),
        "id": (
            {"$ref": "http://x.y/a", "definitions": {"a": {"id": "http://x.y/a", **integer}}},
            "x",
            1,
        ),
        "$anchor": ({"$ref": "#a", "$defs": {"a": {"$anchor": "a", **integer}}}, "x", 1),
        "$dynamicRef": (
            {"$dynamicRef": "#a", "$defs": {"a": {"$dynamicAnchor": "a", **integer}}},
            "x",
            1,
        ),
        "$dynamicAnchor": (
            {"$dynamicRef": "#a", "$defs": {"a": {"$dynamicAnchor": "a", **integer}}},
            "x",
            1,
        ),
        "$recursiveRef": (recursive, {"a": 1}, {"a": {}}),
        "$recursiveAnchor": (recursive, {"a": 1}, {"a": {}}),
    }
    return probes.get(keyword)


def rejects(schema: dict[str, Any], draft: str, bad: Any, good: Any) -> tuple[bool, list[str]]:
    """Whether the compiled schema rejects ``bad`` (and accepts ``good``), and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = model_from_schema(schema, draft=draft)  # pyright: ignore[reportArgumentType]
    model.model_validate(good)
    try:
        model.model_validate(bad)
    except ValidationError:
        return True, [str(w.message) for w in caught]
    return False, [str(w.message) for w in caught]


@pytest.mark.parametrize("draft", list(META))
def test_every_meta_schema_keyword_is_enforced_an_annotation_or_warned(draft: str) -> None:
    listed = keywords(META[draft])
    assert len(listed) > 30, listed  # the walk found the vocabularies
    unclassified: list[str] = []
    for keyword in sorted(listed - ANNOTATIONS):
        found = probe(keyword, draft)
        if found is None:
            unclassified.append(keyword)
            continue
        schema, bad, good = found
        enforced, said = rejects(schema, draft, bad, good)
        if enforced:
            continue
        # not enforced: a warning at the keyword's place must say so, and strict refuses it
        assert any(f"/{keyword}: warning: {keyword}" in w for w in said), (draft, keyword, said)
        with pytest.raises(SpecError, match=re.escape(f"{keyword}: error")):
            model_from_schema(schema, draft=draft, strict=True)  # pyright: ignore[reportArgumentType]
    assert unclassified == [], f"{draft}: keywords neither probed nor annotations"


def test_keywords_of_other_drafts_are_warned_where_they_are_ignored() -> None:
    with pytest.warns(UserWarning, match=r"<schema>#/extends: warning: extends is JSON Schema"):
        model_from_schema({"extends": {"type": "integer"}})
    with pytest.warns(
        UserWarning, match=r"#/\$id: warning: \$id is no keyword of JSON Schema draft4"
    ):
        model_from_schema({"$id": "http://x.y/"}, draft="draft4")
    with pytest.warns(
        UserWarning, match=r"#/\$ref: warning: \$ref replaces the keywords beside it"
    ):
        model_from_schema(
            {"$ref": "#/definitions/a", "minimum": 3, "definitions": {"a": {}}}, draft="draft7"
        )
    with pytest.warns(UserWarning, match=r"#/format: warning: format 'color' is not one toolbind"):
        model_from_schema({"format": "color"}, format_assertion=True)
    with pytest.raises(SpecError, match=r"#/format: error: format 'color'"):
        model_from_schema({"format": "color"}, format_assertion=True, strict=True)
