"""``toolbind serve`` (the server half): compiled tools as an MCP server, driven by the
official ``mcp`` SDK's client — in process, and as a real ``toolbind serve`` subprocess over stdio
and over streamable HTTP (with a bearer token) calling a live petstore API on 127.0.0.1; latent
tools (``--latent``); API credentials (``--credentials``/``--credential``) for the test HTTP app's
authenticated operations (tests/http_app.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from demo.petstore import app as petstore_app
from tests._servers import free_port, serve_asgi
from toolbind.runtime import mcp_server
from toolbind.runtime.exports import mcp_tools

mcp = pytest.importorskip("mcp", reason="the mcp extra is in the test extra (make install)")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from generated.seeds import TOOLS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _text(result: Any) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert block.type == "text"
    return str(block.text)


def greet(call: Any) -> dict[str, str]:
    return {"greeting": f"Hello, {call.userName}"}


async def analyse(call: Any) -> AsyncIterator[dict[str, Any]]:
    yield {"stage": "reading"}
    yield {"sentiment": "positive", "confidence": 0.9}


def failing(call: Any) -> Any:
    from toolbind.runtime import ToolResult

    return ToolResult[Any].fail("the weather service is down", data={"retry_in": 30})


ACTIVITIES: dict[str, Any] = {
    "greetUser": greet,
    "sentimentAnalysis": analyse,
    "weatherCheck": failing,
}


def test_tools_list_is_the_mcp_export_and_calls_are_validated_and_routed() -> None:
    server = mcp_server(TOOLS, ACTIVITIES)
    exported = {t["name"]: t for t in mcp_tools(TOOLS, ACTIVITIES.keys())["tools"]}

    async def main() -> None:
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            # sendEmail has no Activity: not served
            assert sorted(t.name for t in listed) == sorted(ACTIVITIES)
            for tool in listed:
                assert tool.input_schema == exported[tool.name]["inputSchema"]
                assert tool.description == exported[tool.name].get("description")
            ok = await client.call_tool("greetUser", {"userName": "Ann"})
            assert not ok.is_error and ok.structured_content == {"greeting": "Hello, Ann"}
            assert json.loads(_text(ok)) == {"greeting": "Hello, Ann"}
            bad = await client.call_tool("sentimentAnalysis", {"text": 3})
            assert bad.is_error and "field text" in _text(bad)
            seen: list[tuple[float, str | None]] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                seen.append((progress, message))

            streamed = await client.call_tool(
                "sentimentAnalysis", {"text": "great"}, progress_callback=on_progress
            )
            assert streamed.structured_content == {"sentiment": "positive", "confidence": 0.9}
            assert [n for n, _ in seen] == [1, 2]
            assert json.loads(seen[0][1] or "") == {"stage": "reading"}
            failed = await client.call_tool("weatherCheck", {"location": "Oslo"})
            assert failed.is_error
            assert "weather service is down" in _text(failed)
            unknown = await client.call_tool("sendEmail", {"to": "a@b.c"})
            assert unknown.is_error

    asyncio.run(main())


@pytest.fixture(scope="module")
def petstore() -> Iterator[str]:
    with serve_asgi(petstore_app) as url:
        yield f"{url}/api"


def _serve_args(*extra: str) -> list[str]:
    return ["-m", "toolbind.cli", "serve", *extra]


def test_an_openapi_spec_is_a_working_mcp_server_over_stdio(petstore: str) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=_serve_args(str(REPO / "specs" / "petstore.yaml"), "--base-url", petstore),
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["addPet", "deletePet", "findPets", "find_pet_by_id"]
            found = await client.call_tool("findPets", {"limit": 2})
            assert not found.is_error
            pets = json.loads(_text(found))
            assert [p["name"] for p in pets] == ["Rex", "Tom"]
            missing = await client.call_tool("find_pet_by_id", {"id": 999})
            assert missing.is_error and "404" in _text(missing)

    asyncio.run(main())


def _wait_for(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


def test_streamable_http_with_a_bearer_token(petstore: str, tmp_path: Path) -> None:
    activities = tmp_path / "acts.py"
    activities.write_text(
        "def greetUser(call):\n    return {'greeting': 'Hi ' + call.userName}\n", encoding="utf-8"
    )
    port = free_port()
    env = {**os.environ, "MCP_TOKEN": "s3cret-token-123"}
    proc = subprocess.Popen(
        [
            sys.executable,
            *_serve_args(
                str(REPO / "specs" / "seeds.yaml"),
                "--activities",
                str(activities),
                "--http",
                f"127.0.0.1:{port}",
                "--token-env",
                "MCP_TOKEN",
            ),
        ],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401

        async def main() -> None:
            import httpx2  # the mcp SDK's HTTP client

            auth = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token-123"})
            from mcp.client.streamable_http import streamable_http_client

            async with Client(streamable_http_client(url, http_client=auth)) as client:
                assert [t.name for t in (await client.list_tools()).tools] == ["greetUser"]
                hi = await client.call_tool("greetUser", {"userName": "Bo"})
                assert hi.structured_content == {"greeting": "Hi Bo"}

        asyncio.run(main())
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "not served (no Activity): sentimentAnalysis, weatherCheck, sendEmail" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--http", "0.0.0.0:8765"], "needs a bearer token"),
        (["--http", "nowhere"], "expected HOST:PORT"),
        (["--activities", "no_such_module_xyz"], "cannot import no_such_module_xyz"),
        ([], "no tool has an Activity"),
    ],
)
def test_bad_serve_arguments_are_one_line_errors(args: list[str], message: str) -> None:
    run = subprocess.run(
        [sys.executable, *_serve_args(str(REPO / "specs" / "seeds.yaml"), *args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr


def test_latent_tools_are_served_only_when_asked_and_return_the_callers_output() -> None:
    # without latent, sendEmail (no Activity) is not served: see the first test
    server = mcp_server(TOOLS, {"greetUser": greet}, latent=True)
    exported = {t["name"]: t for t in mcp_tools(TOOLS, ["greetUser"])["tools"]}

    async def main() -> None:
        async with Client(server) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(listed) == ["greetUser", "sendEmail", "sentimentAnalysis", "weatherCheck"]
            email = listed["sendEmail"]
            # offered as `toolbind schema --format mcp` exports a tool with no Activity: _output
            assert email.input_schema == exported["sendEmail"]["inputSchema"]
            assert "_output" in email.input_schema["properties"]
            assert "_output" not in listed["greetUser"].input_schema["properties"]
            sent = await client.call_tool(
                "sendEmail", {"recipient": "a@b.c", "subject": "hi", "_output": {"sent": True}}
            )
            assert not sent.is_error and sent.structured_content == {"sent": True}
            assert json.loads(_text(sent)) == {"sent": True}
            assert sent.meta is not None and sent.meta["toolbind/execution"] == "latent"
            # the caller's _output is checked against the Output model
            wrong = await client.call_tool(
                "sendEmail", {"recipient": "a@b.c", "subject": "hi", "_output": {"sent": "yes"}}
            )
            assert wrong.is_error and "_output" in _text(wrong)
            none = await client.call_tool("sendEmail", {"recipient": "a@b.c", "subject": "hi"})
            assert none.is_error and "latent" in _text(none) and "gave none" in _text(none)
            hi = await client.call_tool("greetUser", {"userName": "Ann"})
            assert hi.meta is None or "toolbind/execution" not in hi.meta  # it ran

    asyncio.run(main())


def test_tools_that_run_elsewhere_are_never_served_latently() -> None:
    from dataclasses import replace

    gateway = replace(next(t for t in TOOLS if t.name == "sendEmail"), execution_type="gateway")
    named = replace(next(t for t in TOOLS if t.name == "weatherCheck"), activity="forecast")
    server = mcp_server([gateway, named], {}, latent=True)

    async def main() -> None:
        async with Client(server) as client:
            assert (await client.list_tools()).tools == []

    asyncio.run(main())


@pytest.mark.slow
def test_serve_latent_from_the_command_line() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=_serve_args(str(REPO / "specs" / "seeds.yaml"), "--latent"),
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["greetUser", "sendEmail", "sentimentAnalysis", "weatherCheck"]
            weather = await client.call_tool(
                "weatherCheck",
                {"location": "Oslo", "_output": {"temperature": -3, "conditions": "snow"}},
            )
            assert weather.structured_content == {"temperature": -3, "conditions": "snow"}

    asyncio.run(main())


# -- API credentials for an OpenAPI spec's HTTP Activities ------------------------------------------


@pytest.fixture(scope="module")
def test_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The test HTTP app (tests/http_app.py) on 127.0.0.1, and its /openapi.json saved as a spec."""
    from tests import http_app

    with serve_asgi(http_app.app) as url:
        spec = tmp_path_factory.mktemp("api") / "test_api.json"
        spec.write_text(json.dumps(httpx.get(f"{url}/openapi.json").json()), encoding="utf-8")
        yield url, spec


