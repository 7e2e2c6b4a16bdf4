"""Attacks on the HTTP Activities, each against the running test server (tests/http_app.py).

What ``test_http.py`` does not already try: host overrides through every parameter location
(a full URL, ``@host``, ``//host``), encoded and compatibility dots and ``..;`` in path
parameters, ``%2F``/``%3F``/``%23``/NUL in path values (asserted on the raw path the server
received), CR/LF/NUL in cookies and gateway headers, redirect loops, gzip bombs and oversized
headers, and secrets — API keys, bearer tokens, basic passwords, OAuth2 client secrets and
access tokens — echoed back by the API, searched for in every artefact: results (``repr``,
``error``, ``metadata``, ``data``), DEBUG logs of every logger, and an Agent's transcript and the
messages it sends to the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests import http_app
from tests._servers import serve_asgi
from tests.http.test_http import CREDENTIALS, FAST, SECRETS, ItemOut, d, erun, make_api, run
from tests.http_app import Echo
from tests.scripted_llm import Reply, ScriptedLLM
from toolbind.runtime import Agent, ModelSettings, ToolRegistry
from toolbind.runtime.http import (
    HttpApi,
    HttpClient,
    HttpExecution,
    HttpOperation,
    HttpParameter,
    HttpResponse,
    RetryPolicy,
    SecurityRequirement,
)
from toolbind.runtime.http._params import (  # pyright: ignore[reportPrivateUsage]
    ParameterError,
    render_path,
)


@pytest.fixture
def client(base: str, foreign: str) -> Iterator[HttpClient]:
    with HttpClient(make_api(base, foreign), credentials=CREDENTIALS, retry=FAST) as c:
        yield c


def _op(tool: str, path: str, *params: HttpParameter, security: Any = ()) -> HttpOperation:
    return HttpOperation(
        tool=tool,
        operation_id=tool,
        method="GET",
        path=path,
        parameters=params,
        responses=(HttpResponse(status="200", media_type="application/json", is_output=True),),
        security=security,
    )


def _param(name: str, location: Any) -> HttpParameter:
    return HttpParameter(
        name=name,
        field=name,
        location=location,
        style="simple" if location in ("path", "header") else "form",
        explode=location in ("query", "cookie"),
        required=location == "path",
    )


# -- the host is configuration's: no parameter can change it -------------------------------------


def _raw_client(base: str) -> HttpClient:
    """A client for ``GET /raw/{name}``: the server echoes whatever path arrived under /raw/."""
    api = HttpApi(
        title="raw", operations={"raw": _op("raw", "/raw/{name}", _param("name", "path"))}
    )
    return HttpClient(api, base_url=base, retry=FAST)


def test_host_override_through_every_parameter_location(
    client: HttpClient, base: str, foreign: str, mode: str
) -> None:
    port = foreign.rsplit(":", 1)[1]
    hosts = [
        f"{foreign}/steal",
        f"@127.0.0.1:{port}/steal",
        f"//127.0.0.1:{port}/steal",
        f"http://127.0.0.1:{port}@evil/steal",
        "https://evil.example",
        "\\\\evil.example\\steal",
    ]
    with _raw_client(base) as raw:
        for value in hosts:
            path = run(raw, mode, "raw", {"name": value}, Echo)
            assert path.success, (value, path.error)
            # one segment under /raw/, every reserved character percent-encoded
            raw_path = d(path).raw_path
            assert raw_path.startswith("/raw/") and raw_path.count("/") == 2, raw_path
            assert not any(c in raw_path for c in ":@\\"), raw_path
            call = {"item_id": "i", "q": value, "xTrace": value, "session": value}
            item = run(client, mode, "getItem", call, ItemOut)
            assert item.success, (value, item.error)
            assert d(item).q == value and d(item).trace == value
            assert d(item).session == quote(value, safe="")  # cookies travel percent-encoded
    assert http_app.FOREIGN_HITS == []


@pytest.mark.parametrize(
    ("value", "raw_path"),
    [
        ("a/b", "/raw/a%2Fb"),
        ("a%2Fb", "/raw/a%252Fb"),  # an encoded '/' stays text, not a separator
        ("a%3Fadmin=1", "/raw/a%253Fadmin%3D1"),
        ("a%23frag", "/raw/a%2523frag"),
        ("a?b=1", "/raw/a%3Fb%3D1"),
        ("a#b", "/raw/a%23b"),
        ("a\x00b", "/raw/a%00b"),
        ("a;b=1", "/raw/a%3Bb%3D1"),
        ("\u202eevil", "/raw/%E2%80%AEevil"),
    ],
)
def test_path_values_stay_inside_their_segment(
    base: str, mode: str, value: str, raw_path: str
) -> None:
    with _raw_client(base) as raw:
        result = run(raw, mode, "raw", {"name": value}, Echo)
    assert result.success, result.error
    assert d(result).raw_path == raw_path and d(result).query_string == ""


@pytest.mark.parametrize(
    "value",
    [
        "..;",  # Tomcat and Jetty read '..;/' as '../'
        "..;jsessionid=x",
        ".;",
        "%2e%2e%3b",
        "\uff0e\uff0e",  # fullwidth dots: '..' after NFKC, which some servers apply
        "\u2025",  # two dot leader: '..' after NFKC
        "%EF%BC%8E%EF%BC%8E",
        "%2e%2E",
        ".%2e",
        "%2e.",
        "%252e%252e",
    ],
)
def test_dot_segments_with_parameters_or_compatibility_dots_were_sent(
    client: HttpClient, mode: str, value: str
) -> None:
    result = run(client, mode, "getFile", {"name": value})
    assert not result.success and result.metadata["error_type"] == "invalid_input", value
    assert http_app.STATE["echo_hits"] == 0 and http_app.STATE["admin_hits"] == 0


def test_an_empty_path_value_is_refused_wherever_it_is() -> None:
    # ``/users/{id}/keys`` with an empty id would be ``/users//keys``: another resource
    user = HttpParameter(
        name="id", field="id", location="path", style="simple", explode=False, required=True
    )
    with pytest.raises(ParameterError, match="path parameter 'id' is empty"):
        render_path("/users/{id}/keys", [(user, "")])
    # a last one too: ``/conversations/`` is the collection's URL, another operation's
    sid = HttpParameter(
        name="sid", field="sid", location="path", style="simple", explode=False, required=True
    )
    empties: list[Any] = ["", []]
    for empty in empties:
        with pytest.raises(ParameterError, match="path parameter 'sid' is empty"):
            render_path("/conversations/{sid}", [(sid, empty)])
    # (label and matrix styles render an empty value as "." or ";sid=": still empty)
    for style in ("label", "matrix"):
        styled = HttpParameter(
            name="sid", field="sid", location="path", style=style, explode=False, required=True
        )
        with pytest.raises(ParameterError, match="path parameter 'sid' is empty"):
            render_path("/conversations/{sid}", [(styled, "")])


def test_gateway_templates_cannot_change_the_host(base: str, foreign: str, mode: str) -> None:
    port = foreign.rsplit(":", 1)[1]
    ex = HttpExecution({"url": base + "/raw/{{input.name}}", "method": "GET"}, tool="file")
    for value in (f"@127.0.0.1:{port}", f"//127.0.0.1:{port}/x", f"{foreign}/x", "a%2Fb"):
        result = erun(ex, mode, {"name": value}, Echo)
        assert result.success, (value, result.error)
        assert d(result).raw_path.count("/") == 2
    refused = erun(ex, mode, {"name": "a%2F..%2F.."})  # '..' once decoded
    assert refused.metadata["error_type"] == "invalid_input"
    assert http_app.FOREIGN_HITS == []


# -- CR/LF/NUL never reach the wire as structure -------------------------------------------------


def test_cookie_values_with_crlf_nul_or_separators_stay_one_cookie(
    client: HttpClient, mode: str
) -> None:
    for value in ("a\r\nX-Extra: injected", "a\x00b", "a; api_session=forged", "a, b=c"):
        result = run(client, mode, "headerStyles", {"session": value}, Echo)
        assert result.success, result.error
        # one cookie, the value as data (percent-encoded: no ';', ',' or CR/LF on the wire)
        assert d(result).cookies == {"session": quote(value, safe="")}
        assert "x-extra" not in d(result).headers


def test_gateway_header_templates_with_crlf_are_refused(base: str, mode: str) -> None:
    ex = HttpExecution(
        {"url": base + "/echo", "method": "GET", "headers": {"X-Trace": "t-{{input.t}}"}},
        tool="echo",
    )
    for value in ("a\r\nX-Extra: 1", "a\nb", "a\x00b", "a\rb"):
        result = erun(ex, mode, {"t": value})
        assert not result.success and result.metadata["error_type"] == "invalid_input"
    assert http_app.STATE["echo_hits"] == 0


# -- redirects, sizes, time ------------------------------------------------------------------------


def test_a_redirect_loop_is_cut_at_max_redirects(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    api = HttpApi(
        title=api.title,
        servers=api.servers,
        operations={"loop": _op("loop", "/loop")},
    )
    with HttpClient(api, max_redirects=3) as c:
        result = run(c, mode, "loop", {})
    assert not result.success and result.metadata["error_type"] == "redirect_refused"
    assert "more than 3 redirects" in (result.error or "")


def test_a_redirect_to_a_redirect_to_a_foreign_host_is_refused(
    client: HttpClient, foreign: str, mode: str
) -> None:
    hop = f"/redirect?to={foreign}/steal"
    result = run(client, mode, "redirect", {"to": hop})
    assert not result.success and result.metadata["error_type"] == "redirect_refused"
    assert http_app.FOREIGN_HITS == []


def test_a_gzip_bomb_is_not_inflated_past_the_bound(base: str, mode: str) -> None:
    api = HttpApi(
        title="bomb",
        operations={"gzipBomb": _op("gzipBomb", "/gzip-bomb", _param("size", "query"))},
    )
    with HttpClient(api, base_url=base, max_response_bytes=100_000) as c:
        small = run(c, mode, "gzipBomb", {"size": 50_000})
        bomb = run(c, mode, "gzipBomb", {"size": 200_000_000})  # ~200 KB on the wire
    assert small.success and small.data == b"\0" * 50_000
    assert not bomb.success and bomb.metadata["error_type"] == "response_too_large"


def test_oversized_response_headers_are_a_failed_result(base: str, mode: str) -> None:
    api = HttpApi(
        title="headers",
        operations={"bigHeaders": _op("bigHeaders", "/big-headers", _param("size", "query"))},
    )
    with HttpClient(api, base_url=base, retry=RetryPolicy(max_attempts=1)) as c:
        result = run(c, mode, "bigHeaders", {"size": 200_000})
    assert not result.success and result.metadata["error_type"] == "connection"


def test_a_stalled_response_times_out(base: str, foreign: str, mode: str) -> None:
    api = make_api(base, foreign)
    with HttpClient(api, timeout=0.2, retry=RetryPolicy(max_attempts=2, backoff=0.01)) as c:
        result = run(c, mode, "slow", {"delay": 5})
    assert not result.success and result.metadata["error_type"] == "timeout"
    assert result.metadata["attempts"] == 1  # the deadline is the whole call's: no retry fits


# -- secrets: echoed back by the API, never in any artefact -------------------------------------

ALL_SCHEMES: dict[str, tuple[SecurityRequirement, ...]] = {
    "apikey-header": (SecurityRequirement(scheme="ApiKeyHeader"),),
    "apikey-query": (SecurityRequirement(scheme="ApiKeyQuery"),),
    "apikey-cookie": (SecurityRequirement(scheme="ApiKeyCookie"),),
    "bearer": (SecurityRequirement(scheme="Bearer"),),
    "basic": (SecurityRequirement(scheme="Basic"),),
    "oidc": (SecurityRequirement(scheme="OpenId"),),
    "oauth2": (SecurityRequirement(scheme="OAuth2", scopes=("read",)),),
}


def _leaky_api(base: str) -> HttpApi:
    api = make_api(base)
    ops = {
        f"leak_{name}": _op(f"leak_{name}", "/leak", _param("status", "query"), security=(req,))
        for name, req in ALL_SCHEMES.items()
    }
    return HttpApi(
        title=api.title,
        servers=api.servers,
        security_schemes=api.security_schemes,
        operations=ops,
    )


def _secrets_now() -> list[str]:
    """Every configured secret, the basic pair's encoding and the access tokens the server gave."""
    import base64

    pair = f"{http_app.BASIC_USER}:{http_app.BASIC_PASSWORD}".encode()
    tokens = list(http_app.STATE["tokens"])
    return [*SECRETS, base64.b64encode(pair).decode(), *tokens]


