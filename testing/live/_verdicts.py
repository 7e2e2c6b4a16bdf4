"""Testing layer, live checks: what is wrong with one answer. Imports pydantic, ``toolbind.runtime``,
``_declared`` and ``_wire``.

Each check is named as Schemathesis names it, so a report reads the same to someone who knows
that tool. A check returns the findings for one answer (none when it holds or does not apply);
each finding holds the spec's JSON pointer that the answer broke.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from toolbind.runtime import ToolBinding
from toolbind.runtime.contract import HttpOperation, HttpResponse

from ._declared import declared_types
from ._wire import Exchange

NOT_A_SERVER_ERROR = "not_a_server_error"
STATUS_CODE_CONFORMANCE = "status_code_conformance"
CONTENT_TYPE_CONFORMANCE = "content_type_conformance"
RESPONSE_SCHEMA_CONFORMANCE = "response_schema_conformance"
RESPONSE_HEADERS_CONFORMANCE = "response_headers_conformance"
IGNORED_AUTH = "ignored_auth"
POSITIVE_DATA_ACCEPTANCE = "positive_data_acceptance"
NEGATIVE_DATA_REJECTION = "negative_data_rejection"
USE_AFTER_FREE = "use_after_free"
ENSURE_RESOURCE_AVAILABILITY = "ensure_resource_availability"
UNSUPPORTED_METHOD = "unsupported_method"
ALLOW_HEADER_CONFORMANCE = "allow_header_conformance"
# Not a check on an answer: the request got none (unreachable, timed out, refused redirect,
# not HTTP).
NETWORK = "network"

CHECKS = (
    NOT_A_SERVER_ERROR,
    STATUS_CODE_CONFORMANCE,
    CONTENT_TYPE_CONFORMANCE,
    RESPONSE_SCHEMA_CONFORMANCE,
    RESPONSE_HEADERS_CONFORMANCE,
    IGNORED_AUTH,
    POSITIVE_DATA_ACCEPTANCE,
    NEGATIVE_DATA_REJECTION,
    USE_AFTER_FREE,
    ENSURE_RESOURCE_AVAILABILITY,
    UNSUPPORTED_METHOD,
    ALLOW_HEADER_CONFORMANCE,
)
# Sending invalid Calls is asked for (it spends the budget on what no agent sends).
DEFAULT_CHECKS = tuple(c for c in CHECKS if c != NEGATIVE_DATA_REJECTION)
# Answers to a valid Call that say nothing against the data: who is asking, what does not exist
# (yet), a conflict with the server's state, too many requests.
_ACCEPTABLE_REFUSALS = frozenset({401, 403, 404, 409, 429})


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One check that failed on one answer.

    Attributes:
        check: the check's name (``not_a_server_error``, …, ``network``).
        message: what was found and what the spec says.
        pointer: the spec location broken (``file#/json/pointer``), or '' when unknown.
    """

    check: str
    message: str
    pointer: str = ""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def responses_pointer(tool: ToolBinding, *parts: str) -> str:
    """The pointer of the operation's ``responses`` member ``parts`` (tokens escaped)."""
    tail = "".join("/" + _escape(p) for p in parts)
    return f"{tool.source}/responses{tail}" if tool.source else ""


def matching(op: HttpOperation, status: int) -> list[HttpResponse]:
    """The declared responses for ``status``: exact ones, else its ``NXX`` range, else default."""
    text = str(status)
    for wanted in (text, f"{text[0]}XX"):
        found = [r for r in op.responses if r.status.upper() == wanted]
        if found:
            return found
    return [r for r in op.responses if r.status == "default"]


def not_a_server_error(tool: ToolBinding, op: HttpOperation, ex: Exchange) -> list[Finding]:
    """A 5xx answer is the server's failure, whatever the spec says."""
    if ex.status < 500:
        return []
    return [Finding(check=NOT_A_SERVER_ERROR, message=f"the server answered {ex.status}")]


def status_code_conformance(tool: ToolBinding, op: HttpOperation, ex: Exchange) -> list[Finding]:
    """The status is one the operation declares (exactly, by range or by ``default``)."""
    if not op.responses or matching(op, ex.status):
        return []
    declared = ", ".join(sorted({r.status for r in op.responses}))
    return [
        Finding(
            check=STATUS_CODE_CONFORMANCE,
            message=f"status {ex.status} is not declared (declared: {declared})",
            pointer=responses_pointer(tool),
        )
    ]


def _media_matches(declared: str, actual: str) -> bool:
    kind, _, sub = declared.split(";")[0].strip().lower().partition("/")
    got_kind, _, got_sub = actual.partition("/")
    return kind in ("*", got_kind) and sub in ("*", got_sub)


def _declared(tool: ToolBinding, response: HttpResponse) -> tuple[tuple[str, ...], str]:
    """Every media type ``response`` declares (the spec read again: all of its content's,
    Swagger's ``produces``), and where; the contract's one type when the spec is not there."""
    found = declared_types(tool, response.status)
    if found is not None:
        return found.types, found.pointer
    types = (response.media_type,) if response.media_type else ()
    return types, responses_pointer(tool, response.status, "content")


