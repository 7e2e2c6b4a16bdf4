"""The fault matrix: every outside part a run talks to — an HTTP API, the model server, an MCP
server over stdio and over HTTP — and every fault it may show — it never answers, answers slowly,
dies before / during / between calls, closes the connection mid-body, answers garbage, answers a
valid-looking lie — injected against the real part, with the outcome each must have: a named
failure within a stated bound (the user-settable timeout plus slack), no hang, no effect repeated
beyond what the docs promise, nothing lost from the transcript.

Real parts only: a raw ASGI app and the scripted OpenAI-protocol server served by uvicorn, MCP
servers in their own processes (``tests/faults/mcp_server.py``, the ``mcp`` SDK's server, over
stdio and streamable HTTP), and ``tests/faults/_proxy.py`` (a TCP proxy on 127.0.0.1) where the
fault is on the wire. The Temporal rows (a worker killed during a tool call, during the model
call, the workflow's worker killed mid-step, a pending result sent while no worker runs, the
server killed mid-run) are in ``tests/temporal/`` (slow). Each row prints its measured time:
``pytest tests/faults -s``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar, cast

import pytest

from tests._servers import free_port, serve_asgi
from tests.conftest import REPO, CompileSpec
from tests.faults import _upstream
from tests.faults._proxy import Fault, FaultProxy
from tests.scripted_llm import Reply, ScriptedLLM, call, raw, tools
from toolbind.compiler import load_package
from toolbind.runtime import Agent, ModelSettings, ToolRegistry
from toolbind.runtime.capabilities import PendingDelivery
from toolbind.runtime.errors import AgentError
from toolbind.runtime.http import HttpClient, RetryPolicy
from toolbind.runtime.mcp import McpConnection, load_mcp_config
from toolbind.runtime.pending import Pending, PendingStore

T = TypeVar("T")
SLACK = 3.0
"""Seconds over a row's configured bound a loaded machine may take (2 cores, 8 helpers)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One cell of the matrix: the fault, what must come of it, within how long."""

    fault: str
    outcome: str | None  # the failure's ``error_type`` (or exception class); None: it succeeds
    bound: float  # the seconds configured (the timeout the user sets); SLACK is added


def timed(run: Callable[[], T]) -> tuple[T, float]:
    started = time.monotonic()
    value = run()
    return value, time.monotonic() - started


def report(part: str, row: Row, seconds: float, outcome: str | None) -> None:
    print(f"\n{part} | {row.fault} | {outcome} | {seconds:.2f} s (bound {row.bound:g} s)")
    assert outcome == row.outcome
    assert seconds < row.bound + SLACK


# -- an HTTP API ----------------------------------------------------------------------------------

HTTP_TIMEOUT = 1.0
HTTP_RETRY = RetryPolicy(max_attempts=2, backoff=0.05, max_backoff=0.1)
CUT_RETRY = RetryPolicy(max_attempts=3, backoff=0.05, max_backoff=0.1)
"""For the answers cut mid-body: attempts to spare, to show a cut request is sent again once."""
HTTP_ROWS = {
    "never answers": Row("never answers", "timeout", HTTP_TIMEOUT),
    "answers slowly": Row("answers slowly (5 s, past the 1 s timeout)", "timeout", HTTP_TIMEOUT),
    "dies before": Row("dies before the call (nothing listens)", "connection", HTTP_TIMEOUT),
    "dies during": Row("dies during a POST, after its effect", "connection", HTTP_TIMEOUT),
    "dies during get": Row("dies during a GET (sent again once)", "connection", HTTP_TIMEOUT),
    "dies between": Row("dies between calls (restarted)", None, HTTP_TIMEOUT),
    "cut": Row("closes the connection mid-body, every time (a GET)", "connection", HTTP_TIMEOUT),
    "cut once": Row("closes the connection mid-body once (a GET)", None, HTTP_TIMEOUT),
    "cut post": Row("closes the connection mid-body (a POST)", "connection", HTTP_TIMEOUT),
    "garbage": Row("answers garbage", "invalid_response", HTTP_TIMEOUT),
    "wrong type": Row("lies: an HTML page for JSON", "invalid_output", HTTP_TIMEOUT),
    "wrong shape": Row("lies: JSON of the wrong shape", "invalid_output", HTTP_TIMEOUT),
}


