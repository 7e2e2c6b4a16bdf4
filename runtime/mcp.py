"""toolbind.runtime.mcp: tools from live MCP servers (the client half; needs ``toolbind[mcp]``).

``Agent(mcp_servers=...)`` runs on ``McpToolbox``; a package generated from an MCP configuration
(``toolbind generate --mcp-config mcp.json``) calls its servers through ``McpConnection``. The
configuration has the gateway's shape (``{"mcp": {"servers": [{name, url, transport, headers,
allowedTools, command, args, env, timeout}]}}``); see ``_mcp_client`` for the details.
"""

from __future__ import annotations

from ._mcp_client import (
    McpConnection,
    McpServerConfig,
    McpToolbox,
    arguments_of,
    binding_for,
    content_value,
    is_mcp_config,
    list_server_tools,
    load_mcp_config,
    read_mcp_config,
    result_value,
    with_progress,
)

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
    "with_progress",
]
