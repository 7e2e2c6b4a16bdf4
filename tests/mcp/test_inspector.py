"""``toolbind serve`` seen by the official MCP Inspector's CLI mode (``@modelcontextprotocol/inspector
--cli``, npm, installed by ``make install`` under tests/mcp/npm): it lists the tools and calls one,
over stdio and over streamable HTTP with a bearer token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from tests._servers import free_port

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / "tests" / "mcp" / "npm" / "node_modules" / ".bin" / "inspector"
SERVE = [sys.executable, "-m", "toolbind.cli", "serve", str(REPO / "specs" / "seeds.yaml")]


@pytest.fixture
def activities(tmp_path: Path) -> Path:
    if not INSPECTOR.exists():
        message = f"the MCP Inspector is not installed ({INSPECTOR}): run make install"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    acts = tmp_path / "acts.py"
    acts.write_text(
        "def greetUser(call):\n    return {'greeting': 'Hi ' + call.userName}\n", encoding="utf-8"
    )
    return acts


def _inspect(*args: str) -> tuple[int, Any]:
    done = subprocess.run(
        # a loaded machine starts `toolbind serve` (Python, the spec compiled) in over the
        # Inspector's default 15 s
        [str(INSPECTOR), "--cli", "--connect-timeout", "90000", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        raise AssertionError(
            f"the Inspector printed no JSON:\n{done.stdout}\n{done.stderr}"
        ) from None


def _expected_tools(acts: Path) -> list[dict[str, Any]]:
    """What ``toolbind schema --format mcp`` says of the served tool."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolbind.cli",
            "schema",
            str(REPO / "specs" / "seeds.yaml"),
            "--format",
            "mcp",
            "--tool",
            "greetUser",
            "--explicit",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    value: Any = json.loads(done.stdout)
    return cast("list[dict[str, Any]]", value.get("tools", value))


@pytest.mark.slow
def test_the_inspector_lists_and_calls_a_tool_over_stdio(activities: Path) -> None:
    command = [*SERVE, "--activities", str(activities)]
    code, listed = _inspect(*command, "--method", "tools/list")
    assert code == 0
    assert [t["name"] for t in listed["tools"]] == ["greetUser"]
    expected = _expected_tools(activities)
    assert listed["tools"][0]["inputSchema"] == expected[0]["inputSchema"]
    code, called = _inspect(
        *command, "--method", "tools/call", "--tool-name", "greetUser", "--tool-arg", "userName=Bo"
    )
    assert code == 0
    assert called["structuredContent"] == {"greeting": "Hi Bo"}
    assert called["isError"] is False
    # the Inspector sends userName=7 as a number: the Call model refuses it, naming the field
    code, refused = _inspect(
        *command, "--method", "tools/call", "--tool-name", "greetUser", "--tool-arg", "userName=7"
    )
    assert refused["isError"] is True and code != 0
    assert "userName" in refused["content"][0]["text"]


@pytest.fixture
def served(activities: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            *SERVE,
            "--activities",
            str(activities),
            "--http",
            f"127.0.0.1:{port}",
            "--token-env",
            "INSPECTED_TOKEN",
        ],
        env={**os.environ, "INSPECTED_TOKEN": "sesame-123"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "toolbind serve did not come up"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_the_inspector_calls_a_tool_over_streamable_http_with_the_token(served: str) -> None:
    auth = ["--transport", "http", "--header", "Authorization: Bearer sesame-123"]
    code, listed = _inspect(served, *auth, "--method", "tools/list")
    assert code == 0 and [t["name"] for t in listed["tools"]] == ["greetUser"]
    code, called = _inspect(
        served,
        *auth,
        "--method",
        "tools/call",
        "--tool-name",
        "greetUser",
        "--tool-arg",
        "userName=Ada",
    )
    assert code == 0 and called["structuredContent"] == {"greeting": "Hi Ada"}
