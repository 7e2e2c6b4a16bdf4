"""A ``pattern`` with an ES2025 modifier group (found on LiteLLM's proxy, whose served spec of
977 operations has ``^(?i:data:image/...;base64,...|https?://\\S+)$`` for its image inputs, as
pydantic writes Python's scoped flags, which ECMA-262 now shares). ``(?i:`` was refused as "not
ECMA-262 syntax", an error: the whole spec did not compile. Now the group is read with its
ECMA-262 meaning (``i``, and ``m``/``s`` where ``^``, ``$`` and ``.`` are), the Call model holds
the pattern, and a call goes out; Python's global flags ``(?i)`` are still refused. Checked on
a real server (a raw ASGI app, uvicorn on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from tests._servers import echo_json, serve_asgi
from tests.conftest import CompileSpec
from toolbind.compiler import SpecError, generate_tree
from toolbind.runtime.http import HttpClient

SPEC = """\
openapi: 3.1.0
info: {title: modifier groups, version: '1'}
paths:
  /judge:
    post:
      operationId: judge
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [images]
              properties:
                images:
                  type: array
                  items:
                    type: string
                    pattern: '^(?i:data:image/[^;,\\s]+;base64,[A-Za-z0-9+/_-]+={0,2}|https?://\\S+)$'
                note: {type: string, pattern: '(?m:^ok$)'}
      responses:
        '200': {description: what was judged, content: {application/json: {schema: {type: object}}}}
"""


@pytest.fixture
def pkg(compile_spec: CompileSpec) -> ModuleType:
    return compile_spec(SPEC, suffix=".yaml")


def test_a_modifier_group_compiles_and_a_call_goes_out(pkg: ModuleType) -> None:
    images = ["DATA:Image/PNG;base64,AAA=", "HTTPS://example.com/a.png"]
    call = pkg.CallAdapter.validate_python({"_tool": "judge", "images": images, "note": "x\nok"})
    with serve_asgi(echo_json) as url, HttpClient(pkg.API, base_url=url) as client:
        result = pkg.HttpActivities(client).judge(call)
    assert result.success, result.error
    assert result.data.model_dump(mode="json") == {"images": images, "note": "x\nok"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("images", ["ftp://example.com/a.png"]), ("note", "x ok")],  # (no m: "ok" on no line)
)
def test_what_the_pattern_refuses_is_refused(pkg: ModuleType, field: str, value: Any) -> None:
    args = {"images": ["https://x"], field: value}
    with pytest.raises(ValidationError, match="pattern"):
        pkg.CallAdapter.validate_python({"_tool": "judge", **args})


def test_python_global_flags_are_still_a_located_error(tmp_path: Path) -> None:
    """Flags opening a pattern are read as a modifier group over the rest, with a warning
    (tests/compiler/test_silence.py); anywhere else they have no ECMA-262 reading."""
    spec = tmp_path / "global_flags.yaml"
    spec.write_text(SPEC.replace("'(?m:^ok$)'", "'ok(?i)'"), encoding="utf-8")
    with pytest.raises(SpecError, match=r"properties/note/pattern: error: pattern 'ok\(\?i\)'"):
        generate_tree([spec])
