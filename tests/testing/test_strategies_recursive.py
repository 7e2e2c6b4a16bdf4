"""Strategies for a spec whose component is written as a JSON Schema of its own: draft 2019-09's
``$recursiveAnchor: true`` at its top and ``$recursiveRef: "#"`` for itself (OpenAI's
``CompoundFilter``). Every tool's Call and Output strategies build and draw instances its
models accept, nested ones included."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from toolbind.runtime import ToolBinding
from toolbind.testing import contract_schema, strategies_for
from toolbind.testing._runner import compile_specs

_ALL = (HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large)
SPEC = Path(__file__).parent / "specs" / "recursive_filter.yaml"


@pytest.fixture(scope="module")
def tool() -> Iterator[ToolBinding]:
    compiled = compile_specs([SPEC])
    try:
        (found,) = [t for _, t in compiled.tools]
        yield found
    finally:
        compiled.close()


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list):
        return max((_depth(v) for v in value), default=0)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return 0


def test_the_call_strategy_builds_and_draws_nested_filters(tool: ToolBinding) -> None:
    depths: list[int] = []

    @settings(max_examples=30, database=None, deadline=None, suppress_health_check=_ALL)
    @given(strategies_for(tool))
    def drawn(instance: dict[str, Any]) -> None:
        tool.call_model.model_validate(instance)
        depths.append(_depth(instance.get("filter")))

    drawn()
    assert max(depths) >= 3  # a compound filter inside a compound filter was drawn


def test_the_output_strategy_builds(tool: ToolBinding) -> None:
    @settings(max_examples=20, database=None, deadline=None, suppress_health_check=_ALL)
    @given(strategies_for(tool.output_model))
    def drawn(instance: dict[str, Any]) -> None:
        tool.output_model.model_validate(instance)

    drawn()


def test_the_contract_schema_keeps_the_recursion_as_a_ref(tool: ToolBinding) -> None:
    schema = contract_schema(tool)
    assert isinstance(schema, Mapping)
    compound = schema["$defs"]["CompoundFilter"]
    assert "$recursiveAnchor" not in compound
    assert {"$ref": "#/$defs/CompoundFilter"} in compound["properties"]["filters"]["items"]["oneOf"]
