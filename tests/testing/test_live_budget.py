"""The request budget is spent where there is more to draw: a tool whose distinct valid Calls
run out early (one without parameters has one) leaves its share to the others, another round
at a time, until the budget or their Calls run out. A real server on 127.0.0.1 answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Response

from tests._servers import serve_asgi
from toolbind.testing.live import check_live

_OK = {
    "200": {
        "description": "ok",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
_THING = {"name": "thing", "in": "path", "required": True, "schema": {"type": "integer"}}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "budget", "version": "1"},
    "paths": {
        "/one": {"get": {"operationId": "one", "responses": _OK}},
        "/two": {
            "get": {
                "operationId": "two",
                "parameters": [
                    {
                        "name": "side",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "enum": ["left", "right"]},
                    }
                ],
                "responses": _OK,
            }
        },
        # an item path: a sequence looks for an item, finds none (404) and ends at once
        "/things/{thing}": {
            "get": {
                "operationId": "get_thing",
                "parameters": [_THING],
                "responses": {**_OK, "404": {"description": "no such thing"}},
            },
            "delete": {
                "operationId": "delete_thing",
                "parameters": [_THING],
                "responses": {"204": {"description": "gone"}, "404": {"description": "none"}},
            },
        },
        "/many": {
            "get": {
                "operationId": "many",
                "parameters": [
                    {"name": "n", "in": "query", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": _OK,
            }
        },
    },
}


def _app() -> FastAPI:
    app = FastAPI()

    @app.api_route("/things/{thing}", methods=["GET", "DELETE"])
    def none(thing: int) -> Response:  # pyright: ignore[reportUnusedFunction]
        return Response(status_code=404)

    @app.get("/one")
    @app.get("/two")
    @app.get("/many")
    def ok() -> dict[str, bool]:  # pyright: ignore[reportUnusedFunction]
        return {"ok": True}

    return app


def test_a_budget_left_by_tools_with_few_calls_goes_to_the_others(tmp_path: Path) -> None:
    spec = tmp_path / "budget.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    with serve_asgi(_app()) as base:
        report = check_live([spec], base, tools=["one", "two", "many"], budget=90)
    assert report.ok, report.render()
    sent = {t.tool: t.requests for t in report.tools}
    # a first round gives each tool 29 (3 kept for the methods' check, one a path); "one"
    # has one Call, "two" two (each sent once, and the methods' check on each path)
    assert sent["one"] <= 2 and sent["two"] <= 3, sent
    assert sent["many"] > 29 and report.requests == 90, sent


def test_what_the_sequences_leave_of_their_share_goes_to_the_others(tmp_path: Path) -> None:
    spec = tmp_path / "budget.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    with serve_asgi(_app()) as base:
        report = check_live([spec], base, methods=("GET", "DELETE"), budget=90)
    assert report.ok, report.render()
    # a sequence's share was kept for it: each found no thing (one request) and left the rest
    assert report.requests == 90, {t.tool: t.requests for t in report.tools}
