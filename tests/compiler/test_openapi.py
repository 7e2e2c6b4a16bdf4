"""OpenAPI → tools: every corpus spec compiles and imports; operations, parameters, bodies,
responses, Swagger 2.0, lenient reading, names, filters, compact schemas and ``http.py``.

The corpus-wide tests compile every spec of ``tests/corpus/openapi`` once (unformatted:
ruff changes no meaning) into a temporary directory; pyright strict over those packages runs in
``test_corpus_packages_are_pyright_strict_clean`` (marked ``slow``: a representative subset; the
full run is ``bench/openapi.py --pyright``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from tests.conftest import CORPUS, NO_CORPUS, CompileSpec, session_dir
from toolbind.compiler import SpecError, generate_tree, load_package
from toolbind.compiler._driver import GeneratedTree, build, write_tree
from toolbind.compiler.frontends.openapi._security import (
    looks_like_credential as _looks_like_credential,
)
from toolbind.compiler.naming import class_name
from toolbind.runtime.contract import HttpApi

OPENAPI = CORPUS / "openapi"
SPECS = sorted(p for p in OPENAPI.glob("*") if p.suffix in (".json", ".yaml"))
PROVIDER_NAME = r"^[a-zA-Z0-9_-]{1,64}$"

corpus = pytest.mark.skipif(not OPENAPI.is_dir(), reason=NO_CORPUS)


@cache
def corpus_tree() -> tuple[Path, dict[str, str], dict[str, list[Any]]]:
    """All corpus specs compiled into one temporary directory: (dir, package → spec, spec →
    diagnostics)."""
    out = session_dir("toolbind-openapi-")
    packages: dict[str, str] = {}
    diagnostics: dict[str, list[Any]] = {}
    for spec in SPECS:
        tree = build([spec], formatted=False)
        write_tree(tree, out / spec.stem)
        ((name, _),) = tree.packages.items()
        packages[name] = spec.name
        diagnostics[spec.name] = tree.diagnostics
    return out, packages, diagnostics


def corpus_package(spec: Path) -> ModuleType:
    out, packages, _ = corpus_tree()
    name = next(n for n, s in packages.items() if s == spec.name)
    return load_package(out / spec.stem, name)


def operation_count(spec: Path) -> int:
    import yaml

    text = spec.read_text(encoding="utf-8")
    doc: dict[str, Any] = (
        json.loads(text) if spec.suffix == ".json" else yaml.load(text, Loader=yaml.CSafeLoader)
    )
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    return sum(1 for item in doc.get("paths", {}).values() for m in item if m in methods)


@corpus
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_corpus_spec_compiles_and_imports(spec: Path) -> None:
    _, _, diagnostics = corpus_tree()
    assert [d.render() for d in diagnostics[spec.name] if d.severity == "error"] == []
    pkg = corpus_package(spec)
    http = __import__(f"{pkg.__name__}.http", fromlist=["API"])
    api: HttpApi = http.API
    assert len(api.operations) == operation_count(spec)
    assert set(http.OPERATIONS) == set(api.operations)
    import re

    for name, op in api.operations.items():
        assert re.match(PROVIDER_NAME, name), name
        assert op.tool == name
    for name in list(api.operations)[:3]:  # models load lazily; each builds on first use
        model = getattr(pkg, class_name(name) + "Call")
        with pytest.raises(ValidationError):
            model.model_validate({"_tool": 1})


@corpus
def test_large_package_loads_lazily() -> None:
    spec = OPENAPI / "openai__openapi.yaml"
    out, packages, _ = corpus_tree()
    name = next(n for n, s in packages.items() if s == spec.name)
    code = (
        "import sys, json\n"
        f"sys.path.insert(0, {str(out / spec.stem)!r})\n"
        f"import {name} as pkg\n"
        "before = len([m for m in sys.modules if m.startswith(pkg.__name__ + '.')])\n"
        "call = pkg.ListAssistantsCall.model_validate({'_tool': 'listAssistants', 'limit': 5})\n"
        "after = len([m for m in sys.modules if m.startswith(pkg.__name__ + '._models.')])\n"
        "total = len(list((__import__('pathlib').Path(pkg.__file__).parent / '_models').glob('m_*.py')))\n"
        "print(json.dumps([before, after, total, call.limit]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    before, after, total, limit = json.loads(result.stdout)
    assert before == 0  # `import pkg` loads no submodule
    assert 0 < after < total / 10  # one tool loads only the models it reaches
    assert limit == 5


@corpus
def test_corpus_calls_validate_realistic_instances() -> None:
    openai = corpus_package(OPENAPI / "openai__openapi.yaml")
    # an allOf body can't be flattened: it is the one field "body"
    chat = openai.CreateChatCompletionCall.model_validate(
        {
            "_tool": "createChatCompletion",
            "body": {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": "Hello"}],
                "temperature": 0.5,
            },
        }
    )
    dumped = chat.model_dump(mode="json", exclude_unset=True)
    assert dumped["body"]["messages"][0]["role"] == "user"
    with pytest.raises(ValidationError):  # the body keeps its required fields
        openai.CreateChatCompletionCall.model_validate(
            {"_tool": "createChatCompletion", "body": {}}
        )
    # an object body is flattened into the Call
    assistant = openai.CreateAssistantCall.model_validate(
        {"_tool": "createAssistant", "model": "gpt-4o", "name": "helper"}
    )
    assert assistant.name == "helper"
    with pytest.raises(ValidationError):
        openai.CreateAssistantCall.model_validate({"_tool": "createAssistant", "name": "helper"})
    pets = corpus_package(OPENAPI / "swagger__petstore-swagger2.json")
    add = pets.AddPetCall.model_validate(
        {"_tool": "addPet", "name": "Rex", "photoUrls": ["https://x/y.png"], "status": "sold"}
    )
    assert add.status == "sold"
    with pytest.raises(ValidationError):
        pets.AddPetCall.model_validate({"_tool": "addPet", "name": "Rex", "status": "lost"})
    discord = corpus_package(OPENAPI / "discord__http-api.json")
    assert "get_guild_join_requests" in discord.http.API.operations
    call = discord.GetGuildJoinRequestsCall.model_validate(
        {"_tool": "get_guild_join_requests", "guild_id": "1", "status": "SUBMITTED"}
    )
    assert call.guild_id == "1"


@corpus
def test_corpus_degrades_with_located_warnings() -> None:
    _, _, diagnostics = corpus_tree()
    warnings = [d for d in diagnostics["discord__http-api.json"] if d.severity == "warning"]
    assert any(
        d.loc.pointer == "/paths/~1guilds~1{guild_id}~1requests/get/parameters/0/schema/enum"
        and "enum is empty" in d.found
        for d in warnings
    ), [d.render() for d in warnings]
    notes = [d for d in diagnostics["oai-examples__webhook-example.yaml"] if d.severity == "note"]
    assert any(d.loc.pointer == "/webhooks" and "skipped" in d.found for d in notes)


# -- inline specs -------------------------------------------------------------------------


def openapi(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **extra}


def ok(description: str = "ok", schema: Any = None) -> dict[str, Any]:
    if schema is None:
        return {"200": {"description": description}}
    return {
        "200": {"description": description, "content": {"application/json": {"schema": schema}}}
    }


def test_names_from_operation_id_else_method_and_path(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        openapi(
            {
                "/pets/{petId}": {
                    "get": {"responses": ok()},
                    "post": {"operationId": "navigate_post_pets__petId__post", "responses": ok()},
                    "put": {"operationId": "pets/update item", "responses": ok()},
                    "delete": {"operationId": "x" * 80, "responses": ok()},
                },
                "/other": {"get": {"operationId": "getPets", "responses": ok()}},
                "/more": {"get": {"operationId": "get_pets", "responses": ok()}},
            }
        )
    )
    names = list(pkg.http.OPERATIONS)
    assert names[:3] == ["get_pets_by_pet_Id", "navigate_post", "pets_update_item"]
    assert len(names[3]) == 64
    assert names[4:] == ["getPets", "get_pets_2"]  # distinct as Python classes too
    import re

    assert all(re.match(PROVIDER_NAME, n) for n in names)
    assert pkg.http.OPERATIONS["pets_update_item"] == ("PUT", "/pets/{petId}", "pets/update item")
    binding = next(t for t in pkg.TOOLS if t.name == "pets_update_item")
    assert binding.original_name == "pets/update item"


def test_parameters_merge_override_and_collide(tmp_path: Path) -> None:
    spec = openapi(
        {
            "/items/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "v", "in": "query", "schema": {"type": "string"}},
                ],
                "patch": {
                    "operationId": "patchItem",
                    "parameters": [
                        {"name": "v", "in": "query", "schema": {"type": "integer"}},
                        {"name": "v", "in": "header", "schema": {"type": "string"}},
                        {"$ref": "#/components/parameters/Ids"},
                        {"name": "sid", "in": "cookie", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id"],
                                    "properties": {
                                        "id": {"type": "integer"},
                                        "name": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                    "responses": ok(),
                },
            }
        },
        components={
            "parameters": {
                "Ids": {
                    "name": "ids",
                    "in": "query",
                    "style": "pipeDelimited",
                    "explode": False,
                    "schema": {"type": "array", "items": {"type": "integer"}},
                }
            }
        },
    )
    path = tmp_path / "items.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    notes = [d.render() for d in tree.diagnostics if d.severity == "note"]
    assert any("header 'v' of tool 'patchItem' is the Call field 'v_header'" in n for n in notes)
    assert any("body 'id' of tool 'patchItem' is the Call field 'id_body'" in n for n in notes)
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "items")
    op = pkg.http.API.operations["patchItem"]
    by_field = {p.field: p for p in op.parameters}
    assert by_field["v"].location == "query" and by_field["v_header"].name == "v"
    assert by_field["ids"].style == "pipeDelimited" and not by_field["ids"].explode
    assert by_field["sid"].location == "cookie" and by_field["sid"].style == "form"
    assert op.body.fields == (("id_body", "id"), ("name", "name"))
    call = pkg.PatchItemCall.model_validate(
        {"_tool": "patchItem", "id": "a", "v": 3, "v_header": "h", "ids": [1, 2], "id_body": 7}
    )
    assert call.v == 3  # the operation-level parameter overrides the path-level one
    with pytest.raises(ValidationError):  # the body's own required field stays required
        pkg.PatchItemCall.model_validate({"_tool": "patchItem", "id": "a"})


def test_bodies_flattened_or_wrapped(compile_spec: CompileSpec) -> None:
    obj = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    pkg = compile_spec(
        openapi(
            {
                "/flat": {
                    "post": {
                        "operationId": "flat",
                        "requestBody": {
                            "required": True,
                            "content": {"application/vnd.api+json": {"schema": obj}},
                        },
                        "responses": ok(),
                    }
                },
                "/optional": {
                    "post": {
                        "operationId": "optional",
                        "requestBody": {"content": {"application/json": {"schema": obj}}},
                        "responses": ok(),
                    }
                },
                "/list": {
                    "post": {
                        "operationId": "list",
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"type": "array", "items": {"type": "integer"}}
                                }
                            },
                        },
                        "responses": ok(),
                    }
                },
                "/text": {
                    "post": {
                        "operationId": "text",
                        "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}},
                        "responses": ok(),
                    }
                },
                "/form": {
                    "post": {
                        "operationId": "form",
                        "requestBody": {
                            "content": {
                                "application/x-www-form-urlencoded": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"q": {"type": "string"}},
                                    }
                                }
                            }
                        },
                        "responses": ok(),
                    }
                },
                "/upload": {
                    "post": {
                        "operationId": "upload",
                        "requestBody": {
                            "required": True,
                            "content": {
                                "multipart/form-data": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["file"],
                                        "properties": {
                                            "file": {"type": "string", "format": "binary"},
                                            "meta": {
                                                "type": "object",
                                                "properties": {"k": {"type": "string"}},
                                            },
                                        },
                                    },
                                    "encoding": {"meta": {"contentType": "application/json"}},
                                }
                            },
                        },
                        "responses": ok(),
                    }
                },
            }
        )
    )
    ops = pkg.http.API.operations
    assert ops["flat"].body.kind == "json" and ops["flat"].body.fields == (("a", "a"),)
    assert ops["flat"].body.media_type == "application/vnd.api+json"
    # optional body whose object has a required field: wrapped, so "a" is required only with it
    assert ops["optional"].body.wrapped == "body" and not ops["optional"].body.required
    assert pkg.OptionalCall.model_validate({"_tool": "optional"}).body is None
    with pytest.raises(ValidationError):
        pkg.OptionalCall.model_validate({"_tool": "optional", "body": {}})
    assert ops["list"].body.wrapped == "body"
    assert pkg.ListCall.model_validate({"_tool": "list", "body": [1, 2]}).body == [1, 2]
    with pytest.raises(ValidationError):
        pkg.ListCall.model_validate({"_tool": "list"})
    assert ops["text"].body.kind == "text" and ops["text"].body.wrapped == "body"
    assert ops["form"].body.kind == "form" and ops["form"].body.fields == (("q", "q"),)
    upload = ops["upload"].body
    assert upload.kind == "multipart"
    parts = {p.property: p for p in upload.parts}
    assert parts["file"].is_file and not parts["meta"].is_file
    assert parts["meta"].content_type == "application/json"


def test_output_from_success_response(compile_spec: CompileSpec) -> None:
    pet = {"type": "object", "required": ["size"], "properties": {"size": {"type": "integer"}}}
    pkg = compile_spec(
        openapi(
            {
                "/a": {
                    "get": {
                        "operationId": "lowest",
                        "responses": {
                            "201": {
                                "description": "c",
                                "content": {"application/json": {"schema": {"type": "string"}}},
                            },
                            "200": {
                                "description": "o",
                                "content": {
                                    "application/xml": {"schema": {"type": "integer"}},
                                    "application/json": {"schema": pet},
                                },
                            },
                            "default": {"description": "e"},
                        },
                    }
                },
                "/b": {
                    "delete": {
                        "operationId": "noContent",
                        "responses": {"204": {"description": "gone"}, "404": {"description": "no"}},
                    }
                },
                "/c": {
                    "get": {
                        "operationId": "byDefault",
                        "responses": {
                            "default": {
                                "description": "d",
                                "content": {"application/json": {"schema": {"type": "boolean"}}},
                            }
                        },
                    }
                },
            }
        )
    )
    assert pkg.LowestOutput.model_validate({"size": 1}).size == 1  # 200 before 201, JSON first
    responses = pkg.http.API.operations["lowest"].responses
    assert [(r.status, r.media_type, r.is_output) for r in responses][1] == (
        "200",
        "application/json",
        True,
    )
    assert pkg.NoContentOutput.model_validate(None).root is None
    with pytest.raises(ValidationError):
        pkg.NoContentOutput.model_validate({"x": 1})
    assert pkg.ByDefaultOutput.model_validate(True).root is True


def test_swagger2_reading(compile_spec: CompileSpec) -> None:
    pkg = compile_spec(
        {
            "swagger": "2.0",
            "info": {"title": "S", "version": "1"},
            "host": "api.example.com",
            "basePath": "/v2",
            "schemes": ["https", "http"],
            "consumes": ["application/json"],
            "securityDefinitions": {
                "key": {"type": "apiKey", "name": "X-Key", "in": "header"},
                "basic": {"type": "basic"},
                "oauth": {
                    "type": "oauth2",
                    "flow": "application",
                    "tokenUrl": "https://a/token",
                    "scopes": {"read": "r"},
                },
            },
            "security": [{"key": []}, {"basic": []}],
            "paths": {
                "/pets": {
                    "get": {
                        "operationId": "find",
                        "parameters": [
                            {
                                "name": "tags",
                                "in": "query",
                                "type": "array",
                                "items": {"type": "string"},
                                "collectionFormat": "multi",
                            }
                        ],
                        "produces": ["application/json"],
                        "responses": {
                            "200": {
                                "description": "ok",
                                "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}},
                            }
                        },
                    },
                    "post": {
                        "operationId": "add",
                        "parameters": [
                            {
                                "name": "pet",
                                "in": "body",
                                "required": True,
                                "schema": {"$ref": "#/definitions/Pet"},
                            }
                        ],
                        "responses": {"201": {"description": "made"}},
                    },
                },
                "/pets/{id}/photo": {
                    "post": {
                        "operationId": "upload",
                        "consumes": ["multipart/form-data"],
                        "parameters": [
                            {"name": "id", "in": "path", "required": True, "type": "integer"},
                            {"name": "file", "in": "formData", "type": "file", "required": True},
                            {"name": "note", "in": "formData", "type": "string"},
                        ],
                        "responses": {"200": {"description": "ok"}},
                    }
                },
            },
            "definitions": {
                "Pet": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "tag": {"type": "string", "x-nullable": True},
                    },
                }
            },
        }
    )
    api: HttpApi = pkg.http.API
    assert [s.url for s in api.servers] == [
        "https://api.example.com/v2",
        "http://api.example.com/v2",
    ]
    assert api.security_schemes["basic"].scheme == "basic"
    assert api.security_schemes["oauth"].token_url == "https://a/token"
    assert len(api.security) == 2
    (tags,) = api.operations["find"].parameters
    assert (tags.style, tags.explode) == ("form", True)
    add = api.operations["add"].body
    assert add is not None and add.fields == (("name", "name"), ("tag", "tag")) and add.required
    assert pkg.AddCall.model_validate({"_tool": "add", "name": "Rex"}).name == "Rex"
    upload = api.operations["upload"].body
    assert (
        upload is not None
        and upload.kind == "multipart"
        and upload.media_type == "multipart/form-data"
    )
    assert [(p.property, p.is_file) for p in upload.parts] == [("file", True), ("note", False)]
    assert pkg.FindOutput.model_validate([{"name": "a"}]).root[0].name == "a"


def test_openapi31_and_30_keywords(compile_spec: CompileSpec) -> None:
    schemas = {
        "Node": {
            "type": "object",
            "properties": {
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                "kind": {"const": "node"},
                "label": {"type": ["string", "null"]},
            },
        },
    }
    pkg = compile_spec(
        {
            "openapi": "3.1.0",
            "info": {"title": "T", "version": "1"},
            "paths": {
                "/n": {
                    "post": {
                        "operationId": "make",
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Node"}
                                }
                            },
                        },
                        "responses": ok(schema={"$ref": "#/components/schemas/Node"}),
                    }
                }
            },
            "webhooks": {"ping": {"post": {"responses": ok()}}},
            "components": {"schemas": schemas},
        }
    )
    tree: dict[str, Any] = {
        "_tool": "make",
        "kind": "node",
        "label": None,
        "children": [{"children": [], "label": "x"}],
    }
    assert pkg.MakeCall.model_validate(tree).children[0].label == "x"
    with pytest.raises(ValidationError):
        pkg.MakeCall.model_validate({"_tool": "make", "kind": "leaf"})
    pkg30 = compile_spec(
        openapi(
            {
                "/x": {
                    "get": {
                        "operationId": "x",
                        "parameters": [
                            {
                                "name": "q",
                                "in": "query",
                                "schema": {"type": "string", "nullable": True},
                            }
                        ],
                        "responses": ok(),
                    }
                }
            }
        )
    )
    assert pkg30.XCall.model_validate({"_tool": "x", "q": None}).q is None


def test_broken_specs_degrade_with_located_warnings(tmp_path: Path) -> None:
    spec = openapi(
        {
            "/a": {
                "get": {
                    "operationId": "a",
                    "parameters": [
                        {"name": "mode", "in": "query", "schema": {"type": "string", "enum": []}},
                        {
                            "name": "ref",
                            "in": "query",
                            "schema": {"$ref": "#/components/schemas/Gone"},
                        },
                        {"$ref": "#/components/parameters/Missing"},
                    ],
                    "responses": ok(),
                }
            }
        }
    )
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    warnings = {d.loc.pointer: d.found for d in tree.diagnostics if d.severity == "warning"}
    assert "enum is empty" in warnings["/paths/~1a/get/parameters/0/schema/enum"]
    assert "does not resolve" in warnings["/paths/~1a/get/parameters/1/schema/$ref"]
    assert "does not resolve" in warnings["/paths/~1a/get/parameters/2/$ref"]
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "broken")
    assert (
        pkg.ACall.model_validate({"_tool": "a", "mode": "anything", "ref": [1]}).mode == "anything"
    )


def test_unreadable_spec_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"openapi": "3.0.0", "info": {}, "paths": []}), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        generate_tree([path])
    assert [d.loc.pointer for d in err.value.diagnostics] == ["/paths"]


def test_shared_components_are_written_once(compile_spec: CompileSpec) -> None:
    big = {"type": "object", "description": "d" * 300, "properties": {"x": {"type": "string"}}}
    page = {"name": "cursor", "in": "query", "description": "c" * 300, "schema": {"type": "string"}}
    pkg = compile_spec(
        openapi(
            {
                f"/r{i}": {
                    "get": {
                        "operationId": f"r{i}",
                        "parameters": [page],
                        "responses": ok(schema={"$ref": "#/components/schemas/Big"}),
                    }
                }
                for i in range(3)
            },
            components={
                "schemas": {
                    "Big": big,
                    "Unused": {"type": "object", "properties": {"y": {"type": "string"}}},
                }
            },
        )
    )
    root = Path(str(pkg.__file__)).parent
    tools = json.loads((root / "tools.json").read_text(encoding="utf-8"))
    text = json.dumps(tools)
    assert text.count("d" * 300) == 1 and text.count("c" * 300) == 1
    assert "Unused" not in tools["$defs"]  # definitions no tool reaches are not generated
    schema = json.loads((root / "schema.json").read_text(encoding="utf-8"))
    assert (
        "Big" not in schema["$defs"]
    )  # explicit tools: outputs are not part of what the LLM fills
    assert json.dumps(schema).count("c" * 300) == 1


def test_filter_tags_tools_and_toolsets(tmp_path: Path) -> None:
    spec = openapi(
        {
            "/a": {
                "get": {
                    "operationId": "a",
                    "tags": ["x"],
                    "deprecated": True,
                    "summary": "A.",
                    "responses": ok(),
                }
            },
            "/b": {"get": {"operationId": "b", "tags": ["y"], "responses": ok()}},
            "/c/d": {"get": {"operationId": "c", "tags": ["x", "y"], "responses": ok()}},
        }
    )
    path = tmp_path / "f.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert _tools(generate_tree([path], tags=["x"])) == ["a", "c"]
    assert _tools(generate_tree([path], paths=["/c/*"])) == ["c"]
    assert _tools(generate_tree([path], operations=["b"])) == ["b"]
    tree = generate_tree([path])
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "f")
    assert pkg.TOOLSETS == {"x": ("a", "c"), "y": ("b", "c")}
    assert pkg.http.API.operations["a"].deprecated
    assert pkg.TOOLS[0].description == "Deprecated. A." and pkg.TOOLS[0].activity == "a"
    assert pkg.TOOLS[0].deprecated and not pkg.TOOLS[1].deprecated
    # One Call union per tag besides the whole.
    assert {"x": pkg.XToolsetCall, "y": pkg.YToolsetCall} == pkg.TOOLSET_CALLS
    x: TypeAdapter[Any] = TypeAdapter(pkg.TOOLSET_CALLS["x"])
    assert type(x.validate_python({"_tool": "c"})) is pkg.CCall
    with pytest.raises(ValidationError):
        x.validate_python({"_tool": "b"})  # tagged y only
    assert type(TypeAdapter(pkg.Call).validate_python({"_tool": "b"})) is pkg.BCall


def _tools(tree: Any) -> list[str]:
    (name,) = tree.packages
    return [t["name"] for t in json.loads(tree.files[f"{name}/tools.json"])["tools"]]


def test_cli_filter_options(tmp_path: Path) -> None:
    spec = openapi(
        {
            "/a": {"get": {"operationId": "a", "tags": ["x"], "responses": ok()}},
            "/b": {"get": {"operationId": "b", "responses": ok()}},
        }
    )
    path = tmp_path / "cli.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    toolbind = Path(sys.executable).parent / "toolbind"
    result = subprocess.run(
        [str(toolbind), "generate", str(path), "-o", str(tmp_path / "out"), "--tag", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    pkg = load_package(tmp_path / "out", "cli")
    assert list(pkg.http.OPERATIONS) == ["a"]


@corpus
@pytest.mark.slow
def test_corpus_packages_are_pyright_strict_clean() -> None:
    out, packages, _ = corpus_tree()
    subset = [
        "oai-examples__petstore-expanded.yaml",
        "swagger__petstore-swagger2.json",
        "readme-examples__schema-types-3.1.json",
        "readme-examples__polymorphism.json",
        "redocly__museum.yaml",
        "bump-sh__train-travel.json",
        "readme__readme-api.json",
        "oai-examples__webhook-example.yaml",
    ]
    dirs = [str(out / Path(spec).stem / name) for name, spec in packages.items() if spec in subset]
    config = out / "pyrightconfig.json"
    repo = Path(__file__).resolve().parents[2]
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.11",
                "venvPath": str(repo),
                "venv": ".venv",
                "reportMissingTypeStubs": False,
            }
        ),
        encoding="utf-8",
    )
    pyright = Path(sys.executable).parent / "pyright"
    result = subprocess.run(
        [str(pyright), "-p", str(config), "--outputjson", *dirs],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(result.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], errors[:5]
    assert report["summary"]["filesAnalyzed"] >= len(dirs) * 5


def test_relative_refs_across_files(compile_spec: CompileSpec) -> None:
    common = {
        "parameters": {
            "Limit": {"name": "limit", "in": "query", "schema": {"$ref": "#/schemas/Count"}}
        },
        "schemas": {
            "Count": {"type": "integer", "minimum": 1},
            "Pet": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}},
            },
        },
    }
    pkg = compile_spec(
        openapi(
            {
                "/pets": {
                    "get": {
                        "operationId": "listPets",
                        "parameters": [{"$ref": "shared/common.json#/parameters/Limit"}],
                        "responses": ok(
                            schema={
                                "type": "array",
                                "items": {"$ref": "shared/common.json#/schemas/Pet"},
                            }
                        ),
                    }
                }
            }
        ),
        extra_files={"shared/common.json": common},
    )
    assert pkg.ListPetsCall.model_validate({"_tool": "listPets", "limit": 2}).limit == 2
    with pytest.raises(ValidationError):
        pkg.ListPetsCall.model_validate({"_tool": "listPets", "limit": 0})
    assert pkg.ListPetsOutput.model_validate([{"name": "a"}]).root[0].name == "a"
    (param,) = pkg.http.API.operations["listPets"].parameters
    assert (param.name, param.location, param.style, param.explode) == (
        "limit",
        "query",
        "form",
        True,
    )


def test_paths_as_one_ref_to_a_file_of_path_items_is_followed(tmp_path: Path) -> None:
    """The defect: json-refs' multi-file Swagger (mohsen1/multi-file-swagger-example, MIT; the
    layout its blog post taught) writes ``paths: {$ref: ./paths/index.yaml}``, a file mapping
    each path to a path-item file. The "$ref" key was read as a path whose item is a string:
    0 tools, exit 0, and a warning that named no cause. The map is followed (said), and each
    path item's own $refs are relative to the file it is in."""
    files = {
        "jsonrefs_index.yaml": "swagger: '2.0'\ninfo: {version: 0.0.0, title: Simple API}\n"
        "host: api.example.com\npaths:\n  $ref: ./paths/index.yaml\n",
        "paths/index.yaml": "/foo:\n  $ref: ./foo.yaml\n/nested:\n  $ref: ./nested.yaml#/response\n",
        "paths/foo.yaml": "get:\n  responses:\n    '200':\n      description: OK\n",
        "paths/nested.yaml": "response:\n  get:\n    responses:\n      '200':\n"
        "        description: OK\n        schema:\n          $ref: '#/nested/SameFileReference'\n"
        "nested:\n  SameFileReference:\n    type: object\n"
        "    properties:\n      name:\n        type: string\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    tree, pkg = _compiled(tmp_path / "jsonrefs_index.yaml", tmp_path / "out")
    assert sorted(pkg.http.API.operations) == ["get_foo", "get_nested"]
    assert pkg.http.API.operations["get_nested"].path == "/nested"
    assert pkg.GetNestedOutput.model_validate({"name": "a"}).name == "a"
    said = [d.render() for d in tree.diagnostics if d.severity != "note"]
    assert said == [
        f"{tmp_path / 'jsonrefs_index.yaml'}#/paths/$ref: warning: paths is a $ref to the whole map; "
        "followed — a map of paths to path items (each may be a $ref)"
    ]


def test_fields_beside_a_path_items_ref_are_read_too(tmp_path: Path) -> None:
    """The defect: OpenAPI's Path Item Object has ``$ref`` as a field, so ``/pets/{id}: {$ref:
    pets.yaml, parameters: [...], delete: ...}`` is a valid split spec; the referenced item
    replaced the fields beside it and ``delete`` was lost — read 1 → emitted 1, exit 0, nothing
    said. Both are read now, each resolving its $refs in its own file; a field written in both
    is the one beside the $ref, with a warning."""
    (tmp_path / "beside_ref.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /pets/{id}:\n    $ref: paths/pets.yaml\n"
        "    parameters: [{name: id, in: path, required: true, schema: {type: integer}}]\n"
        "    delete:\n      operationId: deletePet\n"
        "      responses: {'200': {description: ok, content: {application/json: "
        "{schema: {$ref: '#/components/schemas/Gone'}}}}}\n"
        "    get:\n      operationId: getPetHere\n      responses: {'204': {description: ok}}\n"
        "components:\n  schemas:\n    Gone: {type: object, properties: {gone: {type: boolean}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "paths").mkdir()
    (tmp_path / "paths" / "pets.yaml").write_text(
        "get:\n  operationId: getPet\n  responses: {'204': {description: ok}}\n"
        "put:\n  operationId: putPet\n  requestBody: {content: {application/json: "
        "{schema: {$ref: 'pet.yaml'}}}}\n  responses: {'204': {description: ok}}\n",
        encoding="utf-8",
    )
    (tmp_path / "paths" / "pet.yaml").write_text(
        "type: object\nproperties: {name: {type: string}}\n", encoding="utf-8"
    )
    tree, pkg = _compiled(tmp_path / "beside_ref.yaml", tmp_path / "out")
    ops = pkg.http.API.operations
    assert sorted(ops) == ["deletePet", "getPetHere", "putPet"]
    for name in ops:  # the path-level parameter beside the $ref applies to every operation
        assert [(p.name, p.location) for p in ops[name].parameters] == [("id", "path")]
    assert pkg.DeletePetOutput.model_validate({"gone": True}).gone is True
    assert pkg.PutPetCall.model_validate({"_tool": "putPet", "id": 1, "name": "Rex"}).name == "Rex"
    said = [d.render() for d in tree.diagnostics if d.severity != "note"]
    assert said == [
        f"{tmp_path / 'beside_ref.yaml'}#/paths/~1pets~1{{id}}: warning: the path item has get both "
        "beside its $ref and in the item it references; read as written beside the $ref — each "
        "field in one of the two (OpenAPI leaves a field in both undefined)"
    ]
    counts = next(d.found for d in tree.diagnostics if "read → emitted" in d.found)
    assert "operations 3 → 3 emitted" in counts


def test_a_split_specs_unreadable_file_is_an_error_that_says_why(tmp_path: Path) -> None:
    """The defect: a path item (or operation, parameter, body, response) $ref'd from a file that
    is missing or not valid YAML was a warning with no cause ("names a file that cannot be
    read"), exit 0 with its operations gone — where a schema's $ref to such a file is an error
    that says where the file breaks. Now the same error; a pointer that finds nothing in a
    readable file says which member is missing."""
    (tmp_path / "paths").mkdir()
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /a: {$ref: paths/a.yaml}\n  /b: {$ref: paths/missing.yaml}\n"
        "  /c: {$ref: 'paths/a.yaml#/gets'}\n  /e: {$ref: paths/bad.yaml}\n",
        encoding="utf-8",
    )
    (tmp_path / "paths" / "a.yaml").write_text(
        "get:\n  operationId: a\n  responses: {'200': {description: ok}}\n", encoding="utf-8"
    )
    (tmp_path / "paths" / "bad.yaml").write_text(
        "get:\n  operationId: e\n  responses: {'200': {description: ok\n", encoding="utf-8"
    )
    spec = tmp_path / "api.yaml"
    with pytest.raises(SpecError) as caught:
        build([spec], formatted=False)
    said = [d.render() for d in caught.value.diagnostics if d.severity != "note"]
    assert said == [
        f"{spec}#/paths/~1b/$ref: error: path item $ref 'paths/missing.yaml' names a file that "
        f"cannot be read ({tmp_path / 'paths' / 'missing.yaml'}: no such file) — a readable "
        "JSON or YAML file, named relative to this spec",
        f"{spec}#/paths/~1c/$ref: warning: path item $ref 'paths/a.yaml#/gets' does not "
        "resolve: '#' has no member 'gets'; the path item is skipped — a JSON pointer to an "
        f"existing value in {tmp_path / 'paths' / 'a.yaml'} (hint: did you mean "
        "'paths/a.yaml#/get'?)",
        f"{spec}#/paths/~1e/$ref: error: path item $ref 'paths/bad.yaml' names a file that "
        f"cannot be read ({tmp_path / 'paths' / 'bad.yaml'}:4:1: invalid YAML: did not find "
        "expected ',' or '}') — a readable JSON or YAML file, named relative to this spec",
    ]


def test_extensions_discriminator_and_text_outputs(tmp_path: Path) -> None:
    """``x-*`` keys anywhere are ignored silently; 3.0 ``discriminator``/``nullable`` hold; a text
    response (XML, CSV) is its text whatever schema describes the document."""
    shape = {
        "oneOf": [{"$ref": "#/components/schemas/Circle"}, {"$ref": "#/components/schemas/Sq"}],
        "discriminator": {
            "propertyName": "kind",
            "mapping": {"c": "#/components/schemas/Circle", "s": "#/components/schemas/Sq"},
        },
    }
    json_ok = {"application/json": {"x-m": 1, "schema": {"$ref": "#/components/schemas/Shape"}}}
    spec = openapi(
        {
            "x-paths-extension": {"get": {"responses": ok()}},
            "/p/{id}": {
                "x-item": {"a": 1},
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                ],
                "get": {
                    "operationId": "getP",
                    "x-openai-isConsequential": False,
                    "responses": {
                        "x-resp": {"a": 1},
                        "200": {"description": "ok", "x-r": 1, "content": json_ok},
                    },
                },
                "put": {
                    "operationId": "asXml",
                    "responses": {
                        "200": {
                            "description": "xml",
                            "content": {"application/xml": {"schema": shape}},
                        }
                    },
                },
                "post": {
                    "operationId": "asCsv",
                    "responses": {
                        "201": {
                            "description": "csv",
                            "content": {"text/csv": {"schema": {"type": "string", "maxLength": 9}}},
                        }
                    },
                },
            },
        },
        servers=[{"url": "https://a.example/{v}", "variables": {"v": {"default": "v1", "x-v": 1}}}],
        components={
            "x-components-extension": 1,
            "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "K", "x-k": 1}},
            "schemas": {
                "Shape": shape,
                "Circle": {
                    "type": "object",
                    "x-c": True,
                    "required": ["kind", "r"],
                    "properties": {
                        "kind": {"type": "string", "enum": ["c"]},
                        "r": {"type": "number"},
                    },
                },
                "Sq": {
                    "type": "object",
                    "required": ["kind", "side"],
                    "properties": {
                        "kind": {"type": "string", "enum": ["s"]},
                        "side": {"type": "number", "nullable": True},
                    },
                },
            },
        },
        **{"x-top": 1},
    )
    path = tmp_path / "ext.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    assert [d.render() for d in tree.diagnostics if d.severity != "note"] == []
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "ext")
    assert set(pkg.OPERATIONS) == {"getP", "asXml", "asCsv"}
    assert pkg.http.API.security_schemes["k"].name == "K"
    assert pkg.GetPOutput.model_validate({"kind": "c", "r": 1}).root.r == 1
    assert pkg.GetPOutput.model_validate({"kind": "s", "side": None}).root.side is None
    with pytest.raises(ValidationError):
        pkg.GetPOutput.model_validate({"kind": "s", "r": 1})  # the discriminator picks Sq
    assert pkg.AsXmlOutput.model_validate("<shape kind='c'/>").root == "<shape kind='c'/>"
    with pytest.raises(ValidationError):
        pkg.AsXmlOutput.model_validate({"kind": "c", "r": 1})
    assert pkg.AsCsvOutput.model_validate("a,b").root == "a,b"
    with pytest.raises(ValidationError):
        pkg.AsCsvOutput.model_validate("a,b,c,d,e,f")  # the string schema is kept: maxLength
    responses = {o: pkg.http.API.operations[o].responses[0] for o in ("asXml", "asCsv")}
    assert [r.media_type for r in responses.values()] == ["application/xml", "text/csv"]


