"""Runtime layer: guardrails — functions that may reject a Call before it runs, or its result
before the model sees it (the OpenAI Agents SDK's input/output guardrails,
per tool as pydantic-ai's tool ``prepare``). Imports ``_result`` and the standard library.

A guardrail is a function (sync or async) given per agent (every tool) or per tool:

* input: ``fn(call)`` — the validated Call, its variable references resolved — before the call
  runs, is parked for approval or is delegated;
* output: ``fn(call, result)`` — the ``ToolResult`` of a successful call — before it is written
  at its ``_outputPath`` and shown to the model.

It returns None or True to let the call (or result) through, a string (the reason) or False to
reject it. A rejection is the Call's failed result, ``"rejected by guardrail <name>: <reason>"``
(``metadata``: ``guardrail``, ``stage``), fed back to the model like any failure; the Activity of
a call rejected on input never runs, a result rejected on output never reaches the model. A
guardrail that raises rejects too (fail closed), with the exception as its reason.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

from ._result import ToolResult

__all__ = ["ALL_TOOLS", "GuardrailSpec", "Guardrails"]

ALL_TOOLS = "*"
"""The key of a guardrail mapping whose functions apply to every tool."""

Guardrail = Callable[..., Any]
GuardrailSpec = Sequence[Guardrail] | Mapping[str, Sequence[Guardrail] | Guardrail] | None
"""What ``Agent(input_guardrails=..., output_guardrails=...)`` takes: functions for every tool,
or a mapping tool name → function(s) (``"*"``: every tool)."""

_Result = ToolResult[Any]


def _by_tool(spec: GuardrailSpec, where: str) -> dict[str, tuple[Guardrail, ...]]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        out: dict[str, tuple[Guardrail, ...]] = {}
        for name, fns in cast("Mapping[str, Any]", spec).items():
            listed: tuple[Any, ...] = (fns,) if callable(fns) else tuple(fns)
            out[name] = listed
    else:
        out = {ALL_TOOLS: tuple(spec)}
    for name, fns in out.items():
        for fn in fns:
            if not callable(fn):
                from .errors import UsageError

                raise UsageError(
                    f"Agent({where}=...): {fn!r} for {name!r} is not a function "
                    "(expected fn(call) for input, fn(call, result) for output)"
                )
    return out


def _name(fn: Guardrail) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


async def _verdict(fn: Guardrail, *args: Any) -> str | None:
    """None when ``fn`` lets it through, else the reason it gives."""
    try:
        if inspect.iscoroutinefunction(fn):
            answer = await fn(*args)
        else:
            answer = await asyncio.to_thread(fn, *args)
            if inspect.isawaitable(answer):
                answer = await answer
    except Exception as exc:  # fail closed: a guardrail that breaks lets nothing through
        return f"{type(exc).__name__}: {exc}"
    if answer is None or answer is True:
        return None
    if answer is False:
        return "rejected"
    return str(answer)


class Guardrails:
    """An Agent's input and output guardrails (``Agent(input_guardrails=..., ...)``)."""

    def __init__(self, input: GuardrailSpec = None, output: GuardrailSpec = None) -> None:
        self.input = _by_tool(input, "input_guardrails")
        self.output = _by_tool(output, "output_guardrails")

    def __bool__(self) -> bool:
        return bool(self.input or self.output)

    @staticmethod
    def _for(table: Mapping[str, tuple[Guardrail, ...]], tool: str) -> tuple[Guardrail, ...]:
        return (*table.get(ALL_TOOLS, ()), *table.get(tool, ()))

    async def _first_rejection(
        self, stage: Literal["input", "output"], tool: str, *args: Any
    ) -> ToolResult[Any] | None:
        for fn in self._for(self.input if stage == "input" else self.output, tool):
            reason = await _verdict(fn, *args)
            if reason is not None:
                name = _name(fn)
                return _Result.fail(
                    f"rejected by guardrail {name}: {reason}",
                    execution="guardrail",
                    guardrail=name,
                    stage=stage,
                )
        return None

    async def check_input(self, tool: str, call: Any) -> ToolResult[Any] | None:
        """The failed result of a call an input guardrail rejects, or None."""
        if not self.input:
            return None
        return await self._first_rejection("input", tool, call)

    async def check_output(self, tool: str, call: Any, result: ToolResult[Any]) -> ToolResult[Any]:
        """``result``, or the failed result an output guardrail replaces it with (the data is
        withheld from the model)."""
        if not self.output or not result.success:
            return result
        rejected = await self._first_rejection("output", tool, call, result)
        return result if rejected is None else rejected
