"""Testing layer: the public functions of ``toolbind.testing`` (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from toolbind.runtime import ToolBinding

from ._checks import PartResult, RunSettings, run_activity, run_model, run_tool_models
from ._contract import Contract, ContractError, contract_for, contracts_of
from ._errors import ContractViolation
from ._strategies import invalid_instances, json_instances

__all__ = [
    "ContractError",
    "ContractViolation",
    "check_activity",
    "check_contract",
    "check_rejects_invalid",
    "check_roundtrip",
    "contract_schema",
    "invalid_instances_for",
    "strategies_for",
]

Target = ToolBinding | type[BaseModel] | Mapping[str, Any] | bool


def contract_schema(
    target: Target, *, schema: Mapping[str, Any] | bool | None = None
) -> Mapping[str, Any] | bool:
    """The JSON Schema the checks hold ``target`` to (same ``target`` as ``strategies_for``).

    For a Call model that is the tool's composed call schema with ``_activity`` any string and
    ``_output`` allowed (the model serves every Activity registration); for an Output model, the
    output schema (``{}`` when the spec declares none); ``$defs`` included.
    """
    return contract_for(target, schema).schema


def strategies_for(
    target: Target, *, schema: Mapping[str, Any] | bool | None = None
) -> st.SearchStrategy[Any]:
    """Valid JSON instances of a model's schema (what its ``model_validate`` must accept).

    Args:
        target: a ``ToolBinding`` (its Call schema), a generated Call or Output model class (the
            schema its ``ToolBinding`` states), any pydantic model class with ``schema`` (e.g.
            one from ``model_from_schema``) or, last resort, without it (pydantic's own
            ``model_json_schema``, which misses checks toolbind adds), or a JSON Schema.
        schema: the JSON Schema ``target`` was made from, when it has no ``ToolBinding``.

    Raises:
        ContractError: ``target`` is none of those, or the schema is invalid.
    """
    return json_instances(contract_for(target, schema).schema)


def invalid_instances_for(
    target: Target, *, schema: Mapping[str, Any] | bool | None = None
) -> st.SearchStrategy[Any]:
    """JSON instances the schema rejects: valid ones mutated (a required key dropped, another
    type, a bound/length/enum/const missed, an extra or null property, …), kept only when the
    reference validator (jsonschema, the schema's dialect) rejects them. Same ``target`` as
    ``strategies_for``; a schema every value satisfies has none (hypothesis reports it).
    """
    return invalid_instances(contract_for(target, schema))


def _contracts(target: Target, schema: Mapping[str, Any] | bool | None) -> list[Contract]:
    if isinstance(target, ToolBinding) and schema is None:
        # without an output schema the Output model is any JSON value: nothing tool-specific
        call, output = contracts_of(target)
        return [call] if target.output_schema is None else [call, output]
    contract = contract_for(target, schema)
    if contract.model is None:
        raise ContractError("a JSON Schema alone has no model to check: pass the model class")
    return [contract]


def _finish(results: list[PartResult]) -> int:
    for result in results:
        if result.failure is not None:
            raise result.failure
    return sum(r.examples + r.invalid for r in results)


def check_roundtrip(
    target: ToolBinding | type[BaseModel],
    *,
    schema: Mapping[str, Any] | bool | None = None,
    max_examples: int | None = None,
    seed: int | None = None,
) -> int:
    """Valid instances validate in ``model_validate`` and ``model_validate_json`` and dump back
    (``mode="json", by_alias=True, exclude_unset=True``) equal to the input.

    A ``ToolBinding`` checks its Call and its Output model (unless the spec declares no output
    schema: then the Output model is any JSON value); a model class checks itself (see
    ``strategies_for`` for where its schema comes from).

    Returns:
        The number of instances checked.

    Raises:
        ContractViolation: with the shrunk counterexample.
    """
    how = RunSettings(max_examples, seed)
    return _finish([run_model(c, how, invalid=False) for c in _contracts(target, schema)])


def check_rejects_invalid(
    target: ToolBinding | type[BaseModel],
    *,
    schema: Mapping[str, Any] | bool | None = None,
    max_examples: int | None = None,
    seed: int | None = None,
) -> int:
    """Instances the reference validator rejects (mutations of valid ones) are rejected by the
    model in both validation modes. Same ``target`` as ``check_roundtrip``.

    Returns:
        The number of invalid instances checked.

    Raises:
        ContractViolation: with the shrunk counterexample and the keyword it breaks.
    """
    how = RunSettings(max_examples, seed)
    return _finish([run_model(c, how, valid=False) for c in _contracts(target, schema)])


def check_activity(
    binding: ToolBinding,
    fn: Callable[..., Any],
    *,
    max_examples: int | None = None,
    seed: int | None = None,
) -> int:
    """An Activity honours its tool's contract: its signature takes the Call model (a class of
    the same name and schema from another copy of the generated package counts), every generated
    Call is accepted — sync or async — and every value it returns (a model, or plain JSON) is
    valid against the Output model and the output's JSON Schema.

    Returns:
        The number of Calls made.

    Raises:
        ContractViolation: naming the Call (shrunk), what came back, and the keyword it breaks.
    """
    return _finish([run_activity(binding, fn, RunSettings(max_examples, seed))])


def check_contract(
    binding: ToolBinding,
    activity: Callable[..., Any] | None = None,
    *,
    max_examples: int | None = None,
    seed: int | None = None,
) -> int:
    """Everything ``toolbind test`` checks for one tool, in one call: for the Call and the Output
    model, each generated valid instance round-trips and a mutation of it the schema rejects is
    rejected (sharing the generated instances); then ``activity``, when given, as
    ``check_activity`` does.

    Returns:
        The number of instances (valid, invalid, and Calls made) checked.

    Raises:
        ContractViolation: the first broken property, with its shrunk counterexample.
    """
    how = RunSettings(max_examples, seed)
    results = list(run_tool_models(binding, how))
    if activity is not None:
        results.append(run_activity(binding, activity, how))
    return _finish(results)
