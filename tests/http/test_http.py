"""The HTTP runtime against a real server: tests/http_app.py served by uvicorn on 127.0.0.1.

The ``HttpApi`` here is written by hand the way the OpenAPI compiler writes it for that app's
``/openapi.json``. Every operation is called sync and async; every security rule is tried as an
attack against the running server (and the server's own counters show what got through).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

import toolbind.runtime.http as http_module
from tests import http_app
from tests.http_app import Echo
from toolbind.runtime import ToolBinding, ToolResult
from toolbind.runtime.http import (
    BodyPart,
    GenericHttpTool,
    HttpApi,
    HttpBody,
    HttpClient,
    HttpConfigurationError,
    HttpExecution,
    HttpOperation,
    HttpParameter,
    HttpResponse,
    HttpServer,
    RetryPolicy,
    SecurityRequirement,
    SecurityScheme,
)

FAST = RetryPolicy(max_attempts=3, backoff=0.01, max_backoff=0.05, max_retry_after=0.2)

# -- the servers --------------------------------------------------------------------------------


# -- the HttpApi the compiler would write for tests/http_app.py -----------------------------------


def p(
    name: str,
    location: Any,
    style: Any = None,
    explode: bool | None = None,
    *,
    field: str | None = None,
    content_type: str | None = None,
    required: bool = False,
) -> HttpParameter:
    default_style: Any = {"path": "simple", "header": "simple"}.get(location, "form")
    return HttpParameter(
        name=name,
        field=field or name,
        location=location,
        style=style or default_style,
        explode=explode if explode is not None else default_style == "form",
        content_type=content_type,
        required=required or location == "path",
    )


def op(
    tool: str,
    method: str,
    path: str,
    *params: HttpParameter,
    body: HttpBody | None = None,
    security: tuple[tuple[SecurityRequirement, ...], ...] | None = (),
    media: str | None = "application/json",
    servers: tuple[HttpServer, ...] = (),
) -> HttpOperation:
    return HttpOperation(
        tool=tool,
        operation_id=tool,
        method=method,
        path=path,
        parameters=params,
        body=body,
        responses=(HttpResponse(status="200", media_type=media, is_output=True),),
        security=security,
        servers=servers,
    )


def req(*schemes: str) -> tuple[SecurityRequirement, ...]:
    return tuple(SecurityRequirement(scheme=s) for s in schemes)


SCHEMES = {
    "ApiKeyHeader": SecurityScheme(
        key="ApiKeyHeader", type="apiKey", name="X-API-Key", location="header"
    ),
    "ApiKeyQuery": SecurityScheme(
        key="ApiKeyQuery", type="apiKey", name="api_key", location="query"
    ),
    "ApiKeyCookie": SecurityScheme(
        key="ApiKeyCookie", type="apiKey", name="api_session", location="cookie"
    ),
    "Bearer": SecurityScheme(key="Bearer", type="http", scheme="bearer"),
    "Basic": SecurityScheme(key="Basic", type="http", scheme="basic"),
    "OpenId": SecurityScheme(
        key="OpenId", type="openIdConnect", openid_url="/.well-known/openid-configuration"
    ),
    "OAuth2": SecurityScheme(key="OAuth2", type="oauth2", token_url="/token", scopes=("read",)),
}


def make_api(base: str, foreign: str = "http://127.0.0.1:9") -> HttpApi:
    port = base.rsplit(":", 1)[1]
    q = p
    ops = [
        op(
            "getItem",
            "GET",
            "/items/{item_id}",
            q("item_id", "path"),
            q("q", "query"),
            q("x-trace", "header", field="xTrace"),
            q("session", "cookie"),
        ),
        op(
            "pathStyles",
            "GET",
            "/styles/path/{simple}/{label}/{matrix}",
            q("simple", "path", "simple", False),
            q("label", "path", "label", True),
            q("matrix", "path", "matrix", False),
        ),
        op(
            "queryStyles",
            "GET",
            "/styles/query",
            q("ids", "query", "form", True),
            q("tags", "query", "form", False),
            q("sp", "query", "spaceDelimited", False),
            q("pp", "query", "pipeDelimited", False),
            q("filter", "query", "deepObject", True),
            q("obj", "query", "form", True),
            q("json", "query", content_type="application/json"),
        ),
        op(
            "headerStyles",
            "GET",
            "/styles/header",
            q("X-Trace", "header"),
            q("X-List", "header"),
            q("X-Obj", "header", "simple", True),
            q("session", "cookie"),
            q("Authorization", "header"),  # OpenAPI: ignored — auth is configuration's
        ),
        op("getFile", "GET", "/files/{name}", q("name", "path")),
        op(
            "createPet",
            "POST",
            "/pets",
            body=HttpBody(
                media_type="application/json",
                kind="json",
                required=True,
                fields=(("name", "name"), ("tags", "tags")),
            ),
        ),
        op(
            "submitForm",
            "POST",
            "/form",
            body=HttpBody(
                media_type="application/x-www-form-urlencoded",
                kind="form",
                required=True,
                fields=(("name", "name"), ("count", "count"), ("colors", "colors")),
            ),
        ),
        op(
            "upload",
            "POST",
            "/upload",
            body=HttpBody(
                media_type="multipart/form-data",
                kind="multipart",
                required=True,
                fields=(("file", "file"), ("description", "description"), ("meta", "meta")),
                parts=(BodyPart(property="file", is_file=True),),
            ),
        ),
        op(
            "uploadPng",
            "POST",
            "/upload",
            body=HttpBody(
                media_type="multipart/form-data",
                kind="multipart",
                required=True,
                fields=(("image", "file"), ("description", "description")),
                parts=(BodyPart(property="file", is_file=True, content_type="image/png"),),
            ),
        ),
        op(
            "postText",
            "POST",
            "/text",
            body=HttpBody(media_type="text/plain", kind="text", required=True, wrapped="body"),
            media="text/plain",
        ),
        op("nothing", "GET", "/nothing", media=None),
        op("status", "GET", "/status/{code}", q("code", "path")),
        op("authApiKeyHeader", "GET", "/auth/apikey-header", security=(req("ApiKeyHeader"),)),
        op("authApiKeyQuery", "GET", "/auth/apikey-query", security=(req("ApiKeyQuery"),)),
        op("authApiKeyCookie", "GET", "/auth/apikey-cookie", security=(req("ApiKeyCookie"),)),
        op("authBearer", "GET", "/auth/bearer", security=(req("Bearer"),)),
        op("authBasic", "GET", "/auth/basic", security=(req("Basic"),)),
        op("authOidc", "GET", "/auth/oidc", security=(req("OpenId"),)),
        op(
            "authOauth",
            "GET",
            "/auth/oauth",
            security=((SecurityRequirement(scheme="OAuth2", scopes=("read",)),),),
        ),
        op("authAnd", "GET", "/auth/and", security=(req("ApiKeyHeader", "Bearer"),)),
        op("authOr", "GET", "/auth/or", security=(req("ApiKeyHeader", "Bearer"), req("Basic"))),
        op("authLeaky", "GET", "/auth/leaky"),  # security None below: the API default
        op(
            "flaky429",
            "GET",
            "/flaky/429",
            q("key", "query"),
            q("fail", "query"),
            q("retry_after", "query"),
        ),
        op("flaky503", "GET", "/flaky/503", q("key", "query"), q("fail", "query")),
        op("flakyPost", "POST", "/flaky/503", q("key", "query"), q("fail", "query")),
        op("retryAfterDate", "GET", "/http-date", q("key", "query")),
        op("redirect", "GET", "/redirect", q("to", "query"), q("code", "query")),
        op(
            "redirectPost",
            "POST",
            "/redirect",
            q("to", "query"),
            q("code", "query"),
            body=HttpBody(media_type="application/json", kind="json", wrapped="payload"),
        ),
        op("slow", "GET", "/slow", q("delay", "query")),
        op(
            "huge",
            "GET",
            "/huge",
            q("size", "query"),
            q("stream", "query"),
            media="application/octet-stream",
        ),
        op("plain", "GET", "/plain", media="text/plain"),
        op("drip", "GET", "/drip", q("chunks", "query"), q("interval", "query")),
        op("optionalAuth", "GET", "/auth/or", security=((), req("Basic"))),
        op("foreignPing", "GET", "/ping", servers=(HttpServer(url=foreign),)),
    ]
    ops = [
        o
        if o.tool != "authLeaky"
        else HttpOperation(
            tool=o.tool, operation_id=o.tool, method="GET", path=o.path, responses=o.responses
        )
        for o in ops
    ]
    return HttpApi(
        title="toolbind test API",
        servers=(
            HttpServer(
                url="http://{host}:{port}",
                variables={"host": "127.0.0.1", "port": port},
                enums={"host": ("127.0.0.1", "localhost")},
            ),
        ),
        security_schemes=SCHEMES,
        security=(req("ApiKeyHeader"),),
        operations={o.tool: o for o in ops},
    )


CREDENTIALS: dict[str, Any] = {
    "ApiKeyHeader": http_app.API_KEY,
    "ApiKeyQuery": {"value": http_app.API_KEY},
    "ApiKeyCookie": http_app.API_KEY,
    "Bearer": http_app.BEARER_TOKEN,
    "Basic": {"username": http_app.BASIC_USER, "password": http_app.BASIC_PASSWORD},
    "OpenId": {"token": http_app.OIDC_TOKEN},
    "OAuth2": {"client_id": http_app.CLIENT_ID, "client_secret": http_app.CLIENT_SECRET},
}
SECRETS = (
    http_app.API_KEY,
    http_app.BEARER_TOKEN,
    http_app.BASIC_PASSWORD,
    http_app.CLIENT_SECRET,
    http_app.OIDC_TOKEN,
)


def d(result: ToolResult[Any]) -> Any:
    """A result's data, typed loosely for attribute access in assertions."""
    return result.data


