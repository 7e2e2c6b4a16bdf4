"""A small MCP server (the ``mcp`` SDK's ``MCPServer``, stdio) whose tools answer in the shapes
real third-party servers were seen to answer in, for tests that need a live server but not the
third-party one: ``python tests/mcp/shapes_server.py``.

- ``read_file``: a text block and an image (``@wonderwhy-er/desktop-commander``'s ``read_file`` of
  a PNG);
- ``read_text``: text with line breaks and no ``outputSchema`` (its ``read_file`` of a text file);
- ``clear``: a result with no content blocks (a FastMCP tool that returns None);
- ``submit_page_data``: a tool only the server's own UI calls, ``_meta.ui.visibility: ["app"]``
  (MCP Apps; ``@modelcontextprotocol/server-pdf`` lists six such tools beside three for the model).

``--banner`` first writes a line that is not JSON-RPC to standard output, as
``office-word-mcp-server`` does (``Loading configuration from .env file...``).
"""

from __future__ import annotations

import base64
import sys

from mcp.server.mcpserver import Image, MCPServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg=="
)
"""A 4×4 red PNG."""

server = MCPServer("shapes")


@server.tool(structured_output=False)
def read_file(path: str) -> list[str | Image]:
    """A file: a line of text about it, then the image."""
    return [f"Image file: {path} (image/png)", Image(data=PNG, format="png")]


@server.tool(structured_output=False)
def read_text(path: str) -> str:
    """A text file's lines, after a header."""
    return f"[Reading 2 lines from {path}]\n\nhello\nthere"


@server.tool(structured_output=False)
def clear(path: str) -> None:
    """Empty a file: no content at all in the result."""


@server.tool(meta={"ui": {"visibility": ["app"]}})
def submit_page_data(request_id: str, text: str) -> str:
    """Submit rendered page data (used by the viewer). The model should NOT call this tool."""
    return f"stored {request_id}"


if __name__ == "__main__":
    if "--banner" in sys.argv:
        print("Loading configuration from .env file...", flush=True)
    server.run()
