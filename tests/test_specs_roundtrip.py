"""The committed packages of specs/ (generated/) round-trip every instance their schemas allow.

Call models against the tool's composed call schema, Output models against the output schema;
100 examples per schema in the ``ci`` profile, 1000 in ``deep``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from toolbind.compiler import load_package
from toolbind.runtime import ToolBinding, tool_schema
from toolbind.runtime.types import json_equal

from .conftest import REPO, instances_of

GENERATED = REPO / "generated"
PACKAGES = sorted(json.loads((GENERATED / "toolbind.json").read_text(encoding="utf-8"))["packages"])
EXAMPLES = max(100, settings().max_examples)


def spec_tools() -> list[ToolBinding]:
    return [tool for name in PACKAGES for tool in load_package(GENERATED, name).TOOLS]


def with_defs(schema: dict[str, Any], tool: ToolBinding) -> dict[str, Any]:
    return {**schema, "$defs": dict(tool.defs)} if tool.defs else schema


def round_trips(model: Any, instance: Any) -> None:
    parsed = model.model_validate(instance)
    assert json_equal(parsed.model_dump(mode="json", by_alias=True, exclude_unset=True), instance)
    parsed = model.model_validate_json(json.dumps(instance))
    assert json_equal(parsed.model_dump(mode="json", by_alias=True, exclude_unset=True), instance)


def test_specs_hold_the_seed_mcp_and_openapi_tools() -> None:
    names = {t.name for t in spec_tools()}
    assert {"sentimentAnalysis", "weatherCheck", "sendEmail", "greetUser"} <= names
    assert {"findPets", "addPet", "find_pet_by_id", "deletePet"} <= names  # specs/petstore.yaml
    assert len(names) == 4 + 117 + 4


@pytest.mark.parametrize("tool", spec_tools(), ids=lambda t: t.name)
def test_call_and_output_models_round_trip(tool: ToolBinding) -> None:
    @settings(max_examples=EXAMPLES)
    @given(instances_of(with_defs(tool_schema(tool), tool)))
    def calls(instance: Any) -> None:
        round_trips(tool.call_model, instance)

    calls()
    if tool.output_schema is not None:

        @settings(max_examples=EXAMPLES)
        @given(instances_of(with_defs(dict(tool.output_schema), tool)))
        def outputs(instance: Any) -> None:
            round_trips(tool.output_model, instance)

        outputs()
