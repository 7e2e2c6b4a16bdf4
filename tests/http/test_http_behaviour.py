"""What an HTTP client must get right with real servers, against a live server on
127.0.0.1: who it says it is, compressed responses, cookies within a session and across a
redirect, and streamed responses (JSON lines, server-sent events) read as lists of values."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import brotli  # pyright: ignore[reportMissingTypeStubs]
import pytest
import zstandard

from tests._servers import serve_asgi
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpClient, RetryPolicy

SPEC = """\
openapi: 3.0.3
info: {title: behaviour, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /echo: {get: {operationId: echo, responses: {"200": {description: the request's headers}}}}
  /compressed/{coding}:
    get:
      operationId: compressed
      parameters: [{name: coding, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: a JSON body in that content coding
          content: {application/json: {schema: {type: object, properties: {coding: {type: string}}}}}
  /login:
    get: {operationId: login, responses: {"302": {description: a session cookie, then /whoami}}}
  /whoami: {get: {operationId: whoami, responses: {"200": {description: the cookies received}}}}
  /ndjson: {get: {operationId: ndjson, responses: {"200": {description: JSON lines}}}}
  /lines: {get: {operationId: lines, responses: {"200": {description: JSON lines as application/json}}}}
  /events: {get: {operationId: events, responses: {"200": {description: server-sent events}}}}
  /orders:
    post:
      operationId: createOrder
      parameters: [{name: Idempotency-Key, in: header, schema: {type: string}}]
      responses: {"200": {description: the attempts this key took}}
  /notes:
    post: {operationId: createNote, responses: {"200": {description: the attempts}}}
"""

BODY = b'{"coding": "%s"}'


def _brotli(data: bytes) -> bytes:
    return bytes(brotli.compress(data))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "br": _brotli,
    "zstd": _zstd,
}


ATTEMPTS: dict[tuple[str, str], int] = {}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    path: str = scope["path"].removeprefix("/api")
    status, media, body, extra = 200, "application/json", b"{}", list[tuple[bytes, bytes]]()
    if path == "/echo":
        body = json.dumps(headers).encode()
    elif path.startswith("/compressed/"):
        coding = path.rsplit("/", 1)[1]
        body = ENCODERS[coding](BODY % coding.encode())
        extra.append((b"content-encoding", coding.encode()))
    elif path == "/login":
        status, body = 302, b""
        extra += [(b"location", b"/api/whoami"), (b"set-cookie", b"session=s3cr3t-id; Path=/")]
    elif path == "/whoami":
        body = json.dumps({"cookie": headers.get("cookie")}).encode()
    elif path == "/ndjson":
        media, body = "application/x-ndjson", b'{"n": 1}\n{"n": 2}\n\n{"n": 3}\n'
    elif path == "/lines":
        body = b'{"n": 1}\n{"n": 2}\n'
    elif path in ("/orders", "/notes"):
        # the first attempt of each key fails with 503; the next ones count the attempts
        key = headers.get("idempotency-key", "(none)")
        ATTEMPTS[key, path] = ATTEMPTS.get((key, path), 0) + 1
        if ATTEMPTS[key, path] == 1:
            status = 503
        body = json.dumps({"key": key, "attempts": ATTEMPTS[key, path]}).encode()
    elif path == "/events":
        media = "text/event-stream"
        body = b'event: tick\ndata: {"n": 1}\n\ndata: plain text\n\ndata: {"n":\ndata: 2}\n\n'
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", media.encode()), *extra],
        }
    )
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    root = tmp_path_factory.mktemp("behaviour")
    spec = root / "behaviour.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    compile_to_directory([Path(spec)], root / "out")
    pkg = load_package(root / "out", "behaviour")
    with serve_asgi(app) as url:
        yield pkg, f"{url}/api"
    unload("behaviour")


def _call(client: HttpClient, pkg: ModuleType, tool: str, **args: Any) -> Any:
    call = pkg.CallAdapter.validate_python({"_tool": tool, **args})
    result = pkg.HttpActivities(client).activities()[tool](call)
    assert result.success, result.error
    data = result.data
    return data.model_dump(mode="json") if hasattr(data, "model_dump") else data


def test_it_says_who_it_is_and_what_it_decodes(api: tuple[ModuleType, str]) -> None:
    pkg, base = api
    with HttpClient(pkg.API, base_url=base) as client:
        seen = _call(client, pkg, "echo")
    assert seen["user-agent"].startswith("toolbind/")
    assert seen["accept-encoding"] == "gzip, deflate, br, zstd"
    with HttpClient(pkg.API, base_url=base, headers={"User-Agent": "my-agent/2.0"}) as client:
        assert _call(client, pkg, "echo")["user-agent"] == "my-agent/2.0"


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_compressed_responses_are_decoded(api: tuple[ModuleType, str], coding: str) -> None:
    pkg, base = api
    with HttpClient(pkg.API, base_url=base) as client:
        assert _call(client, pkg, "compressed", coding=coding) == {"coding": coding}


def test_a_cookie_follows_the_redirect_and_stays_for_the_session(
    api: tuple[ModuleType, str],
) -> None:
    pkg, base = api
    with HttpClient(pkg.API, base_url=base) as client:
        assert _call(client, pkg, "login") == {"cookie": "session=s3cr3t-id"}  # the redirect
        assert _call(client, pkg, "whoami") == {"cookie": "session=s3cr3t-id"}  # a later call
    with HttpClient(pkg.API, base_url=base) as other:  # another client: another session
        assert _call(other, pkg, "whoami") == {"cookie": None}
    with HttpClient(pkg.API, base_url=base, keep_cookies=False) as client:
        assert _call(client, pkg, "login") == {"cookie": None}
        assert _call(client, pkg, "whoami") == {"cookie": None}


def test_session_cookies_never_reach_a_log_record(
    api: tuple[ModuleType, str], caplog: pytest.LogCaptureFixture
) -> None:
    """A cookie the API sets (a login's session token) is a secret nobody configured: httpcore
    logs each response's headers at DEBUG before anything could register it. Cookie and
    Set-Cookie values are scrubbed from those records; the session still works."""
    caplog.set_level(logging.DEBUG)
    pkg, base = api
    with HttpClient(pkg.API, base_url=base) as client:
        assert _call(client, pkg, "login") == {"cookie": "session=s3cr3t-id"}
    assert "set-cookie" in caplog.text.lower()  # the records are there, their values are not
    assert "s3cr3t-id" not in caplog.text


def test_streamed_responses_are_lists_of_values(api: tuple[ModuleType, str]) -> None:
    pkg, base = api
    with HttpClient(pkg.API, base_url=base) as client:
        assert _call(client, pkg, "ndjson") == [{"n": 1}, {"n": 2}, {"n": 3}]
        assert _call(client, pkg, "lines") == [{"n": 1}, {"n": 2}]
        assert _call(client, pkg, "events") == [{"n": 1}, "plain text", {"n": 2}]


def test_the_timeout_is_the_whole_calls_deadline(tmp_path: Path) -> None:
    """``timeout=`` bounds the call with its retries: a server answering 503 with
    ``Retry-After: 1`` is retried while the deadline allows a wait, then its last answer is the
    result; a timed-out POST is not sent again (it may have been done)."""
    from toolbind.runtime.http import RetryPolicy

    hits: list[str] = []

    async def busy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        hits.append(scope["method"])
        if scope["method"] == "POST":
            import asyncio

            await asyncio.sleep(1.0)
        headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"busy": true}'})

    spec = tmp_path / "busy.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: busy, version: '1'}\npaths:\n  /x:\n"
        "    get: {operationId: look, responses: {'200': {description: ok}}}\n"
        "    post: {operationId: make, responses: {'200': {description: ok}}}\n",
        encoding="utf-8",
    )
    compile_to_directory([spec], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "busy")
    try:
        with serve_asgi(busy) as url:
            retry = RetryPolicy(max_attempts=5, max_retry_after=1)
            with HttpClient(pkg.API, base_url=url, timeout=1.5, retry=retry) as client:
                acts = pkg.HttpActivities(client).activities()
                looked = acts["look"](pkg.CallAdapter.validate_python({"_tool": "look"}))
                assert looked.metadata["status"] == 503 and looked.metadata["attempts"] == 2
                hits.clear()
            with HttpClient(pkg.API, base_url=url, timeout=0.3, retry=retry) as client:
                acts = pkg.HttpActivities(client).activities()
                made = acts["make"](pkg.CallAdapter.validate_python({"_tool": "make"}))
                assert made.metadata["error_type"] == "timeout" and hits == ["POST"]
    finally:
        unload("busy")


def test_a_post_that_takes_an_idempotency_key_is_retried_with_the_same_key(
    api: tuple[ModuleType, str],
) -> None:
    """A POST is not retried (it may have been done) unless the operation says a
    repeat is safe — it takes an ``Idempotency-Key``: the call gets one, every attempt sends it."""
    pkg, base = api
    quick = RetryPolicy(backoff=0.01)
    with HttpClient(pkg.API, base_url=base, retry=quick) as client:
        order = _call(client, pkg, "createOrder")  # 503, then the same key again: 200
        assert order["attempts"] == 2 and len(order["key"]) == 36  # a UUID the client made
        again = _call(client, pkg, "createOrder")
        assert again["key"] != order["key"] and again["attempts"] == 2  # a new call, a new key
        given = _call(client, pkg, "createOrder", **{"Idempotency-Key": "order-7"})
        assert given == {"key": "order-7", "attempts": 2}  # the caller's own key is kept
        call = pkg.CallAdapter.validate_python({"_tool": "createNote"})
        note = pkg.HttpActivities(client).activities()["createNote"](call)
    assert not note.success and note.metadata["status"] == 503  # no key: never sent twice
    assert note.metadata["attempts"] == 1


def test_the_idempotency_key_is_the_running_calls_stable_key_and_can_be_opted_into(
    api: tuple[ModuleType, str],
) -> None:
    """An Activity run by an Agent or a Temporal worker sends its call's stable key
    (``current_call().key``: the same on a retry on another worker); ``idempotency_keys=True``
    sends one with a POST whose operation does not declare the header (and retries it)."""
    from toolbind.runtime._executor import _CURRENT  # pyright: ignore[reportPrivateUsage]
    from toolbind.runtime.execution import CallContext

    pkg, base = api
    quick = RetryPolicy(backoff=0.01)
    key = f"run-{uuid.uuid4().hex}:call-1-0-0"
    context = CallContext(run_id="run", call_id="call-1-0-0", tool="createOrder", key=key)
    token = _CURRENT.set(context)
    try:
        with HttpClient(pkg.API, base_url=base, retry=quick) as client:
            assert _call(client, pkg, "createOrder") == {"key": key, "attempts": 2}
            assert _call(client, pkg, "createOrder") == {"key": key, "attempts": 3}
        with HttpClient(pkg.API, base_url=base, retry=quick, idempotency_keys=True) as client:
            call = pkg.CallAdapter.validate_python({"_tool": "createNote"})
            note = pkg.HttpActivities(client).activities()["createNote"](call)
    finally:
        _CURRENT.reset(token)
    assert note.success and note.model_dump(mode="json")["data"] == {"key": key, "attempts": 2}
