"""Testing layer, public: contract tests of an OpenAPI spec against the live API it describes.
Imports this package's private modules (httpx, hypothesis, ``toolbind.runtime``; the compiler
only to compile a spec given as a path).

For every operation, hypothesis draws valid Calls, the generated HTTP Activity sends each to
``base_url``, and every answer is checked (Schemathesis' names): ``not_a_server_error``,
``status_code_conformance``, ``content_type_conformance``, ``response_schema_conformance``,
``response_headers_conformance``, ``positive_data_acceptance`` (a valid Call is not refused with
a 4xx other than 401/403/404/409/429) and, where the spec requires auth, ``ignored_auth`` (the
request sent without credentials must be refused with 401/403). Where POST and DELETE are sent,
create/read/delete sequences check ``ensure_resource_availability`` (created, then read back) and
``use_after_free`` (deleted, then gone); a method a path does not declare must get 405
(``unsupported_method``) with an ``Allow`` header naming the declared ones
(``allow_header_conformance``). Asked for, ``negative_data_rejection`` sends Calls the
spec forbids, bypassing the Call model, and expects a 4xx. A request that gets no answer
(unreachable, timed out, redirected elsewhere, not HTTP) fails the ``network`` check::

    from toolbind.testing.live import check_live, junit_xml

    report = check_live("specs/petstore.yaml", "http://127.0.0.1:8000", budget=50)
    print(report.render())          # per tool: check, Call, curl line, answer, spec pointer
    Path("live.xml").write_text(junit_xml(report))

Only GET/HEAD/OPTIONS are sent unless ``methods=`` names others; those reach a host other than
this machine only with ``allow_unsafe=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ._engine import SAFE_METHODS, packages_of, probe_package, settings_from
from ._report import Failure, LiveReport, ToolOutcome, exit_code, junit_xml, summary_table
from ._verdicts import CHECKS, DEFAULT_CHECKS, NETWORK

__all__ = [
    "CHECKS",
    "DEFAULT_CHECKS",
    "NETWORK",
    "SAFE_METHODS",
    "Failure",
    "LiveReport",
    "ToolOutcome",
    "check_live",
    "exit_code",
    "junit_xml",
    "run_live",
    "summary_table",
]

SpecOrPackage = ModuleType | str | Path | Sequence[str | Path]


def check_live(
    spec_or_package: SpecOrPackage,
    base_url: str,
    *,
    credentials: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    budget: int = 100,
    rate: float | None = None,
    methods: Collection[str] = SAFE_METHODS,
    allow_unsafe: bool = False,
    tools: Collection[str] | None = None,
    seed: int = 0,
    timeout: float = 10.0,
    max_response_bytes: int = 1 << 20,
    checks: Collection[str] = DEFAULT_CHECKS,
) -> LiveReport:
    """Send valid Calls of every operation to ``base_url`` and check every answer.

    Args:
        spec_or_package: an OpenAPI spec file or directory (or several), compiled for the run,
            or a generated package (one with ``API`` and ``HttpActivities``).
        base_url: the live server, used instead of the spec's servers.
        credentials: per security-scheme key, as ``HttpClient`` takes them.
        headers: extra headers on every request (treated as secrets in the report).
        budget: the most requests sent in all, shrinking included; shared among the tools.
        rate: the most requests a second (None: no limit).
        methods: the HTTP methods whose operations are called; the others are reported skipped.
        allow_unsafe: send methods other than GET/HEAD/OPTIONS to a non-loopback host.
        tools: the tools (operations) to check, by name; None: every one.
        seed: hypothesis' seed: the same seed draws the same Calls.
        timeout: seconds for connecting and each read; an answer takes twice that at most.
        max_response_bytes: the most of an answer's body read.
        checks: the checks made, by name (``CHECKS``); by default all but
            ``negative_data_rejection`` (``DEFAULT_CHECKS``).

    Returns:
        The report: ``ok``, ``render()``, per-tool ``failures``.

    Raises:
        UsageError: an argument is wrong (the message names it), or the spec has no operation.
        SpecError: the spec does not compile.
    """
    how = settings_from(
        base_url,
        credentials=credentials,
        headers=headers,
        budget=budget,
        rate=rate,
        methods=methods,
        allow_unsafe=allow_unsafe,
        tools=tools,
        seed=seed,
        timeout=timeout,
        max_response_bytes=max_response_bytes,
        checks=checks,
    )
    packages, release = packages_of(spec_or_package)
    report = LiveReport(base_url=how.base_url, checks=tuple(c for c in CHECKS if c in how.checks))
    try:
        for package in packages:
            probe_package(package, how, report)
    finally:
        release()
    return report


def run_live(
    inputs: Sequence[str | Path],
    base_url: str,
    *,
    junit: str | Path | None = None,
    echo: Callable[[str], None] = print,
    **options: Any,
) -> int:
    """What ``toolbind test --base-url URL`` runs: check, print the report, write JUnit XML.

    The command's flags map onto ``check_live``'s arguments: ``--base-url`` (``base_url``),
    ``--credential KEY=VALUE`` (``credentials``), ``--header 'Name: value'`` (``headers``),
    ``--budget N`` (100), ``--rate R`` (none), ``--method M`` repeated (GET, HEAD, OPTIONS),
    ``--allow-unsafe``, ``--tool NAME`` repeated (every tool), ``--seed N`` (0), ``--check NAME``
    and ``--skip-check NAME`` repeated (``checks``: ``DEFAULT_CHECKS`` with those added and
    removed), and ``--junit-xml PATH`` (``junit``) here.

    Returns:
        The exit code: 0 when every check held, 1 when any failed.

    Raises:
        UsageError: a wrong argument (the CLI prints it and exits 2).
    """
    report = check_live(list(inputs), base_url, **options)
    echo(report.render())
    if junit is not None:
        Path(junit).write_text(junit_xml(report), encoding="utf-8")
    return exit_code(report)
