"""Runtime layer: ``McpServers`` — the tools of live MCP servers, offered beside the Agent's own.
Imports ``_capability``, ``_binding``, ``_registry``; ``mcp`` (needs ``toolbind[mcp]``)
when one is built.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .._binding import ToolBinding
from .._capability import Capability, Toolset, WrapperToolset
from .._registry import RegisteredActivity

__all__ = ["McpServers"]


class McpServers(Capability):
    """Offer the tools of MCP servers; each call goes to its server.

    Args:
        servers: an MCP configuration — a file, ``{"mcp": {"servers": [...]}}`` or the list of
            servers. Their tools are listed at the start of a run and again after a server
            announces a change; sessions are reused within a sync ``run`` and until the Agent's
            ``aclose`` for async users.

    Attributes:
        toolbox: the servers' ``McpToolbox`` (``toolbind.runtime.mcp``).
    """

    order: ClassVar[int] = 10  # beside the Agent's own tools, before delegates bind them

    def __init__(self, servers: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any]) -> None:
        from ..mcp import McpToolbox

        given: Any = servers  # the toolbox reads each of these forms
        self.toolbox = McpToolbox(given)

    def for_child(self) -> None:
        return None  # a delegate's sub-request offers only its own tools

    def wrap_toolset(self, toolset: Toolset) -> Toolset:
        return _McpToolset(toolset, self.toolbox)


class _McpToolset(WrapperToolset):
    """The Agent's tools, then the servers'; a server's tool runs on its server unless an
    Activity of the Agent's claims it first."""

    def __init__(self, inner: Toolset, toolbox: Any) -> None:
        super().__init__(inner)
        self.toolbox = toolbox

    def __iter__(self) -> Iterator[ToolBinding]:
        yield from self.inner
        yield from self.toolbox.bindings

    def get(self, name: str) -> ToolBinding | None:
        found = self.inner.get(name)
        if found is None:
            found = next((t for t in self.toolbox.bindings if t.name == name), None)
        return found

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        found = self.inner.activity(tool)
        return found if found is not None else self.toolbox.activity(tool)

    async def refresh(self) -> None:  # tools/list at the start and after list_changed
        await self.inner.refresh()
        await self.toolbox.refresh()

    async def aclose(self) -> None:
        await self.inner.aclose()
        await self.toolbox.aclose()
