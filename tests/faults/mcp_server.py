"""A small MCP server (the ``mcp`` SDK's ``MCPServer``) for the fault matrix: ``python
tests/faults/mcp_server.py [--http PORT]`` serves over stdio, or streamable HTTP on 127.0.0.1.

- ``effect(key)``: appends ``key`` to the file ``$FAULTS_EFFECTS`` (one line an effect) and
  answers ``"done"``;
- ``sleep(seconds)``: answers after ``seconds``;
- ``die(key)``: makes its effect, then kills its own process (SIGKILL) before answering — a server
  that dies during the call;
- ``pid()``: its process id (the test kills it between calls);
- ``lie()``: lists an ``outputSchema`` (``{"count": integer}``) and answers structured content of
  another shape (``{"count": "many"}``) — a valid-looking lie.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

server = MCPServer("faults")


def _effect(key: str) -> None:
    with Path(os.environ["FAULTS_EFFECTS"]).open("a", encoding="utf-8") as f:
        f.write(key + "\n")


@server.tool()
def effect(key: str) -> str:
    """Make one effect, named ``key``."""
    _effect(key)
    return "done"


@server.tool()
async def sleep(seconds: float) -> str:
    """Answer after ``seconds``."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def die(key: str) -> str:
    """Make one effect, then die before answering."""
    _effect(key)
    os.kill(os.getpid(), signal.SIGKILL)
    return "never"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def lie() -> CallToolResult:
    """A count, by the listed outputSchema; a word, in fact."""
    return CallToolResult(
        content=[TextContent(type="text", text='{"count": "many"}')],
        structured_content={"count": "many"},
    )


# the schema the server lists without holding itself to it (its own answers are not checked
# against a schema it did not build from a model)
server._tool_manager.get_tool("lie").fn_metadata.output_schema = {  # pyright: ignore[reportPrivateUsage, reportOptionalMemberAccess]
    "type": "object",
    "required": ["count"],
    "properties": {"count": {"type": "integer"}},
}

if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=port))
    else:
        server.run()