def test_openapi31_defs_and_webhooks_note(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/t": {
                "post": {
                    "operationId": "tree",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/$defs/Tree"}}},
                    },
                    "responses": ok(),
                }
            }
        },
        "webhooks": {"newPet": {"post": {"responses": ok()}}},
        "$defs": {
            "Tree": {
                "type": "object",
                "$defs": {"Leaf": {"type": ["integer", "null"]}},
                "properties": {
                    "leaf": {"$ref": "#/$defs/Tree/$defs/Leaf"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                },
            }
        },
    }
    path = tmp_path / "treespec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    notes = {d.loc.pointer: d.found for d in tree.diagnostics if d.severity == "note"}
    assert "1 webhook(s) skipped" in notes["/webhooks"]
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "treespec")
    call = pkg.TreeCall.model_validate(
        {"_tool": "tree", "leaf": None, "kids": [{"leaf": 2, "kids": [{"leaf": 3}]}]}
    )
    assert call.kids[0].kids[0].leaf == 3
    with pytest.raises(ValidationError):
        pkg.TreeCall.model_validate({"_tool": "tree", "leaf": "x"})
    assert list(pkg.OPERATIONS) == ["tree"]


def test_header_parameters_the_client_sets_are_not_call_fields(tmp_path: Path) -> None:
    header = [
        {"name": n, "in": "header", "schema": {"type": "string"}}
        for n in ("Authorization", "accept", "Content-Type", "X-Trace")
    ]
    spec = openapi({"/h": {"get": {"operationId": "h", "parameters": header, "responses": ok()}}})
    path = tmp_path / "headers.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    notes = [d.loc.pointer for d in tree.diagnostics if "is not a Call field" in d.found]
    assert notes == [f"/paths/~1h/get/parameters/{i}" for i in range(3)]
    write_tree(tree, tmp_path / "out")
    pkg = load_package(tmp_path / "out", "headers")
    assert list(pkg.TOOLS[0].parameters["properties"]) == ["X-Trace"]
    assert [p.name for p in pkg.http.API.operations["h"].parameters] == ["X-Trace"]


