"""Testing layer, live checks: valid Calls sent to a live server, every answer checked. Imports
httpx, hypothesis, ``toolbind.runtime`` (the HTTP client), ``toolbind.testing`` (strategies and
spec compilation) and this package's private modules.

For each operation of an OpenAPI spec, hypothesis draws valid Calls (``strategies_for``), each is
sent through the generated HTTP Activity (``HttpActivities(HttpClient(API, base_url=…))``) over a
recording transport, and the checks of ``_verdicts`` read the answer. A failing check is raised
as its own exception type so hypothesis shrinks each check's counterexample apart; the last
failure recorded for a check is the smallest hypothesis found. Only safe methods are sent unless
the caller names others, and unsafe ones reach a non-loopback host only with ``allow_unsafe``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisException
from pydantic import ValidationError

from toolbind.runtime import ToolBinding
from toolbind.runtime.contract import HttpApi, HttpOperation
from toolbind.runtime.errors import HttpConfigurationError, UsageError
from toolbind.runtime.http import HttpClient, RetryPolicy

from .._contract import contract_for
from .._strategies import json_instances
from ._report import Failure, LiveReport, ToolOutcome
from ._verdicts import ANSWER_CHECKS, NETWORK, Finding, ignored_auth
from ._wire import Exchange, Recorder, curl

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
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


def _failed(check: str) -> type[AssertionError]:
    # one exception type per check: hypothesis tells bugs apart by type and shrinks each alone
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
    sent: int = 0
    last: float = field(default=0.0)

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


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_from(
    base_url: str,
    *,
    credentials: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    budget: int,
    rate: float | None,
    methods: Collection[str],
    allow_unsafe: bool,
    tools: Collection[str] | None,
    seed: int,
    timeout: float,
    max_response_bytes: int,
) -> LiveSettings:
    """``check_live``'s arguments checked; each mistake a ``UsageError`` naming the argument."""
    url = httpx.URL(base_url)
    if url.scheme not in ("http", "https") or not url.host:
        raise UsageError(f"base_url: {base_url!r} is not an http(s) URL with a host")
    if budget < 1:
        raise UsageError(f"budget: {budget} requests — give at least 1")
    if rate is not None and rate <= 0:
        raise UsageError(f"rate: {rate} requests a second — give a positive number or None")
    if timeout <= 0:
        raise UsageError(f"timeout: {timeout} s — give a positive number of seconds")
    wanted = frozenset(m.upper() for m in methods)
    unsafe = sorted(wanted - set(SAFE_METHODS))
    if unsafe and not allow_unsafe and not _is_loopback(url.host):
        raise UsageError(
            f"allow_unsafe: methods {', '.join(unsafe)} change data on {url.host}, which is not "
            "this machine; pass allow_unsafe=True (--allow-unsafe) to send them anyway"
        )
    return LiveSettings(
        base_url=base_url.rstrip("/"),
        credentials=dict(credentials or {}),
        headers=dict(headers or {}),
        budget=budget,
        rate=rate,
        methods=wanted,
        tools=None if tools is None else frozenset(tools),
        seed=seed,
        timeout=timeout,
        max_response_bytes=max_response_bytes,
    )


@dataclass(slots=True, kw_only=True)
class _Target:
    """One package's operations, its client and what it records."""

    api: HttpApi
    activities: Mapping[str, Callable[[Any], Any]]
    recorder: Recorder
    how: LiveSettings

    def secret_headers(self) -> list[str]:
        """Header names that carry credentials: the API's header keys and configured headers."""
        names = [s.name for s in self.api.security_schemes.values() if s.location == "header"]
        return [n for n in names if n] + list(self.how.headers)

    def show(self, exchange: Exchange) -> str:
        """``exchange``'s request as a masked ``curl`` line."""
        return curl(exchange, secrets=self.how.secrets(), secret_headers=self.secret_headers())


