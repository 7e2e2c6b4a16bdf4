"""Runtime layer: tools from live MCP servers (the client half of MCP). Imports ``mcp`` lazily.

The configuration has the gateway's shape (gateway-v3-tool-system.md, "MCP Tools")::

    {"mcp": {"servers": [
        {"name": "github", "url": "https://mcp.example.com/mcp", "transport": "http",
         "headers": {"Authorization": "Bearer ${env.GITHUB_TOKEN}"}, "allowedTools": ["list_prs"]},
        {"name": "time", "command": "mcp-server-time", "args": [], "env": {"TZ": "UTC"},
         "timeout": 30000}
    ]}}

``transport`` is ``http`` (streamable HTTP, the default with a ``url``) or ``stdio`` (the
default with a ``command``); ``${env.NAME}`` is read from the environment when the server is
connected, in the ``url``, ``headers`` values and ``env`` values; ``timeout`` is milliseconds per
call (a call that takes longer is cancelled on the server: the SDK sends
``notifications/cancelled``).

``McpConnection`` holds one server's session: opened on first use, reused across calls, closed by
``aclose``; a server that dies mid-call gives a failed result naming the server, and the next call
connects again. ``McpToolbox`` is what ``Agent(mcp_servers=...)`` runs on: ``tools/list`` at
start and again after the server sends ``notifications/tools/list_changed``, each tool a
``ToolBinding`` (execution type ``gateway``, not visible, never latent) whose models are compiled
from its ``inputSchema``/``outputSchema`` on first use, and whose Activity calls the server — but
for a tool the server's own UI calls (MCP Apps: ``_meta.ui.visibility`` without ``"model"``),
which a host never offers to a model.

A call's result (``result_value``): ``isError`` → a failed ``ToolResult`` with the content's
text; ``structuredContent`` → the Output (checked against the tool's ``outputSchema``); else
the content: one text block → its text, anything else → the list of content blocks as MCP's
JSON (``{"type": "image", "data": <base64>, "mimeType": ...}``, ``{"type": "resource",
"resource": {...}}``, ...). Progress notifications are the Activity's progress items
``{"progress", "total", "message"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from ._aio import drain
from ._binding import ToolBinding
from ._result import ToolResult
from .contract import META_FIELDS, mcp_app_only, mcp_task_only
from .errors import RunFailure, UsageError

if TYPE_CHECKING:
    from mcp import Client

    from ._registry import RegisteredActivity

Transport = Literal["http", "stdio"]
_ENV_REF = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")
_SERVER_KEYS = frozenset(
    {"name", "url", "transport", "headers", "allowedTools", "command", "args", "env", "cwd"}
    | {"timeout", "description"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """One MCP server of the configuration (``mcp.servers[i]``), checked.

    Attributes:
        name: the server's name (results and errors name it).
        transport: ``http`` (streamable HTTP) or ``stdio``.
        url: the endpoint (``http``), e.g. ``http://127.0.0.1:8000/mcp``; may hold ``${env.X}``.
        headers: HTTP headers sent with every request (values may hold ``${env.X}``).
        command, args, env, cwd: the process to start (``stdio``); ``env`` values may hold
            ``${env.X}`` and are added to a minimal default environment.
        allowed_tools: only these tools are used (None: every tool the server lists).
        timeout: seconds one call may take (None: the caller's default).
    """

    name: str
    transport: Transport
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    cwd: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    timeout: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The configuration in the gateway's shape again (``${env.X}`` left as written)."""
        out: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.url is not None:
            out["url"] = self.url
        if self.headers:
            out["headers"] = dict(self.headers)
        if self.command is not None:
            out["command"] = self.command
        if self.args:
            out["args"] = list(self.args)
        if self.env:
            out["env"] = dict(self.env)
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.allowed_tools is not None:
            out["allowedTools"] = list(self.allowed_tools)
        if self.timeout is not None:
            out["timeout"] = round(self.timeout * 1000)
        return out


Problem = tuple[str, str, str]
"""(JSON pointer, what was found, what was expected)."""


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def is_mcp_config(value: Any) -> bool:
    """Whether ``value`` looks like an MCP configuration: ``{"mcp": {"servers": ...}}``."""
    if not isinstance(value, dict):
        return False
    mcp = cast("dict[str, Any]", value).get("mcp")
    return isinstance(mcp, dict) and "servers" in mcp


def read_mcp_config(value: Any) -> tuple[list[McpServerConfig], list[Problem]]:
    """The servers of an MCP configuration, and its problems (located by JSON pointer).

    Takes ``{"mcp": {"servers": [...]}}``, ``{"servers": [...]}`` or the list itself.
    """
    problems: list[Problem] = []
    base = ""
    servers: Any = value
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        if "mcp" in obj:
            mcp = obj["mcp"]
            if not isinstance(mcp, dict):
                return [], [("/mcp", f"mcp is {_describe(mcp)}", "an object {servers: [...]}")]
            obj, base = cast("dict[str, Any]", mcp), "/mcp"
        servers = obj.get("servers")
        base += "/servers"
        if servers is None:
            return [], [(base, "no servers", "a list of servers {name, url | command, ...}")]
    if not isinstance(servers, list):
        return [], [(base, f"servers is {_describe(servers)}", "a list of servers")]
    out: list[McpServerConfig] = []
    names: set[str] = set()
    for i, raw in enumerate(cast("list[Any]", servers)):
        at = f"{base}/{i}"
        before = len(problems)
        server = _server(raw, at, problems)
        if server is None or len(problems) > before:
            continue
        if server.name in names:
            problems.append(
                (f"{at}/name", f"a second server named {server.name!r}", "unique names")
            )
            continue
        names.add(server.name)
        out.append(server)
    return out, problems


def _server(raw: Any, at: str, problems: list[Problem]) -> McpServerConfig | None:
    if not isinstance(raw, dict):
        problems.append((at, f"a server is {_describe(raw)}", "an object {name, url | command}"))
        return None
    obj = cast("dict[str, Any]", raw)
    for key in sorted(set(obj) - _SERVER_KEYS):
        problems.append(
            (f"{at}/{key}", f"unknown key {key!r}", "one of " + ", ".join(sorted(_SERVER_KEYS)))
        )
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        problems.append((f"{at}/name", f"name is {_describe(name)}", "a non-empty string"))
        name = ""
    url, command = obj.get("url"), obj.get("command")
    transport = obj.get("transport", "stdio" if command is not None and url is None else "http")
    if transport not in ("http", "stdio"):
        hint = " (streamable HTTP is 'http'; SSE is not supported)" if transport == "sse" else ""
        problems.append(
            (f"{at}/transport", f"transport is {_describe(transport)}", f"'http' or 'stdio'{hint}")
        )
        return None
    if transport == "http":
        if not isinstance(url, str) or not url.startswith(("http://", "https://", "${env.")):
            problems.append(
                (f"{at}/url", f"url is {_describe(url)}", "an http(s) URL for transport http")
            )
        if command is not None:
            problems.append(
                (f"{at}/command", "a command with transport http", "url only (or transport stdio)")
            )
    else:
        if not isinstance(command, str) or not command:
            problems.append(
                (
                    f"{at}/command",
                    f"command is {_describe(command)}",
                    "the program to start for transport stdio",
                )
            )
        if url is not None:
            problems.append(
                (f"{at}/url", "a url with transport stdio", "command/args only (or transport http)")
            )
    headers = _strings(obj.get("headers"), f"{at}/headers", problems, single_line=True)
    env = _strings(obj.get("env"), f"{at}/env", problems)
    args_raw = obj.get("args", [])
    if not isinstance(args_raw, list) or not all(
        isinstance(a, str) for a in cast("list[Any]", args_raw)
    ):
        problems.append((f"{at}/args", f"args is {_describe(args_raw)}", "a list of strings"))
        args_raw = []
    allowed_raw = obj.get("allowedTools")
    allowed: tuple[str, ...] | None = None
    if allowed_raw is not None:
        if not isinstance(allowed_raw, list) or not all(
            isinstance(a, str) for a in cast("list[Any]", allowed_raw)
        ):
            problems.append(
                (
                    f"{at}/allowedTools",
                    f"allowedTools is {_describe(allowed_raw)}",
                    "a list of tool names",
                )
            )
        else:
            allowed = tuple(cast("list[str]", allowed_raw))
    timeout_raw = obj.get("timeout")
    timeout: float | None = None
    if timeout_raw is not None:
        if (
            isinstance(timeout_raw, bool)
            or not isinstance(timeout_raw, int | float)
            or timeout_raw <= 0
        ):
            problems.append(
                (
                    f"{at}/timeout",
                    f"timeout is {_describe(timeout_raw)}",
                    "a positive number of milliseconds",
                )
            )
        else:
            timeout = timeout_raw / 1000
    cwd = obj.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        problems.append((f"{at}/cwd", f"cwd is {_describe(cwd)}", "a directory path"))
        cwd = None
    return McpServerConfig(
        name=name,
        transport=transport,
        url=url if isinstance(url, str) else None,
        headers=headers,
        command=command if isinstance(command, str) else None,
        args=tuple(cast("list[str]", args_raw)),
        env=env,
        cwd=cwd,
        allowed_tools=allowed,
        timeout=timeout,
    )


def _strings(
    raw: Any, at: str, problems: list[Problem], *, single_line: bool = False
) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(
            (at, f"{at.rpartition('/')[2]} is {_describe(raw)}", "an object of name → string")
        )
        return {}
    out: dict[str, str] = {}
    for key, value in cast("dict[str, Any]", raw).items():
        if not isinstance(value, str):
            problems.append((f"{at}/{key}", f"{key!r} is {_describe(value)}", "a string"))
        elif single_line and ("\r" in value or "\n" in value):
            problems.append(
                (f"{at}/{key}", f"header {key!r} contains a line break", "a single-line string")
            )
        else:
            out[key] = value
    return out


def load_mcp_config(
    config: str | Path | Mapping[str, Any] | Sequence[McpServerConfig | Mapping[str, Any]],
) -> list[McpServerConfig]:
    """The servers of an MCP configuration: a file (JSON or YAML), a parsed document, a list of
    server objects, or ``McpServerConfig``s.

    Raises:
        UsageError: the configuration has problems (each located: ``file#/pointer: error: ...``).
    """
    source = "<mcp_servers>"
    value: Any = config
    if isinstance(config, str | Path):
        source = str(config)
        try:
            text = Path(config).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"{source}: cannot read the MCP configuration ({exc.strerror or exc})"
            ) from None
        try:
            value = json.loads(text)
        except ValueError:
            import yaml

            from toolbind.yaml12 import load_yaml

            try:
                value = load_yaml(text)
            except yaml.YAMLError as exc:
                raise UsageError(f"{source}: not JSON or YAML ({exc})") from None
    elif isinstance(config, Sequence) and all(isinstance(s, McpServerConfig) for s in config):
        return [cast("McpServerConfig", s) for s in config]
    elif isinstance(config, Sequence):
        value = [s.to_json() if isinstance(s, McpServerConfig) else s for s in config]
    servers, problems = read_mcp_config(value)
    if problems:
        raise UsageError(
            "\n".join(
                f"{source}#{at}: error: {what} — expected {expected}"
                for at, what, expected in problems
            )
        )
    return servers


