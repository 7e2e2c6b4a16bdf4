"""Runtime layer: ``RunState`` — a run's context and deps around each call: its variable
references resolved before it runs, its output appended at its ``_outputPath`` after. Imports
``_capability``, ``_executor``, ``_state``, ``contract``.

The Agent makes one per run from ``run(..., context=..., deps=...)`` and puts it first: a call
passes through it before any other capability (a call whose references name nothing is refused
here, and no guardrail or approval sees it as runnable).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from .._capability import Capability, Outcome, Proceed
from .._executor import Pending, RoutedCall
from .._state import RunContext
from ..contract import META_FIELDS

__all__ = ["RunState"]


class RunState(Capability):
    """One run's ``RunContext`` as a capability (made by the Agent, never given by a user)."""

    order: ClassVar[int] = 0  # outermost: references resolve before anything looks at the call

    def __init__(self, state: RunContext) -> None:
        self.state = state

    def prepare_call(self, routed: RoutedCall) -> RoutedCall:
        return _prepared(routed, self.state)

    async def wrap_call(self, routed: RoutedCall, proceed: Proceed) -> Outcome:
        value = await proceed(routed)
        if isinstance(value, Pending) or _withheld(value.metadata):
            return value
        return self.state.record(routed.call, routed.binding, value)  # at its _outputPath


def _withheld(metadata: Mapping[str, Any]) -> bool:
    """Whether an output guardrail withheld the result: then nothing of it is written."""
    return "guardrail" in metadata and metadata.get("stage") == "output"


def _prepared(routed: RoutedCall, state: RunContext) -> RoutedCall:
    """``routed`` with its variable references resolved in the run's context, or ``refused``
    saying why it cannot run."""
    call, refused = state.prepare(routed.call, routed.binding)
    if refused is not None:
        return replace(routed, refused=refused)
    if call is routed.call:
        return routed
    dumped: dict[str, Any] = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
    arguments = {k: v for k, v in dumped.items() if k not in META_FIELDS}
    return replace(routed, call=call, dumped=dumped, arguments=arguments)
