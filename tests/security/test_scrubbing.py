"""Secret scrubbing rules (SECURITY.md, "Secrets"): where scrubbing applies and how.

- The data a call returns is exactly what the API sent (an API that echoes the account id used as
  the basic-auth user name must not fail its output check).
- What leaves the process is scrubbed: the text sent to the model, log records, exception
  messages and reprs — for every configured secret: credentials, ``headers=``, ``${env.X}`` values,
  OAuth tokens, the token part of ``Bearer x``.
- A secret is replaced as a whole value, never inside a longer word; a value shorter than
  ``MIN_SECRET_CHARS`` is not taken as a secret (``json``, ``Host``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests import http_app
from tests.http.test_http import CREDENTIALS, FAST, grun, make_api
from toolbind.runtime import ToolResult
from toolbind.runtime._secrets import MIN_SECRET_CHARS, Redactor, scrub_everywhere
from toolbind.runtime.http import GenericHttpTool


def test_a_secret_is_scrubbed_as_a_whole_value_only() -> None:
    redact = Redactor()
    assert redact.add("s3cr3t-value")
    text = 'key=s3cr3t-value&x=1 "s3cr3t-value" xs3cr3t-valuex s3cr3t-value2'
    assert redact(text) == 'key=***&x=1 "***" xs3cr3t-valuex s3cr3t-value2'
    assert redact("s3cr3t%2Dvalue") == "s3cr3t%2Dvalue"  # not an encoding of it
    assert redact.add("a/b c+d=e/f")
    assert redact("q=a%2Fb%20c%2Bd%3De%2Ff") == "q=***"  # its URL encoding is scrubbed too


def test_short_values_are_not_secrets() -> None:
    redact = Redactor()
    for short in ("json", "Host", "x" * (MIN_SECRET_CHARS - 1)):
        assert not redact.add(short)
    assert redact('{"Host": "json"}') == '{"Host": "json"}'


def test_the_token_of_a_bearer_header_value_is_a_secret_too() -> None:
    redact = Redactor()
    assert redact.add("Bearer tkn-0123456789")
    assert redact("Authorization: Bearer tkn-0123456789") == "Authorization: ***"
    assert redact('{"token": "tkn-0123456789"}') == '{"token": "***"}'


def test_every_live_redactor_applies_to_what_leaves_the_process() -> None:
    a, b = Redactor(), Redactor()
    a.add("first-secret-1")
    b.add("second-secret-2")
    assert scrub_everywhere("first-secret-1 second-secret-2") == "*** ***"
    result = ToolResult[Any].ok({"echo": "second-secret-2"})
    assert result.data == {"echo": "second-secret-2"}  # the data as given
    assert "second-secret-2" not in repr(result) and "second-secret-2" not in str(result)


def test_the_basic_user_name_echoed_by_the_api_is_its_data(
    base: str, foreign: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The bug: an API that echoes the account id it was authenticated with (the basic-auth user
    name) had it replaced by ``***`` before the Output check, and every call failed."""
    caplog.set_level(logging.DEBUG)
    account = "AC0123456789abcdef"
    creds = dict(CREDENTIALS, Basic={"username": account, "password": http_app.BASIC_PASSWORD})
    with GenericHttpTool(make_api(base, foreign), credentials=creds) as tool:
        result = grun(tool, "sync", {"method": "GET", "path": "/echo", "query": {"id": account}})
    assert result.success, result.error
    assert ["id", account] in json.loads(json.dumps(result.data))["query"]
    assert account in repr(result)  # an identifier, not a secret
    assert http_app.BASIC_PASSWORD not in caplog.text + repr(result)


def test_configured_headers_and_env_values_are_returned_as_echoed_but_scrubbed_elsewhere(
    base: str, foreign: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with GenericHttpTool(
        make_api(base, foreign),
        credentials=CREDENTIALS,
        headers={"X-Trace": "static-secret-55", "X-Extra": "${env.TB_HEADER}"},
        env={"TB_HEADER": "hdr-secret-77"},
        retry=FAST,
    ) as tool:
        result = grun(tool, "sync", {"method": "GET", "path": "/echo"})
        artefacts = [repr(result), str(result), repr(tool), caplog.text]
    assert result.success, result.error
    headers = json.loads(json.dumps(result.data))["headers"]
    assert (headers["x-trace"], headers["x-extra"]) == ("static-secret-55", "hdr-secret-77")
    for secret in ("static-secret-55", "hdr-secret-77", http_app.API_KEY):
        for text in artefacts:
            assert secret not in text, (secret, text[:300])