def test_serve_passes_api_credentials_to_the_http_activities(
    test_api: tuple[str, Path], tmp_path: Path
) -> None:
    from tests import http_app

    url, spec = test_api
    http_app.reset()
    credentials = tmp_path / "credentials.yaml"
    credentials.write_text(
        "OAuth2: {client_id: client-app, client_secret: '${env.TB_CLIENT_SECRET}'}\n"
        "Basic: {username: ann, password: '${env.TB_PASSWORD}'}\n",
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "TB_BEARER": http_app.BEARER_TOKEN,
        "TB_CLIENT_SECRET": http_app.CLIENT_SECRET,
        "TB_PASSWORD": http_app.BASIC_PASSWORD,
    }
    args = [str(spec), "--base-url", url, "--credentials", str(credentials)]
    args += ["--credential", "Bearer=${env.TB_BEARER}"]
    errors = tmp_path / "stderr.txt"

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=_serve_args(*args), cwd=str(REPO), env=env
        )
        with errors.open("w") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog)) as client:
                bearer = await client.call_tool("authBearer", {})
                assert not bearer.is_error, _text(bearer)
                assert bearer.structured_content == {"who": "bearer"}
                basic = await client.call_tool("authBasic", {})
                assert basic.structured_content == {"who": "basic:ann"}
                # OAuth2 client credentials: a token fetched with the secret from the environment;
                # the API echoes the token, and the MCP client is handed *** in its place
                oauth = await client.call_tool("authOauth", {})
                assert not oauth.is_error, _text(oauth)
                assert oauth.structured_content is not None
                assert oauth.structured_content["who"] == "oauth"
                assert oauth.structured_content["token"] == "***"
                assert "tok-000001" not in _text(oauth)
                # no credential given for this scheme: a tool error naming what is missing
                key = await client.call_tool("authApiKeyHeader", {})
                assert key.is_error and "ApiKeyHeader" in _text(key)

    asyncio.run(main())
    assert http_app.STATE["token_fetches"] == 1
    logged = errors.read_text()
    for secret in (http_app.BEARER_TOKEN, http_app.CLIENT_SECRET, http_app.BASIC_PASSWORD):
        assert secret not in logged


