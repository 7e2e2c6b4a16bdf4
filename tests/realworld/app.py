"""A small ASGI app that behaves like the real APIs the specs in ``specs/`` describe."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from email.message import Message
from email.parser import BytesParser
from typing import Any, cast
from urllib.parse import parse_qsl

from tests._servers import read_body

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LOGO = bytes(range(256))


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    assert scope["type"] == "http"
    body = await read_body(receive)
    path: str = scope["path"]
    method: str = scope["method"]
    status, media, content = 404, "application/json", b'{"error": "not found"}'
    extra: list[tuple[bytes, bytes]] = []
    if path == "/api/things" and method == "GET":
        status, content = 200, json.dumps([{"name": "a"}, {"name": "b"}]).encode()
    elif path == "/api/things" and method == "POST":
        status, media, content = 204, "", b""
    elif path == "/api/readme":
        status, media, content = 200, "text/plain; charset=utf-8", b"# Read me\n"
    elif path == "/api/logo":
        status, media, content = 200, "image/png", LOGO
    elif path.startswith("/api/users/") and "/items/" in path:
        parts = path.split("/")  # /api/users/{userId}/items/{itemId}
        status = 200
        content = json.dumps({"n": int(parts[5]), "user": parts[3]}).encode()
    elif path.startswith("/api/pets/") and method == "GET":
        pet_id = int(path.rsplit("/", 1)[1])
        if pet_id == 404:
            status, content = 404, b'{"error": "no such pet"}'
        else:
            status, content = 200, json.dumps({"id": pet_id, "name": f"pet{pet_id}"}).encode()
    elif path == "/api/pets" and method == "POST":
        status, content = 201, json.dumps({"id": 1, **json.loads(body)}).encode()
    elif path == "/api/count" and method == "POST":  # SSE when the body says stream: true
        asked = json.loads(body)
        status = 200
        if asked.get("stream"):
            media = "text/event-stream"
            events = [json.dumps({"n": n}) for n in range(1, asked["upto"] + 1)] + ["[DONE]"]
            content = "".join(f"data: {e}\n\n" for e in events).encode()
        else:
            content = json.dumps({"n": asked["upto"]}).encode()
    elif path.startswith("/api/snapshots/"):  # /api/snapshots/{bucket}/{name}@{at}
        _, bucket, name_at = path.removeprefix("/api/").split("/")
        name, at = name_at.split("@")
        if dict(scope["headers"]).get(b"if-none-match") == b'"v1"':
            status, media, content = 304, "", b""
        else:
            status = 200
            content = json.dumps({"bucket": bucket, "name": name, "at": int(at)}).encode()
    elif path == "/api/versioned":  # declared and undeclared response headers
        status, content = 200, b'{"v": 3}'
        extra = [
            (b"last-modified", b"Tue, 24 Nov 2026 10:00:00 GMT"),
            (b"etag", b'"v3"'),
            (b"set-cookie", b"session=s3cr3t-session-id; HttpOnly"),
            (b"x-undeclared", b"not reported"),
        ]
    elif path == "/api/incidents":  # versioned by media type: any other Accept is refused
        accept = dict(scope["headers"]).get(b"accept", b"").decode()
        if accept != "application/vnd.acme+json;version=2":
            status, content = 406, json.dumps({"error": f"not acceptable: {accept}"}).encode()
        else:
            limit = int(scope["query_string"].decode().partition("limit=")[2] or 0)
            status, content = 200, json.dumps({"incidents": ["i1"], "limit": limit}).encode()
    elif path == "/api/status":
        accept = dict(scope["headers"]).get(b"accept", b"").decode()
        status, content = 200, json.dumps({"accept": accept}).encode()
    elif path == "/api/tasks" and method == "POST":
        stored = {"id": 1, **json.loads(body), "invoiced": None}
        status, content = 201, json.dumps(stored).encode()
    elif path == "/api/secret":
        if dict(scope["headers"]).get(b"x-api-key") == b"k1":
            status, content = 200, b'{"secret": "s"}'
        else:
            status, content = 401, b'{"error": "no key"}'
    elif path.endswith("/release-threshold-statuses"):
        status, content = 200, b'{"prod": [{"id": 1}], "staging": []}'
    elif path == "/api/forms" and method == "POST":  # the form fields, as read
        status, content = 200, json.dumps(parse_qsl(body.decode(), strict_parsing=True)).encode()
    elif path == "/api/uploads" and method == "POST":  # the multipart parts' names and texts
        ctype = dict(scope["headers"]).get(b"content-type", b"").decode()
        message = BytesParser().parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + body)
        read: list[list[str]] = []
        for part in cast("list[Message]", message.get_payload()):
            payload: object = part.get_payload(decode=True)
            text = payload.decode() if isinstance(payload, bytes) else ""
            read.append([str(part.get_param("name", header="content-disposition")), text])
        content = json.dumps(read).encode()
        status = 200
    elif path == "/api/charges" and method == "POST":  # the form fields, as read
        status, content = 200, json.dumps(parse_qsl(body.decode(), strict_parsing=True)).encode()
    elif path.startswith("/api/pods") and method in ("PATCH", "POST"):  # the type and body read
        ctype = dict(scope["headers"]).get(b"content-type", b"").decode()
        status, content = 200, json.dumps({"type": ctype, "body": json.loads(body)}).encode()
    elif path == "/api/prism" and method == "POST":  # the version asked for, as a string
        status, content = 200, json.dumps({"version": json.loads(body).get("version")}).encode()
    elif path == "/api/assets" and method == "POST":  # the asset, as sent
        status, content = 200, body
    elif path.startswith("/api/notes/"):
        status, content = 200, json.dumps({"title": path.rsplit("/", 1)[1], "due": None}).encode()
    headers = [(b"content-type", media.encode())] if media else []
    headers += extra
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})
