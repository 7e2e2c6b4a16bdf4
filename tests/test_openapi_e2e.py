"""OpenAPI end to end: a running FastAPI app's ``/openapi.json`` is compiled by toolbind, and the
generated HTTP Activities call that app through ``toolbind.runtime.http.HttpClient``.

Nothing is hand-written between the spec and the call: the Call models, ``API`` and
``HttpActivities`` are the compiler's output for the document the live server serves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests import http_app
from tests._servers import serve_asgi
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpClient, RetryPolicy

from .test_http import CREDENTIALS, SECRETS

FAST = RetryPolicy(max_attempts=3, backoff=0.01, max_backoff=0.05, max_retry_after=0.2)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, HttpClient]]:
    with serve_asgi(http_app.app) as url:
        spec = httpx.get(f"{url}/openapi.json").json()
        tmp = tmp_path_factory.mktemp("e2e")
        path = tmp / "test_api.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        compile_to_directory([path], tmp / "out")
        pkg = load_package(tmp / "out", "test_api")
        port = str(urlsplit(url).port)
        with HttpClient(
            pkg.API, server_variables={"port": port}, credentials=CREDENTIALS, retry=FAST
        ) as client:
            yield pkg, client


def call(pkg: ModuleType, tool: str, **fields: Any) -> Any:
    return pkg.CallAdapter.validate_python({"_tool": tool, **fields})


def activity(pkg: ModuleType, client: HttpClient, tool: str) -> Any:
    acts: Any = pkg.HttpActivities(client)
    return acts.activities()[tool]


def test_every_operation_became_a_tool(served: tuple[ModuleType, HttpClient]) -> None:
    pkg, _ = served
    names = {t.name for t in pkg.TOOLS}
    assert {"getItem", "createPet", "submitForm", "upload", "echoGet", "authBearer"} <= names
    assert set(pkg.OPERATIONS) == names
    assert pkg.OPERATIONS["createPet"][:2] == ("POST", "/pets")


def test_path_query_header_cookie_parameters(served: tuple[ModuleType, HttpClient]) -> None:
    pkg, client = served
    c = call(pkg, "getItem", item_id="a b?c#d", q="x", **{"x-trace": "t1", "session": "s1"})
    result = activity(pkg, client, "getItem")(c)
    assert result.success, result.error
    data = result.data.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert data["item_id"] == "a b?c#d" and data["q"] == "x"
    assert data["trace"] == "t1" and data["session"] == "s1"
    assert data["raw_path"] == "/items/a%20b%3Fc%23d"  # never a query or a fragment


def test_json_body_returns_typed_output(served: tuple[ModuleType, HttpClient]) -> None:
    pkg, client = served
    result = activity(pkg, client, "createPet")(call(pkg, "createPet", name="Rex", tags=["a"]))
    assert result.success, result.error
    assert result.metadata["status"] == 201
    assert type(result.data).__name__ != "dict"  # validated into the generated Output model
    assert result.data.model_dump(mode="json", by_alias=True) == {
        "id": 7,
        "name": "Rex",
        "tags": ["a"],
    }


def test_auth_schemes_from_configuration(served: tuple[ModuleType, HttpClient]) -> None:
    pkg, client = served
    for tool in ("authBearer", "authBasic", "authApiKeyHeader", "authOauth"):
        result = activity(pkg, client, tool)(call(pkg, tool))
        assert result.success, (tool, result.error)
        text = json.dumps(result.model_dump(mode="json"))
        assert not any(secret in text for secret in SECRETS), tool


def test_non_2xx_is_a_failed_result(served: tuple[ModuleType, HttpClient]) -> None:
    pkg, client = served
    result = activity(pkg, client, "status")(call(pkg, "status", code=418))
    assert not result.success
    assert result.metadata["status"] == 418


def test_async_activities(served: tuple[ModuleType, HttpClient]) -> None:
    import asyncio

    pkg, client = served
    acts: Any = pkg.HttpActivities(client)
    fn = acts.async_activities()["createPet"]
    result = asyncio.run(fn(call(pkg, "createPet", name="Async", tags=[])))
    assert result.success, result.error
    assert result.data.model_dump(mode="json", by_alias=True)["name"] == "Async"
