"""AutoRest's extensions every Azure data-plane spec uses.

``x-ms-paths``: Swagger 2.0 cannot declare two operations on one path that a fixed
query tells apart, so Azure's data-plane specs key them ``/{containerName}?restype=container&
comp=acl`` under this extension (Azure Storage's blob, file, queue and Data Lake specs hold
nearly all their operations there). toolbind skipped it as an unread extension: every such
operation was lost with one note ("extension field(s) ignored (x-ms-paths)"), exit 0.

They are operations now: the fixed query is sent as written, except a pair whose name a
declared query parameter sends (AutoRest's specs declare ``restype``/``comp`` as required
one-value enums too; both went out). The excerpt follows Azure/azure-rest-api-specs'
``specification/storage/data-plane/Microsoft.BlobStorage/.../blob.json`` (MIT), trimmed.

``x-ms-parameterized-host`` (Key Vault's ``{vaultBaseUrl}``, Storage's ``{url}``): the host the
spec declares, with parameters. Skipped as an extension, the API's server was '/', and every
``HttpClient`` was refused ("not an absolute http(s) URL") with nothing said of the host; it is
the server now, its parameters server variables (``server_variables=``), said in a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests._servers import Receive, Send, read_body, serve_asgi
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.errors import HttpConfigurationError
from toolbind.runtime.http import HttpClient

SPEC = """\
{
  "swagger": "2.0",
  "info": {"title": "Azure Blob Storage", "version": "2019-12-12"},
  "host": "account.blob.core.windows.net",
  "schemes": ["https"],
  "consumes": ["application/xml"],
  "produces": ["application/xml"],
  "paths": {},
  "x-ms-paths": {
    "/{containerName}?restype=container&comp=acl": {
      "get": {
        "operationId": "Container_GetAccessPolicy",
        "parameters": [
          {"$ref": "#/parameters/ContainerName"},
          {"$ref": "#/parameters/Timeout"},
          {"name": "restype", "in": "query", "required": true, "type": "string",
           "enum": ["container"]},
          {"name": "comp", "in": "query", "required": true, "type": "string", "enum": ["acl"]}
        ],
        "responses": {"200": {"description": "Success"}}
      }
    },
    "/{containerName}?restype=container&comp=list": {
      "get": {
        "operationId": "Container_ListBlobFlatSegment",
        "parameters": [
          {"$ref": "#/parameters/ContainerName"},
          {"name": "prefix", "in": "query", "required": false, "type": "string"}
        ],
        "responses": {"200": {"description": "Success"}}
      }
    }
  },
  "parameters": {
    "ContainerName": {"name": "containerName", "in": "path", "required": true,
                      "type": "string", "x-ms-parameter-location": "method"},
    "Timeout": {"name": "timeout", "in": "query", "required": false, "type": "integer",
                "minimum": 0, "x-ms-parameter-location": "method"}
  }
}
"""
SEEN: list[str] = []


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await read_body(receive)
    SEEN.append(f"{scope['path']}?{scope['query_string'].decode()}")
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_operations_under_x_ms_paths_are_tools_sent_with_their_fixed_query(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "blob.json"
    spec.write_text(SPEC, encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    counts = next(d.found for d in tree.diagnostics if "read → emitted" in d.found)
    assert "operations 2 → 2 emitted" in counts
    assert [d.found for d in tree.diagnostics if "x-ms-paths" in d.found] == [
        "2 path(s) read from x-ms-paths (AutoRest's paths with a fixed query): each query is "
        "sent as written"
    ]
    pkg = load_package(tmp_path / "out", "blob")
    try:
        _check(pkg)
    finally:
        unload("blob")


def _check(pkg: Any) -> None:
    ops = pkg.API.operations
    assert ops["Container_GetAccessPolicy"].path == "/{containerName}"
    assert (
        ops["Container_ListBlobFlatSegment"].path == "/{containerName}?restype=container&comp=list"
    )
    with serve_asgi(app) as url, HttpClient(pkg.API, base_url=url) as client:
        activities = pkg.HttpActivities(client).activities()
        acl = pkg.CallAdapter.validate_python(
            {
                "_tool": "Container_GetAccessPolicy",
                "containerName": "photos",
                "restype": "container",
                "comp": "acl",
                "timeout": 30,
            }
        )
        assert activities["Container_GetAccessPolicy"](acl).success
        listed = pkg.CallAdapter.validate_python(
            {"_tool": "Container_ListBlobFlatSegment", "containerName": "photos", "prefix": "a/"}
        )
        assert activities["Container_ListBlobFlatSegment"](listed).success
    assert SEEN[-2:] == [
        "/photos?timeout=30&restype=container&comp=acl",
        "/photos?restype=container&comp=list&prefix=a%2F",
    ]


# Azure/azure-rest-api-specs, specification/keyvault/data-plane/Microsoft.KeyVault/stable/7.4/
# secrets.json (MIT), trimmed to one operation
KEY_VAULT = """\
{
  "swagger": "2.0",
  "info": {"title": "KeyVaultClient", "version": "7.4"},
  "x-ms-parameterized-host": {
    "hostTemplate": "{vaultBaseUrl}",
    "useSchemePrefix": false,
    "positionInOperation": "first",
    "parameters": [
      {"name": "vaultBaseUrl", "required": true, "type": "string", "in": "path",
       "description": "The vault name, for example https://myvault.vault.azure.net.",
       "x-ms-skip-url-encoding": true}
    ]
  },
  "consumes": ["application/json"],
  "produces": ["application/json"],
  "paths": {
    "/secrets/{secret-name}/{secret-version}": {
      "get": {
        "operationId": "GetSecret",
        "parameters": [
          {"name": "secret-name", "in": "path", "required": true, "type": "string"},
          {"name": "secret-version", "in": "path", "required": true, "type": "string"},
          {"name": "api-version", "in": "query", "required": true, "type": "string"}
        ],
        "responses": {"200": {"description": "The retrieved secret."}}
      }
    }
  }
}
"""


def test_a_parameterized_host_is_the_server_its_parameters_server_variables(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "keyvault.json"
    spec.write_text(KEY_VAULT, encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    assert [d.found for d in tree.diagnostics if "parameterized" in d.found] == [
        "x-ms-parameterized-host read as the server '{vaultBaseUrl}': give 'vaultBaseUrl' with "
        "HttpClient(server_variables={...}) (or base_url=)"
    ]
    pkg = load_package(tmp_path / "out", "keyvault")
    try:
        with pytest.raises(HttpConfigurationError, match="no value for variable 'vaultBaseUrl'"):
            HttpClient(pkg.API)
        with (
            serve_asgi(app) as url,
            HttpClient(pkg.API, server_variables={"vaultBaseUrl": url}) as client,
        ):
            call = pkg.CallAdapter.validate_python(
                {
                    "_tool": "GetSecret",
                    "secret-name": "db",
                    "secret-version": "v1",
                    "api-version": "7.4",
                }
            )
            assert pkg.HttpActivities(client).activities()["GetSecret"](call).success
        assert SEEN[-1] == "/secrets/db/v1?api-version=7.4"
    finally:
        unload("keyvault")
