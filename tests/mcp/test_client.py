"""The MCP client: tools from live MCP servers, at build time (``toolbind generate
--mcp-config``) and at run time (``Agent(capabilities=[McpServers(...)])``), against real third-party servers the
suite starts: the reference ``@modelcontextprotocol/server-everything`` (npm, installed by
``make install`` under tests/mcp/npm) over stdio and streamable HTTP, and ``mcp-server-time``
(PyPI) over stdio — plus ``toolbind serve`` where a test needs a server that checks a bearer
token or notices a cancellation.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests._servers import free_port, serve_asgi
from tests.scripted_llm import ScriptedLLM, call
from toolbind.compiler import load_package
from toolbind.runtime import Agent, ToolRegistry, UsageError
from toolbind.runtime.capabilities import McpServers
from toolbind.runtime.errors import RunFailure
from toolbind.runtime.mcp import McpConnection, load_mcp_config, read_mcp_config

pytest.importorskip("mcp", reason="the mcp extra is in the test extra (make install)")

REPO = Path(__file__).resolve().parents[2]
NPM = REPO / "tests" / "mcp" / "npm" / "node_modules"
EVERYTHING = NPM / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
MEMORY = NPM / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
FILESYSTEM = NPM / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def _need(path: Path, what: str) -> None:
    if not path.exists():
        message = f"{what} is not installed ({path}): run make install"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def everything() -> dict[str, Any]:
    """server-everything over stdio (the server config, gateway shape)."""
    _need(EVERYTHING, "@modelcontextprotocol/server-everything")
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    return {"name": "everything", "command": "node", "args": [str(EVERYTHING), "stdio"]}


@pytest.fixture
def everything_http() -> Iterator[str]:
    """server-everything over streamable HTTP on 127.0.0.1; yields its /mcp URL."""
    _need(EVERYTHING, "@modelcontextprotocol/server-everything")
    port = free_port()
    proc = subprocess.Popen(
        ["node", str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered on 127.0.0.1:{port}")


def _toolbind(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolbind.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def _generate(tmp_path: Path, config: dict[str, Any], package: str) -> ModuleType:
    spec = tmp_path / "servers.json"
    spec.write_text(json.dumps({"mcp": {"servers": [config]}}), encoding="utf-8")
    out = tmp_path / "out"
    done = _toolbind(
        "generate", "--mcp-config", str(spec), "--package", package, "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return load_package(out, package)


def _agent(url: str, servers: Any, **kwargs: Any) -> Agent:
    return Agent(
        f"{url}/v1",
        model="scripted",
        tools=ToolRegistry(),
        **kwargs,
        capabilities=[McpServers(servers)],
    )


def _toolbox(agent: Agent) -> Any:
    """The agent's MCP toolbox (its ``McpServers`` capability's)."""
    return next(c for c in agent.capabilities if isinstance(c, McpServers)).toolbox


def _step(*calls: dict[str, Any], output: Any = None) -> Any:
    return call({"output": output, "calls": list(calls)})


def _offered(llm: ScriptedLLM, index: int = 0) -> set[str]:
    """The tool names the ``index``-th LLM request offered (the consts of each call's tag)."""
    text = json.dumps(llm.requests[index]["tools"])
    schema = json.loads(text)[0]["function"]["parameters"]
    items = schema["properties"]["calls"]["items"]
    options = items.get("anyOf") or items.get("oneOf") or [items]
    defs = schema.get("$defs", {})
    names: set[str] = set()
    for option in options:
        if "$ref" in option:
            option = defs[option["$ref"].rpartition("/")[2]]
        names.add(option["properties"][option["required"][0]]["const"])
    return names


# -- configuration ---------------------------------------------------------------------------------


def test_the_configuration_has_the_gateways_shape_and_its_errors_are_located() -> None:
    servers, problems = read_mcp_config(
        {
            "mcp": {
                "servers": [
                    {
                        "name": "github-tools",
                        "url": "https://mcp.example.com/mcp",
                        "transport": "http",
                        "headers": {"Authorization": "Bearer ${env.GITHUB_TOKEN}"},
                        "allowedTools": ["list_prs", "create_issue"],
                        "timeout": 1500,
                    },
                    {"name": "time", "command": "mcp-server-time", "args": ["--x"]},
                ]
            }
        }
    )
    assert problems == []
    assert [(s.name, s.transport, s.timeout) for s in servers] == [
        ("github-tools", "http", 1.5),
        ("time", "stdio", None),
    ]
    assert servers[0].allowed_tools == ("list_prs", "create_issue")
    assert servers[0].to_json()["headers"] == {"Authorization": "Bearer ${env.GITHUB_TOKEN}"}
    _, problems = read_mcp_config(
        {
            "mcp": {
                "servers": [
                    {"name": "a", "transport": "sse", "url": "http://x"},
                    {"name": "b", "url": "ftp://x", "allowedTools": "all"},
                    {"command": "x", "timeout": -1, "colour": "red"},
                ]
            }
        }
    )
    assert [p[0] for p in problems] == [
        "/mcp/servers/0/transport",
        "/mcp/servers/1/url",
        "/mcp/servers/1/allowedTools",
        "/mcp/servers/2/colour",
        "/mcp/servers/2/name",
        "/mcp/servers/2/timeout",
    ]
    with pytest.raises(UsageError, match=r"<mcp_servers>#/0/command: error: command is null"):
        load_mcp_config([{"name": "x", "transport": "stdio"}])


@pytest.mark.slow
def test_a_bad_configuration_is_a_located_error_of_toolbind_generate(tmp_path: Path) -> None:
    spec = tmp_path / "mcp.json"
    spec.write_text(json.dumps({"mcp": {"servers": [{"name": "x", "url": 3}]}}), "utf-8")
    out = str(tmp_path / "out")
    done = _toolbind("generate", "--mcp-config", str(spec), "-o", out, cwd=tmp_path)
    assert done.returncode == 1
    assert "mcp.json#/mcp/servers/0/url: error: url is the number 3" in done.stderr
    assert "Traceback" not in done.stderr
    # a server that is not there: an error at its entry, exit 1, nothing written
    gone = {"name": "gone", "url": f"http://127.0.0.1:{free_port()}/mcp"}
    spec.write_text(json.dumps({"mcp": {"servers": [gone]}}), "utf-8")
    done = _toolbind("generate", str(spec), "-o", out, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "mcp.json#/mcp/servers/0: error: the tools of MCP server 'gone' could not be listed" in (
        done.stderr
    )
    assert not (tmp_path / "out").exists()


# -- build time ------------------------------------------------------------------------------------


def test_build_time_server_everything_over_stdio_compiles_and_calls(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    allowed = ["get-sum", "get-structured-content", "get-tiny-image", "echo"]
    pkg = _generate(tmp_path, {**everything, "allowedTools": allowed}, "everything")
    assert sorted(t.name for t in pkg.TOOLS) == sorted(allowed)
    for tool in pkg.TOOLS:  # the seed's rule: MCP tools run on their server, unseen
        assert (tool.execution_type, tool.visible) == ("gateway", False)
    structured = next(t for t in pkg.TOOLS if t.name == "get-structured-content")
    assert structured.title == "Get Structured Content Tool"
    assert structured.annotations is not None and structured.annotations["readOnlyHint"] is True
    assert structured.output_schema is not None
    assert pkg.TOOL_SERVERS["get-sum"] == "everything"

    async def main() -> None:
        acts = pkg.McpActivities()
        try:
            weather = await acts.get_structured_content(
                pkg.GetStructuredContentCall(location="Chicago")
            )
            assert weather.success
            assert isinstance(weather.data, pkg.GetStructuredContentOutput)  # typed Output
            assert isinstance(weather.data.model_dump()["humidity"], int)
            total = await acts.get_sum(pkg.GetSumCall(a=2, b=40))
            assert total.success and total.data == "The sum of 2 and 40 is 42."
            image = await acts.get_tiny_image(pkg.GetTinyImageCall())
            kinds = [block["type"] for block in image.data]
            assert "image" in kinds and kinds[0] == "text"
            png = next(b for b in image.data if b["type"] == "image")
            assert png["mimeType"] == "image/png" and len(png["data"]) > 100
            # the same session served every call
            assert acts.connections["everything"].connects == 1
            # isError: the server refuses arguments the Call model would not let through
            refused = await acts.connections["everything"].call("get-sum", {"a": "x"})
            assert not refused.success
            assert refused.error is not None and "MCP server 'everything'" in refused.error
            assert refused.metadata["error_type"] == "tool_error"
        finally:
            await acts.aclose()

    asyncio.run(main())


def test_build_time_the_memory_and_filesystem_servers_compile_into_one_typed_package(
    tmp_path: Path,
) -> None:
    """Two more real servers in one configuration (the official memory and filesystem servers,
    pinned in tests/mcp/npm): their 22 tools compile into one package, structured results are
    typed Outputs, and a path outside the filesystem server's root is its refusal, a failed
    ``ToolResult`` naming the server."""
    for path, what in ((MEMORY, "server-memory"), (FILESYSTEM, "server-filesystem")):
        _need(path, f"@modelcontextprotocol/{what}")
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    root = tmp_path / "files"
    root.mkdir()
    (root / "note.txt").write_text("hello", encoding="utf-8")
    memory = {
        "name": "memory",
        "command": "node",
        "args": [str(MEMORY)],
        "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
    }
    files = {"name": "files", "command": "node", "args": [str(FILESYSTEM), str(root)]}
    spec = tmp_path / "servers.json"
    spec.write_text(json.dumps({"mcp": {"servers": [memory, files]}}), encoding="utf-8")
    done = _toolbind(
        "generate", "--mcp-config", str(spec), "--package", "two", "-o", "out", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    pkg = load_package(tmp_path / "out", "two")
    assert {pkg.TOOL_SERVERS[t] for t in ("create_entities", "read_graph")} == {"memory"}
    assert {pkg.TOOL_SERVERS[t] for t in ("read_text_file", "list_directory")} == {"files"}
    assert len(pkg.TOOLS) >= 20

    async def main() -> None:
        acts = pkg.McpActivities()
        try:
            made = await acts.create_entities(
                pkg.CreateEntitiesCall.model_validate(
                    {"entities": [{"name": "Ada", "entityType": "person", "observations": ["m"]}]}
                )
            )
            assert made.success, made.error
            graph = await acts.read_graph(pkg.ReadGraphCall())
            assert isinstance(graph.data, pkg.ReadGraphOutput)  # typed structured content
            assert [e.name for e in graph.data.entities] == ["Ada"]
            text = await acts.read_text_file(pkg.ReadTextFileCall(path=str(root / "note.txt")))
            assert text.success and text.data.content == "hello"
            outside = await acts.list_directory(pkg.ListDirectoryCall(path=str(tmp_path)))
            assert not outside.success
            assert outside.error is not None and "MCP server 'files'" in outside.error
        finally:
            await acts.aclose()

    asyncio.run(main())
    assert "Ada" in (tmp_path / "memory.jsonl").read_text(encoding="utf-8")


@pytest.mark.slow
def test_build_time_server_everything_over_streamable_http(
    tmp_path: Path, everything_http: str
) -> None:
    pkg = _generate(
        tmp_path,
        {"name": "ev", "url": everything_http, "transport": "http", "allowedTools": ["echo"]},
        "ev_http",
    )
    assert [t.name for t in pkg.TOOLS] == ["echo"]

    async def main() -> None:
        acts = pkg.McpActivities()
        try:
            echoed = await acts.echo(pkg.EchoCall(message="over HTTP"))
            assert echoed.success and echoed.data == "Echo: over HTTP"
        finally:
            await acts.aclose()

    asyncio.run(main())


@pytest.mark.slow
def test_build_time_mcp_server_time_over_stdio(tmp_path: Path) -> None:
    _need(TIME_SERVER, "mcp-server-time")
    pkg = _generate(
        tmp_path,
        {"name": "time", "command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]},
        "time_tools",
    )
    assert sorted(t.name for t in pkg.TOOLS) == ["convert_time", "get_current_time"]

    async def main() -> None:
        acts = pkg.McpActivities()
        try:
            now = await acts.get_current_time(pkg.GetCurrentTimeCall(timezone="Asia/Tokyo"))
            assert now.success and isinstance(now.data, pkg.GetCurrentTimeOutput)
            assert now.data.model_dump()["timezone"] == "Asia/Tokyo"
            assert now.data.model_dump()["datetime"].endswith("+09:00")
            bad = await acts.get_current_time(pkg.GetCurrentTimeCall(timezone="Mars/Base"))
            assert not bad.success and "Mars/Base" in (bad.error or "")
        finally:
            await acts.aclose()

    asyncio.run(main())


# -- run time --------------------------------------------------------------------------------------


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    server = ScriptedLLM()
    with serve_asgi(server.app) as url:
        yield server, url


def test_agent_discovers_server_everything_and_calls_it_with_progress_and_errors(
    llm: tuple[ScriptedLLM, str], everything: dict[str, Any]
) -> None:
    scripted, url = llm
    allowed = ["get-sum", "get-structured-content", "trigger-long-running-operation"]
    scripted.add(
        _step(
            {"_tool": "get-sum", "a": 2, "b": 3},
            {"_tool": "get-structured-content", "location": "New York"},
            {"_tool": "trigger-long-running-operation", "duration": 0.3, "steps": 3},
        ),
        _step(output="done"),
    )
    agent = _agent(url, {"mcp": {"servers": [{**everything, "allowedTools": allowed}]}})
    result = agent.run("add and check the weather")
    assert result.output == "done"
    assert _offered(scripted) == set(allowed)  # allowedTools: nothing else is offered
    records = {r.tool: r for r in result.steps[0].calls}
    assert all(r.route == "explicit" for r in records.values())  # never latent
    assert records["get-sum"].result.data == "The sum of 2 and 3 is 5."
    weather = records["get-structured-content"].result
    assert weather.success and set(weather.model_dump(mode="json")["data"]) == {
        "temperature",
        "conditions",
        "humidity",
    }
    long = records["trigger-long-running-operation"]
    assert long.result.success
    assert [p["progress"] for p in long.progress] == [1.0, 2.0, 3.0]  # progress notifications
    assert all(p["total"] == 3.0 for p in long.progress)
    # the results went back to the model
    fed_back = json.dumps(scripted.requests[1]["messages"])
    assert "The sum of 2 and 3 is 5." in fed_back


def test_agent_streams_progress_events_and_feeds_back_tool_errors(
    llm: tuple[ScriptedLLM, str], everything: dict[str, Any]
) -> None:
    scripted, url = llm
    scripted.add(
        _step({"_tool": "trigger-long-running-operation", "duration": 0.2, "steps": 2}),
        _step({"_tool": "get-sum", "a": 1, "b": 1}),
        _step(output="ok"),
    )
    agent = _agent(
        url, [{**everything, "allowedTools": ["trigger-long-running-operation", "get-sum"]}]
    )

    async def main() -> list[Any]:
        events: list[Any] = []
        async with agent:
            async for event in agent._events("go", None, 4, None):  # pyright: ignore[reportPrivateUsage]
                events.append(event)
        return events

    events = asyncio.run(main())
    preliminary = [e.data["output"] for e in events if e.type == "tool-result"]
    assert [p["progress"] for p in preliminary] == [1.0, 2.0]
    # MCP tools are not visible: astream (the user-facing stream) leaves them out
    assert all(not e.visible for e in events if e.tool is not None)
    # the same session served both steps' calls
    assert _toolbox(agent).connections["everything"].connects == 1


def test_generated_mcp_activities_report_progress_as_agent_events(
    llm: tuple[ScriptedLLM, str], everything: dict[str, Any], tmp_path: Path
) -> None:
    # a build-time package's McpActivities: the server's progress notifications during a call
    # are the typed method's progress= callbacks, and an Agent's progress events (tool-result
    # events with the notification, kept in CallRecord.progress), as on the run-time path
    long_op = "trigger-long-running-operation"
    pkg = _generate(tmp_path, {**everything, "allowedTools": [long_op, "get-sum"]}, "ev_progress")
    scripted, url = llm
    scripted.add(
        _step(
            {"_tool": long_op, "duration": 0.3, "steps": 3}, {"_tool": "get-sum", "a": 1, "b": 2}
        ),
        _step(output="done"),
    )

    async def main() -> tuple[list[Any], Any]:
        acts = pkg.McpActivities()
        try:
            seen: list[Any] = []
            direct = await acts.trigger_long_running_operation(
                pkg.TriggerLongRunningOperationCall(duration=0.2, steps=2), progress=seen.append
            )
            assert direct.success
            agent = Agent(
                f"{url}/v1", model="scripted", tools=pkg.TOOLS, activities=acts.async_activities()
            )
            return seen, await agent.arun("go", max_steps=3)
        finally:
            await acts.aclose()

    seen, result = asyncio.run(main())
    assert [p["progress"] for p in seen] == [1.0, 2.0] and all(p["total"] == 2.0 for p in seen)
    assert result.output == "done"
    records = {r.tool: r for r in result.steps[0].calls}
    long = records[long_op]
    assert long.route == "explicit" and long.result.success
    assert [p["progress"] for p in long.progress] == [1.0, 2.0, 3.0]
    assert all(p["total"] == 3.0 for p in long.progress)
    assert records["get-sum"].progress == []  # a call with no notifications has none
    assert records["get-sum"].result.data == "The sum of 1 and 2 is 3."


def test_an_unknown_tool_error_from_the_server_is_a_failed_result(
    llm: tuple[ScriptedLLM, str], tmp_path: Path
) -> None:
    _need(TIME_SERVER, "mcp-server-time")
    scripted, url = llm
    scripted.add(
        _step({"_tool": "get_current_time", "timezone": "Mars/Base"}),
        _step({"_tool": "get_current_time", "timezone": "Europe/Paris"}),
        _step(output="fine"),
    )
    agent = _agent(url, {"mcp": {"servers": [{"name": "time", "command": str(TIME_SERVER)}]}})
    result = agent.run("what time is it on Mars?")
    (failed,) = result.steps[0].calls
    assert not failed.result.success
    assert failed.result.error is not None
    assert failed.result.error.startswith("MCP server 'time', tool 'get_current_time':")
    assert "Mars/Base" in json.dumps(scripted.requests[1]["messages"])  # fed back to the model
    (paris,) = result.steps[1].calls
    assert paris.result.success
    assert paris.result.model_dump(mode="json")["data"]["timezone"] == "Europe/Paris"


def test_list_changed_makes_the_agent_list_the_tools_again(
    llm: tuple[ScriptedLLM, str], everything: dict[str, Any]
) -> None:
    # server-everything registers some tools once a client has initialized, and announces it with
    # notifications/tools/list_changed: the Agent lists again at its next step, and only then
    scripted, url = llm
    scripted.add(
        _step({"_tool": "get-sum", "a": 1, "b": 2}),
        _step({"_tool": "get-sum", "a": 3, "b": 4}),
        _step(output="done"),
    )
    agent = _agent(url, [everything])
    toolbox: Any = _toolbox(agent)
    result = agent.run("sum", max_steps=3)
    assert result.finished
    assert toolbox.listings == 2  # once at start, once after list_changed; not at step 3
    assert toolbox.connections["everything"].connects == 1


@pytest.mark.slow
def test_a_server_killed_mid_call_fails_the_call_naming_it_and_the_next_call_reconnects(
    llm: tuple[ScriptedLLM, str], everything: dict[str, Any], tmp_path: Path
) -> None:
    scripted, url = llm
    pidfile = tmp_path / "pid"
    server = {
        "name": "everything",
        "command": "sh",
        "args": ["-c", f'echo $$ > "{pidfile}"; exec node "{EVERYTHING}" stdio'],
    }
    scripted.add(
        _step({"_tool": "trigger-long-running-operation", "duration": 20, "steps": 20}),
        _step({"_tool": "get-sum", "a": 20, "b": 22}),
        _step(output="done"),
    )
    agent = _agent(url, [server])
    pids: list[int] = []

    def kill_after_first_progress() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (pidfile.exists() and scripted.requests):
            time.sleep(0.05)
        time.sleep(3)  # the call is under way (a progress notification a second)
        pid = int(pidfile.read_text().strip())
        pids.append(pid)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_after_first_progress)
    killer.start()
    result = agent.run("go", max_steps=3)
    killer.join()
    (died,) = result.steps[0].calls
    assert not died.result.success
    assert died.result.error is not None and "MCP server 'everything'" in died.result.error
    assert died.result.metadata["error_type"] == "connection"
    assert died.progress  # it was mid-call
    (after,) = result.steps[1].calls
    assert after.result.success and after.result.data == "The sum of 20 and 22 is 42."
    assert int(pidfile.read_text().strip()) != pids[0]  # a new server process


ACTS = """
import asyncio
from pathlib import Path

MARK = Path({mark!r})


async def sentimentAnalysis(call):
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        MARK.write_text("cancelled")
        raise
    return {{"sentiment": "positive", "confidence": 1.0}}


def greetUser(call):
    return {{"greeting": "Hi " + call.userName}}
"""


@pytest.fixture
def served_seeds(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``toolbind serve specs/seeds.yaml`` over HTTP with a bearer token ($SEEDS_TOKEN)."""
    mark = tmp_path / "cancelled"
    acts = tmp_path / "acts.py"
    acts.write_text(ACTS.format(mark=str(mark)), encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolbind.cli",
            "serve",
            str(REPO / "specs" / "seeds.yaml"),
            "--activities",
            str(acts),
            "--http",
            f"127.0.0.1:{port}",
            "--token-env",
            "SERVE_TOKEN",
        ],
        env={**os.environ, "SERVE_TOKEN": "t0ken-for-tests"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        _wait_for_port(port, 60)
        yield f"http://127.0.0.1:{port}/mcp", mark
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_env_headers_reach_the_server_and_a_timeout_cancels_the_call_on_it(
    llm: tuple[ScriptedLLM, str], served_seeds: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted, url = llm
    endpoint, mark = served_seeds
    server = {
        "name": "seeds",
        "url": endpoint,
        "transport": "http",
        "headers": {"Authorization": "Bearer ${env.SEEDS_TOKEN}"},
        "timeout": 1000,
    }
    # without the variable: a configuration error naming it; with a wrong token: refused
    with pytest.raises(UsageError, match=r"\$\{env.SEEDS_TOKEN\} is not set"):
        _agent(url, [server]).run("hi")
    monkeypatch.setenv("SEEDS_TOKEN", "wrong")
    with pytest.raises(RunFailure, match="MCP server 'seeds'"):
        _agent(url, [server]).run("hi")
    monkeypatch.setenv("SEEDS_TOKEN", "t0ken-for-tests")
    scripted.add(
        _step(
            {"_tool": "greetUser", "userName": "Ada"}, {"_tool": "sentimentAnalysis", "text": "x"}
        ),
        _step(output="done"),
    )
    result = _agent(url, [server]).run("greet")
    records = {r.tool: r for r in result.steps[0].calls}
    assert records["greetUser"].result.model_dump(mode="json")["data"] == {"greeting": "Hi Ada"}
    slow = records["sentimentAnalysis"].result
    assert not slow.success and slow.metadata["error_type"] == "timeout"
    assert "timed out after 1s" in (slow.error or "")
    deadline = time.monotonic() + 10
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mark.read_text() == "cancelled"  # notifications/cancelled reached the server


def test_sessions_are_closed_when_the_agent_closes(everything: dict[str, Any]) -> None:
    async def main() -> None:
        conn = McpConnection(load_mcp_config([everything])[0])
        tools = await conn.list_tools()
        assert any(t["name"] == "echo" for t in tools)
        task = conn._task  # pyright: ignore[reportPrivateUsage]
        assert task is not None and not task.done()
        await conn.aclose()
        assert task.done()
        again = await conn.call("echo", {"message": "back"})  # a closed session reopens
        assert again.data == "Echo: back" and conn.connects == 2
        await conn.aclose()

    asyncio.run(main())


def test_the_mcp_module_surface() -> None:
    import toolbind.runtime.mcp as public

    assert public.__all__ == [
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
    for name in public.__all__:
        assert getattr(public, name).__module__ in (
            "toolbind.runtime.mcp._config",
            "toolbind.runtime.mcp._connection",
            "toolbind.runtime.mcp._results",
            "toolbind.runtime.mcp._serve",
            "toolbind.runtime.mcp._toolbox",
            "toolbind.runtime.mcp._tools",
        )


def test_app_only_tools_are_never_offered_to_a_model(tmp_path: Path) -> None:
    """The defect (found on ``@modelcontextprotocol/server-pdf``, whose ``tools/list`` has six
    tools its viewer calls — ``_meta.ui.visibility: ["app"]``, "The model should NOT call this
    tool directly" — beside three for the model): toolbind compiled and offered all nine, where
    MCP Apps has a host keep app-only tools from the model. Now they are left out at build time
    (with a located note) and at run time."""
    from toolbind.compiler import compile_to_directory
    from toolbind.runtime.mcp import McpToolbox

    server = {
        "name": "shapes",
        "command": sys.executable,
        "args": [str(REPO / "tests" / "mcp" / "shapes_server.py")],
    }
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcp": {"servers": [server]}}), encoding="utf-8")
    tree = compile_to_directory([config], tmp_path / "out", package_names={str(config): "shapes"})
    pkg = load_package(tmp_path / "out", "shapes")
    assert [t.name for t in pkg.TOOLS] == ["read_file", "read_text", "clear"]
    assert pkg.TOOL_SERVERS == {"clear": "shapes", "read_file": "shapes", "read_text": "shapes"}
    (note,) = [d for d in tree.diagnostics if "submit_page_data" in d.found]
    assert note.severity == "note"
    assert str(note.loc).endswith("servers.json#/mcp/servers/0/tools/3/_meta/ui/visibility")

    async def listed() -> list[str]:
        toolbox = McpToolbox([server])
        try:
            await toolbox.refresh()
            return [b.name for b in toolbox.bindings]
        finally:
            await toolbox.aclose()

    assert asyncio.run(listed()) == ["read_file", "read_text", "clear"]


def test_a_line_that_is_not_json_rpc_on_a_servers_stdout_is_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The defect (found on ``office-word-mcp-server``, which prints ``Loading configuration from
    .env file...`` and a FastMCP banner line to its stdout): the SDK logged a whole traceback for
    each such line, which ``toolbind generate`` showed as if it had failed; the tools compiled."""
    from toolbind.compiler import compile_to_directory

    server = {
        "name": "shapes",
        "command": sys.executable,
        "args": [str(REPO / "tests" / "mcp" / "shapes_server.py"), "--banner"],
    }
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcp": {"servers": [server]}}), encoding="utf-8")
    with caplog.at_level("WARNING", logger="mcp.client.stdio"):
        compile_to_directory([config], tmp_path / "out", package_names={str(config): "banner"})
    (record,) = [r for r in caplog.records if r.name == "mcp.client.stdio"]
    assert (record.levelname, record.exc_info) == ("WARNING", None)
    assert record.getMessage() == (
        "an MCP server wrote a line that is not JSON-RPC to its stdout (ignored): "
        "'Loading configuration from .env file...'"
    )
    assert [t.name for t in load_package(tmp_path / "out", "banner").TOOLS] == [
        "read_file",
        "read_text",
        "clear",
    ]


def test_tools_the_server_runs_only_as_tasks_are_left_out(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    """The defect (found compiling ``@modelcontextprotocol/server-everything``): its
    ``simulate-research-query`` lists ``execution.taskSupport: "required"`` — it may only be
    called as an MCP task — and toolbind compiled and offered it (and ``toolbind serve`` served
    it), though its client makes plain ``tools/call``s only: every call failed with ``MCP error
    -32601: Tool simulate-research-query requires task augmentation``. Now it is left out at
    build time (with a located note) and at run time, as app-only tools are."""
    from toolbind.compiler import compile_to_directory
    from toolbind.runtime.mcp import McpToolbox

    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcp": {"servers": [everything]}}), encoding="utf-8")
    tree = compile_to_directory([config], tmp_path / "out", package_names={str(config): "ev"})
    pkg = load_package(tmp_path / "out", "ev")
    names = [t.name for t in pkg.TOOLS]
    assert "simulate-research-query" not in names
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= set(names)
    (note,) = [d for d in tree.diagnostics if "simulate-research-query" in d.found]
    assert note.severity == "note"
    assert re.search(
        r"servers\.json#/mcp/servers/0/tools/\d+/execution/taskSupport$", str(note.loc)
    )

    async def listed() -> list[str]:
        toolbox = McpToolbox([everything])
        try:
            await toolbox.refresh()
            return [b.name for b in toolbox.bindings]
        finally:
            await toolbox.aclose()

    assert asyncio.run(listed()) == names


def test_serving_a_servers_tool_passes_its_progress_on_as_it_was(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    """The defect (found serving ``@modelcontextprotocol/server-everything``'s
    ``trigger-long-running-operation`` with ``toolbind serve`` of its MCP configuration, called
    by the SDK's client with a progress callback): each of the server's notifications reached the
    client as progress N with no total and its JSON as the message
    (``'{"progress": 1.0, "total": 2.0, "message": null}'``), and the result came as one more
    progress step (its ``ToolResult`` JSON, metadata and all). Now the server's progress, total
    and message go on as they were, and the result is only the result."""
    from mcp import Client

    from toolbind.compiler import compile_to_directory
    from toolbind.runtime import mcp_server

    server = {**everything, "allowedTools": ["trigger-long-running-operation"]}
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcp": {"servers": [server]}}), encoding="utf-8")
    compile_to_directory([config], tmp_path / "out", package_names={str(config): "ev"})
    pkg = load_package(tmp_path / "out", "ev")
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def main() -> Any:
        activities = pkg.McpActivities()
        try:
            async with Client(mcp_server(pkg.TOOLS, activities.async_activities())) as client:
                return await client.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 1, "steps": 2},
                    progress_callback=on_progress,
                )
        finally:
            await activities.aclose()

    result = asyncio.run(main())
    assert not result.is_error
    assert result.content[0].text.startswith("Long running operation completed")
    assert seen == [(1.0, 2.0, None), (2.0, 2.0, None)]


_SERVER_SCRIPT = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("evolving")

@server.tool()
def first(x: int) -> int:
    return x
{more}
server.run()
"""


def test_generate_lists_the_servers_again_when_the_configuration_is_unchanged(
    tmp_path: Path,
) -> None:
    """The defect (found regenerating a FastMCP server's package after the server gained a
    tool): ``toolbind generate --mcp-config`` said ``mcp.json → out/...`` and kept the old
    package — the configuration's bytes were unchanged, so incremental regeneration reused it
    without listing the servers; ``--check`` said up to date. Now a package listed from live
    servers is never reused: each run lists them again."""
    script = tmp_path / "server.py"
    script.write_text(_SERVER_SCRIPT.format(more=""), encoding="utf-8")
    server = {"name": "evolving", "command": sys.executable, "args": [str(script)]}
    first = _generate(tmp_path, server, "evolving")
    assert [t.name for t in first.TOOLS] == ["first"]
    more = "@server.tool()\ndef second(y: str) -> str:\n    return y\n"
    script.write_text(_SERVER_SCRIPT.format(more=more), encoding="utf-8")
    check = _toolbind(
        "generate",
        "--mcp-config",
        "servers.json",
        "--package",
        "evolving",
        "-o",
        "out",
        "--check",
        cwd=tmp_path,
    )
    assert check.returncode == 1 and "stale" in check.stdout + check.stderr
    _generate(tmp_path, server, "evolving")  # (the package module is already imported)
    listed = json.loads((tmp_path / "out" / "evolving" / "tools.json").read_text("utf-8"))
    assert [t["name"] for t in listed["tools"]] == ["first", "second"]