def test_tag_unions_named_safely_and_distinctly(tmp_path: Path) -> None:
    tags = ["pet store", "pet-store", "ペット", "Call"]
    spec = openapi(
        {
            f"/{i}": {"get": {"operationId": f"op{i}", "tags": [t], "responses": ok()}}
            for i, t in enumerate(tags)
        }
    )
    path = tmp_path / "tagnames.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    write_tree(generate_tree([path]), tmp_path / "out")
    pkg = load_package(tmp_path / "out", "tagnames")
    unions = pkg.TOOLSET_CALLS
    assert set(unions) == set(tags)
    assert len({id(u) for u in unions.values()}) == len(tags)  # one union per tag
    for i, tag in enumerate(tags):  # one-tool tags: the union is that tool's Call
        assert unions[tag] is getattr(pkg, f"Op{i}Call")
    aliases = [n for n in pkg.__all__ if n.endswith("ToolsetCall") or "ToolsetCall_" in n]
    assert sorted(aliases) == [
        "CallToolsetCall",
        "PetStoreToolsetCall",
        "PetStoreToolsetCall_",
        "TagToolsetCall",
    ]
    assert pkg.Call is not unions["Call"]


def _compiled(spec: Path, out: Path) -> tuple[GeneratedTree, ModuleType]:
    """``spec`` compiled (unformatted), written to ``out`` and its one package imported."""
    tree = build([spec], formatted=False)
    write_tree(tree, out)
    ((name, _),) = tree.packages.items()
    return tree, load_package(out, name)


