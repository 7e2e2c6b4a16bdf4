"""toolbind.runtime.mcp, runtime layer (imports the ``mcp`` SDK and ``httpx2`` lazily, the runtime's
``_result`` and ``errors``, and this package's ``_config``, ``_results`` and ``_watch``): one MCP
server's session.

``McpConnection`` holds one server's session: opened on first use, reused across calls, closed by
``aclose``; a server that dies mid-call gives a failed result naming the server (a lost
connection, also when the call had a timeout), and the session ends as soon as the server is seen
gone, so the next call connects again (a stdio server that died between calls costs no call). Progress notifications are the call's progress items
``{"progress", "total", "message"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._result import ToolResult
from ..errors import UsageError
from ._config import McpServerConfig, expand_env
from ._results import result_value
from ._watch import SEND_FAILURE, Lost, watched, watched_http

START_TIMEOUT = 60.0
"""Seconds a server may take to start and answer ``initialize`` when its configuration gives no
``startTimeout`` and no ``timeout``."""

if TYPE_CHECKING:
    from mcp import Client


class _StdoutNoise(logging.Filter):
    """The SDK logs a whole traceback (an error) for each line a stdio server writes to its
    standard output that is not JSON-RPC — a banner, ``Loading configuration from .env file...``
    — and goes on; a user of ``toolbind generate`` read it as toolbind failing. Here it is one
    warning line naming what was written."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not str(record.msg).startswith("Failed to parse JSONRPC message"):
            return True
        from pydantic import ValidationError

        found: Any = None
        if isinstance(exc, ValidationError) and exc.errors():  # its input is the line
            found = exc.errors()[0].get("input")
        line = found if isinstance(found, str) else str(exc)
        record.msg = "an MCP server wrote a line that is not JSON-RPC to its stdout (ignored): %r"
        record.args = (line if len(line) <= 200 else line[:199] + "…",)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_STDOUT_NOISE = _StdoutNoise()


