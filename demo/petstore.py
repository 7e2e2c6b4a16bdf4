"""A tiny petstore API on 127.0.0.1 for the README's OpenAPI example (``specs/petstore.yaml``).

``GET /api/pets?limit=N`` lists pets (the spec's ``findPets``), ``GET /api/pets/{id}`` finds one;
anything else is a 404 with a JSON message. Served with uvicorn (the ``test`` extra)::

    python demo/petstore.py                 # in the foreground, port 8000; Ctrl-C stops it
    python demo/petstore.py --detach        # in the background: prints its pid once it answers

The README's example runs against it; ``tests/cli/test_readme.py`` runs every README block with it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from typing import Any
from urllib.parse import parse_qs

PETS: list[dict[str, Any]] = [
    {"id": 1, "name": "Rex", "tag": "dog"},
    {"id": 2, "name": "Tom"},
    {"id": 3, "name": "Kit"},
]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI app."""
    if scope["type"] != "http":
        return
    status, body = 404, {"code": 404, "message": "no such resource"}
    path, method = scope["path"], scope["method"]
    if path == "/api/pets" and method == "GET":
        query = parse_qs(scope["query_string"].decode())
        try:
            limit = int(query.get("limit", ["100"])[0])
        except ValueError:
            status, body = 400, {"code": 400, "message": "limit is not an integer"}
        else:
            status, body = 200, PETS[:limit]
    elif path.startswith("/api/pets/") and method == "GET":
        found = [p for p in PETS if str(p["id"]) == path.rsplit("/", 1)[1]]
        if found:
            status, body = 200, found[0]
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def _answers(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/pets", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A tiny petstore API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--detach", action="store_true", help="serve in the background; print the pid"
    )
    args = parser.parse_args(argv)
    if args.detach:
        # the server's own messages go to a file, shown if it fails to start
        with tempfile.TemporaryFile() as log:
            process = subprocess.Popen(
                [sys.executable, __file__, "--port", str(args.port)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
            deadline = time.monotonic() + 30
            while not _answers(args.port):
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    log.seek(0)
                    err = log.read().decode(errors="replace")
                    print(
                        f"petstore did not start on 127.0.0.1:{args.port}:\n{err}", file=sys.stderr
                    )
                    return 1
                time.sleep(0.1)
        print(process.pid)
        return 0
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
