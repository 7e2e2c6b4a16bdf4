"""Runtime layer: the Agent's records — events, the transcript (``Step``, ``CallRecord``,
``RunResult``) and the pending-store protocols the loop talks to.

Imports ``_result``, ``types`` (for type checking) and the standard library only: workflow code
(``toolbind.temporal``) and the loop share these records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from ._result import ToolResult
from .types import ToolResponse

if TYPE_CHECKING:
    from ._context import Context
    from ._response import Composition

Route = Literal["explicit", "latent", "async", "missing"]

EventType = Literal[
    "text-delta",
    "tool-call.start",
    "tool-input-delta",
    "tool-result",
    "tool-call.pending",
    "tool-call.complete",
    "tool-call.error",
    "attempt.discarded",
    "run.complete",
]


class PendingCall(Protocol):
    """A pending tool call as the store reports it (``runtime._pending.PendingToolCall``)."""

    @property
    def run_id(self) -> str: ...
    @property
    def call_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def arguments(self) -> Mapping[str, Any]: ...
    @property
    def status(self) -> str: ...
    @property
    def result(self) -> Any: ...
    @property
    def error(self) -> str | None: ...


class PendingSink(Protocol):
    """The pending store the Agent needs (``runtime._pending.PendingStore`` satisfies it)."""

    def add(
        self,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        ttl: float | None = None,
    ) -> Any: ...

    def collect(self, run_id: str) -> Sequence[PendingCall]: ...

    def pending(self, run_id: str) -> Sequence[PendingCall]: ...


# -- events and transcript -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEvent:
    """One event of a run (gateway-v3 names).

    ``tool-call.start`` → ``tool-input-delta`` (the call's arguments, whole:
    ``data["arguments"]``) → ``tool-result`` (progress: an item an Activity reported before its
    result, ``{"preliminary": True, "output": item}``; zero or more) → ``tool-call.complete`` or
    ``tool-call.error`` (or ``tool-call.pending``, then complete/error when the result arrives).
    ``astream`` streams the answer: ``text-delta`` (the output's text, ``data["delta"]``), and
    before the whole arguments ``tool-input-delta`` events with ``data["partial"]`` (the tool's
    arguments generated so far; native calls also ``data["delta"]``, the raw piece); an answer
    refused and asked again ends with ``attempt.discarded`` (``data["attempt"]``, ``["errors"]``:
    what it streamed is void, the retry streams its calls anew under the same ids). The last
    event of ``astream`` is ``run.complete`` with the ``RunResult``.
    """

    type: EventType
    run_id: str
    step: int
    call_id: str | None = None
    tool: str | None = None
    data: Any = None
    visible: bool = True
    result: RunResult | None = None


@dataclass(slots=True, kw_only=True)
class CallRecord:
    """One call of a step and what became of it.

    Attributes:
        call_id: unique within the run, also across resumed invocations
            (``call-<invocation>-<step>-<index>``).
        route: ``explicit``, ``latent``, ``async`` or ``missing`` (``_activity`` names no Activity).
        result: the envelope; for a pending call, ``data`` is ``{"status": "pending"}`` until the
            delivered result is recorded in a later step's ``delivered``.
        progress: what an async-generator Activity yielded along the way.
        repeats: the id of the call waiting for approval this one repeats (same tool, same
            arguments): not parked again, the model told it already waits.
    """

    call_id: str
    tool: str
    route: Route
    arguments: dict[str, Any]
    result: ToolResult[Any]
    visible: bool
    pending: bool = False
    progress: list[Any] = field(default_factory=list[Any])
    repeats: str | None = None


@dataclass(slots=True, kw_only=True)
class Step:
    """One LLM step: every request attempt, raw response, the validated response, the calls."""

    index: int
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    raw_responses: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    response: ToolResponse[Any, Any] | None = None
    calls: list[CallRecord] = field(default_factory=list[CallRecord])
    offered: list[str] = field(default_factory=list[str])
    """The tools offered this step (by name): all, a per-run subset, or those selected."""
    composition: Composition | None = field(default=None, repr=False)
    mode: str = "composed"
    """How the step asked: ``composed`` (one Response function) or ``native`` (one per tool)."""
    delivered: list[CallRecord] = field(default_factory=list[CallRecord])
    notes: list[str] = field(default_factory=list[str])
    """What toolbind did to the model's answer beyond validating it (e.g. an answer cut off at
    the token limit read up to its last complete call); empty for a whole answer."""

    @property
    def llm_requests(self) -> int:
        """How many requests this step sent the model (1, plus one per retry)."""
        return len(self.requests)

    @property
    def usage(self) -> dict[str, int]:
        """Token usage of this step's responses, as the server reported it (``prompt_tokens``,
        ``completion_tokens``, ``total_tokens``; summed over retries; 0 where not reported)."""
        return _usage(self.raw_responses)


def _usage(responses: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    total: dict[str, int] = dict.fromkeys(("prompt_tokens", "completion_tokens", "total_tokens"), 0)
    for response in responses:
        reported: Any = response.get("usage")
        if isinstance(reported, dict):
            for key in total:
                value: Any = cast("dict[str, Any]", reported).get(key)
                if isinstance(value, int):
                    total[key] += value
    return total


@dataclass(slots=True, kw_only=True)
class RunResult:
    """The outcome of ``run``: the final output (None when ``max_steps`` ran out) and transcript."""

    run_id: str
    output: Any
    finished: bool
    steps: list[Step]
    messages: list[dict[str, Any]]
    pending: list[str]
    context: Context | None = None
    """The run's context (``run(..., context=...)``) with the outputs the calls wrote, or None."""

    @property
    def llm_requests(self) -> int:
        """How many requests the run sent the model, retries included."""
        return sum(step.llm_requests for step in self.steps)

    @property
    def usage(self) -> dict[str, int]:
        """The run's token usage (every step's, retries included)."""
        return _usage(r for step in self.steps for r in step.raw_responses)
