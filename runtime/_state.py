"""Runtime layer: the Agent's side of the context protocol — what a run does with its ``Context``.

Imports ``_context``, ``_binding``, ``_result``, ``errors`` and pydantic. The Agent's loop calls
three things (so the loop itself stays a few lines longer, wherever it lives):

* ``RunContext.prepare(call, binding)`` before a Call runs: its variable references (related/007)
  resolved in its instance (013), and the resolved Call validated again by its own model; a
  reference that names nothing, or a resolved value the tool's schema refuses, is the Call's
  failed result (010: "invalid Variable References" are fed back to the model);
* ``RunContext.record(call, binding, result)`` after it ran: its output appended at its
  ``_outputPath`` by its ``_outputMethod`` (008), in its instance, with ``_call`` and ``_date``;
* ``RunContext.updates()`` after a step: the changed identities' merged values, as the model
  reads them (the next request's context, 010).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from ._binding import ToolBinding
from ._context import Context, is_reference, parse_expression
from ._result import ToolResult
from .contract import META_FIELDS
from .errors import InvalidReference, UnresolvedReference

__all__ = ["RunContext", "call_meta"]

_Result = ToolResult[Any]


def call_meta(dumped: Mapping[str, Any], binding: ToolBinding | None, name: str) -> Any:
    """The value of the Call extension ``name`` for a dumped call: the call's own, else the
    ``const`` (a prescribed value, 008) or ``default`` its tool's schema gives, else None."""
    if name in dumped:
        return dumped[name]
    declared: Any = binding.extensions if binding is not None else None
    schema: Any = cast("Mapping[str, Any]", declared).get(name) if declared else None
    if isinstance(schema, Mapping):
        spec = cast("Mapping[str, Any]", schema)
        if "const" in spec:
            return spec["const"]
        return spec.get("default")
    return None


def _has_refs(value: Any) -> bool:
    if isinstance(value, str):
        return is_reference(value)
    if isinstance(value, list):
        return any(_has_refs(v) for v in cast("list[Any]", value))
    if isinstance(value, dict):
        return any(_has_refs(v) for v in cast("dict[str, Any]", value).values())
    return False


@dataclass(slots=True)
class RunContext:
    """A run's context and what changed in it since the model last saw it."""

    context: Context
    changed: list[tuple[str, str | None]] = field(default_factory=list[tuple[str, str | None]])

    @property
    def instances(self) -> tuple[str, ...]:
        return self.context.instances

    def render(self) -> str | None:
        """The whole context for the first request, or None when it holds nothing."""
        return self.context.render() if len(self.context) else None

    def updates(self) -> str | None:
        """The identities written since the last call, as the model reads them, or None."""
        if not self.changed:
            return None
        changed, self.changed = list(dict.fromkeys(self.changed)), []
        return self.context.render(changed, header="Context updated by the calls' outputs:")

    def depends(self, call: BaseModel) -> bool:
        """Whether ``call`` reads the context (its parameters hold references): it runs after the
        calls before it in its answer, whose outputs it may read (008's chaining)."""
        dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return _has_refs({k: v for k, v in dumped.items() if k not in META_FIELDS})

    def prepare(self, call: BaseModel, binding: ToolBinding | None) -> tuple[BaseModel, str | None]:
        """``call`` with its references resolved (validated again), or the reason it cannot run."""
        dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if call_meta(dumped, binding, "_delegate") is not None:
            return call, (
                "_delegate: delegated execution (related/014) is not supported by this runtime "
                "yet; call the tool without it"
            )
        instance = dumped.get("_instance")
        if instance is not None and instance not in self.context.instances:
            return call, f"_instance {instance!r} is none of the context's instances"
        params = {k: v for k, v in dumped.items() if k not in META_FIELDS}
        if not _has_refs(params):
            return call, None
        try:
            resolved = self.context.resolve_refs(params, instance)
        except (UnresolvedReference, InvalidReference) as exc:
            return call, f"variable reference: {exc}"
        meta = {k: v for k, v in dumped.items() if k in META_FIELDS}
        try:
            return type(call).model_validate({**meta, **resolved}), None
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()
            )
            return call, f"the values the references name do not fit the tool's schema: {problems}"

    def record(
        self, call: BaseModel, binding: ToolBinding | None, result: ToolResult[Any]
    ) -> ToolResult[Any]:
        """Append the call's output at its ``_outputPath`` (008); the result, with
        ``metadata["outputPath"]`` set when something was written (or a failed result when the
        path or method is invalid)."""
        dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        path = call_meta(dumped, binding, "_outputPath")
        if not isinstance(path, str):
            return result
        method = call_meta(dumped, binding, "_outputMethod") or "set"
        instance = dumped.get("_instance")
        try:
            op, _ = parse_expression(path)
        except InvalidReference as exc:
            return _Result.fail(f"_outputPath: {exc}", data=result.data, **result.metadata)
        if not result.success and op != "||":
            return result  # nothing to persist; the failure goes back to the model
        value = result.data if result.success else {"error": result.error}
        try:
            written = self.context.write(
                path,
                value,
                method=method,
                call=dumped,
                instance=instance,
                success=result.success,
            )
        except InvalidReference as exc:
            return _Result.fail(f"_outputPath: {exc}", data=result.data, **result.metadata)
        self.changed.extend((m.kind, m.instance) for m in written)
        where = " && ".join(str(m.reference) for m in written)
        return result.model_copy(update={"metadata": {**result.metadata, "outputPath": where}})
