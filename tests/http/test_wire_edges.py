"""What real APIs send and take at the edges of the wire, found on specs nobody here had used
(Box, Qdrant, Spotify), each checked on a real server (a raw ASGI app, uvicorn on 127.0.0.1):

- a response without ``Content-Type`` (a store that keeps none, a bare ``send_file``): read as
  the media type the operation declares, else text when the bytes are UTF-8, else base64 — it was
  decoded as UTF-8 with replacement characters, every image corrupted and reported a success;
- a redirect off the configured servers (Box's download: ``302`` to dl.boxcloud.com, a presigned
  URL): still refused, but the whole ``Location`` is in the result's headers — it was lost;
- a multipart body whose every part is optional, called with none: an empty multipart body — it
  was a ``KeyError`` from inside the client (found by calling every operation against Prism);
- a ``format: base64`` body of a binary media type (Spotify's cover upload, ``image/jpeg`` of
  base64 text): sent as that text — it was decoded and the raw bytes sent;
- an answer labelled with a media type the operation does not declare (Arize Phoenix's experiment
  download, declared ``text/plain`` and served as ``application/json``): read as declared — the
  JSON text as the string the Output model holds, text that is JSON as JSON — and said
  (``metadata["read_as"]``, a warning); it was parsed as JSON and failed the output check;
- a binary media type whose schema has no type (OpenAPI 3.1's ``image/png: {schema: {}}``, Matrix's
  media upload): the content's bytes — the Call took any value and every call was refused;
- a path written with white space around it (Matrix's ``"/rooms/{roomId}/invite "``): sent
  without, said — it went out as ``/invite%20``;
- a path key without its leading ``/`` (``ping/{n}``): sent as ``/ping/3``, said — it was
  appended to the server URL as written and refused as outside the servers;
- a required query parameter whose value is empty (``""``, ``[]``; Gotify's OIDC callback,
  listmonk's analytics, Intercom's): refused with a message for the model — it was sent as
  ``?code=``, an empty-valued parameter OpenAPI allows only with ``allowEmptyValue``, which a
  server reads as absent (Prism: "must have required property 'code'"); with
  ``allowEmptyValue: true`` it is sent.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import CompileSpec
from toolbind.compiler import compile_to_directory
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.1.0
info: {title: wire edges, version: '1'}
paths:
  /png:
    get:
      operationId: getPng
      responses:
        '200': {description: an image, content: {image/png: {schema: {type: string, format: binary}}}}
  /json:
    get:
      operationId: getJson
      responses:
        '200':
          description: an object
          content: {application/json: {schema: {type: object, properties: {n: {type: integer}}}}}
  /bytes/{kind}:
    get:
      operationId: getBytes
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200': {description: whatever the server has}
  /download:
    get:
      operationId: download
      responses:
        '200': {description: the file, content: {application/octet-stream: {}}}
        '302':
          description: the file on another host
          headers: {Location: {schema: {type: string}}}
  /cover:
    put:
      operationId: uploadCover
      requestBody:
        required: true
        content: {image/jpeg: {schema: {type: string, format: base64}}}
      responses:
        '202': {description: accepted}
  /form:
    post:
      operationId: postForm
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: {type: object, properties: {note: {type: string}, tags: {type: array, items: {type: string}}}}
      responses:
        '202': {description: accepted}
  /export/{kind}:
    get:
      operationId: export
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200': {description: the runs as a JSON file, content: {text/plain: {schema: {type: string}}}}
  /count/{kind}:
    get:
      operationId: count
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: a count
          content: {application/json: {schema: {type: object, properties: {n: {type: integer}}}}}
        '404': {description: no such thing, content: {text/html: {schema: {type: string}}}}
  /search:
    get:
      operationId: search
      parameters:
        - {name: code, in: query, required: true, schema: {type: string}}
        - {name: state, in: query, required: true, allowEmptyValue: true, schema: {type: string}}
        - {name: ids, in: query, required: true, schema: {type: array, items: {type: string}}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        '202': {description: accepted}
  /raw:
    put:
      operationId: uploadRaw
      requestBody:
        required: true
        content: {image/jpeg: {schema: {type: string, format: binary}}}
      responses:
        '202': {description: accepted}
  /upload:
    post:
      operationId: uploadContent
      requestBody: {$ref: '#/components/requestBodies/bytes'}
      responses:
        '202': {description: accepted}
  /upload/png:
    post:
      operationId: uploadPng
      requestBody:
        required: true
        content: {image/png: {schema: {}}}
      responses:
        '202': {description: accepted}
  "/rooms/{roomId}/invite ":  # Matrix's client-server inviting.yaml, as written
    post:
      operationId: inviteUser
      parameters: [{name: roomId, in: path, required: true, schema: {type: string}}]
      responses:
        '202': {description: accepted}
  ping/{n}:  # no leading slash, as hand-written specs have it
    get:
      operationId: ping
      parameters: [{name: n, in: path, required: true, schema: {type: integer}}]
      responses:
        '202': {description: accepted}
components:
  requestBodies:
    bytes:  # Matrix's content repository (matrix-org/matrix-spec, Apache-2.0)
      required: true
      content:
        application/octet-stream:
          schema: {description: The content to be uploaded., example: <bytes>}
"""

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF"
PRESIGNED = "https://dl.example.net/d/1/abc?sig=SIGNATURE&exp=123"
SEEN: list[tuple[str, dict[str, str], bytes]] = []


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = await read_body(receive)
    path: str = scope["path"]
    query = scope["query_string"].decode()
    seen = f"{path}?{query}" if query else path
    SEEN.append((seen, {k.decode(): v.decode() for k, v in scope["headers"]}, body))
    status, headers, out = 200, list[tuple[bytes, bytes]](), b""  # no Content-Type unless said
    if path == "/png":
        out = PNG
    elif path == "/json":
        out = b'{"n": 3}'
    elif path == "/bytes/binary":
        out = JPEG
    elif path == "/bytes/text":
        out = "naïve text".encode()
    elif path.startswith(("/export/", "/count/")):
        kind = path.rsplit("/", 1)[1]  # the media type it is sent as
        media = {"json": "application/json", "html": "text/html"}.get(kind, "text/plain")
        headers.append((b"content-type", media.encode()))
        out = b'[{"n": 1}]' if path.startswith("/export/") else b'{"n": 2}'
        out = b"two" if kind == "word" else out  # (text that is no JSON)
    elif path == "/download":
        status, headers = 302, [(b"location", PRESIGNED.encode())]
    else:
        status = 202
    headers.append((b"content-length", str(len(out)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": out})


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    return compile_spec(SPEC, suffix=".yaml")


def _call(pkg: ModuleType, tool: str, **args: Any) -> Any:
    with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
        call = pkg.CallAdapter.validate_python({"_tool": tool, **args})
        return pkg.HttpActivities(client).activities()[tool](call)


def test_a_response_without_content_type_is_read_as_declared(pkg: ModuleType) -> None:
    png = _call(pkg, "getPng")
    assert png.success and base64.b64decode(png.data.root, validate=True) == PNG
    assert "content-type" not in png.metadata["headers"]
    as_json = _call(pkg, "getJson")
    assert as_json.success and as_json.data.n == 3


def test_an_undeclared_response_without_content_type_is_never_decoded_lossily(
    pkg: ModuleType,
) -> None:
    binary = _call(pkg, "getBytes", kind="binary")
    assert binary.success and base64.b64decode(binary.data.root, validate=True) == JPEG
    text = _call(pkg, "getBytes", kind="text")
    assert text.success and text.data.root == "naïve text"


def test_a_refused_redirect_keeps_the_whole_location(pkg: ModuleType) -> None:
    result = _call(pkg, "download")
    assert not result.success and result.metadata["error_type"] == "redirect_refused"
    assert result.metadata["status"] == 302
    assert result.metadata["headers"]["location"] == PRESIGNED
    assert "metadata['headers']['location']" in (result.error or "")
    assert len([s for s in SEEN if s[0].startswith("/d/")]) == 0  # never followed


def test_a_base64_body_goes_out_as_its_text_and_a_binary_one_decoded(pkg: ModuleType) -> None:
    text = base64.b64encode(JPEG).decode()
    assert _call(pkg, "uploadCover", body=text).success
    path, headers, sent = SEEN[-1]
    assert (path, headers["content-type"], sent) == ("/cover", "image/jpeg", text.encode())
    assert _call(pkg, "uploadRaw", body=text).success
    path, headers, sent = SEEN[-1]
    assert (path, headers["content-type"], sent) == ("/raw", "image/jpeg", JPEG)


def test_raw_content_written_without_a_type_is_the_contents_bytes(pkg: ModuleType) -> None:
    """The defect: OpenAPI 3.1 writes raw content as a schema without a type (``image/png:
    {schema: {}}``; Matrix's media upload: ``application/octet-stream`` of ``{description,
    example}``). The Call took any value there, so the model was told nothing of what to send,
    and every call but one of base64 text was refused at run time ("expected file content
    (base64)"). It is now the content's bytes, as a binary media type without a schema is."""
    for tool in ("uploadContent", "uploadPng"):
        call: BaseModel = pkg.CallAdapter.validate_python({"_tool": tool, "body": "aGk="})
        body = type(call).model_fields["body"]
        assert body.annotation is str, (tool, body.annotation)
        (schema,) = [t.parameters for t in pkg.TOOLS if t.name == tool]
        assert schema["properties"]["body"]["type"] == "string"
        assert schema["properties"]["body"]["format"] == "binary"
        with pytest.raises(ValidationError):
            pkg.CallAdapter.validate_python({"_tool": tool, "body": {"a": 1}})
    assert _call(pkg, "uploadContent", body=base64.b64encode(JPEG).decode()).success
    path, headers, sent = SEEN[-1]
    assert (path, headers["content-type"], sent) == ("/upload", "application/octet-stream", JPEG)
    assert _call(pkg, "uploadPng", body=base64.b64encode(PNG).decode()).success
    assert SEEN[-1][0] == "/upload/png" and SEEN[-1][2] == PNG


def test_a_path_written_with_white_space_around_it_is_sent_without(
    pkg: ModuleType, tmp_path: Path
) -> None:
    """The defect: Matrix's client-server spec writes its invite path ``"/rooms/{roomId}/invite
    "`` with a trailing space; every call went to ``/rooms/…/invite%20``, which no homeserver
    routes (Prism's mock of the same spec answered "no path matched" too), and generate said
    nothing. The path is read without the white space, with a located warning."""
    spec = tmp_path / "wire_edges.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    said = [f"{d.loc.pointer}: {d.found}" for d in tree.diagnostics if "white space" in d.found]
    assert said == [
        "/paths/~1rooms~1{roomId}~1invite : the path '/rooms/{roomId}/invite ' has white space "
        "around it; read as '/rooms/{roomId}/invite'"
    ]
    assert _call(pkg, "inviteUser", roomId="r1").success
    assert SEEN[-1][0] == "/rooms/r1/invite"


def test_a_path_without_its_leading_slash_is_sent_with_it(pkg: ModuleType, tmp_path: Path) -> None:
    """The defect: a path key written ``ping/{n}`` was appended to the server URL as it was
    (``http://host/apiping/3``): every call was refused at run time as outside the configured
    servers, and generate said nothing. Read as ``/ping/{n}``, with a located warning."""
    spec = tmp_path / "wire_edges.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    said = [f"{d.loc.pointer}: {d.found}" for d in tree.diagnostics if "start with /" in d.found]
    assert said == [
        "/paths/ping~1{n}: the path 'ping/{n}' does not start with /; read as '/ping/{n}'"
    ]
    assert _call(pkg, "ping", n=3).success
    assert SEEN[-1][0] == "/ping/3"


def test_the_base64_body_is_noted_where_it_is_read(tmp_path: Path) -> None:
    spec = tmp_path / "wire_edges.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    notes = [f"{d.loc.pointer}: {d.found}" for d in tree.diagnostics if "base64 string" in d.found]
    assert notes == [
        "/paths/~1cover/put/requestBody/content/image~1jpeg/schema: the image/jpeg body is a "
        "base64 string: sent as that text, not decoded (format: binary is what sends raw bytes)"
    ]


def test_a_multipart_body_with_no_parts_is_an_empty_multipart_body(pkg: ModuleType) -> None:
    assert _call(pkg, "postForm").success
    path, headers, sent = SEEN[-1]
    media, _, boundary = headers["content-type"].partition("; boundary=")
    assert (path, media) == ("/form", "multipart/form-data") and boundary
    assert sent == f"--{boundary}--\r\n".encode()
    assert _call(pkg, "postForm", note="n").success
    assert b'name="note"' in SEEN[-1][2]


def test_an_answer_labelled_otherwise_is_read_as_the_operation_declares(
    pkg: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "toolbind.runtime.http")
    exported = _call(pkg, "export", kind="json")  # declared text/plain, sent as JSON
    assert exported.success, exported.error
    assert exported.data.root == '[{"n": 1}]'  # the JSON text: the string the Output holds
    assert exported.metadata["read_as"] == "text/plain"
    assert exported.metadata["headers"]["content-type"] == "application/json"
    assert "is application/json where the operation declares text/plain" in caplog.text
    counted = _call(pkg, "count", kind="text")  # declared JSON, sent as text that is JSON
    assert counted.success and counted.data.n == 2
    assert counted.metadata["read_as"] == "application/json"


def test_an_answer_labelled_as_declared_or_not_readable_so_is_read_as_it_is(
    pkg: ModuleType,
) -> None:
    plain = _call(pkg, "export", kind="text")
    assert plain.success and plain.data.root == '[{"n": 1}]' and "read_as" not in plain.metadata
    # text/html is declared (the 404's): read as text, and the JSON Output refuses a string
    html = _call(pkg, "count", kind="html")
    assert not html.success and html.metadata["error_type"] == "invalid_output"
    assert html.data == '{"n": 2}' and "read_as" not in html.metadata
    word = _call(pkg, "count", kind="word")  # text that is no JSON: text, refused as before
    assert not word.success and word.metadata["error_type"] == "invalid_output"
    assert word.data == "two" and "read_as" not in word.metadata


def test_a_required_query_parameter_is_not_sent_empty(pkg: ModuleType) -> None:
    before = len(SEEN)
    cases: list[dict[str, Any]] = [
        {"code": "", "state": "s", "ids": ["1"]},
        {"code": "c", "state": "s", "ids": []},
        {"code": "c", "state": "s", "ids": [""]},
    ]
    for args in cases:
        result = _call(pkg, "search", **args)
        assert result.metadata["error_type"] == "invalid_input", (args, result)
        name = "code" if args["code"] == "" else "ids"
        assert f"query parameter {name!r} is required and its value" in str(result.error)
        assert "allowEmptyValue" in str(result.error)
    assert len(SEEN) == before  # nothing was sent
    assert _call(pkg, "search", code="c", state="", ids=["1"], q="").success
    assert SEEN[-1][0] == "/search?code=c&state=&ids=1&q="
