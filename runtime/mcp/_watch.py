"""toolbind.runtime.mcp, runtime layer (imports anyio, and ``httpx2`` lazily; nothing of
toolbind): noticing that an MCP server went away, so its session ends at once.

A stdio server whose process ended closes its standard output: the session's read stream ends.
An HTTP server that is gone refuses connections: the SDK's next request (a call, or its attempt to
resume a call's event stream) fails to connect. Either sets ``Lost``, which ends the session (the
calls waiting on it fail as a lost connection, not as a timeout) and makes the next call start a
new one — instead of a call sent into a dead session, failed, and only then a reconnection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

import anyio


class Lost:
    """Whether the session's server went away, and why (the first sign)."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.why: str | None = None

    def note(self, why: str) -> None:
        if self.why is None:
            self.why = why
        self.event.set()


class _WatchedStream:
    """A transport's read stream (the SDK's ``ReadStream`` protocol) that notes its end."""

    def __init__(self, inner: Any, lost: Lost) -> None:
        self.inner = inner
        self.lost = lost

    async def receive(self) -> Any:
        try:
            return await self.inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.lost.note("the server closed the connection")
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedStream:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self.inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # ``last_context`` and the like: the inner stream's
        return getattr(self.inner, name)


@asynccontextmanager
async def watched(
    transport: AbstractAsyncContextManager[Any], lost: Lost
) -> AsyncGenerator[tuple[Any, Any]]:
    """``transport`` (a stdio or streamable HTTP client), its read stream's end noted in ``lost``."""
    async with transport as streams:
        read, write = streams[0], streams[1]
        yield _WatchedStream(read, lost), write


def watched_http(lost: Lost) -> Any:
    """An httpx2 transport that notes in ``lost`` a connection the server refused (it is gone)."""
    import httpx2

    class Watched(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            try:
                return await self.inner.handle_async_request(request)
            except httpx2.ConnectError as exc:
                lost.note(f"it refused a connection ({exc or type(exc).__name__})")
                raise

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Watched()


class SendFailure(logging.Filter):
    """The SDK logs a whole traceback (about 75 lines) when a message to an HTTP server it lost
    cannot be sent — the ``notifications/cancelled`` of a call it gave up on, say; the call's
    failure already says the server went away. Here it is one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc: BaseException | None = record.exc_info[1] if record.exc_info else None
        if exc is None or record.getMessage() != "Error in post_writer":
            return True
        exc = _innermost(exc)
        record.msg = "an MCP server could not be sent a message (it went away?): %s: %s"
        record.args = (type(exc).__name__, exc)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _innermost(exc: BaseException) -> BaseException:
    """The one exception an exception group of one (and so on) holds."""
    current: BaseException = exc
    while isinstance(current, BaseExceptionGroup):
        inner = cast("tuple[BaseException, ...]", current.exceptions)  # pyright: ignore[reportUnknownMemberType]
        if len(inner) != 1:
            break
        current = inner[0]
    return cast("BaseException", current)


SEND_FAILURE = SendFailure()
