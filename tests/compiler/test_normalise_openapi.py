"""The OpenAPI normalising rules (``toolbind.compiler.normalise.openapi_*``): each rule on its
fragment gives the canonical fragment and its located warning, and a minimal spec with the
quirk, compiled end to end, gives the tools and the warning the reader always gave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbind.compiler.diagnostics import Diagnostic, Diagnostics
from toolbind.compiler.frontends import read_spec
from toolbind.compiler.ir import SourceLocation, SpecPackage
from toolbind.compiler.normalise import table
from toolbind.compiler.normalise._openapi import (
    Consumed,
    Form,
    OpenApi,
    PathEntry,
    PathParameters,
    Produced,
    RefSiblings,
)
from toolbind.compiler.normalise.openapi_azure import PARAMETERIZED_HOST, X_MS_PATHS
from toolbind.compiler.normalise.openapi_parameters import WITHOUT_SCHEMA
from toolbind.compiler.normalise.openapi_paths import (
    EXPRESS,
    LEADING_SLASH,
    NOT_IN_TEMPLATE,
    UNDECLARED,
    WHITE_SPACE,
)
from toolbind.compiler.normalise.openapi_refs import (
    PATH_ITEM_SIBLINGS,
    PATHS_REF,
    SECURITY_SCHEMES_REF,
)
from toolbind.compiler.normalise.openapi_swagger2 import (
    BODY_PARAMETER,
    COLLECTION_FORMAT,
    FILE_TYPE,
    FORM_PARAMETERS,
    MEDIA_TYPES,
    OPENAPI3_STYLE,
    PARAMETER_SCHEMA,
    PARAMETER_WITHOUT_TYPE,
    RESPONSE_CONTENT,
    SECURITY_DEFINITIONS,
    SECURITY_SCHEME,
    SERVERS,
)

AT = SourceLocation(file="spec.json", pointer="/paths/pets")
OK = {"200": {"description": "ok"}}


def _op(name: str) -> dict[str, Any]:
    return {"operationId": name, "responses": OK}


def _compile(
    tmp_path: Path, spec: dict[str, Any], extra: dict[str, Any] | None = None
) -> tuple[SpecPackage, list[Diagnostic]]:
    for name, value in (extra or {}).items():
        (tmp_path / name).write_text(json.dumps(value), encoding="utf-8")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    diags = Diagnostics()
    package = read_spec(path, "spec.json", diags)
    assert package is not None and package.http is not None
    return package, diags.items


def _routes(package: SpecPackage) -> dict[str, str]:
    """Tool name → the path its HTTP operation is sent to."""
    assert package.http is not None
    return {name: op.path for name, op in package.http.operations.items()}


def _warned(diags: list[Diagnostic], found: str) -> Diagnostic:
    """The one warning or note whose text is ``found``."""
    hits = [d for d in diags if d.found == found]
    assert len(hits) == 1, [d.found for d in diags]
    return hits[0]


def _v3(paths: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **more}


def test_the_table_lists_every_openapi_rule_once() -> None:
    rows = [row for row in table() if row[0].startswith("openapi-")]
    names = [name for _, name, *_ in rows]
    assert len(names) == len(set(names)) == 23
    assert all(accepts and makes for _, _, accepts, makes, _ in rows)


# -- openapi-paths ----------------------------------------------------------------------------


def test_path_white_space_rule() -> None:
    fixed = WHITE_SPACE.apply("/rooms/{id}/invite ", AT, OpenApi(document={}))
    assert fixed is not None and fixed.value == "/rooms/{id}/invite"
    (warning,) = fixed.diagnostics
    assert warning.severity == "warning" and warning.loc == AT
    assert warning.found == (
        "the path '/rooms/{id}/invite ' has white space around it; read as '/rooms/{id}/invite'"
    )
    assert WHITE_SPACE.apply("/rooms", AT, OpenApi(document={})) is None


def test_path_white_space_end_to_end(tmp_path: Path) -> None:
    package, diags = _compile(tmp_path, _v3({"/pets ": {"get": _op("listPets")}}))
    assert list(_routes(package).values()) == ["/pets"]
    warning = _warned(diags, "the path '/pets ' has white space around it; read as '/pets'")
    assert warning.loc.pointer == "/paths/~1pets "


def test_path_leading_slash_rule() -> None:
    fixed = LEADING_SLASH.apply("pets/{id}", AT, OpenApi(document={}))
    assert fixed is not None and fixed.value == "/pets/{id}"
    assert (
        fixed.diagnostics[0].found
        == "the path 'pets/{id}' does not start with /; read as '/pets/{id}'"
    )
    assert LEADING_SLASH.apply("?comp=list", AT, OpenApi(document={})) is None


def test_path_leading_slash_end_to_end(tmp_path: Path) -> None:
    package, diags = _compile(tmp_path, _v3({"pets": {"get": _op("listPets")}}))
    assert list(_routes(package).values()) == ["/pets"]
    assert _warned(diags, "the path 'pets' does not start with /; read as '/pets'").loc.pointer == (
        "/paths/pets"
    )


def test_path_express_parameter_rule() -> None:
    fixed = EXPRESS.apply("/media/:id/info", AT, OpenApi(document={}))
    assert fixed is not None and fixed.value == "/media/:id/info"
    (warning,) = fixed.diagnostics
    assert warning.expected == "a path template: /media/{id}/info"
    assert EXPRESS.apply("/media/{id}/info", AT, OpenApi(document={})) is None


def test_path_express_parameter_end_to_end(tmp_path: Path) -> None:
    package, diags = _compile(tmp_path, _v3({"/media/:id/info": {"get": _op("mediaInfo")}}))
    assert list(_routes(package).values()) == ["/media/:id/info"]
    _warned(
        diags,
        "the path '/media/:id/info' has ':id', a parameter as Express writes it; OpenAPI's are "
        "{name}, so it is sent as written",
    )


def test_path_parameter_not_in_template_rule() -> None:
    at_id = AT.child("get", "parameters", 0)
    declared = {"id": ({"name": "id", "in": "path"}, at_id)}
    fixed = NOT_IN_TEMPLATE.apply(
        PathParameters(route="/pets", declared=declared), AT, OpenApi(document={})
    )
    assert fixed is not None and fixed.value == PathParameters(route="/pets", declared={})
    (warning,) = fixed.diagnostics
    assert warning.loc == at_id and warning.render() == (
        "spec.json#/paths/pets/get/parameters/0: warning: path parameter 'id' is not named in "
        "the path '/pets'; it is not a Call field — a path parameter whose name is one of the "
        "path's {templates} (none) (hint: rename it after its {template}, or move it to the query)"
    )
    kept = PathParameters(route="/pets/{id}", declared=declared)
    assert NOT_IN_TEMPLATE.apply(kept, AT, OpenApi(document={})) is None


def test_path_parameter_not_in_template_end_to_end(tmp_path: Path) -> None:
    op = _op("listPets") | {"parameters": [{"name": "id", "in": "path", "required": True}]}
    package, diags = _compile(tmp_path, _v3({"/pets": {"get": op}}))
    assert package.http is not None and package.http.operations["listPets"].parameters == ()
    warning = _warned(
        diags, "path parameter 'id' is not named in the path '/pets'; it is not a Call field"
    )
    assert warning.loc.pointer == "/paths/~1pets/get/parameters/0"


@pytest.mark.parametrize("swagger", [False, True])
def test_path_template_undeclared_rule(swagger: bool) -> None:
    fixed = UNDECLARED.apply(
        PathParameters(route="/pets/{id}", declared={}), AT, OpenApi(document={}, swagger=swagger)
    )
    assert fixed is not None
    string = {"type": "string"} if swagger else {"schema": {"type": "string"}}
    declared = {"id": ({"name": "id", "in": "path", "required": True} | string, AT)}
    assert fixed.value == PathParameters(route="/pets/{id}", declared=declared)
    (warning,) = fixed.diagnostics
    assert warning.loc == AT and warning.render() == (
        "spec.json#/paths/pets: warning: the path '/pets/{id}' names {id}, which the operation "
        "does not declare; read as a required string path parameter — a parameter {name: id, "
        "in: path, required: true} (hint: declare it in the operation's or the path item's "
        "parameters)"
    )
    assert UNDECLARED.apply(fixed.value, AT, OpenApi(document={})) is None


def test_path_template_undeclared_end_to_end(tmp_path: Path) -> None:
    package, diags = _compile(tmp_path, _v3({"/pets/{id}": {"get": _op("getPet")}}))
    assert package.http is not None
    (parameter,) = package.http.operations["getPet"].parameters
    assert (parameter.name, parameter.location) == ("id", "path")
    warning = _warned(
        diags,
        "the path '/pets/{id}' names {id}, which the operation does not declare; read as a "
        "required string path parameter",
    )
    assert warning.loc.pointer == "/paths/~1pets~1{id}/get"


# -- openapi-parameters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parameter", "canonical"),
    [
        ({"name": "q", "in": "query"}, {"name": "q", "in": "query", "schema": {}}),
        (
            {"name": "q", "in": "query", "content": {"application/json": {}}},
            {"name": "q", "in": "query", "content": {"application/json": {"schema": {}}}},
        ),
    ],
)
def test_parameter_without_schema_rule(parameter: dict[str, Any], canonical: Any) -> None:
    at = AT.child("get", "parameters", 0)
    fixed = WITHOUT_SCHEMA.apply(parameter, at, OpenApi(document={}))
    assert fixed is not None and fixed.value == canonical
    (warning,) = fixed.diagnostics
    assert warning.render() == (
        "spec.json#/paths/pets/get/parameters/0: warning: parameter 'q' has no schema — a "
        "schema; any value is allowed"
    )
    assert WITHOUT_SCHEMA.apply(fixed.value, at, OpenApi(document={})) is None
    assert WITHOUT_SCHEMA.apply(parameter, at, OpenApi(document={}, swagger=True)) is None


def test_parameter_without_schema_end_to_end(tmp_path: Path) -> None:
    def spec(parameter: dict[str, Any]) -> dict[str, Any]:
        return _v3({"/pets": {"get": _op("listPets") | {"parameters": [parameter]}}})

    package, diags = _compile(tmp_path, spec({"name": "q", "in": "query"}))
    warning = _warned(diags, "parameter 'q' has no schema")
    assert warning.loc.pointer == "/paths/~1pets/get/parameters/0"
    (tmp_path / "canonical").mkdir()
    canonical, _ = _compile(
        tmp_path / "canonical", spec({"name": "q", "in": "query", "schema": {}})
    )
    assert package.http == canonical.http
    assert package.tools == canonical.tools


# -- openapi-refs -----------------------------------------------------------------------------


def test_paths_ref_rule() -> None:
    at = SourceLocation(file="spec.json", pointer="/paths")
    fixed = PATHS_REF.apply({"$ref": "paths.json"}, at, OpenApi(document={}))
    assert fixed is not None and fixed.value == {"$ref": "paths.json"}
    (warning,) = fixed.diagnostics
    assert warning.loc.pointer == "/paths/$ref"
    assert warning.found == "paths is a $ref to the whole map; followed"
    assert PATHS_REF.apply({"/pets": {}}, at, OpenApi(document={})) is None


def test_paths_ref_end_to_end(tmp_path: Path) -> None:
    spec = _v3({"$ref": "paths.json"})
    package, diags = _compile(tmp_path, spec, {"paths.json": {"/pets": {"get": _op("listPets")}}})
    assert list(_routes(package).values()) == ["/pets"]
    _warned(diags, "paths is a $ref to the whole map; followed")


def test_security_schemes_ref_rule() -> None:
    at = SourceLocation(file="spec.json", pointer="/components/securitySchemes")
    fixed = SECURITY_SCHEMES_REF.apply({"$ref": "s.json"}, at, OpenApi(document={}))
    assert fixed is not None
    assert fixed.diagnostics[0].found == "securitySchemes is a $ref to the whole map; followed"
    assert fixed.diagnostics[0].expected == "a map of security schemes (each may be a $ref)"


def test_security_schemes_ref_end_to_end(tmp_path: Path) -> None:
    spec = _v3(
        {"/pets": {"get": _op("listPets")}},
        components={"securitySchemes": {"$ref": "schemes.json"}},
        security=[{"key": []}],
    )
    schemes = {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}}
    package, diags = _compile(tmp_path, spec, {"schemes.json": schemes})
    assert package.http is not None and list(package.http.security_schemes) == ["key"]
    _warned(diags, "securitySchemes is a $ref to the whole map; followed")


def test_path_item_ref_siblings_rule() -> None:
    both = RefSiblings(beside={"get": {}, "x-a": 1}, referenced={"get": {}, "x-a": 2})
    fixed = PATH_ITEM_SIBLINGS.apply(both, AT, OpenApi(document={}))
    assert fixed is not None and fixed.value is both
    assert fixed.diagnostics[0].found == (
        "the path item has get both beside its $ref and in the item it references; read as "
        "written beside the $ref"
    )
    apart = RefSiblings(beside={"delete": {}}, referenced={"get": {}})
    assert PATH_ITEM_SIBLINGS.apply(apart, AT, OpenApi(document={})) is None


def test_path_item_ref_siblings_end_to_end(tmp_path: Path) -> None:
    spec = _v3({"/pets": {"$ref": "item.json", "get": _op("listMine"), "post": _op("addPet")}})
    item = {"get": _op("listTheirs")}
    package, diags = _compile(tmp_path, spec, {"item.json": item})
    assert sorted(_routes(package)) == ["addPet", "listMine"]
    _warned(
        diags,
        "the path item has get both beside its $ref and in the item it references; read as "
        "written beside the $ref",
    )


# -- openapi-azure ----------------------------------------------------------------------------


def test_x_ms_paths_rule() -> None:
    top = SourceLocation(file="spec.json")
    document: dict[str, Any] = {"x-ms-paths": {"/{c}?restype=container": {}}}
    first = PathEntry(route="/a", item={}, in_map=top.child("paths"))
    fixed = X_MS_PATHS.apply((first,), top, OpenApi(document=document, swagger=True))
    assert fixed is not None
    assert fixed.value == (
        first,
        PathEntry(route="/{c}?restype=container", item={}, in_map=top.child("x-ms-paths")),
    )
    (note,) = fixed.diagnostics
    assert note.severity == "note" and note.loc.pointer == "/x-ms-paths"
    assert X_MS_PATHS.apply((first,), top, OpenApi(document={})) is None


def test_x_ms_paths_end_to_end(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "example.com",
        "paths": {"/{c}": {"get": _op("getContainerItem")}},
        "x-ms-paths": {
            "/{c}?restype=container": {
                "put": {
                    "operationId": "createContainer",
                    "parameters": [{"name": "c", "in": "path", "required": True, "type": "string"}],
                    "responses": OK,
                }
            }
        },
    }
    package, diags = _compile(tmp_path, spec)
    routes = _routes(package)
    assert sorted(routes.values()) == ["/{c}", "/{c}?restype=container"]
    _warned(
        diags,
        "1 path(s) read from x-ms-paths (AutoRest's paths with a fixed query): each query is "
        "sent as written",
    )
    assert not any("x-ms-paths" in d.found and "extension" in d.found for d in diags)


def test_parameterized_host_rule() -> None:
    top = SourceLocation(file="spec.json")
    host = {
        "hostTemplate": "{account}.{region}.example.net",
        "parameters": [
            {"$ref": "#/parameters/Account"},
            {
                "name": "region",
                "in": "path",
                "type": "string",
                "enum": ["eu", "us"],
                "default": "eu",
            },
            {"name": "tier", "in": "path", "type": "string", "enum": ["a", "b"]},
            {"in": "path"},
        ],
    }
    document: dict[str, Any] = {
        "swagger": "2.0",
        "basePath": "/v2",
        "schemes": ["ws", "http"],
        "servers": [{"url": "https://made.by.an.earlier.rule"}],
        "x-ms-parameterized-host": host,
        "parameters": {"Account": {"name": "account", "in": "path", "type": "string"}},
    }
    fixed = PARAMETERIZED_HOST.apply(document, top, OpenApi(document=document, swagger=True))
    assert fixed is not None and "x-ms-parameterized-host" not in fixed.value
    assert fixed.value["servers"] == [
        {
            "url": "http://{account}.{region}.example.net/v2",
            "variables": {
                "region": {"default": "eu", "enum": ["eu", "us"]},
                "tier": {"enum": ["a", "b"]},
            },
        }
    ]
    (said,) = fixed.diagnostics
    assert said.severity == "note" and said.loc.pointer == "/x-ms-parameterized-host"
    assert said.found == (
        "x-ms-parameterized-host read as the server 'http://{account}.{region}.example.net/v2': "
        "give 'account' with HttpClient(server_variables={...}) (or base_url=)"
    )
    # a reference is followed as the reader follows it (here: to a file of the split spec)
    seen: list[str] = []

    def follow(fragment: Any, at: SourceLocation) -> Any:
        seen.append(at.pointer)
        return {"name": "account", "default": 7} if "$ref" in fragment else fragment

    unprefixed = {"swagger": "2.0", "x-ms-parameterized-host": host | {"useSchemePrefix": False}}
    context = OpenApi(document=unprefixed, swagger=True, follow=follow)
    followed = PARAMETERIZED_HOST.apply(unprefixed, top, context)
    assert (
        followed is not None
        and followed.value["servers"][0]["url"] == "{account}.{region}.example.net"
    )
    assert followed.value["servers"][0]["variables"]["account"] == {"default": "7"}
    assert seen == [f"/x-ms-parameterized-host/parameters/{i}" for i in range(4)]
    assert followed.diagnostics[0].found.endswith("'{account}.{region}.example.net'")
    # OpenAPI 3 has servers of its own
    assert PARAMETERIZED_HOST.apply(document, top, OpenApi(document=document)) is None
    bad = {"swagger": "2.0", "x-ms-parameterized-host": {"hostTemplate": 5}}
    assert PARAMETERIZED_HOST.apply(bad, top, OpenApi(document=bad, swagger=True)) is None


def test_parameterized_host_end_to_end(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "not.the.host.example",
        "basePath": "/api",
        "x-ms-parameterized-host": {
            "hostTemplate": "{endpoint}/{region}",
            "useSchemePrefix": False,
            "parameters": [
                {"$ref": "common.json#/parameters/Endpoint"},
                {"name": "region", "in": "path", "type": "string", "enum": ["eu", "us"]},
                {"$ref": "#/parameters/Missing"},
            ],
        },
        "paths": {"/pets": {"get": _op("listPets")}},
    }
    endpoint = {"name": "endpoint", "in": "path", "required": True, "type": "string"}
    common = {"parameters": {"Endpoint": endpoint | {"default": "https://eu.example"}}}
    package, diags = _compile(tmp_path, spec, {"common.json": common})
    assert package.http is not None
    (server,) = package.http.servers
    assert server.url == "{endpoint}/{region}/api"
    assert server.variables == {"endpoint": "https://eu.example"}
    assert server.enums == {"region": ("eu", "us")}
    said = _warned(
        diags,
        "x-ms-parameterized-host read as the server '{endpoint}/{region}/api': give 'region' "
        "with HttpClient(server_variables={...}) (or base_url=)",
    )
    assert said.loc.pointer == "/x-ms-parameterized-host"
    # a reference that leads nowhere is said where it is written, before the server's note
    missing = [d for d in diags if d.loc.pointer.endswith("/parameters/2/$ref")]
    assert [d.severity for d in missing] == ["warning"]
    assert diags.index(missing[0]) < diags.index(said)
    assert not any("extension" in d.found for d in diags)
    assert diags[-1].found.startswith("read → emitted")  # (the summary says the last word)


def test_server_variable_without_default_is_given_by_the_client(tmp_path: Path) -> None:
    spec = _v3(
        {"/pets": {"get": _op("listPets")}},
        servers=[
            {"url": "https://{region}.example.com", "variables": {"region": {"enum": ["eu"]}}}
        ],
    )
    package, _ = _compile(tmp_path, spec)
    assert package.http is not None
    (server,) = package.http.servers
    # OpenAPI requires a default; there is none to send, so the client is given one (it was
    # '' and the request went to https://.example.com)
    assert server.variables == {} and server.enums == {"region": ("eu",)}


# -- openapi-swagger2 -------------------------------------------------------------------------


def test_collection_format_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    fixed = COLLECTION_FORMAT.apply({"type": "array", "collectionFormat": "multi"}, AT, context)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {"type": "array", "style": "form", "explode": True}
    tsv = COLLECTION_FORMAT.apply({"type": "array", "collectionFormat": "tsv"}, AT, context)
    assert tsv is not None and tsv.value["style"] == "form" and tsv.value["explode"] is False
    (warning,) = tsv.diagnostics
    assert warning.loc.pointer == "/paths/pets/collectionFormat"
    assert warning.found == (
        "collectionFormat 'tsv' cannot be sent (tab-separated: OpenAPI 3 has no such style); "
        "the items are sent comma-separated (csv)"
    )


def test_collection_format_end_to_end(tmp_path: Path) -> None:
    parameters = [
        {
            "name": "ids",
            "in": "query",
            "type": "array",
            "items": {"type": "string"},
            "collectionFormat": "pipes",
        },
        {
            "name": "tags",
            "in": "query",
            "type": "array",
            "items": {"type": "string"},
            "collectionFormat": "tsv",
        },
    ]
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/pets": {"get": {"operationId": "listPets", "parameters": parameters, "responses": OK}}
        },
    }
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None
    (op,) = package.http.operations.values()
    assert [(p.name, p.style, p.explode) for p in op.parameters] == [
        ("ids", "pipeDelimited", False),
        ("tags", "form", False),
    ]
    warning = _warned(
        diags,
        "collectionFormat 'tsv' cannot be sent (tab-separated: OpenAPI 3 has no such style); "
        "the items are sent comma-separated (csv)",
    )
    assert warning.loc.pointer == "/paths/~1pets/get/parameters/1/collectionFormat"


def test_openapi3_style_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    written = {"name": "f", "in": "query", "schema": {"type": "object"}, "explode": True}
    fixed = OPENAPI3_STYLE.apply(written, AT, context)
    assert fixed is not None and fixed.value == written
    (said,) = fixed.diagnostics
    assert (said.severity, said.loc.pointer) == ("note", "/paths/pets")
    assert said.found == (
        "parameter 'f' is written with OpenAPI 3's explode, which Swagger 2.0 does not define; "
        "sent as OpenAPI 3 says"
    )
    both = {"name": "t", "in": "query", "type": "array", "collectionFormat": "csv", "explode": True}
    ignored = OPENAPI3_STYLE.apply(both, AT, context)
    assert ignored is not None and "explode" not in ignored.value
    assert [(d.severity, d.loc.pointer) for d in ignored.diagnostics] == [
        ("warning", "/paths/pets/explode")
    ]
    bad = OPENAPI3_STYLE.apply({"name": "t", "in": "query", "style": "tabs"}, AT, context)
    assert bad is not None and "style" not in bad.value
    assert bad.diagnostics[0].found == "parameter 't' has style a string 'tabs'; ignored"
    assert OPENAPI3_STYLE.apply({"name": "q", "in": "query", "type": "string"}, AT, context) is None
    assert OPENAPI3_STYLE.apply(written, AT, OpenApi(document={})) is None  # (OpenAPI 3's own)


def test_openapi3_style_end_to_end(tmp_path: Path) -> None:
    # httpbin's own spec: an object sent as k=v pairs; it went out as freeform=k,v, unsaid
    freeform = {
        "name": "freeform",
        "in": "query",
        "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        "style": "form",
        "explode": True,
    }
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/h": {"get": {"operationId": "h", "parameters": [freeform], "responses": OK}}},
    }
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None
    (op,) = package.http.operations.values()
    assert [(p.name, p.style, p.explode) for p in op.parameters] == [("freeform", "form", True)]
    assert type(package.tools[0].params.properties[0].schema).__name__ == "ObjectNode"
    assert not [d for d in diags if d.severity != "note"]
    _warned(
        diags,
        "parameter 'freeform' is written with OpenAPI 3's style and explode, which Swagger 2.0 "
        "does not define; sent as OpenAPI 3 says",
    )


def test_parameter_schema_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    written = {
        "name": "ids",
        "in": "query",
        "required": True,
        "description": "the ids",
        "type": "array",
        "items": {"type": "integer"},
        "style": "form",
        "explode": False,
    }
    fixed = PARAMETER_SCHEMA.apply(written, AT, context)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {
        "name": "ids",
        "in": "query",
        "required": True,
        "description": "the ids",
        "style": "form",
        "explode": False,
        "schema": {"description": "the ids", "type": "array", "items": {"type": "integer"}},
    }
    assert fixed.moved == ((("schema",), AT),)  # (its keywords are the parameter's own)
    both = PARAMETER_SCHEMA.apply(
        {"name": "q", "in": "query", "type": "string", "schema": {}}, AT, context
    )
    assert both is not None and both.value["schema"] == {"type": "string"}
    assert [d.loc.pointer for d in both.diagnostics] == ["/paths/pets/schema"]
    canonical = {"name": "q", "in": "query", "schema": {"type": "string"}}
    assert PARAMETER_SCHEMA.apply(canonical, AT, context) is None
    assert PARAMETER_SCHEMA.apply({"name": "b", "in": "body", "schema": {}}, AT, context) is None
    assert PARAMETER_SCHEMA.apply(written, AT, OpenApi(document={})) is None


def test_parameter_schema_end_to_end(tmp_path: Path) -> None:
    # what is said of a Swagger 2.0 parameter's schema points at the parameter, as written
    limit = {"name": "limit", "in": "query", "type": "integer", "maximum": "ten"}
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/p": {"get": {"operationId": "p", "parameters": [limit], "responses": OK}}},
    }
    package, diags = _compile(tmp_path, spec)
    assert package.tools[0].params.properties[0].name == "limit"
    assert [d.loc.pointer for d in diags if d.severity != "note"] == [
        "/paths/~1p/get/parameters/0/maximum"
    ]


def test_security_definitions_rule() -> None:
    schemes = {"key": {"type": "apiKey", "name": "X-Key", "in": "header"}}
    document = {"swagger": "2.0", "securityDefinitions": schemes, "paths": {}}
    fixed = SECURITY_DEFINITIONS.apply(document, AT, OpenApi(document=document, swagger=True))
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {
        "swagger": "2.0",
        "paths": {},
        "components": {"securitySchemes": schemes},
    }
    assert fixed.moved == ((("components", "securitySchemes"), AT.child("securityDefinitions")),)
    assert (
        SECURITY_DEFINITIONS.apply({"swagger": "2.0"}, AT, OpenApi(document={}, swagger=True))
        is None
    )
    assert SECURITY_DEFINITIONS.apply(document, AT, OpenApi(document=document)) is None


def test_security_definitions_end_to_end(tmp_path: Path) -> None:
    # the schemes are read, and what is said of them names the map the spec writes
    op: dict[str, Any] = {
        "operationId": "p",
        "security": [{"key": []}, {"other": []}],
        "responses": OK,
    }
    spec: dict[str, Any] = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "securityDefinitions": {"key": {"type": "apiKey", "name": "X-Key", "in": "header"}},
        "paths": {"/p": {"get": op}},
    }
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None and list(package.http.security_schemes) == ["key"]
    (said,) = [d for d in diags if d.severity == "warning"]
    assert said.loc.pointer == "/paths/~1p/get/security/1/other"
    assert said.expected == "a key of securityDefinitions (key)"


def test_body_parameter_rule() -> None:
    document: dict[str, Any] = {
        "definitions": {"Ops": {"type": "array", "items": {}}, "Pet": {"type": "object"}}
    }
    context = OpenApi(document=document, swagger=True)
    body = {"name": "b", "in": "body", "required": True, "description": "the pet"}
    pet = Consumed(
        parameter=body | {"schema": {"$ref": "#/definitions/Pet"}},
        operation={"consumes": ["application/xml", "application/json"]},
    )
    fixed = BODY_PARAMETER.apply(pet, AT, context)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/definitions/Pet", "description": "the pet"}}
        },
    }
    assert fixed.moved == ((("content", "application/json"), AT),)
    patch_types = {"consumes": ["application/json-patch+json", "application/merge-patch+json"]}
    merge = BODY_PARAMETER.apply(
        Consumed(parameter=pet.parameter, operation=patch_types), AT, context
    )
    assert merge is not None and list(merge.value["content"]) == ["application/merge-patch+json"]
    assert [(d.severity, d.loc.pointer) for d in merge.diagnostics] == [
        ("note", "/paths/pets/schema")
    ]
    ops = Consumed(parameter={"schema": {"$ref": "#/definitions/Ops"}}, operation=patch_types)
    kept = BODY_PARAMETER.apply(ops, AT, context)
    assert kept is not None and list(kept.value["content"]) == ["application/json-patch+json"]
    bare = BODY_PARAMETER.apply(Consumed(parameter={}, operation={}), AT, context)
    assert bare is not None
    assert bare.value == {"required": False, "content": {"application/json": {"schema": {}}}}
    assert BODY_PARAMETER.apply(pet, AT, OpenApi(document={})) is None


def test_body_parameter_end_to_end(tmp_path: Path) -> None:
    # the body parameter is the request body; what is said of it points at the parameter
    body = {
        "name": "pet",
        "in": "body",
        "required": True,
        "schema": {"type": "object", "properties": {"age": {"type": "integer", "maximum": "x"}}},
    }
    op = {"operationId": "add", "consumes": ["text/xml"], "parameters": [body], "responses": OK}
    spec = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {"/p": {"post": op}}}
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None
    made = package.http.operations["add"].body
    assert made is not None and (made.media_type, made.kind) == ("text/xml", "text")
    assert made.fields == (("age", "age"),)
    assert [d.loc.pointer for d in diags if d.severity != "note"] == [
        "/paths/~1p/post/parameters/0/schema/properties/age/maximum"
    ]


def test_form_parameters_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    at = [AT.child("parameters", i) for i in range(3)]
    name = {"name": "name", "in": "formData", "type": "string", "required": True}
    tags = {"name": "tags", "in": "formData", "type": "array", "items": {"type": "string"}}
    photo = {"name": "photo", "in": "formData", "type": "file"}
    form = Form(
        parameters=(("name", name, at[0]), ("tags", tags | {"collectionFormat": "multi"}, at[1])),
        operation={},
    )
    fixed = FORM_PARAMETERS.apply(form, AT, context)
    assert fixed is not None and fixed.diagnostics == ()
    media = {
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["name"],
        },
        "encoding": {"tags": {"style": "form", "explode": True}},
    }
    assert fixed.value == {
        "required": True,
        "content": {"application/x-www-form-urlencoded": media},
    }
    where = ("content", "application/x-www-form-urlencoded", "schema", "properties")
    assert fixed.moved == (((*where, "name"), at[0]), ((*where, "tags"), at[1]))
    with_file = Form(parameters=(("photo", photo, at[2]),), operation={})
    multipart = FORM_PARAMETERS.apply(with_file, AT, context)
    assert multipart is not None and multipart.value == {
        "required": False,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"photo": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
    assert FORM_PARAMETERS.apply(form, AT, OpenApi(document={})) is None


def test_form_parameters_end_to_end(tmp_path: Path) -> None:
    # what is said of a form field points at its parameter, as written
    parameters = [
        {"name": "tags[]", "in": "formData", "type": "array", "items": {"type": "string"}},
        {"name": "age", "in": "formData", "type": "integer", "maximum": "x", "required": True},
    ]
    op = {"operationId": "f", "parameters": parameters, "responses": OK}
    spec = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {"/f": {"post": op}}}
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None
    made = package.http.operations["f"].body
    assert made is not None and made.media_type == "application/x-www-form-urlencoded"
    assert made.fields == (("tags", "tags[]"), ("age", "age"))
    assert [(p.property, p.style, p.explode) for p in made.parts] == [
        ("tags[]", "form", False),
        ("age", None, None),
    ]
    said = [(d.severity, d.loc.pointer) for d in diags if "read → emitted" not in d.found]
    assert said == [
        ("error", "/paths/~1f/post/parameters/1/maximum"),
        ("note", "/paths/~1f/post/parameters/0"),
    ]


def test_a_multipart_form_datas_encoding_style_is_read_as_openapi_31_says(tmp_path: Path) -> None:
    # OpenAPI 3.1's Encoding Object applies style and explode to multipart/form-data too (the
    # form a Swagger 2.0 multipart form with an array is brought to); they were ignored there
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
    }
    media = {"schema": schema, "encoding": {"tags": {"style": "form", "explode": False}}}
    body = {"content": {"multipart/form-data": media}}
    op = {"operationId": "up", "requestBody": body, "responses": OK}
    package, diags = _compile(tmp_path, _v3({"/up": {"post": op}}))
    assert package.http is not None
    made = package.http.operations["up"].body
    assert made is not None
    assert [(p.property, p.style, p.explode) for p in made.parts] == [("tags", "form", False)]
    assert not [d for d in diags if "encoding" in d.found]


def test_response_content_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    response: dict[str, Any] = {
        "description": "ok",
        "schema": {"type": "file"},
        "headers": {"X-N": {}},
    }
    produced = Produced(
        response=response, operation={"produces": ["application/xml", "application/json", 5]}
    )
    fixed = RESPONSE_CONTENT.apply(produced, AT, context)
    assert fixed is not None and fixed.diagnostics == ()
    binary = {"schema": {"type": "string", "format": "binary"}}
    assert fixed.value == {
        "description": "ok",
        "headers": {"X-N": {}},
        "content": {"application/xml": binary, "application/json": binary},
    }
    assert fixed.moved == (
        (("content", "application/xml", "schema"), AT.child("schema")),
        (("content", "application/json", "schema"), AT.child("schema")),
    )
    none = RESPONSE_CONTENT.apply(Produced(response={"schema": {}}, operation={}), AT, context)
    assert none is not None and list(none.value["content"]) == ["application/json"]
    empty = Produced(response={"description": "gone"}, operation={"produces": "text/plain"})
    kept = RESPONSE_CONTENT.apply(empty, AT, context)
    assert kept is not None and kept.value == {"description": "gone"}
    assert RESPONSE_CONTENT.apply(produced, AT, OpenApi(document={})) is None


def test_response_content_end_to_end(tmp_path: Path) -> None:
    # the type picked is the one the operation produces (JSON first); what is said of the
    # schema points at the response's own schema, as written
    responses = {
        "200": {"description": "ok", "schema": {"type": "integer", "maximum": "ten"}},
        "404": {"description": "no", "schema": {"type": "object"}},
    }
    op = {
        "operationId": "n",
        "produces": ["text/plain", "application/json"],
        "responses": responses,
    }
    spec = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {"/n": {"get": op}}}
    package, diags = _compile(tmp_path, spec)
    assert package.http is not None
    (http,) = package.http.operations.values()
    assert [(r.status, r.media_type) for r in http.responses] == [
        ("200", "application/json"),
        ("404", "application/json"),
    ]
    assert [status for status, _ in package.tools[0].errors] == ["404"]
    assert [d.loc.pointer for d in diags if d.severity != "note"] == [
        "/paths/~1n/get/responses/200/schema/maximum"
    ]


def test_parameter_without_type_rule() -> None:
    context = OpenApi(document={}, swagger=True)
    fixed = PARAMETER_WITHOUT_TYPE.apply({"name": "q", "in": "query"}, AT, context)
    assert fixed is not None and fixed.value == {"name": "q", "in": "query"}
    (warning,) = fixed.diagnostics
    assert (warning.severity, warning.loc.pointer) == ("warning", "/paths/pets")
    assert warning.found == "parameter 'q' has no type"
    typed = {"name": "q", "in": "query", "type": "string"}
    body: dict[str, Any] = {"name": "b", "in": "body", "schema": {}}
    assert PARAMETER_WITHOUT_TYPE.apply(typed, AT, context) is None
    assert PARAMETER_WITHOUT_TYPE.apply(body, AT, context) is None
    assert (
        PARAMETER_WITHOUT_TYPE.apply({"name": "q", "in": "query"}, AT, OpenApi(document={})) is None
    )


def test_parameter_without_type_end_to_end(tmp_path: Path) -> None:
    # a Swagger 2.0 parameter without a type was any value, with no word even under -v
    parameters = [{"name": "q", "in": "query", "required": True}]
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/pets": {"get": {"operationId": "findPets", "parameters": parameters, "responses": OK}}
        },
    }
    package, diags = _compile(tmp_path, spec)
    warning = _warned(diags, "parameter 'q' has no type")
    assert warning.loc.pointer == "/paths/~1pets/get/parameters/0"
    assert warning.expected is not None and "any value is allowed" in warning.expected
    assert package.tools[0].name == "findPets"


def test_file_type_rule() -> None:
    fixed = FILE_TYPE.apply({"type": "file", "description": "d"}, AT, OpenApi(document={}))
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {"type": "string", "format": "binary", "description": "d"}
    assert FILE_TYPE.apply({"type": "string"}, AT, OpenApi(document={})) is None


def test_file_type_end_to_end(tmp_path: Path) -> None:
    upload = {
        "operationId": "upload",
        "consumes": ["multipart/form-data"],
        "parameters": [{"name": "file", "in": "formData", "type": "file", "required": True}],
        "responses": {"200": {"description": "ok", "schema": {"type": "file"}}},
    }
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/up": {"post": upload}},
    }
    package, _ = _compile(tmp_path, spec)
    assert package.http is not None
    (op,) = package.http.operations.values()
    assert op.body is not None and op.body.media_type == "multipart/form-data"
    assert [(p.property, p.is_file) for p in op.body.parts] == [("file", True)]
    assert [r.binary for r in op.responses] == [True]


def test_servers_rule() -> None:
    swagger = OpenApi(document={}, swagger=True)
    document = {
        "swagger": "2.0",
        "host": "api.example.com",
        "basePath": "/v1",
        "schemes": ["http", "ws"],
    }
    fixed = SERVERS.apply(document, AT, swagger)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value["servers"] == [{"url": "http://api.example.com/v1"}]
    assert fixed.value is not document and "servers" not in document
    no_host = SERVERS.apply({"swagger": "2.0", "basePath": "/v1"}, AT, swagger)
    assert no_host is not None and no_host.value["servers"] == [{"url": "/v1"}]
    assert SERVERS.apply(document, AT, OpenApi(document={})) is None  # OpenAPI 3 has its own


def test_servers_end_to_end(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "api.example.com",
        "basePath": "/v1",
        "paths": {"/pets": {"get": _op("listPets")}},
    }
    package, _ = _compile(tmp_path, spec)
    assert package.http is not None
    assert [s.url for s in package.http.servers] == ["https://api.example.com/v1"]


def test_security_scheme_rule() -> None:
    swagger = OpenApi(document={}, swagger=True)
    basic = SECURITY_SCHEME.apply({"type": "basic"}, AT, OpenApi(document={}))
    assert basic is not None and basic.value == {"type": "http", "scheme": "basic"}
    oauth = {
        "type": "oauth2",
        "flow": "application",
        "tokenUrl": "https://t",
        "scopes": {"read": "r"},
    }
    fixed = SECURITY_SCHEME.apply(oauth, AT, swagger)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {
        "type": "oauth2",
        "flows": {"clientCredentials": {"scopes": {"read": "r"}, "tokenUrl": "https://t"}},
    }
    implicit = SECURITY_SCHEME.apply({"type": "oauth2", "flow": "implicit"}, AT, swagger)
    assert implicit is not None and implicit.value["flows"] == {"implicit": {"scopes": None}}
    assert SECURITY_SCHEME.apply(oauth, AT, OpenApi(document={})) is None


def test_security_scheme_end_to_end(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/pets": {"get": _op("listPets")}},
        "securityDefinitions": {
            "basic": {"type": "basic"},
            "app": {
                "type": "oauth2",
                "flow": "application",
                "tokenUrl": "https://auth.example.com/token",
                "scopes": {"write": "w", "read": "r"},
            },
        },
    }
    package, _ = _compile(tmp_path, spec)
    assert package.http is not None
    schemes = package.http.security_schemes
    assert (schemes["basic"].type, schemes["basic"].scheme) == ("http", "basic")
    app = schemes["app"]
    assert (app.type, app.token_url, app.scopes) == (
        "oauth2",
        "https://auth.example.com/token",
        ("read", "write"),
    )


def test_media_types_rule() -> None:
    document: dict[str, Any] = {"consumes": ["application/xml"], "produces": ["text/csv"]}
    swagger = OpenApi(document=document, swagger=True)
    fixed = MEDIA_TYPES.apply({"produces": ["application/json"]}, AT, swagger)
    assert fixed is not None and fixed.diagnostics == ()
    assert fixed.value == {"produces": ["application/json"], "consumes": ["application/xml"]}
    both: dict[str, Any] = {"consumes": [], "produces": []}
    assert MEDIA_TYPES.apply(both, AT, swagger) is None
    assert MEDIA_TYPES.apply({}, AT, OpenApi(document=document)) is None


def test_media_types_end_to_end(tmp_path: Path) -> None:
    add = {
        "operationId": "addPet",
        "parameters": [{"name": "pet", "in": "body", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok", "schema": {"type": "string"}}},
    }
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "consumes": ["text/plain"],
        "produces": ["text/csv"],
        "paths": {"/pets": {"post": add}},
    }
    package, _ = _compile(tmp_path, spec)
    assert package.http is not None
    (op,) = package.http.operations.values()
    assert op.body is not None and (op.body.media_type, op.body.kind) == ("text/plain", "text")
    assert [r.media_type for r in op.responses] == ["text/csv"]
