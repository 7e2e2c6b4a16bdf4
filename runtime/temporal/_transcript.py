"""toolbind.runtime.temporal, runtime layer (imports pydantic and the runtime's events, context,
result and errors): a run's transcript as JSON, the converters on both sides of the workflow.

A RunResult crosses the workflow boundary as JSON (``dump_result``) and is rebuilt by the client
(``load_result``), which raises the run's own error when the run failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from .._context import Context
from .._events import AgentEvent, CallRecord, RunResult, Step
from .._result import ToolResult
from ..errors import AgentError, LLMError, ResponseValidationError

_Result = ToolResult[Any]

EVENT_FIELDS = ("type", "run_id", "step", "call_id", "tool", "data", "visible")
_RECORD_FIELDS = ("call_id", "tool", "route", "arguments", "visible", "pending", "progress")


def event_dict(event: AgentEvent) -> dict[str, Any]:
    """An event as the run publishes it to its stream."""
    return {name: getattr(event, name) for name in EVENT_FIELDS}


def _record_dict(record: CallRecord) -> dict[str, Any]:
    fields = {name: getattr(record, name) for name in _RECORD_FIELDS}
    return {**fields, "result": record.result.model_dump(mode="json")}


def step_dict(step: Step) -> dict[str, Any]:
    """A step as JSON (in a RunResult, and in a failed run's steps)."""
    return {
        "index": step.index,
        "mode": step.mode,
        "offered": step.offered,
        "requests": step.requests,
        "raw_responses": step.raw_responses,
        "response": (
            step.response.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if step.response is not None
            else None
        ),
        "calls": [_record_dict(r) for r in step.calls],
        "delivered": [_record_dict(r) for r in step.delivered],
    }


def dump_result(result: RunResult) -> dict[str, Any]:
    """A RunResult as JSON (what the workflow returns; also to compare transcripts)."""
    return {
        "run_id": result.run_id,
        "output": to_jsonable_python(result.output, by_alias=True),
        "finished": result.finished,
        "pending": result.pending,
        "messages": result.messages,
        "steps": [step_dict(s) for s in result.steps],
        "context": result.context.to_items() if result.context is not None else None,
    }


def _record(data: Mapping[str, Any]) -> CallRecord:
    fields = {name: data[name] for name in _RECORD_FIELDS}
    return CallRecord(**fields, result=_Result.model_validate(data["result"]))


def _steps(data: Sequence[Mapping[str, Any]]) -> list[Step]:
    return [
        Step(
            index=s["index"],
            mode=s.get("mode", "composed"),
            offered=list(s.get("offered", [])),
            requests=list(s["requests"]),
            raw_responses=list(s["raw_responses"]),
            calls=[_record(r) for r in s["calls"]],
            delivered=[_record(r) for r in s["delivered"]],
        )
        for s in data
    ]


def load_result(data: Mapping[str, Any], output: Any = None) -> RunResult:
    """The RunResult a workflow returned (raises the run's LLMError / ResponseValidationError)."""
    failure = cast("Mapping[str, Any] | None", data.get("failure"))
    if failure is not None:
        exc: AgentError
        if failure["type"] == "ResponseValidationError":
            exc = ResponseValidationError(
                failure["message"],
                errors=failure.get("errors") or "",
                attempts=int(failure.get("attempts") or 1),
                last_response=failure.get("last_response"),
            )
        else:
            exc = LLMError(failure["message"])
        exc.steps = _steps(data.get("steps", []))
        raise exc
    value: Any = data["output"]
    if isinstance(output, type) and issubclass(output, BaseModel) and value is not None:
        value = output.model_validate(value)
    return RunResult(
        run_id=data["run_id"],
        output=value,
        finished=data["finished"],
        steps=_steps(data["steps"]),
        messages=list(data["messages"]),
        pending=list(data["pending"]),
        context=Context.of(data["context"]) if data.get("context") is not None else None,
    )
