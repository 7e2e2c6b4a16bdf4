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

It also makes the ``ActivityContext`` an Activity gets as a second argument when its signature
takes one (``def fn(call, ctx)``: AgentB's ``execute(input, agentContext)``, pydantic-ai's
``RunContext``): the run, step and call ids, the ``deps`` given to ``run(..., deps=...)``, the
run's context (read in the call's instance) and a progress reporter — only the part the call's
``_scopes`` allow when it has them (related/015; a delegate's sub-request is given the same part).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ValidationError

from ._binding import ToolBinding
from ._context import (
    MISSING,
    UPDATE_HEADER,
    Context,
    Reference,
    Variable,
    is_reference,
    parse_expression,
    scoped_context,
)
from ._result import ToolResult
from .contract import META_FIELDS
from .errors import InvalidReference, UnresolvedReference

__all__ = [
    "ActivityContext",
    "RunContext",
    "call_meta",
    "call_scopes",
    "scoped_context",
    "takes_context",
]

DepsT = TypeVar("DepsT")

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


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityContext(Generic[DepsT]):
    """What an Activity that takes a second argument is given (``def fn(call, ctx)``).

    The widest of the runtime's contexts: the run's ``Context`` (its data, state and input
    messages) is the part of it the call may see; ``CallContext`` (``current_call()``) is the
    narrow view any Activity has, this one included.

    Attributes:
        run_id: the run's id (``RunResult.run_id``).
        step: the step's index in the run.
        call_id: the call's id (``CallRecord.call_id``).
        tool: the tool's name.
        deps: what was given to ``Agent.run(..., deps=...)`` (None when nothing was); annotate
            it as ``ActivityContext[MyDeps]`` and pyright checks its use.
        instance: the call's ``_instance`` (related/013), or None.
        context: the run's ``Context`` (``run(..., context=...)``), or None.
    """

    run_id: str
    step: int
    call_id: str
    tool: str
    deps: DepsT
    instance: str | None = None
    context: Context | None = None
    reporter: Callable[[Any], None] | None = field(default=None, repr=False)

    def progress(self, item: Any) -> None:
        """Report progress: a ``tool-result`` event (``preliminary``), as an async-generator
        Activity's yields are, recorded in ``CallRecord.progress``."""
        if self.reporter is not None:
            self.reporter(item)

    def get(self, ref: str | Reference, default: Any = None) -> Any:
        """A value of the run's context, in the call's instance (``ctx.get("†state.user")``)."""
        if self.context is None:
            return default
        found = self.context.lookup(ref, self.instance)
        return default if found is MISSING else found

    @property
    def state(self) -> Variable:
        """``†state`` in the call's instance: ``ctx.state.user.name.get()``."""
        return Variable(self.context or Context(), Reference("state"), self.instance)


_TAKES: dict[Any, bool] = {}


def takes_context(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a second, required positional argument (the ``ActivityContext``).

    One with a default is not asking for it: ``def act(call, tool=tool)`` is the usual way to
    bind a loop variable in a closure, and gets no context."""
    try:
        known = _TAKES.get(fn)
    except TypeError:  # unhashable callable
        known = None
    if known is not None:
        return known
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    takes = len(positional) >= 2 and positional[1].default is inspect.Parameter.empty
    try:
        if len(_TAKES) > 4096:
            _TAKES.clear()
        _TAKES[fn] = takes
    except TypeError:
        pass
    return takes


@dataclass(slots=True)
class RunContext:
    """A run's context (None when the run has none), its deps, and what changed in the context
    since the model last saw it."""

    context: Context | None = None
    deps: Any = None
    changed: list[tuple[str, str | None]] = field(default_factory=list[tuple[str, str | None]])

    @property
    def instances(self) -> tuple[str, ...]:
        return self.context.instances if self.context is not None else ()

    def for_call(
        self,
        *,
        run_id: str,
        step: int,
        call_id: str,
        tool: str,
        instance: str | None,
        reporter: Callable[[Any], None],
        scopes: Sequence[Any] | None = None,
    ) -> ActivityContext[Any]:
        """The ``ActivityContext`` of one call; with ``scopes`` (the call's ``_scopes``,
        related/015) its context is only what they allow, as its instance sees it."""
        context = self.context
        if scopes is not None:
            context = scoped_context(self.context, scopes, instance)
        return ActivityContext(
            run_id=run_id,
            step=step,
            call_id=call_id,
            tool=tool,
            deps=self.deps,
            instance=instance,
            context=context,
            reporter=reporter,
        )

    def render(self) -> str | None:
        """The whole context for the first request, or None when it holds nothing."""
        return self.context.render() if self.context is not None and len(self.context) else None

    def updates(self) -> str | None:
        """The identities written since the last call, as the model reads them, or None."""
        if not self.changed or self.context is None:
            return None
        changed, self.changed = list(dict.fromkeys(self.changed)), []
        return self.context.render(changed, header=UPDATE_HEADER)

    def depends(self, call: BaseModel) -> bool:
        """Whether ``call`` reads the context (its parameters hold references): it runs after the
        calls before it in its answer, whose outputs it may read (008's chaining)."""
        if self.context is None:
            return False
        dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return _has_refs({k: v for k, v in dumped.items() if k not in META_FIELDS})

    def prepare(self, call: BaseModel, binding: ToolBinding | None) -> tuple[BaseModel, str | None]:
        """``call`` with its references resolved (validated again), or the reason it cannot run."""
        dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if self.context is None:
            return call, None
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
        if self.context is None:
            return result
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


# -- scopes (015) ---------------------------------------------------------------------------------


def call_scopes(dumped: Mapping[str, Any], binding: ToolBinding | None) -> list[Any] | None:
    """The call's ``_scopes`` (its own, or the tool's ``const``/``default``), or None."""
    scopes = call_meta(dumped, binding, "_scopes")
    return list(cast("list[Any]", scopes)) if isinstance(scopes, list) else None
