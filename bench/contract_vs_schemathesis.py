"""``toolbind test --base-url`` beside Schemathesis on real servers installed from the registries:
the same spec (as the server serves it), the same server (started fresh for each tool), the
same request budget — distinct defects found by each, those only one found, requests sent,
wall time.

```sh
python3 -m venv /tmp/st && /tmp/st/bin/pip install schemathesis==4.32.5
nice -n 10 .venv/bin/python bench/contract_vs_schemathesis.py [--server NAME]... \\
    [--examples N] [--markdown FILE]
```

Servers: httpbin and Kinto (from ``.venv``), Jupyter Server (``.venv-jupyter``), LNbits
(``.venv-lnbits``) — ``make install`` puts them there. Each runs as a subprocess on 127.0.0.1.

Schemathesis runs first: ``st run SPEC --url BASE --checks all --max-examples N --seed 0
--workers 1`` (every phase: examples, coverage, fuzzing, stateful), its requests counted in its
HAR report and its failures read from its JUnit report. toolbind then gets the same number of
requests as its budget: ``toolbind test SPEC --base-url BASE --budget <that> --check
negative_data_rejection`` with every method (the server is this machine), its failures read from
its JUnit XML. A defect is an (operation, check) pair; ``network`` is left out (no check of
Schemathesis'). The credentials each server takes are given to both.

Time, the same way for both: each tool is one child process, timed from its start to its exit —
wall seconds (``time.monotonic``) and its own CPU seconds, user and system (``os.wait4``'s
resource usage; the server's are not counted). Both include starting Python and reading the
spec; toolbind's also compiling the spec into its package, Schemathesis' its own schema loading.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the tests' LNbits settings
from tests.realworld._served import LNBITS_OFFLINE  # noqa: E402

BIN = Path(sys.executable).parent
ST = Path(os.environ.get("SCHEMATHESIS", "/tmp/st/bin/st"))
METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")

_HTTPBIN = """
import sys, httpbin
from werkzeug.serving import run_simple
run_simple("127.0.0.1", int(sys.argv[1]), httpbin.app, threaded=True)
"""
_KINTO = """
import sys, logging, warnings, kinto
from werkzeug.serving import run_simple
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
app = kinto.main({}, **{
    "includes": "kinto.plugins.history kinto.plugins.flush",
    "multiauth.policies": "basicauth",
    "userid_hmac_secret": "kinto-bench-hmac-secret-0123456789",
    "bucket_create_principals": "system.Authenticated",
    "experimental_permissions_endpoint": "true",
    "flush_endpoint_enabled": "true",
})
run_simple("127.0.0.1", int(sys.argv[1]), app, threaded=True)
"""
JUPYTER_TOKEN = "jupyter-bench-token-5b0c"


@dataclass
class Server:
    """How to run one server and what both tools are given."""

    name: str
    version: str
    spec_path: str  # where it serves its spec
    health: str
    suffix: str = ".json"
    headers: dict[str, str] = field(default_factory=dict[str, str])
    basic: tuple[str, str] | None = None
    basic_scheme: str = ""


SERVERS = {
    "httpbin": Server(
        name="httpbin", version="httpbin 0.10.4", spec_path="/spec.json", health="/get"
    ),
    "kinto": Server(
        name="kinto",
        version="Kinto 26.5.0",
        spec_path="/v1/__api__",
        health="/v1/",
        basic=("alice", "alice-password"),
        basic_scheme="basicauth",
    ),
    "jupyter": Server(
        name="jupyter",
        version="Jupyter Server 2.21.1",
        spec_path="/api/spec.yaml",
        health="/api",
        suffix=".yaml",
        headers={"Authorization": f"token {JUPYTER_TOKEN}"},
    ),
    "lnbits": Server(
        name="lnbits", version="LNbits 1.6.2", spec_path="/openapi.json", health="/api/v1/health"
    ),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command(server: Server, port: int, tmp: Path) -> tuple[list[str], dict[str, str], Path | None]:
    if server.name == "httpbin":
        return [sys.executable, "-c", _HTTPBIN, str(port)], {}, None
    if server.name == "kinto":
        return [sys.executable, "-c", _KINTO, str(port)], {}, None
    if server.name == "jupyter":
        root = tmp / "root"
        root.mkdir(exist_ok=True)
        env = {f"JUPYTER_{d}_DIR": str(tmp / d.lower()) for d in ("CONFIG", "DATA", "RUNTIME")}
        return (
            [
                str(REPO / ".venv-jupyter" / "bin" / "jupyter-server"),
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={JUPYTER_TOKEN}",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.open_browser=False",
                "--allow-root",
            ],
            env,
            None,
        )
    venv = REPO / ".venv-lnbits"
    site = next(venv.glob("lib/python3*/site-packages/lnbits")).parent
    env = LNBITS_OFFLINE | {
        "LNBITS_DATA_FOLDER": str(tmp / "data"),
        "LNBITS_EXTENSIONS_PATH": str(tmp / "extensions"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    command = [str(venv / "bin" / "python"), "-m", "uvicorn", "lnbits.__main__:app"]
    return (
        [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "critical"],
        env,
        site,
    )


@contextlib.contextmanager
def running(server: Server) -> Generator[str]:
    """The server started fresh (its data in a temporary directory); its base URL."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{server.name}-") as tmp:
        port = _free_port()
        command, env, cwd = _command(server, port, Path(tmp))
        clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        log = (Path(tmp) / "server.log").open("wb")
        process = subprocess.Popen(
            command, env=clean | env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"{server.name} exited: {(Path(tmp) / 'server.log').read_text()[-2000:]}"
                    )
                with contextlib.suppress(httpx.TransportError):
                    if (
                        httpx.get(
                            base + server.health, timeout=5, headers=server.headers
                        ).status_code
                        < 500
                    ):
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{server.name} did not start in 180 s")
                time.sleep(0.3)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


