"""Runtime layer: the ``Capability`` protocol an Agent composes, the ``Toolset`` it wraps and the
``Run`` a step hook sees. Imports ``_binding``, ``_context``, ``_events``, ``_executor``, ``_registry``,
``_result``, ``_state``, ``errors``, ``_secrets`` (lazily); never the Agent (it hands what a hook needs in a ``Run``).

A capability is an object with hooks, each a no-op by default (so one overrides only what it
does), in the manner of pydantic-ai's toolsets: it owns its feature's state, the Agent owns none.

* ``wrap_toolset(toolset)``: the tools the Agent offers and how each is run (MCP servers add
  tools, delegates bind theirs, approval marks tools); the first capability wraps innermost.
* ``prepare_tools(tools, messages, tool_choice)``: narrow one request's tools (selection).
* ``before_step(run, step)``: events of a step before the model is asked (pending delivery).
* ``prepare_call(routed)``: the call as it runs and is recorded (the run's context resolves its
  references), before its events are told.
* ``wrap_call(routed, proceed)``: around one call (guardrails, approval, the run's context): it
  may answer instead of ``proceed`` or change what ``proceed`` gives back.
* ``park(routed, marker)``: keep a call whose result comes later (the pending store).
Capabilities apply in ascending ``order`` (stable for equals): each wraps the toolset the ones
before it made, and a call passes through them in that order before it runs — so approval
(last) marks every tool, MCP servers' and delegates' too, and parks a call only after the
guardrails let it through.

* ``bind(agent)`` / ``for_child()`` / ``durable()``: the capability as one Agent's, as a delegate
  sub-request's (None: left out), and as a durable run's data (``DurableAgent``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from ._binding import ToolBinding
from ._context import CONTEXT_HEADER, UPDATE_HEADER
from ._events import AgentEvent, CallRecord, Step
from ._executor import Pending, RoutedCall
from ._registry import RegisteredActivity
from ._result import ToolResult
from ._state import RunContext
from .errors import UsageError

__all__ = [
    "DELIVERED",
    "Capability",
    "Outcome",
    "Proceed",
    "Run",
    "Toolset",
    "WrapperToolset",
    "chain",
    "for_the_model",
    "in_order",
    "visible",
    "written_by_toolbind",
]

Outcome = ToolResult[Any] | Pending
"""What running one call gives: its result, or ``Pending`` (the result comes later)."""

Proceed = Callable[[RoutedCall], Awaitable[Outcome]]
"""The rest of a call's chain, as ``wrap_call`` is handed it."""


class Toolset(Protocol):
    """The tools an Agent offers and the Activity that runs each (before its execution config)."""

    def __iter__(self) -> Iterator[ToolBinding]: ...

    def get(self, name: str) -> ToolBinding | None:
        """The tool named ``name``, or None."""
        ...

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        """The Activity that runs ``tool``, or None (execution config, async or latent)."""
        ...

    async def refresh(self) -> None:
        """Bring the tools up to date (before a request)."""
        ...

    async def aclose(self) -> None:
        """Close what the toolset opened."""
        ...


class WrapperToolset:
    """A toolset that hands everything to ``inner``: subclasses override what they change."""

    def __init__(self, inner: Toolset) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[ToolBinding]:
        return iter(self.inner)

    def get(self, name: str) -> ToolBinding | None:
        return self.inner.get(name)

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        return self.inner.activity(tool)

    async def refresh(self) -> None:
        await self.inner.refresh()

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(slots=True, kw_only=True)
class Run:
    """One run as the step hooks see it.

    Attributes:
        run_id: the run's id.
        output: the run's output spec (what ``arun`` was given).
        convo: the conversation so far (hooks may append messages).
        outstanding: pending calls of this invocation not delivered yet, by call id.
        state: the run's context and deps.
        binding: the tool of a name as the Agent offers it, or None.
        shown: the names the model is shown for the tools of ``output``'s request.
        execute: runs a call again through the Agent (``call_id``, the Call, the RoutedCall
            changes to apply) and gives its record (its result and progress; its events are
            the caller's to tell).
    """

    run_id: str
    output: Any
    convo: list[dict[str, Any]]
    outstanding: dict[str, CallRecord]
    state: RunContext | None
    binding: Callable[[str], ToolBinding | None]
    shown: Callable[[], Mapping[str, str]]
    execute: Callable[[str, Any, Mapping[str, Any]], Awaitable[CallRecord]]


