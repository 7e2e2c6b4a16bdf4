"""A request says exactly what its Call says, and what the API would refuse is refused first,
with a message for the model — each checked on a real server (a raw ASGI app, uvicorn on
127.0.0.1) that records what reached it:

- an empty path parameter, last or not: refused by the Call model (``minLength: 1``) and by the
  HTTP client for a Call made without validation — ``POST /conversations/{sid}`` with an empty
  sid went out as ``POST /conversations/``, the collection's URL (a create, not an update);
- a required array of a form or multipart body given ``[]``: refused the same two ways — it was
  left out of the request in silence (a form body cannot say ``[]``);
- OpenAPI's ``int32``/``int64`` ranges and the ``uuid``, ``date`` and ``date-time`` formats in
  parameters and bodies: checked by the Call, the string sent as the model wrote it — they
  passed, and the API refused them one round trip later. A response is read as it comes
  (a definition it shares with a request is not checked), and ``format_checks=False``
  (``--no-format-checks``) leaves every format unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl

import pytest
from hypothesis import given, settings
from pydantic import ValidationError

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpClient
from toolbind.testing import strategies_for
from toolbind.testing._contract import call_schema

SPEC = """\
openapi: 3.0.3
info: {title: sent as called, version: '1'}
paths:
  /conversations:
    post:
      operationId: createConversation
      responses: {'201': {description: created}}
  /conversations/{sid}:
    post:
      operationId: updateConversation
      parameters: [{name: sid, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: updated}}
  /users/{id}/keys:
    get:
      operationId: listKeys
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {'200': {description: the keys}}
  /labels:
    post:
      operationId: setLabels
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [labels]
              properties:
                labels: {type: array, items: {type: string}}
                note: {type: string}
      responses: {'200': {description: set}}
  /files:
    post:
      operationId: tagFiles
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [ids]
              properties:
                ids: {type: array, items: {type: string}}
                extra: {type: array, items: {type: string}}
      responses: {'200': {description: tagged}}
  /items/{id}:
    put:
      operationId: putItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, format: uuid}}
        - {name: limit, in: query, schema: {type: integer, format: int32, minimum: 1}}
        - {name: since, in: query, schema: {type: string, format: date}}
        - {name: scale, in: query, schema: {type: number, format: float}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                count: {type: integer, format: int64}
                at: {type: string, format: date-time}
                ratio: {type: number, format: float}
                weight: {type: number, format: double, minimum: 0}
                owner: {type: object, properties: {ref: {type: string, format: uuid}}}
                item: {$ref: '#/components/schemas/Item'}
      responses:
        '200':
          description: the item
          content: {application/json: {schema: {$ref: '#/components/schemas/Item'}}}
components:
  schemas:
    Item:
      type: object
      properties:
        id: {type: string, format: uuid}
        size: {type: integer, format: int32}
"""

UUID = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
SEEN: list[tuple[str, str, bytes]] = []


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    query = scope["query_string"].decode()
    SEEN.append((scope["method"], scope["path"] + (f"?{query}" if query else ""), body))
    # a response whose formats the API does not keep (an id that is no uuid, a size > int32)
    out = json.dumps({"id": "item-7", "size": 2**40}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def _compile(tmp_path: Path, name: str, **options: Any) -> ModuleType:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    compile_to_directory([spec], tmp_path / name, **options)
    return load_package(tmp_path / name, name)


@pytest.fixture
def pkg(tmp_path: Path) -> Any:
    yield _compile(tmp_path, "sent_as_called")
    unload("sent_as_called")


def _run(pkg: Any, tool: str, call: Any) -> Any:
    with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
        return pkg.HttpActivities(client).activities()[tool](call)


def _call(pkg: Any, tool: str, **args: Any) -> Any:
    return _run(pkg, tool, pkg.CallAdapter.validate_python({"_tool": tool, **args}))


def _unchecked(pkg: Any, cls: str, **fields: Any) -> Any:
    """A Call made without validation (``model_construct``), as code may hand one over."""
    return getattr(pkg, cls).model_construct(**fields)


def _refused_by_the_call(pkg: Any, tool: str, **args: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        pkg.CallAdapter.validate_python({"_tool": tool, **args})
    return str(caught.value)


def test_an_empty_path_parameter_is_refused_never_sent_as_another_url(pkg: Any) -> None:
    before = len(SEEN)
    # the Call tells the model (its schema says so too)
    assert "at least 1 character" in _refused_by_the_call(pkg, "updateConversation", sid="")
    assert "at least 1 character" in _refused_by_the_call(pkg, "listKeys", id="")
    schema = pkg.UpdateConversationCall.model_json_schema(by_alias=True)
    assert schema["properties"]["sid"]["minLength"] == 1
    # a Call made without validation: refused by the client, last parameter or not
    for tool, cls, field in (
        ("updateConversation", "UpdateConversationCall", "sid"),
        ("listKeys", "ListKeysCall", "id"),
    ):
        result = _run(pkg, tool, _unchecked(pkg, cls, **{field: ""}))
        assert not result.success and result.metadata["error_type"] == "invalid_input"
        assert f"path parameter {field!r} is empty" in (result.error or "")
    assert len(SEEN) == before  # nothing reached the server: no create in place of an update
    assert _call(pkg, "updateConversation", sid="CH1").success
    assert SEEN[-1][:2] == ("POST", "/conversations/CH1")


def test_a_required_form_array_given_empty_is_refused_not_dropped(pkg: Any) -> None:
    before = len(SEEN)
    assert "at least 1 item" in _refused_by_the_call(pkg, "setLabels", labels=[], note="n")
    assert "at least 1 item" in _refused_by_the_call(pkg, "tagFiles", ids=[])
    for tool, cls, field in (
        ("setLabels", "SetLabelsCall", "labels"),
        ("tagFiles", "TagFilesCall", "ids"),
    ):
        result = _run(pkg, tool, _unchecked(pkg, cls, **{field: []}))
        assert not result.success and result.metadata["error_type"] == "invalid_input"
        assert f"body property {field!r} is required and its value [] is empty" in (
            result.error or ""
        )
    assert len(SEEN) == before
    # sent as the items, and an optional array given [] is still absent
    assert _call(pkg, "setLabels", labels=["a", "b"], note="n").success
    assert parse_qsl(SEEN[-1][2].decode()) == [("labels", "a"), ("labels", "b"), ("note", "n")]
    assert _call(pkg, "tagFiles", ids=["7"], extra=[]).success
    assert b'name="ids"' in SEEN[-1][2] and b'name="extra"' not in SEEN[-1][2]


BAD = [
    ({"id": "not-a-uuid"}, "'uuid'"),
    ({"limit": 2**31}, "less than or equal to 2147483647"),
    ({"limit": 0}, "greater than or equal to 1"),  # (the schema's own minimum still holds)
    ({"since": "2024-02-30"}, "'date'"),
    ({"count": 2**63}, "less than or equal to 9223372036854775807"),
    ({"at": "2024-05-01 10:00"}, "'date-time'"),
    ({"owner": {"ref": "x"}}, "'uuid'"),  # an object written inline in the body
    # IEEE-754: a float's range is single precision's (a double's, double's), and no number is
    # NaN or an infinity (every model's ``allow_inf_nan=False``)
    ({"scale": 3.5e38}, "<= 3.4028234663852886e+38 (format float)"),
    ({"ratio": -(10**39)}, ">= -3.4028234663852886e+38 (format float)"),
    ({"weight": 10**309}, "<= 1.7976931348623157e+308 (format double)"),
    ({"ratio": float("nan")}, "should be a finite number"),
    ({"weight": float("inf")}, "should be a finite number"),
    ({"weight": -1.0}, ">= 0"),  # (the schema's own minimum still holds)
]


@pytest.mark.parametrize(("bad", "said"), BAD)
def test_formats_the_api_validates_are_checked_before_sending(
    pkg: Any, bad: dict[str, Any], said: str
) -> None:
    before = len(SEEN)
    args = {"id": UUID, **bad}
    assert said in _refused_by_the_call(pkg, "putItem", **args)
    assert len(SEEN) == before


def test_a_valid_call_is_sent_as_written_and_a_response_read_as_it_comes(pkg: Any) -> None:
    upper = UUID.upper()  # a uuid as the model wrote it: never normalised
    result = _call(
        pkg,
        "putItem",
        id=upper,
        limit=2**31 - 1,
        since="2024-02-29",
        count=-(2**63),
        at="2024-05-01T10:00:00+02:00",
        owner={"ref": UUID},
        item={"id": "anything", "size": 2**40},  # a shared definition: not checked
        scale=-3.4028234663852886e38,
        ratio=3.4028234663852886e38,
        weight=1.7976931348623157e308,
    )
    assert result.success, result.error
    method, path, body = SEEN[-1]
    assert (method, path) == (
        "PUT",
        f"/items/{upper}?limit=2147483647&since=2024-02-29&scale=-3.4028234663852886e%2B38",
    )
    assert json.loads(body)["at"] == "2024-05-01T10:00:00+02:00"
    assert json.loads(body)["ratio"] == 3.4028234663852886e38
    assert json.loads(body)["count"] == -(2**63)
    # the response breaks both formats: read as it came, typed
    assert result.data.id == "item-7" and result.data.size == 2**40


def test_format_checks_can_be_turned_off(tmp_path: Path) -> None:
    loose = _compile(tmp_path, "sent_unchecked", format_checks=False)
    try:
        call = loose.CallAdapter.validate_python(
            {"_tool": "putItem", "id": "not-a-uuid", "limit": 2**31, "since": "2024-02-30"}
            | {"ratio": 1e39}
        )
        assert _run(loose, "putItem", call).success
        assert SEEN[-1][1] == "/items/not-a-uuid?limit=2147483648&since=2024-02-30"
        # an empty path parameter is refused whatever the option: it is not a format
        assert "at least 1 character" in _refused_by_the_call(loose, "updateConversation", sid="")
    finally:
        unload("sent_unchecked")


SWAGGER = """\
swagger: '2.0'
info: {title: form parameters, version: '1'}
consumes: [application/x-www-form-urlencoded]
paths:
  /labels:
    post:
      operationId: setLabels
      parameters:
        - {name: labels, in: formData, required: true, type: array, items: {type: string}}
        - {name: note, in: formData, required: true, type: string}
      responses: {'200': {description: set}}
"""


def test_a_required_swagger_form_array_given_empty_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "sent_swagger.yaml"
    spec.write_text(SWAGGER, encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "sent_swagger")
    try:
        before = len(SEEN)
        assert "at least 1 item" in _refused_by_the_call(pkg, "setLabels", labels=[], note="n")
        result = _run(pkg, "setLabels", _unchecked(pkg, "SetLabelsCall", labels=[], note="n"))
        assert result.metadata["error_type"] == "invalid_input", result
        assert len(SEEN) == before
        # (a required string may be empty: a form sends it as `note=`)
        assert _call(pkg, "setLabels", labels=["a,b"], note="").success
        assert parse_qsl(SEEN[-1][2].decode(), keep_blank_values=True) == [
            ("labels", "a,b"),
            ("note", ""),
        ]
    finally:
        unload("sent_swagger")


def test_the_calls_contract_draws_only_what_the_call_takes(pkg: Any) -> None:
    # the Call schema says `format: int32`; toolbind.testing draws within its range (and valid
    # uuids and dates), so a contract test never blames the Call for the checks it adds
    binding = next(b for b in pkg.TOOLS if b.name == "putItem")
    exported = json.dumps(call_schema(binding))
    assert '"format": "int32"' in exported and '"format": "int64"' in exported
    assert '"format": "float"' in exported and '"format": "double"' in exported

    @settings(max_examples=150, database=None, derandomize=True, deadline=None)
    @given(strategies_for(binding))
    def accepted(instance: Any) -> None:
        pkg.CallAdapter.validate_python(instance)

    accepted()


EMPTY_FORMS = """\
openapi: 3.1.0
info: {title: empty forms, version: '1'}
paths:
  /any:
    post:
      operationId: anyFields
      requestBody:
        required: true
        content: {application/x-www-form-urlencoded: {schema: {type: object}}}
      responses: {'204': {description: done}}
  /none:
    post:
      operationId: noFields
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, additionalProperties: false}
      responses: {'204': {description: done}}
  /optional:
    post:
      operationId: optionalFields
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {note: {type: string}}}
      responses: {'204': {description: done}}
  /parts:
    post:
      operationId: optionalParts
      requestBody:
        required: true
        content: {multipart/form-data: {schema: {type: object}}}
      responses: {'204': {description: done}}
  /maybe:
    post:
      operationId: maybeForm
      requestBody:
        content: {application/x-www-form-urlencoded: {schema: {type: object}}}
      responses: {'204': {description: done}}
