"""The rules of a parsed YAML document (``toolbind.compiler.normalise.yaml_keys``): the rule on
its fragment gives the canonical document and its located warning, and a minimal spec with the
quirk, compiled end to end, gives the tool and the warning the loader always gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolbind.compiler.diagnostics import Diagnostics
from toolbind.compiler.frontends import read_spec
from toolbind.compiler.ir import SourceLocation
from toolbind.compiler.normalise import table
from toolbind.compiler.normalise.yaml_keys import NUMBER_KEYS
from toolbind.yaml12 import FloatKey

TOP = SourceLocation(file="api.yaml")


def _float_key(text: str) -> FloatKey:
    """The key YAML's loader makes of a plain ``1.10:`` (it keeps the text written)."""
    key = FloatKey(text)
    key.text = text
    return key


def test_number_keys_rule() -> None:
    shared: dict[Any, Any] = {_float_key("2.0"): "shared"}
    responses: dict[Any, Any] = {200: {"description": "ok"}, "default": {"description": "no"}}
    document: dict[str, Any] = {
        "paths": {"/a~b": {"get": {"responses": responses}}},
        "tags": [{"name": "t", "x-v": {_float_key("1.10"): "ten", "a": shared}}, shared],
        "both": {200: "a", "200": "b"},  # (no one meaning: kept, for the loader to refuse)
    }
    fixed = NUMBER_KEYS.apply(document, TOP, None)
    assert fixed is not None
    value = fixed.value
    assert list(value["paths"]["/a~b"]["get"]["responses"]) == ["200", "default"]
    assert list(value["tags"][0]["x-v"]) == ["1.10", "a"]  # as written (not 1.1)
    assert list(value["tags"][1]) == ["2.0"]
    assert value["tags"][0]["x-v"]["a"] is value["tags"][1]  # an alias stays one map
    assert list(value["both"]) == [200, "200"]
    # the document as parsed is left as it was
    assert list(responses) == [200, "default"] and 200 in document["both"]
    (warning,) = fixed.diagnostics
    assert warning.severity == "warning"
    assert warning.loc.pointer == "/paths/~1a~0b/get/responses/200"
    assert warning.found == (
        "an unquoted integer map key, read as its text '200' (the first of 3 in this file)"
    )
    assert warning.hint == "quote the key: '200': (OpenAPI asks for response codes in quotes)"
    assert NUMBER_KEYS.apply({"paths": {"/a": [1, {"k": 2}]}}, TOP, None) is None
    assert ("yaml", "yaml-number-keys") in {(family, name) for family, name, *_ in table()}


def test_number_keys_end_to_end(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(
        "openapi: 3.1.0\n"
        "info: {title: t, version: '1'}\n"
        "paths:\n"
        "  /pets:\n"
        "    get:\n"
        "      operationId: listPets\n"
        "      x-changed: {1.8: joined, 1.10: enumerated}\n"
        "      responses:\n"
        "        200: {description: ok}\n",
        encoding="utf-8",
    )
    diags = Diagnostics()
    package = read_spec(spec, "api.yaml", diags)
    assert package is not None and [t.name for t in package.tools] == ["listPets"]
    assert [d.render() for d in diags.items if d.severity == "warning"] == [
        "api.yaml#/paths/~1pets/get/x-changed/1.8: warning: an unquoted number map key, read as "
        "its text '1.8' (the first of 3 in this file) — string keys (JSON object names are "
        "always strings) (hint: quote the key: '1.8':)"
    ]
