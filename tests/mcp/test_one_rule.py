"""One rule per concept, in every layer of the MCP side, against real servers:

- ``allowedTools`` holds in the connection itself: ``McpConnection.call`` of a tool the list
  leaves out is a ``UsageError`` and nothing is sent (it called the tool); an ``allowedTools``
  name the server does not list is a warning at run time, as at ``toolbind generate`` (it was
  nothing);
- ``toolbind serve`` (a real process, driven by the official SDK client) validates exactly what
  its ``inputSchema`` says: ``_tool`` is listed and may be left out (``tools/call`` names the
  tool), a wrong ``_tool`` or ``_activity`` is refused, and so is ``_output`` on a tool an
  Activity runs whose schema refuses extra keys (all three went through); its
  ``serverInfo.version`` is toolbind's (it was empty).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbind._version import VERSION
from toolbind.runtime import UsageError
from toolbind.runtime.mcp import McpConnection, McpToolbox, load_mcp_config

pytest.importorskip("mcp", reason="the mcp extra is in the test extra (make install)")
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
SHAPES = str(REPO / "tests" / "mcp" / "shapes_server.py")


def _shapes(allowed: list[str]) -> dict[str, Any]:
    return {"name": "shapes", "command": sys.executable, "args": [SHAPES], "allowedTools": allowed}


def test_the_connection_itself_keeps_to_allowed_tools() -> None:
    config = load_mcp_config([_shapes(["read_text"])])[0]

    async def main() -> None:
        conn = McpConnection(config)
        try:
            with pytest.raises(UsageError, match=r"tool='clear' is not in its allowedTools"):
                await conn.call("clear", {"path": "a.txt"})
            assert conn.connects == 0  # refused before anything was sent: no session opened
            kept = await conn.call("read_text", {"path": "a.txt"})
            assert kept.success, kept.error
            assert isinstance(kept.data, str) and "hello" in kept.data
        finally:
            await conn.aclose()

    asyncio.run(main())


def test_an_allowed_tool_the_server_does_not_list_is_a_warning_at_run_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    box = McpToolbox([_shapes(["read_text", "read_txt"])])

    async def main() -> list[str]:
        try:
            await box.refresh()
            return [b.name for b in box.bindings]
        finally:
            await box.aclose()

    with caplog.at_level(logging.WARNING, logger="toolbind.runtime.mcp"):
        assert asyncio.run(main()) == ["read_text"]
    said = [r.getMessage() for r in caplog.records if r.name == "toolbind.runtime.mcp"]
    assert said == [
        "MCP server 'shapes' lists no tool named 'read_txt' (allowedTools names it): not offered"
    ]


def _text(result: Any) -> str:
    block = result.content[0]
    assert block.type == "text"
    return str(block.text)


def test_serve_validates_exactly_what_its_input_schemas_say(tmp_path: Path) -> None:
    echo = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "_tool": {"const": "echo"},
            "text": {"type": "string"},
            "_output": {"type": "object", "properties": {"said": {"type": "string"}}},
        },
        "required": ["text"],
    }
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps({"echo": echo}), encoding="utf-8")
    acts = tmp_path / "acts.py"
    acts.write_text("def echo(call):\n    return {'said': call.text}\n", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolbind.cli", "serve", str(spec), "--activities", str(acts)],
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            info = client.server_info
            assert info is not None
            assert (info.name, info.version) == ("toolbind", VERSION)
            (listed,) = (await client.list_tools()).tools
            schema = listed.input_schema
            assert schema["properties"]["_tool"] == {"const": "echo"}
            assert schema["properties"]["_activity"] == {"const": "echo"}
            assert schema["required"] == ["text"]  # MCP names the tool: _tool may be left out
            assert "_output" not in schema["properties"]  # an Activity runs it
            for args in ({"text": "hi"}, {"_tool": "echo", "_activity": "echo", "text": "hi"}):
                done = await client.call_tool("echo", args)
                assert not done.is_error, _text(done)
                assert done.structured_content == {"said": "hi"}
            refused = {
                "_tool": ({"_tool": "greet", "text": "hi"}, "must be 'echo', found 'greet'"),
                "_activity": ({"_activity": "other", "text": "hi"}, "must be 'echo'"),
                "_output": (
                    {"text": "hi", "_output": {"said": "made up"}},
                    "Extra inputs are not permitted",
                ),
                "foo": ({"text": "hi", "foo": 1}, "Extra inputs are not permitted"),
            }
            for field, (args, words) in refused.items():
                answer = await client.call_tool("echo", args)
                assert answer.is_error, (field, _text(answer))
                assert f"field {field}: {words}" in _text(answer), _text(answer)

    asyncio.run(main())