ON_THE_WIRE: dict[str, Fault] = {
    "never answers": "silent",
    "dies during": "reset",
    "dies during pending": "reset",
    "dies during get": "reset",
    "cut": "cut",
    "cut once": "cut-once",
    "cut post": "cut",
}
"""The rows whose fault the proxy injects (the others: the server's own answer, or no server)."""


@pytest.fixture(scope="module")
def http_api() -> Iterator[int]:
    with serve_asgi(_upstream.app) as url:
        yield int(url.rpartition(":")[2])


@pytest.fixture
def api_pkg(compile_spec: CompileSpec) -> ModuleType:
    _upstream.reset()
    return compile_spec(_upstream.SPEC)


@pytest.mark.parametrize("case", HTTP_ROWS)
def test_an_http_api(case: str, http_api: int, api_pkg: ModuleType) -> None:
    row = HTTP_ROWS[case]
    with FaultProxy(http_api).running() as proxy:
        base = f"http://127.0.0.1:{free_port()}" if case == "dies before" else proxy.url
        retry = CUT_RETRY if case.startswith("cut") else HTTP_RETRY
        client = HttpClient(api_pkg.API, base_url=base, timeout=HTTP_TIMEOUT, retry=retry)
        with client:
            acts = api_pkg.HttpActivities(client).activities()

            def call(tool: str) -> Any:
                return acts[tool](api_pkg.CallAdapter.validate_python({"_tool": tool}))

            operation = {
                "answers slowly": "getSlow",
                "dies during": "makeEffect",
                "cut post": "makeEffect",
                "garbage": "getGarbage",
                "wrong type": "getHtml",
                "wrong shape": "getShape",
            }.get(case, "getItem")
            if case == "dies between":
                assert call("getItem").success  # a kept-alive connection, then the server goes
                proxy.drop()
                time.sleep(0.1)
            proxy.fault = ON_THE_WIRE.get(case, "none")
            result, seconds = timed(lambda: call(operation))
    outcome = None if result.success else result.metadata["error_type"]
    report("HTTP API", row, seconds, outcome)
    if case == "dies during":  # a POST is never sent again: its effect happened once
        assert _upstream.EFFECTS == [1] and result.metadata["attempts"] == 1
        assert "it may have been done" in (result.error or "")
    if case == "dies during get":  # an idempotent request is sent again, within the policy
        assert _upstream.HITS["/item"] == 2 and result.metadata["attempts"] == 2
    if case == "dies between":
        assert result.data.id == 2  # answered by the server, on a new connection
    if case == "dies before":  # a GET: sent again, within the policy
        assert result.metadata["attempts"] == HTTP_RETRY.max_attempts
    if case.startswith("cut"):  # sent again once if a repeat is safe, whatever attempts are left
        sent = {"cut": 2, "cut once": 2, "cut post": 1}[case]
        assert result.metadata["attempts"] == sent
        assert _upstream.HITS["/effect" if case == "cut post" else "/item"] == sent
    if case == "cut once":  # the second answer, whole
        assert result.data.id == 2
    if case == "cut post":  # a POST is never sent again: its effect happened once
        assert _upstream.EFFECTS == [1]
        assert "not sent again" in (result.error or "")


# -- the model server -----------------------------------------------------------------------------

MODEL = ModelSettings(timeout=1.0, http_retries=1, max_retries=0)
MODEL_BOUND = MODEL.timeout * (MODEL.http_retries + 1) + 1.0  # (+ the client's backoff, < 1 s)
MODEL_ROWS = {
    "never answers": Row("never answers", "LLMError", MODEL_BOUND),
    "answers slowly": Row("answers slowly (5 s, past the 1 s timeout)", "LLMError", MODEL_BOUND),
    "dies before": Row("dies before the run (nothing listens)", "LLMError", MODEL_BOUND),
    "dies during": Row("dies during a request", "LLMError", MODEL_BOUND),
    "dies during pending": Row("dies during a request, a call pending", "LLMError", MODEL_BOUND),
    "dies between": Row("dies between requests (restarted)", None, MODEL_BOUND),
    "cut": Row("closes the connection mid-body", "LLMError", MODEL_BOUND),
    "garbage": Row("answers garbage", "LLMError", MODEL_BOUND),
    "wrong type": Row("lies: an HTML page, 200", "LLMError", MODEL_BOUND),
    "wrong type native": Row("lies: an HTML page, 200 (native mode)", "LLMError", MODEL_BOUND),
    # an answer, if an empty one: fed back like any invalid answer (as the fuzz tests have it)
    "wrong shape": Row(
        "lies: a completion with no choices", "ResponseValidationError", MODEL_BOUND
    ),
    "wrong answer": Row(
        "lies: a call that breaks the tool's schema", "ResponseValidationError", MODEL_BOUND
    ),
}
SECOND_ANSWER: dict[str, Reply] = {
    "answers slowly": call({"output": "late", "calls": []}, delay=5),
    "garbage": raw(b"\x00\xff<<not json"),
    "wrong type": raw("<html><h1>502 Bad Gateway</h1></html>", media_type="text/html"),
    "wrong type native": raw("<html><h1>502 Bad Gateway</h1></html>", media_type="text/html"),
    "wrong shape": raw('{"id": "x", "object": "chat.completion", "choices": []}'),
    "wrong answer": call({"output": None, "calls": [{"_tool": "weatherCheck", "location": 7}]}),
}
"""What the model server answers the second request with (twice: the client's retry too)."""