def expand_env(text: str, env: Mapping[str, str], where: str) -> str:
    """``text`` with each ``${env.NAME}`` replaced; an unset variable is a ``UsageError``."""

    def one(m: re.Match[str]) -> str:
        value = env.get(m.group(1))
        if value is None:
            raise UsageError(f"{where}: ${{env.{m.group(1)}}} is not set in the environment")
        return value

    return _ENV_REF.sub(one, text)


# -- results ---------------------------------------------------------------------------------------


def content_value(content: Sequence[Any]) -> Any:
    """The value of a result's content blocks: one text block → its text; otherwise the blocks
    as MCP's JSON."""
    blocks = [
        cast("dict[str, Any]", c.model_dump(mode="json", by_alias=True, exclude_none=True))
        for c in content
    ]
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return blocks[0].get("text", "")
    return blocks


def _text_of(content: Sequence[Any]) -> str:
    texts = [getattr(c, "text", None) for c in content]
    return "\n".join(t for t in texts if isinstance(t, str))


def result_value(
    result: Any, *, server: str, tool: str, output_model: Any = None
) -> ToolResult[Any]:
    """A ``CallToolResult`` as a ``ToolResult``: ``isError`` → failed; ``structuredContent`` →
    the Output (validated by ``output_model`` when given); else the content's value."""
    meta = {"execution": "explicit", "mcp_server": server}
    if result.is_error:
        text = _text_of(result.content) or "the tool reported an error"
        return ToolResult[Any].fail(
            f"MCP server {server!r}, tool {tool!r}: {text}",
            data=result.structured_content,
            error_type="tool_error",
            **meta,
        )
    data: Any
    if result.structured_content is not None:
        data = result.structured_content
    elif output_model is not None:  # an outputSchema but no structuredContent: the JSON text
        try:
            data = json.loads(_text_of(result.content))
        except ValueError:
            data = content_value(result.content)
    else:
        data = content_value(result.content)
    if output_model is not None:
        from pydantic import ValidationError

        try:
            data = output_model.model_validate(data)
        except ValidationError as exc:
            return ToolResult[Any].fail(
                f"MCP server {server!r}, tool {tool!r}: the result does not match the tool's "
                f"outputSchema: {exc.errors()[0]['msg']}",
                data=data,
                error_type="output",
                **meta,
            )
    return ToolResult[Any].ok(data, **meta)


