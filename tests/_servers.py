"""Test support: serve a real ASGI app with uvicorn on 127.0.0.1 for the duration of a test.

Every test that talks HTTP (the OpenAPI test API, the scripted OpenAI-protocol server, the
pending-results endpoint) uses a real socket and a real server, so the real client code runs.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_port() -> int:
    """An ephemeral TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve_asgi(app: Any, *, startup_timeout: float = 20.0) -> Generator[str]:
    """Serve ``app`` with uvicorn in a background thread; yield its base URL (no trailing slash).

    The server is shut down (and its thread joined) when the block exits, even on error.
    """
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn:{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"uvicorn on 127.0.0.1:{port} exited during startup")
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn on 127.0.0.1:{port} did not start in time")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serve_wsgi(app: Any, *, name: str = "wsgi") -> Generator[str]:
    """Serve a WSGI ``app`` with werkzeug's threaded server on 127.0.0.1 (a free port) in a
    background thread; yield its base URL (no trailing slash). Shut down when the block exits."""
    from werkzeug.serving import make_server

    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(
        target=srv.serve_forever, name=f"{name}:{srv.server_port}", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        thread.join(timeout=10)


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
"""A raw ASGI app's ``receive`` and ``send``."""


async def echo_json(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """A raw ASGI app answering 200 with the body it was sent, as JSON."""
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Any) -> bytes:
    """The whole request body a raw ASGI app receives (its ``http.request`` messages joined)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body
