"""Test support: FastAPI apps that keep — or break, on purpose — the promises the live checks on
data and state test: a valid Call is accepted, a forbidden one refused, an item created can be
read back and one deleted is gone.

``DATA_SPEC`` (OpenAPI 3.0) has ``strict`` (a query with an integer range and an enum) and
``strict_body`` (a JSON body), which ``data_app(lax=False)`` validates (422 for anything the spec
forbids) and ``data_app(lax=True)`` answers 200 whatever it is sent; and ``picky``, which refuses
odd numbers the spec allows (400). ``CRUD_SPEC`` describes ``/items``: create (POST), read (GET)
and delete (DELETE) ``/items/{itemId}``; ``crud_app("good")`` keeps it, ``"zombie"`` still
serves a deleted item and ``"ghost"`` forgets what it created.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

_OK = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}
_JSON_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": _OK}}}}
_ERRORS: dict[str, Any] = {
    code: {"description": "refused", "content": {"application/json": {"schema": {}}}}
    for code in ("400", "422")
}

DATA_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "keepers", "version": "1"},
    "paths": {
        "/strict": {
            "get": {
                "operationId": "strict",
                "parameters": [
                    {
                        "name": "n",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "integer", "minimum": 0, "maximum": 10},
                    },
                    {
                        "name": "kind",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "enum": ["a", "b"]},
                    },
                ],
                "responses": {**_JSON_OK, **_ERRORS},
            }
        },
        "/strict-body": {
            "post": {
                "operationId": "strict_body",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name", "count"],
                                "properties": {
                                    "name": {"type": "string", "maxLength": 5},
                                    "count": {"type": "integer"},
                                },
                            }
                        }
                    },
                },
                "responses": {**_JSON_OK, **_ERRORS},
            }
        },
        "/picky": {
            "get": {
                "operationId": "picky",
                "parameters": [
                    {"name": "n", "in": "query", "required": True, "schema": {"type": "integer"}}
                ],
                "responses": {**_JSON_OK, **_ERRORS},
            }
        },
    },
}


class _Body(BaseModel):
    model_config = ConfigDict(strict=True)
    name: str = Field(max_length=5)
    count: int


def data_app(*, lax: bool) -> FastAPI:
    """``DATA_SPEC``'s server: validating everything (``lax=False``) or nothing."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.get("/openapi.json")(lambda: DATA_SPEC)
    if lax:

        @app.get("/strict")
        @app.post("/strict-body")
        def anything() -> dict[str, bool]:
            return {"ok": True}

    else:

        @app.get("/strict")
        def strict(n: int = Query(ge=0, le=10), kind: Literal["a", "b"] = Query()) -> Any:
            return {"ok": True}

        @app.post("/strict-body")
        def strict_body(body: _Body) -> Any:
            return {"ok": True}

    @app.get("/picky")
    def picky(n: int) -> Response:
        if n % 2:  # (the spec allows every integer)
            return JSONResponse({"error": "odd"}, status_code=400)
        return JSONResponse({"ok": True})

    return app


_ITEM = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
}
_ITEM_ID = [{"name": "itemId", "in": "path", "required": True, "schema": {"type": "integer"}}]
_MISSING: dict[str, Any] = {
    "404": {"description": "no such item", "content": {"application/json": {"schema": {}}}}
}

CRUD_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "crud", "version": "1"},
    "paths": {
        "/items": {
            "post": {
                "operationId": "create_item",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {"name": {"type": "string"}},
                            }
                        }
                    },
                },
                "responses": {
                    "201": {
                        "description": "made",
                        "content": {"application/json": {"schema": _ITEM}},
                    }
                },
            }
        },
        "/items/{itemId}": {
            "get": {
                "operationId": "get_item",
                "parameters": _ITEM_ID,
                "responses": {
                    "200": {
                        "description": "the item",
                        "content": {"application/json": {"schema": _ITEM}},
                    },
                    **_MISSING,
                },
            },
            "delete": {
                "operationId": "delete_item",
                "parameters": _ITEM_ID,
                "responses": {"204": {"description": "gone"}, **_MISSING},
            },
        },
    },
}


