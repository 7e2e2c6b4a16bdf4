"""``toolbind.testing.live.check_live`` against real servers on 127.0.0.1.

``_liars`` serves a spec it breaks on purpose, one way per operation: each defect must be found
as the right check on the right tool, with the shrunk Call, a masked ``curl`` line and the spec
pointer, and the honest operations must pass. Servers that misbehave below HTTP — nothing
listening, an answer that never comes, a redirect to another host, bytes that are not HTTP —
fail the ``network`` check of the tool, in bounded time. httpbin is the third-party server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests._servers import free_port, serve_asgi, serve_wsgi
from tests.conftest import unload
from tests.realworld._served import compile_served
from toolbind.runtime.errors import UsageError
from toolbind.testing.live import LiveReport, check_live, exit_code, junit_xml, run_live

from . import _liars

DEFECTS = {
    "crash": ["not_a_server_error"],
    # (a valid Call answered 418: refused for no reason the spec gives)
    "teapot": ["positive_data_acceptance", "status_code_conformance"],
    "text": ["content_type_conformance"],
    "mute": ["content_type_conformance"],
    "lost": ["content_type_conformance", "status_code_conformance"],
    "missing": ["response_schema_conformance"],
    "headless": ["response_headers_conformance"],
    "secret": ["ignored_auth"],
    "lenient": ["ignored_auth"],
    "honest": [],
    "guarded": [],
}


@pytest.fixture(scope="module")
def liars(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    with serve_asgi(_liars.app) as base:
        root = tmp_path_factory.mktemp("liars")
        package, _, _ = compile_served(f"{base}/openapi.json", root, "liars_api")
        yield package, base
        unload("liars_api")


def _checks(report: LiveReport) -> dict[str, list[str]]:
    return {t.tool: sorted(f.check for f in t.failures) for t in report.tools if not t.skipped}


def test_each_broken_promise_is_found_as_its_check_on_its_tool(
    liars: tuple[ModuleType, str],
) -> None:
    pkg, base = liars
    report = check_live(
        pkg,
        base,
        credentials={"bearer": _liars.THE_TOKEN},
        headers={"X-Api-Key": _liars.THE_TOKEN},
        tools=[*DEFECTS, "create"],
        budget=60,
        timeout=2.0,
    )
    assert _checks(report) == DEFECTS
    create = next(t for t in report.tools if t.tool == "create")
    assert create.skipped.startswith("POST is not in methods=") and create.requests == 0
    missing = report.failures("missing")[0]
    assert missing.message == "/name: Field required"
    assert missing.pointer.endswith(
        "liars_api.json#/paths/~1missing/get/responses/200/content/application~1json/schema"
    )
    assert (missing.status, missing.content_type, missing.excerpt) == (
        200,
        "application/json",
        '{"id":1}',
    )
    text = report.failures("text")[0]
    assert text.pointer.endswith("#/paths/~1text/get/responses/200/content")
    assert text.message == "text/plain for status 200; declared: application/json"
    lost = next(f for f in report.failures("lost") if f.check == "content_type_conformance")
    assert lost.message == (
        "text/html for status 404 (not declared); the operation answers only application/json"
    )
    assert lost.pointer.endswith("#/paths/~1lost/get/responses")
    mute = report.failures("mute")[0]
    assert mute.message == "no Content-Type, no body for status 200; declared: application/json"
    headless = report.failures("headless")[0]
    assert headless.pointer.endswith("#/paths/~1headless/get/responses/200/headers/x-request-id")
    # ignored_auth shows the request as sent without credentials
    secret = report.failures("secret")[0]
    assert secret.status == 200 and "authorization" not in secret.curl.lower()
    assert secret.pointer.endswith("#/paths/~1secret/get/security")
    assert secret.message == "sent without credentials, it was answered 200 (not 401/403)"
    # a token no server issued is taken as well as the right one
    lenient = report.failures("lenient")[0]
    assert lenient.message == "sent with wrong credentials, it was answered 200 (not 401/403)"
    assert "'authorization: ***'" in lenient.curl
    # the configured secret never shows; its header does, masked
    rendered = report.render()
    assert _liars.THE_TOKEN not in rendered and _liars.THE_TOKEN not in junit_xml(report)
    assert "'x-api-key: ***'" in report.failures("teapot")[0].curl
    assert report.requests <= 60 and exit_code(report) == 1
    assert "FAILED" in rendered.splitlines()[-1]
    assert "skipped POST /items (create): POST is not in methods=" in rendered


def test_the_failing_call_is_shrunk(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    report = check_live(pkg, base, tools=["crash"], budget=80, seed=3)
    (failure,) = report.failures("crash")
    assert failure.call == {"_tool": "crash", "n": 3}  # the server breaks from n=3 on
    assert failure.curl.endswith(f"{base}/crash?n=3'") or failure.curl.endswith(f"{base}/crash?n=3")
    assert failure.status == 500 and failure.excerpt == '{"boom":3}'


def test_honest_operations_pass_and_exit_zero(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    report = check_live(
        pkg, base, credentials={"bearer": _liars.THE_TOKEN}, tools=["honest", "guarded"], budget=10
    )
    assert report.ok and exit_code(report) == 0
    assert all(t.requests >= 1 for t in report.tools)


def test_a_tool_without_its_credentials_is_skipped_spending_nothing(
    liars: tuple[ModuleType, str],
) -> None:
    pkg, base = liars
    report = check_live(pkg, base, tools=["locked", "honest"], budget=6)
    locked, honest = report.tools
    assert locked.skipped == (
        "not configured: tool 'locked' needs credentials for [bearer] (give credentials=)"
    )
    assert locked.requests == 0 and not honest.skipped and honest.requests >= 3


def test_an_undeclared_method_must_be_refused_saying_what_is_allowed(
    liars: tuple[ModuleType, str],
) -> None:
    pkg, base = liars
    report = check_live(
        pkg, base, tools=["open", "blunt", "honest"], methods=("GET", "PUT"), budget=30
    )
    assert _checks(report) == {
        "open": ["unsupported_method"],
        "blunt": ["allow_header_conformance"],
        "honest": [],
    }
    (taken,) = report.failures("open")
    assert taken.message == "PUT, which the path does not declare (GET), was answered 200, not 405"
    assert taken.curl.startswith("curl -X PUT") and taken.pointer.endswith("#/paths/~1open")
    (blunt,) = report.failures("blunt")
    assert blunt.message == "the 405 to PUT says Allow: (none); the path declares GET"


def test_rate_spaces_the_requests(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    started = time.monotonic()
    report = check_live(pkg, base, tools=["honest", "teapot"], budget=6, rate=10)
    assert report.requests >= 3
    assert time.monotonic() - started >= (report.requests - 1) / 10 - 0.01


def test_unsafe_methods_go_to_this_machine_when_named(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    before = len(_liars.CREATED)
    report = check_live(pkg, base, methods=("GET", "POST"), tools=["create"], budget=4)
    assert report.ok and len(_liars.CREATED) > before


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"base_url": "http://api.example.com", "methods": ("GET", "POST")}, "allow_unsafe"),
        ({"base_url": "ftp://127.0.0.1/"}, "base_url"),
        ({"budget": 0}, "budget"),
        ({"rate": 0}, "rate"),
        ({"timeout": -1}, "timeout"),
    ],
)
def test_a_callers_mistake_is_a_usage_error_naming_the_argument(
    liars: tuple[ModuleType, str], arguments: dict[str, object], named: str
) -> None:
    pkg, base = liars
    given = {"base_url": base} | arguments
    with pytest.raises(UsageError, match=rf"^{named}: "):
        check_live(pkg, **given)  # type: ignore[arg-type]


def test_unsafe_methods_reach_another_host_only_when_allowed(
    liars: tuple[ModuleType, str],
) -> None:
    pkg, _ = liars
    # allowed: sent (nothing answers at .invalid, a bounded network failure)
    report = check_live(
        pkg,
        "http://api.example.invalid",
        methods=("POST",),
        allow_unsafe=True,
        tools=["create"],
        budget=2,
        timeout=1.0,
    )
    assert _checks(report) == {"create": ["network"]}


def _network(report: LiveReport, tool: str) -> str:
    (failure,) = report.failures(tool)
    assert failure.check == "network"
    return failure.message


def test_nothing_listening_is_a_bounded_network_failure(liars: tuple[ModuleType, str]) -> None:
    pkg, _ = liars
    started = time.monotonic()
    report = check_live(pkg, f"http://127.0.0.1:{free_port()}", tools=["honest"], budget=2)
    assert _network(report, "honest").startswith("connection: honest: cannot connect to")
    assert time.monotonic() - started < 10 and exit_code(report) == 1


def test_an_answer_that_never_comes_times_out(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    started = time.monotonic()
    report = check_live(pkg, base, tools=["slow"], budget=2, timeout=0.5)
    assert _network(report, "slow").startswith("timeout: slow: GET ")
    assert time.monotonic() - started < 5


def test_a_tool_that_timed_out_is_not_called_again(liars: tuple[ModuleType, str]) -> None:
    # each further Call would wait out the timeout again: shrinking one (hypothesis replays
    # a failure to shrink it) or drawing more spent the budget on waiting
    pkg, base = liars
    report = check_live(pkg, base, tools=["slow"], budget=20, timeout=0.3)
    assert _network(report, "slow").startswith("timeout: slow: GET ")
    assert report.requests == 1


def test_a_redirect_to_another_host_is_refused(liars: tuple[ModuleType, str]) -> None:
    pkg, base = liars
    report = check_live(pkg, base, tools=["away"], budget=2)
    message = _network(report, "away")
    assert message.startswith("redirect_refused: away: redirect (302) to http://elsewhere.invalid")
    assert report.failures("away")[0].curl.endswith(f"{base}/away")


_CRUMB_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "crumb", "version": "1"},
    "paths": {
        "/crumb": {
            "get": {
                "operationId": "crumb",
                "responses": {"200": {"description": "ok", "content": {"application/json": {}}}},
            }
        }
    },
}


def _crumb_app() -> Starlette:
    """Redirects to /landing setting a cookie whose value is not ASCII (httpbin's
    ``/cookies/set?k=été`` does)."""

    async def crumb(request: Request) -> Response:
        answer = Response(status_code=302, headers={"location": "/landing"})
        answer.raw_headers.append((b"set-cookie", "k=\u00e9t\u00e9; Path=/".encode()))
        return answer

    async def landing(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/crumb", crumb), Route("/landing", landing)])


def test_an_answer_the_client_cannot_follow_is_a_network_failure(tmp_path: Path) -> None:
    spec = tmp_path / "crumb.json"
    spec.write_text(json.dumps(_CRUMB_SPEC), encoding="utf-8")
    with serve_asgi(_crumb_app()) as base:
        report = check_live([spec], base, budget=3)
    message = _network(report, "crumb")
    assert message.startswith("client_error: crumb: UnicodeEncodeError: ")
    assert report.failures("crumb")[0].status == 302


@pytest.fixture
def garbage() -> Iterator[str]:
    """A TCP server that answers every connection with bytes that are not HTTP."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"\x00\xff\xfe garbage, not HTTP \r\n\r\n\x07")

    thread = threading.Thread(target=serve, name="garbage", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_garbage_bytes_are_a_bounded_network_failure(
    liars: tuple[ModuleType, str], garbage: str
) -> None:
    pkg, _ = liars
    started = time.monotonic()
    report = check_live(pkg, garbage, tools=["honest"], budget=2, timeout=1.0)
    assert _network(report, "honest").startswith("connection: honest: ")
    assert time.monotonic() - started < 10


def test_junit_xml_has_a_case_per_tool_and_a_failure_per_check(
    liars: tuple[ModuleType, str],
) -> None:
    pkg, base = liars
    report = check_live(pkg, base, tools=["teapot", "honest", "create"], budget=6)
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert suite is not None
    # teapot's 418: an undeclared status, and a valid Call refused
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failures = cases["teapot"].findall("failure")
    assert [f.get("type") for f in failures] == [
        "status_code_conformance",
        "positive_data_acceptance",
    ]
    failure = failures[0]
    assert "curl -X GET" in (failure.text or "")
    assert not list(cases["honest"]) and cases["create"].find("skipped") is not None


def test_httpbin_answers_as_its_spec_says_but_for_its_redirect_counts(tmp_path: Path) -> None:
    httpbin = pytest.importorskip("httpbin", reason="httpbin is in the test extra (make install)")
    with serve_wsgi(httpbin.app, name="httpbin") as base:
        pkg, _, _ = compile_served(f"{base}/spec.json", tmp_path, "httpbin_live")
        try:
            report = check_live(
                pkg,
                base,
                tools=["get_redirect_by_n", "get_uuid", "get_json", "get_headers", "get_ip"],
                budget=40,
                timeout=3.0,
            )
        finally:
            unload("httpbin_live")
    found = _checks(report)
    # httpbin's /redirect/0 is an internal error (a redirect count it does not check)
    assert "not_a_server_error" in found.pop("get_redirect_by_n")
    crash = next(f for f in report.failures("get_redirect_by_n") if f.check == "not_a_server_error")
    assert crash.call == {"_tool": "get_redirect_by_n", "n": 0} and crash.status == 500
    assert found == {"get_uuid": [], "get_json": [], "get_headers": [], "get_ip": []}


def test_run_live_prints_the_report_writes_junit_and_returns_the_exit_code(
    liars: tuple[ModuleType, str], tmp_path: Path
) -> None:
    _, base = liars
    spec = tmp_path / "liars.json"
    spec.write_text(json.dumps(_liars.SPEC), encoding="utf-8")
    printed: list[str] = []
    code = run_live(
        [spec], base, junit=tmp_path / "live.xml", echo=printed.append, tools=["text"], budget=4
    )
    assert code == 1 and "[content_type_conformance]" in printed[0]
    assert ET.parse(tmp_path / "live.xml").getroot().tag == "testsuites"
    assert run_live([spec], base, echo=printed.append, tools=["honest"], budget=4) == 0


def test_toolbind_test_base_url_from_the_command_line(
    liars: tuple[ModuleType, str], tmp_path: Path
) -> None:
    import subprocess
    import sys

    _, base = liars
    spec = tmp_path / "liars.json"
    spec.write_text(json.dumps(_liars.SPEC), encoding="utf-8")
    toolbind = [sys.executable, "-m", "toolbind.cli", "test", str(spec), "--base-url", base]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*toolbind, *extra], capture_output=True, text=True, timeout=300, check=False
        )

    broken = run("--tool", "text", "--budget", "4", "--junit-xml", str(tmp_path / "ci.xml"))
    assert broken.returncode == 1, broken.stderr
    assert "[content_type_conformance]" in broken.stdout
    assert ET.parse(tmp_path / "ci.xml").getroot().tag == "testsuites"
    honest = run("--tool", "honest", "--budget", "4", "--header", "X-Trace: t1")
    assert honest.returncode == 0, honest.stdout + honest.stderr
    bad = run("--header", "no colon here")
    assert bad.returncode == 2 and "--header (the 1. one): expected 'NAME: VALUE'" in bad.stderr
    assert "Traceback" not in bad.stderr
    refused = run("--budget", "0")
    assert refused.returncode == 2 and "--budget" in refused.stderr
