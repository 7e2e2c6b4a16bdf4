"""``toolbind serve`` (issue 14, the server half): compiled tools as an MCP server, driven by the
official ``mcp`` SDK's client — in process, and as a real ``toolbind serve`` subprocess over stdio
and over streamable HTTP (with a bearer token) calling a live petstore API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo.petstore import app as petstore_app
from tests._servers import free_port, serve_asgi
from toolbind.runtime import mcp_server, mcp_tools

mcp = pytest.importorskip("mcp", reason="the mcp extra is in the test extra (make install)")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from generated.seeds import TOOLS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _text(result: Any) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert block.type == "text"
    return str(block.text)


def greet(call: Any) -> dict[str, str]:
    return {"greeting": f"Hello, {call.userName}"}


async def analyse(call: Any) -> AsyncIterator[dict[str, Any]]:
    yield {"stage": "reading"}
    yield {"sentiment": "positive", "confidence": 0.9}


def failing(call: Any) -> Any:
    from toolbind.runtime import ToolResult

    return ToolResult[Any].fail("the weather service is down", data={"retry_in": 30})


ACTIVITIES: dict[str, Any] = {
    "greetUser": greet,
    "sentimentAnalysis": analyse,
    "weatherCheck": failing,
}


def test_tools_list_is_the_mcp_export_and_calls_are_validated_and_routed() -> None:
    server = mcp_server(TOOLS, ACTIVITIES)
    exported = {t["name"]: t for t in mcp_tools(TOOLS, ACTIVITIES.keys())["tools"]}

    async def main() -> None:
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            # sendEmail has no Activity: not served
            assert sorted(t.name for t in listed) == sorted(ACTIVITIES)
            for tool in listed:
                assert tool.input_schema == exported[tool.name]["inputSchema"]
                assert tool.description == exported[tool.name].get("description")
            ok = await client.call_tool("greetUser", {"userName": "Ann"})
            assert not ok.is_error and ok.structured_content == {"greeting": "Hello, Ann"}
            assert json.loads(_text(ok)) == {"greeting": "Hello, Ann"}
            bad = await client.call_tool("sentimentAnalysis", {"text": 3})
            assert bad.is_error and "field text" in _text(bad)
            seen: list[tuple[float, str | None]] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                seen.append((progress, message))

            streamed = await client.call_tool(
                "sentimentAnalysis", {"text": "great"}, progress_callback=on_progress
            )
            assert streamed.structured_content == {"sentiment": "positive", "confidence": 0.9}
            assert [n for n, _ in seen] == [1, 2]
            assert json.loads(seen[0][1] or "") == {"stage": "reading"}
            failed = await client.call_tool("weatherCheck", {"location": "Oslo"})
            assert failed.is_error
            assert "weather service is down" in _text(failed)
            unknown = await client.call_tool("sendEmail", {"to": "a@b.c"})
            assert unknown.is_error

    asyncio.run(main())


@pytest.fixture(scope="module")
def petstore() -> Iterator[str]:
    with serve_asgi(petstore_app) as url:
        yield f"{url}/api"


def _serve_args(*extra: str) -> list[str]:
    return ["-m", "toolbind.compiler.cli", "serve", *extra]


def test_an_openapi_spec_is_a_working_mcp_server_over_stdio(petstore: str) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=_serve_args(str(REPO / "specs" / "petstore.yaml"), "--base-url", petstore),
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["addPet", "deletePet", "findPets", "find_pet_by_id"]
            found = await client.call_tool("findPets", {"limit": 2})
            assert not found.is_error
            pets = json.loads(_text(found))
            assert [p["name"] for p in pets] == ["Rex", "Tom"]
            missing = await client.call_tool("find_pet_by_id", {"id": 999})
            assert missing.is_error and "404" in _text(missing)

    asyncio.run(main())


def _wait_for(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


def test_streamable_http_with_a_bearer_token(petstore: str, tmp_path: Path) -> None:
    activities = tmp_path / "acts.py"
    activities.write_text(
        "def greetUser(call):\n    return {'greeting': 'Hi ' + call.userName}\n", encoding="utf-8"
    )
    port = free_port()
    env = {**os.environ, "MCP_TOKEN": "s3cret-token-123"}
    proc = subprocess.Popen(
        [
            sys.executable,
            *_serve_args(
                str(REPO / "specs" / "seeds.yaml"),
                "--activities",
                str(activities),
                "--http",
                f"127.0.0.1:{port}",
                "--token-env",
                "MCP_TOKEN",
            ),
        ],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401

        async def main() -> None:
            import httpx2  # the mcp SDK's HTTP client

            auth = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token-123"})
            from mcp.client.streamable_http import streamable_http_client

            async with Client(streamable_http_client(url, http_client=auth)) as client:
                assert [t.name for t in (await client.list_tools()).tools] == ["greetUser"]
                hi = await client.call_tool("greetUser", {"userName": "Bo"})
                assert hi.structured_content == {"greeting": "Hi Bo"}

        asyncio.run(main())
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "not served (no Activity): sentimentAnalysis, weatherCheck, sendEmail" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http", "0.0.0.0:8765"], "needs a bearer token"),
        (["--http", "nowhere"], "expected HOST:PORT"),
        (["--activities", "no_such_module_xyz"], "cannot import no_such_module_xyz"),
        ([], "no tool has an Activity"),
    ],
)
def test_bad_serve_arguments_are_one_line_errors(args: list[str], message: str) -> None:
    run = subprocess.run(
        [sys.executable, *_serve_args(str(REPO / "specs" / "seeds.yaml"), *args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr
