"""OpenAPI end to end: a running FastAPI app's ``/openapi.json`` is compiled by toolbind, and
EVERY generated HTTP Activity (sync and async) calls that app through
``toolbind.runtime.http.HttpClient``.

Nothing is hand-written between the spec and the call: the Call models, ``API`` and
``HttpActivities`` are the compiler's output for the document the live server serves
(tests/http_app.py, uvicorn on 127.0.0.1). ``CASES`` holds a realistic call per tool and what
must come back: the typed Output (an instance of the tool's Output model, with the values the
server echoed) and what the server saw (its counters in ``http_app.STATE``). The app's
operations are read when this module is collected, so an endpoint added to the app without a
case here is a failing test, not a silent gap.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import TypeAdapter, ValidationError

from tests import http_app
from tests._servers import serve_asgi
from tests.http.test_http import CREDENTIALS, SECRETS
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import ToolBinding, ToolResult
from toolbind.runtime.http import (
    GenericHttpTool,
    HttpClient,
    HttpConfigurationError,
    RetryPolicy,
)

FAST = RetryPolicy(max_attempts=3, backoff=0.01, max_backoff=0.05, max_retry_after=0.2)

# The app's operations, read from the document it serves (the same function answers
# /openapi.json): one parametrised case per operation.
APP_TOOLS = sorted(
    str(op["operationId"])
    for item in http_app.app.openapi()["paths"].values()
    for op in item.values()
)


@dataclass(frozen=True)
class Served:
    pkg: ModuleType
    url: str
    foreign: str
    port: str
    root: Path  # the only directory file paths may name (HttpClient's file_root)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_asgi(http_app.app) as url, serve_asgi(http_app.foreign) as foreign:
        spec = httpx.get(f"{url}/openapi.json").json()
        tmp = tmp_path_factory.mktemp("e2e")
        path = tmp / "test_api.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        compile_to_directory([path], tmp / "out")
        pkg = load_package(tmp / "out", "test_api")
        root = tmp / "uploads"
        root.mkdir()
        (root / "doc.txt").write_text("inside the root", encoding="utf-8")
        (tmp / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
        yield Served(pkg, url, foreign, str(urlsplit(url).port), root)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Env:
    """One test's view of the served app: makes clients, runs Activities, checks invariants."""

    def __init__(self, served: Served, mode: str) -> None:
        self.pkg = served.pkg
        self.served = served
        self.mode = mode
        self.default = self.client()

    def client(self, **options: Any) -> HttpClient:
        """A client of the generated ``API`` on the app's port (CREDENTIALS and FAST unless
        overridden)."""
        options.setdefault("credentials", CREDENTIALS)
        options.setdefault("retry", FAST)
        return HttpClient(self.pkg.API, server_variables={"port": self.served.port}, **options)

    def binding(self, tool: str) -> ToolBinding:
        found: ToolBinding = next(t for t in self.pkg.TOOLS if t.name == tool)
        return found

    def output_model(self, tool: str) -> type[Any]:
        return self.binding(tool).output_model

    def run(
        self, tool: str, fields: dict[str, Any], client: HttpClient | None = None
    ) -> ToolResult[Any]:
        """Validate the Call as an LLM's JSON, run the tool's generated Activity (sync or async)."""
        call = self.pkg.CallAdapter.validate_json(json.dumps({"_tool": tool, **fields}))
        acts: Any = self.pkg.HttpActivities(client or self.default)
        if self.mode == "sync":
            result: ToolResult[Any] = acts.activities()[tool](call)
        else:

            async def go() -> ToolResult[Any]:
                try:
                    return await acts.async_activities()[tool](call)
                finally:
                    await acts.client.aclose()

            result = asyncio.run(go())
        if result.success:  # typed by the generated Output model
            assert isinstance(result.data, self.output_model(tool)), (tool, result.data)
        # Secrets never in errors, metadata or the result's repr/str (what reaches logs); its data
        # is the API's answer as sent (authApiKeyCookie echoes the cookies it received).
        seen = [result.error, result.metadata, repr(result), str(result)]
        text = json.dumps(seen, default=repr)
        assert not any(secret in text for secret in SECRETS), tool
        return result

    def ok(self, tool: str, fields: dict[str, Any], client: HttpClient | None = None) -> Any:
        """The typed data of a call that must succeed."""
        result = self.run(tool, fields, client)
        assert result.success, (tool, result.error)
        return result.data


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


