"""What a spec says and toolbind cannot use as written is reported, never dropped in silence."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbind.compiler import SpecError, generate_tree

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
    assert "hint: rename the spec file" in warning


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
