"""Testing layer, live checks: valid Calls sent to a live server, every answer checked. Imports
httpx, hypothesis, pydantic, ``toolbind.runtime`` (the HTTP client), ``toolbind.testing``
(strategies and spec compilation) and this package's private modules.

For each operation of an OpenAPI spec, hypothesis draws valid Calls (``strategies_for``), each is
sent through the generated HTTP Activity (``HttpActivities(HttpClient(API, base_url=…))``) over a
recording transport, and the checks of ``_verdicts`` read the answer. A failing check is raised
as its own exception type so hypothesis shrinks each check's counterexample apart; the last
failure recorded for a check is the smallest hypothesis found. Invalid Calls (``_negative``) and
create/read/delete sequences (``_stateful``) follow where their checks are on. Only safe methods
are sent unless the caller names others, and unsafe ones reach a non-loopback host only with
``allow_unsafe``.
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from hypothesis import reject
from pydantic import ValidationError

from toolbind.runtime import ToolBinding
from toolbind.runtime.contract import HttpApi, HttpOperation
from toolbind.runtime.errors import UsageError
from toolbind.runtime.http import HttpClient, RetryPolicy

from ._methods import probe_methods, undeclared_method
from ._negative import probe_invalid
from ._probe import LiveSettings, Target, drive, failure, record, timed_out
from ._report import LiveReport, ToolOutcome
from ._stateful import SEQUENCE_COST, probe_sequences, resources, spec_links
from ._verdicts import (
    ALLOW_HEADER_CONFORMANCE,
    ANSWER_CHECKS,
    CHECKS,
    ENSURE_RESOURCE_AVAILABILITY,
    IGNORED_AUTH,
    NEGATIVE_DATA_REJECTION,
    UNSUPPORTED_METHOD,
    USE_AFTER_FREE,
    ignored_auth,
)
from ._wire import Exchange, Recorder

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
STATEFUL_CHECKS = frozenset({USE_AFTER_FREE, ENSURE_RESOURCE_AVAILABILITY})
METHOD_CHECKS = frozenset({UNSUPPORTED_METHOD, ALLOW_HEADER_CONFORMANCE})


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
    checks: Collection[str],
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
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise UsageError(
            f"checks: no check named {', '.join(unknown)} (checks: {', '.join(CHECKS)})"
        )
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
        checks=frozenset(checks),
    )


def _requires_auth(api: HttpApi, op: HttpOperation) -> bool:
    alternatives = op.security if op.security is not None else api.security
    return bool(alternatives) and all(alternatives)


# what stands in for a credential in a request sent with wrong ones
_WRONG_KEY = "toolbind-invalid-credential"
_WRONG_BASIC = "Basic dG9vbGJpbmQ6aW52YWxpZA=="  # toolbind:invalid


def _wrong(name: str, value: str) -> str:
    """A credential of the same kind as ``value`` that no server issued."""
    if name.lower() != "authorization":
        return _WRONG_KEY
    scheme = value.partition(" ")[0]
    return _WRONG_BASIC if scheme.lower() == "basic" else f"{scheme or 'Bearer'} {_WRONG_KEY}"


def _resent(
    target: Target, op: HttpOperation, exchange: Exchange, *, wrong: bool
) -> Exchange | None:
    """``exchange``'s request sent again with every credential left out (``wrong``: replaced by
    one of the same kind no server issued; cookies are left out); None: no answer."""
    alternatives = op.security if op.security is not None else target.api.security
    schemes = [target.api.security_schemes.get(r.scheme) for a in alternatives for r in a]
    query_keys = {s.name for s in schemes if s is not None and s.location == "query"}
    secret = {h.lower() for h in target.secret_headers()} | {"authorization"}
    if any(s is not None and s.location == "cookie" for s in schemes):
        secret.add("cookie")
    url = httpx.URL(exchange.url)
    params: list[tuple[str, str]] = []
    for key, value in url.params.multi_items():
        if key not in query_keys:
            params.append((key, value))
        elif wrong:
            params.append((key, _WRONG_KEY))
    headers: list[tuple[str, str]] = []
    for name, value in exchange.request_headers:
        if name.lower() not in secret:
            headers.append((name, value))
        elif wrong and name.lower() != "cookie":
            headers.append((name, _wrong(name, value)))
    how = target.how
    how.throttle()
    # its own transport: closing this client must not close the Activity's
    bare = Recorder(how.transport(), deadline=2 * how.timeout, max_bytes=how.max_response_bytes)
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


def _check_auth(
    target: Target,
    tool: ToolBinding,
    op: HttpOperation,
    outcome: ToolOutcome,
    instance: Any,
    sent: Exchange,
) -> None:
    """Send ``sent`` again without credentials, then with wrong ones; record ``ignored_auth``
    for the first that is not refused."""
    alternatives_at = f"{tool.source}/security" if op.security is not None else ""
    if not alternatives_at and tool.source:
        alternatives_at = tool.source.partition("#")[0] + "#/security"  # (the API's default)
    for wrong in (False, True):
        if target.how.spent:
            return
        outcome.requests += 1
        bare = _resent(target, op, sent, wrong=wrong)
        if bare is None:
            continue
        how = "with wrong credentials" if wrong else "without credentials"
        findings = ignored_auth(bare, alternatives_at, how)
        for finding in findings:
            outcome.add(failure(target, tool, finding, instance, [bare]))
        if findings:
            return


def _probe_tool(
    target: Target,
    tool: ToolBinding,
    op: HttpOperation,
    outcome: ToolOutcome,
    limit: int,
    seed: int,
) -> bool:
    """Draw valid Calls for ``tool`` and check every answer until ``outcome`` has ``limit``
    requests; whether a failure ended the draws (see ``drive``)."""
    how = target.how
    answer_checks = [check for name, check in ANSWER_CHECKS if name in how.checks]
    auth_checked = IGNORED_AUTH not in how.checks or not _requires_auth(target.api, op)
    auth_checked = auth_checked or tool.name in target.sent_to  # (an earlier round's)
    known = frozenset(f.check for f in outcome.failures)
    drawn: list[Any] = target.memo.setdefault(("drawn", tool.name), [])

    def probe(instance: Any) -> None:
        nonlocal auth_checked
        if outcome.requests >= limit or how.spent or timed_out(outcome):
            return
        try:
            call = tool.call_model.model_validate(instance)
        except ValidationError:
            reject()
        drawn.append(instance)
        findings, sent = target.send(tool.name, lambda: target.activities[tool.name](call))
        outcome.requests += 1
        if not findings and sent:
            findings = [f for check in answer_checks for f in check(tool, op, sent[-1])]
            if not auth_checked and not how.spent:
                auth_checked = True
                _check_auth(target, tool, op, outcome, instance, sent[0])
        record(target, tool, outcome, findings, instance, sent, known)

    examples = max(1, limit - outcome.requests)
    failed = drive(probe, target.calls(tool), examples=examples, seed=seed, outcome=outcome)
    if not outcome.requests and not outcome.skipped:
        outcome.skipped = "no drawn Call could be sent (each was refused before going out)"
    return failed


def _probe_round(
    target: Target, tool: ToolBinding, outcome: ToolOutcome, limit: int, seed: int
) -> bool:
    """One round of ``tool``'s Calls, up to ``limit`` requests in all (half of the new ones
    invalid where ``negative_data_rejection`` is on); whether the tool may have more to show:
    it used all it was given, or a failure ended its draws."""
    op = target.api.operations[tool.name]
    if NEGATIVE_DATA_REJECTION in target.how.checks:
        share = limit - outcome.requests
        failed = _probe_tool(target, tool, op, outcome, limit - share // 2, seed)
        if not outcome.skipped:
            failed = probe_invalid(target, tool, op, outcome, limit, seed) or failed
    else:
        failed = _probe_tool(target, tool, op, outcome, limit, seed)
    if outcome.skipped or timed_out(outcome):
        return False
    return failed or outcome.requests >= limit


def _rounds(target: Target, hungry: list[tuple[ToolBinding, ToolOutcome]]) -> None:
    """Hand the budget left to the ``hungry`` tools — those that may have
    more to show — another round at a time, each with a new seed, until the budget is spent or
    no tool has more (each drew every Call it has, or stopped answering)."""
    how = target.how
    round_ = 0
    while hungry:
        room = how.budget - how.sent
        if room <= 0:
            return
        round_ += 1
        chosen, hungry = hungry[:room], []
        share = room // len(chosen)
        before = how.sent
        for tool, outcome in chosen:
            if how.spent:
                return
            if _probe_round(target, tool, outcome, outcome.requests + share, how.seed + round_):
                hungry.append((tool, outcome))
        if how.sent == before:
            return  # (a round that sent nothing: the next would not either)


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
        activities = pkg.HttpActivities(client).activities()
        target = Target(api=api, client=client, activities=activities, recorder=recorder, how=how)
        tools: list[ToolBinding] = [
            t
            for t in pkg.TOOLS
            if t.name in api.operations and (how.tools is None or t.name in how.tools)
        ]
        chosen = [t for t in tools if api.operations[t.name].method.upper() in how.methods]
        stateful = (
            resources(chosen, api.operations, spec_links(chosen, api.operations))
            if how.checks & STATEFUL_CHECKS
            else []
        )
        # the first round leaves the sequences and the methods' requests their share
        kept = min(how.budget // 3, len(stateful) * SEQUENCE_COST * 2)
        paths: dict[str, set[str]] = {}
        for tool in chosen if how.checks & METHOD_CHECKS else ():
            op = api.operations[tool.name]
            paths.setdefault(op.path, set()).add(op.method.upper())
        reserve = kept + sum(undeclared_method(d, how.methods) is not None for d in paths.values())
        limit = max(2, (how.budget - reserve) // max(1, len(chosen)))
        hungry: list[tuple[ToolBinding, ToolOutcome]] = []
        for tool in tools:
            op = api.operations[tool.name]
            outcome = ToolOutcome(tool=tool.name, method=op.method.upper(), path=op.path)
            report.tools.append(outcome)
            if tool not in chosen:
                outcome.skipped = f"{outcome.method} is not in methods= (safe methods by default)"
            elif how.spent:
                outcome.skipped = f"the budget of {how.budget} requests was spent"
            elif why := target.unconfigured(op):
                outcome.skipped = f"not configured: {why} (give credentials=)"
            elif _probe_round(target, tool, outcome, limit, how.seed):
                hungry.append((tool, outcome))
        # the sequences and the methods' requests next (what they leave of their share — a
        # sequence ends where its item is not there — goes to the rounds after them)
        probe_sequences(target, stateful, report)
        if how.checks & METHOD_CHECKS:
            probe_methods(target, chosen, report)
        _rounds(target, hungry)


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