@pytest.fixture(scope="module")
def seeds() -> ModuleType:
    """The seeds package, after one unmeasured run: the first run imports instructor's provider
    modules (seconds on a loaded machine), which no row's time should hold."""
    pkg = load_package(REPO / "generated", "seeds")
    server = ScriptedLLM(call({"output": "warm", "calls": []}))
    with serve_asgi(server.app) as url:
        Agent(f"{url}/v1", model="scripted", tools=ToolRegistry(pkg.TOOLS)).run("warm up")
    return pkg


@pytest.mark.parametrize("case", MODEL_ROWS)
def test_the_model_server(case: str, seeds: ModuleType, tmp_path: Path) -> None:
    row = MODEL_ROWS[case]
    store = PendingStore(tmp_path / "pending.sqlite3")
    native = case.endswith("native")
    server = ScriptedLLM(
        tools(("weatherCheck", {"location": "Oslo"}))
        if native
        else call({"output": None, "calls": [{"_tool": "weatherCheck", "location": "Oslo"}]})
    )
    second = SECOND_ANSWER.get(case, call({"output": "done", "calls": []}))
    server.add(second, second)
    effects: list[str] = []
    with serve_asgi(server.app) as url, FaultProxy(int(url.rpartition(":")[2])).running() as proxy:

        def weather(c: Any) -> dict[str, Any] | Pending:
            effects.append(c.location)
            if case == "dies between":
                proxy.drop()  # the kept-alive connection to the model server is gone
            proxy.fault = ON_THE_WIRE.get(case, "none")  # for the next request
            if case == "dies during pending":
                return Pending(ttl=60)  # its result comes later, through the store
            return {"temperature": 3.5, "conditions": "snow"}

        base = f"http://127.0.0.1:{free_port()}" if case == "dies before" else proxy.url
        agent = Agent(
            f"{base}/v1",
            model="scripted",
            tools=ToolRegistry(seeds.TOOLS),
            activities={"weatherCheck": weather},
            settings=MODEL,
            mode="native" if native else "composed",
            capabilities=[PendingDelivery(store)],
        )
        failure: AgentError | None = None
        result: Any = None
        started = time.monotonic()
        try:
            result = agent.run("weather in Oslo", max_steps=3, run_id="run-1")
        except AgentError as exc:
            failure = exc
        seconds = time.monotonic() - started
    report("model server", row, seconds, None if failure is None else type(failure).__name__)
    if case.startswith("wrong type"):
        assert "502 Bad Gateway" in str(failure)  # what came instead of a completion
    steps = result.steps if failure is None else failure.steps
    if case == "dies before":
        assert [s.calls for s in steps] == [[]] and effects == []
        return
    # nothing lost: the first step's call and its result are in the transcript, done once
    (done,) = steps[0].calls
    assert done.tool == "weatherCheck" and done.result.success
    assert effects == ["Oslo"]
    if case == "dies during pending":  # the pending call waits in the store for its result
        (waiting,) = store.pending("run-1")
        assert waiting.call_id == done.call_id and waiting.tool == "weatherCheck"


# -- an MCP server, over stdio and over HTTP -------------------------------------------------------

