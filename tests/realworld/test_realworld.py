"""Real-world deviations from the OpenAPI specs, each class seen on a real public API: a minimal
spec of our own per class, compiled, then called against a real server on 127.0.0.1.

- ``type: int`` (and ``Integer``, ``double``, ``bool``) in a Swagger 2.0 spec an API serves itself;
- a path template naming a parameter the operation does not declare;
- OpenAPI 3.0's ``nullable: true`` inside a 3.1 document;
- responses without a schema (JSON, text, binary) and ``204``;
- a field the model adds that the operation does not declare;
- found by the issue-13 sweep of real specs: fields beside a ``$ref`` (Xero), ``nullable`` beside
  a ``$ref``, ``securitySchemes`` as one ``$ref`` to another file (SendGrid), ``allOf`` parents
  that overlap (SendGrid), a long ``additionalProperties`` type (Sentry), a form body's
  ``deepObject`` encoding (Stripe), an object PATCH body among JSON Patch types (Kubernetes).

Each is read with one obvious meaning and a located warning; ``--strict`` refuses it; nothing the
spec says is dropped in silence.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests._servers import serve_asgi
from tests.conftest import unload
from toolbind.compiler import SpecError, compile_to_directory, generate_tree, load_package
from toolbind.runtime import compose
from toolbind.runtime.http import HttpClient

from .app import LOGO, app

SPECS = Path(__file__).parent / "specs"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_asgi(app) as base:
        yield base


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ModuleType]]:
    out = tmp_path_factory.mktemp("realworld") / "out"
    tree = compile_to_directory(sorted(SPECS.glob("*.yaml")), out)
    loaded = {name: load_package(out, name) for name in tree.packages}
    yield loaded
    for name in loaded:
        unload(name)


def _warnings(spec: str) -> list[str]:
    tree = generate_tree([SPECS / spec])
    return [d.render() for d in tree.diagnostics if d.severity == "warning"]


def _call(pkg: ModuleType, base: str, payload: dict[str, Any]) -> Any:
    call = pkg.CallAdapter.validate_python(payload)
    with HttpClient(pkg.API, base_url=f"{base}/api") as client:
        return pkg.HttpActivities(client).activities()[payload["_tool"]](call)


# -- a spec split over many files, operations included -------------------------------------------


def test_operations_split_over_files_keep_their_parameters_bodies_and_outputs(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect: operations that were ``$ref``s into other files compiled, exit 0, to tools with
    no parameters, no description and no output, and every call with a path parameter failed."""
    pkg = packages["split_api"]
    binding = next(t for t in pkg.TOOLS if t.name == "getPet")
    params = binding.parameters
    assert params["properties"]["petId"] == {"type": "integer", "minimum": 1}
    assert params["required"] == ["petId"] and "verbose" in params["properties"]
    assert binding.description == "One pet by its id"
    with pytest.raises(ValueError, match="petId"):
        pkg.CallAdapter.validate_python({"_tool": "getPet", "petId": 0})
    found = _call(pkg, server, {"_tool": "getPet", "petId": 7, "verbose": True})
    assert found.success, found.error
    assert found.data.model_dump(mode="json") == {"id": 7, "name": "pet7"}
    added = _call(pkg, server, {"_tool": "addPet", "name": "Rex"})
    assert added.success and added.data.model_dump(mode="json") == {"id": 1, "name": "Rex"}
    with pytest.raises(ValueError, match="name"):
        pkg.CallAdapter.validate_python({"_tool": "addPet"})  # the body's required field


def test_an_operation_ref_that_does_not_resolve_is_reported_not_dropped(tmp_path: Path) -> None:
    spec = tmp_path / "broken.yaml"
    spec.write_text(
        'openapi: 3.0.3\ninfo: {title: b, version: "1"}\npaths:\n'
        '  /a:\n    get: {$ref: "ops.yaml#/missing"}\n',
        encoding="utf-8",
    )
    (tmp_path / "ops.yaml").write_text("other: {}\n", encoding="utf-8")
    tree = generate_tree([spec])
    rendered = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert any("operation $ref 'ops.yaml#/missing' does not resolve" in r for r in rendered)
    assert any("the spec has no operations" in r for r in rendered)


