"""toolbind.runtime.mcp, runtime layer (imports the runtime's ``errors`` and ``yaml12``, lazily):
reading an MCP configuration into checked ``McpServerConfig``s.

The configuration has the gateway's shape (gateway-v3-tool-system.md, "MCP Tools")::

    {"mcp": {"servers": [
        {"name": "github", "url": "https://mcp.example.com/mcp", "transport": "http",
         "headers": {"Authorization": "Bearer ${env.GITHUB_TOKEN}"}, "allowedTools": ["list_prs"]},
        {"name": "time", "command": "mcp-server-time", "args": [], "env": {"TZ": "UTC"},
         "timeout": 30000}
    ]}}

``transport`` is ``http`` (streamable HTTP, the default with a ``url``) or ``stdio`` (the
default with a ``command``); ``${env.NAME}`` is read from the environment when the server is
connected, in the ``url``, ``headers`` values and ``env`` values (``expand_env``); ``timeout`` is
milliseconds per call (a call that takes longer is cancelled on the server: the SDK sends
``notifications/cancelled``); ``startTimeout`` is milliseconds for the server's start (its
``initialize`` answered; default: ``timeout``, else 60 s). Each problem is located by JSON
pointer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ..errors import UsageError

Transport = Literal["http", "stdio"]
_ENV_REF = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")
_SERVER_KEYS = frozenset(
    {"name", "url", "transport", "headers", "allowedTools", "command", "args", "env", "cwd"}
    | {"timeout", "startTimeout", "description"}
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
        start_timeout: seconds the server may take to start and answer ``initialize`` (None:
            ``timeout``, else 60 s).
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
    start_timeout: float | None = None

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
        if self.start_timeout is not None:
            out["startTimeout"] = round(self.start_timeout * 1000)
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
    """One server object of the configuration, its problems added to ``problems`` (in the order
    of its keys' checks); None when it cannot be read at all."""
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
    if not _endpoint_checked(transport, url, command, at, problems):
        return None
    headers = _strings(obj.get("headers"), f"{at}/headers", problems, single_line=True)
    env = _strings(obj.get("env"), f"{at}/env", problems)
    args_raw = obj.get("args", [])
    if not isinstance(args_raw, list) or not all(
        isinstance(a, str) for a in cast("list[Any]", args_raw)
    ):
        problems.append((f"{at}/args", f"args is {_describe(args_raw)}", "a list of strings"))
        args_raw = []
    allowed = _allowed_tools(obj.get("allowedTools"), at, problems)
    timeout = _timeout(obj.get("timeout"), at, problems)
    start_timeout = _timeout(obj.get("startTimeout"), at, problems, key="startTimeout")
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
        start_timeout=start_timeout,
    )


def _endpoint_checked(
    transport: Any, url: Any, command: Any, at: str, problems: list[Problem]
) -> bool:
    """Check the transport and what it needs (a URL for http, a command for stdio); False when
    the transport itself is unknown (nothing more can be read)."""
    if transport not in ("http", "stdio"):
        hint = " (streamable HTTP is 'http'; SSE is not supported)" if transport == "sse" else ""
        problems.append(
            (f"{at}/transport", f"transport is {_describe(transport)}", f"'http' or 'stdio'{hint}")
        )
        return False
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
    return True


def _allowed_tools(raw: Any, at: str, problems: list[Problem]) -> tuple[str, ...] | None:
    """``allowedTools``: the tool names kept (None: all of them)."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in cast("list[Any]", raw)):
        problems.append(
            (f"{at}/allowedTools", f"allowedTools is {_describe(raw)}", "a list of tool names")
        )
        return None
    return tuple(cast("list[str]", raw))


def _timeout(raw: Any, at: str, problems: list[Problem], *, key: str = "timeout") -> float | None:
    """``timeout`` (or ``startTimeout``): milliseconds in the configuration, seconds here."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        problems.append(
            (f"{at}/{key}", f"{key} is {_describe(raw)}", "a positive number of milliseconds")
        )
        return None
    return raw / 1000


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