class McpConnection:
    """One MCP server's session, through the official SDK's ``mcp.Client``.

    Connected on first use and reused by every call; ``aclose`` ends it. A session lives in a
    task of its own (the SDK's task groups must be entered and left in one task), so calls can be
    made from any task of the same event loop. After the server went away (its process died, the
    HTTP endpoint stopped answering) the next call connects again.
    """

    def __init__(
        self,
        config: McpServerConfig,
        *,
        env: Mapping[str, str] | None = None,
        on_list_changed: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.env = env
        self.on_list_changed = on_list_changed
        self.connects = 0
        """How many sessions were opened (1 + reconnections)."""
        self.unlisted: tuple[str, ...] = ()
        """The names ``allowedTools`` gives that the last ``tools/list`` did not list."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lost: Lost | None = None  # the current session's

    @property
    def name(self) -> str:
        return self.config.name

    def _transport(self, lost: Lost) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        env = os.environ if self.env is None else self.env
        where = f"MCP server {self.name!r}"
        cfg = self.config
        if cfg.transport == "stdio":
            assert cfg.command is not None
            logging.getLogger("mcp.client.stdio").addFilter(_STDOUT_NOISE)  # once: same filter
            params = StdioServerParameters(
                command=cfg.command,
                args=list(cfg.args),
                env={k: expand_env(v, env, f"{where} env {k}") for k, v in cfg.env.items()},
                cwd=cfg.cwd,
            )
            return watched(stdio_client(params, errlog=sys.stderr), lost)
        import httpx2

        assert cfg.url is not None
        url = expand_env(cfg.url, env, f"{where} url")
        headers = {k: expand_env(v, env, f"{where} header {k}") for k, v in cfg.headers.items()}
        logging.getLogger("mcp.client.streamable_http").addFilter(SEND_FAILURE)
        client = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(30.0, read=300.0),
            transport=watched_http(lost),
        )
        return watched(_owning(streamable_http_client(url, http_client=client), client), lost)

    async def _session(self) -> Client:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (a sync Agent.run): the old session is gone
            self._client, self._task, self._lock, self._loop = None, None, asyncio.Lock(), loop
        assert self._lock is not None
        async with self._lock:
            if self._client is not None and self._task is not None and not self._task.done():
                return self._client
            await self._drop()
            ready: asyncio.Future[Client] = loop.create_future()
            closing = asyncio.Event()
            self._closing = closing
            self._task = asyncio.create_task(self._hold(ready, closing), name=f"mcp:{self.name}")
            # bounded: a server that never answers ``initialize`` must not hold the run forever
            cfg = self.config
            start = next(
                (t for t in (cfg.start_timeout, cfg.timeout) if t is not None), START_TIMEOUT
            )
            try:
                client = await asyncio.wait_for(asyncio.shield(ready), start)
            except TimeoutError:
                ready.cancel()
                task, self._task, self._closing = self._task, None, None
                task.cancel()  # (its transport ends with it: a stdio server is stopped)
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 5)
                raise TimeoutError(
                    f"MCP server {self.name!r} did not finish starting (initialize) in "
                    f"{start:g} s (its startTimeout in the configuration, else its timeout)"
                ) from None
            self._client = client
            self.connects += 1
            return client

    async def _hold(self, ready: asyncio.Future[Client], closing: asyncio.Event) -> None:
        async def on_message(message: Any) -> None:
            listed = getattr(message, "method", None) == "notifications/tools/list_changed"
            if listed and self.on_list_changed is not None:
                self.on_list_changed()

        try:
            try:
                from mcp import Client
            except ImportError as exc:  # said to the waiting call, which would wait forever else
                raise UsageError(
                    f"MCP server {self.name!r}: the MCP client is not installed ({exc}) — "
                    "pip install 'toolbind[mcp]'"
                ) from None
            lost = self._lost = Lost()
            transport = self._transport(lost)
            async with Client(transport, message_handler=on_message) as client:
                ready.set_result(client)
                # until closed, or the server is seen gone: the session ends with it (calls
                # waiting on it fail as a lost connection; the next call connects again)
                waits = [asyncio.ensure_future(e.wait()) for e in (closing, lost.event)]
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for wait in waits:
                        wait.cancel()
        except BaseException as exc:  # connecting failed, or the session ended
            if not ready.done():
                ready.set_exception(
                    exc if isinstance(exc, Exception) else ConnectionError(str(exc))
                )

    async def _drop(self) -> None:
        task, closing = self._task, self._closing
        self._client, self._task, self._closing = None, None, None
        if task is None:
            return
        if closing is not None:
            closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except BaseException:  # a dead session may not close cleanly
            task.cancel()

    async def aclose(self) -> None:
        """End the session (the server process, for stdio), if one is open in this loop."""
        if self._loop is asyncio.get_running_loop():
            await self._drop()
        else:
            self._client, self._task, self._closing = None, None, None

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as JSON, kept to ``allowedTools``.

        Raises:
            ConnectionError: the server cannot be reached (the message names it).
            UsageError: an ``${env.X}`` it needs is not set.
        """
        tools: list[dict[str, Any]] = []
        try:
            client = await self._session()
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(
                    t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools
                )
                cursor = page.next_cursor
                if not cursor:
                    break
        except UsageError:
            raise
        except Exception as exc:
            await self._drop()
            raise ConnectionError(f"MCP server {self.name!r}: {_why(exc)}") from exc
        allowed = self.config.allowed_tools
        if allowed is not None:
            names = {t.get("name") for t in tools}
            self.unlisted = tuple(n for n in allowed if n not in names)
            tools = [t for t in tools if t.get("name") in allowed]
        return tools

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        output_model: Any = None,
        progress: Callable[[Any], None] | None = None,
        timeout: float | None = None,
    ) -> ToolResult[Any]:
        """``tools/call``, as a ``ToolResult`` (never raises for the server's failures).

        ``timeout`` (default: the config's) bounds the call: past it the SDK sends
        ``notifications/cancelled`` and the result is a failed one. ``progress`` gets
        ``{"progress", "total", "message"}`` for each progress notification.

        Raises:
            UsageError: ``tool`` is not one the configuration's ``allowedTools`` keeps (nothing
                is sent: the list holds here as it does in ``list_tools``, the generated
                code, the Agent and ``toolbind serve``).
        """
        allowed = self.config.allowed_tools
        if allowed is not None and tool not in allowed:
            raise UsageError(
                f"MCP server {self.name!r}: tool={tool!r} is not in its allowedTools "
                f"({', '.join(allowed) or 'none'}); nothing was sent"
            )
        seconds = timeout if timeout is not None else self.config.timeout
        meta = {"execution": "explicit", "mcp_server": self.name}

        report = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report({"progress": progress, "total": total, "message": message})

        try:
            client = await self._session()
        except UsageError as exc:
            return ToolResult[Any].fail(str(exc), error_type="configuration", **meta)
        except Exception as exc:
            return ToolResult[Any].fail(
                f"MCP server {self.name!r} cannot be reached: {_why(exc)}",
                error_type="connection",
                **meta,
            )
        try:
            result = await client.call_tool(
                tool,
                dict(arguments),
                read_timeout_seconds=seconds,
                progress_callback=on_progress,
            )
        except Exception as exc:
            return await self._failed(exc, tool, seconds)
        return result_value(result, server=self.name, tool=tool, output_model=output_model)

    async def _failed(self, exc: Exception, tool: str, seconds: float | None) -> ToolResult[Any]:
        """The failed result of a ``tools/call`` that raised ``exc``: a timeout, a lost
        connection (the session is dropped), an answer the SDK refused, or the server's error."""
        from mcp import MCPError
        from mcp_types import REQUEST_TIMEOUT

        meta = {"execution": "explicit", "mcp_server": self.name}
        lost = self._lost.why if self._lost is not None else None
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT and lost is None:
            return ToolResult[Any].fail(
                f"MCP server {self.name!r}, tool {tool!r}: timed out after {seconds:g}s "
                "(cancelled on the server)",
                error_type="timeout",
                **meta,
            )
        if isinstance(exc, RuntimeError) and "structured content" in str(exc):
            # the SDK checked the answer against the tool's outputSchema and refused it: the
            # server answered (its session is fine), with a result of the wrong shape
            return ToolResult[Any].fail(
                f"MCP server {self.name!r}, tool {tool!r}: the result does not match the "
                f"tool's outputSchema: {str(exc).splitlines()[0]}",
                error_type="output",
                **meta,
            )
        broken = self._task is None or self._task.done() or _closed(exc) or lost is not None
        if isinstance(exc, MCPError) and not broken:
            return ToolResult[Any].fail(
                f"MCP server {self.name!r}, tool {tool!r}: {_why(exc)}",
                error_type="protocol",
                **meta,
            )
        # the transport broke: the server died or stopped answering
        await self._drop()
        return ToolResult[Any].fail(
            f"MCP server {self.name!r} went away during the call to {tool!r}: {lost or _why(exc)}",
            error_type="connection",
            **meta,
        )


def _closed(exc: Exception) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        return "; ".join(_why(e) for e in group.exceptions)
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


class _owning:
    """An async context manager that closes an httpx2 client after the transport it feeds."""

    def __init__(self, inner: Any, client: Any) -> None:
        self.inner, self.client = inner, client

    async def __aenter__(self) -> Any:
        await self.client.__aenter__()
        try:
            return await self.inner.__aenter__()
        except BaseException:
            await self.client.__aexit__(None, None, None)
            raise

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.inner.__aexit__(*exc)
        finally:
            await self.client.__aexit__(None, None, None)