def test_a_oneof_of_branches_that_require_nothing_is_read_as_anyof(tmp_path: Path) -> None:
    """Vonage's SMS response is ``oneOf [SMS, Error]`` and ReadMe's 401 is ``oneOf`` of two error
    objects: both branches require nothing, so every answer matched both and the call "failed"
    on the API's own answer. Read as anyOf with a warning (in the models and in the schema a
    model sees); a oneOf whose branches exclude each other stays exact."""
    spec = tmp_path / "sms.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: sms, version: '1'}\npaths:\n  /sms:\n    post:\n"
        "      operationId: sendSms\n      requestBody:\n        required: true\n"
        "        content:\n          application/json:\n            schema:\n"
        "              oneOf: [{$ref: '#/components/schemas/ByNumber'}, "
        "{$ref: '#/components/schemas/ByName'}]\n"
        "      responses:\n        '200':\n          description: ok\n"
        "          content:\n            application/json:\n              schema:\n"
        "                oneOf: [{$ref: '#/components/schemas/SMS'}, "
        "{$ref: '#/components/schemas/Error'}]\n"
        "components:\n  schemas:\n"
        "    SMS: {type: object, properties: {message-count: {type: string}}}\n"
        "    Error:\n      allOf:\n        - {type: object, properties: {error-text: {type: string}}}\n"
        "    ByNumber: {type: object, required: [to], properties: {to: {type: string}}}\n"
        "    ByName: {type: object, required: [name], properties: {name: {type: string}}}\n",
        encoding="utf-8",
    )
    tree, pkg = _compiled(spec, tmp_path / "out")
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1sms/post/responses/200/content/application~1json/schema/oneOf: "
        "warning: oneOf branches 0, 1 require nothing: an object they all accept ({} and every "
        "object with none of their properties) matches more than one, and oneOf refuses it; "
        "read as anyOf (the first branch that matches) — branches that exclude each other (a "
        "required property, a const/enum, a discriminator) (hint: write anyOf, or make the "
        "branches exclusive)"
    ]
    (tool,) = pkg.TOOLS
    answer = tool.output_model.model_validate_json('{"message-count": "1"}')
    assert answer.model_dump(mode="json", by_alias=True, exclude_unset=True) == {
        "message-count": "1"
    }
    (name,) = tree.packages
    entry = json.loads((tmp_path / "out" / name / "tools.json").read_text(encoding="utf-8"))
    assert "anyOf" in json.dumps(entry["tools"][0]["output_schema"])
    with pytest.raises(ValidationError):  # the request's branches exclude each other: exact
        pkg.SendSmsCall.model_validate({"body": {"to": "1", "name": "n"}})


