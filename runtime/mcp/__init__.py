"""toolbind.runtime.mcp, runtime layer (imports the runtime; the ``mcp`` SDK lazily, ``toolbind[mcp]``):
tools from live MCP servers, and compiled tools served as one.

``Agent(capabilities=[McpServers(...)])`` runs on ``McpToolbox``; a package generated from an MCP configuration
(``toolbind generate --mcp-config mcp.json``) calls its servers through ``McpConnection``. The
configuration has the gateway's shape (``{"mcp": {"servers": [{name, url, transport, headers,
allowedTools, command, args, env, timeout}]}}``); see ``_config`` for the details.
The server half is ``toolbind.runtime.mcp_server``; ``servable`` says which tools it serves.

The package, one concern a module: ``_config`` (reading a configuration), ``_results`` (a call's
result as a ``ToolResult``), ``_connection`` (one server's session), ``_tools`` (a listed tool as a
``ToolBinding`` and its Activity), ``_toolbox`` (``McpToolbox``, ``list_server_tools``),
``_serve`` (``mcp_server``, ``servable``) and ``_replies`` (what the server sends back).
"""

from __future__ import annotations

from ._config import McpServerConfig, is_mcp_config, load_mcp_config, read_mcp_config
from ._connection import McpConnection
from ._results import content_value, result_value
from ._serve import servable
from ._toolbox import McpToolbox, list_server_tools
from ._tools import arguments_of, binding_for, with_progress

__all__ = [
    "McpConnection",
    "McpServerConfig",
    "McpToolbox",
    "arguments_of",
    "binding_for",
    "content_value",
    "is_mcp_config",
    "list_server_tools",
    "load_mcp_config",
    "read_mcp_config",
    "result_value",
    "servable",
    "with_progress",
]