# -- one server's session ------------------------------------------------------------------------


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
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def _transport(self) -> Any:
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
            return stdio_client(params, errlog=sys.stderr)
        import httpx2

        assert cfg.url is not None
        url = expand_env(cfg.url, env, f"{where} url")
        headers = {k: expand_env(v, env, f"{where} header {k}") for k, v in cfg.headers.items()}
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        return _owning(streamable_http_client(url, http_client=client), client)

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
            self._client = await ready
            self.connects += 1
            return self._client

    async def _hold(self, ready: asyncio.Future[Client], closing: asyncio.Event) -> None:
        from mcp import Client

        async def on_message(message: Any) -> None:
            listed = getattr(message, "method", None) == "notifications/tools/list_changed"
            if listed and self.on_list_changed is not None:
                self.on_list_changed()

        try:
            transport = self._transport()
            async with Client(transport, message_handler=on_message) as client:
                ready.set_result(client)
                await closing.wait()
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
        """
        from mcp import MCPError
        from mcp_types import REQUEST_TIMEOUT

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
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return ToolResult[Any].fail(
                    f"MCP server {self.name!r}, tool {tool!r}: timed out after {seconds:g}s "
                    "(cancelled on the server)",
                    error_type="timeout",
                    **meta,
                )
            if self._task is None or self._task.done() or _closed(exc):
                await self._drop()
                return ToolResult[Any].fail(
                    f"MCP server {self.name!r} went away during the call to {tool!r}: {_why(exc)}",
                    error_type="connection",
                    **meta,
                )
            return ToolResult[Any].fail(
                f"MCP server {self.name!r}, tool {tool!r}: {_why(exc)}",
                error_type="protocol",
                **meta,
            )
        except Exception as exc:  # the transport broke: the server died or stopped answering
            await self._drop()
            return ToolResult[Any].fail(
                f"MCP server {self.name!r} went away during the call to {tool!r}: {_why(exc)}",
                error_type="connection",
                **meta,
            )
        return result_value(result, server=self.name, tool=tool, output_model=output_model)


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


# -- tools for an Agent --------------------------------------------------------------------------


def binding_for(tool: Mapping[str, Any], server: str) -> ToolBinding:
    """A ``ToolBinding`` for one tool of ``tools/list``: a ``gateway`` tool, not visible, its
    models compiled from ``inputSchema``/``outputSchema`` (through ``model_from_schema``) on first
    use."""
    from ._registry import binding_from_schema

    name = str(tool["name"])
    raw_input: Any = tool.get("inputSchema") or {"type": "object"}
    given = cast("dict[str, Any]", raw_input) if isinstance(raw_input, dict) else {"type": "object"}
    schema: dict[str, Any] = {k: v for k, v in given.items() if k != "$schema"}
    props_given = cast("dict[str, Any]", schema.get("properties") or {})
    tag: Any = props_given.get("_tool")
    if isinstance(tag, dict) and cast("dict[str, Any]", tag).get("const") == name:
        # a tool toolbind exported (``toolbind serve``): its meta fields are not parameters
        schema["properties"] = {k: v for k, v in props_given.items() if k not in META_FIELDS}
        schema["required"] = [
            r for r in cast("list[Any]", schema.get("required") or []) if r not in META_FIELDS
        ]
    output: Any = tool.get("outputSchema")
    merged = dict(schema)
    extra: dict[str, Any] = {}
    if isinstance(output, dict):
        out, defs = _hoisted(
            cast("dict[str, Any]", output), cast("dict[str, Any]", schema.get("$defs") or {})
        )
        extra = {"_output": out}
        if defs:
            merged["$defs"] = defs
    props = cast("dict[str, Any]", schema.get("properties") or {})
    seeds: dict[str, Any] = {
        **merged,
        "type": "object",
        "properties": {"_tool": {"const": name}, **props, **extra},
        "required": ["_tool", *cast("list[str]", schema.get("required") or [])],
    }
    where = f"<mcp server {server!r}, tool {name!r}>"

    def models() -> tuple[Any, Any]:
        made = binding_from_schema(name, seeds, source=where)
        return made.call_model, made.output_model

    params: dict[str, Any] = {k: v for k, v in schema.items() if k not in ("title", "description")}
    params.setdefault("type", "object")
    defs = cast("dict[str, Any]", params.pop("$defs", None) or {})
    annotations = tool.get("annotations")
    description = tool.get("description")
    title = tool.get("title")
    if title is None and isinstance(annotations, dict):
        title = cast("dict[str, Any]", annotations).get("title")
    provider = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
    return ToolBinding(
        name=name,
        provider_name=provider,
        models=models,
        parameters=params,
        output_schema=cast("dict[str, Any]", output) if isinstance(output, dict) else None,
        defs=defs,
        description=description if isinstance(description, str) else None,
        title=title if isinstance(title, str) else None,
        execution_type="gateway",
        visible=False,
        annotations=cast("dict[str, Any]", annotations) if isinstance(annotations, dict) else None,
        source=where,
    )


def _hoisted(output: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An ``outputSchema`` whose own ``$defs``/``definitions`` are moved to the root beside
    the input's ``$defs`` (renamed where a name is taken), its ``$ref``s rewritten to match: in
    the tool schema the output sits under ``properties/_output``, where ``#/$defs/X`` means the
    root's."""
    out = {k: v for k, v in output.items() if k not in ("$schema", "$defs", "definitions")}
    merged = dict(defs)
    rename: dict[str, str] = {}
    for key in ("$defs", "definitions"):
        found = output.get(key)
        if not isinstance(found, dict):
            continue
        for name, value in cast("dict[str, Any]", found).items():
            new = name
            while new in merged and merged[new] != value:
                new = f"Output{new}"
            rename[f"#/{key}/{name}"] = f"#/$defs/{new}"
            merged[new] = value
    if not rename:
        return out, merged

    def rewrite(value: Any) -> Any:
        if isinstance(value, dict):
            obj = cast("dict[str, Any]", value)
            return {
                k: rename.get(v, v) if k == "$ref" and isinstance(v, str) else rewrite(v)
                for k, v in obj.items()
            }
        if isinstance(value, list):
            return [rewrite(v) for v in cast("list[Any]", value)]
        return value

    return rewrite(out), {k: rewrite(v) if k in rename.values() else v for k, v in merged.items()}


