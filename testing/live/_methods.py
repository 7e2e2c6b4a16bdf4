"""Testing layer, live checks: a method a path does not declare is refused with 405
(``unsupported_method``), and the 405 says the allowed ones (``allow_header_conformance``).
Imports httpx and this package's private modules.

For each path, one method it does not declare — among those the run may send (``methods=``),
PUT, POST, DELETE, PATCH, then GET — goes to the URL of a request already sent to that path
(its parameters filled in), without a body. An agent that calls a method the spec does not
offer must be told no: a 2xx means the server does what its spec does not say.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence

import httpx

from toolbind.runtime import ToolBinding

from ._probe import Target, failure
from ._report import LiveReport
from ._verdicts import ALLOW_HEADER_CONFORMANCE, UNSUPPORTED_METHOD, Finding
from ._wire import Exchange, Recorder

_TRIED = ("PUT", "POST", "DELETE", "PATCH", "GET")
# the original request's headers that describe its body or connection (none is sent again)
_BODY_HEADERS = frozenset({"content-type", "content-length", "host", "transfer-encoding"})


def _send(
    target: Target, method: str, url: str, headers: Sequence[tuple[str, str]]
) -> Exchange | None:
    how = target.how
    how.throttle()
    recorder = Recorder(how.transport(), deadline=2 * how.timeout, max_bytes=how.max_response_bytes)
    with (
        httpx.Client(transport=recorder, timeout=how.timeout) as client,
        contextlib.suppress(httpx.HTTPError),  # (no answer: the network check's business)
    ):
        client.request(
            method, url, headers=[h for h in headers if h[0].lower() not in _BODY_HEADERS]
        )
    return recorder.exchanges[-1] if recorder.exchanges else None


def undeclared_method(declared: Collection[str], methods: Collection[str]) -> str | None:
    """The method sent to a path that declares ``declared``: one it does not declare that the
    run may send (``methods``), or None."""
    return next((m for m in _TRIED if m not in declared and m in methods), None)


def probe_methods(target: Target, tools: Sequence[ToolBinding], report: LiveReport) -> None:
    """Send each path one method it does not declare; record what the answer breaks."""
    outcomes = {t.tool: t for t in report.tools if not t.skipped}
    paths: dict[str, list[ToolBinding]] = {}
    for tool in tools:
        if tool.name in outcomes and tool.name in target.sent_to:
            paths.setdefault(target.api.operations[tool.name].path, []).append(tool)
    for path_tools in paths.values():
        declared = {target.api.operations[t.name].method.upper() for t in path_tools}
        method = undeclared_method(declared, target.how.methods)
        if method is None or target.how.spent:
            continue
        tool = path_tools[0]
        sent = target.sent_to[tool.name]
        answer = _send(target, method, sent.url, sent.request_headers)
        outcome = outcomes[tool.name]
        outcome.requests += 1
        if answer is None:
            continue
        allowed = ", ".join(sorted(declared))
        findings: list[Finding] = []
        if answer.status != 405:
            findings.append(
                Finding(
                    check=UNSUPPORTED_METHOD,
                    message=f"{method}, which the path does not declare ({allowed}), was answered {answer.status}, not 405",
                    pointer=tool.source.rpartition("/")[0] if tool.source else "",
                )
            )
        else:
            got = {
                m.strip().upper() for m in answer.headers.get("allow", "").split(",") if m.strip()
            }
            if not got or not declared <= got:
                findings.append(
                    Finding(
                        check=ALLOW_HEADER_CONFORMANCE,
                        message=f"the 405 to {method} says Allow: {answer.headers.get('allow', '(none)')}; the path declares {allowed}",
                        pointer=tool.source.rpartition("/")[0] if tool.source else "",
                    )
                )
        for finding in findings:
            if finding.check in target.how.checks:
                outcome.add(failure(target, tool, finding, {"_tool": tool.name}, [answer]))
