"""Runtime layer (HTTP): send one prepared request — auth, retries, redirects, bounds, the ToolResult.

Imports httpx and pydantic. Shared by ``HttpClient`` (OpenAPI operations), ``GenericHttpTool`` and
``HttpExecution`` (gateway configs). The exchange is written once, as a generator that yields
I/O actions (send, read, sleep, fetch a token); a sync and an async driver perform them, so the
sync and async clients cannot drift apart.

Invariants: only URLs under the configured servers are requested (redirects included); secrets
are scrubbed from every error, metadata value, log line and JSON/text response body (an API that
echoes a credential does not hand it to the model); every wait is bounded (timeouts,
``Retry-After`` capped, a bounded number of attempts and redirects); a response body is read
up to ``max_response_bytes`` and no further.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import json
import logging
import threading
import time
from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from httpx._decoders import SUPPORTED_DECODERS
from pydantic import BaseModel, ValidationError

from .._result import ToolResult
from ..contract import SecurityRequirement
from ..errors import ResponseTooLarge
from ._auth import (
    AuthParts,
    Credential,
    Redactor,
    TokenCache,
    TokenError,
    static_parts,
    token_key,
)

log = logging.getLogger("toolbind.runtime.http")

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# How much of a failed response's body is kept (in ``data`` and, shorter, in ``error``).
_ERROR_BODY_CHARS = 4000
_ERROR_SNIPPET_CHARS = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """When and how long to retry.

    Attributes:
        max_attempts: total attempts including the first (1 = never retry).
        backoff: the first delay in seconds; doubled on each further retry.
        max_backoff: the longest computed backoff delay.
        max_retry_after: the longest a server's ``Retry-After`` is honoured (longer values wait
            this long).
        statuses: response statuses that are retried.
        retry_non_idempotent: also retry POST/PATCH after a retryable status or a failure after
            the request was sent — a timeout, a connection that broke before the answer —
            (connection failures before sending are always retried; those after it, for
            idempotent methods and operations that take an ``Idempotency-Key``).
    """

    max_attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0
    statuses: frozenset[int] = frozenset({429, 502, 503, 504})
    retry_non_idempotent: bool = False

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(
                f"RetryPolicy.max_attempts must be at least 1, got {self.max_attempts}"
            )
        for name in ("backoff", "max_backoff", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"RetryPolicy.{name} must not be negative")


@dataclass(slots=True)
class Outgoing:
    """One request before authentication: the URL holds no secret."""

    method: str
    url: httpx.URL
    headers: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    cookies: list[str] = field(default_factory=list[str])
    content: bytes | None = None
    label: str = ""  # the tool's name, for messages
    # the operation says a repeat is safe (it takes an ``Idempotency-Key``, which this request
    # carries): a POST/PATCH is retried like a GET
    idempotent: bool = False
    # the content type the Output model describes (None: unknown, the model applies to any)
    output_media: str | None = None
    # the Output is the content itself (a ``format: binary`` string): JSON is not parsed
    output_binary: bool = False
    # the response headers the operation declares (lower-case): reported in the metadata
    declared_headers: frozenset[str] = frozenset()
    # the media types its responses declare (an answer of another one is read as output_media)
    declared_media: frozenset[str] = frozenset()


class Authenticator:
    """Applies one chosen security requirement; fetches OAuth2 tokens through the exchange."""

    def __init__(
        self,
        requirement: Sequence[SecurityRequirement],
        credentials: Mapping[str, Credential],
        tokens: TokenCache,
    ) -> None:
        self._requirement = tuple(requirement)
        self._credentials = credentials
        self._tokens = tokens
        self._oauth = [
            (req, credentials[req.scheme])
            for req in self._requirement
            if credentials[req.scheme].scheme.type == "oauth2"
            and credentials[req.scheme].secret is None
        ]

    @property
    def refreshable(self) -> bool:
        """Whether a 401 may be cured by fetching new tokens."""
        return bool(self._oauth)

    def invalidate(self) -> None:
        self._tokens.invalidate([token_key(cred, req) for req, cred in self._oauth])

    def parts(self) -> Generator[Action, Any, AuthParts]:
        tokens: dict[str, str] = {}
        for req, cred in self._oauth:
            key = token_key(cred, req)
            value = self._tokens.get(key)
            if value is None:
                try:
                    response = yield Action("token", self._tokens.token_request(cred, key[1]))
                except httpx.HTTPError as exc:
                    raise TokenError(
                        f"oauth2 token request for scheme {req.scheme!r} failed: "
                        f"{type(exc).__name__}"
                    ) from None
                except ResponseTooLarge:
                    raise TokenError(
                        f"oauth2 token response for scheme {req.scheme!r} is too large; not read"
                    ) from None
                value = self._tokens.store(key, cast("httpx.Response", response), scheme=req.scheme)
            tokens[req.scheme] = value
        return static_parts(self._requirement, self._credentials, tokens)


@dataclass(frozen=True, slots=True)
class Action:
    """One I/O step the drivers perform: ``send``/``token`` a request, ``read``/``close`` a
    response, ``sleep`` seconds."""

    kind: str
    arg: Any


def base_of(url: httpx.URL) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path prefix) of a server URL; what 'under this server' means."""
    return (url.scheme, url.host, url.port, url.path.rstrip("/"))