def arguments_of(call: Any) -> dict[str, Any]:
    """A Call model's arguments for ``tools/call``: by alias, meta fields left out."""
    dumped: Any = (
        call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if hasattr(call, "model_dump")
        else dict(call)
    )
    return {k: v for k, v in cast("dict[str, Any]", dumped).items() if k not in META_FIELDS}


def with_progress(
    method: Callable[..., Coroutine[Any, Any, ToolResult[Any]]], name: str = ""
) -> Callable[[Any], AsyncIterator[Any]]:
    """An async-generator Activity of ``method(call, progress=...)`` (a call to an MCP server):
    it yields each progress notification (``{"progress", "total", "message"}``) as it comes —
    progress events for an Agent — then the ``ToolResult``. Cancelling it (the Agent's timeout)
    cancels the call on the server. A generated ``McpActivities.async_activities()`` is made of
    these, as is a run-time MCP tool's Activity."""

    async def activity(call: Any) -> AsyncIterator[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(method(call, progress=queue.put_nowait))
        try:
            async for item in drain(queue, task):
                yield item
            yield task.result()
        finally:
            if not task.done():  # cancelled (timed out): the SDK tells the server
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    activity.__name__ = f"mcp_{re.sub(r'[^0-9A-Za-z_]', '_', name or method.__name__)}"
    return activity


def streaming_call(
    connection: McpConnection, tool: str, output_model: Callable[[], Any] | None
) -> Callable[[Any], AsyncIterator[Any]]:
    """``with_progress`` for ``tool`` on ``connection`` (the Output model made on first use)."""

    async def call_tool(call: Any, progress: Callable[[Any], None]) -> ToolResult[Any]:
        return await connection.call(
            tool,
            arguments_of(call),
            output_model=output_model() if output_model is not None else None,
            progress=progress,
        )

    return with_progress(call_tool, tool)


class McpToolbox:
    """The tools of some MCP servers, discovered at run time (``Agent(mcp_servers=...)``).

    ``refresh()`` lists each server's tools the first time, and again after the server announced
    ``notifications/tools/list_changed`` (or reconnected); ``bindings`` are the tools, in server
    order (without those only the server's UI calls: MCP Apps' ``_meta.ui.visibility: ["app"]``);
    ``activity(binding)`` is the Activity that calls the tool's server. ``aclose()`` ends
    the sessions.
    """

    def __init__(
        self,
        servers: str | Path | Mapping[str, Any] | Sequence[McpServerConfig | Mapping[str, Any]],
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.servers = load_mcp_config(servers)
        self._stale: set[str] = {s.name for s in self.servers}
        self.connections = {
            s.name: McpConnection(s, env=env, on_list_changed=self._marker(s.name))
            for s in self.servers
        }
        self._tools: dict[str, list[ToolBinding]] = {}
        self._by_key: dict[tuple[str, str], ToolBinding] = {}
        self._activities: dict[int, RegisteredActivity] = {}
        self.listings = 0
        """How many ``tools/list`` rounds were made (for tests and logs)."""
        self._connects: dict[str, int] = {}

    def _marker(self, name: str) -> Callable[[], None]:
        def mark() -> None:
            self._stale.add(name)

        return mark

    @property
    def bindings(self) -> list[ToolBinding]:
        return [b for s in self.servers for b in self._tools.get(s.name, [])]

    async def refresh(self) -> None:
        """List the tools of each server not listed yet, changed, or reconnected since.

        Raises:
            UsageError: two servers list a tool of the same name, or a server's ``${env.X}`` is
                not set.
            RunFailure: a server cannot be reached at its first listing (the message names it).
        """
        for server in self.servers:
            conn = self.connections[server.name]
            if self._connects.get(server.name) != conn.connects and conn.connects:
                self._stale.add(server.name)  # a new session: its tools may differ
            if server.name not in self._stale and server.name in self._tools:
                continue
            self._stale.discard(server.name)
            try:
                listed = await conn.list_tools()
            except ConnectionError as exc:
                if server.name in self._tools:  # keep the known tools; their calls will say why
                    self._stale.add(server.name)
                    continue
                raise RunFailure(str(exc)) from None
            self.listings += 1
            self._connects[server.name] = conn.connects
            bindings: list[ToolBinding] = []
            for tool in listed:
                if mcp_app_only(tool) is not None:  # for the server's UI (MCP Apps), not a model
                    continue
                if mcp_task_only(tool):  # only callable as a task, which this client never makes
                    continue
                key = (server.name, json.dumps(tool, sort_keys=True))
                binding = self._by_key.get(key)
                if binding is None:
                    binding = binding_for(tool, server.name)
                    self._by_key[key] = binding
                bindings.append(binding)
            self._tools[server.name] = bindings
        seen: dict[str, str] = {}
        for server in self.servers:
            for b in self._tools.get(server.name, []):
                if b.name in seen:
                    raise UsageError(
                        f"MCP servers {seen[b.name]!r} and {server.name!r} both list a tool "
                        f"named {b.name!r}: keep it to one with allowedTools"
                    )
                seen[b.name] = server.name

    def server_of(self, binding: ToolBinding) -> str | None:
        """The name of the server whose tool ``binding`` is (None: not one of these tools)."""
        for server, bindings in self._tools.items():
            if any(b is binding for b in bindings):
                return server
        return None

    def activity(self, binding: ToolBinding) -> RegisteredActivity | None:
        """The Activity that calls ``binding``'s server (None: not one of these tools)."""
        found = self._activities.get(id(binding))
        if found is not None:
            return found
        server = self.server_of(binding)
        if server is None:
            return None
        from ._registry import RegisteredActivity

        conn = self.connections[server]
        model = (lambda: binding.output_model) if binding.output_schema is not None else None
        # the SDK's own timeout (the config's) comes first: it cancels on the server and names it
        seconds = conn.config.timeout + 5 if conn.config.timeout is not None else None
        made = RegisteredActivity(streaming_call(conn, binding.name, model), seconds)
        self._activities[id(binding)] = made
        return made

    async def aclose(self) -> None:
        """End every session; the next ``refresh``/call connects again."""
        for conn in self.connections.values():
            await conn.aclose()


def list_server_tools(
    servers: Iterable[McpServerConfig], env: Mapping[str, str] | None = None
) -> list[tuple[McpServerConfig, list[dict[str, Any]] | Exception]]:
    """Each server's ``tools/list`` (kept to ``allowedTools``), or why it could not be had: what
    ``toolbind generate`` compiles from an MCP configuration."""

    async def main() -> list[tuple[McpServerConfig, list[dict[str, Any]] | Exception]]:
        out: list[tuple[McpServerConfig, list[dict[str, Any]] | Exception]] = []
        for server in servers:
            conn = McpConnection(server, env=env)
            try:
                out.append((server, await conn.list_tools()))
            except (ConnectionError, UsageError) as exc:
                out.append((server, exc))
            finally:
                await conn.aclose()
        return out

    return asyncio.run(main())