def data(result: ToolResult[Any]) -> Any:
    """A result's data, typed loosely for attribute access in assertions."""
    return result.data


CASES: dict[str, Callable[[Env], None]] = {}


def case(tool: str) -> Callable[[Callable[[Env], None]], Callable[[Env], None]]:
    def register(fn: Callable[[Env], None]) -> Callable[[Env], None]:
        CASES[tool] = fn
        return fn

    return register


# -- parameters -----------------------------------------------------------------------------------


@case("getItem")
def _get_item(env: Env) -> None:
    fields = {"item_id": "a b?c#d", "q": "x&api_key=forged", "x-trace": "t1", "session": "s1"}
    item = env.ok("getItem", fields)
    assert dump(item) == {
        "item_id": "a b?c#d",
        "q": "x&api_key=forged",  # data, never a second query parameter
        "trace": "t1",
        "session": "s1",
        "raw_path": "/items/a%20b%3Fc%23d",  # never a query or a fragment
    }


@case("pathStyles")
def _path_styles(env: Env) -> None:
    fields = {"simple": [3, 4, 5], "label": [3, 4, 5], "matrix": {"role": "admin", "first": "Al"}}
    echo = env.ok("pathStyles", fields)
    assert echo.raw_path == "/styles/path/3,4,5/.3.4.5/;matrix=role,admin,first,Al"


@case("queryStyles")
def _query_styles(env: Env) -> None:
    fields = {
        "ids": [1, 2],  # form, explode
        "tags": [1, 2],  # form, no explode
        "sp": [1, 2],  # spaceDelimited
        "pp": [1, 2],  # pipeDelimited
        "filter": {"role": "admin", "first": "A l"},  # deepObject
        "obj": {"role": "admin", "first": "Alex"},  # form object, explode
        "json": {"role": "a&b"},  # content: application/json
    }
    echo = env.ok("queryStyles", fields)
    assert echo.query_string == (
        "ids=1&ids=2&tags=1,2&sp=1%202&pp=1|2"
        "&filter%5Brole%5D=admin&filter%5Bfirst%5D=A%20l"
        "&role=admin&first=Alex&json=%7B%22role%22%3A%22a%26b%22%7D"
    )
    assert ["filter[first]", "A l"] in [list(pair) for pair in echo.query]


@case("headerStyles")
def _header_styles(env: Env) -> None:
    fields = {
        "X-Trace": "t",
        "X-List": [1, 2],
        "X-Obj": {"role": "admin", "first": "Alex"},
        "session": "s1; api_session=forged",  # one cookie's value, not a second cookie
    }
    # The spec declares an Authorization parameter: not a Call field; a model that fills it
    # anyway is refused (the tool is closed), so it is never sent.
    assert "Authorization" not in env.binding("headerStyles").parameters["properties"]
    forged = {**fields, "Authorization": "Bearer forged-by-the-model"}
    with pytest.raises(ValueError, match="Authorization"):
        env.run("headerStyles", forged)
    echo = env.ok("headerStyles", fields)
    assert "authorization" not in echo.headers
    assert echo.headers["x-trace"] == "t"
    assert echo.headers["x-list"] == "1,2"
    assert echo.headers["x-obj"] == "role=admin,first=Alex"
    assert echo.cookies == {"session": "s1%3B%20api_session%3Dforged"}  # percent-encoded
    refused = env.run("headerStyles", {"X-Trace": "a\r\nX-Extra: injected"})
    assert not refused.success and refused.metadata["error_type"] == "invalid_input"


@case("getFile")
def _get_file(env: Env) -> None:
    echo = env.ok("getFile", {"name": "x?admin=1#f"})
    assert echo.raw_path == "/files/x%3Fadmin%3D1%23f" and echo.query_string == ""
    for attack in ("..", "../admin", "%2e%2e"):
        refused = env.run("getFile", {"name": attack})
        assert not refused.success and refused.metadata["error_type"] == "invalid_input", attack
    assert http_app.STATE["admin_hits"] == 0 and http_app.STATE["echo_hits"] == 1


@case("rawPath")
def _raw_path(env: Env) -> None:
    echo = env.ok("rawPath", {"rest": "a/b?c#d"})
    # one path value stays one segment: its '/', '?' and '#' arrive percent-encoded
    assert echo.raw_path == "/raw/a%2Fb%3Fc%23d" and echo.query_string == ""
    refused = env.run("rawPath", {"rest": "../admin"})
    assert not refused.success and refused.metadata["error_type"] == "invalid_input"
    assert http_app.STATE["admin_hits"] == 0 and http_app.STATE["echo_hits"] == 1