@pytest.mark.slow
def test_without_credentials_an_authenticated_operation_is_refused(
    test_api: tuple[str, Path],
) -> None:
    url, spec = test_api
    params = StdioServerParameters(
        command=sys.executable, args=_serve_args(str(spec), "--base-url", url), cwd=str(REPO)
    )

    async def main() -> None:
        async with Client(params) as client:
            refused = await client.call_tool("authBearer", {})
            assert refused.is_error and "needs credentials for [Bearer]" in _text(refused)

    asyncio.run(main())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--credential", "Nope=x"], "credentials for Nope: no security scheme"),
        (["--credential", "Bearer=${env.TB_UNSET_VARIABLE}"], "TB_UNSET_VARIABLE is not set"),
        (["--credential", "s3cret-literal-value"], "expected SCHEME=VALUE"),
        (["--credentials", "no/such/file.json"], "cannot read it"),
    ],
)
def test_bad_credentials_are_one_line_usage_errors(
    test_api: tuple[str, Path], args: list[str], message: str
) -> None:
    url, spec = test_api
    run = subprocess.run(
        [sys.executable, *_serve_args(str(spec), "--base-url", url, *args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "TB_UNSET_VARIABLE"},
    )
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr
    assert "s3cret-literal-value" not in run.stderr  # a value is never echoed


def test_a_stdio_server_stopped_with_sigterm_leaves_nothing_in_the_temp_dir(tmp_path: Path) -> None:
    """The defect: an MCP client stops a stdio server with SIGTERM, whose default ends the
    process without cleaning up, so every stop left the compiled packages in the temp dir."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, *_serve_args(str(REPO / "specs" / "seeds.yaml"), "--latent")],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(temp)},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # said once the tools are compiled and about to be served
        while line and "serving" not in line:
            line = proc.stderr.readline()
        assert "over stdio" in line
        assert any(temp.iterdir())  # the compiled packages, while it serves
        proc.terminate()
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + 15
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("stem", ["mcp", "httpx"])
def test_a_spec_named_like_an_imported_module_is_served(stem: str, tmp_path: Path) -> None:
    """The defect (found serving an MCP configuration saved as ``mcp.json``, as the README names
    it): a package is named after its spec file, and serve imported it by that bare name — the
    ``mcp`` SDK (or any module imported before, ``httpx``) came back, a traceback
    (``module 'mcp' has no attribute 'TOOLS'``)."""
    from toolbind.cli._serve import prepare

    spec = tmp_path / f"{stem}.json"
    echo = {"_tool": {"const": "echo"}, "text": {"type": "string"}, "_output": {"type": "object"}}
    spec.write_text(json.dumps({"echo": {"type": "object", "properties": echo}}), encoding="utf-8")
    server, served, _, root = prepare([spec], latent=True)
    try:
        assert served == ["echo"]

        async def main() -> None:
            async with Client(server) as client:
                done = await client.call_tool("echo", {"text": "hi", "_output": {"said": "hi"}})
                assert done.structured_content == {"said": "hi"}

        asyncio.run(main())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_serving_another_mcp_servers_tools_keeps_its_text_and_images(tmp_path: Path) -> None:
    """The defects (found serving ``@wonderwhy-er/desktop-commander``'s tools through a generated
    ``McpActivities``): a string result was sent as a JSON string literal (quoted, ``\\n``
    escaped — a toolbind client read the quotes back as part of the value), and the server's
    image came back as the JSON text of its content blocks instead of an image."""
    from toolbind.compiler import compile_to_directory, load_package

    from .shapes_server import PNG

    server_cmd = [str(REPO / "tests" / "mcp" / "shapes_server.py")]
    config = tmp_path / "servers.json"
    entry = {"name": "shapes", "command": sys.executable, "args": server_cmd}
    config.write_text(json.dumps({"mcp": {"servers": [entry]}}), encoding="utf-8")
    compile_to_directory([config], tmp_path / "out", package_names={str(config): "shapes_tools"})
    pkg = load_package(tmp_path / "out", "shapes_tools")

    async def main() -> None:
        activities = pkg.McpActivities()
        try:
            async with Client(mcp_server(pkg.TOOLS, activities.async_activities())) as client:
                text = await client.call_tool("read_text", {"path": "a.txt"})
                assert not text.is_error
                assert _text(text) == "[Reading 2 lines from a.txt]\n\nhello\nthere"
                image = await client.call_tool("read_file", {"path": "red.png"})
                assert not image.is_error
                assert [b.type for b in image.content] == ["text", "image"]
                assert _text(image) == "Image file: red.png (image/png)"
                block: Any = image.content[1]
                assert (block.mime_type, base64.b64decode(block.data)) == ("image/png", PNG)
                # no content (found re-serving a FastMCP tool that returns None): no content,
                # not a text block '[]'
                cleared = await client.call_tool("clear", {"path": "a.txt"})
                assert not cleared.is_error and cleared.content == []
        finally:
            await activities.aclose()

    asyncio.run(main())


def test_invalid_arguments_name_the_tool_and_each_field() -> None:
    """The defect (found calling desktop-commander's tools served by ``toolbind serve`` with a
    wrong argument): the tool error began ``Invalid response (fix each and answer again)`` — the
    words the Agent sends a model about its answer — and named no tool."""

    async def main() -> None:
        async with Client(mcp_server(TOOLS, ACTIVITIES)) as client:
            bad = await client.call_tool("greetUser", {"userName": 3})
            assert bad.is_error
            assert _text(bad).splitlines() == [
                "invalid arguments for tool 'greetUser' (fix each and call again):",
                "- field userName: Input should be a valid string (keyword: type)",
            ]

    asyncio.run(main())


def test_an_mcp_configuration_is_served_through_its_servers(tmp_path: Path) -> None:
    """The defect (found serving desktop-commander's configuration): its generated package has
    an Activity per tool (``McpActivities``), yet ``toolbind serve servers.json`` served nothing —
    "no tool has an Activity to run it" — unless an ``--activities`` module wired them by hand.
    An OpenAPI spec's HTTP Activities were always used."""
    from toolbind.cli._serve import prepare

    config = tmp_path / "servers.json"
    entry = {
        "name": "shapes",
        "command": sys.executable,
        "args": [str(REPO / "tests" / "mcp" / "shapes_server.py")],
    }
    config.write_text(json.dumps({"mcp": {"servers": [entry]}}), encoding="utf-8")
    server, served, skipped, root = prepare([config])
    try:
        assert (served, skipped) == (["clear", "read_file", "read_text"], [])

        async def main() -> None:
            async with Client(server) as client:
                text = await client.call_tool("read_text", {"path": "b.txt"})
                assert _text(text) == "[Reading 2 lines from b.txt]\n\nhello\nthere"

        asyncio.run(main())
    finally:
        shutil.rmtree(root, ignore_errors=True)


BINARY_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "tickets", "version": "1"},
    "paths": {
        f"/tickets/{{ticketId}}/{suffix}": {
            "get": {
                "operationId": op,
                "parameters": [
                    {
                        "name": "ticketId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"200": {"description": op, "content": content}},
            }
        }
        for op, suffix, content in [
            # as Redocly's museum spec declares its ticket's QR code
            (
                "getTicketCode",
                "qr",
                {"image/png": {"schema": {"type": "string", "format": "binary"}}},
            ),
            ("getTicketSound", "sound", {"audio/wav": cast("dict[str, Any]", {})}),
            ("getTicketPdf", "pdf", {"application/pdf": {"schema": {"type": "string"}}}),
        ]
    },
}


async def _binary_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    from .shapes_server import PNG

    media = {"qr": "image/png", "sound": "audio/wav", "pdf": "application/pdf"}
    kind = str(scope["path"]).rsplit("/", 1)[-1]
    body = PNG if kind == "qr" else b"\x00\xff" + kind.encode()
    headers = [(b"content-type", media[kind].encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def test_an_apis_binary_answer_is_served_as_an_image_audio_or_resource_block(
    tmp_path: Path,
) -> None:
    """The defect (found serving Redocly's museum spec, ``getTicketCode`` answering
    ``image/png``, to the SDK's client): the image reached the MCP client as a text block of its
    base64 — a host showed the model a string of letters, not the ticket's QR code."""
    from toolbind.compiler import compile_to_directory, load_package
    from toolbind.runtime.http import HttpClient

    from .shapes_server import PNG

    spec = tmp_path / "tickets.json"
    spec.write_text(json.dumps(BINARY_SPEC), encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out", package_names={str(spec): "tickets"})
    pkg = load_package(tmp_path / "out", "tickets")

    async def main(url: str) -> None:
        async with HttpClient(pkg.API, base_url=url) as http:
            server = mcp_server(pkg.TOOLS, pkg.HttpActivities(http).async_activities())
            async with Client(server) as client:
                qr = await client.call_tool("getTicketCode", {"ticketId": "t1"})
                assert not qr.is_error and qr.structured_content is None
                block: Any = qr.content[0]
                assert [b.type for b in qr.content] == ["image"]
                assert (block.mime_type, base64.b64decode(block.data)) == ("image/png", PNG)
                sound = await client.call_tool("getTicketSound", {"ticketId": "t1"})
                block = sound.content[0]
                assert [b.type for b in sound.content] == ["audio"]
                assert (block.mime_type, base64.b64decode(block.data)) == (
                    "audio/wav",
                    b"\x00\xffsound",
                )
                pdf = await client.call_tool("getTicketPdf", {"ticketId": "t1"})
                block = pdf.content[0]
                assert [b.type for b in pdf.content] == ["resource"]
                assert block.resource.mime_type == "application/pdf"
                assert base64.b64decode(block.resource.blob) == b"\x00\xffpdf"
                assert block.resource.uri == f"{url}/tickets/t1/pdf"

    with serve_asgi(_binary_app) as url:
        asyncio.run(main(url))


OBJECT_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "objects", "version": "1"},
    "paths": {
        "/obj/{kind}": {
            "get": {
                "operationId": "getObj",
                "parameters": [
                    {"name": "kind", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {
                        "description": "an object",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "properties": {
                                        "a": {"type": "integer"},
                                        "b": {"type": "integer"},
                                    },
                                    "required": ["a"],
                                }
                            }
                        },
                    },
                    "204": {"description": "nothing"},
                },
            }
        }
    },
}

OBJECT_ANSWERS = {
    "ok": b'{"a": 1, "b": 2}',
    "optional-null": b'{"a": 1, "b": null}',
    "required-null": b'{"a": null, "b": 1}',
    "extra": b'{"a": 1, "zz": 2}',
}


async def _object_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    kind = str(scope["path"]).rsplit("/", 1)[-1]
    if kind == "none":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": OBJECT_ANSWERS[kind]})


def test_a_success_that_does_not_fit_the_listed_output_schema_reaches_the_client(
    tmp_path: Path,
) -> None:
    """The defect (found serving an API whose answers toolbind keeps as sent — a ``null`` for a
    required member, a member a closed object does not declare — or a 204 beside a 200 with a
    schema): the result was a success whose ``structuredContent`` did not fit the
    ``outputSchema`` listed (or was missing), and the SDK's client raised ``RuntimeError:
    Invalid structured content returned by tool getObj`` — the result lost, nothing said which
    field. Now such a result is a tool error saying the call went through, which field, and the
    data as sent."""
    from toolbind.compiler import compile_to_directory, load_package
    from toolbind.runtime.http import HttpClient

    spec = tmp_path / "objects.json"
    spec.write_text(json.dumps(OBJECT_SPEC), encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out", package_names={str(spec): "objects"})
    pkg = load_package(tmp_path / "out", "objects")

    async def main(url: str) -> None:
        async with HttpClient(pkg.API, base_url=url) as http:
            server = mcp_server(pkg.TOOLS, pkg.HttpActivities(http).async_activities())
            async with Client(server) as client:
                (tool,) = (await client.list_tools()).tools
                assert tool.output_schema is not None
                ok = await client.call_tool("getObj", {"kind": "ok"})
                assert not ok.is_error and ok.structured_content == {"a": 1, "b": 2}
                # an optional member's null is read as absent: the typed Output fits
                lenient = await client.call_tool("getObj", {"kind": "optional-null"})
                assert not lenient.is_error and lenient.structured_content == {"a": 1}
                required = await client.call_tool("getObj", {"kind": "required-null"})
                assert required.is_error and required.structured_content is None
                assert "the call went through" in _text(required)
                assert "a: Input should be a valid integer" in _text(required)
                assert json.loads(_text(required).split("\n", 1)[1]) == {"a": None, "b": 1}
                extra = await client.call_tool("getObj", {"kind": "extra"})
                assert extra.is_error and "zz: Extra inputs are not permitted" in _text(extra)
                none = await client.call_tool("getObj", {"kind": "none"})
                assert none.is_error and "it answered no content" in _text(none)

    with serve_asgi(_object_app) as url:
        asyncio.run(main(url))