def test_a_31_type_listing_null_beside_a_ref_allows_null_and_says_so(tmp_path: Path) -> None:
    """The defect: OpenAPI 3.1's spelling of 3.0's ``nullable`` beside a $ref (``{$ref: Vis,
    type: [string, 'null']}``, as in Mastodon's converted spec) was read as JSON Schema's "all of
    them", so null was refused (the enum refuses it) and every answer carrying that null failed.
    It widens the reference as ``nullable: true`` does, with a located warning."""
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /s:\n    get:\n"
        "      operationId: getStatus\n      responses:\n        '200':\n"
        "          description: ok\n          content:\n            application/json:\n"
        "              schema: {$ref: '#/components/schemas/Status'}\n"
        "components:\n  schemas:\n    Vis: {type: string, enum: [public, private]}\n"
        "    Status:\n      type: object\n      properties:\n"
        "        vis: {$ref: '#/components/schemas/Vis', type: [string, 'null']}\n"
        "        kind: {$ref: '#/components/schemas/Vis', type: string}\n",
        encoding="utf-8",
    )
    tree, pkg = _compiled(spec, tmp_path / "out")
    output = pkg.GetStatusOutput
    assert output.model_validate({"vis": None}).vis is None
    assert output.model_validate({"vis": "public"}).vis == "public"
    with pytest.raises(ValidationError):
        output.model_validate({"vis": "other"})
    with pytest.raises(ValidationError):  # a type without null beside a $ref narrows, as before
        output.model_validate({"kind": None})
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/components/schemas/Status/properties/vis/type: warning: type beside $ref "
        "lists 'null': read as also allowing null, whatever the referenced schema allows — "
        "anyOf: [{$ref: ...}, {type: 'null'}] for a reference that may be null"
    ]