"""
HEARD: list[tuple[str, dict[str, str], bytes]] = []


async def recording_app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """Records each request's path, framing headers and body; answers 204."""
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    framing = (b"content-type", b"content-length", b"transfer-encoding")
    headers = {k.decode(): v.decode() for k, v in scope["headers"] if k in framing}
    HEARD.append((scope["path"], headers, body))
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_a_required_form_body_with_no_fields_given_is_sent_as_an_empty_form(
    tmp_path: Path,
) -> None:
    # A required body is in the request (OpenAPI's requestBody.required); a form with no
    # field is the empty string (the urlencoded serialisation of no pair): sent with its
    # Content-Type. A body that is not required and says nothing is not sent at all.
    spec = tmp_path / "empty_forms.yaml"
    spec.write_text(EMPTY_FORMS, encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    pkg = load_package(tmp_path / "out", "empty_forms")
    form = "application/x-www-form-urlencoded"
    try:
        with serve_asgi(recording_app) as url, HttpClient(pkg.API, base_url=url) as client:
            acts = pkg.HttpActivities(client).activities()
            for tool in ("anyFields", "noFields", "optionalFields", "optionalParts", "maybeForm"):
                # nothing to say: the Call needs no field (the model is not asked for `body: {}`)
                call = pkg.CallAdapter.validate_python({"_tool": tool})
                schema = call.model_json_schema(by_alias=True)
                assert not set(schema.get("required", [])) - {"_tool"}, (tool, schema)
                assert acts[tool](call).success
            # the free-form body still takes fields
            given = pkg.CallAdapter.validate_python({"_tool": "anyFields", "body": {"a": "1"}})
            assert acts["anyFields"](given).success
    finally:
        unload("empty_forms")
    empty_form = {"content-type": form, "content-length": "0"}
    assert [(path, headers) for path, headers, _ in HEARD[:3]] == [
        ("/any", empty_form),
        ("/none", empty_form),
        ("/optional", empty_form),
    ]
    assert all(body == b"" for _, _, body in HEARD[:3])
    path, headers, body = HEARD[3]  # a multipart body: its close delimiter, no part
    boundary = headers["content-type"].removeprefix("multipart/form-data; boundary=")
    assert path == "/parts" and body == f"--{boundary}--\r\n".encode()
    assert HEARD[4] == ("/maybe", {"content-length": "0"}, b"")  # not required: no body
    assert HEARD[5] == ("/any", {"content-type": form, "content-length": "3"}, b"a=1")
