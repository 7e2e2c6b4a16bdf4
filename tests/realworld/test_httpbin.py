"""A real third-party server, installed from PyPI, with its own spec as it serves it: httpbin.

httpbin (the psf/httpbin Flask app) runs on 127.0.0.1 under werkzeug's server; its Swagger 2.0 spec
is downloaded from ``/spec.json`` (flasgger) and compiled as served — it says ``type: int``, names
path parameters it does not declare and has ``trace`` operations, each read with a warning — then
its operations are called through the generated HTTP Activities: path, query and header
parameters, form and JSON bodies, credentials configured with ``headers=``, redirects (relative,
absolute, to another path), status codes, cookies within a session, gzip/deflate/brotli, JSON
lines and bytes. Each result is checked against what httpbin documents it answers.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from tests._servers import serve_wsgi
from tests.conftest import unload
from toolbind.runtime.http import HttpClient

from ._served import compile_served

httpbin = pytest.importorskip("httpbin", reason="httpbin is in the test extra (make install)")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_wsgi(httpbin.app, name="httpbin") as base:
        yield base


@pytest.fixture(scope="module")
def pkg(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("httpbin")
    package, note, warnings = compile_served(f"{server}/spec.json", root, "httpbin_api")
    assert "operations 78 → 78 emitted" in note, note  # every operation, trace ones included
    assert any("type 'int' is not a JSON Schema type; read as 'integer'" in w for w in warnings)
    yield package
    unload("httpbin_api")


Check = Callable[[Any, dict[str, Any]], bool]


def _json(key: str, value: Any) -> Check:
    return lambda data, meta: data[key] == value


CASES: list[tuple[str, dict[str, Any], int, Check]] = [
    ("get_get", {}, 200, lambda d, m: d["url"].endswith("/get")),
    ("post_post", {}, 200, lambda d, m: d["form"] == {}),
    ("put_put", {}, 200, lambda d, m: d["data"] == ""),
    ("patch_patch", {}, 200, lambda d, m: d["data"] == ""),
    ("delete_delete", {}, 200, lambda d, m: d["args"] == {}),
    ("get_anything", {}, 200, _json("method", "GET")),
    ("post_anything", {}, 200, _json("method", "POST")),
    ("put_anything", {}, 200, _json("method", "PUT")),
    ("delete_anything", {}, 200, _json("method", "DELETE")),
    (
        "get_anything_by_anything",
        {"anything": "a b/c"},
        200,
        lambda d, m: "/anything/a" in d["url"],
    ),
    (
        "get_base_64_by_value",
        {"value": "aGVsbG8gdG9vbGJpbmQ="},
        200,
        lambda d, m: d == "hello toolbind",
    ),
    ("get_bytes_by_n", {"n": 32}, 200, lambda d, m: len(base64.b64decode(d)) == 32),
    ("get_stream_bytes_by_n", {"n": 20}, 200, lambda d, m: len(base64.b64decode(d)) == 20),
    (
        "get_range_by_numbytes",
        {"numbytes": 10},
        200,
        lambda d, m: base64.b64decode(d) == b"abcdefghij",
    ),
    ("get_gzip", {}, 200, _json("gzipped", True)),
    ("get_deflate", {}, 200, _json("deflated", True)),
    ("get_brotli", {}, 200, _json("brotli", True)),
    ("get_headers", {}, 200, lambda d, m: d["headers"]["User-Agent"].startswith("toolbind/")),
    ("get_user_agent", {}, 200, lambda d, m: d["user-agent"].startswith("toolbind/")),
    ("get_ip", {}, 200, _json("origin", "127.0.0.1")),
    ("get_uuid", {}, 200, lambda d, m: len(d["uuid"]) == 36),
    ("get_json", {}, 200, lambda d, m: d["slideshow"]["author"] == "Yours Truly"),
    ("get_html", {}, 200, lambda d, m: "Moby-Dick" in d),
    ("get_xml", {}, 200, lambda d, m: d.startswith("<?xml")),
    ("get_robots_txt", {}, 200, lambda d, m: "Disallow: /deny" in d),
    ("get_encoding_utf_8", {}, 200, lambda d, m: "Unicode Demo" in d),
    ("get_image_png", {}, 200, lambda d, m: base64.b64decode(d).startswith(b"\x89PNG")),
    ("get_image_svg", {}, 200, lambda d, m: "<svg" in d),
    ("get_cache_by_value", {"value": 60}, 200, lambda d, m: d["url"].endswith("/cache/60")),
    ("get_etag_by_etag", {"etag": "abc"}, 200, lambda d, m: m["headers"].get("etag") == "abc"),
    ("get_delay_by_delay", {"delay": 0}, 200, lambda d, m: d["url"].endswith("/delay/0")),
    (
        "get_drip",
        {"duration": 0, "numbytes": 5, "code": 200, "delay": 0},
        200,
        lambda d, m: base64.b64decode(d) == b"*****",
    ),
    ("get_links_by_n_by_offset", {"n": 3, "offset": 1}, 200, lambda d, m: "/links/3/2" in d),
    ("get_stream_by_n", {"n": 3}, 200, lambda d, m: [x["id"] for x in d] == [0, 1, 2]),
    ("get_redirect_by_n", {"n": 3}, 200, lambda d, m: m["redirects"] == 3),
    ("get_relative_redirect_by_n", {"n": 2}, 200, lambda d, m: m["redirects"] == 2),
    ("get_absolute_redirect_by_n", {"n": 2}, 200, lambda d, m: m["redirects"] == 2),
    ("get_redirect_to", {"url": "/uuid", "status_code": 307}, 200, lambda d, m: "uuid" in d),
    ("get_status_by_codes", {"codes": "204"}, 204, lambda d, m: d is None),
    ("get_status_by_codes", {"codes": "418"}, 418, lambda d, m: "teapot" in d),
    ("get_status_by_codes", {"codes": "503"}, 503, lambda d, m: m["attempts"] == 3),  # retried
    ("get_response_headers", {}, 200, lambda d, m: d["Content-Type"] == "application/json"),
    (
        "get_cookies_set_by_name_by_value",
        {"name": "flavour", "value": "oat"},
        200,
        lambda d, m: d["cookies"] == {"flavour": "oat"},
    ),
    ("get_cookies", {}, 200, lambda d, m: d["cookies"] == {"flavour": "oat"}),  # the same session
    ("get_bearer", {}, 200, _json("token", "t0ken-configured")),
    (
        "get_basic_auth_by_user_by_passwd",
        {"user": "ann", "passwd": "pw"},
        200,
        _json("authenticated", True),
    ),
]


def test_httpbins_own_spec_works_against_httpbin(pkg: ModuleType, server: str) -> None:
    auth = base64.b64encode(b"ann:pw").decode()
    called = correct = 0
    wrong: list[str] = []
    # credentials from configuration (httpbin's spec declares no security scheme): headers=
    with HttpClient(pkg.API, base_url=server, retry=None) as client:
        acts = pkg.HttpActivities(client).activities()
        for tool, args, status, check in CASES:
            headers = {"Authorization": "Bearer t0ken-configured"} if tool == "get_bearer" else {}
            if tool.startswith("get_basic_auth"):
                headers = {"Authorization": f"Basic {auth}"}
            call = pkg.CallAdapter.validate_python({"_tool": tool, **args})
            if headers:
                with HttpClient(pkg.API, base_url=server, headers=headers) as authed:
                    result = pkg.HttpActivities(authed).activities()[tool](call)
            else:
                result = acts[tool](call)
            called += 1
            data = (
                result.data.model_dump(mode="json")
                if hasattr(result.data, "model_dump")
                else result.data
            )
            ok = result.metadata["status"] == status and result.success == (200 <= status < 300)
            if ok and check(data, result.metadata):
                correct += 1
            else:
                wrong.append(
                    f"{tool} {args}: {result.metadata['status']} {result.error} {str(data)[:200]}"
                )
    assert called >= 45 and correct == called, "\n".join(wrong)
