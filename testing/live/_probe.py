"""Testing layer, live checks: what every kind of probe shares — the run's settings, the client
and what it records, sending one Call and reading whether an answer came, a finding made into a
report entry, and the hypothesis run around a probe. Imports httpx, hypothesis,
``toolbind.runtime`` and this package's ``_report``, ``_verdicts`` and ``_wire``.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from toolbind.runtime import ToolBinding, ToolResult
from toolbind.runtime.contract import HttpApi, HttpOperation
from toolbind.runtime.errors import HttpConfigurationError
from toolbind.runtime.http import HttpClient

from .._contract import contract_for
from .._strategies import json_instances
from ._report import Failure, ToolOutcome
from ._verdicts import NETWORK, Finding
from ._wire import Exchange, Recorder, curl

# error types of a result that got no answer to check (see ``toolbind.runtime.http``)
_NO_ANSWER = frozenset(
    {"timeout", "connection", "redirect_refused", "refused_url", "auth", "response_too_large"}
)


class _Unconfigured(Exception):
    """The client cannot call the tool as configured (credentials for none of its schemes)."""


# A live server is slow and many drawn Calls cannot be sent (rejected): neither is a bug here.
_HEALTH_CHECKS = (
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
)

_FAILED: dict[str, type[AssertionError]] = {}


def failed(check: str) -> type[AssertionError]:
    """The exception type raised for ``check``: hypothesis tells bugs apart by type and shrinks
    each alone."""
    if check not in _FAILED:
        _FAILED[check] = type(f"Failed_{check}", (AssertionError,), {})
    return _FAILED[check]


@dataclass(slots=True, kw_only=True)
class LiveSettings:
    """How ``check_live`` runs (validated from its arguments)."""

    base_url: str
    credentials: Mapping[str, Any]
    headers: Mapping[str, str]
    budget: int
    rate: float | None
    methods: frozenset[str]
    tools: frozenset[str] | None
    seed: int
    timeout: float
    max_response_bytes: int
    checks: frozenset[str]
    sent: int = 0
    last: float = field(default=0.0)
    tls: ssl.SSLContext | None = None

    def transport(self) -> httpx.HTTPTransport:
        """A new transport for a request sent beside the client's (auth, methods), sharing one
        TLS context: building one loads the CA bundle, a tenth of a CPU second each — half of
        a run's CPU time on httpbin."""
        if self.tls is None:
            self.tls = httpx.create_ssl_context()
        return httpx.HTTPTransport(verify=self.tls)

    @property
    def spent(self) -> bool:
        """Whether the request budget is used up."""
        return self.sent >= self.budget

    def throttle(self) -> None:
        """Wait so requests go at most ``rate`` a second; count the request."""
        if self.rate is not None:
            wait = self.last + 1 / self.rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        self.last = time.monotonic()
        self.sent += 1

    def secrets(self) -> list[str]:
        """Every configured secret value (for masking)."""
        found: list[str] = list(self.headers.values())

        def walk(value: Any) -> None:
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, Mapping):
                for item in value.values():  # pyright: ignore[reportUnknownVariableType]
                    walk(item)
            elif isinstance(value, (list, tuple)):
                for item in value:  # pyright: ignore[reportUnknownVariableType]
                    walk(item)

        walk(self.credentials)
        return found


@dataclass(slots=True, kw_only=True)
class Target:
    """One package's operations, its client and what it records."""

    api: HttpApi
    client: HttpClient
    activities: Mapping[str, Callable[[Any], Any]]
    recorder: Recorder
    how: LiveSettings
    sent_to: dict[str, Exchange] = field(default_factory=dict[str, Exchange])
    """The first request each tool sent (by tool name) that got an answer."""
    strategies: dict[str, st.SearchStrategy[Any]] = field(
        default_factory=dict[str, st.SearchStrategy[Any]]
    )

    memo: dict[tuple[str, str], Any] = field(default_factory=dict[tuple[str, str], Any])
    """What a probe builds once a run for a tool: (kind, tool name) → it."""

    def calls(self, tool: ToolBinding) -> st.SearchStrategy[Any]:
        """Valid wire instances of ``tool``'s Call, built once a run (each round and sequence
        draws from it: building checks the schema and canonicalises it again)."""
        found = self.strategies.get(tool.name)
        if found is None:
            found = self.strategies[tool.name] = json_instances(wire_schema(tool))
        return found

    def unconfigured(self, op: HttpOperation) -> str:
        """Why the client cannot call ``op`` (no credentials for any alternative its security
        requires, as the client decides), or ''. Said before any Call is drawn: raised from a
        probe, hypothesis would replay and shrink the error for nothing."""
        alternatives = op.security if op.security is not None else self.api.security
        if not alternatives or any(
            not alt or all(r.scheme in self.how.credentials for r in alt) for alt in alternatives
        ):
            return ""
        options = " or ".join(
            "[" + " and ".join(r.scheme for r in alt) + "]" for alt in alternatives
        )
        return f"tool {op.tool!r} needs credentials for {options}"

    def secret_headers(self) -> list[str]:
        """Header names that carry credentials: the API's header keys and configured headers."""
        names = [s.name for s in self.api.security_schemes.values() if s.location == "header"]
        return [n for n in names if n] + list(self.how.headers)

    def show(self, exchange: Exchange) -> str:
        """``exchange``'s request as a masked ``curl`` line."""
        return curl(exchange, secrets=self.how.secrets(), secret_headers=self.secret_headers())

    def send(
        self, tool: str, send: Callable[[], ToolResult[Any]]
    ) -> tuple[list[Finding], list[Exchange]]:
        """Run ``send`` (one Call of ``tool`` through the client): the no-answer finding (if so) and the
        exchanges (more than one when redirects were followed; the last holds the answer). A
        Call the client cannot send as the spec describes it is rejected (not the server's
        fault, and nothing went out)."""
        self.recorder.exchanges.clear()
        self.how.throttle()
        try:
            result = send()
        except HttpConfigurationError as exc:
            self.how.sent -= 1  # (nothing went out)
            raise _Unconfigured(str(exc)) from exc
        except (UnicodeError, httpx.HTTPError) as exc:
            # the client failed on what the server answered (a redirect setting a cookie that is
            # not ASCII: httpx cannot write it into the next request): that answer's failure
            message = f"client_error: {tool}: {type(exc).__name__}: {exc}"
            return [Finding(check=NETWORK, message=message)], list(self.recorder.exchanges)
        exchanges = list(self.recorder.exchanges)
        kind = result.metadata.get("error_type")
        if exchanges and kind not in _NO_ANSWER:
            self.sent_to.setdefault(tool, exchanges[0])
        if kind in _NO_ANSWER:
            return [Finding(check=NETWORK, message=f"{kind}: {result.error}")], exchanges
        if kind == "invalid_input":
            self.how.sent -= 1
            reject()
        return [], exchanges