def test_credentials_echoed_by_the_api_stay_in_its_data_and_nowhere_else(
    base: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx's and httpcore's included
    api = _leaky_api(base)
    results: list[Any] = []
    with HttpClient(api, credentials=CREDENTIALS, retry=FAST) as c:
        for name in ALL_SCHEMES:
            for status in (200, 500):
                result = run(c, mode, f"leak_{name}", {"status": status})
                assert result.metadata["status"] == status, (name, result.error)
                results.append(result)
        artefacts = [repr(c), str(c)]
    assert len(http_app.STATE["tokens"]) == 1  # an access token was fetched and used
    echoed = [json.dumps(result.data, default=str) for result in results]
    # the data is exactly what the API sent (an API may echo an id a credential carries)
    assert any(http_app.API_KEY in text for text in echoed)
    for result in results:
        artefacts += [repr(result), str(result), str(result.error), json.dumps(result.metadata)]
    artefacts.append(caplog.text)
    assert any("***" in text for text in artefacts)
    for secret in _secrets_now():
        for text in artefacts:
            assert secret not in text, (secret, text[:500])


def test_secrets_never_reach_the_agent_transcript_or_the_model(
    base: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api = _leaky_api(base)
    client = HttpClient(api, credentials=CREDENTIALS, retry=FAST)
    tools = ToolRegistry()
    activities: dict[str, Any] = {}
    for name in ALL_SCHEMES:
        tool = f"leak_{name}"
        schema = {
            "type": "object",
            "properties": {"_tool": {"const": tool}, "status": {"type": "integer"}},
        }
        tools.register(tool, schema)

        async def activity(call: Any, tool: str = tool) -> Any:
            return await client.acall(tool, {"status": call.status})

        activities[tool] = activity
    llm = ScriptedLLM()
    calls = [{"_tool": t, "status": s} for t in tools.names for s in (200, 500)]
    llm.add(Reply(arguments={"output": None, "calls": calls}))
    llm.add(Reply(arguments={"output": "done", "calls": []}))
    with serve_asgi(llm.app) as url:
        agent = Agent(
            f"{url}/v1",
            model="m",
            tools=tools,
            activities=activities,
            settings=ModelSettings(http_retries=0),
        )

        async def go() -> Any:
            try:
                return await agent.arun("leak everything")
            finally:
                await agent.aclose()
                await client.aclose()

        result = asyncio.run(go())
    assert len(result.steps[0].calls) == 2 * len(ALL_SCHEMES)
    assert all(r.result.metadata.get("status") in (200, 500) for r in result.steps[0].calls)
    artefacts = [repr(result), json.dumps(llm.requests), caplog.text]
    assert "***" in artefacts[1]  # the API did echo them: scrubbed on the way to the model
    for secret in _secrets_now():
        for text in artefacts:
            assert secret not in text, secret


# -- regressions: the OAuth2 token endpoint was read without the bounds of other responses -----


def test_a_dripping_token_endpoint_was_not_bounded_by_the_timeout(
    base: str, foreign: str, mode: str
) -> None:
    # each byte within the read timeout, the whole answer ~10 s: the call took all of it
    creds = {"OAuth2": dict(CREDENTIALS["OAuth2"], token_url="/token-drip?chunks=100")}
    one = RetryPolicy(max_attempts=1)
    with HttpClient(make_api(base, foreign), credentials=creds, timeout=0.3, retry=one) as c:
        result = run(c, mode, "authOauth", {})
    assert not result.success and result.metadata["error_type"] == "auth"
    assert "failed: ReadTimeout" in (result.error or "")


def test_a_huge_token_response_was_read_whole(base: str, foreign: str, mode: str) -> None:
    creds = {"OAuth2": dict(CREDENTIALS["OAuth2"], token_url="/token-huge?size=5000000")}
    api = make_api(base, foreign)
    with HttpClient(api, credentials=creds, max_response_bytes=100_000) as c:
        result = run(c, mode, "authOauth", {})
    assert not result.success and result.metadata["error_type"] == "auth"
    assert "token response for scheme 'OAuth2' is too large" in (result.error or "")
    with HttpClient(api, credentials=CREDENTIALS, max_response_bytes=100_000) as c:
        assert run(c, mode, "authOauth", {}).success  # a token response of normal size
