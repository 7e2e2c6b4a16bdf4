"""Every operation of real specs called through its generated HTTP Activity against Stoplight
Prism (npm, installed by ``make install`` under tests/mcp/npm), a third-party mock server that
validates each request against the same spec (``--errors``: a request the spec refuses is
answered 422 with the violations, and logged).

Each operation is called twice, the way a model fills a Call: with its required fields only, and
with every field; values follow the field's schema (its enum or const, its format — a uuid, a
date-time —, its bounds). Prism must find nothing wrong with any request: path, query, header
and cookie parameters in their styles, bodies in their media types, credentials where the
security schemes say. Calling every corpus operation this way found a multipart body with no
parts crashing inside the client, and an empty path parameter inside a path (``/users//keys``)
sent as it was.

Left out: specs whose Calls this simple filler cannot make valid (Discord's patterns, OpenAI's
nested oneOfs, ReadMe's nullable titles), and one whose only refusal is Prism's own (a multipart
array of one file, which Prism cannot tell from a single value).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests._servers import free_port
from tests.conftest import CORPUS, REPO, unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpClient
from toolbind.testing._contract import call_schema

from ._served import placeholder_credentials, running

pytestmark = pytest.mark.slow

PRISM = REPO / "tests" / "mcp" / "npm" / "node_modules" / ".bin" / "prism"
SPECS = [
    "oai-examples__petstore-expanded.yaml",
    "oai-examples__uber-swagger2.json",
    "oai-examples__link-example.yaml",
    "redocly__museum.yaml",
    "bump-sh__train-travel.json",
    "stapi__star-trek.json",
    "netlify__api.yaml",
    "slack__web-api.json",
    "readme-examples__form-data.json",
]
FORMATS = {
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "date-time": "2024-05-01T10:00:00Z",
    "date": "2024-05-01",
    "time": "10:00:00Z",
    "email": "ann@example.com",
    "uri": "https://example.com/a",
    "url": "https://example.com/a",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "byte": "aGk=",
    "binary": "aGk=",
}


def value(schema: Any, defs: dict[str, Any], full: bool, depth: int = 0) -> Any:
    """A value ``schema`` accepts, as a model would fill it (None: none found here)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    s = cast("dict[str, Any]", schema)
    if "$ref" in s:
        return value(defs.get(str(s["$ref"]).rsplit("/", 1)[1]), defs, full, depth + 1)
    if "const" in s:
        return s["const"]
    if s.get("enum"):
        return s["enum"][0]
    for key in ("anyOf", "oneOf"):
        for branch in cast("list[Any]", s.get(key, [])):
            if isinstance(branch, dict) and cast("dict[str, Any]", branch).get("type") != "null":
                return value(branch, defs, full, depth + 1)
    if "allOf" in s:
        merged: dict[str, Any] = {}
        for part in s["allOf"]:
            found = value(part, defs, full, depth + 1)
            if not isinstance(found, dict):
                return found
            merged |= found
        return merged
    kind: Any = s.get("type")
    if isinstance(kind, list):
        kind = next((k for k in cast("list[Any]", kind) if k != "null"), None)
    if kind == "object" or "properties" in s:
        out: dict[str, Any] = {}
        for name, sub in s.get("properties", {}).items():
            if name.startswith("_") or not (full or name in s.get("required", [])):
                continue
            got = value(sub, defs, full, depth + 1)
            if got is not None or name in s.get("required", []):
                out[name] = got
        return out
    if kind == "array":
        item = value(s.get("items"), defs, full, depth + 1)
        return [] if item is None else [item]
    if kind in ("integer", "number"):
        low = s.get("minimum", s.get("exclusiveMinimum", 0))
        return int(low) + 1 if kind == "integer" else float(low) + 1.5
    if kind == "boolean":
        return True
    if kind == "string":
        text = FORMATS.get(str(s.get("format")), "abc")
        minimum = int(s.get("minLength", 0))
        return text + "x" * max(0, minimum - len(text))
    return None


@pytest.fixture(scope="module")
def prism() -> Path:
    if not PRISM.exists():
        message = "Stoplight Prism is not installed under tests/mcp/npm (make install)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {message}")
        pytest.skip(message)
    return PRISM


@pytest.fixture(params=SPECS)
def served(
    request: pytest.FixtureRequest, prism: Path, tmp_path: Path
) -> Iterator[tuple[Any, str, Path]]:
    spec = CORPUS / "openapi" / request.param
    compile_to_directory([spec], tmp_path / "out")
    name = next(p.name for p in (tmp_path / "out").iterdir() if (p / "__init__.py").exists())
    pkg = load_package(tmp_path / "out", name)
    port = free_port()
    log = tmp_path / "prism.log"
    command = [str(prism), "mock", "-h", "127.0.0.1", "-p", str(port), "--errors", str(spec)]
    # (Prism answers any path: a request it refuses is still an answer, so health is its own)
    try:
        with running("Prism", command, f"http://127.0.0.1:{port}/__health", log, ok=(404,)):
            yield pkg, f"http://127.0.0.1:{port}", log
    finally:
        unload(name)


def test_every_operation_passes_prisms_request_validation(
    served: tuple[Any, str, Path],
) -> None:
    pkg, base, log = served
    refused: list[str] = []
    called = 0
    with HttpClient(pkg.API, base_url=base, credentials=placeholder_credentials(pkg.API)) as client:
        activities = pkg.HttpActivities(client).activities()
        for tool in list(pkg.TOOLS)[:40]:
            schema = call_schema(tool)
            for full in (False, True):
                args = value(schema, schema.get("$defs", {}), full)
                assert isinstance(args, dict), (tool.name, schema)
                call = pkg.CallAdapter.validate_python({**args, "_tool": tool.name})
                result = activities[tool.name](call)
                called += 1
                assert result.metadata.get("error_type") != "connection", result.error
                if result.metadata.get("status") == 422:
                    refused.append(f"{tool.name} {args}: {result.data}")
    violations = [
        line.split("Violation: ", 1)[1]
        for line in log.read_text(errors="replace").splitlines()
        if "Violation: " in line
    ]
    assert not refused and not violations, "\n".join(refused + violations)
    assert called >= 2 * min(len(pkg.TOOLS), 40)
    assert re.search(r"passed the validation rules", log.read_text(errors="replace"))