def is_under(url: httpx.URL, bases: Iterable[tuple[str, str, int | None, str]]) -> bool:
    """Whether ``url`` lies under one of ``bases`` (same scheme, host and port; path prefix)."""
    for scheme, host, port, prefix in bases:
        if (url.scheme, url.host, url.port) != (scheme, host, port):
            continue
        if not prefix or url.path == prefix or url.path.startswith(prefix + "/"):
            return True
    return False


def origin(url: httpx.URL) -> str:
    """``scheme://host[:port]`` — how a URL is named in messages (no path, query or userinfo)."""
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}"


def shown(url: httpx.URL) -> str:
    """``scheme://host[:port]/path`` as sent — how a request is named in messages and metadata.

    The path stays percent-encoded: decoded, a path parameter ``a b/c?d`` read as two segments
    and a query (``/search/a b/c?d``) where ``/search/a%20b%2Fc%3Fd`` went out. Never the query,
    which may carry an API key.
    """
    return origin(url) + url.raw_path.split(b"?", 1)[0].decode("ascii")


def _where(out: Outgoing, url: httpx.URL) -> str:
    return f"{out.method} {shown(url)}"


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header (delta-seconds or HTTP-date) as seconds from now, or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_SELECTED = ("content-type", "etag", "location", "retry-after", "traceparent")
_SELECTED_PARTS = ("request-id", "requestid", "correlation-id", "trace-id", "ratelimit")


