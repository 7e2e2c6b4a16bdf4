"""How a Swagger 2.0 parameter is sent: every style keyword it carries is honoured or said.

Swagger 2.0 says how an array goes out with ``collectionFormat`` (``multi``: one pair per
item); real specs also write OpenAPI 3's ``schema``, ``style`` and ``explode`` in their 2.0
parameters (httpbin's own spec: ``freeform``, an object, ``style: form, explode: true``). Those
were ignored without a word: the object went out as ``freeform=k,v`` instead of ``k=v``. They
are sent as they say now (a note under ``-v``); beside a ``collectionFormat``, which says how
the parameter is sent, they are ignored with a warning at the keyword.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpClient

_ARRAY = {"type": "array", "items": {"type": "string"}}
PARAMETERS: list[dict[str, Any]] = [
    {
        "name": "filter",
        "in": "query",
        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        "style": "form",
        "explode": True,
    },
    {"name": "tags", "in": "query", **_ARRAY, "collectionFormat": "multi"},
    {"name": "ids", "in": "query", **_ARRAY, "style": "pipeDelimited"},
    {"name": "each", "in": "query", **_ARRAY, "explode": True},
    {"name": "csv", "in": "query", **_ARRAY, "collectionFormat": "csv", "explode": True},
    {"name": "path", "in": "query", "type": "string", "allowReserved": True},
]
SPEC = {
    "swagger": "2.0",
    "info": {"title": "styles", "version": "1"},
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": PARAMETERS,
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}
SEEN: list[str] = []


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await read_body(receive)
    SEEN.append(scope["query_string"].decode())
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_every_style_keyword_of_a_swagger_parameter_is_sent_as_it_says_or_said(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "styles.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    at = f"{spec}#/paths/~1items/get/parameters"
    said = [d.render() for d in tree.diagnostics if "parameters/" in d.loc.pointer]
    assert said == [
        f"{at}/0: note: parameter 'filter' is written with OpenAPI 3's style and explode, which "
        "Swagger 2.0 does not define; sent as OpenAPI 3 says",
        f"{at}/2: note: parameter 'ids' is written with OpenAPI 3's style, which Swagger 2.0 "
        "does not define; sent as OpenAPI 3 says",
        f"{at}/3: note: parameter 'each' is written with OpenAPI 3's explode, which Swagger 2.0 "
        "does not define; sent as OpenAPI 3 says",
        f"{at}/4/explode: warning: parameter 'csv' has explode beside collectionFormat, which "
        "says how it is sent; they are ignored — collectionFormat alone (Swagger 2.0), or style "
        "and explode alone (OpenAPI 3)",
    ]
    pkg = load_package(tmp_path / "out", "styles")
    try:
        call = pkg.CallAdapter.validate_python(
            {
                "_tool": "listItems",
                "filter": {"a": "1", "b": "2"},
                "tags": ["x", "y"],
                "ids": ["1", "2"],
                "each": ["p", "q"],
                "csv": ["m", "n"],
                "path": "a/b",
            }
        )
        with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
            assert pkg.HttpActivities(client).activities()["listItems"](call).success
    finally:
        unload("styles")
    assert SEEN[-1] == "a=1&b=2&tags=x&tags=y&ids=1|2&each=p&each=q&csv=m,n&path=a/b"
