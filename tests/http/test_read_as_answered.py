"""A real API read as it answers, on a real server (a raw ASGI app, uvicorn on 127.0.0.1):

- a body decoded by the media type that arrived: an operation that declares ``text/plain`` and
  answers ``application/json`` with a JSON string (``"1.0.0"``) gives the string — from the
  Activity and through ``toolbind serve`` (it gave the text with its quotes);
- a deployment that enforces none of the spec's auth (an API key required on every operation):
  the scheme's credential given as ``None`` (``null`` in ``serve --credentials``) meets the
  requirement and nothing is sent (only a made-up placeholder key worked, and was sent);
- an error body typed as the declared error model only when it carries at least one of the
  model's fields: a model whose fields are all optional took any object (a framework's own
  ``{"detail": "Not Found"}`` came back as an empty ``Problem``); it is now the body as sent,
  ``metadata["error_model_unmatched"]`` naming the model.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import REPO, CompileSpec
from toolbind.runtime.errors import HttpConfigurationError
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.0.3
info: {title: as answered, version: '1'}
security: [{ApiKeyAuth: []}]
components:
  securitySchemes:
    ApiKeyAuth: {type: apiKey, in: header, name: X-API-Key}
  schemas:
    Problem:
      type: object
      properties: {code: {type: integer}, message: {type: string}}
paths:
  /version:
    get:
      operationId: getVersion
      responses:
        '200': {description: the version, content: {text/plain: {schema: {type: string}}}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        '200': {description: an item, content: {application/json: {schema: {type: object}}}}
        '404':
          description: no such item
          content: {application/json: {schema: {$ref: '#/components/schemas/Problem'}}}
"""

SEEN: list[dict[str, str]] = []
ANSWERS = {
    "/version": (200, b'"1.0.0"'),
    "/items/proxy": (404, b'{"detail": "Not Found"}'),  # the framework's, not the API's model
    "/items/gone": (404, b'{"code": 404, "message": "gone"}'),
}


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await read_body(receive)
    SEEN.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
    status, body = ANSWERS.get(scope["path"], (404, b"{}"))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def url() -> Any:
    with serve_asgi(app) as found:
        yield found


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    return compile_spec(SPEC, suffix=".yaml")


def _call(pkg: ModuleType, url: str, tool: str, **args: Any) -> Any:
    with HttpClient(pkg.API, base_url=url, credentials={"ApiKeyAuth": None}) as client:
        call = pkg.CallAdapter.validate_python({"_tool": tool, **args})
        return pkg.HttpActivities(client).activities()[tool](call)


def test_a_json_string_declared_as_text_is_its_string(pkg: ModuleType, url: str) -> None:
    result = _call(pkg, url, "getVersion")
    assert result.success, result.error
    assert result.data.root == "1.0.0"
    assert "read_as" not in result.metadata  # read as it arrived: JSON


def test_a_scheme_given_none_is_met_and_nothing_is_sent(pkg: ModuleType, url: str) -> None:
    with HttpClient(pkg.API, base_url=url) as client:  # no credentials: the requirement is unmet
        call = pkg.CallAdapter.validate_python({"_tool": "getVersion"})
        with pytest.raises(HttpConfigurationError, match=r"needs credentials for \[ApiKeyAuth\]"):
            pkg.HttpActivities(client).activities()["getVersion"](call)
    SEEN.clear()
    assert _call(pkg, url, "getVersion").success
    assert len(SEEN) == 1 and "x-api-key" not in SEEN[0]


def test_an_error_body_is_typed_only_when_it_carries_a_field_of_the_model(
    pkg: ModuleType, url: str
) -> None:
    foreign = _call(pkg, url, "getItem", id="proxy")
    assert not foreign.success
    assert foreign.data == {"detail": "Not Found"}
    assert "error_model" not in foreign.metadata
    assert foreign.metadata["error_model_unmatched"] == "Problem"
    own = _call(pkg, url, "getItem", id="gone")
    assert not own.success
    assert own.metadata["error_model"] == "Problem"
    assert (own.data.code, own.data.message) == (404, "gone")


def test_serve_answers_the_string_without_credentials(tmp_path: Path, url: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    spec = tmp_path / "answered.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    creds = tmp_path / "creds.yaml"
    creds.write_text("ApiKeyAuth: null\n", encoding="utf-8")
    args = ["serve", str(spec), "--base-url", url, "--credentials", str(creds)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolbind.cli", *args], cwd=str(REPO)
    )

    async def main() -> None:
        async with Client(params) as client:
            answer = await client.call_tool("getVersion", {})
            block = answer.content[0]
            assert block.type == "text"
            assert not answer.is_error, block.text
            assert block.text == "1.0.0"

    SEEN.clear()
    asyncio.run(main())
    assert len(SEEN) == 1 and "x-api-key" not in SEEN[0]