def _spec(server: Server, base: str, into: Path) -> tuple[Path, str]:
    """The spec as served, written to a file; the base URL its operations are under."""
    raw = httpx.get(base + server.spec_path, timeout=60, headers=server.headers)
    path = into / f"{server.name}{server.suffix}"
    path.write_bytes(raw.raise_for_status().content)
    import yaml

    doc: Any = yaml.safe_load(raw.text)
    base_path = str(doc.get("basePath", "")).rstrip("/") if "swagger" in doc else ""
    return path, base + base_path


@dataclass
class Outcome:
    tool: str
    defects: set[tuple[str, str]]  # (operation, check)
    requests: int
    seconds: float
    cpu: float  # the tool's own CPU seconds (the server's not counted)
    note: str = ""


def _run(args: list[str], cwd: Path) -> tuple[str, float, float]:
    """Run ``args``: its output, wall seconds and CPU seconds (``os.wait4``: on a shared
    machine the CPU time says what the run cost, the wall time also what others took)."""
    started = time.monotonic()
    with (cwd / "output.txt").open("w+", encoding="utf-8") as out:
        child = subprocess.Popen(args, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)  # (reaped here, not by Popen)
        out.seek(0)
        text = out.read()
    return text, time.monotonic() - started, usage.ru_utime + usage.ru_stime


def _operation(text: str) -> str:
    """``GET /a/{b}`` from either tool's label of an operation."""
    found = re.search(r"\b(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE|TRACE) (/\S*)", text)
    return f"{found.group(1)} {found.group(2)}" if found else text


def schemathesis(server: Server, spec: Path, base: str, examples: int, out: Path) -> Outcome:
    """Schemathesis' run: its failures (JUnit) and requests (HAR)."""
    args = [str(ST), "run", str(spec), "--url", base, "--checks", "all", "--seed", "0"]
    args += ["--max-examples", str(examples), "--workers", "1", "--report", "junit,har"]
    args += ["--report-dir", str(out), "--request-timeout", "10", "--suppress-health-check", "all"]
    args += ["--max-failures", "10000", "--warnings", "off"]
    for name, value in server.headers.items():
        args += ["-H", f"{name}: {value}"]
    if server.basic:
        args += ["-a", ":".join(server.basic)]
    text, seconds, cpu = _run(args, out)  # (in ``out``: its cache goes there)
    har = next(out.glob("har-*"), None)
    requests = len(json.loads(har.read_text())["log"]["entries"]) if har else 0
    defects: set[tuple[str, str]] = set()
    junit = next(out.glob("junit-*"), None)
    if junit is not None:
        for case in ET.parse(junit).getroot().iter("testcase"):
            # (an <error> is Schemathesis' own trouble with the spec or the run: no defect)
            for failure in case.iter("failure"):
                for check in _st_checks(failure.get("message") or ""):
                    defects.add((_operation(case.get("name") or ""), check))
    return Outcome("Schemathesis", defects, requests, seconds, cpu, "" if junit else text[-300:])


# Schemathesis' failure codes (``st explain CODE``) and the check each belongs to
_ST_CODES = {
    "ST101": "not_a_server_error",
    "ST102": "not_a_server_error",
    "ST103": "status_code_conformance",
    "ST104": "content_type_conformance",
    "ST105": "content_type_conformance",
    "ST106": "content_type_conformance",
    "ST107": "response_headers_conformance",
    "ST108": "response_schema_conformance",
    "ST109": "response_schema_conformance",
    "ST110": "response_schema_conformance",
    "ST111": "response_schema_conformance",
    "ST201": "negative_data_rejection",
    "ST202": "positive_data_acceptance",
    "ST203": "missing_required_header",
    "ST204": "unsupported_method",
    "ST205": "allow_header_conformance",
    "ST301": "use_after_free",
    "ST302": "ensure_resource_availability",
    "ST401": "ignored_auth",
    "ST402": "object_level_authorization",
}


