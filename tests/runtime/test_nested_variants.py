"""Nested oneOf/allOf variants are checked in time linear in the value, not exponential.

The defect: OpenSearch's index template answer (opensearch-project/opensearch-api-specification,
Apache-2.0: a mapping's property is one of 47 kinds, each with properties of its own) took over
ten minutes to check — a generated client's call never returned. Two causes: each time pydantic
built a schema reaching a generated alias, its ``ExactlyOne``/``AllOf`` annotation made new
checks, each building its own TypeAdapter on first use (thousands per answer); and a oneOf
check validated the value against every variant, whose own checks validated each part again,
once per variant tried at every level above. Checks of one type are now shared, and what a
part gave is remembered by its JSON text. The spec below keeps OpenSearch's shape, trimmed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolbind.runtime.types as runtime_types
from tests.conftest import CompileSpec

KINDS = ["text", "keyword", "object", "nested", "date", "boolean"]
SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "mappings", "version": "1"},
    "paths": {
        "/_mapping": {
            "get": {
                "operationId": "getMapping",
                "responses": {
                    "200": {
                        "description": "the mapping",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/TypeMapping"}
                            }
                        },
                    }
                },
            }
        }
    },
    "components": {
        "schemas": {
            "TypeMapping": {
                "type": "object",
                "properties": {
                    "properties": {
                        "type": "object",
                        "additionalProperties": {"$ref": "#/components/schemas/Property"},
                    }
                },
            },
            "Property": {
                "type": "object",
                "discriminator": {"propertyName": "type"},
                "oneOf": [{"$ref": f"#/components/schemas/{k.title()}Property"} for k in KINDS],
            },
            "PropertyBase": {
                "type": "object",
                "properties": {
                    "properties": {
                        "type": "object",
                        "additionalProperties": {"$ref": "#/components/schemas/Property"},
                    },
                    "fields": {
                        "type": "object",
                        "additionalProperties": {"$ref": "#/components/schemas/Property"},
                    },
                },
            },
            **{
                f"{k.title()}Property": {
                    "allOf": [
                        {"$ref": "#/components/schemas/PropertyBase"},
                        {
                            "type": "object",
                            "properties": {"type": {"type": "string", "enum": [k]}},
                            "required": ["type"],
                        },
                    ]
                }
                for k in KINDS
            },
        }
    },
}


def _mapping(depth: int) -> dict[str, Any]:
    """A property with two sub-properties, ``depth`` levels deep (2^depth - 1 properties)."""
    node: dict[str, Any] = {"type": KINDS[depth % len(KINDS)]}
    if depth > 1:
        node["properties"] = {"a": _mapping(depth - 1), "b": _mapping(depth - 1)}
    return node


def test_nested_variants_are_checked_once_per_part(
    compile_spec: CompileSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = compile_spec(SPEC)
    checked = 0
    validate = runtime_types._Sub._validate  # pyright: ignore[reportPrivateUsage]

    def counting(self: Any, value: Any) -> None:
        nonlocal checked
        checked += 1
        validate(self, value)

    monkeypatch.setattr(runtime_types._Sub, "_validate", counting)  # pyright: ignore[reportPrivateUsage]
    answer = json.dumps({"properties": {"root": _mapping(6)}})  # 63 properties, 6 deep
    got = pkg.GetMappingOutput.model_validate_json(answer)
    assert got.model_dump(mode="json") == json.loads(answer)
    # each part once per variant (it was 22,621 checks at 5 deep, twelve times more per level)
    assert checked <= 400, checked
    bad = _mapping(5)
    bad["properties"]["a"]["properties"]["b"]["type"] = "no-such-kind"
    with pytest.raises(ValueError, match=r"Input should be 'text'"):
        pkg.GetMappingOutput.model_validate_json(json.dumps({"properties": {"root": bad}}))
