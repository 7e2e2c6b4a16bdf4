"""A real third-party server from PyPI with its own spec as it serves it: Jupyter Server.

Jupyter Server 2.21.1 (``make install`` puts it in ``.venv-jupyter``, pinned in
``tests/realworld/jupyter-requirements.txt``: its jupyter_events pulls jsonschema's format
checkers, which ``.venv`` keeps out) runs here as a subprocess on 127.0.0.1 with a token and a
temporary root directory. Its Swagger 2.0 spec is downloaded from ``/api/spec.yaml`` (with the
token: the server asks for it) and compiled as served; then its contents, checkpoints, config,
identity and status operations are called through the generated HTTP Activities with the token
configured as a header, and what each call did is checked on the server's disk.

Jupyter answers ``null`` for members its spec types as plain strings (Swagger 2.0 has no
``nullable``; its ``Contents`` requires ``content`` and says in words that it may be null): those
calls went through and are successes naming the nulls (``metadata["nulls"]``), typed where only
optional members are null. A directory's ``content`` is an array where the spec says string: a
failed output check that says the call went through, with the listing as sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests._servers import free_port
from tests.conftest import REPO, unload
from toolbind.runtime.http import HttpClient

from ._served import compile_served, require_venv, running

# ~10 s (the server starts in ~2 s): `make test-slow` (CI) runs it
pytestmark = pytest.mark.slow

VENV = REPO / ".venv-jupyter"
REQUIREMENTS = REPO / "tests" / "realworld" / "jupyter-requirements.txt"
TOKEN = "jupyter-test-token-5b0c"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    require_venv(VENV, REQUIREMENTS, "jupyter-server", "Jupyter Server")
    tmp = tmp_path_factory.mktemp("jupyter")
    root = tmp / "root"
    root.mkdir()
    port = free_port()
    # its config, data and runtime files in the temporary directory, not the user's home
    env = {f"JUPYTER_{d}_DIR": str(tmp / d.lower()) for d in ("CONFIG", "DATA", "RUNTIME")}
    base = f"http://127.0.0.1:{port}"
    command = [
        str(VENV / "bin" / "jupyter-server"),
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.open_browser=False",
        "--allow-root",
    ]
    with running("Jupyter Server", command, f"{base}/api", tmp / "jupyter.log", env=env):
        yield base, root


@pytest.fixture(scope="module")
def pkg(server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    base, _ = server
    auth = {"Authorization": f"token {TOKEN}"}
    package, note, _ = compile_served(
        f"{base}/api/spec.yaml",
        tmp_path_factory.mktemp("jupyter_spec"),
        "jupyter_api",
        ".yaml",
        auth,
    )
    # nothing dropped: every operation, parameter and response emitted
    assert note == (
        "read → emitted: operations 32 → 32 emitted; parameters in body 7 → 7 emitted; "
        "parameters in path 22 → 22 emitted; parameters in query 7 → 7 emitted; "
        "response headers 10 → 10 emitted; responses 57 → 57 emitted"
    )
    yield package
    unload("jupyter_api")


def test_jupyter_servers_own_spec_works_against_it(
    pkg: ModuleType, server: tuple[str, Path]
) -> None:
    base, root = server
    sent: list[httpx.Request] = []

    class Recording(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            sent.append(request)
            return super().handle_request(request)

    def call(client: HttpClient, tool: str, **args: Any) -> Any:
        activity = pkg.HttpActivities(client).activities()[tool]
        return activity(pkg.CallAdapter.validate_python({"_tool": tool, **args}))

    with HttpClient(pkg.API, base_url=base) as anonymous:
        refused = call(anonymous, "get_api_contents_by_path", path="sub dir")
    assert not refused.success and refused.metadata["error_type"] == "http_status"
    assert refused.metadata["status"] in (302, 403), refused.metadata

    with HttpClient(
        pkg.API,
        base_url=base,
        headers={"Authorization": f"token {TOKEN}"},
        transport=Recording(),
    ) as client:
        r = call(client, "get_api")
        assert r.success and r.data.version == "2.21.1", r.error

        # a directory, then a file in it: the path parameter holds a "/" and spaces
        r = call(client, "put_api_contents_by_path", path="sub dir", type="directory")
        assert r.success and r.metadata["status"] == 201, r.error
        assert r.data["type"] == "directory" and r.data["content"] is None  # as sent
        assert "content" in r.metadata["nulls"]
        r = call(
            client,
            "put_api_contents_by_path",
            path="sub dir/a b.txt",
            type="file",
            format="text",
            content="hi there",
        )
        assert r.success and r.metadata["status"] == 201, r.error
        # simple style: the "/" of a path parameter is percent-encoded (Jupyter decodes it)
        assert sent[-1].url.raw_path == b"/api/contents/sub%20dir%2Fa%20b.txt"
        assert (root / "sub dir" / "a b.txt").read_text() == "hi there"

        # only optional members null: the typed Output, the nulls said
        r = call(client, "get_api_contents_by_path", path="sub dir/a b.txt", content=1)
        assert r.success, r.error
        assert isinstance(r.data, pkg.GetApiContentsByPathOutput)
        assert (r.data.content, r.data.format, r.data.size) == ("hi there", "text", 8)
        assert r.metadata["nulls"] == ["hash", "hash_algorithm"]

        # a directory's content is an array where the spec says string: a failed output
        # check, which says the call went through, with the listing as sent
        r = call(client, "get_api_contents_by_path", path="sub dir", content=1)
        assert not r.success and r.metadata["error_type"] == "invalid_output"
        assert "answered HTTP 200 (the call went through)" in (r.error or "")
        assert [e["name"] for e in r.data["content"]] == ["a b.txt"]

        r = call(
            client, "patch_api_contents_by_path", path="sub dir/a b.txt", path_body="sub dir/c.txt"
        )
        assert r.success and r.data["path"] == "sub dir/c.txt", r.error
        assert sorted(p.name for p in (root / "sub dir").glob("*.txt")) == ["c.txt"]

        r = call(client, "post_api_contents_by_path_checkpoints", path="sub dir/c.txt")
        assert r.success and r.metadata["status"] == 201, r.error
        checkpoint = r.data.id
        r = call(client, "get_api_contents_by_path_checkpoints", path="sub dir/c.txt")
        assert r.success and [c.id for c in r.data.root] == [checkpoint], r.error

        r = call(client, "patch_api_config_by_section_name", section_name="toolbind", body={"a": 1})
        assert r.success, r.error
        r = call(client, "get_api_config_by_section_name", section_name="toolbind")
        assert r.success and r.data.model_dump() == {"a": 1}, r.error

        r = call(client, "get_api_me")
        assert r.success and r.data.identity.username, r.error
        r = call(client, "get_api_status")
        assert r.success and r.data.kernels == 0, r.error

        r = call(client, "delete_api_contents_by_path", path="sub dir/c.txt")
        assert r.success and r.metadata["status"] == 204 and r.data.root is None, r.error
        assert not (root / "sub dir" / "c.txt").exists()

        r = call(client, "get_api_contents_by_path", path="sub dir/c.txt")
        assert not r.success and r.metadata["status"] == 404
        assert "does not exist" in (r.error or "")