def content_type_conformance(tool: ToolBinding, op: HttpOperation, ex: Exchange) -> list[Finding]:
    """An answer says a content type its status declares — with a body or without one (an
    empty 401 where JSON is promised, with no ``Content-Type`` or ``text/html``) — except where
    HTTP allows no body (HEAD, 204, 304); an answer of a status not declared, a type the
    operation declares for some status."""
    responses = matching(op, ex.status)
    if not responses and ex.body and ex.media_type:
        # a status not declared (status_code_conformance's finding) still answers in a type the
        # operation speaks: an HTML error page where only JSON is declared is read by no tool
        spoken = sorted({t for r in op.responses for t in _declared(tool, r)[0]})
        if not spoken or any(_media_matches(d, ex.media_type) for d in spoken):
            return []
        message = f"{ex.media_type} for status {ex.status} (not declared); the operation "
        return [
            Finding(
                check=CONTENT_TYPE_CONFORMANCE,
                message=message + f"answers only {', '.join(spoken)}",
                pointer=responses_pointer(tool),
            )
        ]
    if not responses:
        return []
    declared, pointer = _declared(tool, responses[0])
    if not declared or (not ex.body and _bodiless(ex)):
        return []
    if ex.media_type and any(_media_matches(d, ex.media_type) for d in declared):
        return []
    # (an empty body still says its type: a client that reads by Content-Type is misled)
    found = ex.media_type or "no Content-Type"
    found += "" if ex.body else (" (no body)" if ex.media_type else ", no body")
    return [
        Finding(
            check=CONTENT_TYPE_CONFORMANCE,
            message=f"{found} for status {ex.status}; declared: {', '.join(sorted(declared))}",
            pointer=pointer,
        )
    ]


def _bodiless(ex: Exchange) -> bool:
    """An answer HTTP lets go without content whatever the spec says."""
    return ex.method.upper() == "HEAD" or ex.status in (204, 304)


def _location(loc: tuple[int | str, ...]) -> str:
    return "/" + "/".join(_escape(str(p)) for p in loc) if loc else "the body"


def response_schema_conformance(
    tool: ToolBinding, op: HttpOperation, ex: Exchange
) -> list[Finding]:
    """A JSON answer of the Output's status validates against the Output model."""
    output = next((r for r in matching(op, ex.status) if r.is_output), None)
    if output is None or output.binary or tool.output_schema is None or not ex.body:
        return []
    media = output.media_type or ""
    if "json" not in ex.media_type or "json" not in media:
        return []  # (a wrong content type is content_type_conformance's finding)
    pointer = responses_pointer(tool, output.status, "content", media, "schema")
    try:
        value: Any = json.loads(ex.body)
    except ValueError as exc:
        message = f"the body is not JSON ({exc})"
        return [Finding(check=RESPONSE_SCHEMA_CONFORMANCE, message=message, pointer=pointer)]
    try:
        tool.output_model.model_validate(value)
    except ValidationError as exc:
        return [
            Finding(
                check=RESPONSE_SCHEMA_CONFORMANCE,
                message=f"{_location(error['loc'])}: {error['msg']}",
                pointer=pointer,
            )
            for error in exc.errors()[:5]
        ]
    return []


def response_headers_conformance(
    tool: ToolBinding, op: HttpOperation, ex: Exchange
) -> list[Finding]:
    """The headers the answer's status declares are there."""
    findings: list[Finding] = []
    for response in matching(op, ex.status):
        for name in response.headers:
            if name.lower() == "set-cookie" or name in ex.headers:
                continue
            findings.append(
                Finding(
                    check=RESPONSE_HEADERS_CONFORMANCE,
                    message=f"header {name!r} declared for status {response.status} is missing",
                    pointer=responses_pointer(tool, response.status, "headers", name),
                )
            )
    return findings


def positive_data_acceptance(tool: ToolBinding, op: HttpOperation, ex: Exchange) -> list[Finding]:
    """A valid Call is not refused as bad data: a 4xx other than 401, 403, 404, 409 and 429
    says the server rejects what its spec allows (a tool the model calls right, and fails)."""
    if not 400 <= ex.status < 500 or ex.status in _ACCEPTABLE_REFUSALS:
        return []
    return [
        Finding(
            check=POSITIVE_DATA_ACCEPTANCE,
            message=f"a Call the spec allows was refused with {ex.status}",
            pointer=f"{tool.source}/parameters" if tool.source else "",
        )
    ]


Check = Callable[[ToolBinding, HttpOperation, Exchange], list[Finding]]

ANSWER_CHECKS: tuple[tuple[str, Check], ...] = (
    (NOT_A_SERVER_ERROR, not_a_server_error),
    (STATUS_CODE_CONFORMANCE, status_code_conformance),
    (CONTENT_TYPE_CONFORMANCE, content_type_conformance),
    (RESPONSE_SCHEMA_CONFORMANCE, response_schema_conformance),
    (RESPONSE_HEADERS_CONFORMANCE, response_headers_conformance),
    (POSITIVE_DATA_ACCEPTANCE, positive_data_acceptance),
)


def negative_data_rejection(ex: Exchange, broken: str, pointer: str) -> list[Finding]:
    """A Call the spec forbids (``broken`` says how) is refused with a 4xx."""
    if ex.status >= 400:  # (a 5xx is not_a_server_error's finding)
        return []
    return [
        Finding(
            check=NEGATIVE_DATA_REJECTION,
            message=f"a Call the spec forbids ({broken}) was answered {ex.status}, not 4xx",
            pointer=pointer,
        )
    ]


def ignored_auth(ex: Exchange, pointer: str, how: str = "without credentials") -> list[Finding]:
    """A request sent ``how`` (without credentials, with wrong ones) to an operation that
    requires them (where ``pointer`` says so) is refused."""
    if ex.status in (401, 403):
        return []
    return [
        Finding(
            check=IGNORED_AUTH,
            message=f"sent {how}, it was answered {ex.status} (not 401/403)",
            pointer=pointer,
        )
    ]