def _answer(target: _Target, call: _Drawn) -> tuple[list[Finding], list[Exchange]]:
    """Send ``call`` through the Activity: the no-answer finding (if so) and the exchanges (more
    than one when redirects were followed; the last holds the answer)."""
    target.recorder.exchanges.clear()
    target.how.throttle()
    try:
        result = target.activities[call.tool](call.value)
    except HttpConfigurationError as exc:
        raise _Unconfigured(str(exc)) from exc
    exchanges = list(target.recorder.exchanges)
    kind = result.metadata.get("error_type")
    if kind in _NO_ANSWER:
        return [Finding(check=NETWORK, message=f"{kind}: {result.error}")], exchanges
    if kind == "invalid_input":
        target.how.sent -= 1  # (nothing went out)
        reject()  # (the Call cannot be sent as the spec describes it: not the server's fault)
    return [], exchanges


@dataclass(frozen=True, slots=True)
class _Drawn:
    tool: str
    value: Any


def _requires_auth(api: HttpApi, op: HttpOperation) -> bool:
    alternatives = op.security if op.security is not None else api.security
    return bool(alternatives) and all(alternatives)


def _without_credentials(target: _Target, op: HttpOperation, exchange: Exchange) -> Exchange | None:
    """``exchange``'s request sent again with every credential left out; None: no answer."""
    alternatives = op.security if op.security is not None else target.api.security
    schemes = [target.api.security_schemes.get(r.scheme) for a in alternatives for r in a]
    query_keys = {s.name for s in schemes if s is not None and s.location == "query"}
    drop = {h.lower() for h in target.secret_headers()} | {"authorization"}
    if any(s is not None and s.location == "cookie" for s in schemes):
        drop.add("cookie")
    url = httpx.URL(exchange.url)
    params = [(k, v) for k, v in url.params.multi_items() if k not in query_keys]
    headers = [(k, v) for k, v in exchange.request_headers if k.lower() not in drop]
    how = target.how
    how.throttle()
    # its own transport: closing this client must not close the Activity's
    bare = Recorder(
        httpx.HTTPTransport(), deadline=2 * how.timeout, max_bytes=how.max_response_bytes
    )
    with (
        httpx.Client(transport=bare, timeout=how.timeout) as client,
        contextlib.suppress(httpx.HTTPError),  # (no answer: nothing to say about auth)
    ):
        client.request(
            exchange.method,
            url.copy_with(params=params),
            headers=headers,
            content=exchange.request_body,
        )
    return bare.exchanges[-1] if bare.exchanges else None


def shown_call(tool: ToolBinding, drawn: Any) -> dict[str, Any]:
    """The Call as a developer reads it: the tool and its parameters, without the composition's
    meta fields (``_activity``, ``_output``, …) that never go over the wire."""
    if not isinstance(drawn, Mapping):
        return {"_tool": tool.name, "value": drawn}
    names = tool.parameters.get("properties", {})
    return {"_tool": tool.name} | {k: v for k, v in drawn.items() if k in names}  # pyright: ignore[reportUnknownVariableType]


