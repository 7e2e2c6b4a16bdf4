"""Test support: a FastAPI app exercising everything the HTTP runtime must do, and a foreign host.

Served by uvicorn on 127.0.0.1 (``tests._servers.serve_asgi``). Its ``/openapi.json`` declares
the parameters' styles (``openapi_extra`` where FastAPI cannot), the security schemes and the
bodies, so the OpenAPI compiler can compile it for an end-to-end test. Endpoints echo what
arrived on the wire (raw path, raw query, headers, cookies, body) so tests assert exact bytes.

``STATE`` holds the app's counters and switches (token lifetime, revoked tokens, flaky-endpoint
hit counts); tests reset it with ``reset()``.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Cookie, FastAPI, Form, Header, Request, Response, Security, UploadFile
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, StreamingResponse
from fastapi.security import (
    APIKeyCookie,
    APIKeyHeader,
    APIKeyQuery,
    HTTPAuthorizationCredentials,
    HTTPBasic,
    HTTPBasicCredentials,
    HTTPBearer,
    OAuth2,
    OpenIdConnect,
)
from pydantic import BaseModel

API_KEY = "key-5f1c9a7e"
BEARER_TOKEN = "bearer-8d2e4b6a"
OIDC_TOKEN = "oidc-3b7f1d9c"
BASIC_USER = "ann"
BASIC_PASSWORD = "pw-9e3a7c1f"
CLIENT_ID = "client-app"
CLIENT_SECRET = "secret-4c8e2a6f"

STATE: dict[str, Any] = {}


def reset() -> None:
    """Forget every counter and switch (call at the start of each test)."""
    STATE.clear()
    STATE.update(
        token_fetches=0,
        token_lifetime=3600,
        tokens={},
        revoked=set(),
        hits={},
        admin_hits=0,
        echo_hits=0,
        last_token_form={},
    )


reset()


def _hit(key: str) -> int:
    hits: dict[str, int] = STATE["hits"]
    hits[key] = hits.get(key, 0) + 1
    return hits[key]


app = FastAPI(
    title="toolbind test API",
    version="1.0.0",
    # The port is chosen when the test server starts: pass it as a server variable.
    servers=[{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "8000"}}}],
)

api_key_header = APIKeyHeader(name="X-API-Key", scheme_name="ApiKeyHeader", auto_error=False)
api_key_query = APIKeyQuery(name="api_key", scheme_name="ApiKeyQuery", auto_error=False)
api_key_cookie = APIKeyCookie(name="api_session", scheme_name="ApiKeyCookie", auto_error=False)
bearer = HTTPBearer(scheme_name="Bearer", auto_error=False)
basic = HTTPBasic(scheme_name="Basic", auto_error=False)
oauth2 = OAuth2(
    flows=OAuthFlows(
        clientCredentials=OAuthFlowClientCredentials(
            tokenUrl="/token", scopes={"read": "read things"}
        )
    ),
    scheme_name="OAuth2",
    auto_error=False,
)
oidc = OpenIdConnect(
    openIdConnectUrl="/.well-known/openid-configuration", scheme_name="OpenId", auto_error=False
)


class Echo(BaseModel):
    """What arrived: the raw path and query as sent on the wire, selected headers, cookies."""

    method: str
    raw_path: str
    query_string: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    cookies: dict[str, str]
    body: str


_ECHO_HEADERS = (
    "authorization",
    "x-trace",
    "x-list",
    "x-obj",
    "x-json",
    "content-type",
    "x-extra",
    "accept",
)


async def _echo(request: Request) -> Echo:
    STATE["echo_hits"] += 1
    body = await request.body()
    return Echo(
        method=request.method,
        raw_path=request.scope["raw_path"].decode("latin-1"),
        query_string=request.scope["query_string"].decode("latin-1"),
        query=list(request.query_params.multi_items()),
        headers={k: v for k, v in request.headers.items() if k in _ECHO_HEADERS},
        cookies=dict(request.cookies),
        body=body.decode("utf-8", errors="replace"),
    )


def _param(name: str, location: str, style: str, explode: bool, schema: dict[str, Any]) -> Any:
    return {"name": name, "in": location, "style": style, "explode": explode, "schema": schema}


_ARRAY = {"type": "array", "items": {"type": "integer"}}
_OBJECT = {
    "type": "object",
    "properties": {"role": {"type": "string"}, "first": {"type": "string"}},
}


# -- parameters -------------------------------------------------------------------------------


class Item(BaseModel):
    item_id: str
    q: str | None
    trace: str | None
    session: str | None
    raw_path: str


@app.get("/items/{item_id}", operation_id="getItem", tags=["params"], response_model=Item)
async def get_item(
    request: Request,
    item_id: str,
    q: str | None = None,
    x_trace: Annotated[str | None, Header()] = None,
    session: Annotated[str | None, Cookie()] = None,
) -> Item:
    return Item(
        item_id=item_id,
        q=q,
        trace=x_trace,
        session=session,
        raw_path=request.scope["raw_path"].decode("latin-1"),
    )


@app.get(
    "/styles/path/{simple}/{label}/{matrix}",
    operation_id="pathStyles",
    tags=["params"],
    response_model=Echo,
    openapi_extra={
        "parameters": [
            _param("simple", "path", "simple", False, _ARRAY) | {"required": True},
            _param("label", "path", "label", True, _ARRAY) | {"required": True},
            _param("matrix", "path", "matrix", False, _OBJECT) | {"required": True},
        ]
    },
)
async def path_styles(request: Request) -> Echo:
    return await _echo(request)


@app.get(
    "/styles/query",
    operation_id="queryStyles",
    tags=["params"],
    response_model=Echo,
    openapi_extra={
        "parameters": [
            _param("ids", "query", "form", True, _ARRAY),
            _param("tags", "query", "form", False, _ARRAY),
            _param("sp", "query", "spaceDelimited", False, _ARRAY),
            _param("pp", "query", "pipeDelimited", False, _ARRAY),
            _param("filter", "query", "deepObject", True, _OBJECT),
            _param("obj", "query", "form", True, _OBJECT),
            {"name": "json", "in": "query", "content": {"application/json": {"schema": _OBJECT}}},
        ]
    },
)
async def query_styles(request: Request) -> Echo:
    return await _echo(request)


@app.get(
    "/styles/header",
    operation_id="headerStyles",
    tags=["params"],
    response_model=Echo,
    openapi_extra={
        "parameters": [
            _param("X-Trace", "header", "simple", False, {"type": "string"}),
            _param("X-List", "header", "simple", False, _ARRAY),
            _param("X-Obj", "header", "simple", True, _OBJECT),
            _param("session", "cookie", "form", True, {"type": "string"}),
            # OpenAPI ignores it: credentials are configuration's, never the model's.
            _param("Authorization", "header", "simple", False, {"type": "string"}),
        ]
    },
)
async def header_styles(request: Request) -> Echo:
    return await _echo(request)


@app.get("/files/{name}", operation_id="getFile", tags=["params"], response_model=Echo)
async def get_file(request: Request, name: str) -> Echo:
    return await _echo(request)


@app.get("/raw/{rest:path}", operation_id="rawPath", response_model=Echo, tags=["params"])
async def raw_path(request: Request, rest: str) -> Echo:
    """Any path under /raw/: echoes the raw path, so tests see what a path value became."""
    return await _echo(request)


@app.get("/admin", operation_id="admin", tags=["params"])
async def admin() -> dict[str, str]:
    STATE["admin_hits"] += 1
    return {"secret": "admin area"}


# -- bodies -----------------------------------------------------------------------------------


class PetIn(BaseModel):
    name: str
    tags: list[str] = []


class Pet(BaseModel):
    id: int
    name: str
    tags: list[str]


@app.post("/pets", operation_id="createPet", tags=["bodies"], response_model=Pet, status_code=201)
async def create_pet(pet: PetIn) -> Pet:
    return Pet(id=7, name=pet.name, tags=pet.tags)


class FormOut(BaseModel):
    name: str
    count: int
    colors: list[str]


@app.post("/form", operation_id="submitForm", tags=["bodies"], response_model=FormOut)
async def submit_form(
    name: Annotated[str, Form()],
    count: Annotated[int, Form()],
    colors: Annotated[list[str] | None, Form()] = None,
) -> FormOut:
    return FormOut(name=name, count=count, colors=colors or [])


class UploadOut(BaseModel):
    filename: str | None
    content_type: str | None
    content_b64: str
    description: str
    meta: str | None


@app.post("/upload", operation_id="upload", tags=["bodies"], response_model=UploadOut)
async def upload(
    file: UploadFile,
    description: Annotated[str, Form()],
    meta: Annotated[str | None, Form()] = None,
) -> UploadOut:
    content = await file.read()
    return UploadOut(
        filename=file.filename,
        content_type=file.content_type,
        content_b64=base64.b64encode(content).decode(),
        description=description,
        meta=meta,
    )


@app.post(
    "/upload/image",
    operation_id="uploadImage",
    tags=["bodies"],
    response_model=UploadOut,
    # The part's declared content type (OpenAPI's encoding object), which the client must use.
    openapi_extra={
        "requestBody": {
            "content": {"multipart/form-data": {"encoding": {"file": {"contentType": "image/png"}}}}
        }
    },
)
async def upload_image(file: UploadFile, description: Annotated[str, Form()]) -> UploadOut:
    return await upload(file, description)


@app.post(
    "/text",
    operation_id="postText",
    tags=["bodies"],
    response_class=PlainTextResponse,
    openapi_extra={
        "requestBody": {"required": True, "content": {"text/plain": {"schema": {"type": "string"}}}}
    },
)
async def post_text(request: Request) -> str:
    body = (await request.body()).decode()
    return f"{request.headers.get('content-type')}|{body.upper()}"


@app.get("/nothing", operation_id="nothing", tags=["bodies"], status_code=204)
async def nothing() -> Response:
    return Response(status_code=204)


class Detail(BaseModel):
    detail: str


@app.get("/status/{code}", operation_id="status", tags=["transport"], response_model=Detail)
async def status(code: int) -> JSONResponse:
    return JSONResponse({"detail": f"you asked for {code}"}, status_code=code)


# -- auth -------------------------------------------------------------------------------------


class Who(BaseModel):
    """Who the server authenticated (and what it saw: the token, the cookies)."""

    who: str
    token: str | None = None
    token_no: int | None = None
    cookies: dict[str, str] | None = None


_WHO: dict[str, Any] = {"response_model": Who, "response_model_exclude_none": True}


def _bearer_ok(creds: HTTPAuthorizationCredentials | None, token: str) -> bool:
    return creds is not None and creds.scheme.lower() == "bearer" and creds.credentials == token


def _deny() -> JSONResponse:
    return JSONResponse({"detail": "not authenticated"}, status_code=401)


@app.get("/auth/apikey-header", operation_id="authApiKeyHeader", tags=["auth"], **_WHO)
async def auth_apikey_header(key: Annotated[str | None, Security(api_key_header)]) -> Any:
    return {"who": "apikey-header"} if key == API_KEY else _deny()


@app.get("/auth/apikey-query", operation_id="authApiKeyQuery", tags=["auth"], **_WHO)
async def auth_apikey_query(key: Annotated[str | None, Security(api_key_query)]) -> Any:
    return {"who": "apikey-query"} if key == API_KEY else _deny()


@app.get("/auth/apikey-cookie", operation_id="authApiKeyCookie", tags=["auth"], **_WHO)
async def auth_apikey_cookie(
    request: Request, key: Annotated[str | None, Security(api_key_cookie)]
) -> Any:
    if key != API_KEY:
        return _deny()
    return {"who": "apikey-cookie", "cookies": dict(request.cookies)}


@app.get("/auth/bearer", operation_id="authBearer", tags=["auth"], **_WHO)
async def auth_bearer(
    creds: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> Any:
    return {"who": "bearer"} if _bearer_ok(creds, BEARER_TOKEN) else _deny()


@app.get("/auth/basic", operation_id="authBasic", tags=["auth"], **_WHO)
async def auth_basic(creds: Annotated[HTTPBasicCredentials | None, Security(basic)]) -> Any:
    if creds is None or (creds.username, creds.password) != (BASIC_USER, BASIC_PASSWORD):
        return _deny()
    return {"who": f"basic:{creds.username}"}


@app.get("/auth/oidc", operation_id="authOidc", tags=["auth"], **_WHO)
async def auth_oidc(token: Annotated[str | None, Security(oidc)]) -> Any:
    return {"who": "oidc"} if token == f"Bearer {OIDC_TOKEN}" else _deny()


@app.get("/auth/oauth", operation_id="authOauth", tags=["auth"], **_WHO)
async def auth_oauth(token: Annotated[str | None, Security(oauth2, scopes=["read"])]) -> Any:
    tokens: dict[str, float] = STATE["tokens"]
    value = (token or "").removeprefix("Bearer ")
    expires = tokens.get(value)
    if expires is None or value in STATE["revoked"] or time.monotonic() > expires:
        return _deny()
    # "token" echoes the secret (the client scrubs it), "token_no" tells tokens apart
    return {"who": "oauth", "token": value, "token_no": int(value.removeprefix("tok-"))}


@app.post("/token", include_in_schema=False)
async def token(request: Request) -> Any:
    form = dict((await request.form()).items())
    STATE["last_token_form"] = {k: v for k, v in form.items() if k != "client_secret"}
    client_id, secret = form.get("client_id"), form.get("client_secret")
    auth = request.headers.get("authorization", "")
    if auth.startswith("Basic "):
        client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
    if form.get("grant_type") != "client_credentials" or (client_id, secret) != (
        CLIENT_ID,
        CLIENT_SECRET,
    ):
        return JSONResponse({"error": "invalid_client"}, status_code=401)
    STATE["token_fetches"] += 1
    value = f"tok-{STATE['token_fetches']:06d}"  # real tokens are long: no shorter than a secret
    lifetime = STATE["token_lifetime"]
    STATE["tokens"][value] = time.monotonic() + lifetime
    return {"access_token": value, "token_type": "Bearer", "expires_in": lifetime}


@app.post("/token-drip", include_in_schema=False)
async def token_drip(chunks: int = 100, interval: float = 0.1) -> StreamingResponse:
    """A token endpoint that never finishes its answer (each byte within a read timeout)."""

    async def body() -> AsyncIterator[bytes]:
        yield b'{"access_token": "tok-drip", "padding": "'
        for _ in range(chunks):
            await asyncio.sleep(interval)
            yield b"x"
        yield b'"}'

    return StreamingResponse(body(), media_type="application/json")


@app.post("/token-huge", include_in_schema=False)
async def token_huge(size: int) -> StreamingResponse:
    """A token endpoint whose answer is ``size`` bytes long."""

    async def body() -> AsyncIterator[bytes]:
        yield b'{"access_token": "tok-huge", "padding": "'
        sent = 0
        while sent < size:
            n = min(65536, size - sent)
            sent += n
            yield b"x" * n
        yield b'"}'

    return StreamingResponse(body(), media_type="application/json")


def _both(request: Request) -> bool:
    return request.headers.get("x-api-key") == API_KEY and request.headers.get("authorization") == (
        f"Bearer {BEARER_TOKEN}"
    )


@app.get(
    "/auth/and",
    operation_id="authAnd",
    tags=["auth"],
    **_WHO,
    openapi_extra={"security": [{"ApiKeyHeader": [], "Bearer": []}]},
)
async def auth_and(request: Request) -> Any:
    return {"who": "apikey+bearer"} if _both(request) else _deny()


@app.get(
    "/auth/or",
    operation_id="authOr",
    tags=["auth"],
    **_WHO,
    openapi_extra={"security": [{"ApiKeyHeader": [], "Bearer": []}, {"Basic": []}]},
)
async def auth_or(request: Request) -> Any:
    if _both(request):
        return {"who": "apikey+bearer"}
    auth = request.headers.get("authorization", "")
    if auth == "Basic " + base64.b64encode(f"{BASIC_USER}:{BASIC_PASSWORD}".encode()).decode():
        return {"who": "basic"}
    return _deny()


@app.get("/auth/leaky", operation_id="authLeaky", tags=["auth"], **_WHO)
async def auth_leaky(
    request: Request, key: Annotated[str | None, Security(api_key_header)]
) -> JSONResponse:
    """A badly behaved API: its error body repeats the credentials it received."""
    return JSONResponse(
        {"detail": f"bad key {key}", "auth": request.headers.get("authorization")},
        status_code=500,
    )


# -- retries, redirects, timeouts, sizes --------------------------------------------------------


class Attempt(BaseModel):
    """Which attempt of a flaky call succeeded (the server counts them per ``key``)."""

    attempt: int


@app.get("/flaky/429", operation_id="flaky429", tags=["transport"], response_model=Attempt)
async def flaky_429(key: str, fail: int = 1, retry_after: str = "0") -> Any:
    if _hit(key) <= fail:
        return JSONResponse(
            {"detail": "slow down"}, status_code=429, headers={"Retry-After": retry_after}
        )
    return {"attempt": STATE["hits"][key]}


@app.get("/flaky/503", operation_id="flaky503", tags=["transport"], response_model=Attempt)
async def flaky_503(key: str, fail: int = 1, code: int = 503) -> Any:
    if _hit(key) <= fail:
        return JSONResponse({"detail": "unavailable"}, status_code=code)
    return {"attempt": STATE["hits"][key]}


@app.post("/flaky/503", operation_id="flakyPost", tags=["transport"], response_model=Attempt)
async def flaky_post(key: str, fail: int = 1, code: int = 503) -> Any:
    if _hit(key) <= fail:
        return JSONResponse({"detail": "unavailable"}, status_code=code)
    return {"attempt": STATE["hits"][key]}


@app.get("/http-date", operation_id="retryAfterDate", tags=["transport"], response_model=Attempt)
async def retry_after_date(key: str) -> Any:
    if _hit(key) == 1:
        when = email.utils.formatdate(time.time(), usegmt=True)
        return JSONResponse({"detail": "later"}, status_code=503, headers={"Retry-After": when})
    return {"attempt": STATE["hits"][key]}


@app.get("/redirect", operation_id="redirect", tags=["transport"], response_model=Item)
async def redirect(to: str, code: int = 302) -> RedirectResponse:
    return RedirectResponse(to, status_code=code)


@app.post("/redirect", operation_id="redirectPost", tags=["transport"], response_model=Echo)
async def redirect_post(to: str, code: int = 307) -> RedirectResponse:
    return RedirectResponse(to, status_code=code)


@app.post("/echo", operation_id="echoPost", tags=["bodies"], response_model=Echo)
async def echo_post(request: Request) -> Echo:
    return await _echo(request)


@app.get("/echo", operation_id="echoGet", tags=["params"], response_model=Echo)
async def echo_get(request: Request) -> Echo:
    return await _echo(request)


@app.get("/slow", operation_id="slow", tags=["transport"])
async def slow(delay: float = 1.0) -> dict[str, float]:
    await asyncio.sleep(delay)
    return {"slept": delay}


@app.get(
    "/huge",
    operation_id="huge",
    tags=["transport"],
    response_class=Response,
    responses={
        200: {
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            }
        }
    },
)
async def huge(size: int, stream: bool = False) -> Response:
    if not stream:
        return Response(b"x" * size, media_type="application/octet-stream")

    async def chunks() -> AsyncIterator[bytes]:
        sent = 0
        while sent < size:
            n = min(65536, size - sent)
            sent += n
            yield b"x" * n

    return StreamingResponse(chunks(), media_type="application/octet-stream")


@app.get("/drip", operation_id="drip", tags=["transport"])
async def drip(chunks: int = 10, interval: float = 0.1) -> StreamingResponse:
    """Bytes trickling in, each well within a read timeout, the whole far beyond it."""

    async def body() -> AsyncIterator[bytes]:
        for _ in range(chunks):
            yield b"x"
            await asyncio.sleep(interval)

    return StreamingResponse(body(), media_type="text/plain")


@app.get("/plain", operation_id="plain", tags=["bodies"], response_class=PlainTextResponse)
async def plain(request: Request) -> PlainTextResponse:
    return PlainTextResponse(
        "hello, world", headers={"X-Request-Id": "req-42", "Set-Cookie": "sid=1"}
    )


@app.get("/leak", operation_id="leak", tags=["transport"])
async def leak(request: Request, status: int = 200) -> JSONResponse:
    """A badly behaved API: repeats every credential it received (headers, cookies, query)."""
    return JSONResponse(
        {
            "authorization": request.headers.get("authorization"),
            "x_api_key": request.headers.get("x-api-key"),
            "cookie": request.headers.get("cookie"),
            "query": request.scope["query_string"].decode("latin-1"),
            "text": f"you sent {request.headers.get('authorization')} and {request.url}",
        },
        status_code=status,
    )


@app.get("/gzip-bomb", operation_id="gzipBomb", tags=["transport"])
async def gzip_bomb(size: int) -> Response:
    """``size`` zero bytes, gzip-compressed: a small body that inflates far beyond it."""
    return Response(
        _bomb(size),
        media_type="application/octet-stream",
        headers={"Content-Encoding": "gzip"},
    )


_BOMBS: dict[int, bytes] = {}


def _bomb(size: int) -> bytes:
    import gzip

    if size not in _BOMBS:
        _BOMBS[size] = gzip.compress(b"\0" * size, compresslevel=9)
    return _BOMBS[size]


@app.get("/big-headers", operation_id="bigHeaders", tags=["transport"])
async def big_headers(size: int) -> Response:
    return Response(b"{}", media_type="application/json", headers={"X-Big": "x" * size})


@app.get("/loop", operation_id="loop", tags=["transport"])
async def loop() -> RedirectResponse:
    return RedirectResponse("/loop", status_code=302)


# -- another host (a different port): where an attacker would like requests to go -------------

foreign = FastAPI(title="foreign")
FOREIGN_HITS: list[str] = []


@foreign.api_route("/{rest:path}", methods=["GET", "POST"])
async def foreign_any(request: Request, rest: str) -> dict[str, Any]:
    FOREIGN_HITS.append(
        f"{request.method} /{rest} auth={request.headers.get('authorization')} "
        f"key={request.headers.get('x-api-key')}"
    )
    return {"foreign": True}
