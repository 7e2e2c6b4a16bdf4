"""What a spec says and toolbind cannot use as written is reported, never dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import unload
from toolbind.compiler import (
    SelectionError,
    SpecError,
    compile_to_directory,
    generate_tree,
    load_package,
)

TYPO = """\
greetUser:
  type: object
  properties:
    _tool: {const: greetUser}
    userName: {type: string}
    mail: {type: string}
  required: [username, mail, extra]
"""


def test_a_required_name_that_looks_like_a_declared_property_is_a_warning(tmp_path: Path) -> None:
    spec = tmp_path / "greet.yaml"
    spec.write_text(TYPO, encoding="utf-8")
    warnings = [d.render() for d in generate_tree([spec]).diagnostics if d.severity == "warning"]
    assert len(warnings) == 1, warnings  # 'extra' is like nothing declared: plain JSON Schema
    (warning,) = warnings
    assert f"{spec}#/greetUser/required/0: warning: required names 'username'" in warning
    assert "did you mean 'userName'?" in warning
    with pytest.raises(SpecError, match="did you mean 'userName'"):
        generate_tree([spec], strict=True)


def test_a_package_named_like_an_installed_module_is_a_warning(tmp_path: Path) -> None:
    spec = tmp_path / "httpx.yaml"  # the package is named after the spec file
    spec.write_text(TYPO.replace("required: [username, mail, extra]", "required: [mail]"), "utf-8")
    tree = generate_tree([spec])
    assert list(tree.packages) == ["httpx"]
    (warning,) = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert "the generated package 'httpx' has the name of the installed module 'httpx'" in warning
    assert "hint: name it with --package SPEC=NAME" in warning
    renamed = generate_tree([spec], package_names={str(spec): "httpx_tools"})
    assert list(renamed.packages) == ["httpx_tools"]
    assert not [d for d in renamed.diagnostics if d.severity == "warning"]


@pytest.mark.parametrize(
    ("stem", "package", "reason"),
    [
        ("petstore_v3", "petstore_v3", None),  # digits stay with their word
        ("PetStore-v2", "pet_store_v2", None),  # lower case and _ are the rule, not a rename
        ("2fa", "spec_2fa", "a Python name can't start with a digit"),
        ("email", "email_tools", "'email' is a standard-library module"),
    ],
)
def test_a_package_is_named_after_its_file_and_a_rename_is_said(
    tmp_path: Path, stem: str, package: str, reason: str | None
) -> None:
    spec = tmp_path / f"{stem}.yaml"
    spec.write_text(TYPO.replace("required: [username, mail, extra]", "required: [mail]"), "utf-8")
    tree = generate_tree([spec])
    assert list(tree.packages) == [package]
    warnings = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    if reason is None:
        assert warnings == []
    else:
        assert warnings == [
            f"{spec}#: warning: generated as package {package!r}: {reason} (hint: name it with "
            "--package SPEC=NAME (package_names= in the API), or rename the spec file (the "
            "package is named after it))"
        ]


def test_a_package_named_like_a_module_of_the_project_is_a_warning(tmp_path: Path) -> None:
    """The README's old trap: specs/demo.yaml → generated/demo beside the project's own demo/."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text("", encoding="utf-8")
    spec = tmp_path / "demo.yaml"
    spec.write_text(TYPO.replace("required: [username, mail, extra]", "required: [mail]"), "utf-8")
    tree = compile_to_directory([spec], tmp_path / "generated")
    (warning,) = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert "the generated package 'demo' has the name of" in warning
    assert "beside the output directory" in warning
    assert f"--package {spec}=OTHER" in warning
    tree = compile_to_directory(
        [spec], tmp_path / "generated", package_names={str(spec): "demo_tools"}
    )
    assert list(tree.packages) == ["demo_tools"]
    assert not [d for d in tree.diagnostics if d.severity == "warning"]
    assert (tmp_path / "generated" / "demo_tools" / "__init__.py").is_file()


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ({"x.yaml": "1x"}, "is not a usable Python package name"),
        ({"x.yaml": "class"}, "is not a usable Python package name"),
        ({"other.yaml": "fine"}, "which is not one of the specs compiled"),
    ],
)
def test_a_bad_package_name_is_a_usage_error(
    tmp_path: Path, names: dict[str, str], message: str
) -> None:
    spec = tmp_path / "x.yaml"
    spec.write_text(TYPO.replace("required: [username, mail, extra]", "required: [mail]"), "utf-8")
    given = {str(tmp_path / k): v for k, v in names.items()}
    with pytest.raises(SelectionError, match=message):
        generate_tree([spec], package_names=given)


def test_a_file_that_is_no_tool_spec_is_not_compiled_in_silence(tmp_path: Path) -> None:
    spec = tmp_path / "package.json"
    spec.write_text(
        '{"name": "x", "version": "1.0.0", "scripts": {"test": "jest"}, "dependencies": {}}',
        encoding="utf-8",
    )
    warnings = [d.render() for d in generate_tree([spec]).diagnostics if d.severity == "warning"]
    for key in ("version", "scripts", "dependencies"):
        assert any(
            f"#/{key}: warning: {key!r} is not part of a function definition" in w for w in warnings
        )
    with pytest.raises(SpecError):
        generate_tree([spec], strict=True)