def _st_checks(codes: str) -> set[str]:
    """The checks a JUnit ``<failure message="ST101, ST103">`` names."""
    return {_ST_CODES.get(c.strip(), c.strip()) for c in codes.split(",") if c.strip()}


def toolbind(server: Server, spec: Path, base: str, budget: int, out: Path) -> Outcome:
    """toolbind's run with ``budget`` requests: its failures (JUnit XML) and requests."""
    junit = out / "toolbind.xml"
    args = [str(BIN / "toolbind"), "test", str(spec), "--base-url", base, "--budget", str(budget)]
    args += ["--check", "negative_data_rejection", "--junit-xml", str(junit), "--seed", "0"]
    for method in METHODS:
        args += ["--method", method]
    for name, value in server.headers.items():
        args += ["--header", f"{name}: {value}"]
    if server.basic:
        creds = out / "credentials.json"
        creds.write_text(json.dumps({server.basic_scheme: list(server.basic)}), encoding="utf-8")
        args += ["--credentials", str(creds)]
    text, seconds, cpu = _run(args, out)
    found = re.search(r"(\d+) requests to ", text)
    defects: set[tuple[str, str]] = set()
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            for failure in case.iter("failure"):
                check = failure.get("type") or ""
                if check != "network":
                    defects.add((_operation(case.get("classname") or ""), check))
    note = "" if junit.exists() else text.strip()[-300:]
    return Outcome("toolbind", defects, int(found.group(1)) if found else 0, seconds, cpu, note)


def compare(server: Server, examples: int, work: Path) -> tuple[Outcome, Outcome]:
    """Both runs on ``server``, each on a fresh start of it."""
    (work / "st").mkdir(parents=True, exist_ok=True)
    (work / "tb").mkdir(parents=True, exist_ok=True)
    with running(server) as base:
        spec, api_base = _spec(server, base, work)
        ours_st = schemathesis(server, spec, api_base, examples, work / "st")
    with running(server) as base:
        spec, api_base = _spec(server, base, work)
        ours_tb = toolbind(server, spec, api_base, max(1, ours_st.requests), work / "tb")
    return ours_st, ours_tb


def _classes(outcome: Outcome) -> set[str]:
    return {check for _, check in outcome.defects}


def table(rows: list[tuple[Server, Outcome, Outcome]]) -> str:
    """The comparison as a markdown table, then what only one tool found."""
    lines = [
        "| server | tool | requests | wall s | CPU s | defects (operation × check) | checks that failed |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for server, st, tb in rows:
        for o in (st, tb):
            classes = ", ".join(sorted(_classes(o))) or "—"
            lines.append(
                f"| {server.version} | {o.tool} | {o.requests} | {o.seconds:.0f} | {o.cpu:.0f} | "
                f"{len(o.defects)} | {classes} |"
            )
    lines.append("")
    for server, st, tb in rows:
        only_st = sorted(_classes(st) - _classes(tb))
        only_tb = sorted(_classes(tb) - _classes(st))
        lines.append(
            f"- **{server.version}**: checks only Schemathesis failed: {', '.join(only_st) or 'none'}; "
            f"only toolbind: {', '.join(only_tb) or 'none'}; operations×checks only Schemathesis: "
            f"{len(st.defects - tb.defects)}, only toolbind: {len(tb.defects - st.defects)}, both: "
            f"{len(st.defects & tb.defects)}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", action="append", choices=sorted(SERVERS))
    parser.add_argument("--examples", type=int, default=5, help="Schemathesis' --max-examples")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--work", type=Path, help="keep the reports here (default: a temp dir)")
    args = parser.parse_args()
    if not ST.exists():
        sys.exit(f"{ST}: install Schemathesis there (see the docstring) or set SCHEMATHESIS")
    rows: list[tuple[Server, Outcome, Outcome]] = []
    with tempfile.TemporaryDirectory(prefix="bench-vs-st-") as tmp:
        work = args.work or Path(tmp)
        for name in args.server or list(SERVERS):
            server = SERVERS[name]
            st, tb = compare(server, args.examples, work / name)
            rows.append((server, st, tb))
            for o in (st, tb):
                print(
                    f"{server.name}: {o.tool} {o.requests} requests, {o.seconds:.0f} s, "
                    f"{len(o.defects)} defects {sorted(_classes(o))} {o.note}",
                    flush=True,
                )
    text = table(rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
