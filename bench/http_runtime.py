"""HTTP runtime overhead: ``HttpClient.call`` vs a hand-written httpx request, in the same run.

Both send the same request — ``GET /items/{id}?q=…`` with a header and a cookie — to the same
uvicorn server on 127.0.0.1 (tests/http_app.py), over one keep-alive connection pool, and parse
the JSON reply. toolbind additionally serialises the parameters from a Call, applies an API key,
checks the URL against the servers, bounds the response and validates the Output model; the
hand-written request does only what is needed to get the same bytes on the wire. What is
reported is the ratio of wall time per call (best of ``--repeat`` rounds of ``--number`` calls),
sync and async. The server's own time dominates both, so the ratio shows what the runtime adds.

Run: ``.venv/bin/python bench/http_runtime.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import http_app
from tests._servers import serve_asgi
from toolbind.runtime.http import (
    HttpApi,
    HttpClient,
    HttpOperation,
    HttpParameter,
    HttpResponse,
    HttpServer,
    SecurityRequirement,
    SecurityScheme,
)


class ItemOut(BaseModel):
    item_id: str
    q: str | None
    trace: str | None
    session: str | None
    raw_path: str


def api(base: str) -> HttpApi:
    params = (
        HttpParameter(
            name="item_id", field="item_id", location="path", style="simple", explode=False
        ),
        HttpParameter(name="q", field="q", location="query", style="form", explode=True),
        HttpParameter(
            name="x-trace", field="xTrace", location="header", style="simple", explode=False
        ),
        HttpParameter(
            name="session", field="session", location="cookie", style="form", explode=True
        ),
    )
    op = HttpOperation(
        tool="getItem",
        operation_id="getItem",
        method="GET",
        path="/items/{item_id}",
        parameters=params,
        responses=(HttpResponse(status="200", media_type="application/json", is_output=True),),
    )
    scheme = SecurityScheme(key="Key", type="apiKey", name="X-API-Key", location="header")
    return HttpApi(
        title="bench",
        servers=(HttpServer(url=base),),
        security_schemes={"Key": scheme},
        security=((SecurityRequirement(scheme="Key"),),),
        operations={"getItem": op},
    )


CALL = {"item_id": "a b", "q": "x&y", "xTrace": "t-1", "session": "abc"}


def best(fn: object, number: int, repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) / number)
    return min(times)


async def abest(fn: object, number: int, repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            await fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with serve_asgi(http_app.app) as base:
        client = HttpClient(api(base), credentials={"Key": "k-123456"})
        raw = httpx.Client()
        headers = {"x-trace": "t-1", "X-API-Key": "k-123456", "Cookie": "session=abc"}

        def with_toolbind() -> None:
            result = client.call("getItem", CALL, ItemOut)
            assert result.success, result.error

        def with_httpx() -> None:
            response = raw.get(f"{base}/items/a%20b?q=x%26y", headers=headers)
            assert response.status_code == 200
            response.json()

        with_toolbind()  # warm up both pools
        with_httpx()
        ours = best(with_toolbind, args.number, args.repeat)
        peer = best(with_httpx, args.number, args.repeat)
        print(
            f"sync : toolbind {ours * 1e6:8.0f} µs/call   httpx {peer * 1e6:8.0f} µs/call"
            f"   ratio {ours / peer:.2f}×"
        )

        async def run_async() -> tuple[float, float]:
            araw = httpx.AsyncClient()

            async def a_toolbind() -> None:
                result = await client.acall("getItem", CALL, ItemOut)
                assert result.success, result.error

            async def a_httpx() -> None:
                response = await araw.get(f"{base}/items/a%20b?q=x%26y", headers=headers)
                assert response.status_code == 200
                response.json()

            await a_toolbind()
            await a_httpx()
            ours = await abest(a_toolbind, args.number, args.repeat)
            peer = await abest(a_httpx, args.number, args.repeat)
            await araw.aclose()
            await client.aclose()
            return ours, peer

        ours, peer = asyncio.run(run_async())
        print(
            f"async: toolbind {ours * 1e6:8.0f} µs/call   httpx {peer * 1e6:8.0f} µs/call"
            f"   ratio {ours / peer:.2f}×"
        )
        raw.close()
        client.close()


if __name__ == "__main__":
    main()
