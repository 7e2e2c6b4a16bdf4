"""The composed LLM-facing schema writes single-use definitions in place and loses nothing.

``inline_single_use`` (runtime/_compose.py) must give a schema that, with every non-recursive
``$ref`` expanded, is the very same schema as before: same keywords, same values, same
annotations — only the ``$defs`` entry names of inlined definitions are gone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import CORPUS, NO_CORPUS
from toolbind._compose import inline_single_use
from toolbind.compiler._driver import build

DATA = ("const", "enum", "default", "example", "examples")
SPECS = (
    "openapi/redocly__museum.yaml",
    "openapi/readme-examples__schema-circular.json",
    "openapi/oai-examples__petstore-expanded.yaml",
    "openapi/stapi__star-trek.json",
)


def _expand(schema: Any, defs: dict[str, Any], open_refs: frozenset[str] = frozenset()) -> Any:
    """``schema`` with every plain ``$ref`` to ``defs`` replaced by its target (a recursive one
    by a marker naming it)."""
    if isinstance(schema, list):
        return [_expand(v, defs, open_refs) for v in cast("list[Any]", schema)]
    if not isinstance(schema, dict):
        return schema
    obj = cast("dict[str, Any]", schema)
    ref = obj.get("$ref")
    if len(obj) == 1 and isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in open_refs:
            return {"recursive": name}
        return _expand(defs[name], defs, open_refs | {name})
    return {
        k: v if k in DATA else _expand(v, defs, open_refs) for k, v in obj.items() if k != "$defs"
    }


def _refs(schema: Any) -> list[str]:
    return [
        m for m in json.dumps(schema).split('"$ref": "#/$defs/')[1:] for m in [m.split('"', 1)[0]]
    ]


@pytest.mark.parametrize("spec", SPECS)
def test_inlining_keeps_every_tool_schema_the_same(spec: str) -> None:
    path = CORPUS / spec
    if not path.is_file():
        pytest.skip(NO_CORPUS)
    tree = build([Path(path)], formatted=False)
    (package,) = tree.packages
    data: dict[str, Any] = json.loads(tree.files[f"{package}/tools.json"])
    defs: dict[str, Any] = data["$defs"]
    schema: dict[str, Any] = {
        "anyOf": [t["parameters"] for t in data["tools"]]
        + [t["output_schema"] for t in data["tools"] if t["output_schema"] is not None]
    }
    new, kept = inline_single_use(schema, defs)
    assert len(kept) <= len(defs)
    assert _expand(new, kept) == _expand(schema, defs)
    # what stays is shared (referenced twice or more) or recursive
    counts: dict[str, int] = {}
    for name in _refs([new, kept]):
        counts[name] = counts.get(name, 0) + 1
    for name in kept:
        recursive = {"recursive": name}
        expanded = json.dumps(_expand(kept[name], kept, frozenset({name})))
        assert counts.get(name, 0) >= 2 or json.dumps(recursive) in expanded, name


def test_what_is_not_inlined() -> None:
    defs: dict[str, Any] = {
        "Once": {"type": "string", "minLength": 1},
        "Twice": {"type": "integer"},
        "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
        "WithSibling": {"type": "number"},
        "Deep": {"type": "object", "properties": {"x": {"type": "string"}}},
        "Anchored": {"$anchor": "here", "type": "boolean"},
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "once": {"$ref": "#/$defs/Once"},
            "a": {"$ref": "#/$defs/Twice"},
            "b": {"$ref": "#/$defs/Twice"},
            "node": {"$ref": "#/$defs/Node"},
            "sibling": {"$ref": "#/$defs/WithSibling", "description": "kept as written"},
            "deep": {"$ref": "#/$defs/Deep/properties/x"},
            "anchored": {"$ref": "#/$defs/Anchored"},
            "data": {"default": {"$ref": "#/$defs/Once"}, "const": {"$ref": "#/$defs/Twice"}},
        },
    }
    new, kept = inline_single_use(schema, defs)
    assert new["properties"]["once"] == {"type": "string", "minLength": 1}
    assert sorted(kept) == ["Anchored", "Deep", "Node", "Twice", "WithSibling"]
    assert new["properties"]["data"] == schema["properties"]["data"]  # instances, not schemas
    assert new["properties"]["sibling"] == schema["properties"]["sibling"]