_DISCRIMINATED = """openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /login:
    post:
      operationId: login
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - $ref: '#/components/schemas/Password'
                - $ref: '#/components/schemas/Code'
                - $ref: '#/components/schemas/x.Totp'
                - $ref: '#/components/schemas/Sms'
              discriminator:
                propertyName: method
                mapping: {password: '#/components/schemas/Password', code: Code, t: x.Totp, lookup: Gone}
      responses:
        '204': {description: ok}
components:
  schemas:
    Password:
      type: object
      required: [method, password]
      properties: {method: {type: string}, password: {type: string}, csrf: {type: string}}
    Code:
      type: object
      required: [method]
      properties: {method: {type: string}, code: {type: string}, csrf: {type: string}}
    x.Totp:
      type: object
      required: [method]
      properties: {method: {type: string}, totp: {type: string}}
    Sms:
      type: object
      required: [method]
      properties: {method: {type: string}, sms: {type: string}}
"""


def test_a_discriminator_picks_the_branch_its_value_names(tmp_path: Path) -> None:
    """The defect (Ory Kratos' login bodies): ``discriminator`` was an annotation, and the
    branches leave its property an open string, so every real body matched several branches of
    the ``oneOf`` and was refused. The property's value now picks the branch — a ``mapping``
    key naming it (by $ref or by schema name), else the schema's own name — in the models and
    in the schema a model sees; a mapping to no branch is said."""
    spec = tmp_path / "discriminated_login.yaml"
    spec.write_text(_DISCRIMINATED, encoding="utf-8")
    tree, pkg = _compiled(spec, tmp_path / "out")
    call = pkg.LoginCall
    for body in (
        {"method": "password", "password": "p", "csrf": "c"},
        {"method": "code", "code": "1"},
        {"method": "t", "totp": "123456"},  # (a dotted schema name in the mapping)
        {"method": "Sms", "sms": "1"},  # (implicit: the schema's name)
    ):
        got = call.model_validate({"body": body})
        assert got.model_dump(mode="json", by_alias=True, exclude_none=True)["body"] == body
    for bad in ({"method": "other"}, {"method": "lookup"}, {"method": "password"}, {"code": "1"}):
        with pytest.raises(ValidationError):
            call.model_validate({"body": bad})
    (name,) = tree.packages
    entry = json.loads((tmp_path / "out" / name / "tools.json").read_text(encoding="utf-8"))
    (tool,) = entry["tools"]
    branches = tool["parameters"]["properties"]["body"]["oneOf"]
    assert [b["allOf"][1]["properties"]["method"]["enum"] for b in branches] == [
        ["password"],
        ["code"],
        ["t"],
        ["Sms"],
    ]
    assert "discriminator" not in json.dumps(tool["parameters"])  # (its mapping names nothing)
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1login/post/requestBody/content/application~1json/schema/discriminator"
        "/mapping/lookup: warning: discriminator mapping 'lookup' → 'Gone' names no branch of "
        "the oneOf; that value picks no branch — a schema name or $ref that is one of the "
        "oneOf's branches"
    ]
    # the schema a model sees agrees with the models on each body
    validator: Any = Draft202012Validator(tool["parameters"] | {"$defs": entry["$defs"]})
    for body in ({"method": "code"}, {"method": "Sms"}, {"method": "lookup"}, {"x": 1}, 3):
        try:
            call.model_validate({"body": body})
            accepted = True
        except ValidationError:
            accepted = False
        assert validator.is_valid({"body": body}) is accepted, body


def test_a_discriminator_whose_property_lists_every_branchs_name_picks_by_name(
    tmp_path: Path,
) -> None:
    """Found on Vonage's reports API: ``product`` is an enum of every branch's schema name in
    each branch (directly, through an ``allOf`` part, behind a ``$ref``), there is no mapping,
    and every body matched all the branches of the ``oneOf``. The implicit mapping (the schema's
    name) applies where the branch allows that name; openai's branches that fix other values are
    told apart by them (``test_corpus_spec_compiles_and_imports``)."""
    spec = tmp_path / "reports.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: r, version: '1'}\npaths:\n  /reports:\n    post:\n"
        "      operationId: createReport\n      requestBody:\n        required: true\n"
        "        content:\n          application/json:\n            schema:\n"
        "              oneOf: [{$ref: '#/components/schemas/SMS'}, "
        "{$ref: '#/components/schemas/VOICE-CALL'}, {$ref: '#/components/schemas/ASR'}]\n"
        "              discriminator: {propertyName: product}\n"
        "      responses: {'204': {description: none}}\n"
        "components:\n  schemas:\n"
        "    Product: {type: string, enum: [SMS, VOICE-CALL, ASR]}\n"
        "    SMS:\n      type: object\n      required: [product]\n      properties:\n"
        "        product: {type: string, enum: [SMS, VOICE-CALL, ASR]}\n"
        "        direction: {type: string}\n"
        "    VOICE-CALL:\n      allOf:\n        - {$ref: '#/components/schemas/Base'}\n"
        "        - {type: object, properties: {product: {$ref: '#/components/schemas/Product'}}}\n"
        "    ASR:\n      type: object\n      properties: {product: {const: ASR}}\n"
        "    Base: {type: object, required: [product], properties: {id: {type: string}}}\n",
        encoding="utf-8",
    )
    tree, pkg = _compiled(spec, tmp_path / "out")
    call = pkg.CreateReportCall
    for body in ({"product": "SMS"}, {"product": "VOICE-CALL", "id": "1"}, {"product": "ASR"}):
        got = call.model_validate({"body": body})
        assert got.model_dump(mode="json", by_alias=True, exclude_none=True)["body"] == body
    with pytest.raises(ValidationError):
        call.model_validate({"body": {"product": "FAX"}})
    assert not [d for d in tree.diagnostics if "discriminator" in d.found]


def test_a_discriminator_over_inline_branches_is_said_and_left_an_annotation(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "discriminated_inline.yaml"
    spec.write_text(
        _DISCRIMINATED.replace(
            "                - $ref: '#/components/schemas/Sms'\n",
            "                - {type: object, properties: {method: {const: totp}}}\n",
        ),
        encoding="utf-8",
    )
    tree = build([spec], formatted=False)
    warnings = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert warnings == [
        f"{spec}#/paths/~1login/post/requestBody/content/application~1json/schema/discriminator:"
        " warning: discriminator on a oneOf whose branches are not all $refs; it is ignored, so "
        "the branches are told apart by their schemas alone — each branch of the oneOf a $ref "
        "(the discriminator's values name schemas)"
    ]


def test_properties_without_type_are_an_object_and_said(tmp_path: Path) -> None:
    """The defect (Discourse: 30 of 44 bodies): ``properties`` without ``type`` was read as JSON
    Schema reads it, so a required body accepted "hello", 42 or null and was not spread into
    fields. OpenAPI means an object there: read so, with a located warning — but not beside an
    allOf part that says object (Lago's ``allOf: [{$ref: Base}, {properties: ...}]``), which
    is an object already."""
    spec = tmp_path / "untyped_posts.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /posts:\n    post:\n"
        "      operationId: createPost\n      requestBody:\n        required: true\n"
        "        content:\n          application/json:\n            schema:\n"
        "              properties: {title: {type: string}, raw: {type: string}}\n"
        "              required: [raw]\n"
        "      responses:\n        '200':\n          description: ok\n          content:\n"
        "            application/json:\n              schema:\n                allOf:\n"
        "                  - {$ref: '#/components/schemas/Base'}\n"
        "                  - {properties: {id: {type: integer}}}\n"
        "components:\n  schemas:\n    Base: {type: object, properties: {raw: {type: string}}}\n",
        encoding="utf-8",
    )
    tree, pkg = _compiled(spec, tmp_path / "out")
    call = pkg.CreatePostCall
    assert {"title", "raw"} <= set(call.model_fields)  # the body spread into fields
    assert call.model_validate({"raw": "x"}).raw == "x"
    with pytest.raises(ValidationError):
        call.model_validate({"title": "no raw"})
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1posts/post/requestBody/content/application~1json/schema/properties: "
        "warning: properties without type: read as type: object — type: object beside "
        "properties (without it, JSON Schema lets any non-object value through)"
    ]