def _linked(spec: dict[str, Any]) -> dict[str, Any]:
    """``CRUD_SPEC`` where a created thing is ``{"uid": …}`` under ``/things/{thingId}``: no id
    to infer (neither ``thingId`` nor ``id``), the create's links say where it is."""
    text = json.dumps(spec).replace("/items", "/things").replace("itemId", "thingId")
    out: dict[str, Any] = json.loads(text.replace('"id"', '"uid"').replace("_item", "_thing"))
    made = out["paths"]["/things"]["post"]["responses"]["201"]
    made["links"] = {
        "GetThing": {"operationId": "get_thing", "parameters": {"thingId": "$response.body#/uid"}},
        "DeleteThing": {"$ref": "#/components/links/DeleteThing"},
    }
    out["components"] = {
        "links": {
            "DeleteThing": {
                "operationRef": "#/paths/~1things~1{thingId}/delete",
                "parameters": {"path.thingId": "$response.body#/uid"},
            }
        }
    }
    return out


LINKED_SPEC = _linked(CRUD_SPEC)

Mode = Literal["good", "zombie", "ghost"]


class _New(BaseModel):
    name: str


def crud_app(mode: Mode, *, linked: bool = False) -> FastAPI:
    """``CRUD_SPEC``'s server: keeping it (``good``), serving deleted items (``zombie``) or
    forgetting created ones (``ghost``); ``linked``: ``LINKED_SPEC``'s, the same under other
    names."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.get("/openapi.json")(lambda: LINKED_SPEC if linked else CRUD_SPEC)
    where, key = ("/things", "uid") if linked else ("/items", "id")
    items: dict[int, dict[str, Any]] = {}
    ids = itertools.count(1)

    @app.post(where, status_code=201)
    def create(new: _New) -> dict[str, Any]:
        ident = next(ids)
        item: dict[str, Any] = {key: ident, "name": new.name}
        if mode != "ghost":
            items[ident] = item
        return item

    # one route for both methods: Starlette's 405 lists only the first route's in Allow
    @app.api_route(where + "/{item_id}", methods=["GET", "DELETE"])
    def item(item_id: int, request: Request) -> Response:
        if item_id not in items:
            return JSONResponse({"error": "no such item"}, status_code=404)
        if request.method == "GET":
            return JSONResponse(items[item_id])
        if mode != "zombie":
            del items[item_id]
        return Response(status_code=204)

    return app


_NAME = [
    {
        "name": "name",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[a-z]{1,8}$"},
    }
]
_VALUE = {"type": "object", "required": ["value"], "properties": {"value": {"type": "string"}}}
_VALUE_BODY = {"required": True, "content": {"application/json": {"schema": _VALUE}}}


def _at_item(op_id: str, **extra: Any) -> dict[str, Any]:
    ok = {"description": "ok", "content": {"application/json": {"schema": _VALUE}}}
    return {"operationId": op_id, "parameters": _NAME, "responses": {"200": ok, **_MISSING}} | extra


ITEM_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "items at their own paths", "version": "1"},
    "paths": {
        # made at its path (PUT), read, deleted: no collection to create in
        "/slots/{name}": {
            "put": _at_item("put_slot", requestBody=_VALUE_BODY),
            "get": _at_item("get_slot"),
            "delete": _at_item("delete_slot"),
        },
        # a create whose answer names no id (nothing to read back by)
        "/words": {
            "post": {
                "operationId": "add_word",
                "requestBody": _VALUE_BODY,
                "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
            }
        },
        # read and deleted: every word is there until it is deleted
        "/words/{name}": {"get": _at_item("get_word"), "delete": _at_item("delete_word")},
    },
}


def item_app(mode: Literal["good", "zombie"]) -> FastAPI:
    """``ITEM_SPEC``'s server: a slot put is there until deleted, every word until deleted
    (``good``); ``zombie`` deletes nothing and says it did."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.get("/openapi.json")(lambda: ITEM_SPEC)
    slots: dict[str, str] = {}
    deleted: set[str] = set()

    def missing() -> JSONResponse:
        return JSONResponse({"error": "no such item"}, status_code=404)

    @app.api_route("/slots/{name}", methods=["PUT", "GET", "DELETE"])
    async def slot(name: str, request: Request) -> Response:
        if request.method == "PUT":
            slots[name] = str((await request.json()).get("value", ""))
        if name not in slots:
            return missing()
        value = slots[name]
        if request.method == "DELETE" and mode != "zombie":
            del slots[name]
        return JSONResponse({"value": value})

    @app.post("/words")
    def add_word() -> dict[str, bool]:  # pyright: ignore[reportUnusedFunction]
        return {"added": True}

    @app.api_route("/words/{name}", methods=["GET", "DELETE"])
    def word(name: str, request: Request) -> Response:
        if name in deleted:
            return missing()
        if request.method == "DELETE" and mode != "zombie":
            deleted.add(name)
        return JSONResponse({"value": name})

    return app
