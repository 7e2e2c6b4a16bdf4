"""Runtime layer (HTTP; imports httpx, pydantic and the package's ``_auth``, ``_core`` and
``_reading``): ``Exchange``, which sends one prepared request — auth, retries, redirects, bounds —
and turns its response into the ToolResult.

The exchange is written once, as a generator that yields I/O actions (send, read, sleep, fetch a
token); a sync and an async driver perform them, so the sync and async clients cannot drift
apart. ``_Call`` is one exchange's state across its attempts; each step of an attempt (send,
follow a redirect, retry a status, read the body) is a sub-generator of its own.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Generator, Sequence
from typing import Any, cast

import httpx
from pydantic import BaseModel

from .._result import ToolResult
from ..errors import ResponseTooLarge
from ._auth import AuthParts, Redactor, TokenError
from ._core import (
    IDEMPOTENT,
    Action,
    Authenticator,
    Outgoing,
    RetryPolicy,
    build,
    is_under,
    origin,
    retry_after_seconds,
    selected_headers,
    shown,
    where,
    with_defaults,
)
from ._reading import read_result

log = logging.getLogger("toolbind.runtime.http")

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


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
        call = _Call(out, self.redact)
        if not is_under(call.url, allowed):
            return call.fail(f"{shown(call.url)} is outside the configured servers", "refused_url")
        # ``timeout`` bounds the whole call: every attempt, wait between retries and read
        call.deadline = time.monotonic() + self.timeout
        while True:
            call.attempts += 1
            idempotent = (
                call.method in IDEMPOTENT or self.retry.retry_non_idempotent or out.idempotent
            )
            try:
                parts = AuthParts() if auth is None else (yield from auth.parts())
            except TokenError as exc:
                return call.fail(str(exc), "auth")
            request = build(
                call.method, call.url, with_defaults(call.headers), out.cookies, call.content, parts
            )
            self._add_session_cookies(request)
            left = call.deadline - time.monotonic()
            if left <= 0:
                return call.fail(
                    f"{where(out, call.url)} timed out after {self.timeout:g} s", "timeout"
                )
            request.extensions["timeout"] = httpx.Timeout(min(left, self.timeout)).as_dict()
            log.debug("%s attempt %d", self.redact(where(out, call.url)), call.attempts)
            started = time.monotonic()
            sent = yield from self._send(call, request, idempotent)
            if sent is None:  # retried
                continue
            if isinstance(sent, ToolResult):
                return sent
            response = sent
            if self.cookies is not None:
                self.cookies.extract_cookies(response)
            status = response.status_code
            if status in _REDIRECTS and "location" in response.headers:
                refused = yield from self._redirect(call, response, allowed)
                if refused is not None:
                    return refused
                continue
            if status == 401 and auth is not None and auth.refreshable and not call.refreshed:
                yield Action("close", response)
                call.refreshed = True
                call.attempts -= 1
                auth.invalidate()
                continue
            if (yield from self._retried(call, response, idempotent)):
                continue
            read_by = min(started + self.timeout, call.deadline)
            body = yield from self._body(call, response, read_by, idempotent)
            if body is None:  # cut mid-body, sent again
                continue
            if isinstance(body, ToolResult):
                return body
            yield Action("close", response)
            meta = call.described(status, response.headers)
            return read_result(out, call.url, response, body, output_model, meta, self.redact)

    def _send(
        self, call: _Call, request: httpx.Request, idempotent: bool
    ) -> Generator[Action, Any, httpx.Response | ToolResult[Any] | None]:
        """Send one attempt: its response, the failure, or None when it is to be tried again
        (after the wait, already yielded)."""
        out, url = call.out, call.url
        try:
            return cast("httpx.Response", (yield Action("send", request)))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # Nothing was sent: safe to retry whatever the method.
            if (yield from self._pause(call, exc, retryable=True)):
                return None
            return call.fail(
                f"cannot connect to {origin(url)} ({type(exc).__name__})", "connection"
            )
        except httpx.TimeoutException as exc:
            # a POST that timed out may have been done: not sent again (retry_non_idempotent)
            if (yield from self._pause(call, exc, retryable=idempotent)):
                return None
            return call.fail(f"{where(out, url)} timed out after {self.timeout:g} s", "timeout")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            # The connection broke once the request was sent, before any answer: most often
            # a kept-alive one the server closed as it was reused (uvicorn closes it after a
            # Starlette app's 500, with no ``Connection: close``: Phoenix's, any FastAPI
            # server's unhandled error). A request a repeat is safe for goes out again on a
            # new connection; a POST may have been done, and is not (retry_non_idempotent)
            if (yield from self._pause(call, exc, retryable=idempotent)):
                return None
            message = f"{where(out, url)} failed: {type(exc).__name__}"
            if not idempotent:
                message += (
                    " (no answer came: not sent again, it may have been done; "
                    "RetryPolicy(retry_non_idempotent=True) sends it again)"
                )
            return call.fail(message, "connection")
        except httpx.HTTPError as exc:
            return call.fail(f"{where(out, url)} failed: {type(exc).__name__}", "connection")

    def _pause(
        self, call: _Call, exc: Exception, *, retryable: bool
    ) -> Generator[Action, Any, bool]:
        """Wait before trying a failed send again, if it may be and there is time: True."""
        delay = self._backoff(call.attempts)
        if retryable and call.attempts < self.retry.max_attempts and call.in_time(delay):
            call.retries.append({"error": type(exc).__name__, "delay": delay})
            yield Action("sleep", delay)
            return True
        return False

    def _redirect(
        self,
        call: _Call,
        response: httpx.Response,
        allowed: Sequence[tuple[str, str, int | None, str]],
    ) -> Generator[Action, Any, ToolResult[Any] | None]:
        """Follow a redirect (``call`` then targets its Location), or the failure refusing it."""
        status = response.status_code
        yield Action("close", response)
        try:
            target = call.url.join(response.headers["location"])
        except httpx.InvalidURL:
            return call.fail(
                f"redirect to an invalid URL ({status})", "redirect_refused", status=status
            )
        if not is_under(target, allowed):
            # (the response's headers kept: a download an API hands to another host,
            # Box's dl.boxcloud.com or a presigned store URL, is the Location in full)
            return call.fail(
                f"redirect ({status}) to {shown(target)} refused: outside "
                "the configured servers (the whole Location is in "
                "metadata['headers']['location'])",
                "redirect_refused",
                status=status,
                response=response,
            )
        if call.redirects >= self.max_redirects:
            return call.fail(
                f"more than {self.max_redirects} redirects", "redirect_refused", status=status
            )
        call.redirects += 1
        call.attempts -= 1
        if status == 303 or (status in (301, 302) and call.method not in ("GET", "HEAD")):
            call.method = "GET" if call.method != "HEAD" else "HEAD"
            call.content = None
            call.headers = [(k, v) for k, v in call.headers if k.lower() != "content-type"]
        call.url = target
        return None

    def _retried(
        self, call: _Call, response: httpx.Response, idempotent: bool
    ) -> Generator[Action, Any, bool]:
        """Retry a response of a retryable status (after ``Retry-After`` or the backoff) when
        the method allows, attempts are left and the call's deadline can wait: True."""
        retry = self.retry
        status = response.status_code
        after = retry_after_seconds(response.headers.get("retry-after"))
        delay = (
            min(after, retry.max_retry_after) if after is not None else self._backoff(call.attempts)
        )
        if not (
            status in retry.statuses
            and idempotent
            and call.attempts < retry.max_attempts
            and call.in_time(delay)  # no retry the call's deadline could not wait for
        ):
            return False
        call.retries.append({"status": status, "delay": delay})
        yield Action("close", response)
        log.info(
            "%s: HTTP %d, retrying in %.2f s", self.redact(where(call.out, call.url)), status, delay
        )
        yield Action("sleep", delay)
        return True

    def _body(
        self, call: _Call, response: httpx.Response, read_by: float, idempotent: bool
    ) -> Generator[Action, Any, bytes | ToolResult[Any] | None]:
        """The response's body, read by ``read_by`` within the size bound, the failure, or None
        when it was cut and the request is to be sent again (after the wait, already yielded)."""
        status = response.status_code
        try:
            return cast("bytes", (yield Action("read", (response, read_by))))
        except ResponseTooLarge:
            yield Action("close", response)
            return call.fail(
                f"response larger than {self.max_response_bytes} bytes; not read",
                "response_too_large",
                status=status,
            )
        except httpx.TimeoutException:
            yield Action("close", response)
            return call.fail(
                f"{where(call.out, call.url)} timed out reading the response",
                "timeout",
                status=status,
            )
        except httpx.HTTPError as exc:
            yield Action("close", response)
            # The answer was cut mid-body (the server died, a proxy gave up; not a body that
            # cannot be decoded, which a repeat would not mend): the request was done. One a
            # repeat is safe for (RFC 9110's idempotent methods, or a keyed one) is sent once
            # more — a second cut is more likely the path's doing (a proxy's size limit) than
            # chance, and the body is not fetched again and again; a POST/PATCH never is
            # (retry_non_idempotent).
            cut = isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError)
            again = cut and idempotent and not call.cut
            if again and (yield from self._pause(call, exc, retryable=True)):
                call.cut = True
                return None
            message = f"{where(call.out, call.url)} failed reading: {type(exc).__name__}"
            if cut and not idempotent:
                message += (
                    f" (the answer, HTTP {status}, was cut mid-body: not sent again, it was "
                    "done; RetryPolicy(retry_non_idempotent=True) sends it again)"
                )
            return call.fail(message, "connection", status=status)

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


