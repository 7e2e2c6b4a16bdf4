"""The committed packages of specs/ (generated/) honour their schemas both ways.

For every tool, ``toolbind.testing.check_contract``: hypothesis-generated valid instances of the
Call and the Output schema validate in
``model_validate`` and ``model_validate_json`` and dump back equal; a mutation of each that the
reference validator (jsonschema, draft 2020-12) rejects is rejected by the model in both modes.
At least 100 examples of each per schema in the ``ci`` profile, 1000 in ``deep``
(``make test-deep``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import settings

from tests.conftest import REPO, sampled
from toolbind.compiler import load_package
from toolbind.runtime import ToolBinding
from toolbind.testing import check_contract

GENERATED = REPO / "generated"
PACKAGES = sorted(json.loads((GENERATED / "toolbind.json").read_text(encoding="utf-8"))["packages"])
EXAMPLES = max(100, settings().max_examples)


def spec_tools() -> list[ToolBinding]:
    return [tool for name in PACKAGES for tool in load_package(GENERATED, name).TOOLS]


def test_specs_hold_the_seed_mcp_and_openapi_tools() -> None:
    names = {t.name for t in spec_tools()}
    assert {"sentimentAnalysis", "weatherCheck", "sendEmail", "greetUser"} <= names
    assert {"findPets", "addPet", "find_pet_by_id", "deletePet"} <= names  # specs/petstore.yaml
    assert len(names) == 4 + 116 + 4  # github_mcp: 117 listed, ui_get for the server's UI only


# the seeds' and petstore's tools and one github_mcp tool in four in ``make test``; the rest in
# ``make test-slow``
@pytest.mark.parametrize(
    "tool",
    sampled(spec_tools(), 4, keep=lambda t: not t.source.startswith("specs/github_mcp")),
    ids=lambda t: t.name,
)
def test_models_accept_exactly_their_schemas(tool: ToolBinding) -> None:
    # valid + invalid instances for the Call model, and for the Output model when the spec gives
    # an output schema (without one it is RootModel[JsonValue], the same for every tool)
    parts = 1 if tool.output_schema is None else 2
    assert check_contract(tool, max_examples=EXAMPLES) >= 2 * parts * EXAMPLES