def run(
    client: HttpClient, mode: str, tool: str, call: BaseModel | Mapping[str, Any], model: Any = None
) -> ToolResult[Any]:
    """``client.call`` or ``client.acall`` (each async call in its own loop, pool closed after)."""
    if mode == "sync":
        return client.call(tool, call, model)

    async def go() -> ToolResult[Any]:
        try:
            return await client.acall(tool, call, model)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.fixture
def client(base: str, foreign: str) -> Generator[HttpClient]:
    with HttpClient(make_api(base, foreign), credentials=CREDENTIALS, retry=FAST) as c:
        yield c


# -- typed Output models (as a generated package would have) -------------------------------------


class ItemOut(BaseModel):
    item_id: str
    q: str | None
    trace: str | None
    session: str | None
    raw_path: str


class PetOut(BaseModel):
    id: int
    name: str
    tags: list[str]


class FormOut(BaseModel):
    name: str
    count: int
    colors: list[str]


class UploadOut(BaseModel):
    filename: str | None
    content_type: str | None
    content_b64: str
    description: str
    meta: str | None


class Who(BaseModel):
    who: str


class PetCall(BaseModel):
    """A Call model with a JSON name differing from the Python name, like generated ones."""

    model_config = {"populate_by_name": True}
    name: str
    tags: list[str] = []


# -- parameters ---------------------------------------------------------------------------------


def test_path_query_header_cookie(client: HttpClient, mode: str) -> None:
    call = {"item_id": "a b?c#d&e", "q": "x&y=z", "xTrace": "t-1", "session": "abc"}
    result = run(client, mode, "getItem", call, ItemOut)
    assert result.success, result.error
    assert result.data == ItemOut(
        item_id="a b?c#d&e",
        q="x&y=z",
        trace="t-1",
        session="abc",
        raw_path="/items/a%20b%3Fc%23d%26e",
    )
    assert result.metadata["status"] == 200
    assert result.metadata["headers"]["content-type"] == "application/json"
    assert result.metadata["attempts"] == 1