# Call fields that never go over the wire: drawing them (``_output`` is any JSON where the spec
# declares no output) costs most of a draw's time for nothing
_OFF_WIRE = ("_activity", "_reasoningForCall", "_output")


def wire_schema(tool: ToolBinding) -> dict[str, Any]:
    """The Call's contract schema without the meta fields no request carries."""
    schema = dict(cast("Mapping[str, Any]", contract_for(tool, None).schema))
    properties = dict(cast("Mapping[str, Any]", schema.get("properties", {})))
    for name in _OFF_WIRE:
        properties.pop(name, None)
    schema["properties"] = properties
    if isinstance(schema.get("required"), list):
        required = cast("list[str]", schema["required"])
        schema["required"] = [r for r in required if r not in _OFF_WIRE]
    return schema


def shown_call(tool: ToolBinding, drawn: Any) -> dict[str, Any]:
    """The Call as a developer reads it: the tool and its parameters, without the composition's
    meta fields (``_activity``, ``_output``, …) that never go over the wire."""
    if not isinstance(drawn, Mapping):
        return {"_tool": tool.name, "value": drawn}
    names = tool.parameters.get("properties", {})
    return {"_tool": tool.name} | {k: v for k, v in drawn.items() if k in names}  # pyright: ignore[reportUnknownVariableType]


def failure(
    target: Target, tool: ToolBinding, finding: Finding, drawn: Any, sent: Sequence[Exchange]
) -> Failure:
    """``finding`` with what reproduces it: the Call, the first request as sent (a redirect's
    target is the server's choice), the last answer."""
    call = shown_call(tool, drawn)
    if not sent:
        return Failure(
            check=finding.check, message=finding.message, pointer=finding.pointer, call=call
        )
    answer = sent[-1]
    return Failure(
        check=finding.check,
        message=finding.message,
        pointer=finding.pointer,
        call=call,
        curl=target.show(sent[0]),
        status=answer.status,
        content_type=answer.headers.get("content-type", ""),
        excerpt=answer.excerpt(),
    )


def record(
    target: Target,
    tool: ToolBinding,
    outcome: ToolOutcome,
    findings: Sequence[Finding],
    drawn: Any,
    sent: Sequence[Exchange],
    known: Collection[str] = (),
) -> None:
    """Add ``findings`` to ``outcome``, but those of the checks in ``known`` (found and shrunk
    in an earlier round: kept as they were); raise the first one's exception for hypothesis
    to shrink, unless it is ``network`` — shrinking a timeout waits out the timeout again at
    every step, and what is unanswered says nothing about the Call."""
    fresh = [f for f in findings if f.check not in known]
    for finding in fresh:
        outcome.add(failure(target, tool, finding, drawn, sent))
    shrunk = [f for f in fresh if f.check != NETWORK]
    if shrunk:
        raise failed(shrunk[0].check)(shrunk[0].message)


def timed_out(outcome: ToolOutcome) -> bool:
    """Whether a request of the tool timed out: its further Calls are not sent (each would
    wait out the timeout again)."""
    return any(f.check == NETWORK and f.message.startswith("timeout") for f in outcome.failures)


def drive(
    probe: Callable[[Any], None],
    strategy: st.SearchStrategy[Any],
    *,
    examples: int,
    seed: int,
    outcome: ToolOutcome,
) -> bool:
    """Run ``probe`` on at most ``examples`` instances of ``strategy`` (and shrink what fails);
    failures are recorded by ``probe`` as they happen, a tool that cannot be called is skipped.
    Returns whether a failure ended the run (hypothesis stops drawing soon after one: the tool
    may have more to show), not the draws running out."""
    runner = settings(
        max_examples=max(1, examples),
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=_HEALTH_CHECKS,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=True,
    )(hypothesis_seed(seed)(given(strategy)(probe)))
    # (no example database: without a key hypothesis reads the probe's source to make one, a
    # tenth of the CPU time of a run that drives a few hundred probes)
    runner._hypothesis_internal_database_key = None  # type: ignore[attr-defined]
    try:
        runner()
    except _Unconfigured as exc:
        outcome.skipped = f"not configured: {exc} (give credentials=)"
    except AssertionError:
        # (the failures are recorded as they happen: hypothesis' verdict adds nothing)
        return True
    except HypothesisException as exc:
        # a schema hypothesis cannot draw from, or every Call rejected: said, not passed over
        if not outcome.requests:
            outcome.skipped = f"no Call could be drawn and sent ({type(exc).__name__}: {exc})"
    except ExceptionGroup as group:
        rest = group.split((AssertionError, HypothesisException))[1]
        if rest is not None:
            raise rest from None
        return True
    return False
