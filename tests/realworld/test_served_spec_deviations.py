"""Deviations found by calling real third-party servers with their own served specs
(``test_kinto.py``), each reduced to a minimal spec of our own, compiled and called against the
live test app on 127.0.0.1:

- a path parameter whose name is no ``{template}`` of the path (Kinto's cornice_swagger writes
  ``collection_id}@{timestamp`` beside ``collection_id`` and ``timestamp``): it was a required Call
  field, and at run time its value replaced the whole ``{collection_id}@{timestamp}`` part of the
  URL, so the real parameters went nowhere;
- ``304 Not Modified`` (the answer to the caller's own ``If-None-Match``) came back as a failed
  call; it is a success with no data, as ``204`` is;
- a 200 declaring both ``application/json`` and ``text/event-stream`` (llama-cpp-python's server,
  which streams when the body says ``stream: true``): the event stream, read as a list of values,
  was checked against the JSON answer's Output model and every streamed call failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests._servers import serve_asgi
from tests.conftest import unload
from toolbind.compiler import SpecError, compile_to_directory, generate_tree, load_package
from toolbind.runtime.contract import HttpParameter
from toolbind.runtime.http import HttpClient
from toolbind.runtime.http._params import (
    render_path,  # pyright: ignore[reportPrivateUsage]
)

from .app import app

SPEC = Path(__file__).parent / "specs" / "path_param_off_template.yaml"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_asgi(app) as base:
        yield f"{base}/api"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = tmp_path_factory.mktemp("served") / "out"
    compile_to_directory([SPEC], out)
    yield load_package(out, "path_param_off_template")
    unload("path_param_off_template")


def _call(pkg: ModuleType, base: str, payload: dict[str, Any]) -> Any:
    call = pkg.CallAdapter.validate_python(payload)
    with HttpClient(pkg.API, base_url=base) as client:
        return pkg.HttpActivities(client).activities()[payload["_tool"]](call)


def test_a_path_parameter_the_template_does_not_name_is_reported_not_a_field(
    pkg: ModuleType, server: str
) -> None:
    tree = generate_tree([SPEC])
    rendered = [d.render() for d in tree.diagnostics]
    where = "path_param_off_template.yaml#/paths/~1snapshots~1{bucket}~1{name}@{at}/parameters/1"
    assert any(
        f"{where}: warning: path parameter 'name}}@{{at' is not named in the path" in r
        for r in rendered
    ), rendered
    note = next(d.found for d in tree.diagnostics if "read → emitted" in d.found)
    assert "parameters in path 4 → 3 emitted, 1 reported" in note, note
    schema = pkg.GetSnapshotCall.model_json_schema(by_alias=True)
    fields = {k for k in schema["properties"] if not k.startswith("_")}
    assert fields == {"bucket", "name", "at", "If-None-Match"}
    assert {k for k in schema["required"] if not k.startswith("_")} == {"bucket", "name", "at"}
    found = _call(pkg, server, {"_tool": "getSnapshot", "bucket": "b1", "name": "c1", "at": 42})
    assert found.success, found.error
    assert found.metadata["url"].endswith("/api/snapshots/b1/c1@42")
    assert found.data.model_dump(mode="json") == {"bucket": "b1", "name": "c1", "at": 42}
    with pytest.raises(SpecError, match="is not named in the path"):
        generate_tree([SPEC], strict=True)


def test_a_parameter_replaces_only_its_own_template_expression() -> None:
    """The runtime half: even given such a parameter (a hand-written ``HttpApi``), each value
    replaces the ``{name}`` of its own name only, in one pass."""

    def param(name: str) -> HttpParameter:
        return HttpParameter(name=name, field=name, location="path", style="simple", explode=False)

    path = render_path(
        "/s/{name}@{at}/{b}",
        [(param("name}@{at"), "zz"), (param("name"), "c1"), (param("at"), 7), (param("b"), "{at}")],
    )
    assert path == "/s/c1@7/%7Bat%7D"


def test_304_is_a_success_with_no_data(pkg: ModuleType, server: str) -> None:
    args = {"_tool": "getSnapshot", "bucket": "b1", "name": "c1", "at": 1}
    fresh = _call(pkg, server, args)
    assert fresh.success and fresh.metadata["status"] == 200
    unchanged = _call(pkg, server, {**args, "If-None-Match": '"v1"'})
    assert unchanged.success, unchanged.error
    assert unchanged.metadata["status"] == 304 and "error_type" not in unchanged.metadata
    assert unchanged.data is None


STREAM_SPEC = Path(__file__).parent / "specs" / "stream_or_json.yaml"


def test_a_streamed_answer_beside_a_json_one_is_the_list_of_values(
    server: str, tmp_path: Path
) -> None:
    """The Output model describes the JSON answer; the event stream the same operation sends
    when asked to was read into a list and checked against it: every streamed call failed."""
    compile_to_directory([STREAM_SPEC], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "stream_or_json")
    try:
        whole = _call(pkg, server, {"_tool": "count", "upto": 3})
        assert whole.success, whole.error
        assert whole.data.model_dump(mode="json") == {"n": 3}
        assert "stream" not in whole.metadata
        streamed = _call(pkg, server, {"_tool": "count", "upto": 3, "stream": True})
        assert streamed.success, streamed.error
        assert streamed.metadata["stream"] == "event-stream"
        assert streamed.data == [{"n": 1}, {"n": 2}, {"n": 3}, "[DONE]"]
    finally:
        unload("stream_or_json")
