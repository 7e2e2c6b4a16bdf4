"""Parameter and body property names a model provider refuses as property keys (Lago's
``statuses[]`` and ``metadata[key]``; Anthropic and Bedrock take ``[a-zA-Z0-9_.-]{1,64}``, and
one such key fails the whole request): the model sees a Call field named without the rest, and
the API still receives the spec's names — checked on a real server (tests/http_app.py's echo,
uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from tests._servers import serve_asgi
from toolbind.compiler import compile_to_directory, load_package
from toolbind.contract import tool_schema
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.1.0
info: {title: brackets, version: '1'}
paths:
  /echo:
    get:
      operationId: echoGet
      parameters:
        - {name: 'statuses[]', in: query, schema: {type: array, items: {enum: [draft, final]}}}
        - {name: 'metadata[key]', in: query, schema: {type: string}}
        - {name: 'metadata_key', in: query, schema: {type: string}}
      responses:
        '200': {description: echo, content: {application/json: {schema: {type: object}}}}
    post:
      operationId: echoPost
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: ['user[name]']
              properties: {'user[name]': {type: string}, 'user[age]': {type: integer}}
      responses:
        '200': {description: echo, content: {application/json: {schema: {type: object}}}}
"""


def test_a_refused_property_name_is_a_field_the_model_can_name_and_the_wire_keeps(
    tmp_path: Path,
) -> None:
    from tests import http_app

    spec = tmp_path / "brackets.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "brackets")
    keys = {
        t.name: list(tool_schema(t)["properties"])[3:]  # after _tool, _activity, _reasoning…
        for t in pkg.TOOLS
    }
    assert keys == {
        # (``metadata_key`` is another parameter's own name: the renamed one never takes it)
        "echoGet": ["statuses", "metadata_key_query", "metadata_key"],
        "echoPost": ["user_name", "user_age"],
    }
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", k) for ks in keys.values() for k in ks)
    with serve_asgi(http_app.app) as url, HttpClient(pkg.API, base_url=url) as client:
        acts: Any = pkg.HttpActivities(client).activities()
        got = acts["echoGet"](
            pkg.CallAdapter.validate_json(
                json.dumps(
                    {
                        "_tool": "echoGet",
                        "statuses": ["draft", "final"],
                        "metadata_key_query": "v",
                        "metadata_key": "w",
                    }
                )
            )
        )
        assert got.success, got.error
        assert parse_qsl(got.data.model_dump()["query_string"]) == [
            ("statuses[]", "draft"),
            ("statuses[]", "final"),
            ("metadata[key]", "v"),
            ("metadata_key", "w"),
        ]
        got = acts["echoPost"](
            pkg.CallAdapter.validate_json(
                json.dumps({"_tool": "echoPost", "user_name": "Ada", "user_age": 36})
            )
        )
        assert got.success, got.error
        assert parse_qsl(got.data.model_dump()["body"]) == [
            ("user[name]", "Ada"),
            ("user[age]", "36"),
        ]
