"""``$recursiveRef`` in an OpenAPI schema is no keyword (3.0: draft-wright-00's subset; 3.1:
2020-12), so it is ignored with a located warning — never followed.

Followed as draft 2019-09 would, OpenAI's ``$recursiveRef: "#"`` led to the document root: the
whole 2.3 MB API description became a ``$defs`` entry of every tool that reached it (25 MB of
``tools.json``, 3.4× FastMCP's ``tools/list`` bytes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbind.compiler import compile_to_directory


def _spec(version: str) -> dict[str, Any]:
    return {
        "openapi": version,
        "info": {"title": "Filters", "version": "1"},
        "paths": {
            "/search": {
                "post": {
                    "operationId": "search",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/CompoundFilter"}
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {
            "schemas": {
                "CompoundFilter": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "enum": ["and", "or"]},
                        "filters": {
                            "type": "array",
                            "items": {"oneOf": [{"type": "string"}, {"$recursiveRef": "#"}]},
                        },
                    },
                }
            }
        },
    }


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
def test_recursive_ref_is_ignored_with_a_warning(version: str, tmp_path: Path) -> None:
    spec = tmp_path / "filters.json"
    spec.write_text(json.dumps(_spec(version)), encoding="utf-8")
    tree = compile_to_directory([spec], tmp_path / "out")
    warnings = [d.render() for d in tree.diagnostics if "$recursiveRef" in d.render()]
    pointer = "/components/schemas/CompoundFilter/properties/filters/items/oneOf/1/$recursiveRef"
    assert len(warnings) == 1 and warnings[0].startswith(f"{spec}#{pointer}: warning:"), warnings
    tools = (tmp_path / "out" / "filters" / "tools.json").read_text(encoding="utf-8")
    assert '"openapi"' not in tools and '"paths"' not in tools  # the document is not a schema
    assert json.loads(tools)["tools"][0]["name"] == "search"
