"""MCP serving benchmark: the largest corpus OpenAPI spec served over MCP
(stdio) by toolbind and, in the same run, by FastMCP's ``from_openapi`` server.

For each server, measured through the official ``mcp`` SDK's client:

- startup: from spawning the server process to the answer of the first ``tools/list``;
- ``tools/list`` bytes: the listing as compact JSON (what a client downloads and an LLM is shown);
- per-call overhead: the mean time of ``tools/call`` on ``GET /models`` (``listModels``).

Three servers: FastMCP's ``from_openapi`` (its tools call the API: here a no-op HTTP server on
127.0.0.1 answering ``{"object": "list", "data": []}`` at once); the package ``toolbind generate``
compiled ahead of time, served through ``toolbind.runtime.mcp_server`` with its generated HTTP
Activities calling the same no-op API (like for like: validate, one HTTP request, the answer
read into the Output model); and ``toolbind serve SPEC`` (compiles the spec in memory at startup)
with a no-op Python Activity for the tool (``--activities``): the overhead of the MCP path alone.
The YAML spec is turned into JSON once, beforehand, and both servers read that.

    .venv/bin/python bench/mcp.py [--spec FILE] [--calls N] [--json FILE]

Targets: startup ≤ 0.5× FastMCP's, tools/list bytes ≤ 0.5×, per-call ≤ 1× (the
median and the mean are both printed: on a shared machine the mean carries other processes'
stalls). Misses are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _corpus import corpus_root

REPO = Path(__file__).resolve().parent.parent
# this file is named like the SDK: the SDK must win the name `mcp`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))
SPEC = corpus_root() / "openapi" / "openai__openapi.yaml"

_NOOP_API = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def anything(request):
    return JSONResponse({"object": "list", "data": []})

app = Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST", "DELETE"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
"""

_FASTMCP = """
import json, sys
import fastmcp, httpx
spec = json.load(open(sys.argv[1], encoding="utf-8"))
server = fastmcp.FastMCP.from_openapi(
    openapi_spec=spec, client=httpx.AsyncClient(base_url=sys.argv[2]), name="bench"
)
server.run(transport="stdio", show_banner=False)
"""

_TOOLBIND_PACKAGE = """
import sys
import anyio
from mcp.server.stdio import stdio_server
from toolbind.compiler import load_package
from toolbind.runtime import mcp_server
from toolbind.runtime.http import HttpClient

pkg = load_package(sys.argv[1], sys.argv[2])
# any credential: the no-op API checks none, but the client sends what the spec's security asks
credentials = {name: "bench-token" for name in (pkg.API.security_schemes or {})}
client = HttpClient(pkg.API, base_url=sys.argv[3], credentials=credentials)
activities = pkg.HttpActivities(client).async_activities()
server = mcp_server(pkg.TOOLS, activities)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""

_NOOP_ACTIVITY = """
def list_models(call):
    return {"object": "list", "data": []}

ACTIVITIES = {"listModels": list_models}
"""


async def _measure(command: list[str], tool_hint: str, calls: int) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))
    with open(os.devnull, "w") as quiet:
        t0 = time.perf_counter()
        async with Client(stdio_client(params, errlog=quiet)) as client:
            listed = await client.list_tools()
            startup = time.perf_counter() - t0
            payload = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
            names = [t.name for t in listed.tools]
            key = tool_hint.lower().replace("_", "")
            tool = next(n for n in names if n.lower().replace("_", "") == key)
            first = await client.call_tool(tool, {})
            times: list[float] = []
            result = first
            for _ in range(calls):
                s = time.perf_counter()
                result = await client.call_tool(tool, {})
                times.append(time.perf_counter() - s)
            return {
                "startup_s": startup,
                "tools": len(names),
                "list_bytes": size,
                "call_ms": statistics.mean(times) * 1000,
                "call_p50_ms": statistics.median(times) * 1000,
                "tool": tool,
                "first_ok": not first.is_error,
                "ok": not result.is_error,
                "error": " ".join(getattr(c, "text", "") for c in result.content)[:200],
            }


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    import subprocess

    from tests._servers import free_port

    given: Path = args.spec.resolve()
    port = free_port()
    api = subprocess.Popen([sys.executable, "-c", _NOOP_API, str(port)])
    base = f"http://127.0.0.1:{port}"
    rows: dict[str, dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
            work = Path(tmp)
            # both servers read the same JSON document (parsing a 3 MB YAML file is not serving)
            spec = work / f"{given.stem}.json"
            spec.write_text(json.dumps(_load(given), default=str), encoding="utf-8")
            (work / "noop_acts.py").write_text(_NOOP_ACTIVITY, encoding="utf-8")
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "toolbind.cli",
                    "generate",
                    str(spec),
                    "-o",
                    str(work / "out"),
                    "--package",
                    "served",
                ],
                check=True,
                capture_output=True,
            )
            generate_s = time.perf_counter() - t0
            servers = {
                "FastMCP from_openapi (HTTP)": [sys.executable, "-c", _FASTMCP, str(spec), base],
                "toolbind package (HTTP)": [
                    sys.executable,
                    "-c",
                    _TOOLBIND_PACKAGE,
                    str(work / "out"),
                    "served",
                    base,
                ],
                "toolbind serve SPEC (no-op)": [
                    *("-m", "toolbind.cli", "serve", str(spec)),
                    *("--activities", str(work / "noop_acts.py")),
                ],
            }
            servers["toolbind serve SPEC (no-op)"].insert(0, sys.executable)
            for label, command in servers.items():
                try:
                    rows[label] = asyncio.run(_measure(command, "listModels", args.calls))
                except Exception as exc:  # a peer that cannot run: say so, keep going
                    print(f"{label}: did not run ({type(exc).__name__}: {exc})")
    finally:
        api.terminate()
        api.wait(timeout=10)
    print(f"{given.name}: {args.calls} calls of GET /models per server (stdio, the mcp SDK client)")
    print(f"  toolbind generate (ahead of time, once): {generate_s:.1f}s")
    for label, row in rows.items():
        print(
            f"  {label:32} startup {row['startup_s']:6.2f}s  tools/list {row['list_bytes'] / 1e6:6.2f}MB"
            f" ({row['tools']} tools)  call {row['call_ms']:6.2f}ms (p50 {row['call_p50_ms']:.2f})"
            f"  {'ok' if row['ok'] else 'isError: ' + row['error']}"
        )
    peer = rows.get("FastMCP from_openapi (HTTP)")
    if peer:
        for label in ("toolbind package (HTTP)", "toolbind serve SPEC (no-op)"):
            row = rows.get(label)
            if not row:
                continue
            print(f"  {label} / FastMCP:")
            for key, name, target in (
                ("startup_s", "startup", 0.5),
                ("list_bytes", "tools/list bytes", 0.5),
                ("call_p50_ms", "per-call (p50)", 1.0),
                ("call_ms", "per-call (mean)", 1.0),
            ):
                ratio = row[key] / peer[key]
                verdict = "ok" if ratio <= target else f"MISS (target ≤ {target}×)"
                print(f"    {name:17} {ratio:6.3f}×  {verdict}")
    if args.json:
        args.json.write_text(json.dumps({"generate_s": generate_s, **rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