@case("admin")
def _admin(env: Env) -> None:
    assert dump(env.ok("admin", {})) == {"secret": "admin area"}
    assert http_app.STATE["admin_hits"] == 1


@case("echoGet")
def _echo_get(env: Env) -> None:
    echo = env.ok("echoGet", {})
    assert (echo.method, echo.raw_path, echo.body) == ("GET", "/echo", "")
    assert echo.headers["accept"] == "application/json"  # the Output's content type
    assert "authorization" not in echo.headers  # no security on this operation


# -- bodies ---------------------------------------------------------------------------------------


@case("createPet")
def _create_pet(env: Env) -> None:
    result = env.run("createPet", {"name": "Rex", "tags": ["a"]})
    assert result.success and result.metadata["status"] == 201
    assert dump(result.data) == {"id": 7, "name": "Rex", "tags": ["a"]}
    with pytest.raises(ValidationError):  # required-ness comes from the body schema
        env.pkg.CallAdapter.validate_python({"_tool": "createPet", "tags": []})


@case("submitForm")
def _submit_form(env: Env) -> None:
    form = env.ok("submitForm", {"name": "a&b=c", "count": 3, "colors": ["red", "blue"]})
    assert dump(form) == {"name": "a&b=c", "count": 3, "colors": ["red", "blue"]}


@case("upload")
def _upload(env: Env) -> None:
    content = b"\x00\x01\xffbinary"
    as_bytes = {"file": base64.b64encode(content).decode(), "description": "d", "meta": "m"}
    out = env.ok("upload", as_bytes)  # bytes travel as base64 in the Call's JSON
    assert dump(out) == {
        "filename": "file",
        "content_type": "application/octet-stream",
        "content_b64": base64.b64encode(content).decode(),
        "description": "d",
        "meta": "m",
    }
    with env.client(file_root=env.served.root) as rooted:
        out = env.ok("upload", {"file": "doc.txt", "description": "p"}, rooted)
        assert (out.filename, out.content_type) == ("doc.txt", "text/plain")
        assert base64.b64decode(out.content_b64) == b"inside the root"
        outside = env.run("upload", {"file": "../secret.txt", "description": "p"}, rooted)
        assert not outside.success and outside.metadata["error_type"] == "invalid_input"
        assert "TOP SECRET" not in str(outside)
    no_root = env.run("upload", {"file": "/etc/passwd", "description": "p"})  # not base64
    assert not no_root.success and no_root.metadata["error_type"] == "invalid_input"


@case("uploadImage")
def _upload_image(env: Env) -> None:
    png = b"\x89PNG\r\n\x1a\n"
    out = env.ok("uploadImage", {"file": base64.b64encode(png).decode(), "description": "i"})
    assert out.content_type == "image/png"  # the spec's encoding.contentType
    assert base64.b64decode(out.content_b64) == png and out.filename == "file"


@case("postText")
def _post_text(env: Env) -> None:
    assert env.ok("postText", {"body": "hello"}).root == "text/plain|HELLO"


@case("echoPost")
def _echo_post(env: Env) -> None:
    echo = env.ok("echoPost", {})
    assert (echo.method, echo.body) == ("POST", "")


@case("nothing")
def _nothing(env: Env) -> None:
    result = env.run("nothing", {})
    assert result.success and result.metadata["status"] == 204
    assert data(result).root is None


@case("plain")
def _plain(env: Env) -> None:
    result = env.run("plain", {})
    assert result.success and data(result).root == "hello, world"
    assert result.metadata["headers"]["x-request-id"] == "req-42"
    assert "set-cookie" not in result.metadata["headers"]


# -- auth -----------------------------------------------------------------------------------------