def test_every_error_of_every_spec_is_reported_in_one_run(tmp_path: Path) -> None:
    """Three errors in one spec, three in another format, a syntax error in a third file: one
    run reports all seven, each located (none hides the others)."""
    (tmp_path / "tools.yaml").write_text(
        "a:\n  type: object\n  properties:\n    _tool: {const: a}\n    x: {type: frobnicate}\n"
        "    y: {minLength: -1}\nb:\n  type: object\n  properties:\n    _tool: {const: b}\n"
        "    z: {type: [string, 3]}\n",
        encoding="utf-8",
    )
    (tmp_path / "openai.json").write_text(
        '[{"type": "function", "function": {"parameters": {"type": "object"}}},'
        ' {"type": "function", "function": {"name": "ok", "parameters": {"type": "object",'
        ' "properties": {"a": {"type": "nope"}}}}},'
        ' {"type": "function", "function": {"name": "c", "parameters": "notaschema"}}]',
        encoding="utf-8",
    )
    (tmp_path / "broken.yaml").write_text("a: [1, 2\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        generate_tree([tmp_path])
    errors = [d for d in caught.value.diagnostics if d.severity == "error"]
    where = sorted(f"{Path(d.loc.file).name}#{d.loc.pointer}" for d in errors)
    assert where == [
        "broken.yaml#",
        "openai.json#/0/function/name",
        "openai.json#/1/function/parameters/properties/a/type",
        "openai.json#/2/function/parameters",
        "tools.yaml#/a/properties/x/type",
        "tools.yaml#/a/properties/y/minLength",
        "tools.yaml#/b/properties/z/type/1",
    ]


def test_draft_3_boolean_required_is_read_with_a_warning(tmp_path: Path) -> None:
    """Real specs still write draft 3's ``required: true`` inside a property: one obvious
    meaning (the object requires it), said where it is; ``false`` means nothing."""
    spec = tmp_path / "signup.yaml"
    spec.write_text(
        "openapi: 3.0.3\n"
        "info: {title: signup, version: '1'}\n"
        "paths:\n"
        "  /signup:\n"
        "    post:\n"
        "      operationId: signup\n"
        "      requestBody:\n"
        "        required: true\n"
        "        content:\n"
        "          application/json:\n"
        "            schema:\n"
        "              type: object\n"
        "              properties:\n"
        "                email: {type: string, required: true}\n"
        "                passkey: {type: object, required: false, properties: {id: {type: string}}}\n"
        "      responses: {'200': {description: ok}}\n",
        encoding="utf-8",
    )
    tree = generate_tree([spec])
    said = {d.loc.pointer: d.found for d in tree.diagnostics if d.severity == "warning"}
    base = "/paths/~1signup/post/requestBody/content/application~1json/schema/properties"
    assert "read as: the object requires 'email'" in said[f"{base}/email/required"]
    assert said[f"{base}/passkey/required"].endswith("ignored")
    tools = json.loads(tree.files["signup/tools.json"])["tools"]
    assert tools[0]["parameters"]["required"] == ["email"]
    with pytest.raises(SpecError, match="draft 3"):
        generate_tree([spec], strict=True)


def test_schemas_real_specs_get_wrong_are_read_with_warnings(tmp_path: Path) -> None:
    """A misspelt type, a type with no reading, an empty schema and a description written where
    the schema goes (each seen in real specs) no longer refuse the whole spec: each is read with
    a located warning, and ``--strict`` refuses them."""
    spec = tmp_path / "odd.yaml"
    spec.write_text(
        "openapi: 3.0.3\n"
        "info: {title: odd, version: '1'}\n"
        "paths:\n"
        "  /a:\n"
        "    get:\n"
        "      operationId: a\n"
        "      parameters:\n"
        "        - {name: n, in: query, schema: {type: itneger}}\n"
        "        - {name: m, in: query, schema: {type: frob}}\n"
        "      responses:\n"
        "        '200':\n"
        "          description: ok\n"
        "          content:\n"
        "            application/json:\n"
        "              schema:\n"
        "                type: object\n"
        "                properties:\n"
        "                  x:\n"
        "                  y: the y value\n",
        encoding="utf-8",
    )
    tree = generate_tree([spec])
    said = {d.loc.pointer: d.found for d in tree.diagnostics if d.severity == "warning"}
    assert "read as 'integer'" in said["/paths/~1a/get/parameters/0/schema/type"]
    assert "read as any value" in said["/paths/~1a/get/parameters/1/schema/type"]
    props = "/paths/~1a/get/responses/200/content/application~1json/schema/properties"
    assert "schema is null; read as any value" in said[f"{props}/x"]
    assert "described by that text" in said[f"{props}/y"]
    (tool,) = json.loads(tree.files["odd/tools.json"])["tools"]
    assert tool["parameters"]["properties"]["n"] == {"type": "integer"}
    assert tool["output_schema"]["properties"]["y"] == {"description": "the y value"}
    with pytest.raises(SpecError) as caught:
        generate_tree([spec], strict=True)
    assert len([d for d in caught.value.diagnostics if d.severity == "error"]) == 4


def test_a_pattern_opening_with_inline_flags_is_read_as_a_modifier_group(
    tmp_path: Path,
) -> None:
    """PayPal's invoicing spec has ``pattern: (?i)^(all|none)$`` (Java's inline flag, which
    ECMA-262 has not): the whole spec failed to compile on it. It is read as ES2025's modifier
    group over the rest, said, and the model matches case-insensitively; a pattern that is
    wrong otherwise is still an error."""
    spec = tmp_path / "flags.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: flags, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      operationId: a\n      parameters:\n"
        "        - {name: fields, in: query, schema: {type: string, pattern: '(?i)^(all|none)$'}}\n"
        "      responses: {'204': {description: ok}}\n",
        encoding="utf-8",
    )
    tree = compile_to_directory([spec], tmp_path / "out")
    said = [d.render() for d in tree.diagnostics if d.severity == "warning"]
    assert said == [
        f"{spec}#/paths/~1a/get/parameters/0/schema/pattern: warning: pattern '(?i)^(all|none)$' "
        "starts with '(?i)', an inline flag group ECMA-262 has not (Java's, Python's); read as "
        "'(?i:^(all|none)$)', the flags over the whole pattern — an ECMA-262 regular expression "
        "(hint: write '(?i:^(all|none)$)' (ECMA-262's modifier group))"
    ]
    pkg = load_package(tmp_path / "out", "flags")
    try:
        call = pkg.CallAdapter.validate_python({"_tool": "a", "fields": "ALL"})
        assert call.model_dump(mode="json", by_alias=True)["fields"] == "ALL"
        with pytest.raises(ValidationError):
            pkg.CallAdapter.validate_python({"_tool": "a", "fields": "some"})
    finally:
        unload("flags")
    spec.write_text(spec.read_text().replace("(?i)^(all|none)$", "(?i)^(all|none$"))
    with pytest.raises(SpecError, match="not a valid regular expression"):
        generate_tree([spec])


