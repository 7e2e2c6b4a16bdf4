"""A ``oneOf`` one of whose branches lies within another (found on Chroma's served spec, a Rust
enum as utoipa writes it: metadata values are ``oneOf [boolean, integer, number, string, arrays
of each]``). An integer is a number too, so every integer matched two branches and oneOf refused
it: a Call with ``{"n": 3}`` in its metadata was refused, and every answer holding one failed its
output check though the call went through. Such a branch can never match alone; OpenAPI specs
read it as ``anyOf``, with a located warning (OpenAI's ``state_variables`` and readme's
``oneOf [string, string]`` in the corpus are the same). Checked on a real server (a raw ASGI app,
uvicorn on 127.0.0.1) that echoes what it is sent."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from tests._servers import echo_json, serve_asgi
from toolbind.compiler import (
    SpecError,
    compile_to_directory,
    generate_tree,
    load_package,
    model_from_schema,
)
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.1.0
info: {title: nested oneOf, version: '1'}
paths:
  /collections:
    post:
      operationId: createCollection
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string}
                metadata: {oneOf: [{type: 'null'}, {$ref: '#/components/schemas/HashMap'}]}
                key: {$ref: '#/components/schemas/Key'}
      responses:
        '200':
          description: the collection as stored
          content: {application/json: {schema: {$ref: '#/components/schemas/Collection'}}}
components:
  schemas:
    HashMap:
      type: object
      additionalProperties:
        oneOf:
          - {type: boolean}
          - {type: integer, format: int64}
          - {type: number, format: double}
          - {type: string}
          - {type: array, items: {type: integer, format: int64}}
          - {type: array, items: {$ref: '#/components/schemas/Double'}}
    Double: {type: number, format: double}
    Key:
      oneOf:
        - {type: string, format: uuid}
        - {type: integer, minimum: 0}
        - {type: array, items: {type: integer}}
        - {type: array, items: {type: string}}
    Collection:
      type: object
      required: [name]
      properties:
        name: {type: string}
        metadata: {oneOf: [{type: 'null'}, {$ref: '#/components/schemas/HashMap'}]}
        key: {$ref: '#/components/schemas/Key'}
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("nested_oneof") / "nested_oneof.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pkg(spec: Path) -> ModuleType:
    out = spec.parent / "out"
    compile_to_directory([spec], out)
    return load_package(out, "nested_oneof")


def _create(pkg: ModuleType, **args: Any) -> Any:
    call = pkg.CallAdapter.validate_python({"_tool": "createCollection", "name": "c", **args})
    with serve_asgi(echo_json) as url, HttpClient(pkg.API, base_url=url) as client:
        return pkg.HttpActivities(client).activities()["createCollection"](call)


def test_a_branch_within_another_is_said_where_the_oneof_is(spec: Path) -> None:
    tree = generate_tree([spec])
    said = [d for d in tree.diagnostics if "is within branch" in d.found]
    assert [(str(d.loc), d.severity) for d in said] == [
        (f"{spec}#/components/schemas/HashMap/additionalProperties/oneOf", "warning")
    ]  # Key's branches exclude each other (a uuid string, an integer, arrays): it stays oneOf
    assert said[0].found.startswith("oneOf branch 1 is within branch 2: every value branch 1")
    assert "read as anyOf" in said[0].found
    assert said[0].expected and "an integer is also a number" in said[0].expected
    with pytest.raises(SpecError, match="oneOf branch 1 is within branch 2"):
        generate_tree([spec], strict=True)


def test_integers_go_out_and_come_back_where_a_number_branch_also_takes_them(
    pkg: ModuleType,
) -> None:
    metadata = {"n": 3, "ratio": 2.5, "on": True, "tag": "x", "ids": [1, 2], "weights": [0.5, 1]}
    result = _create(pkg, metadata=metadata, key=7)
    assert result.success, result.error
    assert result.metadata["status"] == 200
    assert isinstance(result.data, pkg.CreateCollectionOutput)
    sent = result.data.model_dump(mode="json", exclude_unset=True)
    assert sent == {"name": "c", "metadata": metadata, "key": 7}
    assert json.dumps(sent["metadata"]["n"]) == "3"  # (the integer branch, first, read it)


def test_branches_that_exclude_each_other_stay_one_of(pkg: ModuleType) -> None:
    # Key is still oneOf: an empty array matches both array branches and is refused, as JSON
    # Schema says; a uuid string, an integer and an array of either are taken
    with pytest.raises(ValidationError, match="exactly one must match"):
        pkg.CallAdapter.validate_python({"_tool": "createCollection", "name": "c", "key": []})
    result = _create(pkg, key=["a", "b"])
    assert result.success and result.data.model_dump(mode="json")["key"] == ["a", "b"]


def test_the_schema_a_model_sees_says_any_of(pkg: ModuleType) -> None:
    assert pkg.__file__ is not None
    text = json.dumps(json.loads((Path(pkg.__file__).parent / "tools.json").read_text("utf-8")))
    assert '"anyOf": [{"type": "boolean"}, {"type": "integer"' in text
    assert '"oneOf": [{"type": "string", "format": "uuid"}' in text


def test_a_plain_json_schema_keeps_one_of_as_json_schema_says() -> None:
    # outside OpenAPI's lenient reading nothing is assumed: 3 matches both branches
    model = model_from_schema({"oneOf": [{"type": "integer"}, {"type": "number"}]})
    model.model_validate(2.5)
    with pytest.raises(ValidationError, match="exactly one must match"):
        model.model_validate(3)