def _who(tool: str, who: str) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        assert env.ok(tool, {}).who == who
        # Secrets from configuration, through ${env.NAME} (gateway-v3), never from the Call.
        from_env = {"Bearer": "${env.TB_BEARER}", "ApiKeyHeader": "${env.TB_KEY}"}
        from_env |= {
            "ApiKeyQuery": "${env.TB_KEY}",
            "ApiKeyCookie": "${env.TB_KEY}",
            "Basic": {"username": http_app.BASIC_USER, "password": "${env.TB_PASSWORD}"},
            "OpenId": {"token": "${env.TB_OIDC}"},
            "OAuth2": {"client_id": http_app.CLIENT_ID, "client_secret": "${env.TB_SECRET}"},
        }
        environ = {
            "TB_BEARER": http_app.BEARER_TOKEN,
            "TB_KEY": http_app.API_KEY,
            "TB_PASSWORD": http_app.BASIC_PASSWORD,
            "TB_OIDC": http_app.OIDC_TOKEN,
            "TB_SECRET": http_app.CLIENT_SECRET,
        }
        with env.client(credentials=from_env, env=environ) as configured:
            assert env.ok(tool, {}, configured).who == who
        # The attack: wrong credentials. The server refuses; the wrong secret is not echoed.
        wrong = {scheme: "wrong-secret-123" for scheme in ("ApiKeyHeader", "Bearer")}
        wrong |= {
            "ApiKeyQuery": "wrong-secret-123",
            "ApiKeyCookie": "wrong-secret-123",
            "Basic": {"username": http_app.BASIC_USER, "password": "wrong-secret-123"},
            "OpenId": {"token": "wrong-secret-123"},
        }
        if tool == "authOauth":
            wrong = {
                "OAuth2": {"client_id": http_app.CLIENT_ID, "client_secret": "wrong-secret-123"}
            }
        with env.client(credentials=wrong) as bad:
            refused = env.run(tool, {}, bad)
        assert not refused.success and "HTTP 401" in (refused.error or "")
        assert "wrong-secret-123" not in str(refused)

    return check


for _tool, _who_is in [
    ("authApiKeyHeader", "apikey-header"),
    ("authApiKeyQuery", "apikey-query"),
    ("authApiKeyCookie", "apikey-cookie"),
    ("authBearer", "bearer"),
    ("authBasic", f"basic:{http_app.BASIC_USER}"),
    ("authOidc", "oidc"),
]:
    CASES[_tool] = _who(_tool, _who_is)


@case("authOauth")
def _auth_oauth(env: Env) -> None:
    http_app.STATE["token_lifetime"] = 1  # seconds: refreshed shortly before
    with env.client() as client:
        first = env.ok("authOauth", {}, client)
        # the server echoes the token: the data is the API's own (scrubbed only on the way to the
        # model, in logs and reprs); token_no tells tokens apart
        assert (first.who, first.token, first.token_no) == ("oauth", "tok-000001", 1)
        assert env.ok("authOauth", {}, client).token_no == 1  # cached
        assert http_app.STATE["token_fetches"] == 1
        assert http_app.STATE["last_token_form"] == {
            "grant_type": "client_credentials",
            "scope": "read",
        }
        time.sleep(1.0)  # the token expires: one new token
        assert env.ok("authOauth", {}, client).token_no == 2
        assert http_app.STATE["token_fetches"] == 2 == client.token_fetches
        http_app.STATE["token_lifetime"] = 3600
        http_app.STATE["revoked"].add("tok-000002")  # the server revokes it: a 401, refetched once
        assert env.ok("authOauth", {}, client).token_no == 3
        assert http_app.STATE["token_fetches"] == 3 == client.token_fetches
    _who("authOauth", "oauth")(env)


@case("authAnd")
def _auth_and(env: Env) -> None:
    assert env.ok("authAnd", {}).who == "apikey+bearer"
    half = env.client(credentials={"ApiKeyHeader": http_app.API_KEY})
    with half, pytest.raises(HttpConfigurationError, match="missing: Bearer") as info:
        env.run("authAnd", {}, half)
    assert http_app.API_KEY not in str(info.value)


@case("authOr")
def _auth_or(env: Env) -> None:
    assert env.ok("authOr", {}).who == "apikey+bearer"  # the first alternative that is complete
    with env.client(credentials={"Basic": CREDENTIALS["Basic"]}) as basic:
        assert env.ok("authOr", {}, basic).who == "basic"
    anonymous = env.client(credentials={})
    with anonymous, pytest.raises(HttpConfigurationError, match=r"\[ApiKeyHeader and Bearer\] or"):
        env.run("authOr", {}, anonymous)


@case("authLeaky")
def _auth_leaky(env: Env) -> None:
    result = env.run("authLeaky", {})  # the server repeats the key in its error body
    assert not result.success and result.metadata["status"] == 500
    assert f"bad key {http_app.API_KEY}" in json.dumps(result.data)  # the API's body, as sent
    assert "bad key ***" in repr(result)  # run() checked no secret is in errors, logs, reprs


# -- transport: statuses, retries, redirects, timeouts, sizes --------------------------------------