def test_a_yaml_timestamp_in_a_file_the_spec_refs_is_its_text(tmp_path: Path) -> None:
    """The spec itself read unquoted dates as text; a file it ``$ref``s refused them (a real
    split spec failed to compile over a ``default: 2025-02-28 19:38:57+00:00``)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "defs.yaml").write_text(
        "Thing:\n  type: object\n  properties:\n"
        "    at: {type: string, default: 2025-02-28 19:38:57+00:00}\n",
        encoding="utf-8",
    )
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: d, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      operationId: a\n      responses:\n        '200':\n          description: ok\n"
        "          content: {application/json: {schema: {$ref: 'sub/defs.yaml#/Thing'}}}\n",
        encoding="utf-8",
    )
    tools = json.loads(generate_tree([spec]).files["api/tools.json"])
    assert tools["tools"][0]["output_schema"] == {"$ref": "#/$defs/Thing"}
    at = tools["$defs"]["Thing"]["properties"]["at"]
    assert at["default"] == "2025-02-28 19:38:57+00:00"


def test_bfcls_own_optional_key_never_reaches_a_provider(tmp_path: Path) -> None:
    """BFCL function docs mark parameters ``optional: true`` besides ``required``: the key is
    BFCL's, not JSON Schema's, and was copied into every provider export."""
    spec = tmp_path / "bf.json"
    spec.write_text(
        json.dumps(
            {
                "name": "f",
                "description": "d",
                "parameters": {
                    "type": "dict",
                    "properties": {
                        "a": {"type": "string", "optional": True, "description": "x"},
                        "b": {"type": "integer", "default": 3, "optional": False},
                    },
                    "required": ["b"],
                },
            }
        ),
        encoding="utf-8",
    )
    tree = generate_tree([spec])
    assert '"optional"' not in tree.files["bf/tools.json"]
    params = json.loads(tree.files["bf/tools.json"])["tools"][0]["parameters"]
    assert params["properties"]["b"] == {"type": "integer", "default": 3}
    assert params["required"] == ["b"]


def test_load_package_before_generate_names_what_is_missing(tmp_path: Path) -> None:
    from toolbind.compiler import OutputError
    from toolbind.runtime.errors import UsageError

    with pytest.raises(
        OutputError, match=r"no generated package 'pets' in .* — run `toolbind generate"
    ):
        load_package(tmp_path / "generated", "pets")
    spec = tmp_path / "greet_loaded.yaml"
    spec.write_text(TYPO.replace("required: [username, mail, extra]", "required: [mail]"), "utf-8")
    compile_to_directory([spec], tmp_path / "generated")
    with pytest.raises(UsageError, match=r"package='pets'\): .* \(it holds greet_loaded\)"):
        load_package(tmp_path / "generated", "pets")
    assert load_package(tmp_path / "generated", "greet_loaded").TOOLS[0].name == "greetUser"