# -- type names that are not JSON Schema's ------------------------------------------------------


def test_non_json_type_names_are_read_with_a_located_warning() -> None:
    warnings = _warnings("swagger_int_types.yaml")
    where = "swagger_int_types.yaml#/paths/~1users~1{userId}~1items~1{itemId}/get"
    for index, (name, json_type) in enumerate(
        [("int", "integer"), ("Integer", "integer"), ("double", "number"), ("bool", "boolean")]
    ):
        expected = (
            f"{where}/parameters/{index}/type: warning: type {name!r} is not a JSON Schema "
            f"type; read as {json_type!r}"
        )
        assert any(expected in w for w in warnings), (expected, warnings)


def test_unquoted_integer_response_codes_are_read_as_text_with_a_warning(
    packages: dict[str, ModuleType], server: str
) -> None:
    tree = generate_tree([SPECS / "unquoted_response_codes.yaml"])
    warnings = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert len(warnings) == 1 and warnings[0].endswith(
        "unquoted_response_codes.yaml#/paths/~1things/get/responses/200: warning: an unquoted "
        "integer map key, read as its text '200' (the first of 2 in this file) — string keys "
        "(JSON object names are always strings) (hint: quote the key: '200': (OpenAPI asks for "
        "response codes in quotes))"
    ), warnings
    result = _call(packages["unquoted_response_codes"], server, {"_tool": "listThings"})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == [{"name": "a"}, {"name": "b"}]
    with pytest.raises(SpecError, match="an unquoted integer map key"):
        generate_tree([SPECS / "unquoted_response_codes.yaml"], strict=True)


def test_an_undeclared_path_template_parameter_becomes_a_required_string(
    packages: dict[str, ModuleType], server: str
) -> None:
    assert any(
        "names {userId}, which the operation does not declare" in w
        for w in _warnings("swagger_int_types.yaml")
    )
    pkg = packages["swagger_int_types"]
    schema = pkg.GetItemCall.model_json_schema(by_alias=True)
    assert schema["properties"]["userId"]["type"] == "string"
    assert {"userId", "itemId"} <= set(schema["required"])
    result = _call(pkg, server, {"_tool": "getItem", "userId": "ann", "itemId": 7, "limit": 2})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"n": 7, "user": "ann"}
    with pytest.raises(ValueError, match="itemId"):
        pkg.CallAdapter.validate_python({"_tool": "getItem", "userId": "ann", "itemId": "7"})


def test_strict_turns_every_assumption_into_an_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        generate_tree([SPECS / "swagger_int_types.yaml"], strict=True)
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert len(errors) == 6 and all("--strict" in (d.hint or "") for d in errors)
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolbind.cli",
            "generate",
            "--strict",
            "-o",
            str(tmp_path / "o"),
            str(SPECS / "swagger_int_types.yaml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 1, cli.stderr
    assert "error: type 'int' is not a JSON Schema type" in cli.stderr
    assert "Traceback" not in cli.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("spec", ["nullable_31", "ref_nullable_31"])
def test_nullable_in_a_31_document_allows_null(
    packages: dict[str, ModuleType], server: str, spec: str
) -> None:
    """``ref_nullable_31``: the warning said "read as also allowing null", and the null was
    refused — beside a ``$ref``, ``nullable`` was one more ``allOf`` part (any value or null)."""
    assert any("due/nullable: warning: nullable is" in w for w in _warnings(f"{spec}.yaml"))
    result = _call(packages[spec], server, {"_tool": "getNote", "noteId": "n1"})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"title": "n1", "due": None}


# -- fields beside a $ref ------------------------------------------------------------------------