@case("status")
def _status(env: Env) -> None:
    assert env.ok("status", {"code": 200}).detail == "you asked for 200"
    failed = env.run("status", {"code": 418})
    assert not failed.success and failed.metadata["status"] == 418
    assert failed.metadata["error_type"] == "http_status"
    assert failed.data == {"detail": "you asked for 418"}
    assert "HTTP 418" in (failed.error or "") and "you asked for 418" in (failed.error or "")


def _key(env: Env, name: str) -> str:
    return f"{name}-{env.mode}-{time.monotonic_ns()}"


@case("flaky429")
def _flaky_429(env: Env) -> None:
    key = _key(env, "429")
    result = env.run("flaky429", {"key": key, "fail": 1, "retry_after": "1"})
    assert result.success and data(result).attempt == 2
    assert result.metadata["attempts"] == 2
    # Retry-After: 1 honoured, capped by FAST.max_retry_after
    assert result.metadata["retries"] == [{"status": 429, "delay": FAST.max_retry_after}]
    assert http_app.STATE["hits"][key] == 2


@case("flaky503")
def _flaky_503(env: Env) -> None:
    for code in (502, 503, 504):
        key = _key(env, str(code))
        assert env.ok("flaky503", {"key": key, "fail": 1, "code": code}).attempt == 2
        assert http_app.STATE["hits"][key] == 2
    key = _key(env, "down")
    down = env.run("flaky503", {"key": key, "fail": 9})
    assert not down.success and down.metadata["attempts"] == FAST.max_attempts
    assert http_app.STATE["hits"][key] == FAST.max_attempts


@case("flakyPost")
def _flaky_post(env: Env) -> None:
    key = _key(env, "post")
    once = env.run("flakyPost", {"key": key, "fail": 1, "code": 502})
    assert not once.success and once.metadata["status"] == 502  # POST: not retried
    assert http_app.STATE["hits"][key] == 1
    retrying = RetryPolicy(max_attempts=3, backoff=0.01, retry_non_idempotent=True)
    key = _key(env, "post-configured")
    with env.client(retry=retrying) as client:
        assert env.ok("flakyPost", {"key": key, "fail": 1}, client).attempt == 2
    assert http_app.STATE["hits"][key] == 2


@case("retryAfterDate")
def _retry_after_date(env: Env) -> None:
    key = _key(env, "date")
    assert env.ok("retryAfterDate", {"key": key}).attempt == 2


@case("redirect")
def _redirect(env: Env) -> None:
    result = env.run("redirect", {"to": "/items/moved"})
    assert result.success and data(result).item_id == "moved"
    assert result.metadata["redirects"] == 1
    for target in (f"{env.served.foreign}/steal", "//127.0.0.2/x"):
        refused = env.run("redirect", {"to": target})
        assert not refused.success and refused.metadata["error_type"] == "redirect_refused"
    assert http_app.FOREIGN_HITS == []


@case("redirectPost")
def _redirect_post(env: Env) -> None:
    echo = env.ok("redirectPost", {"to": "/echo", "code": 307})
    assert echo.method == "POST"  # 307 keeps the method


@case("slow")
def _slow(env: Env) -> None:
    assert inspect.signature(HttpClient).parameters["timeout"].default == 30.0
    assert env.ok("slow", {"delay": 0.01}).model_dump() == {"slept": 0.01}
    with env.client(timeout=0.1, retry=RetryPolicy(max_attempts=1)) as hasty:
        late = env.run("slow", {"delay": 0.5}, hasty)
    assert not late.success and late.metadata["error_type"] == "timeout"


@case("drip")
def _drip(env: Env) -> None:
    assert env.ok("drip", {"chunks": 2, "interval": 0.01}).root == "xx"


@case("huge")
def _huge(env: Env) -> None:
    data = env.ok("huge", {"size": 1000})  # binary content: base64 in the typed Output
    assert base64.b64decode(data.root) == b"x" * 1000
    with env.client(max_response_bytes=100_000) as bounded:
        big = env.run("huge", {"size": 3_000_000, "stream": True}, bounded)
    assert not big.success and big.metadata["error_type"] == "response_too_large"


@case("gzipBomb")
def _gzip_bomb(env: Env) -> None:
    small = env.ok("gzipBomb", {"size": 50_000})  # binary content: base64 in the typed Output
    assert base64.b64decode(small.root) == b"\0" * 50_000
    with env.client(max_response_bytes=100_000) as bounded:
        bomb = env.run("gzipBomb", {"size": 200_000_000}, bounded)  # ~200 KB on the wire
    assert not bomb.success and bomb.metadata["error_type"] == "response_too_large"


