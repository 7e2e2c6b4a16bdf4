"""Shapes met calling Label Studio (its drf-spectacular OpenAPI 3.0 spec, 190 operations),
Evidently's UI server (Litestar, OpenAPI 3.1, 66 operations), Apache Airflow 2's REST API
(connexion, OpenAPI 3.0, 89 operations) and Apache Superset's (Flask-AppBuilder's apispec,
OpenAPI 3.0, 276 operations) through their generated Activities, each reduced to a minimal spec
of our own and checked on a real server (a raw ASGI app, uvicorn on 127.0.0.1):

- a file download declared as a ``format: binary`` string under ``application/json`` or
  ``application/*`` (Label Studio's export download, a JSON file served as
  ``application/json``): the answer was parsed as JSON and failed the Output's string on every
  call; it is the content itself, held as base64 as binary content is;
- a path parameter holding ``/``, ``?`` or a space (Evidently's project search by name): sent
  percent-encoded, but the result's ``metadata["url"]`` and the error named the decoded path,
  ``/search/a b/c?d`` — read as two segments and a query, which is not what went out;
- a ``type`` beside a ``oneOf`` whose branches declare types it excludes (Label Studio's filter
  value: ``type: object`` beside ``oneOf [string, integer, number, boolean, object, object]``;
  Litestar's optional array query parameter: ``type: array`` beside ``oneOf [array, null]``):
  every branch but the objects could never match, so a number filter's Call (``value: 0``) was
  refused, and nothing said why; read as the branches' own types, with a located warning;
- an API that declares security schemes but requires none anywhere (Airflow's served spec says
  ``security: []``; its auth backend wants basic auth on every call): the configured
  ``credentials={"Basic": ...}`` were never sent, and every call came back 401; they are sent on
  every operation — while an API that requires a scheme on some operations still sends nothing
  on those that say ``security: []``;
- a multipart file a server takes only under a name with its extension (Evidently's dataset
  upload: "Extension not allowed"): the part was always named after the property (``file``),
  so no upload could succeed; a data URL (``data:text/csv;name=ds.csv;base64,...``, how
  OpenAI's file inputs hand a file over) names it, or its media type gives the extension;
- an answer with members its closed Output object does not declare (Superset writes one
  ``additionalProperties: false`` component for a request body and the answer, which carries
  more: an annotation's ``layer``, the user's ``firstName``...): every such call was a failed
  output check though it went through; a success with the data as sent and
  ``metadata["extras"]`` naming the members — any other mismatch still fails.
"""

from __future__ import annotations

import base64
import json
import logging
from types import ModuleType
from typing import Any

import pytest

