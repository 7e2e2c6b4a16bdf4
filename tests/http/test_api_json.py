"""A large package's ``HttpApi`` is data in ``http.json`` (``contract.api_to_json``/``load_api``).

As one Python expression in ``http.py``, GitHub's 1,223 operations took 90 of pyright's 112
CPU-seconds over that module; as JSON, the module is checked in a fifth of the time and the
value is read (each operation when first used) as fast as the expression ran. These tests check
that the value read back is the one the frontend made, for every OpenAPI spec of the corpus;
that a generated large package calls a real server through it; and that a ``http.json`` that is
not what toolbind wrote is refused with the file and JSON pointer, never read as something else.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from fastapi import Body, FastAPI

from tests._servers import serve_asgi
from toolbind.compiler import compile_to_directory, load_package
from toolbind.compiler.diagnostics import Diagnostics
from toolbind.compiler.frontends import read_spec
from toolbind.runtime.contract import HttpApi, api_from_json, api_to_json
from toolbind.runtime.http import HttpClient

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "openapi"
SPECS = sorted(p for p in CORPUS.glob("*.*") if not p.name.startswith("LICENSE"))


def _api(spec: Path) -> HttpApi:
    diags = Diagnostics()
    pkg = read_spec(spec, spec.name, diags)
    assert pkg is not None and pkg.http is not None, [str(d) for d in diags.items]
    return pkg.http


@pytest.mark.parametrize("spec", SPECS, ids=[p.name for p in SPECS])
def test_every_corpus_api_reads_back_equal(spec: Path) -> None:
    api = _api(spec)
    text = api_to_json(api)
    back = api_from_json(text)
    assert back == api
    assert dict(back.operations) == dict(api.operations)  # each operation decoded, compared
    assert api_to_json(back) == text  # and written again to the same bytes


def test_each_operation_is_one_line_of_the_file() -> None:
    api = _api(CORPUS / "oai-examples__petstore-expanded.yaml")
    lines = api_to_json(api).splitlines()
    names = list(api.operations)
    assert [json.loads("{" + line.rstrip(",") + "}").popitem()[0] for line in lines[1:-1]] == names


# A spec large enough for the lazy layout (more than LAZY_MODELS classes), with one operation of
# each kind of parameter and a body, served by a real ASGI app on 127.0.0.1.
def _large_spec(n_schemas: int = 60) -> dict[str, Any]:
    schemas: dict[str, Any] = {
        f"Thing{i}": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, f"f{i}": {"type": "string"}},
        }
        for i in range(n_schemas)
    }
    schemas["Item"] = {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "q": {"type": "string"},
            "things": {"type": "array", "items": {"type": "string"}},
        },
    }
    paths: dict[str, Any] = {
        "/items/{id}": {
            "get": {
                "operationId": "get_item",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "the item",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                        },
                    }
                },
            },
        },
        "/items": {
            "post": {
                "operationId": "make_item",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                    },
                },
                "responses": {
                    "200": {
                        "description": "the item made",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Item"}}
                        },
                    }
                },
            }
        },
    }
    for i in range(n_schemas):  # every schema reached by a tool (else it is not generated)
        paths[f"/things/{i}"] = {
            "get": {
                "operationId": f"get_thing_{i}",
                "responses": {
                    "200": {
                        "description": "a thing",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": f"#/components/schemas/Thing{i}"}
                            }
                        },
                    }
                },
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Large", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "1"}}}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


_app = FastAPI()


@_app.get("/items/{item_id}")
def _get_item(item_id: int, q: str | None = None) -> dict[str, Any]:
    """Echoes the path and query parameters."""
    return {"id": item_id, "name": "got", **({"q": q} if q is not None else {})}


@_app.post("/items")
def _make_item(body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Echoes the body."""
    return body


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    root = tmp_path_factory.mktemp("large_api")
    spec = root / "large.json"
    spec.write_text(json.dumps(_large_spec()), encoding="utf-8")
    compile_to_directory([spec], root / "out")
    pkg = load_package(root / "out", "large")
    yield root / "out" / "large", pkg
    for name in [m for m in sys.modules if m == "large" or m.startswith("large.")]:
        del sys.modules[name]


def test_a_large_package_keeps_its_api_in_http_json_and_calls_a_real_server(
    large: tuple[Path, Any],
) -> None:
    where, pkg = large
    source = (where / "http.py").read_text(encoding="utf-8")
    assert "load_api(" in source and "HttpOperation(" not in source
    http = importlib.import_module("large.http")
    api: HttpApi = http.API
    assert api == _api(where.parent.parent / "large.json")
    with serve_asgi(_app) as base:
        port = base.rsplit(":", 1)[1]
        activities = http.HttpActivities(HttpClient(api, server_variables={"port": port}))
        got = activities.get_item(pkg.models.GetItemCall(id=7, q="x"))
        assert got.ok, got.error
        assert got.data == pkg.models.GetItemOutput(id=7, name="got", q="x")
        made = activities.make_item(pkg.models.MakeItemCall(id=3, name="n", things=["a"]))
        assert made.ok, made.error
        assert made.data is not None and made.data.things == ["a"]


def test_a_small_package_writes_its_api_out_in_http_py(tmp_path: Path) -> None:
    spec = tmp_path / "small.json"
    small = _large_spec(n_schemas=2)
    spec.write_text(json.dumps(small), encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    source = (tmp_path / "out" / "small" / "http.py").read_text(encoding="utf-8")
    assert "HttpOperation(" in source and not (tmp_path / "out" / "small" / "http.json").exists()


_GONE = object()  # (an edit that removes the key)


@pytest.mark.parametrize(
    ("path", "value", "pointer", "expected"),
    [
        (["operations", "get_item", "method"], 3, "/operations/get_item/method", "a string"),
        (
            ["operations", "get_item", "parameters", 0, "location"],
            "body",
            "/operations/get_item/parameters/0/location",
            "one of 'path', 'query', 'header', 'cookie'",
        ),
        (
            ["operations", "get_item", "colour"],
            "red",
            "/operations/get_item/colour",
            "a field of HttpOperation",
        ),
        (
            ["operations", "get_item", "path"],
            _GONE,
            "/operations/get_item",
            "HttpOperation with path",
        ),
        (["servers", 0, "url"], None, "/servers/0/url", "a string"),
        (["operations"], [], "/operations", "an object"),
    ],
)
def test_an_edited_http_json_is_refused_with_its_file_and_pointer(
    path: list[str | int], value: object, pointer: str, expected: str, tmp_path: Path
) -> None:
    spec = tmp_path / "api.json"
    spec.write_text(json.dumps(_large_spec(n_schemas=3)), encoding="utf-8")
    data: dict[str, Any] = json.loads(api_to_json(_api(spec)))
    parent: Any = data
    for key in path[:-1]:
        parent = parent[key]
    if value is _GONE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    with pytest.raises(ValueError) as info:
        api = api_from_json(json.dumps(data), "pkg/http.json")
        dict(api.operations)  # (an operation is decoded when first used)
    message = str(info.value)
    assert message.startswith(f"pkg/http.json#{pointer}: error: "), message
    assert f"expected {expected}" in message and "regenerate the package" in message


def test_http_json_that_is_not_json_says_so() -> None:
    with pytest.raises(ValueError, match=r"^pkg/http\.json: error: .*regenerate the package"):
        api_from_json('{"title": ', "pkg/http.json")
