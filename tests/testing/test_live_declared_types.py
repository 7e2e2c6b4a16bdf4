"""``content_type_conformance`` reads every media type the spec declares for a status, not only
the one the tool's Output model reads: in a Swagger 2.0 spec, the types an operation
``produces`` hold for its responses with a schema and without one (httpbin's spec describes
no body, and says ``produces: [text/plain]`` where JSON comes back); an answer in any of
several declared types keeps the promise. A real server on 127.0.0.1 answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response

from tests._servers import serve_asgi
from toolbind.testing.live import LiveReport, check_live

_OK = {"200": {"description": "ok"}}

SWAGGER: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "produced", "version": "1"},
    "produces": ["application/json"],
    "paths": {
        # no body described: only produces says what comes back
        "/said": {"get": {"operationId": "said", "produces": ["text/plain"], "responses": _OK}},
        "/kept": {"get": {"operationId": "kept", "produces": ["text/plain"], "responses": _OK}},
        # JSON produced, an empty body said to be HTML (httpbin's 401 to /bearer)
        "/empty": {
            "get": {"operationId": "empty", "produces": ["application/json"], "responses": _OK}
        },
        # the document's produces, where the operation names none
        "/inherited": {"get": {"operationId": "inherited", "responses": _OK}},
        # two types produced, a schema: the second one answered
        "/picture": {
            "get": {
                "operationId": "picture",
                "produces": ["image/png", "image/jpeg"],
                "responses": {"200": {"description": "a picture", "schema": {"type": "file"}}},
            }
        },
    },
}


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/said")
    def said() -> JSONResponse:  # pyright: ignore[reportUnusedFunction]
        return JSONResponse({"said": "json, where text/plain is produced"})

    @app.get("/kept")
    def kept() -> Response:  # pyright: ignore[reportUnusedFunction]
        return Response("text, as produced", media_type="text/plain")

    @app.get("/empty")
    def empty() -> Response:  # pyright: ignore[reportUnusedFunction]
        return Response(b"", media_type="text/html")

    @app.get("/inherited")
    def inherited() -> Response:  # pyright: ignore[reportUnusedFunction]
        return Response("<p>html</p>", media_type="text/html")

    @app.get("/picture")
    def picture() -> Response:  # pyright: ignore[reportUnusedFunction]
        return Response(b"\xff\xd8\xff\xe0jpeg", media_type="image/jpeg")

    return app


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    spec = tmp_path_factory.mktemp("produced") / "produced.json"
    spec.write_text(json.dumps(SWAGGER), encoding="utf-8")
    with serve_asgi(_app()) as base:
        yield spec, base


def _checks(report: LiveReport) -> dict[str, list[str]]:
    return {t.tool: sorted({f.check for f in t.failures}) for t in report.tools if not t.skipped}


def test_swagger_produces_holds_for_a_response_without_a_schema(
    produced: tuple[Path, str],
) -> None:
    spec, base = produced
    report = check_live([spec], base, budget=25)
    assert _checks(report) == {
        "said": ["content_type_conformance"],
        "kept": [],
        "empty": ["content_type_conformance"],
        "inherited": ["content_type_conformance"],
        "picture": [],
    }, report.render()
    (said,) = report.failures("said")
    assert said.message == "application/json for status 200; declared: text/plain"
    assert said.pointer.endswith("produced.json#/paths/~1said/get/produces")
    (empty,) = report.failures("empty")
    assert empty.message == "text/html (no body) for status 200; declared: application/json"
    (inherited,) = report.failures("inherited")
    assert inherited.message.startswith("text/html for status 200; declared: application/json")
    assert inherited.pointer.endswith("produced.json#/produces")


def test_a_response_in_another_file_is_read_as_compiled(tmp_path: Path) -> None:
    # the spec read again follows local $refs only: where a response is in another file, the
    # compiled contract's media type is what the answer is held to
    (tmp_path / "responses.json").write_text(
        json.dumps({"Ok": {"description": "ok", "content": {"application/json": {"schema": {}}}}}),
        encoding="utf-8",
    )
    spec = tmp_path / "split.json"
    ok = {"200": {"$ref": "responses.json#/Ok"}}
    paths = {"/inherited": {"get": {"operationId": "html", "responses": ok}}}
    spec.write_text(
        json.dumps({"openapi": "3.0.3", "info": {"title": "s", "version": "1"}, "paths": paths}),
        encoding="utf-8",
    )
    with serve_asgi(_app()) as base:
        report = check_live([spec], base, budget=4)
    (found,) = report.failures("html")
    assert found.message == "text/html for status 200; declared: application/json"