class _Call:
    """One exchange's state across its attempts, redirects and retries: where the request goes
    now (a redirect changes it), and what the result's metadata reports."""

    __slots__ = (
        "attempts",
        "content",
        "cut",
        "deadline",
        "headers",
        "method",
        "out",
        "redact",
        "redirects",
        "refreshed",
        "retries",
        "url",
    )

    def __init__(self, out: Outgoing, redact: Redactor) -> None:
        self.out, self.redact = out, redact
        self.method, self.url, self.content = out.method, out.url, out.content
        self.headers = list(out.headers)
        self.attempts = 0
        self.redirects = 0
        self.refreshed = False
        self.cut = False  # an answer was cut mid-body (and its request sent again)
        self.retries: list[dict[str, Any]] = []
        self.deadline = 0.0

    def in_time(self, delay: float) -> bool:
        """Whether waiting ``delay`` seconds still leaves time before the call's deadline."""
        return time.monotonic() + delay < self.deadline

    def described(
        self, status: int | None, response_headers: httpx.Headers | None
    ) -> dict[str, Any]:
        """The result's metadata. Every result carries the same keys, whether or not a response
        came back (a connection failure has status None), so code reading them never meets a
        KeyError; a failed one adds error_type."""
        return {
            "status": status,
            "method": self.method,
            "url": self.redact(shown(self.url)),
            "headers": (
                {}
                if response_headers is None
                else selected_headers(response_headers, self.redact, self.out.declared_headers)
            ),
            "attempts": self.attempts,
            "retries": self.retries,
            "redirects": self.redirects,
        }

    def fail(
        self,
        message: str,
        kind: str,
        status: int | None = None,
        response: httpx.Response | None = None,
        **extra: Any,
    ) -> ToolResult[Any]:
        """A failed result: ``message`` (scrubbed, after the tool's name) and the metadata."""
        meta = (
            self.described(status, None if response is None else response.headers)
            | {"error_type": kind}
            | extra
        )
        text = self.redact(f"{self.out.label}: {message}" if self.out.label else message)
        log.info("%s", text)
        return ToolResult[Any].fail(text, **meta)


def _with_body(response: httpx.Response, body: bytes) -> httpx.Response:
    """A read response: ``response``'s status and headers (minus the content coding, already
    undone) with ``body``."""
    headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-encoding"]
    return httpx.Response(
        response.status_code, headers=headers, content=body, request=response.request
    )