@case("bigHeaders")
def _big_headers(env: Env) -> None:
    assert env.run("bigHeaders", {"size": 10}).success
    with env.client(retry=RetryPolicy(max_attempts=1)) as once:
        big = env.run("bigHeaders", {"size": 200_000}, once)
    assert not big.success and big.metadata["error_type"] == "connection"


@case("loop")
def _loop(env: Env) -> None:
    with env.client(max_redirects=3) as c:
        looped = env.run("loop", {}, c)
    assert not looped.success and looped.metadata["error_type"] == "redirect_refused"
    assert "more than 3 redirects" in (looped.error or "")


@case("leak")
def _leak(env: Env) -> None:
    # no security requirement: no credential is sent, so there is nothing to echo
    assert dump(env.ok("leak", {}))["authorization"] is None
    failed = env.run("leak", {"status": 500})
    assert not failed.success and failed.metadata["status"] == 500


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", APP_TOOLS)
def test_every_generated_activity(
    served: Served, mode: str, tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    if tool not in CASES:
        pytest.fail(f"the app has an operation {tool!r} without a case in CASES")
    http_app.reset()
    http_app.FOREIGN_HITS.clear()
    caplog.set_level(logging.DEBUG)  # every logger: toolbind's, httpx's, httpcore's
    env = Env(served, mode)
    with env.default:
        CASES[tool](env)
    assert caplog.records  # the requests were logged …
    assert not [s for s in SECRETS if s in caplog.text]  # … without a secret


def test_the_table_covers_every_tool(served: Served) -> None:
    pkg = served.pkg
    assert set(pkg.OPERATIONS) == {t.name for t in pkg.TOOLS} == set(APP_TOOLS) == set(CASES)
    assert pkg.OPERATIONS["createPet"] == ("POST", "/pets", "createPet")
    assert len(pkg.HttpActivities(None).activities()) == len(APP_TOOLS)
    assert len(pkg.HttpActivities(None).async_activities()) == len(APP_TOOLS)


def test_tags_are_toolsets_with_their_own_call_union(served: Served) -> None:
    pkg = served.pkg
    assert set(pkg.TOOLSETS) == {"auth", "bodies", "params", "transport"}
    assert "authOauth" in pkg.TOOLSETS["auth"] and "createPet" not in pkg.TOOLSETS["auth"]
    assert sorted(t for tools in pkg.TOOLSETS.values() for t in tools) == APP_TOOLS
    auth: TypeAdapter[Any] = TypeAdapter(pkg.TOOLSET_CALLS["auth"])
    assert type(auth.validate_python({"_tool": "authBearer"})) is pkg.AuthBearerCall
    with pytest.raises(ValidationError):  # another tag's tool is not in this union
        auth.validate_python({"_tool": "createPet", "name": "Rex"})
    assert pkg.TOOLSET_CALLS["auth"] is pkg.AuthToolsetCall


def test_generic_tool_reaches_only_the_specs_servers(served: Served, mode: str) -> None:
    http_app.reset()
    http_app.FOREIGN_HITS.clear()
    port = served.port
    with GenericHttpTool(
        served.pkg.API, server_variables={"port": port}, credentials=CREDENTIALS
    ) as tool:

        def go(request: dict[str, Any]) -> ToolResult[Any]:
            if mode == "sync":
                return tool.call(request)

            async def run() -> ToolResult[Any]:
                try:
                    return await tool.acall(request)
                finally:
                    await tool.aclose()

            return asyncio.run(run())

        ok = go({"method": "GET", "path": "/items/g", "query": {"q": "a&b"}})
        assert ok.success and data(ok)["item_id"] == "g" and data(ok)["q"] == "a&b"
        fport = str(urlsplit(served.foreign).port)
        for attack in (
            {"method": "GET", "path": f"{served.foreign}/steal"},
            {"method": "GET", "path": f"//127.0.0.1:{fport}/steal"},
            {"method": "GET", "path": f"@127.0.0.1:{fport}/steal"},
            {"method": "GET", "path": "/redirect", "query": {"to": f"{served.foreign}/x"}},
            {"method": "GET", "path": "/items/x", "headers": {"Authorization": "Bearer x"}},
        ):
            result = go(attack)
            assert not result.success, attack
    assert http_app.FOREIGN_HITS == []