def selected_headers(
    headers: httpx.Headers, redact: Redactor, declared: Collection[str] = ()
) -> dict[str, str]:
    """The response headers worth reporting: content type, request ids, rate limits, retry,
    and those the operation's spec declares (``declared``, lower-case; never ``Set-Cookie``)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if (
            lower in _SELECTED
            or any(part in lower for part in _SELECTED_PARTS)
            or (lower in declared and lower != "set-cookie")
        ):
            out[lower] = redact(value)
    return out


def _media(headers: httpx.Headers) -> str:
    return _base_media(headers.get("content-type", ""))


def _base_media(media: str) -> str:
    """A media type without its parameters, lower-case (``text/plain; charset=utf-8`` →
    ``text/plain``)."""
    return media.split(";")[0].strip().lower()


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _is_text(media: str) -> bool:
    return (
        media.startswith("text/")
        or media.endswith("+xml")
        or media
        in ("application/xml", "application/javascript", "application/x-www-form-urlencoded")
    )


def _utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _reads_as(declared: str, media: str, body: bytes) -> bool:
    """Whether a body sent as ``media`` is read as the ``declared`` media type (the one the
    Output model describes): JSON as declared text (JSON is text), text that parses as JSON as
    declared JSON; never a stream (read as its values), binary content or a wildcard."""
    if "*" in declared or media in _STREAM_MEDIA or declared in _STREAM_MEDIA or not _utf8(body):
        return False
    if _is_text(declared):
        return _is_json(media)
    if not (_is_json(declared) and _is_text(media)):
        return False
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _text(response: httpx.Response, body: bytes) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


class Exchange:
    """Sends Outgoing requests within a set of allowed base URLs; turns responses into results."""

    def __init__(
        self,
        *,
        bases: Sequence[tuple[str, str, int | None, str]],
        timeout: float,
        retry: RetryPolicy,
        max_response_bytes: int,
        max_redirects: int,
        redact: Redactor,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        keep_cookies: bool = True,
    ) -> None:
        self.bases = list(bases)
        # A cookie an API sets is sent back to it on the following requests of this client (its
        # session) and redirects, as a browser or requests.Session does; requests only ever go to
        # the configured servers. ``keep_cookies=False``: every call starts without cookies.
        self.cookies: httpx.Cookies | None = httpx.Cookies() if keep_cookies else None
        self.timeout = timeout
        self.retry = retry
        self.max_response_bytes = max_response_bytes
        self.max_redirects = max_redirects
        self.redact = redact
        self._transport = transport
        self._async_transport = async_transport
        self._client: httpx.Client | None = None
        self._aclient: httpx.AsyncClient | None = None
        self._lock = threading.Lock()  # clients are made on first use, maybe from two threads

    # -- clients ---------------------------------------------------------------------------
    @property
    def client(self) -> httpx.Client:
        with self._lock:
            return self._make_client()

    def _make_client(self) -> httpx.Client:
        if self._client is None:
            # trust_env=False: proxies/netrc from the environment would add credentials or hosts
            # the configuration did not name.
            self._client = httpx.Client(
                timeout=self.timeout,
                follow_redirects=False,
                trust_env=False,
                transport=self._transport,
            )
        return self._client

    @property
    def aclient(self) -> httpx.AsyncClient:
        with self._lock:
            return self._make_aclient()

    def _make_aclient(self) -> httpx.AsyncClient:
        if self._aclient is None:
            self._aclient = httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                trust_env=False,
                transport=self._async_transport,
            )
        return self._aclient

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
        self.close()

    # -- drivers ---------------------------------------------------------------------------
    def run(self, steps: Generator[Action, Any, ToolResult[Any]]) -> ToolResult[Any]:
        """Drive ``steps`` with the sync client."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                action = steps.send(value) if error is None else steps.throw(error)
            except StopIteration as stop:
                return cast("ToolResult[Any]", stop.value)
            value, error = None, None
            try:
                value = self._perform(action)
            except Exception as exc:
                error = exc

    def _perform(self, action: Action) -> Any:
        client = self.client
        if action.kind == "send":
            return client.send(action.arg, stream=True)
        if action.kind == "token":
            # bounded like any response: a token endpoint dripping bytes or answering megabytes
            deadline = time.monotonic() + self.timeout
            response = client.send(action.arg, stream=True)
            try:
                body = self._read(response, deadline)
            finally:
                response.close()
            return _with_body(response, body)
        if action.kind == "read":
            response, deadline = cast("tuple[httpx.Response, float]", action.arg)
            return self._read(response, deadline)
        if action.kind == "close":
            cast("httpx.Response", action.arg).close()
            client.cookies.clear()  # no state carried from one call to the next
            return None
        time.sleep(cast("float", action.arg))
        return None

    async def arun(self, steps: Generator[Action, Any, ToolResult[Any]]) -> ToolResult[Any]:
        """Drive ``steps`` with the async client."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                action = steps.send(value) if error is None else steps.throw(error)
            except StopIteration as stop:
                return cast("ToolResult[Any]", stop.value)
            value, error = None, None
            try:
                value = await self._aperform(action)
            except Exception as exc:
                error = exc

    async def _aperform(self, action: Action) -> Any:
        client = self.aclient
        if action.kind == "send":
            return await client.send(action.arg, stream=True)
        if action.kind == "token":
            deadline = time.monotonic() + self.timeout
            response = await client.send(action.arg, stream=True)
            try:
                body = await self._aread(response, deadline)
            finally:
                await response.aclose()
            return _with_body(response, body)
        if action.kind == "read":
            response, deadline = cast("tuple[httpx.Response, float]", action.arg)
            return await self._aread(response, deadline)
        if action.kind == "close":
            await cast("httpx.Response", action.arg).aclose()
            client.cookies.clear()
            return None
        await asyncio.sleep(cast("float", action.arg))
        return None

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        """The body, at most ``max_response_bytes`` (decoded) and read before ``deadline``."""
        self._check_length(response)
        parts: list[bytes] = []
        total = 0
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > self.max_response_bytes:
                raise ResponseTooLarge
            if time.monotonic() > deadline:  # a server dripping bytes under the read timeout
                raise httpx.ReadTimeout("response took longer than the timeout")
            parts.append(chunk)
        return b"".join(parts)

    async def _aread(self, response: httpx.Response, deadline: float) -> bytes:
        """``_read``, asynchronously."""
        self._check_length(response)
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > self.max_response_bytes:
                raise ResponseTooLarge
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("response took longer than the timeout")
            chunks.append(chunk)
        return b"".join(chunks)

    def _check_length(self, response: httpx.Response) -> None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_response_bytes:
            raise ResponseTooLarge

    # -- the exchange ----------------------------------------------------------------------
    def steps(
        self,
        out: Outgoing,
        auth: Authenticator | None,
        output_model: type[BaseModel] | None,
        *,
        bases: Sequence[tuple[str, str, int | None, str]] | None = None,
    ) -> Generator[Action, Any, ToolResult[Any]]:
        """The whole exchange for ``out`` as I/O actions; returns the ToolResult.

        ``bases``: where this request (and its redirects) may go; default: all of ``self.bases``.
        """
        allowed = self.bases if bases is None else bases
        retry = self.retry
        method, url, content = out.method, out.url, out.content
        headers = list(out.headers)
        attempts = 0
        redirects = 0
        refreshed = False
        retries: list[dict[str, Any]] = []

        def described(status: int | None, response_headers: httpx.Headers | None) -> dict[str, Any]:
            # Every result carries the same keys, whether or not a response came back (a
            # connection failure has status None), so code reading them never meets a KeyError;
            # a failed one adds error_type.
            return {
                "status": status,
                "method": method,
                "url": self.redact(shown(url)),
                "headers": (
                    {}
                    if response_headers is None
                    else selected_headers(response_headers, self.redact, out.declared_headers)
                ),
                "attempts": attempts,
                "retries": retries,
                "redirects": redirects,
            }

        def fail(
            message: str,
            kind: str,
            status: int | None = None,
            response: httpx.Response | None = None,
            **extra: Any,
        ) -> ToolResult[Any]:
            meta = (
                described(status, None if response is None else response.headers)
                | {"error_type": kind}
                | extra
            )
            text = self.redact(f"{out.label}: {message}" if out.label else message)
            log.info("%s", text)
            return ToolResult[Any].fail(text, **meta)

        if not is_under(url, allowed):
            return fail(f"{shown(url)} is outside the configured servers", "refused_url")

        # ``timeout`` bounds the whole call: every attempt, wait between retries and read
        call_deadline = time.monotonic() + self.timeout

        def in_time(delay: float) -> bool:
            return time.monotonic() + delay < call_deadline

        while True:
            attempts += 1
            idempotent = method in IDEMPOTENT or retry.retry_non_idempotent or out.idempotent
            try:
                parts = AuthParts() if auth is None else (yield from auth.parts())
            except TokenError as exc:
                return fail(str(exc), "auth")
            request = _build(method, url, _with_defaults(headers), out.cookies, content, parts)
            self._add_session_cookies(request)
            left = call_deadline - time.monotonic()
            if left <= 0:
                return fail(f"{_where(out, url)} timed out after {self.timeout:g} s", "timeout")
            request.extensions["timeout"] = httpx.Timeout(min(left, self.timeout)).as_dict()
            log.debug("%s attempt %d", self.redact(_where(out, url)), attempts)
            try:
                started = time.monotonic()
                response = cast("httpx.Response", (yield Action("send", request)))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Nothing was sent: safe to retry whatever the method.
                delay = self._backoff(attempts)
                if attempts < retry.max_attempts and in_time(delay):
                    retries.append({"error": type(exc).__name__, "delay": delay})
                    yield Action("sleep", delay)
                    continue
                return fail(f"cannot connect to {origin(url)} ({type(exc).__name__})", "connection")
            except httpx.TimeoutException as exc:
                # a POST that timed out may have been done: not sent again (retry_non_idempotent)
                delay = self._backoff(attempts)
                if idempotent and attempts < retry.max_attempts and in_time(delay):
                    retries.append({"error": type(exc).__name__, "delay": delay})
                    yield Action("sleep", delay)
                    continue
                return fail(f"{_where(out, url)} timed out after {self.timeout:g} s", "timeout")
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                # The connection broke once the request was sent, before any answer: most often
                # a kept-alive one the server closed as it was reused (uvicorn closes it after a
                # Starlette app's 500, with no ``Connection: close``: Phoenix's, any FastAPI
                # server's unhandled error). A request a repeat is safe for goes out again on a
                # new connection; a POST may have been done, and is not (retry_non_idempotent)
                delay = self._backoff(attempts)
                if idempotent and attempts < retry.max_attempts and in_time(delay):
                    retries.append({"error": type(exc).__name__, "delay": delay})
                    yield Action("sleep", delay)
                    continue
                message = f"{_where(out, url)} failed: {type(exc).__name__}"
                if not idempotent:
                    message += (
                        " (no answer came: not sent again, it may have been done; "
                        "RetryPolicy(retry_non_idempotent=True) sends it again)"
                    )
                return fail(message, "connection")
            except httpx.HTTPError as exc:
                return fail(f"{_where(out, url)} failed: {type(exc).__name__}", "connection")

            if self.cookies is not None:
                self.cookies.extract_cookies(response)
            status = response.status_code
            if status in _REDIRECTS and "location" in response.headers:
                yield Action("close", response)
                try:
                    target = url.join(response.headers["location"])
                except httpx.InvalidURL:
                    return fail(
                        f"redirect to an invalid URL ({status})", "redirect_refused", status=status
                    )
                if not is_under(target, allowed):
                    # (the response's headers kept: a download an API hands to another host,
                    # Box's dl.boxcloud.com or a presigned store URL, is the Location in full)
                    return fail(
                        f"redirect ({status}) to {shown(target)} refused: outside "
                        "the configured servers (the whole Location is in "
                        "metadata['headers']['location'])",
                        "redirect_refused",
                        status=status,
                        response=response,
                    )
                if redirects >= self.max_redirects:
                    return fail(
                        f"more than {self.max_redirects} redirects",
                        "redirect_refused",
                        status=status,
                    )
                redirects += 1
                attempts -= 1
                if status == 303 or (status in (301, 302) and method not in ("GET", "HEAD")):
                    method = "GET" if method != "HEAD" else "HEAD"
                    content = None
                    headers = [(k, v) for k, v in headers if k.lower() != "content-type"]
                url = target
                continue
            if status == 401 and auth is not None and auth.refreshable and not refreshed:
                yield Action("close", response)
                refreshed = True
                attempts -= 1
                auth.invalidate()
                continue
            after = retry_after_seconds(response.headers.get("retry-after"))
            delay = (
                min(after, retry.max_retry_after) if after is not None else self._backoff(attempts)
            )
            if (
                status in retry.statuses
                and idempotent
                and attempts < retry.max_attempts
                and in_time(delay)  # no retry the call's deadline could not wait for
            ):
                retries.append({"status": status, "delay": delay})
                yield Action("close", response)
                log.info(
                    "%s: HTTP %d, retrying in %.2f s", self.redact(_where(out, url)), status, delay
                )
                yield Action("sleep", delay)
                continue
            try:
                read_by = min(started + self.timeout, call_deadline)
                body = cast("bytes", (yield Action("read", (response, read_by))))
            except ResponseTooLarge:
                yield Action("close", response)
                return fail(
                    f"response larger than {self.max_response_bytes} bytes; not read",
                    "response_too_large",
                    status=status,
                )
            except httpx.TimeoutException:
                yield Action("close", response)
                return fail(
                    f"{_where(out, url)} timed out reading the response", "timeout", status=status
                )
            except httpx.HTTPError as exc:
                yield Action("close", response)
                return fail(
                    f"{_where(out, url)} failed reading: {type(exc).__name__}",
                    "connection",
                    status=status,
                )
            yield Action("close", response)
            meta = described(status, response.headers)
            return self._result(out, url, response, body, output_model, meta)

    def _add_session_cookies(self, request: httpx.Request) -> None:
        """Add the cookies the API set earlier (for this URL) to ``request``; a cookie the Call
        sends itself wins over one of the same name."""
        if self.cookies is None or not self.cookies:
            return
        probe = httpx.Request(request.method, request.url)
        self.cookies.set_cookie_header(probe)
        kept = probe.headers.get("cookie")
        if not kept:
            return
        given = request.headers.get("cookie")
        names: set[str] = {p.split("=", 1)[0].strip() for p in given.split(";")} if given else set()
        extra = [p.strip() for p in kept.split(";") if p.split("=", 1)[0].strip() not in names]
        if extra:
            request.headers["Cookie"] = "; ".join([*([given] if given else []), *extra])

    def _backoff(self, attempt: int) -> float:
        return min(self.retry.backoff * (2 ** (attempt - 1)), self.retry.max_backoff)

    def _result(
        self,
        out: Outgoing,
        url: httpx.URL,
        response: httpx.Response,
        body: bytes,
        output_model: type[BaseModel] | None,
        meta: dict[str, Any],
    ) -> ToolResult[Any]:
        media = _media(response.headers)
        status = response.status_code
        prefix = f"{out.label}: " if out.label else ""
        # ``data`` is what the API sent, unscrubbed (the Agent scrubs what it sends the model);
        # messages, which reach logs and exceptions, are scrubbed
        # 304 Not Modified answers the caller's own conditional request (If-None-Match,
        # If-Modified-Since): a success with no data, as 204 is
        if not 200 <= status < 300 and status != 304:
            text = _text(response, body)
            data: Any = text[:_ERROR_BODY_CHARS]
            if _is_json(media) and len(text) <= _ERROR_BODY_CHARS:
                with contextlib.suppress(ValueError):
                    data = json.loads(text)
            snippet = self.redact(" ".join(text[:_ERROR_SNIPPET_CHARS].split()))
            reason = response.reason_phrase
            message = f"{prefix}HTTP {status} {reason} from {_where(out, url)}"
            if snippet:
                message += f": {snippet}"
            meta["error_type"] = "http_status"
            log.info("%s", message)
            return ToolResult[Any].fail(message, data=data, **meta)
        if body and not media:
            # no Content-Type (a store that keeps none, a bare ``send_file``): the media type
            # the operation declares; else text when the bytes are UTF-8, else binary (base64)
            # — never a lossy decode, which turned every image into U+FFFDs and said success
            declared = out.output_media
            if declared and "*" not in declared:
                media = declared
            elif not _utf8(body):
                media = "application/octet-stream"
        described = _base_media(out.output_media or "")
        declared = {_base_media(m) for m in out.declared_media}
        if body and described and media not in declared and _reads_as(described, media, body):
            # an answer labelled otherwise than the operation declares it (Phoenix's experiment
            # download, declared text/plain, comes as application/json): read as declared, which
            # is what the Output model describes — the JSON text as a string, or text that is
            # JSON as JSON — and said, never a failed output check on the API's own answer
            log.warning(
                "%s%s: the response is %s where the operation declares %s: read as %s",
                *(prefix, _where(out, url), media, described, described),
            )
            meta["read_as"] = described
            media = described
        if not body:
            value: Any = None
        elif media in _STREAM_MEDIA:
            value = _stream_values(media, _text(response, body))
            meta["stream"] = "event-stream" if media == "text/event-stream" else "json-lines"
            if out.output_media is not None and out.output_media not in _STREAM_MEDIA:
                # the Output model describes the operation's single answer (its JSON content),
                # not a stream of values (an API streams when the call asks it to): the values
                # as the API sent them, never a failed output check
                return ToolResult[Any].ok(value, **meta)
        elif _is_json(media) and not out.output_binary:
            text = _text(response, body)
            try:
                value = json.loads(text)
            except ValueError:
                # an API that streams JSON lines under application/json: the values, in order
                lines = _json_lines(text)
                if lines is not None:
                    value = lines
                    meta["stream"] = "json-lines"
                    return self._typed(out, url, value, output_model, meta, prefix)
                meta["error_type"] = "invalid_response"
                return ToolResult[Any].fail(
                    f"{prefix}{self.redact(_where(out, url))} returned invalid JSON",
                    data=_text(response, body)[:_ERROR_BODY_CHARS],
                    **meta,
                )
        elif _is_text(media) or not media:
            value = _text(response, body)
        else:
            # binary: its media type goes with it, so an MCP server answers an image as an image
            # (toolbind serve), not as the base64 text of one
            meta["media_type"] = media
            if output_model is None:
                return ToolResult[Any].ok(body, **meta)  # bytes
            with contextlib.suppress(ValidationError):
                return ToolResult[Any].ok(output_model.model_validate(body), **meta)
            # A generated Output holds binary content as JSON does: a base64 string.
            value = base64.b64encode(body).decode("ascii")
        return self._typed(out, url, value, output_model, meta, prefix)

    def _typed(
        self,
        out: Outgoing,
        url: httpx.URL,
        value: Any,
        output_model: type[BaseModel] | None,
        meta: dict[str, Any],
        prefix: str,
    ) -> ToolResult[Any]:
        """``value`` validated by the Output model (a failed result naming what does not fit)."""
        if output_model is not None and value is None:
            # No content: typed when the Output says so (``null``), else plain None.
            with contextlib.suppress(ValidationError):
                value = output_model.model_validate(None)
        elif output_model is not None:
            try:
                value = output_model.model_validate(value)
            except ValidationError as exc:
                lenient = _without_undeclared_nulls(value, exc)
                if lenient is not None:
                    kept, dropped = lenient
                    log.warning(
                        "%s%s: the response has null where %s does not allow it: %s",
                        prefix,
                        _where(out, url),
                        output_model.__name__,
                        ", ".join(dropped),
                    )
                    meta["nulls"] = dropped
                    try:  # read as absent, typed
                        return ToolResult[Any].ok(output_model.model_validate(kept), **meta)
                    except ValidationError:  # (a required member: the data as the API sent it)
                        return ToolResult[Any].ok(value, **meta)
                undeclared = _undeclared_members(value, exc)
                if undeclared is not None:
                    extras, nulls = undeclared
                    log.warning(
                        "%s%s: the response has members %s does not declare: %s; the data is as "
                        "the API sent it",
                        prefix,
                        _where(out, url),
                        output_model.__name__,
                        ", ".join(extras),
                    )
                    meta["extras"] = extras
                    if nulls:
                        meta["nulls"] = nulls
                    return ToolResult[Any].ok(value, **meta)
                meta["error_type"] = "invalid_output"
                problems = "; ".join(
                    f"{'/'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                    for err in exc.errors()[:5]
                )
                # (said first: the call went through, and whoever reads this must not repeat it)
                status = meta.get("status")
                return ToolResult[Any].fail(
                    f"{prefix}{_where(out, url)} answered HTTP {status} (the call went "
                    f"through), but its response does not match {output_model.__name__}: "
                    f"{problems}; the data is as the API sent it",
                    data=value,
                    **meta,
                )
        return ToolResult[Any].ok(value, **meta)


def _without_undeclared_nulls(value: Any, exc: ValidationError) -> tuple[Any, list[str]] | None:
    """``value`` without the object members whose ``null`` the Output model refused, and their
    paths; None when some refusal is of anything else (or of a null that is no member).

    Servers send ``null`` for members that their spec types as a plain string, as pydantic 1
    (older FastAPI) writes ``Optional[str]`` and as Swagger 2.0 has no ``nullable``: LNbits and
    Jupyter Server answer so on most calls (Jupyter's spec requires ``content`` and says in
    words that it may be null). Such a call went through, and saying it failed invites a model
    to repeat it: ``_typed`` reads the optional members as absent (the typed Output), or, where
    a required member is null, gives the data as the API sent it — either way a success whose
    ``metadata["nulls"]`` lists the paths, with a warning logged. Any other mismatch is still a
    failed output check. The raw value is left as it is (a copy is made).
    """
    copy = json.loads(json.dumps(value))  # (JSON values: from a JSON body)
    targets: dict[str, tuple[dict[str, Any], str]] = {}  # path → (object, member)
    for err in exc.errors():
        if err.get("input", ...) is not None:
            return None
        # the loc names union branches beside keys and indexes: follow what the value has
        node: Any = copy
        owner: dict[str, Any] | None = None
        member = ""
        path: list[str] = []
        for part in err["loc"]:
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                owner, member = cast("dict[str, Any]", node), part
                node = owner[part]
            elif isinstance(node, list) and isinstance(part, int):
                items = cast("list[Any]", node)
                if not 0 <= part < len(items):
                    return None
                owner, node = None, items[part]
            else:
                continue
            path.append(str(part))
        if owner is None or node is not None:
            return None  # (a null that is no object member: an item, the whole value)
        targets["/".join(path)] = (owner, member)
    for owner, member in targets.values():
        del owner[member]
    return (copy, sorted(targets)) if targets else None


def _undeclared_members(value: Any, exc: ValidationError) -> tuple[list[str], list[str]] | None:
    """The paths of the members a closed object of the Output model does not declare, and of
    the nulls it refused; None when any refusal is of something else.

    A server adds members to what it sends where its spec closed the object
    (``additionalProperties: false``; Superset's Flask-AppBuilder writes one component for a
    request body and the answer, which carries more): the call went through, and its answer
    holds everything the Output describes — so a success, with the data as the API sent it
    (no member dropped), ``metadata["extras"]`` listing the paths and a warning logged, as a
    required ``null`` is. Any other mismatch is still a failed output check.
    """
    extras: list[str] = []
    nulls: list[str] = []
    for err in exc.errors():
        if err["type"] == "extra_forbidden":
            where = extras
        elif err.get("input", ...) is None:
            where = nulls
        else:
            return None
        node: Any = value
        path: list[str] = []
        for part in err["loc"]:  # (the loc names union branches too: follow what the value has)
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                node = cast("dict[str, Any]", node)[part]
            elif isinstance(node, list) and isinstance(part, int):
                node = cast("list[Any]", node)[part]
            else:
                continue
            path.append(str(part))
        where.append("/".join(path))
    return (sorted(set(extras)), sorted(set(nulls))) if extras else None


_STREAM_MEDIA = frozenset(
    {"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
     "application/json-seq", "text/event-stream"}
)  # fmt: skip


def _json_lines(text: str) -> list[Any] | None:
    """The values of ``text`` read as JSON lines (NDJSON, RFC 7464's record separators too);
    None unless every non-empty line is one JSON value and there are at least two."""
    values: list[Any] = []
    for line in text.replace("\x1e", "\n").splitlines():
        if line.strip():
            try:
                values.append(json.loads(line))
            except ValueError:
                return None
    return values if len(values) > 1 else None


def _stream_values(media: str, text: str) -> list[Any]:
    """A streamed response (read whole, within the size bound) as the list of its values: JSON
    lines, or a server-sent event stream's ``data`` (JSON where it parses, else the text)."""
    if media != "text/event-stream":
        return _json_lines(text) or [json.loads(line) for line in text.splitlines() if line.strip()]
    values: list[Any] = []
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line:  # an event ends at a blank line
            if data:
                joined = "\n".join(data)
                try:
                    values.append(json.loads(joined))
                except ValueError:
                    values.append(joined)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return values


def unsent(
    message: str, kind: str, *, method: str | None = None, url: str | None = None
) -> ToolResult[Any]:
    """A failure before anything was sent (invalid input, a refused URL): the same metadata keys
    as every other result — ``status`` None, no headers, no attempt — and its ``error_type``."""
    return ToolResult[Any].fail(
        message,
        status=None,
        method=method,
        url=url,
        headers={},
        attempts=0,
        retries=[],
        redirects=0,
        error_type=kind,
    )


def _with_body(response: httpx.Response, body: bytes) -> httpx.Response:
    """A read response: ``response``'s status and headers (minus the content coding, already
    undone) with ``body``."""
    headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-encoding"]
    return httpx.Response(
        response.status_code, headers=headers, content=body, request=response.request
    )


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"toolbind/{version('toolbind')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "toolbind"


USER_AGENT = _user_agent()
"""Sent on every request unless the configuration's ``headers=`` names another."""
ACCEPT_ENCODING = ", ".join(k for k in SUPPORTED_DECODERS if k != "identity")
"""Every content coding httpx decodes here: gzip, deflate, br (brotli), zstd (zstandard)."""


def _with_defaults(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    names = {k.lower() for k, _ in headers}
    out = list(headers)
    if "user-agent" not in names:
        out.append(("User-Agent", USER_AGENT))
    if "accept-encoding" not in names:
        out.append(("Accept-Encoding", ACCEPT_ENCODING))
    return out


def _build(
    method: str,
    url: httpx.URL,
    headers: Sequence[tuple[str, str]],
    cookies: Sequence[str],
    content: bytes | None,
    parts: AuthParts,
) -> httpx.Request:
    from urllib.parse import quote

    final = url
    if parts.query:
        extra = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in parts.query)
        query = url.query.decode("ascii")
        final = url.copy_with(query=(f"{query}&{extra}" if query else extra).encode("ascii"))
    merged: list[tuple[str, str]] = [
        (k, v) for k, v in headers if k.lower() not in {n.lower() for n in parts.headers}
    ]
    merged.extend(parts.headers.items())
    cookie_list = list(cookies) + [
        f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in parts.cookies
    ]
    if cookie_list:
        # a configured ``Cookie`` header (HttpClient(headers=...): a session the spec's
        # ``Cookie`` header parameter asks for) is kept, but for the names the Call or a scheme
        # sends itself
        named = {c.split("=", 1)[0].strip() for c in cookie_list}
        configured = [
            pair.strip()
            for k, v in merged
            if k.lower() == "cookie"
            for pair in v.split(";")
            if pair.strip() and pair.split("=", 1)[0].strip() not in named
        ]
        merged = [(k, v) for k, v in merged if k.lower() != "cookie"]
        merged.append(("Cookie", "; ".join([*configured, *cookie_list])))
    encoded = [(k.encode("ascii"), v.encode("utf-8")) for k, v in merged]
    return httpx.Request(method, final, headers=encoded, content=content)
