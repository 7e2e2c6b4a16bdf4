"""Operations whose descriptions are the same reach the model told apart.

The defect (a real spec with "Validate Template" on two paths): both tools read the same to the
model, which had nothing but their names to choose by. Each such description now ends with its
operation's method and path; a description no other operation has is left as written.
"""

from __future__ import annotations

from types import ModuleType

from tests.conftest import CompileSpec
from toolbind.runtime import compose

SPEC = """\
openapi: 3.0.3
info: {title: templates, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /templates/validate:
    post:
      operationId: validateTemplate
      summary: Validate Template
      responses: {'204': {description: valid}}
  /v2/templates/{id}/validate:
    post:
      operationId: validateTemplateV2
      summary: Validate Template
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {'204': {description: valid}}
  /templates:
    get:
      operationId: listTemplates
      summary: List Templates
      responses: {'204': {description: none}}
"""


def _descriptions(pkg: ModuleType) -> dict[str, str | None]:
    return {t.name: t.description for t in pkg.TOOLS}


def test_tools_with_the_same_description_are_told_apart_by_method_and_path(
    compile_spec: CompileSpec,
) -> None:
    pkg = compile_spec(SPEC, suffix=".yaml")
    assert _descriptions(pkg) == {
        "validateTemplate": "Validate Template\n\nPOST /templates/validate",
        "validateTemplateV2": "Validate Template\n\nPOST /v2/templates/{id}/validate",
        "listTemplates": "List Templates",  # no other has it: as written
    }
    composed = compose(pkg.TOOLS)  # what the model reads
    items = composed["properties"]["calls"]["items"]["anyOf"]
    read = {i["properties"]["_tool"]["const"]: i.get("description") for i in items}
    assert read == _descriptions(pkg)
