"""Test support: the real HTTP API the fault matrix calls (a raw ASGI app, served by uvicorn on
127.0.0.1), its OpenAPI spec, and the fault each of its paths plays.

Every operation answers ``{"id": <int>}`` by its spec; the paths that lie answer otherwise:
``/slow`` after 5 s, ``/garbage`` bytes that are no JSON, ``/html`` an HTML page (a proxy's error
page) as ``text/html``, ``/shape`` JSON of the wrong shape. ``POST /effect`` counts its effects in
``EFFECTS``; every request is counted in ``HITS`` by path.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from tests._servers import Receive, Send, read_body

ITEM = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
OPERATIONS = {
    "/item": ("get", "getItem"),
    "/effect": ("post", "makeEffect"),
    "/slow": ("get", "getSlow"),
    "/garbage": ("get", "getGarbage"),
    "/html": ("get", "getHtml"),
    "/shape": ("get", "getShape"),
}
SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "faults", "version": "1"},
    "paths": {
        path: {
            method: {
                "operationId": name,
                "responses": {
                    "200": {
                        "description": "the item",
                        "content": {"application/json": {"schema": ITEM}},
                    }
                },
            }
        }
        for path, (method, name) in OPERATIONS.items()
    },
}

HITS: Counter[str] = Counter()
EFFECTS: list[int] = []

ANSWERS: dict[str, tuple[bytes, bytes]] = {
    "/garbage": (b"\x00\xff<<not json", b"application/json"),
    "/html": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", b"text/html"),
    "/shape": (b'{"id": "one", "items": []}', b"application/json"),
}


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await read_body(receive)
    path = scope["path"]
    HITS[path] += 1
    if path == "/slow":
        await asyncio.sleep(5)
    if path == "/effect":
        EFFECTS.append(len(EFFECTS) + 1)
    body, kind = ANSWERS.get(path, (json.dumps({"id": HITS[path]}).encode(), b"application/json"))
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def reset() -> None:
    HITS.clear()
    EFFECTS.clear()