def test_required_read_only_and_write_only_properties_are_optional_and_said(
    tmp_path: Path,
) -> None:
    """The defect (Redocly's openapi-starter, OAS 3.0.3 "readOnly"): a component serves requests
    and responses, so a required readOnly ``id`` was required in the Call (the spec's own request
    example refused) and a required writeOnly ``secret`` in the Output (a valid answer refused).
    Both are read as optional, with a located warning."""
    spec = tmp_path / "readonly_items.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /items:\n    post:\n"
        "      operationId: createItem\n      requestBody:\n        required: true\n"
        "        content:\n          application/json:\n"
        "            schema: {$ref: '#/components/schemas/Item'}\n"
        "      responses:\n        '201':\n          description: made\n          content:\n"
        "            application/json:\n              schema: {$ref: '#/components/schemas/Item'}\n"
        "components:\n  schemas:\n    Item:\n      type: object\n"
        "      required: [id, name, secret]\n      properties:\n"
        "        id: {type: string, readOnly: true}\n        name: {type: string}\n"
        "        secret: {type: string, writeOnly: true}\n",
        encoding="utf-8",
    )
    tree, pkg = _compiled(spec, tmp_path / "out")
    assert pkg.CreateItemCall.model_validate({"name": "w", "secret": "s"}).name == "w"
    assert pkg.CreateItemOutput.model_validate({"id": "1", "name": "w"}).id == "1"
    with pytest.raises(ValidationError):  # (name is still required both ways)
        pkg.CreateItemCall.model_validate({"secret": "s"})
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/components/schemas/Item/required: warning: required lists readOnly/writeOnly "
        "id, secret: read as optional (OpenAPI requires a readOnly property in responses only, "
        "a writeOnly one in requests only, and this schema is read for both) — required naming "
        "properties required both ways"
    ]


def test_a_parameter_named_like_a_credential_that_no_scheme_declares_is_said(
    tmp_path: Path,
) -> None:
    """Found on Discourse's spec: no securitySchemes, and an ``Api-Key`` header parameter on 22
    operations, so a model was asked for the API key with nothing said. One warning per name
    and place; a name an apiKey scheme declares, a pagination ``page_token`` (in a header too:
    ``X-Next-Token``), an ``X-Request-Id``, a boolean (GitHub's ``hide_secret``), a name that
    only begins like one (``secret_type``), Ory Hydra's ``login_session_id`` and a path
    parameter (PagerDuty's ``session_id`` of a session an admin revokes: it names a resource,
    and no apiKey scheme can be ``in: path``) are not; a nullable string, a ``refreshToken``,
    Ory Kratos's ``X-Session-Token`` header and a form body's ``api_secret`` (Vonage's SMS API)
    are — but not a body's ``password``, more often a value being set than the caller's own."""
    spec = tmp_path / "credential_keys.yaml"
    op = (
        "      parameters:\n        - {{name: {name}, in: {where}, required: true, "
        "schema: {{type: string}}}}\n      responses:\n        '204': {{description: ok}}\n"
    )
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /a:\n    get:\n      operationId: a\n"
        + op.format(name="Api-Key", where="header")
        + "  /b:\n    get:\n      operationId: b\n"
        + op.format(name="Api-Key", where="header")
        + "  /c:\n    get:\n      operationId: c\n"
        + op.format(name="X-Key", where="header")
        + "  /d:\n    get:\n      operationId: d\n"
        + op.format(name="page_token", where="query")
        + "  /e:\n    get:\n      operationId: e\n"
        + op.format(name="access_token", where="query")
        + "  /f:\n    get:\n      operationId: f\n"
        + op.format(name="hide_secret", where="query").replace("string", "boolean")
        + "  /g:\n    get:\n      operationId: g\n"
        + op.format(name="secret", where="query").replace(
            "{type: string}", "{type: [string, 'null']}"
        )
        + "  /h:\n    get:\n      operationId: h\n"
        + op.format(name="secret_type", where="query")
        + "  /i:\n    get:\n      operationId: i\n"
        + op.format(name="login_session_id", where="query")
        + "  /j:\n    get:\n      operationId: j\n"
        + op.format(name="refreshToken", where="query")
        + "  /k/{session_id}:\n    delete:\n      operationId: k\n"
        + op.format(name="session_id", where="path")
        + "  /l:\n    get:\n      operationId: l\n"
        + op.format(name="X-Session-Token", where="header")
        + "  /m:\n    get:\n      operationId: m\n"
        + op.format(name="X-Next-Token", where="header")
        + "  /n:\n    get:\n      operationId: n\n"
        + op.format(name="X-Request-Id", where="header")
        + "  /o:\n    get:\n      operationId: o\n"
        + op.format(name="continuation_token", where="query")
        + "  /sms:\n    post:\n      operationId: sms\n      requestBody:\n        content:\n"
        + "          application/x-www-form-urlencoded:\n            schema:\n"
        + "              type: object\n              required: [api_secret, to]\n"
        + "              properties: {api_secret: {type: string}, to: {type: string}, "
        + "password: {type: string}}\n"
        + "      responses:\n        '204': {description: ok}\n"
        + "components:\n  securitySchemes:\n    k: {type: apiKey, name: x-key, in: header}\n",
        encoding="utf-8",
    )
    tree = build([spec], formatted=False)
    hint = (
        "its value then comes from configuration (credentials=, the environment), never from "
        "a model"
    )
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1a/get: warning: header parameter 'Api-Key' looks like a credential, "
        "and no securityScheme declares it: it is a Call field, so a model is asked for it (2 "
        "operations, the first here) — an apiKey securityScheme (name: Api-Key, in: header): "
        + hint,
        f"{spec}#/paths/~1e/get: warning: query parameter 'access_token' looks like a "
        "credential, and no securityScheme declares it: it is a Call field, so a model is asked "
        "for it — an apiKey securityScheme (name: access_token, in: query): " + hint,
        f"{spec}#/paths/~1g/get: warning: query parameter 'secret' looks like a "
        "credential, and no securityScheme declares it: it is a Call field, so a model is asked "
        "for it — an apiKey securityScheme (name: secret, in: query): " + hint,
        f"{spec}#/paths/~1j/get: warning: query parameter 'refreshToken' looks like a "
        "credential, and no securityScheme declares it: it is a Call field, so a model is asked "
        "for it — an apiKey securityScheme (name: refreshToken, in: query): " + hint,
        f"{spec}#/paths/~1l/get: warning: header parameter 'X-Session-Token' looks like a "
        "credential, and no securityScheme declares it: it is a Call field, so a model is asked "
        "for it — an apiKey securityScheme (name: X-Session-Token, in: header): " + hint,
        f"{spec}#/paths/~1sms/post: warning: request body property 'api_secret' looks like a "
        "credential, and no securityScheme declares it: it is a Call field, so a model is asked "
        "for it — a secret from configuration: OpenAPI declares one as an apiKey securityScheme "
        "in a header, the query or a cookie, never in a body",
    ]


@pytest.mark.parametrize(
    ("name", "where", "flagged"),
    [
        ("X-Session-Token", "header", True),  # Ory Kratos: the caller's own session
        ("X-Auth-Token", "header", True),
        ("X-API-Key", "header", True),
        ("Api-Key", "header", True),
        ("X-Vault-Token", "header", True),  # any header token but a page's
        ("Private-Token", "header", True),  # GitLab's
        ("session_token", "query", True),
        ("api_token", "query", True),
        ("X-Session-Id", "header", True),
        ("X-Request-Id", "header", False),
        ("X-Next-Token", "header", False),
        ("X-Continuation-Token", "header", False),
        ("page_token", "query", False),
        ("next_token", "query", False),
        ("continuation_token", "query", False),
        ("sync_token", "query", False),
        ("token", "query", False),  # an invitation's as often as the caller's
        ("session_id", "path", False),  # a resource: no apiKey scheme is in: path
        ("api_key", "path", False),
    ],
)
def test_credential_names(name: str, where: str, flagged: bool) -> None:
    assert _looks_like_credential(name, where) is flagged