MCP_SERVER = REPO / "tests" / "faults" / "mcp_server.py"
CALL_MS, START_MS = 2000, 1000
"""The configuration's ``timeout`` (each call) and, where the start is the fault, its
``startTimeout``; elsewhere the start has 60 s (a loaded machine starts Python slowly)."""
CALL_S, START_S = CALL_MS / 1000, START_MS / 1000
STOP_S = 2.0
"""The SDK's grace for a stdio server to exit once its stdin is closed (then it is terminated):
part of a failed start's wait."""
MCP_ROWS = {
    "never answers": Row("never answers (initialize)", "connection", START_S),
    "answers slowly": Row("answers slowly (10 s, past the 2 s timeout)", "timeout", CALL_S),
    "dies before": Row("dies before the call", "connection", START_S),
    "dies during": Row("dies during a call, after its effect", "connection", CALL_S),
    "dies between": Row("dies between calls", None, CALL_S),
    "garbage": Row("answers garbage", "connection", START_S),
    "wrong shape": Row("lies: a result that breaks its outputSchema", "output", CALL_S),
}
MCP_STDIO_ROWS = MCP_ROWS | {
    "never answers": Row("never answers (initialize)", "connection", START_S + STOP_S),
    "garbage": Row("answers garbage", "connection", START_S + STOP_S),
    # the next call starts a new process: bounded by the start's 60 s
    "dies between": Row("dies between calls (the next call restarts it)", None, 60.0),
}
MCP_HTTP_ROWS = MCP_ROWS | {
    "cut": Row("closes the connection mid-body", "connection", CALL_S),
    "wrong type": Row("lies: an HTML page, 200", "connection", START_S),
}


def _mcp_call(config: dict[str, Any], tool: str, args: dict[str, Any], before: Any = None) -> Any:
    """``tool`` called on a fresh connection to the server ``config`` (after ``before``, if given,
    on the same connection): the result, the seconds the call took, the connection."""
    (server,) = load_mcp_config({"servers": [config]})
    connection = McpConnection(server)

    async def run() -> tuple[Any, float]:
        try:
            if before is not None:
                await before(connection)
            started = time.monotonic()
            result = await connection.call(tool, args)
            return result, time.monotonic() - started
        finally:
            await connection.aclose()

    result, seconds = asyncio.run(run())
    return result, seconds, connection


def _effects(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def _kill_it(connection: McpConnection) -> None:
    """Ask the server its pid, kill it (SIGKILL), give it a moment to be gone: between calls."""
    pid = await connection.call("pid", {})
    data: Any = pid.data
    assert isinstance(data, dict), pid.error
    os.kill(int(cast("dict[str, Any]", data)["result"]), signal.SIGKILL)
    await asyncio.sleep(0.5)


@pytest.mark.parametrize("case", MCP_STDIO_ROWS)
def test_an_mcp_server_over_stdio(case: str, tmp_path: Path) -> None:
    row = MCP_STDIO_ROWS[case]
    effects = tmp_path / "effects"
    config: dict[str, Any] = {
        "name": "faults",
        "command": sys.executable,
        "args": [str(MCP_SERVER)],
        "env": {"FAULTS_EFFECTS": str(effects)},
        "timeout": CALL_MS,
        "startTimeout": 60000,
    }
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "answers slowly": ("sleep", {"seconds": 10}),
        "dies during": ("die", {"key": "d"}),
        "dies between": ("effect", {"key": "b"}),
        "wrong shape": ("lie", {}),
    }
    tool, args = calls.get(case, ("effect", {"key": "e"}))

    async def before(connection: McpConnection) -> None:
        if case in ("never answers", "garbage", "dies before"):  # the start is measured
            return
        await connection.list_tools()  # the session is up (a process start is not measured)
        if case == "dies between":
            await _kill_it(connection)

    if case in ("never answers", "garbage", "dies before"):
        code = {
            "never answers": "import time; time.sleep(60)",
            "garbage": "import time; print('\\x00garbage, not JSON-RPC', flush=True); time.sleep(60)",
            "dies before": "raise SystemExit(3)",
        }[case]
        config |= {"args": ["-c", code], "startTimeout": START_MS}
    result, seconds, connection = _mcp_call(config, tool, args, before)
    report("MCP stdio", row, seconds, None if result.success else result.metadata["error_type"])
    if case == "dies during":  # its effect happened, once: a call is never sent again
        assert _effects(effects) == ["d"]
    if case == "dies between":  # no call lost: the session ended when the server did
        assert _effects(effects) == ["b"] and connection.connects == 2


