"""An MCP server's start may fail or hang, and the MCP client may be missing: each is a named,
bounded failure of the call that needed the server, never a wait without end."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO
from toolbind.runtime.mcp import McpConnection, load_mcp_config, read_mcp_config

SILENT = [sys.executable, "-c", "import time; time.sleep(600)"]  # never answers initialize


def test_a_server_that_never_answers_initialize_fails_within_its_timeout() -> None:
    (config,) = load_mcp_config(
        {"servers": [{"name": "mute", "command": SILENT[0], "args": SILENT[1:], "timeout": 2000}]}
    )
    connection = McpConnection(config)

    async def listed() -> None:
        try:
            await connection.list_tools()
        finally:
            await connection.aclose()

    started = time.monotonic()
    with pytest.raises(
        ConnectionError, match=r"'mute' did not finish starting \(initialize\) in 2 s"
    ):
        asyncio.run(listed())
    assert time.monotonic() - started < 2 + 6  # the start's bound, and the stop's (5 s at most)


def test_without_the_mcp_client_the_call_is_a_usage_error_not_a_hang() -> None:
    # the mcp package hidden (toolbind installed without its extra): before, the import failed
    # inside the session's task and the waiting call waited forever
    code = (
        "import asyncio, sys\n"
        "sys.modules['mcp'] = None\n"
        "from toolbind.runtime.mcp import McpConnection, load_mcp_config, read_mcp_config\n"
        "(c,) = load_mcp_config({'servers': [{'name': 'x', 'command': 'true'}]})\n"
        "asyncio.run(McpConnection(c).list_tools())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert result.returncode == 1
    assert "UsageError: MCP server 'x': the MCP client is not installed" in result.stderr
    assert "pip install 'toolbind[mcp]'" in result.stderr


def test_the_start_has_a_bound_of_its_own_and_a_bad_one_is_located() -> None:
    found, problems = read_mcp_config(
        {"servers": [{"name": "a", "command": "x", "timeout": 30000, "startTimeout": -1}]}
    )
    assert problems == [
        (
            "/servers/0/startTimeout",
            "startTimeout is the number -1",
            "a positive number of milliseconds",
        )
    ]
    (config,) = load_mcp_config(
        {
            "servers": [
                {
                    "name": "mute",
                    "command": SILENT[0],
                    "args": SILENT[1:],
                    "timeout": 30000,
                    "startTimeout": 1000,
                }
            ]
        }
    )
    assert config.start_timeout == 1.0 and config.to_json()["startTimeout"] == 1000
    connection = McpConnection(config)

    async def listed() -> None:
        try:
            await connection.list_tools()
        finally:
            await connection.aclose()

    with pytest.raises(
        ConnectionError, match=r"'mute' did not finish starting \(initialize\) in 1 s"
    ):
        asyncio.run(listed())
    assert found == []