def test_pydantic_call_model(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "createPet", PetCall(name="Rex", tags=["good"]), PetOut)
    assert result.success, result.error
    assert result.data == PetOut(id=7, name="Rex", tags=["good"])
    assert result.metadata["status"] == 201


def test_call_model_with_aliases_and_meta_fields(client: HttpClient, mode: str) -> None:
    """Generated Call models: Python names, JSON aliases, ``_tool``/``_reasoningForCall``."""

    class GetItemCall(BaseModel):
        model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)
        tool: Literal["getItem"] = Field("getItem", alias="_tool")
        reasoning: str | None = Field(None, alias="_reasoningForCall")
        item_id: str
        x_trace: str | None = Field(None, alias="xTrace")
        q: str | None = None

    call = GetItemCall.model_validate(
        {"_tool": "getItem", "_reasoningForCall": "why", "item_id": "z", "xTrace": "tt"}
    )
    result = run(client, mode, "getItem", call, ItemOut)
    assert result.success, result.error
    assert d(result) == ItemOut(item_id="z", q=None, trace="tt", session=None, raw_path="/items/z")


def test_path_styles(client: HttpClient, mode: str) -> None:
    call = {"simple": [3, 4, 5], "label": [3, 4, 5], "matrix": {"role": "admin", "first": "Alex"}}
    result = run(client, mode, "pathStyles", call, Echo)
    assert result.success, result.error
    assert d(result).raw_path == "/styles/path/3,4,5/.3.4.5/;matrix=role,admin,first,Alex"


def test_query_styles(client: HttpClient, mode: str) -> None:
    call = {
        "ids": [1, 2],
        "tags": [1, 2],
        "sp": [1, 2],
        "pp": [1, 2],
        "filter": {"role": "admin", "first": "A l"},
        "obj": {"role": "admin", "first": "Alex"},
        "json": {"role": "a&b"},
    }
    result = run(client, mode, "queryStyles", call, Echo)
    assert result.success, result.error
    echo: Echo = d(result)
    assert echo.query_string == (
        "ids=1&ids=2&tags=1,2&sp=1%202&pp=1|2"
        "&filter%5Brole%5D=admin&filter%5Bfirst%5D=A%20l"
        "&role=admin&first=Alex&json=%7B%22role%22%3A%22a%26b%22%7D"
    )
    assert ("filter[first]", "A l") in echo.query
    assert ("json", '{"role":"a&b"}') in echo.query


def test_header_styles_and_cookie(client: HttpClient, mode: str) -> None:
    call = {
        "X-Trace": "t",
        "X-List": [1, 2],
        "X-Obj": {"role": "admin", "first": "Alex"},
        "session": "s1",
        "Authorization": "Bearer forged-by-the-model",
    }
    result = run(client, mode, "headerStyles", call, Echo)
    assert result.success, result.error
    echo: Echo = d(result)
    assert echo.headers["x-trace"] == "t"
    assert echo.headers["x-list"] == "1,2"
    assert echo.headers["x-obj"] == "role=admin,first=Alex"
    assert echo.cookies == {"session": "s1"}
    assert "authorization" not in echo.headers  # the model cannot set credentials


def test_a_configured_cookie_header_is_sent_beside_the_calls_cookies(
    base: str, foreign: str, mode: str
) -> None:
    """A spec's ``Cookie`` header parameter is no Call field (Ory Kratos's session): the user
    configures it, and it reaches the API with the Call's own cookie parameters — a cookie the
    Call names itself wins over the configured one of the same name."""
    configured = {"Cookie": "ory_session=s3cr3t; session=configured"}
    with HttpClient(
        make_api(base, foreign), credentials=CREDENTIALS, retry=FAST, headers=configured
    ) as client:
        result = run(client, mode, "headerStyles", {"session": "s1"}, Echo)
        assert result.success, result.error
        assert d(result).cookies == {"ory_session": "s3cr3t", "session": "s1"}
        result = run(client, mode, "getItem", {"item_id": "z"}, ItemOut)
        assert result.success, result.error


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        # OpenAPI 3.1 style examples (§4.8.12.4): color = blue / [blue,black,brown] / {R,G,B}
        ("simple", False, "blue", "blue"),
        ("simple", False, ["blue", "black"], "blue,black"),
        ("simple", False, {"R": 100, "G": 200}, "R,100,G,200"),
        ("simple", True, {"R": 100, "G": 200}, "R=100,G=200"),
        ("label", False, "blue", ".blue"),
        ("label", False, ["blue", "black"], ".blue,black"),
        ("label", True, ["blue", "black"], ".blue.black"),
        ("label", False, {"R": 100, "G": 200}, ".R,100,G,200"),
        ("label", True, {"R": 100, "G": 200}, ".R=100.G=200"),
        ("matrix", False, "blue", ";color=blue"),
        ("matrix", False, ["blue", "black"], ";color=blue,black"),
        ("matrix", True, ["blue", "black"], ";color=blue;color=black"),
        ("matrix", False, {"R": 100, "G": 200}, ";color=R,100,G,200"),
        ("matrix", True, {"R": 100, "G": 200}, ";R=100;G=200"),
        ("simple", False, True, "true"),
        ("simple", False, "a/b?c#d", "a%2Fb%3Fc%23d"),
    ],
)
def test_path_style_table(style: Any, explode: bool, value: Any, expected: str) -> None:
    from toolbind.runtime.http._params import path_value

    assert path_value(p("color", "path", style, explode), value) == expected


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("form", True, "blue", ["color=blue"]),
        ("form", False, ["blue", "black"], ["color=blue,black"]),
        ("form", True, ["blue", "black"], ["color=blue", "color=black"]),
        ("form", False, {"R": 100, "G": 200}, ["color=R,100,G,200"]),
        ("form", True, {"R": 100, "G": 200}, ["R=100", "G=200"]),
        ("spaceDelimited", False, ["blue", "black"], ["color=blue%20black"]),
        ("spaceDelimited", False, {"R": 100, "G": 200}, ["color=R%20100%20G%20200"]),
        ("pipeDelimited", False, ["blue", "black"], ["color=blue|black"]),
        ("pipeDelimited", False, {"R": 100, "G": 200}, ["color=R|100|G|200"]),
        ("deepObject", True, {"R": 100, "G": 200}, ["color%5BR%5D=100", "color%5BG%5D=200"]),
        ("form", True, None, ["color="]),
        ("form", True, [], []),
    ],
)
def test_query_style_table(style: Any, explode: bool, value: Any, expected: list[str]) -> None:
    from toolbind.runtime.http._params import query_pairs

    assert query_pairs(p("color", "query", style, explode), value) == expected