def test_a_cookie_header_parameter_says_how_to_send_it(tmp_path: Path) -> None:
    """Ory Kratos declares ``Cookie`` as a header parameter (a browser's session passed on): no
    Call field, since a model never makes up a session; the diagnostic says how to configure
    it, and is a warning where the operation requires it."""
    spec = tmp_path / "cookie_header.yaml"
    op = (
        "    get:\n      operationId: {id}\n      parameters:\n"
        "        - {{name: Cookie, in: header, required: {required}, schema: {{type: string}}}}\n"
        "      responses: {{'204': {{description: ok}}}}\n"
    )
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        + "  /whoami:\n"
        + op.format(id="whoami", required="true")
        + "  /optional:\n"
        + op.format(id="optional", required="false"),
        encoding="utf-8",
    )
    tree = build([spec], formatted=False)
    found = (
        "header parameter 'Cookie' is not a Call field: calls send the cookies the API set "
        "earlier and those of apiKey schemes in: cookie"
    )
    hint = "(hint: HttpClient(headers={'Cookie': 'name=value'}) sends it on every call)"
    said = [d.render() for d in tree.diagnostics if "'Cookie'" in d.found]
    assert said == [
        f"{spec}#/paths/~1whoami/get/parameters/0: warning: {found}; the operation requires it "
        f"— a cookie the API needs from elsewhere: configuration {hint}",
        f"{spec}#/paths/~1optional/get/parameters/0: note: {found} {hint}",
    ]
    (package,) = tree.packages
    tools = json.loads(tree.files[f"{package}/tools.json"])["tools"]
    assert [t["parameters"].get("properties") for t in tools] == [None, None]


def test_an_express_style_path_segment_is_said(tmp_path: Path) -> None:
    """Vonage's media API has ``/:id/info``: OpenAPI reads no parameter there, so the tool asks
    for no id and sends ``:id`` as written — said, with the template it meant; a ``:verb``
    after a template (Google's ``/v1/{name}:cancel``) is no segment of its own."""
    spec = tmp_path / "media.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: m, version: '1'}\npaths:\n"
        "  /:id/info:\n    get:\n      operationId: info\n"
        "      responses: {'204': {description: ok}}\n"
        "  /v1/{name}:cancel:\n    post:\n      operationId: cancel\n"
        "      parameters: [{name: name, in: path, required: true, schema: {type: string}}]\n"
        "      responses: {'204': {description: ok}}\n",
        encoding="utf-8",
    )
    tree = build([spec], formatted=False)
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1:id~1info: warning: the path '/:id/info' has ':id', a parameter as "
        "Express writes it; OpenAPI's are {name}, so it is sent as written — a path template: "
        "/{id}/info (hint: write the path with {name} and declare the path parameter)"
    ]


def test_a_form_body_whose_schema_is_no_object_is_said(tmp_path: Path) -> None:
    """listmonk's media upload is multipart/form-data of ``{type: string, format: binary}``: a
    multipart body is an object whose properties are its parts, so this one names no part and
    every call was refused at run time — compiled without a word."""
    spec = tmp_path / "media.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: m, version: '1'}\npaths:\n"
        "  /media:\n    post:\n      operationId: upload\n"
        "      requestBody:\n        content:\n          multipart/form-data:\n"
        "            schema: {type: string, format: binary}\n"
        "      responses: {'204': {description: ok}}\n"
        "  /tags:\n    post:\n      operationId: tag\n"
        "      requestBody:\n        content:\n          application/x-www-form-urlencoded:\n"
        "            schema: {type: array, items: {type: string}}\n"
        "      responses: {'204': {description: ok}}\n"
        "  /notes:\n    post:\n      operationId: note\n"
        "      requestBody:\n        content:\n          multipart/form-data:\n"
        "            schema: {type: object, properties: {file: {type: string, format: binary}}}\n"
        "      responses: {'204': {description: ok}}\n",
        encoding="utf-8",
    )
    tree = build([spec], formatted=False)
    assert [d.render() for d in tree.diagnostics if d.severity == "warning"] == [
        f"{spec}#/paths/~1media/post/requestBody/content/multipart~1form-data/schema: warning: "
        "the multipart/form-data body's schema is a file, not an object: such a body is an "
        "object whose properties are its parts, so this one names none and a call is refused "
        "— an object schema (type: object, properties: {<name>: ...}) (hint: name the part the "
        "API reads: {type: object, properties: {file: {type: string, format: binary}}})",
        f"{spec}#/paths/~1tags/post/requestBody/content/application~1x-www-form-urlencoded/"
        "schema: warning: the application/x-www-form-urlencoded body's schema is of type array, not an "
        "object: such a body is an object whose properties are its fields, so this one names "
        "none and a call is refused — an object schema (type: object, properties: {<name>: ...})",
    ]


def test_a_part_of_a_split_spec_beside_it_is_not_compiled_on_its_own(tmp_path: Path) -> None:
    """``make generate`` over ``specs/`` where a spec keeps its components in a file beside it:
    that file is no spec, and compiling it on its own failed the whole run. A file that is no
    spec and that another spec of the run $refs is a part: a note says so, and the spec
    compiles. The same file alone, or with nothing referring to it, is an error that says what
    it lacks."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: s, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      operationId: getA\n      responses:\n        '200':\n          description: ok\n"
        "          content:\n            application/json:\n"
        "              schema: {$ref: 'common.yaml#/components/schemas/A'}\n",
        encoding="utf-8",
    )
    (specs / "common.yaml").write_text(
        "components:\n  schemas:\n    A: {type: object, properties: {x: {type: string}}}\n",
        encoding="utf-8",
    )
    tree = build([specs], formatted=False)
    assert list(tree.packages) == ["api"]
    assert [d.render() for d in tree.diagnostics if d.loc.file.endswith("common.yaml")] == [
        f"{specs / 'common.yaml'}#: note: not compiled on its own: {specs / 'api.yaml'} $refs it "
        "(a part of a split spec)"
    ]
    with pytest.raises(SpecError) as info:
        build([specs / "common.yaml"], formatted=False)
    assert [d.render() for d in info.value.diagnostics] == [
        f"{specs / 'common.yaml'}#: error: an OpenAPI document without openapi or swagger (it "
        "has components) — openapi: 3.x.y or swagger: '2.0' at the top; a file that only holds "
        "parts of a split spec is compiled through the spec that $refs it"
    ]


def test_discriminator_values_are_strings_and_what_picks_no_branch_is_said(
    tmp_path: Path,
) -> None:
    """A YAML mapping key ``1`` is the value ``"1"`` (the property is a string); a mapping
    target that is no string, and a branch whose value nothing says, are said, not dropped."""
    spec = tmp_path / "discriminated_keys.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /k:\n    post:\n"
        "      operationId: k\n      requestBody:\n        content:\n"
        "          application/json:\n            schema:\n              oneOf:\n"
        "                - $ref: '#/components/schemas/A'\n"
        "                - $ref: '#/components/schemas/C'\n"
        "              discriminator: {propertyName: kind, mapping: {1: A, 2: [C]}}\n"
        "      responses:\n        '204': {description: ok}\n"
        "components:\n  schemas:\n"
        "    A: {type: object, required: [kind], properties: {kind: {type: string}}}\n"
        "    C: {type: object, properties: {other: {type: string}}}\n",
        encoding="utf-8",
    )
    tree, _ = _compiled(spec, tmp_path / "out")
    (name,) = tree.packages
    entry = json.loads((tmp_path / "out" / name / "tools.json").read_text(encoding="utf-8"))
    branches = entry["tools"][0]["parameters"]["properties"]["body"]["oneOf"]
    assert branches[0]["allOf"][1]["properties"]["kind"]["enum"] == ["1"]
    schema = f"{spec}#/paths/~1k/post/requestBody/content/application~1json/schema"
    said = [d.render() for d in tree.diagnostics if d.severity in ("warning", "note")]
    assert (
        f"{schema}/discriminator/mapping/2: warning: discriminator mapping '2' is an array; it picks no branch — a schema name or $ref (a string)"
        in said
    ), said
    assert (
        f"{schema}/oneOf/1: note: no discriminator value is known for this branch "
        "(#/components/schemas/C): no mapping names it and its schema does not declare 'kind'; "
        "it is told apart by its schema alone"
    ) in said, said