def test_fields_beside_a_ref_in_30_are_ignored_and_nullable_is_read(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Xero's Projects API): ``rate: {$ref: Amount, type: number}`` was read as
    both at once, so no value of ``rate`` was valid and the operation could not be called (no
    diagnostic); ``{$ref: Amount, nullable: true}`` refused the null the API sends."""
    warnings = _warnings("ref_siblings_30.yaml")
    assert (
        warnings
        == [
            w
            for w in warnings
            if "/components/schemas/TaskCreate/properties/rate/$ref: warning: "
            "$ref replaces the fields beside it in OpenAPI 3.0 and Swagger 2.0: type ignored" in w
        ]
        and len(warnings) == 1
    ), warnings
    pkg = packages["ref_siblings_30"]
    added = _call(
        pkg, server, {"_tool": "addTask", "name": "audit", "rate": {"currency": "NZD", "value": 95}}
    )
    assert added.success, added.error
    assert added.data.model_dump(mode="json") == {
        "id": 1,
        "name": "audit",
        "rate": {"currency": "NZD", "value": 95},
        "invoiced": None,
    }
    with pytest.raises(ValueError, match="rate"):
        pkg.CallAdapter.validate_python({"_tool": "addTask", "name": "audit", "rate": 95})
    with pytest.raises(SpecError, match=r"\$ref replaces the fields beside it"):
        generate_tree([SPECS / "ref_siblings_30.yaml"], strict=True)


# -- enums -----------------------------------------------------------------------------------------


def test_unquoted_numbers_in_a_string_enum_are_read_as_their_text(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Plaid's ``PrismInsightsVersion``: ``type: string``, ``enum: [4.1, 4, 3,
    null]``): no value had the declared type, so the enum allowed nothing — not even the
    null — and every call or response carrying it failed (one warning said so)."""
    warnings = _warnings("enum_numbers_as_text.yaml")
    assert len(warnings) == 1 and warnings[0].endswith(
        "enum_numbers_as_text.yaml#/components/schemas/PrismVersion/enum: warning: enum "
        "value(s) 4.1, 4, 3 are numbers under type: string; read as the string(s) '4.1', '4', "
        "'3' — strings (hint: quote them: an unquoted 4.1 in YAML is a number, not a string)"
    ), warnings
    pkg = packages["enum_numbers_as_text"]
    for version in ("4.1", "3", None):
        report = _call(pkg, server, {"_tool": "getPrismReport", "version": version})
        assert report.success, report.error
        assert report.data.model_dump(mode="json") == {"version": version}
    with pytest.raises(ValueError, match="version"):
        pkg.CallAdapter.validate_python({"_tool": "getPrismReport", "version": 4.1})


def test_unquoted_booleans_in_a_string_enum_are_read_as_their_text(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Plaid's ``AssetRetirementIndicator``: ``type: string``, ``nullable: true``,
    ``enum: [true, false]``): YAML reads an unquoted ``true`` as a boolean, so no value had the
    declared type, the field took nothing but null, and every response carrying it failed; the
    warning said neither. Read as the strings 'true' and 'false', as numbers are."""
    warnings = _warnings("enum_booleans_as_text.yaml")
    assert len(warnings) == 1 and warnings[0].endswith(
        "enum_booleans_as_text.yaml#/components/schemas/AssetDetail/properties/"
        "AssetRetirementIndicator/enum: warning: enum value(s) true, false are booleans under "
        "type: string; read as the string(s) 'true', 'false' — strings (hint: quote them: an "
        "unquoted true in YAML is a boolean, not a string)"
    ), warnings
    pkg = packages["enum_booleans_as_text"]
    for indicator in ("true", "false", None):
        call = {"_tool": "describeAsset", "AssetRetirementIndicator": indicator}
        asset = _call(pkg, server, call)
        assert asset.success, asset.error
        assert asset.data.model_dump(mode="json", by_alias=True) == {
            "AssetRetirementIndicator": indicator
        }
    tool = next(t for t in pkg.TOOLS if t.name == "describeAsset")
    assert tool.parameters["properties"]["AssetRetirementIndicator"] == {
        "anyOf": [{"enum": ["true", "false"]}, {"type": "null"}]
    }
    schema: Any = Draft202012Validator({**tool.output_schema, "$defs": dict(tool.defs)})
    for value in ("true", "false", None, True, False, "True", "yes", 1):
        instance = {"AssetRetirementIndicator": value}
        try:
            tool.output_model.model_validate(instance)
        except ValueError:
            accepted = False
        else:
            accepted = True
        assert accepted is schema.is_valid(instance) is (value in ("true", "false", None))
    for wrong in (True, "yes"):  # the declared type is string
        with pytest.raises(ValueError, match="AssetRetirementIndicator"):
            pkg.CallAdapter.validate_python(
                {"_tool": "describeAsset", "AssetRetirementIndicator": wrong}
            )


def test_a_scalar_read_as_text_is_named_in_the_hint(tmp_path: Path) -> None:
    """The hint names the value read (an enum of ``[3]`` was told about "an unquoted 4.1"), and
    the language the spec is written in: a JSON boolean under ``type: string`` is the same
    slip, read the same way. An enum with no value of another declared type says what is left."""
    spec = tmp_path / "flags.json"
    parameters = [
        {"name": "v", "in": "query", "schema": {"type": "string", "enum": [3, "x", False]}},
        {
            "name": "n",
            "in": "query",
            "schema": {"type": "integer", "nullable": True, "enum": ["a"]},
        },
    ]
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/a": {
                        "get": {
                            "operationId": "a",
                            "parameters": parameters,
                            "responses": {"204": {"description": "ok"}},
                        }
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    tree = generate_tree([spec])
    warnings = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert warnings == [
        f"{spec}#/paths/~1a/get/parameters/0/schema/enum: warning: enum value(s) 3, false are "
        "booleans and numbers under type: string; read as the string(s) '3', 'false' — strings "
        "(hint: quote them: an unquoted 3 in JSON is a number, not a string)",
        f"{spec}#/paths/~1a/get/parameters/1/schema/enum: warning: no enum value has the "
        "declared type (integer), so no integer value is allowed — enum values of type integer "
        "(hint: list values of the declared type, or change the type)",
    ]


# -- security schemes ------------------------------------------------------------------------------


def test_security_schemes_as_a_ref_to_another_file_are_followed(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (SendGrid's split spec): ``securitySchemes: {$ref: file}`` was read as a
    scheme named ``$ref`` and skipped in silence, so every operation failed at run time
    ("needs credentials for [ApiKey]") and ``credentials={"ApiKey": ...}`` was refused as a
    scheme the spec does not declare. A requirement naming no declared scheme is said too."""
    warnings = _warnings("split_security.yaml")
    assert len(warnings) == 2, warnings
    assert warnings[0].endswith(
        "split_security.yaml#/components/securitySchemes/$ref: warning: securitySchemes is a "
        "$ref to the whole map; followed — a map of security schemes (each may be a $ref)"
    )
    assert warnings[1].endswith(
        "split_security.yaml#/paths/~1legacy/get/security/0/LegacyToken: warning: security "
        "requirement names 'LegacyToken', which no security scheme declares: no credential "
        "can be given for it, so an operation that needs it fails — a key of "
        "components.securitySchemes (ApiKey)"
    )
    pkg = packages["split_security"]
    assert set(pkg.API.security_schemes) == {"ApiKey"}
    call = pkg.CallAdapter.validate_python({"_tool": "getSecret"})
    with HttpClient(pkg.API, base_url=f"{server}/api", credentials={"ApiKey": "k1"}) as client:
        result = pkg.HttpActivities(client).get_secret(call)
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"secret": "s"}