# -- bodies -------------------------------------------------------------------------------------


def test_form_body(client: HttpClient, mode: str) -> None:
    call = {"name": "a&b=c", "count": 3, "colors": ["red", "blue"]}
    result = run(client, mode, "submitForm", call, FormOut)
    assert result.success, result.error
    assert result.data == FormOut(name="a&b=c", count=3, colors=["red", "blue"])


def test_multipart_bytes_and_base64(client: HttpClient, mode: str) -> None:
    content = b"\x00\x01\xffbinary"

    class UploadCall(BaseModel):
        file: bytes
        description: str
        meta: dict[str, int]

    call = UploadCall(file=content, description="d\r\nX: y", meta={"k": 1})
    result = run(client, mode, "upload", call, UploadOut)
    assert result.success, result.error
    assert result.data == UploadOut(
        filename="file",
        content_type="application/octet-stream",
        content_b64=base64.b64encode(content).decode(),
        description="d\r\nX: y",
        meta='{"k": 1}',
    )
    # What an LLM sends: JSON, the file as base64; the part's declared content type is used.
    as_json = {"image": base64.b64encode(b"\x89PNG").decode(), "description": "png"}
    result = run(client, mode, "uploadPng", as_json, UploadOut)
    assert result.success, result.error
    assert d(result).content_type == "image/png"
    assert base64.b64decode(d(result).content_b64) == b"\x89PNG"


def test_multipart_local_paths_only_inside_file_root(
    base: str, foreign: str, tmp_path: Path, mode: str
) -> None:
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "doc.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS, file_root=root) as c:
        ok = run(c, mode, "upload", {"file": "doc.txt", "description": "x"}, UploadOut)
        assert ok.success, ok.error
        assert (d(ok).filename, d(ok).content_type) == ("doc.txt", "text/plain")
        assert base64.b64decode(d(ok).content_b64) == b"inside"
        for attack in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt", "/etc/passwd"):
            bad = run(c, mode, "upload", {"file": attack, "description": "x"}, UploadOut)
            assert not bad.success
            assert bad.metadata["error_type"] == "invalid_input"
            assert "TOP SECRET" not in str(bad)
    # Without file_root a string is base64 content, never a path.
    with HttpClient(api, credentials=CREDENTIALS) as c:
        bad = run(c, mode, "upload", {"file": "/etc/passwd", "description": "x"}, UploadOut)
        assert not bad.success and "base64" in (bad.error or "")
    assert http_app.STATE["echo_hits"] == 0


def test_text_body_and_text_response(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "postText", {"body": "hello"})
    assert result.success, result.error
    assert result.data == "text/plain|HELLO"


def test_no_content_and_text_with_request_id(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "nothing", {})
    assert result.success and result.data is None and result.metadata["status"] == 204
    result = run(client, mode, "plain", {})
    assert result.data == "hello, world"
    assert result.metadata["headers"]["x-request-id"] == "req-42"
    assert "set-cookie" not in result.metadata["headers"]


def test_non_2xx_is_a_failed_result_with_status_and_body(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "status", {"code": 404})
    assert not result.success
    assert result.metadata["status"] == 404
    assert result.metadata["error_type"] == "http_status"
    assert result.data == {"detail": "you asked for 404"}
    assert "HTTP 404" in (result.error or "") and "you asked for 404" in (result.error or "")


def test_output_that_does_not_match_is_reported(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "getItem", {"item_id": "x"}, PetOut)
    assert not result.success
    assert result.metadata["error_type"] == "invalid_output"
    assert "PetOut" in (result.error or "") and d(result)["item_id"] == "x"
    # the API did what was asked: the message says so first, so a model does not repeat it
    assert "answered HTTP 200 (the call went through), but its response" in (result.error or "")


def test_unknown_tool_is_a_configuration_error(client: HttpClient) -> None:
    with pytest.raises(HttpConfigurationError, match="no operation 'nope'"):
        client.call("nope", {})


# -- auth ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "who"),
    [
        ("authApiKeyHeader", "apikey-header"),
        ("authApiKeyQuery", "apikey-query"),
        ("authApiKeyCookie", "apikey-cookie"),
        ("authBearer", "bearer"),
        ("authBasic", f"basic:{http_app.BASIC_USER}"),
        ("authOidc", "oidc"),
        ("authOauth", "oauth"),
        ("authAnd", "apikey+bearer"),
        ("authOr", "apikey+bearer"),
    ],
)
def test_each_auth_kind(client: HttpClient, mode: str, tool: str, who: str) -> None:
    result = run(client, mode, tool, {}, Who)
    assert result.success, result.error
    assert d(result).who == who


