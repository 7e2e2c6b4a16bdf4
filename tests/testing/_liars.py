"""Test support: a FastAPI app that breaks the spec it serves, on purpose, one way per operation.

``SPEC`` (OpenAPI 3.0, served at ``/openapi.json``) declares what each operation answers; the
routes answer otherwise where the operation's name says so — a 500 on some input, a status not
declared, text where JSON is declared, nothing where JSON is declared, an HTML
error of a status not declared, a body without a required field, a declared header left
out, an operation that requires auth and ignores it, one that takes any token — and keep it on ``honest`` and ``guarded``.
``open`` takes a method it does not
declare, ``blunt`` refuses one without saying what is allowed. Further routes misbehave at the
HTTP level: ``slow`` sleeps past any short timeout, ``away``
redirects to another host.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse

THING = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
}
_JSON = {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}
_ERROR = {"application/json": {"schema": {"type": "object"}}}


def _get(op_id: str, *, params: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    responses = extra.pop("responses", {"200": {"description": "ok", "content": _JSON}})
    return {
        "get": {"operationId": op_id, "parameters": params or [], "responses": responses, **extra}
    }


_N = [{"name": "n", "in": "query", "required": True, "schema": {"type": "integer", "minimum": 0}}]
_BEARER: list[dict[str, list[str]]] = [{"bearer": []}]

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "liars", "version": "1"},
    "servers": [{"url": "http://liars.invalid"}],
    "components": {
        "schemas": {"Thing": THING},
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    },
    "paths": {
        # (first: a tool that cannot be called without credentials must not spend the budget)
        "/locked": _get("locked", params=_N, security=_BEARER),
        "/honest": _get(
            "honest",
            params=_N,
            responses={
                "200": {
                    "description": "ok",
                    "content": _JSON,
                    "headers": {"X-Request-Id": {"schema": {"type": "string"}}},
                },
                "default": {"description": "error", "content": _ERROR},
            },
        ),
        "/crash": _get(
            "crash",
            params=_N,
            responses={
                "200": {"description": "ok", "content": _JSON},
                "default": {"description": "error", "content": _ERROR},
            },
        ),
        "/teapot": _get("teapot"),
        "/text": _get("text"),
        "/mute": _get("mute"),
        "/lost": _get("lost"),
        "/missing": _get("missing"),
        "/headless": _get(
            "headless",
            responses={
                "200": {
                    "description": "ok",
                    "content": _JSON,
                    "headers": {"X-Request-Id": {"schema": {"type": "string"}}},
                }
            },
        ),
        "/secret": _get("secret", security=_BEARER),
        "/lenient": _get(
            "lenient",
            security=_BEARER,
            responses={
                "200": {"description": "ok", "content": _JSON},
                "401": {"description": "who are you", "content": _ERROR},
            },
        ),
        "/guarded": _get(
            "guarded",
            security=_BEARER,
            responses={
                "200": {"description": "ok", "content": _JSON},
                "401": {"description": "who are you", "content": _ERROR},
            },
        ),
        "/items": {
            "post": {
                "operationId": "create",
                "responses": {"201": {"description": "made", "content": _JSON}},
            }
        },
        "/slow": _get("slow"),
        "/open": _get("open"),
        "/blunt": _get("blunt"),
        "/away": _get("away"),
    },
}

THE_TOKEN = "s3cr3t-t0ken-value"
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
CREATED: list[int] = []


@app.get("/openapi.json")
def spec() -> dict[str, Any]:
    return SPEC


@app.get("/honest")
def honest(n: int) -> Response:
    return JSONResponse({"id": n, "name": "kept"}, headers={"X-Request-Id": "r1"})


@app.get("/crash")
def crash(n: int) -> Response:
    if n >= 3:  # (hypothesis shrinks the counterexample to n=3)
        return JSONResponse({"boom": n}, status_code=500)
    return JSONResponse({"id": n, "name": "fine"})


@app.get("/teapot")
def teapot() -> Response:
    return JSONResponse({"id": 1, "name": "tea"}, status_code=418)


@app.get("/text")
def text() -> Response:
    return PlainTextResponse("id=1 name=plain")


@app.get("/mute")
def mute() -> Response:
    return Response(status_code=200)  # (JSON declared: no body, no Content-Type)


@app.get("/lost")
def lost() -> Response:
    # (404 is not declared, and only JSON is)
    return Response("<html>gone</html>", status_code=404, media_type="text/html")


@app.get("/missing")
def missing() -> Response:
    return JSONResponse({"id": 1})


@app.get("/headless")
def headless() -> Response:
    return JSONResponse({"id": 1, "name": "no header"})


@app.get("/secret")
def secret() -> Response:
    return JSONResponse({"id": 1, "name": "anyone may read"})


@app.get("/guarded")
def guarded(request: Request) -> Response:
    if request.headers.get("authorization") != f"Bearer {THE_TOKEN}":
        return JSONResponse({"error": "unauthorised"}, status_code=401)
    return JSONResponse({"id": 1, "name": "member"})


@app.get("/lenient")
def lenient(request: Request) -> Response:
    if "authorization" not in request.headers:  # (any token will do)
        return JSONResponse({"error": "unauthorised"}, status_code=401)
    return JSONResponse({"id": 1, "name": "anyone with a token"})


@app.post("/items")
def create() -> Response:
    CREATED.append(1)
    return JSONResponse({"id": len(CREATED), "name": "new"}, status_code=201)


@app.api_route("/open", methods=["GET", "PUT"])
def open_door() -> Response:
    return JSONResponse({"id": 1, "name": "PUT is not declared, and taken"})


@app.get("/blunt")
def blunt() -> Response:
    return JSONResponse({"id": 1, "name": "blunt"})


@app.put("/blunt")
def blunt_refusal() -> Response:
    return JSONResponse({"error": "no"}, status_code=405)  # (no Allow header)


@app.get("/slow")
async def slow() -> Response:
    await asyncio.sleep(3)
    return JSONResponse({"id": 1, "name": "late"})


@app.get("/away")
def away() -> Response:
    return RedirectResponse("http://elsewhere.invalid/stolen", status_code=302)
