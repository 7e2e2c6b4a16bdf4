"""Testing layer, live checks: the report a developer acts on. Imports the standard library and
``_verdicts``.

Per tool, each failing check once, with the Call that showed it (hypothesis-shrunk), the request
as a ``curl`` line (secrets as ``***``), the answer's status, content type and a short excerpt,
and the spec pointer; a summary table; JUnit XML for CI; an exit code.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from ._verdicts import CHECKS, NETWORK


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One check that failed for one tool, with what reproduces it.

    Attributes:
        check: the check's name (see ``toolbind.testing.live.CHECKS``; ``network`` when no answer
            came).
        message: what was found against what the spec says.
        pointer: the spec location (``file#/pointer``), or ''.
        call: the Call sent (JSON), the smallest hypothesis found for this check.
        curl: the request as sent, a ``curl`` line with secrets masked; '' when none was sent.
        status: the answer's status (0: no answer).
        content_type: the answer's ``Content-Type`` ('' when none).
        excerpt: the start of the answer's body.
    """

    check: str
    message: str
    pointer: str
    call: dict[str, Any]
    curl: str = ""
    status: int = 0
    content_type: str = ""
    excerpt: str = ""

    def render(self) -> str:
        """The failure as the lines of a report."""
        lines = [f"  [{self.check}] {self.message}"]
        if self.pointer:
            lines.append(f"    spec: {self.pointer}")
        lines.append(f"    call: {json.dumps(self.call, ensure_ascii=False, sort_keys=True)}")
        if self.curl:
            lines.append(f"    request: {self.curl}")
        if self.status:
            lines.append(f"    answer: {self.status} {self.content_type or '(no content type)'}")
            if self.excerpt:
                lines.append(f"    body: {self.excerpt!r}")
        return "\n".join(lines)


@dataclass(slots=True, kw_only=True)
class ToolOutcome:
    """What the live checks found for one tool (operation).

    Attributes:
        tool: the tool's name.
        method: the operation's HTTP method.
        path: the operation's path template.
        requests: how many requests were sent for it.
        failures: the failing checks, one per check name (first come first).
        skipped: why the tool was not checked ('' when it was).
    """

    tool: str
    method: str
    path: str
    requests: int = 0
    failures: list[Failure] = field(default_factory=list[Failure])
    skipped: str = ""

    @property
    def ok(self) -> bool:
        """No check failed."""
        return not self.failures

    def add(self, failure: Failure) -> None:
        """Keep ``failure``, replacing an earlier one of the same check (a shrunk one comes later)."""
        self.failures = [f for f in self.failures if f.check != failure.check] + [failure]


@dataclass(slots=True, kw_only=True)
class LiveReport:
    """The outcome of ``check_live``: one ``ToolOutcome`` per operation, in spec order."""

    base_url: str
    tools: list[ToolOutcome] = field(default_factory=list[ToolOutcome])
    checks: tuple[str, ...] = CHECKS

    @property
    def ok(self) -> bool:
        """No check failed for any tool."""
        return all(t.ok for t in self.tools)

    @property
    def requests(self) -> int:
        """Requests sent in all."""
        return sum(t.requests for t in self.tools)

    def failures(self, tool: str | None = None) -> list[Failure]:
        """Every failure, or ``tool``'s."""
        return [f for t in self.tools if tool in (None, t.tool) for f in t.failures]

    def render(self) -> str:
        """Each failing tool's failures, then the summary table."""
        blocks = [
            f"{t.method} {t.path} ({t.tool}):\n" + "\n".join(f.render() for f in t.failures)
            for t in self.tools
            if t.failures
        ]
        skipped = [
            f"skipped {t.method} {t.path} ({t.tool}): {t.skipped}" for t in self.tools if t.skipped
        ]
        if skipped:
            blocks.append("\n".join(skipped))
        return "\n\n".join([*blocks, summary_table(self)])


def summary_table(report: LiveReport) -> str:
    """One row per check: how many tools it passed and failed for."""
    names = [*report.checks, NETWORK]
    width = max(len(n) for n in names)
    rows = [f"{'check':<{width}}  passed  failed"]
    checked = [t for t in report.tools if not t.skipped]
    for name in names:
        failed = sum(1 for t in checked if any(f.check == name for f in t.failures))
        rows.append(f"{name:<{width}}  {len(checked) - failed:>6}  {failed:>6}")
    skipped = len(report.tools) - len(checked)
    rows.append(
        f"{len(checked)} tools checked, {skipped} skipped, {report.requests} requests to "
        f"{report.base_url}: {'passed' if report.ok else 'FAILED'}"
    )
    return "\n".join(rows)


def junit_xml(report: LiveReport) -> str:
    """The report as JUnit XML: a test case per tool, a ``<failure>`` per failing check."""
    failures = len(report.failures())
    suite = ET.Element(
        "testsuite",
        name="toolbind live contract",
        tests=str(len(report.tools)),
        failures=str(failures),
        skipped=str(sum(1 for t in report.tools if t.skipped)),
    )
    for outcome in report.tools:
        case = ET.SubElement(
            suite, "testcase", classname=f"{outcome.method} {outcome.path}", name=outcome.tool
        )
        if outcome.skipped:
            ET.SubElement(case, "skipped", message=outcome.skipped)
        for failure in outcome.failures:
            node = ET.SubElement(case, "failure", type=failure.check, message=failure.message)
            node.text = failure.render()
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def exit_code(report: LiveReport) -> int:
    """The process exit code for ``report``: 1 when any check failed, else 0."""
    return 0 if report.ok else 1