def test_wrong_credentials_are_rejected_by_the_server(base: str, foreign: str, mode: str) -> None:
    with HttpClient(make_api(base, foreign), credentials={"Bearer": "wrong-token"}) as c:
        result = run(c, mode, "authBearer", {})
    assert not result.success and result.metadata["status"] == 401
    assert "wrong-token" not in str(result.error)


def test_and_or_requirements(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    only_key = HttpClient(api, credentials={"ApiKeyHeader": http_app.API_KEY})
    with pytest.raises(HttpConfigurationError) as info:
        run(only_key, mode, "authAnd", {})
    assert "missing: Bearer" in str(info.value)
    assert http_app.API_KEY not in str(info.value)
    only_basic = HttpClient(api, credentials={"Basic": CREDENTIALS["Basic"]})
    assert run(only_basic, mode, "authOr", {}, Who).data == Who(who="basic")
    with pytest.raises(HttpConfigurationError, match=r"\[ApiKeyHeader and Bearer\] or \[Basic\]"):
        run(HttpClient(api), mode, "authOr", {})
    assert run(HttpClient(api, credentials=CREDENTIALS), mode, "authOr", {}, Who).data == Who(
        who="apikey+bearer"
    )


def test_oauth2_token_cached_refreshed_on_expiry_and_on_401(
    base: str, foreign: str, mode: str
) -> None:
    import time

    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS) as c:
        first = run(c, mode, "authOauth", {})
        second = run(c, mode, "authOauth", {})
        assert first.success and second.success, (first.error, second.error)
        assert http_app.STATE["token_fetches"] == 1
        assert http_app.STATE["last_token_form"] == {
            "grant_type": "client_credentials",
            "scope": "read",
        }
        # The server revokes the token: a 401, one new token, the call succeeds.
        http_app.STATE["revoked"].add("tok-000001")
        third = run(c, mode, "authOauth", {})
        assert third.success, third.error
        assert d(third)["token_no"] == 2 and http_app.STATE["token_fetches"] == 2
        assert d(third)["token"] == "tok-000002"  # the API echoed the token: its data, as sent
        assert "tok-000002" not in repr(third)  # but never in a repr (logs)
        # Short-lived tokens are refreshed when they expire.
        http_app.STATE["token_lifetime"] = 1
        http_app.STATE["revoked"].add("tok-000002")
        assert d(run(c, mode, "authOauth", {}))["token_no"] == 3
        assert d(run(c, mode, "authOauth", {}))["token_no"] == 3  # still cached
        time.sleep(1.0)
        assert d(run(c, mode, "authOauth", {}))["token_no"] == 4
        assert http_app.STATE["token_fetches"] == 4
        assert c.token_fetches == http_app.STATE["token_fetches"]


