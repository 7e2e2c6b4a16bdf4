"""A kept-alive connection the server closes as the next call goes out (found on Arize Phoenix, a
FastAPI server: a duplicate project name is an unhandled error, Starlette answers 500 and uvicorn
then closes the connection — without ``Connection: close``, so the client keeps it for the next
call). The next call went out on it and broke before any answer (``ReadError``), and even a GET
was a failed call: a failure after the request was sent was retried only when it was a timeout.
Now an idempotent request (GET, PUT, DELETE…, or an operation that takes an ``Idempotency-Key``)
is sent again on a new connection, within the retry policy; a POST is not (it may have been
done), and its error says so. Checked on uvicorn on 127.0.0.1 with a raw ASGI app that does what
Starlette's error middleware does."""

from __future__ import annotations

import asyncio
import json
from types import ModuleType
from typing import Any

import pytest

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import CompileSpec
from toolbind.runtime.http import HttpClient, RetryPolicy

SPEC = """\
openapi: 3.1.0
info: {title: dropped connections, version: '1'}
paths:
  /projects:
    post:
      operationId: createProject
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}}}
      responses:
        '200': {description: made, content: {application/json: {schema: {type: object}}}}
    get:
      operationId: getProjects
      responses:
        '200': {description: the projects, content: {application/json: {schema: {type: array}}}}
  /keyed:
    post:
      operationId: keyedCreate
      parameters: [{name: Idempotency-Key, in: header, schema: {type: string}}]
      responses:
        '200': {description: made, content: {application/json: {schema: {type: object}}}}
"""

PROJECTS: list[str] = []
DOOMED: set[tuple[str, int]] = set()  # the connections (client addresses) about to be closed
FAST = RetryPolicy(max_attempts=3, backoff=0.01, max_backoff=0.05)


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    name = json.loads(body)["name"] if body else ""
    client = tuple(scope["client"])
    if scope["method"] == "POST" and name in PROJECTS:
        # Starlette's ServerErrorMiddleware: the 500 goes out, then the error is raised again
        # and uvicorn, the response sent, closes the connection — while the next request that
        # came on it is being answered (a database query long: the wait below)
        DOOMED.add(client)
        await _answer(send, 500, b"Internal Server Error", b"text/plain; charset=utf-8")
        await asyncio.sleep(0.1)
        raise RuntimeError(f"UNIQUE constraint failed: projects.name ({name})")
    if client in DOOMED:
        await asyncio.sleep(0.3)  # (its connection closes meanwhile: nothing is done)
        return
    if scope["method"] == "POST":
        PROJECTS.append(name or f"keyed-{len(PROJECTS)}")
        await _answer(send, 200, json.dumps({"name": PROJECTS[-1]}).encode())
        return
    await _answer(send, 200, json.dumps(PROJECTS).encode())


async def _answer(send: Send, status: int, body: bytes, kind: bytes = b"application/json") -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    PROJECTS.clear()
    DOOMED.clear()
    return compile_spec(SPEC, suffix=".yaml")


def _calls(pkg: ModuleType, base: str, *calls: dict[str, Any], mode: str) -> list[Any]:
    """The calls made one after the other on one client (one kept-alive connection)."""

    async def acalls(client: HttpClient) -> list[Any]:
        activities = pkg.HttpActivities(client).async_activities()
        out: list[Any] = []
        for c in calls:
            out.append(await activities[c["_tool"]](pkg.CallAdapter.validate_python(c)))
        return out

    with HttpClient(pkg.API, base_url=base, retry=FAST) as client:
        if mode == "async":
            return asyncio.run(acalls(client))
        activities = pkg.HttpActivities(client).activities()
        return [activities[c["_tool"]](pkg.CallAdapter.validate_python(c)) for c in calls]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_get_after_a_500_that_closed_the_connection_is_sent_again(
    pkg: ModuleType, mode: str
) -> None:
    with serve_asgi(app) as base:
        made, duplicate, listed = _calls(
            pkg,
            base,
            {"_tool": "createProject", "name": "p"},
            {"_tool": "createProject", "name": "p"},
            {"_tool": "getProjects"},
            mode=mode,
        )
    assert made.success and duplicate.metadata["status"] == 500
    assert listed.success, listed.error
    assert listed.data.root == ["p"]
    ((retry,),) = [listed.metadata["retries"]]
    assert retry["error"] in ("ReadError", "RemoteProtocolError", "WriteError")
    assert listed.metadata["attempts"] == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_post_is_not_sent_again_unless_it_is_keyed(pkg: ModuleType, mode: str) -> None:
    with serve_asgi(app) as base:
        _, _, again, _, _, keyed = _calls(
            pkg,
            base,
            {"_tool": "createProject", "name": "p"},
            {"_tool": "createProject", "name": "p"},
            {"_tool": "createProject", "name": "q"},
            {"_tool": "getProjects"},
            {"_tool": "createProject", "name": "p"},
            {"_tool": "keyedCreate"},  # (an operation that takes an Idempotency-Key)
            mode=mode,
        )
    assert not again.success and again.metadata["error_type"] == "connection"
    assert "no answer came: not sent again, it may have been done" in (again.error or "")
    assert "retry_non_idempotent" in (again.error or "")
    assert keyed.success, keyed.error
    assert keyed.metadata["retries"] and keyed.metadata["attempts"] == 2