class Capability:
    """A feature an Agent composes (``Agent(capabilities=[...])``): every hook a no-op."""

    order: ClassVar[int] = 50
    """Where it applies among the Agent's capabilities (lower: first)."""

    def bind(self, agent: Any) -> Capability:
        """This capability as ``agent``'s (one that keeps per-Agent state returns a new object)."""
        return self

    def for_child(self) -> Capability | None:
        """What a delegate's sub-request keeps of this capability (None: nothing)."""
        return self

    def durable(self) -> Mapping[str, Any]:
        """This capability as a durable run's data (``DurableAgent``)."""
        raise UsageError(
            f"DurableAgent(capabilities=[{type(self).__name__}(...)]): this capability runs only "
            "in process (a durable run's workflow code takes data, never objects)"
        )

    def wrap_toolset(self, toolset: Toolset) -> Toolset:
        """The toolset the Agent offers, this capability's tools and routing added."""
        return toolset

    async def prepare_tools(
        self, tools: list[ToolBinding], messages: Sequence[Mapping[str, Any]], tool_choice: str
    ) -> list[ToolBinding]:
        """The tools one request offers, of ``tools``."""
        return tools

    async def before_step(self, run: Run, step: Step) -> list[AgentEvent]:
        """Work before a step's request; the events it makes."""
        return []

    def prepare_call(self, routed: RoutedCall) -> RoutedCall:
        """The call as it runs and is recorded."""
        return routed

    async def wrap_call(self, routed: RoutedCall, proceed: Proceed) -> Outcome:
        """One call's outcome: ``proceed(routed)`` unless the capability answers instead."""
        return await proceed(routed)

    async def park(self, routed: RoutedCall, marker: Pending) -> ToolResult[Any] | None:
        """Keep a call whose result comes later; the result the model reads meanwhile, or None
        when this capability keeps no such calls."""
        return None


def in_order(capabilities: Sequence[Capability]) -> list[Capability]:
    """``capabilities`` in the order they apply (by ``order``; as given among equals)."""
    return sorted(capabilities, key=lambda c: c.order)


def chain(capabilities: Sequence[Capability], core: Proceed) -> Proceed:
    """``core`` wrapped by each capability's ``wrap_call``, the first (of ``in_order``) outermost."""
    proceed = core
    for capability in reversed(in_order(capabilities)):
        proceed = _wrapped(capability, proceed)
    return proceed


def _wrapped(capability: Capability, proceed: Proceed) -> Proceed:
    async def call(routed: RoutedCall) -> Outcome:
        return await capability.wrap_call(routed, proceed)

    return call


def visible(binding: ToolBinding) -> bool:
    """Whether calls of ``binding`` are shown to users (gateway-v3: ``internal`` never are)."""
    if binding.execution_type == "internal":
        return False
    return binding.visible if binding.visible is not None else True


def for_the_model(content: Any) -> str:
    """A message's text for the model: every configured secret (credentials, ``headers=``,
    ``${env.X}`` values, OAuth tokens) scrubbed — results keep the API's own data, the model
    never sees one."""
    from ._secrets import scrub_everywhere

    return scrub_everywhere(json.dumps(content))


DELIVERED = "tool_result"
"""The ``event`` of a delivered result as the model reads it: a user message the Agent writes
(``{"event": "tool_result", "call_id", "tool", "result"}``)."""


def written_by_toolbind(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a user message the Agent wrote, not the user: the context it shows
    the model, the identities a step's calls wrote, a delivered result. Told by its text, so also
    among the messages a resumed run is given back."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return False
    if content.startswith((CONTEXT_HEADER, UPDATE_HEADER)):
        return True
    if not content.startswith('{"event"'):
        return False
    try:
        said: Any = json.loads(content)
    except ValueError:
        return False
    return isinstance(said, dict) and cast("dict[str, Any]", said).get("event") == DELIVERED