def test_oauth2_client_secret_post_and_bad_secret(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    creds = {"OAuth2": dict(CREDENTIALS["OAuth2"], client_auth="post")}
    with HttpClient(api, credentials=creds) as c:
        assert run(c, mode, "authOauth", {}).success
    assert http_app.STATE["last_token_form"]["client_id"] == http_app.CLIENT_ID
    bad = {"OAuth2": {"client_id": http_app.CLIENT_ID, "client_secret": "not-the-secret"}}
    with HttpClient(api, credentials=bad) as c:
        result = run(c, mode, "authOauth", {})
    assert not result.success and result.metadata["error_type"] == "auth"
    assert "HTTP 401" in (result.error or "") and "not-the-secret" not in str(result)


def test_env_expansion_of_credentials(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    env = {"TB_KEY": http_app.API_KEY}
    with HttpClient(api, credentials={"ApiKeyHeader": "${env.TB_KEY}"}, env=env) as c:
        assert run(c, mode, "authApiKeyHeader", {}, Who).success
    with pytest.raises(HttpConfigurationError, match="TB_MISSING is not set"):
        HttpClient(api, credentials={"Bearer": "${env.TB_MISSING}"}, env=env)
    with pytest.raises(HttpConfigurationError, match="no security scheme 'Nope'"):
        HttpClient(api, credentials={"Nope": "x"})


def test_secrets_never_in_errors_logs_metadata_or_repr(
    client: HttpClient, base: str, foreign: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx's and httpcore's included
    results = [
        run(client, mode, "authLeaky", {}),  # the API repeats the key in its error body
        run(client, mode, "authApiKeyQuery", {}),
        run(client, mode, "status", {"code": 500}),
    ]
    slow = HttpClient(
        make_api(base, foreign),
        credentials=CREDENTIALS,
        timeout=0.1,
        retry=RetryPolicy(max_attempts=1),
    )
    results.append(run(slow, mode, "slow", {"delay": 0.5}))
    leaky = results[0]
    assert not leaky.success and leaky.metadata["status"] == 500
    assert http_app.API_KEY in json.dumps(leaky.data)  # the API's error body, as it sent it
    assert results[3].metadata["error_type"] == "timeout"
    everything = [str(r) for r in results] + [repr(r) for r in results] + [caplog.text]
    everything += [repr(client), str(client), repr(slow)]
    for text in everything:
        for secret in SECRETS:
            assert secret not in text, text


# -- retries, timeouts, sizes -------------------------------------------------------------------


def test_429_with_retry_after_then_success(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "flaky429", {"key": f"a-{mode}", "fail": 1, "retry_after": "0"})
    assert result.success, result.error
    assert result.data == {"attempt": 2}
    assert result.metadata["retries"] == [{"status": 429, "delay": 0.0}]


def test_retry_after_is_capped(client: HttpClient, mode: str) -> None:
    call = {"key": f"b-{mode}", "fail": 1, "retry_after": "3600"}
    result = run(client, mode, "flaky429", call)
    assert result.success
    assert result.metadata["retries"] == [{"status": 429, "delay": FAST.max_retry_after}]


def test_retry_after_http_date(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "retryAfterDate", {"key": f"c-{mode}"})
    assert result.success, result.error
    delay = result.metadata["retries"][0]["delay"]
    assert 0.0 <= delay <= FAST.max_retry_after


def test_503_retried_up_to_max_attempts(client: HttpClient, mode: str) -> None:
    result = run(client, mode, "flaky503", {"key": f"d-{mode}", "fail": 10})
    assert not result.success and result.metadata["status"] == 503
    assert http_app.STATE["hits"][f"d-{mode}"] == FAST.max_attempts
    assert [r["status"] for r in result.metadata["retries"]] == [503, 503]


def test_post_not_retried_unless_configured(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS, retry=FAST) as c:
        result = run(c, mode, "flakyPost", {"key": f"e-{mode}", "fail": 1})
    assert not result.success and http_app.STATE["hits"][f"e-{mode}"] == 1
    policy = RetryPolicy(max_attempts=3, backoff=0.01, retry_non_idempotent=True)
    with HttpClient(api, credentials=CREDENTIALS, retry=policy) as c:
        result = run(c, mode, "flakyPost", {"key": f"f-{mode}", "fail": 1})
    assert result.success and result.data == {"attempt": 2}


def test_timeout_is_a_failed_result(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS, timeout=0.1, retry=FAST) as c:
        result = run(c, mode, "slow", {"delay": 0.4})
    assert not result.success and result.metadata["error_type"] == "timeout"
    # the timeout is the whole call's deadline: no time was left to retry the GET
    assert result.metadata["attempts"] == 1
    assert "timed out after 0.1 s" in (result.error or "")


def test_timeout_bounds_the_whole_response(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    # a deadline with room for a loaded machine's quick answer (0.3 s failed at load 7 on 2
    # cores); the dripping answer takes 2.5 s, well past it
    with HttpClient(api, credentials=CREDENTIALS, timeout=1.0, retry=FAST) as c:
        quick = run(c, mode, "drip", {"chunks": 2, "interval": 0.01})
        dripping = run(c, mode, "drip", {"chunks": 10, "interval": 0.25})
    assert quick.success and quick.data == "xx"
    assert not dripping.success and dripping.metadata["error_type"] == "timeout"


def test_optional_auth_uses_credentials_when_configured(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, credentials={"Basic": CREDENTIALS["Basic"]}) as c:
        assert d(run(c, mode, "optionalAuth", {})) == {"who": "basic"}
    with HttpClient(api) as c:  # anonymous is allowed: the request goes out without auth
        result = run(c, mode, "optionalAuth", {})
    assert result.metadata["status"] == 401


def test_connection_refused_is_a_failed_result(mode: str) -> None:
    from tests._servers import free_port

    api = HttpApi(title="down", operations={"x": op("x", "GET", "/x")})
    with HttpClient(api, base_url=f"http://127.0.0.1:{free_port()}", retry=FAST) as c:
        result = run(c, mode, "x", {})
    assert not result.success and result.metadata["error_type"] == "connection"
    assert result.metadata["attempts"] == FAST.max_attempts


@pytest.mark.parametrize("stream", [False, True])
def test_response_size_is_bounded(base: str, foreign: str, mode: str, stream: bool) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS, max_response_bytes=100_000) as c:
        small = run(c, mode, "huge", {"size": 1000, "stream": stream})
        big = run(c, mode, "huge", {"size": 3_000_000, "stream": stream})
    assert small.success and small.data == b"x" * 1000
    assert not big.success and big.metadata["error_type"] == "response_too_large"


# -- the LLM fills parameters, never the host -----------------------------------------------------


def test_path_parameters_cannot_leave_their_segment(client: HttpClient, mode: str) -> None:
    for name, raw in [
        ("x?admin=1#f", "/files/x%3Fadmin%3D1%23f"),
        ("a/b", "/files/a%2Fb"),
        ("v1.2..3", "/files/v1.2..3"),
    ]:
        ok = run(client, mode, "getFile", {"name": name}, Echo)
        if name == "a/b":  # one encoded segment: the server (decoding %2F) routes it nowhere
            assert ok.metadata["status"] == 404
            continue
        assert ok.success, ok.error
        assert d(ok).raw_path == raw and d(ok).query_string == ""
    # Anything a server or proxy could read as a step up is refused before sending.
    attacks = ["..", ".", "../admin", "..%2Fadmin", "%2e%2e", "%252e%252e/x", "..\\admin"]
    for attack in attacks:
        refused = run(client, mode, "getFile", {"name": attack})
        assert not refused.success, attack
        assert refused.metadata["error_type"] == "invalid_input"
    assert http_app.STATE["admin_hits"] == 0
    assert http_app.STATE["echo_hits"] == 2


def test_header_crlf_is_refused(client: HttpClient, mode: str) -> None:
    for value in ("a\r\nX-Extra: injected", "a\nX-Extra: injected", "a\x00b"):
        result = run(client, mode, "headerStyles", {"X-Trace": value})
        assert not result.success
        assert result.metadata["error_type"] == "invalid_input"
        assert "control character" in (result.error or "")
    assert http_app.STATE["echo_hits"] == 0


def test_query_and_cookie_injection_stay_data(client: HttpClient, mode: str) -> None:
    call = {"X-Trace": "t", "session": "x; api_session=forged, y=1"}
    result = run(client, mode, "headerStyles", call, Echo)
    assert result.success
    assert "api_session" not in d(result).cookies
    item = run(client, mode, "getItem", {"item_id": "i", "q": "x&api_key=forged"}, ItemOut)
    assert d(item).q == "x&api_key=forged"


def test_redirects_within_followed_outside_refused(
    client: HttpClient, base: str, foreign: str, mode: str
) -> None:
    inside = run(client, mode, "redirect", {"to": "/items/moved"}, ItemOut)
    assert inside.success, inside.error
    assert d(inside).item_id == "moved" and inside.metadata["redirects"] == 1
    absolute = run(client, mode, "redirect", {"to": f"{base}/items/abs", "code": 301}, ItemOut)
    assert absolute.success and d(absolute).item_id == "abs"
    post = run(client, mode, "redirectPost", {"to": "/echo", "payload": {"a": 1}}, Echo)
    assert post.success and d(post).method == "POST" and d(post).body == '{"a":1}'
    for target in (f"{foreign}/steal", "//127.0.0.2/x", "https://example.invalid/"):
        result = run(client, mode, "redirect", {"to": target})
        assert not result.success, target
        assert result.metadata["error_type"] == "redirect_refused"
    assert http_app.FOREIGN_HITS == []


def test_operation_servers_and_server_variables(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, credentials=CREDENTIALS) as c:
        assert run(c, mode, "foreignPing", {}).data == {"foreign": True}
    assert len(http_app.FOREIGN_HITS) == 1
    with HttpClient(api, server_variables={"host": "localhost"}) as c:
        assert str(c._default).startswith("http://localhost:")  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(HttpConfigurationError, match=re.escape("not one of 127.0.0.1, localhost")):
        HttpClient(api, server_variables={"host": "evil.example"})
    with pytest.raises(HttpConfigurationError, match="declares no servers"):
        HttpClient(HttpApi(title="t"))


# -- GenericHttpTool ----------------------------------------------------------------------------


def grun(tool: GenericHttpTool, mode: str, request: Mapping[str, Any]) -> ToolResult[Any]:
    if mode == "sync":
        return tool.call(request)

    async def go() -> ToolResult[Any]:
        try:
            return await tool.acall(request)
        finally:
            await tool.aclose()

    return asyncio.run(go())


def test_generic_tool_reaches_only_the_api(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with GenericHttpTool(api, credentials=CREDENTIALS) as tool:
        assert tool.definition["parameters"]["required"] == ["method", "path"]
        ok = grun(tool, mode, {"method": "GET", "path": "/items/g", "query": {"q": "a&b"}})
        assert ok.success and d(ok)["item_id"] == "g" and d(ok)["q"] == "a&b"
        auth = grun(tool, mode, {"method": "GET", "path": "/auth/apikey-header"})
        assert auth.success and auth.data == {"who": "apikey-header"}
        body = grun(tool, mode, {"method": "POST", "path": "/echo", "body": {"x": [1]}})
        assert json.loads(d(body)["body"]) == {"x": [1]}
        port = foreign.rsplit(":", 1)[1]
        attacks = [
            {"method": "GET", "path": f"{foreign}/steal"},
            {"method": "GET", "path": f"@127.0.0.1:{port}/steal"},
            {"method": "GET", "path": f"//127.0.0.1:{port}/steal"},
            {"method": "GET", "path": f"http://127.0.0.1:{port}@127.0.0.1:{port}/steal"},
            {"method": "GET", "path": "/redirect", "query": {"to": f"{foreign}/steal"}},
            {"method": "GET", "path": "/items/x", "headers": {"Host": "evil"}},
            {"method": "GET", "path": "/items/x", "headers": {"Authorization": "Bearer x"}},
            {"method": "GET", "path": "/items/x", "headers": {"X-Trace": "a\r\nX-Evil: 1"}},
            {"method": "CONNECT", "path": "/items/x"},
        ]
        for attack in attacks:
            result = grun(tool, mode, attack)
            assert not result.success, attack
            assert result.metadata["error_type"] in (
                "refused_url",
                "invalid_input",
                "redirect_refused",
            ), (attack, result)
    assert http_app.FOREIGN_HITS == []
    # A server with a base path: '..' cannot climb out of it.
    with GenericHttpTool(api, base_url=f"{base}/styles", credentials=CREDENTIALS) as tool:
        inside = grun(tool, mode, {"method": "GET", "path": "/header"})
        assert inside.success and d(inside)["raw_path"] == "/styles/header"
        out = grun(tool, mode, {"method": "GET", "path": "/../admin"})
        assert not out.success and out.metadata["error_type"] == "refused_url"
        for sneaky in ("/%2e%2e/admin", "/..%2Fadmin", "/%252e%252e/admin"):
            out = grun(tool, mode, {"method": "GET", "path": sneaky})
            assert not out.success and out.metadata["error_type"] == "invalid_input", sneaky
    assert http_app.STATE["admin_hits"] == 0


def test_header_name_ending_in_a_newline_was_taken_for_a_token(base: str, mode: str) -> None:
    # regression (found by the adversarial fuzzer's review): the token check used re.match with
    # '$', which also matches before a final newline, so "X-A\n" passed as a header name
    api = make_api(base, base)
    with GenericHttpTool(api, credentials=CREDENTIALS) as tool:
        for name in ("X-A\n", "X-A\r\nX-Evil", "X A", ""):
            result = grun(tool, mode, {"method": "GET", "path": "/echo", "headers": {name: "v"}})
            assert not result.success and result.metadata["error_type"] == "invalid_input", name
        ok = grun(tool, mode, {"method": "GET", "path": "/echo", "headers": {"X-Trace": "v"}})
        assert ok.success and d(ok)["headers"]["x-trace"] == "v"


# -- gateway execution configs ------------------------------------------------------------------


def erun(
    ex: HttpExecution, mode: str, data: BaseModel | Mapping[str, Any], model: Any = None
) -> ToolResult[Any]:
    if mode == "sync":
        return ex.call(data, model)

    async def go() -> ToolResult[Any]:
        try:
            return await ex.acall(data, model)
        finally:
            await ex.aclose()

    return asyncio.run(go())


def test_gateway_execution_templates(base: str, mode: str) -> None:
    env = {"TB_TRACE": "trace-from-env", "TB_KEY": http_app.API_KEY}
    ex = HttpExecution(
        {
            "url": base + "/items/{{input.id}}?q={{input.q}}",
            "method": "GET",
            "headers": {"X-Trace": "${env.TB_TRACE}", "X-API-Key": "${env.TB_KEY}"},
        },
        tool="getItem",
        env=env,
    )
    assert ex.timeout == 30.0
    for attack in ("../admin", "%2e%2e", "a/../../admin"):
        result = erun(ex, mode, {"id": attack, "q": "x"}, ItemOut)
        assert result.metadata["error_type"] == "invalid_input", attack
    assert http_app.STATE["admin_hits"] == 0
    ok = erun(ex, mode, {"id": "a b", "q": "x&y"}, ItemOut)
    # the app echoes the header: the data is the API's own (${env.…} values are secrets, scrubbed
    # from what the model is sent, logs and reprs)
    assert ok.data == ItemOut(
        item_id="a b", q="x&y", trace=env["TB_TRACE"], session=None, raw_path="/items/a%20b"
    )
    assert env["TB_TRACE"] not in repr(ok)
    assert http_app.API_KEY not in repr(ex)
    for attack in ("..", "."):
        refused = erun(ex, mode, {"id": attack})
        assert not refused.success and refused.metadata["error_type"] == "invalid_input"


def test_gateway_execution_json_body(base: str, mode: str) -> None:
    class Input(BaseModel):
        query: str
        limit: int = 10
        missing: str | None = None

    ex = HttpExecution(
        {
            "url": base + "/echo",
            "body": {
                "query": "{{input.query}}",
                "limit": "{{ input.limit }}",
                "text": "q={{input.query}} n={{input.limit}}",
                "opt": "{{input.missing}}",
                "all": "{{input}}",
            },
            "timeout": 5000,
        },
        tool="search",
    )
    assert ex.method == "POST" and ex.timeout == 5.0
    result = erun(ex, mode, Input(query='"quoted" & more', limit=5), Echo)
    assert result.success, result.error
    assert d(result).headers["content-type"] == "application/json"
    assert json.loads(d(result).body) == {
        "query": '"quoted" & more',
        "limit": 5,
        "text": 'q="quoted" & more n=5',
        "all": {"query": '"quoted" & more', "limit": 5},
    }


def test_gateway_execution_timeout_and_config_errors(base: str, mode: str) -> None:
    ex = HttpExecution(
        {"url": base + "/slow?delay={{input.delay}}", "timeout": 100},
        tool="slow",
        retry=RetryPolicy(max_attempts=1),
    )
    result = erun(ex, mode, {"delay": 0.4})
    assert not result.success and result.metadata["error_type"] == "timeout"
    with pytest.raises(HttpConfigurationError, match="not allowed in the scheme or host"):
        HttpExecution({"url": "http://{{input.host}}/x"}, tool="t")
    with pytest.raises(HttpConfigurationError, match="not allowed in the scheme or host"):
        HttpExecution({"url": "http://127.0.0.1:1{{input.port}}/x"}, tool="t")
    with pytest.raises(HttpConfigurationError, match="TB_NOPE is not set"):
        HttpExecution({"url": base, "headers": {"A": "${env.TB_NOPE}"}}, tool="t", env={})
    with pytest.raises(HttpConfigurationError, match=re.escape("tool 't': execution.timeout")):
        HttpExecution({"url": base, "timeout": "soon"}, tool="t")
    with pytest.raises(HttpConfigurationError, match="no 'url'"):
        HttpExecution({"agentConfig": {}}, tool="t")


def test_gateway_webhook_posts_the_input(base: str, mode: str) -> None:
    ex = HttpExecution(
        {"webhookUrl": base + "/echo", "headers": {"X-Extra": "${env.TB_HOOK}"}},
        tool="hook",
        env={"TB_HOOK": "hook-secret-123"},
    )
    result = erun(ex, mode, {"_tool": "hook", "job": 1, "tags": ["a"]}, Echo)
    assert result.success, result.error
    assert json.loads(d(result).body) == {"job": 1, "tags": ["a"]}
    assert d(result).headers["x-extra"] == "hook-secret-123"  # sent; the echo is the API's data
    assert "hook-secret-123" not in repr(result)
    failed = erun(
        HttpExecution(
            {"url": base + "/status/500", "headers": {"X-Extra": "${env.TB_HOOK}"}},
            tool="hook",
            env={"TB_HOOK": "hook-secret-123"},
        ),
        mode,
        {},
    )
    assert not failed.success and "hook-secret-123" not in str(failed)


def test_gateway_execution_from_binding(base: str, mode: str) -> None:
    binding = ToolBinding(
        name="fetchItem",
        provider_name="fetchItem",
        models=(BaseModel, BaseModel),
        parameters={"type": "object"},
        defs={},
        execution_type="gateway",
        execution={"url": base + "/items/{{input.id}}", "method": "GET"},
    )
    ex = HttpExecution.from_binding(binding)
    result = erun(ex, mode, {"_tool": "fetchItem", "id": "7"}, ItemOut)
    assert result.success and d(result).item_id == "7"


def test_public_surface() -> None:
    names = http_module.__all__
    assert names == sorted(names)
    assert all(hasattr(http_module, n) for n in names)


def test_app_openapi_declares_what_the_runtime_needs(base: str) -> None:
    """The lead compiles this document for the end-to-end test: keep it meaningful."""
    import httpx

    doc = httpx.get(f"{base}/openapi.json").json()
    assert set(doc["components"]["securitySchemes"]) == set(SCHEMES)
    assert doc["paths"]["/auth/and"]["get"]["security"] == [{"ApiKeyHeader": [], "Bearer": []}]
    styles = {
        p["name"]: (p.get("style"), p.get("explode"))
        for p in doc["paths"]["/styles/query"]["get"]["parameters"]
    }
    assert styles["filter"] == ("deepObject", True) and styles["pp"] == ("pipeDelimited", False)
    assert doc["servers"][0]["variables"]["port"]["default"] == "8000"