# -- allOf -----------------------------------------------------------------------------------------


def test_an_allof_naming_a_base_beside_a_part_that_extends_it_loads_and_calls(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (SendGrid's ``design-input``): ``allOf: [Named, Common]`` with ``Common``
    extending ``Named`` was ``class PetOutput(Named, Common)``: no consistent MRO, a TypeError
    on the first call (pyright: "Cannot create consistent method ordering")."""
    pkg = packages["allof_repeated_base"]
    result = _call(pkg, server, {"_tool": "getPet", "petId": 7})
    assert result.success, result.error
    assert result.data.model_dump(mode="json", exclude_unset=True) == {"id": 7, "name": "pet7"}
    assert [c.__name__ for c in pkg.PetOutput.__bases__] == ["Common"]
    with pytest.raises(ValueError, match="name"):
        pkg.PetOutput.model_validate({"id": 7})


def test_a_property_two_allof_parents_declare_differently_is_restated_with_both(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (SendGrid's ``full_segment``): ``name`` optional in one parent and required
    in the other was the first parent's field alone (optional) and pyright refused the class
    ("Base classes ... define variable "name" in incompatible way")."""
    pkg = packages["allof_repeated_base"]
    result = _call(pkg, server, {"_tool": "getNote", "noteId": "n1"})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"title": "n1", "due": None}
    assert "title" in pkg.Note.__annotations__  # restated, not left to the bases
    for wrong in ({}, {"title": ""}, {"title": "x" * 11}):  # required, minLength, maxLength
        with pytest.raises(ValueError, match="title"):
            pkg.Note.model_validate(wrong)


def test_a_long_additional_properties_type_calls_and_is_pyright_clean(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Sentry's ``listOrganizationReleaseThresholdStatuses``): a long
    ``__pydantic_extra__`` annotation was wrapped by the formatter, its ``# pyright: ignore``
    moved off the line pyright reports, and pyright strict failed on the package. The
    pyright run over every package here is ``test_the_realworld_packages_are_pyright_clean``."""
    pkg = packages["long_extra_type"]
    result = _call(
        pkg, server, {"_tool": "listOrganizationReleaseThresholdStatuses", "org": "acme"}
    )
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"prod": [{"id": 1}], "staging": []}
    source = (Path(str(pkg.__file__)).parent / "models.py").read_text(encoding="utf-8")
    (line,) = [x for x in source.splitlines() if "__pydantic_extra__" in x]
    assert "# pyright: ignore[reportIncompatibleVariableOverride]" in line


@pytest.mark.slow  # pyright over every package here (~1 min); `make test-slow`
def test_the_realworld_packages_are_pyright_clean(tmp_path: Path) -> None:
    from .test_public_specs import pyright_clean

    out = tmp_path / "out"
    tree = compile_to_directory(sorted(SPECS.glob("*.yaml")), out)
    pyright_clean(tmp_path, [out / name for name in tree.packages])


# -- form bodies ----------------------------------------------------------------------------------


def test_a_form_bodys_encoding_style_is_used(packages: dict[str, ModuleType], server: str) -> None:
    """The defect (Stripe's spec writes ``encoding: {metadata: {style: deepObject}}`` for every
    object of its form bodies): the encoding was ignored and objects were sent ``form``-exploded,
    ``metadata={k: v}`` as ``k=v`` — a parameter of that name, or an error, on the server."""
    pkg = packages["form_deep_object"]
    sent = _call(
        pkg,
        server,
        {
            "_tool": "createCharge",
            "amount": 5,
            "metadata": {"order": "a 1"},
            "expand": ["customer", "invoice"],
            "card": {"number": "42", "cvc": "123"},
        },
    )
    assert sent.success, sent.error
    assert sent.data.model_dump(mode="json") == [
        ["amount", "5"],
        ["metadata[order]", "a 1"],
        ["expand[]", "customer"],
        ["expand[]", "invoice"],
        ["card[number]", "42"],
        ["card[cvc]", "123"],
    ]


def test_an_object_patch_body_is_not_sent_as_json_patch(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Kubernetes' Swagger 2.0 spec, 131 PATCH operations): ``consumes`` lists
    ``application/json-patch+json`` first and one object schema for every type; the object went
    out as a JSON Patch (RFC 6902: an array of operations), which the server refuses."""
    pkg = packages["swagger_patch_types"]
    merged = _call(pkg, server, {"_tool": "patchPod", "name": "p1", "body": {"spec": {"x": 1}}})
    assert merged.success, merged.error
    assert merged.data.model_dump(mode="json") == {
        "type": "application/merge-patch+json",
        "body": {"spec": {"x": 1}},
    }
    ops = [{"op": "replace", "path": "/spec/x", "value": 2}]
    patched = _call(pkg, server, {"_tool": "patchPodOps", "name": "p1", "body": ops})
    assert patched.success, patched.error  # an array body: JSON Patch, as listed
    assert patched.data.model_dump(mode="json") == {
        "type": "application/json-patch+json",
        "body": ops,
    }
    notes = [d.render() for d in generate_tree([SPECS / "swagger_patch_types.yaml"]).diagnostics]
    assert any(
        "~1pods~1{name}/patch/parameters/1/schema: note: the body is sent as "
        "application/merge-patch+json: application/json-patch+json (consumes) is an array" in n
        for n in notes
    ), notes


def test_a_body_that_consumes_any_type_is_sent_as_json(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect (Kubernetes' 402 create/replace operations consume ``*/*``): the range went
    out as the request's Content-Type, which names no format, and the server refuses it."""
    pkg = packages["swagger_patch_types"]
    created = _call(pkg, server, {"_tool": "createPod", "body": {"metadata": {"name": "p1"}}})
    assert created.success, created.error
    assert created.data.model_dump(mode="json") == {
        "type": "application/json",
        "body": {"metadata": {"name": "p1"}},
    }


# -- an Accept header parameter with one declared value ---------------------------------------------


def test_a_declared_accept_value_is_sent_on_every_call(
    packages: dict[str, ModuleType], server: str
) -> None:
    pkg = packages["versioned_accept"]
    items: list[dict[str, Any]] = compose(list(pkg.TOOLS))["properties"]["calls"]["items"]["anyOf"]
    assert all("Accept" not in item["properties"] for item in items)  # never a Call field
    listed = _call(pkg, server, {"_tool": "listIncidents", "limit": 3})
    assert listed.success, listed.error
    assert listed.data.model_dump(mode="json") == {"incidents": ["i1"], "limit": 3}
    # several values and no default: the client asks for the response's media type
    status = _call(pkg, server, {"_tool": "getStatus"})
    assert status.success, status.error
    assert status.data.model_dump(mode="json") == {"accept": "application/json"}
    notes = [d.render() for d in generate_tree([SPECS / "versioned_accept.yaml"]).diagnostics]
    assert any(
        "#/components/parameters/header_Accept: note:" in n
        and "sends the value it declares, 'application/vnd.acme+json;version=2'" in n
        for n in notes
    ), notes


def test_swagger_x_nullable_allows_null(packages: dict[str, ModuleType], server: str) -> None:
    notes = [d.render() for d in generate_tree([SPECS / "swagger_x_nullable.yaml"]).diagnostics]
    assert any("x-nullable: true read as nullable in 1 schema(s)" in n for n in notes), notes
    result = _call(packages["swagger_x_nullable"], server, {"_tool": "getNote", "noteId": "n1"})
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"title": "n1", "due": None}


# -- responses without a schema -------------------------------------------------------------------


def test_a_response_without_a_schema_is_any_value(
    packages: dict[str, ModuleType], server: str
) -> None:
    pkg = packages["no_response_schemas"]
    things = _call(pkg, server, {"_tool": "listThings"})
    assert things.success, things.error
    assert things.data.model_dump(mode="json") == [{"name": "a"}, {"name": "b"}]
    readme = _call(pkg, server, {"_tool": "getReadme"})
    assert readme.success and readme.data.model_dump(mode="json") == "# Read me\n"
    logo = _call(pkg, server, {"_tool": "getLogo"})
    assert logo.success, logo.error
    assert base64.b64decode(logo.data.model_dump(mode="json")) == LOGO


def test_204_is_a_success_with_no_data(packages: dict[str, ModuleType], server: str) -> None:
    pkg = packages["no_response_schemas"]
    added = _call(pkg, server, {"_tool": "addThing", "name": "c"})  # the body's fields
    assert added.success, added.error
    assert added.metadata["status"] == 204
    assert added.data is None or added.data.model_dump(mode="json") is None


# -- what the model sends that the operation can't take ------------------------------------------


def test_an_operation_tool_is_closed_and_the_feedback_names_the_fields(
    packages: dict[str, ModuleType],
) -> None:
    pkg = packages["no_response_schemas"]
    with pytest.raises(ValueError, match="body"):  # the JSON body's fields are the Call's own
        pkg.CallAdapter.validate_python({"_tool": "addThing", "body": {"name": "c"}})
    tools = list(pkg.TOOLS)
    composition = compose(tools, activities=[t.name for t in tools])
    items: list[dict[str, Any]] = composition["properties"]["calls"]["items"]["anyOf"]
    add_thing = next(i for i in items if i["properties"]["_tool"]["const"] == "addThing")
    assert add_thing["additionalProperties"] is False
    with pytest.raises(ValueError) as info:
        composition.response.model_validate(
            {"output": None, "calls": [{"_tool": "addThing", "body": {"name": "c"}}]}
        )
    text = str(info.value)
    assert "calls[0] (tool 'addThing') field body: Extra inputs are not permitted" in text
    assert "addThing takes name" in text


# -- every result carries the same metadata keys -------------------------------------------------


def test_every_result_has_the_same_metadata_keys(
    packages: dict[str, ModuleType], server: str
) -> None:
    """Code that prints ``result.metadata["status"]`` works for every outcome: a success, an
    HTTP error and a connection failure (status None) carry the same keys; a
    failure adds ``error_type``."""
    import socket

    things = packages["no_response_schemas"]
    ok = _call(things, server, {"_tool": "listThings"})
    missing = _call(things, server.replace("/api", "") + "/nowhere", {"_tool": "listThings"})
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    call = things.CallAdapter.validate_python({"_tool": "listThings"})
    with HttpClient(things.API, base_url=f"{closed}/api", retry=None) as client:
        unreachable = things.HttpActivities(client).activities()["listThings"](call)
    keys = {"status", "method", "url", "headers", "attempts", "retries", "redirects"}
    assert ok.success and set(ok.metadata) >= keys
    for failed, status in ((missing, 404), (unreachable, None)):
        assert not failed.success
        assert set(failed.metadata) == set(ok.metadata) | {"error_type"}, failed.metadata
        assert failed.metadata["status"] == status
    assert unreachable.metadata["error_type"] == "connection"


# -- Swagger 2.0 formData arrays ------------------------------------------------------------------


def test_swagger_form_arrays_are_sent_as_their_collection_format(
    packages: dict[str, ModuleType], server: str
) -> None:
    """The defect: a Swagger 2.0 ``formData`` array went out one field per item (``multi``)
    whatever its ``collectionFormat`` said — and ``csv``, one field ``tags=a,b``, is the default;
    a ``tsv`` array was sent comma-separated without a word."""
    pkg = packages["swagger_form_arrays"]
    form = _call(
        pkg,
        server,
        {
            "_tool": "submitForm",
            "tags": ["a", "b c"],
            "ids": [1, 2],
            "codes": ["x", "y"],
            "note": "n",
        },
    )
    assert form.success, form.error
    assert form.data.model_dump(mode="json") == [
        ["tags", "a,b c"],
        ["ids", "1"],
        ["ids", "2"],
        ["codes", "x|y"],
        ["note", "n"],
    ]
    parts = _call(
        pkg,
        server,
        {"_tool": "upload", "tags": ["a", "b"], "ids": [3, 4], "file": "aGk="},  # base64 of hi
    )
    assert parts.success, parts.error
    assert parts.data.model_dump(mode="json") == [
        ["tags", "a,b"],
        ["ids", "3"],
        ["ids", "4"],
        ["file", "hi"],
    ]
    (warning,) = [w for w in _warnings("swagger_form_arrays.yaml") if "collectionFormat" in w]
    assert "/paths/~1search/get/parameters/0/collectionFormat" in warning
    assert "'tsv'" in warning and "comma-separated" in warning
