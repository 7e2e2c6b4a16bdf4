"""Servers that answer ``null`` where their own spec says string: Jupyter Server (its Swagger 2.0
spec requires ``content`` and says in words that it may be null) and LNbits (pydantic 1 writes
``Optional[str]`` as a plain string schema) do it on most calls. The call went through, so the
result is a success whose ``metadata["nulls"]`` lists the members; any other mismatch is still a
failed output check. Checked on a real server (a raw ASGI app, uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
import logging
from types import ModuleType
from typing import Any

import pytest

from tests._servers import Receive, Send, serve_asgi
from tests.conftest import CompileSpec
from toolbind.runtime.http import HttpClient

SPEC = """\
swagger: '2.0'
info: {title: nulls, version: '1'}
produces: [application/json]
paths:
  /answer/{case}:
    post:
      operationId: answer
      parameters:
        - {name: case, in: path, required: true, type: string}
      responses:
        '201': {description: made, schema: {$ref: '#/definitions/Contents'}}
definitions:
  Contents:
    type: object
    required: [name, content]
    properties:
      name: {type: string}
      content: {type: string}
      mimetype: {type: string}
      size: {type: integer}
      owner:
        type: object
        properties: {avatar_url: {type: string}, login: {type: string}}
      tags: {type: array, items: {type: string}}
"""

# what the server answers, per case
ANSWERS: dict[str, Any] = {
    "optional": {"name": "a", "content": "x", "mimetype": None, "owner": {"avatar_url": None}},
    "required": {"name": "a", "content": None, "mimetype": None},
    "item": {"name": "a", "content": "x", "tags": ["t", None]},
    "mixed": {"name": "a", "content": "x", "mimetype": None, "size": "big"},
    "plain": {"name": "a", "content": "x"},
}


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = json.dumps(ANSWERS[scope["path"].rsplit("/", 1)[1]]).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    return compile_spec(SPEC, suffix=".yaml")


def _answer(pkg: ModuleType, case: str) -> Any:
    with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
        call = pkg.CallAdapter.validate_python({"_tool": "answer", "case": case})
        return pkg.HttpActivities(client).activities()["answer"](call)


def test_null_optional_members_are_read_as_absent_and_said(
    pkg: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "toolbind.runtime.http")
    result = _answer(pkg, "optional")
    assert result.success, result.error
    assert isinstance(result.data, pkg.AnswerOutput)
    assert result.data.model_dump(exclude_unset=True) == {
        "name": "a",
        "content": "x",
        "owner": {},
    }
    assert result.metadata["nulls"] == ["mimetype", "owner/avatar_url"]
    assert "null where AnswerOutput does not allow it: mimetype, owner/avatar_url" in caplog.text


def test_a_null_required_member_gives_the_data_as_sent(pkg: ModuleType) -> None:
    result = _answer(pkg, "required")
    assert result.success, result.error
    assert result.data == ANSWERS["required"]  # no model holds a null string; nothing is lost
    assert result.metadata["nulls"] == ["content", "mimetype"]


@pytest.mark.parametrize("case", ["item", "mixed"])
def test_any_other_mismatch_is_still_a_failed_output_check(pkg: ModuleType, case: str) -> None:
    result = _answer(pkg, case)
    assert not result.success
    assert result.metadata["error_type"] == "invalid_output"
    assert "nulls" not in result.metadata
    assert "answered HTTP 201 (the call went through)" in (result.error or "")
    assert result.data == ANSWERS[case]


def test_a_response_as_the_spec_says_is_untouched(pkg: ModuleType) -> None:
    result = _answer(pkg, "plain")
    assert result.success and "nulls" not in result.metadata
    assert result.data.model_dump(exclude_unset=True) == ANSWERS["plain"]
