"""``x-`` keys of a JSON Schema tool never reach a provider, and are reported.

A spec's vendor extensions annotate its schemas for other tools; a model gets them as unknown
keywords (and strict providers refuse them). They are dropped from the composed schema and every
export, wherever they sit (a tool's root, a parameter, an output, a ``$defs`` entry); a *property*
named ``x-…`` is a parameter like any other and stays. What is dropped is listed in one located
note, except the extensions toolbind reads itself (``x-requires-approval``, ``x-toolbind-retry``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbind.cli._export import EXPORT_FORMATS, provider_export
from toolbind.compiler import SpecError, compile_to_directory, composed_schema

SPEC: dict[str, Any] = {
    "greetUser": {
        "type": "object",
        "description": "Greets a user.",
        "x-vendor": {"owner": "team-a"},
        "x-toolbind-retry": {"maxAttempts": 3},
        "x-requires-approval": False,
        "properties": {
            "_tool": {"const": "greetUser"},
            "userName": {"type": "string", "x-internal": True},
            "x-trace-id": {"type": "string", "description": "a parameter named x-…"},
            "address": {"$ref": "#/$defs/Address"},
            "_output": {
                "type": "object",
                "properties": {"greeting": {"type": "string", "x-unit": "words"}},
            },
        },
        "$defs": {
            "Address": {
                "type": "object",
                "x-table": "addresses",
                "properties": {"city": {"type": "string"}},
            }
        },
    }
}


def _keyword_extensions(node: Any, pointer: str = "") -> list[str]:
    """The ``x-`` keys found in keyword positions (not as names under ``properties``)."""
    found: list[str] = []
    if isinstance(node, list):
        for i, item in enumerate(node):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            found += _keyword_extensions(item, f"{pointer}/{i}")
    elif isinstance(node, dict):
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            key = str(key)  # pyright: ignore[reportUnknownArgumentType]
            if key.startswith("x-"):
                found.append(f"{pointer}/{key}")
            if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(
                value, dict
            ):
                for name, sub in value.items():  # pyright: ignore[reportUnknownVariableType]
                    found += _keyword_extensions(sub, f"{pointer}/{key}/{name}")
            else:
                found += _keyword_extensions(value, f"{pointer}/{key}")
    return found


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    return path


def test_the_walker_sees_keyword_extensions() -> None:
    """The check below can fail: the walker finds keyword x- keys and skips property names."""
    assert _keyword_extensions(SPEC) == [
        "/greetUser/x-vendor",
        "/greetUser/x-toolbind-retry",
        "/greetUser/x-requires-approval",
        "/greetUser/properties/userName/x-internal",
        "/greetUser/properties/_output/properties/greeting/x-unit",
        "/greetUser/$defs/Address/x-table",
    ]


def test_the_composed_schema_carries_no_extension(spec: Path) -> None:
    composed = composed_schema(spec)
    assert _keyword_extensions(composed) == []
    text = json.dumps(composed)
    assert '"x-trace-id"' in text  # the parameter of that name stays
    assert '"city"' in text and '"greeting"' in text


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_no_export_carries_an_extension(spec: Path, fmt: Any) -> None:
    value, _ = provider_export(spec, fmt)
    assert _keyword_extensions(value) == []
    assert '"x-trace-id"' in json.dumps(value)


def test_dropped_extensions_are_reported_once_located(spec: Path, tmp_path: Path) -> None:
    diagnostics = compile_to_directory([spec], tmp_path / "out").diagnostics
    notes = [d for d in diagnostics if "extension key" in d.found]
    assert len(notes) == 1, [d.render() for d in diagnostics]
    note = notes[0]
    assert note.severity == "note"
    assert str(note.loc).startswith(f"{spec}#/greetUser/")
    # toolbind's own extensions are read, not dropped in silence: they are not in the note
    assert "(x-internal, x-table, x-unit, x-vendor)" in note.found
    assert "4 extension key(s)" in note.found


def test_a_meta_field_beside_properties_is_an_error(tmp_path: Path) -> None:
    """``_output`` at a tool's root is read by nothing: it would reach a model as an unknown
    keyword while the tool silently has no output schema."""
    bad = {
        "t": {
            "type": "object",
            "properties": {"_tool": {"const": "t"}, "q": {"type": "string"}},
            "_output": {"type": "object"},
        }
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        compile_to_directory([path], tmp_path / "out")
    rendered = [d.render() for d in caught.value.diagnostics]
    assert any(
        r.startswith(f"{path}#/t/_output: error: meta field '_output' beside 'properties'")
        for r in rendered
    ), rendered
