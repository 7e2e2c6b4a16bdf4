"""Testing layer: what a model promises — its JSON Schema and the reference validator for it.

Imports ``toolbind.runtime``, pydantic and jsonschema; never ``toolbind.compiler``.

A ``Contract`` pairs one pydantic model with the JSON Schema it must accept exactly:

* a tool's **Call model** ↔ the tool's composed call schema (``toolbind.contract.tool_schema``)
  with ``_activity`` widened to any string and ``_output`` always allowed — the Call model serves
  every Activity registration, while the composed schema the LLM sees pins ``_activity`` to one
  of them at run time;
  ``_tool`` is required there, yet the Call model fills it in when absent (so
  ``GreetUserCall(userName="Ann")`` works and always dumps ``_tool``): dropping ``_tool`` is the
  one invalid instance a Call model accepts by design (``Contract.filled_in``);
* a tool's **Output model** ↔ its output schema (any JSON value when the spec declares none);
* any other model ↔ the schema given with it, else pydantic's own ``model_json_schema`` (a last
  resort: it omits the checks toolbind's runtime validators add, so it promises less).

Schemas are checked with the ``jsonschema`` validator of their dialect (``$schema``; draft
2020-12 when absent, as toolbind exports it), with ``format`` as an annotation.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators
from pydantic import BaseModel

from toolbind.contract import reachable_defs, tool_schema
from toolbind.runtime import ToolBinding
from toolbind.runtime.errors import UsageError

Side = Literal["Call", "Output", "Model"]
_DEFS = "#/$defs/"


class ContractError(UsageError, ValueError):
    """The thing to test is not usable: not a model, binding or schema, or an invalid schema."""


@dataclass(frozen=True, slots=True)
class Contract:
    """One model and the JSON Schema it must accept exactly."""

    side: Side
    model: type[BaseModel] | None
    schema: Mapping[str, Any] | bool
    tool: str | None = None
    filled_in: tuple[str, ...] = ()
    """Required top-level properties the model fills in when absent (never dropped by mutations)."""

    @property
    def label(self) -> str:
        """``greetUser Call (GreetUserCall)``-style name for reports."""
        parts = [p for p in (self.tool, self.side if self.side != "Model" else None) if p]
        if self.model is not None:
            parts.append(f"({self.model.__name__})" if parts else self.model.__name__)
        return " ".join(parts) or "schema"

    def validator(self) -> jsonschema.protocols.Validator:
        """The reference validator for the schema (its own dialect; 2020-12 by default)."""
        return _validator(self.schema)


def call_schema(binding: ToolBinding) -> dict[str, Any]:
    """The JSON Schema a tool's Call model implements (see the module docstring)."""
    schema = tool_schema(binding)
    properties: dict[str, Any] = dict(schema["properties"])
    properties["_activity"] = {"type": "string"}
    properties["_output"] = dict(binding.output_schema) if binding.output_schema is not None else {}
    ordered = {k: properties.pop(k) for k in ("_tool", "_activity", "_reasoningForCall", "_output")}
    schema["properties"] = {**ordered, **properties}
    return with_defs(schema, binding)


def output_schema(binding: ToolBinding) -> dict[str, Any]:
    """The JSON Schema a tool's Output model implements (``{}``: any JSON, when none is declared)."""
    base = dict(binding.output_schema) if binding.output_schema is not None else {}
    return with_defs(base, binding)


def with_defs(schema: dict[str, Any], binding: ToolBinding) -> dict[str, Any]:
    """``schema`` with the package's shared definitions it reaches (transitively) as ``$defs``.

    Only those: a large spec's package shares a thousand definitions, and checking and
    canonicalising all of them for every tool cost seconds per tool before its first Call. A
    reference into a definition (``#/$defs/A/properties/x``) keeps them all, as before."""
    if not binding.defs:
        return schema
    every = {**dict(binding.defs), **schema.get("$defs", {})}
    kept = reachable_defs({k: v for k, v in schema.items() if k != "$defs"}, every)
    if not _resolved(schema, kept):
        kept = every
    return {**schema, "$defs": kept} if kept else {k: v for k, v in schema.items() if k != "$defs"}


def _resolved(schema: dict[str, Any], kept: Mapping[str, Any]) -> bool:
    """Whether every ``#/$defs/…`` reference of ``schema`` and ``kept`` names a kept definition."""
    todo: list[Any] = [schema, list(kept.values())]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            items = cast("dict[str, Any]", node)
            ref = items.get("$ref")
            if isinstance(ref, str) and ref.startswith(_DEFS):
                head = ref[len(_DEFS) :].split("/")[0].replace("~1", "/").replace("~0", "~")
                if head not in kept:
                    return False
            todo.extend(cast("Any", v) for v in items.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            todo.extend(cast("list[Any]", node))
    return True


def binding_of(model: type[BaseModel]) -> tuple[ToolBinding, Side] | None:
    """The ToolBinding whose Call or Output model is ``model``, from its generated package."""
    module = model.__module__
    for name in (module.rpartition(".")[0], module):
        package = sys.modules.get(name) if name else None
        tools: object = getattr(package, "TOOLS", None)
        if not isinstance(tools, tuple):
            continue
        for item in cast("tuple[object, ...]", tools):
            if isinstance(item, ToolBinding):
                if item.call_model is model:
                    return item, "Call"
                if item.output_model is model:
                    return item, "Output"
    return None


def contracts_of(binding: ToolBinding) -> tuple[Contract, Contract]:
    """The Call and the Output contract of a tool."""
    return (
        Contract("Call", binding.call_model, call_schema(binding), binding.name, ("_tool",)),
        Contract("Output", binding.output_model, output_schema(binding), binding.name),
    )


def contract_for(target: object, schema: Mapping[str, Any] | bool | None = None) -> Contract:
    """The contract of a ToolBinding (its Call side), a model class, or a bare JSON Schema.

    Raises:
        ContractError: ``target`` is none of those, or the schema is not a valid JSON Schema.
    """
    if isinstance(target, ToolBinding):
        contract = contracts_of(target)[0]
    elif isinstance(target, type) and issubclass(target, BaseModel):
        model: type[BaseModel] = target
        found = binding_of(model) if schema is None else None
        if schema is not None:
            contract = Contract("Model", model, schema)
        elif found is not None:
            binding, side = found
            contract = contracts_of(binding)[0 if side == "Call" else 1]
        else:
            contract = Contract("Model", model, model.model_json_schema(by_alias=True))
    elif isinstance(target, (Mapping, bool)):
        contract = Contract("Model", None, cast("Mapping[str, Any] | bool", target))
    else:
        raise ContractError(
            "expected a ToolBinding, a pydantic model class or a JSON Schema, "
            f"got {type(cast('object', target)).__name__}"
        )
    _validator(contract.schema)  # an invalid schema is reported now, not mid-run
    return contract


def _validator(schema: Mapping[str, Any] | bool) -> jsonschema.protocols.Validator:
    value: Any = dict(schema) if isinstance(schema, Mapping) else schema
    cls: Any = jsonschema.validators.validator_for(value, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(value)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/" + "/".join(_escape(p) for p in exc.absolute_path) if exc.absolute_path else ""
        raise ContractError(f"not a valid JSON Schema at #{where}: {exc.message}") from None
    return cast("jsonschema.protocols.Validator", cls(value))


def _escape(part: object) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(path: object) -> str:
    """An RFC 6901 JSON pointer for a sequence of keys and indices (``""`` for the root)."""
    parts = cast("list[object]", list(cast("Any", path)))
    return "".join("/" + _escape(p) for p in parts)