def _failure(
    target: _Target, tool: ToolBinding, finding: Finding, drawn: Any, sent: Sequence[Exchange]
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


def _check_auth(
    target: _Target,
    tool: ToolBinding,
    op: HttpOperation,
    outcome: ToolOutcome,
    instance: Any,
    sent: Exchange,
) -> None:
    """Send ``sent`` again without credentials; record ``ignored_auth`` if it is not refused."""
    outcome.requests += 1
    bare = _without_credentials(target, op, sent)
    if bare is None:
        return
    alternatives_at = f"{tool.source}/security" if op.security is not None else ""
    if not alternatives_at and tool.source:
        alternatives_at = tool.source.partition("#")[0] + "#/security"  # (the API's default)
    for finding in ignored_auth(bare, alternatives_at):
        outcome.add(_failure(target, tool, finding, instance, [bare]))


def _probe_tool(
    target: _Target, tool: ToolBinding, op: HttpOperation, outcome: ToolOutcome, limit: int
) -> None:
    """Draw Calls for ``tool`` and check every answer, at most ``limit`` requests."""
    how = target.how
    auth_checked = not _requires_auth(target.api, op)

    def probe(instance: Any) -> None:
        nonlocal auth_checked
        if outcome.requests >= limit or how.sent >= how.budget:
            return
        try:
            call = tool.call_model.model_validate(instance)
        except ValidationError:
            reject()
        findings, sent = _answer(target, _Drawn(tool.name, call))
        outcome.requests += 1
        if not findings and sent:
            findings = [f for check in ANSWER_CHECKS for f in check(tool, op, sent[-1])]
            if not auth_checked and how.sent < how.budget:
                auth_checked = True
                _check_auth(target, tool, op, outcome, instance, sent[0])
        for finding in findings:
            outcome.add(_failure(target, tool, finding, instance, sent))
        if findings:
            raise _failed(findings[0].check)(findings[0].message)

    runner = settings(
        max_examples=max(1, limit // 2),
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=_HEALTH_CHECKS,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=True,
    )(hypothesis_seed(how.seed)(given(json_instances(contract_for(tool, None).schema))(probe)))
    try:
        runner()
    except _Unconfigured as exc:
        outcome.skipped = f"not configured: {exc} (give credentials=)"
    except AssertionError:
        pass  # (the failures are recorded as they happen: hypothesis' verdict adds nothing)
    except HypothesisException as exc:
        # a schema hypothesis cannot draw from, or every Call rejected: said, not passed over
        if not outcome.requests:
            outcome.skipped = f"no Call could be drawn and sent ({type(exc).__name__}: {exc})"
    except ExceptionGroup as group:
        rest = group.split((AssertionError, HypothesisException))[1]
        if rest is not None:
            raise rest from None
    if not outcome.requests and not outcome.skipped:
        outcome.skipped = "no drawn Call could be sent (each was refused before going out)"


def probe_package(pkg: ModuleType, how: LiveSettings, report: LiveReport) -> None:
    """Check every operation of one generated package against the live server."""
    api: HttpApi = pkg.API
    recorder = Recorder(
        httpx.HTTPTransport(), deadline=2 * how.timeout, max_bytes=how.max_response_bytes
    )
    with HttpClient(
        api,
        base_url=how.base_url,
        credentials=how.credentials,
        headers=how.headers,
        timeout=how.timeout,
        retry=RetryPolicy(max_attempts=1),
        transport=recorder,
        keep_cookies=False,
        max_response_bytes=how.max_response_bytes,
    ) as client:
        target = _Target(
            api=api, activities=pkg.HttpActivities(client).activities(), recorder=recorder, how=how
        )
        tools: list[ToolBinding] = [
            t
            for t in pkg.TOOLS
            if t.name in api.operations and (how.tools is None or t.name in how.tools)
        ]
        chosen = [t for t in tools if api.operations[t.name].method.upper() in how.methods]
        limit = max(2, how.budget // max(1, len(chosen)))
        for tool in tools:
            op = api.operations[tool.name]
            outcome = ToolOutcome(tool=tool.name, method=op.method.upper(), path=op.path)
            report.tools.append(outcome)
            if tool not in chosen:
                outcome.skipped = f"{outcome.method} is not in methods= (safe methods by default)"
            elif how.sent >= how.budget:
                outcome.skipped = f"the budget of {how.budget} requests was spent"
            else:
                _probe_tool(target, tool, op, outcome, limit)


def packages_of(
    target: ModuleType | str | Path | Sequence[str | Path],
) -> tuple[list[ModuleType], Callable[[], None]]:
    """The generated packages to check and how to release them."""
    if isinstance(target, ModuleType):
        if not hasattr(target, "API") or not hasattr(target, "HttpActivities"):
            raise UsageError(
                f"spec_or_package: {target.__name__} is not a generated OpenAPI package (no API/HttpActivities)"
            )
        return [target], lambda: None
    # (the compiler is loaded only when a spec is given as a path)
    from .._runner import compile_specs

    inputs = [target] if isinstance(target, (str, Path)) else list(target)
    compiled = compile_specs(inputs)
    packages = [p for _, p in compiled.packages if hasattr(p, "API")]
    if not packages:
        compiled.close()
        raise UsageError(
            f"spec_or_package: {inputs} holds no OpenAPI spec (no HTTP operations to call)"
        )
    return packages, compiled.close
