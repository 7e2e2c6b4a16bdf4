"""toolbind.runtime.mcp, runtime layer (imports the runtime's ``_binding``, ``contract``, ``errors``
and, lazily, ``_registry``, and this package's ``_config``, ``_connection`` and ``_tools``): the
tools of some MCP servers, discovered at run time.

``McpToolbox`` is what ``McpServers`` (an Agent capability) runs on: ``tools/list`` at start and again after
the server sends ``notifications/tools/list_changed``, each tool a ``ToolBinding`` whose Activity
calls the server — but for a tool the server's own UI calls (MCP Apps: ``_meta.ui.visibility``
without ``"model"``), which a host never offers to a model. ``list_server_tools`` is what
``toolbind generate`` compiles from.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._binding import ToolBinding
from ..contract import mcp_app_only, mcp_task_only
from ..errors import RunFailure, UsageError
from ._config import McpServerConfig, load_mcp_config
from ._connection import McpConnection
from ._tools import binding_for, streaming_call

if TYPE_CHECKING:
    from .._registry import RegisteredActivity

log = logging.getLogger("toolbind.runtime.mcp")


class McpToolbox:
    """The tools of some MCP servers, discovered at run time (``McpServers``, an Agent capability).

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
        self._unlisted: dict[str, tuple[str, ...]] = {}

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
            self._say_unlisted(server.name, conn.unlisted)
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

    def _say_unlisted(self, server: str, names: tuple[str, ...]) -> None:
        """A warning naming the ``allowedTools`` the server does not list — as ``toolbind
        generate`` warns — each time that set changes (not at every listing). Not an error: a
        server may list a tool only to some tokens or in some versions, and ``allowedTools``
        only narrows; the tool is simply not offered."""
        if self._unlisted.get(server, ()) == names:
            return
        self._unlisted[server] = names
        if names:
            log.warning(
                "MCP server %r lists no tool named %s (allowedTools names it): not offered",
                server,
                ", ".join(repr(n) for n in names),
            )

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
        from .._registry import RegisteredActivity

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