@pytest.fixture(scope="module")
def mcp_http() -> Iterator[tuple[int, Path]]:
    """The fault server over streamable HTTP (one for the rows that do not kill it)."""
    effects = Path(tempfile.mkdtemp()) / "effects"
    with _mcp_http_server(effects) as port:
        yield port, effects


@contextmanager
def _mcp_http_server(effects: Path) -> Generator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(MCP_SERVER), "--http", str(port)],
        env={**os.environ, "FAULTS_EFFECTS": str(effects)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, proc)
        yield port
    finally:
        proc.kill()
        proc.wait(10)


def _wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    """Until ``proc`` listens on ``port`` (60 s at most)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "no MCP server"
            time.sleep(0.1)


@pytest.mark.parametrize("case", MCP_HTTP_ROWS)
def test_an_mcp_server_over_http(
    case: str, mcp_http: tuple[int, Path], http_api: int, tmp_path: Path
) -> None:
    row = MCP_HTTP_ROWS[case]
    shared, effects = mcp_http
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "answers slowly": ("sleep", {"seconds": 10}),
        "dies during": ("die", {"key": f"d-{tmp_path.name}"}),
        "wrong shape": ("lie", {}),
    }
    tool, args = calls.get(case, ("effect", {"key": f"e-{tmp_path.name}"}))
    own = tmp_path / "effects"
    with ExitStack() as stack:
        killed = case in ("dies during", "dies between")
        port = stack.enter_context(_mcp_http_server(own)) if killed else shared
        proxy = stack.enter_context(FaultProxy(port).running())
        url = {
            "dies before": f"http://127.0.0.1:{free_port()}/mcp",
            "garbage": f"http://127.0.0.1:{http_api}/garbage",
            "wrong type": f"http://127.0.0.1:{http_api}/html",
        }.get(case, f"{proxy.url}/mcp")
        config: dict[str, Any] = {"name": "faults", "url": url, "timeout": CALL_MS}
        config["startTimeout"] = START_MS if row.bound == START_S else 60000

        async def before(connection: McpConnection) -> None:
            if case == "never answers":
                proxy.fault = "silent"
            if row.bound == START_S:  # the start is the fault: it is measured
                return
            await connection.list_tools()  # the session is up
            if case == "cut":
                proxy.fault = "cut"
            if case == "dies between":  # killed, and started again behind the same address
                await _kill_it(connection)
                proxy.upstream_port = stack.enter_context(_mcp_http_server(own))

        result, seconds, _ = _mcp_call(config, tool, args, before)
    report("MCP HTTP", row, seconds, None if result.success else result.metadata["error_type"])
    if case == "dies during":
        assert _effects(own) == [args["key"]]
    if case == "dies between":  # (the SDK opens a new session when the server forgot its own)
        assert _effects(own) == [args["key"]]
    if case == "cut":  # the call was made once, its answer lost: not sent again
        assert _effects(effects).count(str(args["key"])) == 1


EVERYTHING = (
    REPO / "tests/mcp/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


@pytest.mark.slow  # a node server's start: seconds, for one row
def test_a_resumable_http_mcp_server_killed_mid_call_is_a_lost_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reference server's answers carry event ids: the SDK tries to resume a broken answer
    (a second later, twice, past the call's 2 s) — its first try finds nobody listening, and
    the call fails as a lost connection then, not as a timeout "cancelled on the server" at the
    end of its 2 s; no traceback is printed."""
    if not EVERYTHING.exists() or shutil.which("node") is None:
        pytest.skip("@modelcontextprotocol/server-everything or node is missing: make install")
    port = free_port()
    proc = subprocess.Popen(
        ["node", str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    row = Row("dies during a call (resumable answers: server-everything)", "connection", 2.0)
    url = f"http://127.0.0.1:{port}/mcp"
    config = {"name": "everything", "url": url, "timeout": 2000, "startTimeout": 60000}

    async def kill_soon(connection: McpConnection) -> None:
        await connection.list_tools()
        asyncio.get_running_loop().call_later(0.2, proc.kill)

    try:
        _wait_for(port, proc)
        args = {"duration": 10, "steps": 10}
        result, seconds, _ = _mcp_call(config, "trigger-long-running-operation", args, kill_soon)
    finally:
        proc.kill()
        proc.wait(10)
    report("MCP HTTP", row, seconds, None if result.success else result.metadata["error_type"])
    assert "went away during the call" in (result.error or "")
    tracebacks = [r for r in caplog.records if r.name.startswith("mcp") and r.exc_info]
    assert tracebacks == []