from tests._servers import Receive, Send, echo_json, read_body, serve_asgi
from tests.conftest import CompileSpec
from toolbind.compiler import generate_tree
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.0.3
info: {title: downloads, version: '1'}
paths:
  /export/{kind}:
    get:
      operationId: export
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: Exported data
          content: {application/json: {schema: {type: string, format: binary}}}
  /exports/{kind}/download:
    get:
      operationId: download
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200': {description: Export file, content: {'application/*': {schema: {type: string, format: binary}}}}
  /tasks/{kind}:
    get:
      operationId: tasks
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: a JSON answer
          content: {application/json: {schema: {type: array, items: {type: object}}}}
  /search/{name}:
    get:
      operationId: search
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      responses:
        '200': {description: found, content: {application/json: {schema: {type: array}}}}
        '404': {description: none}
"""

FILE = json.dumps([{"id": 1, "data": {"text": "x", "n": 1.50, "e": ""}}], indent=1).encode()
MEDIA = {"json": b"application/json", "zip": b"application/zip", "csv": b"text/csv"}
BODIES = {"json": FILE, "zip": b"PK\x03\x04\x00\xff", "csv": b"a,b\n1,2\n"}
SEEN: list[bytes] = []


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    SEEN.append(scope["raw_path"])
    if scope["path"].startswith("/search/"):
        body, status, media = b'{"detail": "Not Found"}', 404, b"application/json"
    else:
        kind = scope["path"].split("/")[2]
        body, status, media = BODIES[kind], 200, MEDIA[kind]
    headers = [(b"content-type", media), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    return compile_spec(SPEC, suffix=".yaml")


def _call(pkg: ModuleType, payload: dict[str, Any]) -> Any:
    with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
        call = pkg.CallAdapter.validate_python(payload)
        return pkg.HttpActivities(client).activities()[payload["_tool"]](call)


@pytest.mark.parametrize("tool", ["export", "download"])
@pytest.mark.parametrize("kind", ["json", "zip"])
def test_a_binary_output_is_the_content_as_sent_even_when_it_is_json(
    pkg: ModuleType, tool: str, kind: str
) -> None:
    result = _call(pkg, {"_tool": tool, "kind": kind})
    assert result.success, result.error
    assert base64.b64decode(result.data.root) == BODIES[kind]  # byte for byte, not re-encoded
    assert "read_as" not in result.metadata


def test_a_json_output_is_still_parsed(pkg: ModuleType) -> None:
    result = _call(pkg, {"_tool": "tasks", "kind": "json"})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == json.loads(FILE)


def test_the_url_a_result_names_is_the_one_sent(pkg: ModuleType) -> None:
    SEEN.clear()
    result = _call(pkg, {"_tool": "search", "name": "a b/c?d#e%f"})
    assert SEEN == [b"/search/a%20b%2Fc%3Fd%23e%25f"]
    assert not result.success and result.metadata["status"] == 404
    assert result.metadata["url"].endswith("/search/a%20b%2Fc%3Fd%23e%25f")
    assert "from GET http://127.0.0.1:" in (result.error or "")
    assert "/search/a%20b%2Fc%3Fd%23e%25f: " in (result.error or "")


FILTER_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "filters", "version": "1"},
    "paths": {
        "/views": {
            "post": {
                "operationId": "createView",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "value": {
                                        "type": "object",
                                        "oneOf": [
                                            {"type": "string"},
                                            {"type": "integer"},
                                            {"type": "number", "format": "float"},
                                            {"type": "boolean"},
                                            {"type": "object", "title": "Dictionary"},
                                        ],
                                    },
                                    "ids": {
                                        "type": "array",
                                        "oneOf": [
                                            {"type": "array", "items": {"type": "integer"}},
                                            {"type": "null"},
                                        ],
                                    },
                                    "kept": {
                                        "type": "object",
                                        "oneOf": [
                                            {"type": "object", "required": ["a"]},
                                            {"type": "object", "required": ["b"]},
                                        ],
                                    },
                                },
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "echo", "content": {"application/json": {}}}},
            }
        }
    },
}


def test_a_type_beside_oneof_that_excludes_its_branches_is_read_as_the_branches(
    compile_spec: CompileSpec, tmp_path: Any
) -> None:
    spec = tmp_path / "filters.json"
    spec.write_text(json.dumps(FILTER_SPEC), encoding="utf-8")
    said = [d.render() for d in generate_tree([spec]).diagnostics if "beside" in d.found]
    base = (
        "filters.json#/paths/~1views/post/requestBody/content/application~1json/schema/properties"
    )
    assert len(said) == 2, said
    assert f"{base}/value/type: warning: type object beside oneOf excludes branch(es) 0 " in said[0]
    assert "0 (string), 1 (integer), 2 (number), 3 (boolean): no value could match" in said[0]
    assert (
        f"{base}/ids/type: warning: type array beside oneOf excludes branch(es) 1 (null)"
        in (said[1])
    )
    pkg = compile_spec(FILTER_SPEC)
    with serve_asgi(echo_json) as url, HttpClient(pkg.API, base_url=url) as client:
        run = pkg.HttpActivities(client).activities()["createView"]
        for value in (0, 1.5, "x", True, {"min": 0}):
            call = pkg.CallAdapter.validate_python({"_tool": "createView", "value": value})
            result = run(call)
            assert result.success, result.error
            assert result.data.root == {"value": value}  # sent as given
    with pytest.raises(ValueError, match="kept"):  # a type the branches agree with still holds
        pkg.CallAdapter.validate_python({"_tool": "createView", "kept": 1})


def _secured(security: list[Any], open_op_security: list[Any] | None) -> dict[str, Any]:
    listed: dict[str, Any] = {
        "operationId": "listDags",
        "responses": {"200": {"description": "ok"}},
    }
    health: dict[str, Any] = {"operationId": "health", "responses": {"200": {"description": "ok"}}}
    if open_op_security is not None:
        health["security"] = open_op_security
    return {
        "openapi": "3.0.3",
        "info": {"title": "secured", "version": "1"},
        "security": security,
        "components": {
            "securitySchemes": {
                "Basic": {"type": "http", "scheme": "basic"},
                "Kerberos": {"type": "http", "scheme": "negotiate"},
            }
        },
        "paths": {"/dags": {"get": listed}, "/health": {"get": health}},
    }


authorizations: list[str | None] = []


async def basic_only(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """401 unless the request carries ann's basic credentials (as Airflow's auth backend)."""
    if scope["type"] != "http":
        return
    await read_body(receive)
    given = dict(scope["headers"]).get(b"authorization")
    authorizations.append(given.decode() if given else None)
    ok = given == b"Basic " + base64.b64encode(b"ann:pw-secret-1")
    body = b'{"dags": []}' if ok else b'{"status": 401, "title": "Unauthorized"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200 if ok else 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _run_both(pkg: ModuleType) -> list[Any]:
    authorizations.clear()
    with (
        serve_asgi(basic_only) as url,
        HttpClient(pkg.API, base_url=url, credentials={"Basic": ("ann", "pw-secret-1")}) as client,
    ):
        acts = pkg.HttpActivities(client).activities()
        return [
            acts[t](pkg.CallAdapter.validate_python({"_tool": t})) for t in ("listDags", "health")
        ]


def test_credentials_are_sent_where_the_api_requires_no_scheme_anywhere(
    compile_spec: CompileSpec,
) -> None:
    pkg = compile_spec(_secured([], None))
    results = _run_both(pkg)
    assert [r.metadata["status"] for r in results] == [200, 200], [r.error for r in results]
    assert all(r.success for r in results)
    sent = "Basic " + base64.b64encode(b"ann:pw-secret-1").decode()
    assert authorizations == [sent, sent]


def test_an_operation_that_opts_out_of_a_required_scheme_is_sent_without_it(
    compile_spec: CompileSpec,
) -> None:
    pkg = compile_spec(_secured([{"Basic": []}], []))
    dags, health = _run_both(pkg)
    assert dags.success, dags.error
    assert not health.success and health.metadata["status"] == 401  # as its spec says: no auth
    assert authorizations[1] is None


UPLOAD_SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "uploads", "version": "1"},
    "paths": {
        "/upload": {
            "post": {
                "operationId": "upload",
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["name", "file"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "file": {
                                        "type": "string",
                                        "format": "binary",
                                        "contentMediaType": "application/octet-stream",
                                    },
                                },
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "made", "content": {"application/json": {}}}},
            }
        }
    },
}


async def file_echo(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """The file part as a multipart parser reads it: filename, content type, content."""
    from starlette.datastructures import UploadFile
    from starlette.requests import Request

    form = await Request(scope, receive).form()
    upload = form["file"]
    assert isinstance(upload, UploadFile)
    seen = {
        "filename": upload.filename,
        "type": upload.content_type,
        "content": (await upload.read()).decode(),
        "name": form["name"],
    }
    body = json.dumps(seen).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.mark.parametrize(
    ("given", "filename", "media"),
    [
        ("data:text/csv;name=sweep%20ds.csv;base64,", "sweep ds.csv", "text/csv"),
        ("data:text/csv;base64,", "file.csv", "text/csv"),
        ("data:;name=../../etc/ds.csv;base64,", "ds.csv", "text/csv"),  # a name, not a path
        ("data:application/x-ndjson;name=d.csv;base64,", "d.csv", "application/x-ndjson"),
        ("", "file", "application/octet-stream"),  # plain base64, as before
    ],
)
def test_a_data_url_names_the_file_it_uploads(
    compile_spec: CompileSpec, given: str, filename: str, media: str
) -> None:
    pkg = compile_spec(UPLOAD_SPEC)
    csv = "a,b\n1,x\n"
    value = given + base64.b64encode(csv.encode()).decode()
    with serve_asgi(file_echo) as url, HttpClient(pkg.API, base_url=url) as client:
        call = pkg.CallAdapter.validate_python({"_tool": "upload", "name": "ds1", "file": value})
        result = pkg.HttpActivities(client).activities()["upload"](call)
    assert result.success, result.error
    seen = result.data.root
    assert (seen["filename"], seen["type"]) == (filename, media)
    assert (seen["content"], seen["name"]) == (csv, "ds1")


CLOSED_SPEC: dict[str, Any] = {
    "openapi": "3.0.2",
    "info": {"title": "closed", "version": "1"},
    "paths": {
        "/annotation/{case}": {
            "put": {
                "operationId": "putAnnotation",
                "parameters": [
                    {"name": "case", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "changed",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "number"},
                                        "result": {"$ref": "#/components/schemas/Annotation"},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        }
    },
    "components": {
        "schemas": {
            "Annotation": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"short_descr": {"type": "string"}, "long_descr": {"type": "string"}},
            }
        }
    },
}

CLOSED_ANSWERS: dict[str, Any] = {
    "extra": {"id": 2, "result": {"short_descr": "a", "layer": 2, "json_metadata": ""}},
    "extra_and_null": {"id": 2, "result": {"short_descr": "a", "long_descr": None, "layer": 2}},
    "extra_and_wrong": {"id": "2", "result": {"short_descr": "a", "layer": 2}},
    "as_declared": {"id": 2, "result": {"short_descr": "a"}},
}


async def closed_app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await read_body(receive)
    body = json.dumps(CLOSED_ANSWERS[scope["path"].rsplit("/", 1)[1]]).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def test_members_a_closed_output_does_not_declare_are_a_success_said_in_metadata(
    compile_spec: CompileSpec, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "toolbind.runtime.http")
    pkg = compile_spec(CLOSED_SPEC)
    results: dict[str, Any] = {}
    with serve_asgi(closed_app) as url, HttpClient(pkg.API, base_url=url) as client:
        run = pkg.HttpActivities(client).activities()["putAnnotation"]
        for case in CLOSED_ANSWERS:
            results[case] = run(
                pkg.CallAdapter.validate_python({"_tool": "putAnnotation", "case": case})
            )
    extra = results["extra"]
    assert extra.success, extra.error
    assert extra.data == CLOSED_ANSWERS["extra"]  # as sent: nothing dropped
    assert extra.metadata["extras"] == ["result/json_metadata", "result/layer"]
    assert "does not declare: result/json_metadata, result/layer" in caplog.text
    mixed = results["extra_and_null"]
    assert mixed.success and mixed.data == CLOSED_ANSWERS["extra_and_null"]
    assert (mixed.metadata["extras"], mixed.metadata["nulls"]) == (
        ["result/layer"],
        ["result/long_descr"],
    )
    wrong = results["extra_and_wrong"]
    assert not wrong.success and wrong.metadata["error_type"] == "invalid_output"
    assert "extras" not in wrong.metadata
    plain = results["as_declared"]
    assert plain.success and "extras" not in plain.metadata
    assert plain.data.model_dump(mode="json", exclude_unset=True) == CLOSED_ANSWERS["as_declared"]
