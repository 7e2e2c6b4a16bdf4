"""Declared error responses are typed: a failed call's body is read into the
model the operation declares for its status — the exact code, then ``4XX``/``5XX``, then
``default`` — against a live server on 127.0.0.1, through the generated HTTP Activities (sync and
async). A body that does not fit its model stays as the API sent it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests._servers import serve_asgi
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import ToolResult
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.0.3
info: {title: errors, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: the item
          content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}
        "404":
          description: no such item
          content:
            application/json:
              schema:
                type: object
                required: [error]
                properties: {error: {type: string}, id: {type: string}}
        "4XX":
          description: any other client error
          content: {application/json: {schema: {$ref: "#/components/schemas/Problem"}}}
        "5XX":
          description: a server error
          content:
            application/json:
              schema: {type: object, required: [retry_after], properties: {retry_after: {type: integer}}}
        default:
          description: anything else
          content: {application/problem+json: {schema: {$ref: "#/components/schemas/Problem"}}}
  /plain:
    get:
      operationId: plain
      responses:
        "200": {description: ok}
components:
  schemas:
    Problem:
      type: object
      required: [title, status]
      properties: {title: {type: string}, status: {type: integer}}
"""

REPLIES: dict[str, tuple[int, Any]] = {
    "ok": (200, {"id": "ok"}),
    "missing": (404, {"error": "no item", "id": "missing"}),
    "odd-404": (404, {"unexpected": True}),  # does not fit the 404 model
    "gone": (410, {"title": "Gone", "status": 410}),
    "todo": (501, {"retry_after": 3}),
    "redirect-loop": (308, {"title": "Permanent Redirect", "status": 308}),
}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    path: str = scope["path"]
    if path == "/plain":
        status, body = 404, {"title": "nothing declared", "status": 404}
    else:
        status, body = REPLIES[path.rsplit("/", 1)[1]]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    root = tmp_path_factory.mktemp("typed_errors")
    spec = root / "typed_errors.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    compile_to_directory([Path(spec)], root / "out")
    pkg = load_package(root / "out", "typed_errors")
    with serve_asgi(app) as url:
        yield pkg, url
    unload("typed_errors")


def _get(pkg: ModuleType, base: str, item: str, *, use_async: bool = False) -> Any:
    """The ToolResult: ``data`` is the Output, or the error body (typed where declared)."""
    call = pkg.GetItemCall.model_validate({"_tool": "getItem", "id": item})
    with HttpClient(pkg.API, base_url=base, max_redirects=0) as client:
        acts = pkg.HttpActivities(client)
        if use_async:
            return asyncio.run(acts.aget_item(call))
        return acts.get_item(call)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_each_status_is_read_into_its_declared_model(
    api: tuple[ModuleType, str], use_async: bool
) -> None:
    pkg, base = api
    ok = _get(pkg, base, "ok", use_async=use_async)
    assert ok.success and ok.data.id == "ok"

    missing = _get(pkg, base, "missing", use_async=use_async)
    assert not missing.success and missing.metadata["status"] == 404
    assert isinstance(missing.data, pkg.GetItemError404)  # the exact status, an inline schema
    assert missing.data.error == "no item" and missing.metadata["error_model"] == "GetItemError404"
    assert "HTTP 404" in (missing.error or "")

    gone = _get(pkg, base, "gone", use_async=use_async)
    assert isinstance(gone.data, pkg.Problem)  # 4XX, the shared component's own class
    assert (gone.data.title, gone.data.status) == ("Gone", 410)

    todo = _get(pkg, base, "todo", use_async=use_async)
    assert isinstance(todo.data, pkg.GetItemError5xx) and todo.data.retry_after == 3


def test_a_body_that_does_not_fit_stays_as_sent(api: tuple[ModuleType, str]) -> None:
    pkg, base = api
    odd = _get(pkg, base, "odd-404")
    assert not odd.success and odd.data == {"unexpected": True}
    assert "error_model" not in odd.metadata


def test_the_default_model_takes_what_no_status_names(api: tuple[ModuleType, str]) -> None:
    pkg, base = api
    moved = _get(pkg, base, "redirect-loop")  # 308 with no Location: neither 4XX nor 5XX
    assert not moved.success and moved.metadata["status"] == 308
    assert isinstance(moved.data, pkg.Problem) and moved.metadata["error_model"] == "Problem"


def test_an_operation_without_declared_errors_keeps_the_body(api: tuple[ModuleType, str]) -> None:
    pkg, base = api
    call = pkg.PlainCall.model_validate({"_tool": "plain"})
    with HttpClient(pkg.API, base_url=base) as client:
        result = pkg.HttpActivities(client).plain(call)
    assert not result.success and result.data == {"title": "nothing declared", "status": 404}


def test_typed_error_leaves_other_results_alone() -> None:
    from pydantic import BaseModel

    class Err(BaseModel):
        message: str

    models: dict[str, type[BaseModel]] = {"default": Err}
    ok = ToolResult[Any].ok({"message": "fine"}, status=200)
    assert ok.typed_error(models) is ok
    refused = ToolResult[Any].fail("refused", data={"message": "x"}, error_type="refused_url")
    assert refused.typed_error(models) is refused  # not an HTTP status: nothing to read
    failed = ToolResult[Any].fail(
        "HTTP 400", data={"message": "bad"}, status=400, error_type="http_status"
    )
    typed = failed.typed_error(models)
    assert isinstance(typed.data, Err) and typed.data.message == "bad"
    assert failed.data == {"message": "bad"}  # a new result; the old one is unchanged
