"""toolbind.runtime.temporal, runtime layer (imports temporalio's workflow API, the runtime's
events, composition and errors, and this package's ``_names`` and ``_executor``): the durable
loop's model call, each request the LLM activity.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from .._events import Step
from .._response import Composition
from .._stream import Emit
from ..errors import LLMError, ResponseValidationError
from ..types import ToolResponse
from ._executor import failure_text
from ._names import LLM_ACTIVITY


class ActivityModel:
    """The durable loop's model call (``ModelCall``): each request is the LLM activity. The
    Agent's own step code picks the tools, lists them and decides composed or native; the
    activity composes the same request on a worker and asks the model there."""

    streams = False

    def __init__(
        self, config: Mapping[str, Any], llm_queue: str, route_of: Callable[[str], str]
    ) -> None:
        self.config = config
        self.llm_queue = llm_queue
        self.route_of = route_of  # tool name → its route in the run ("latent", "explicit", ...)

    async def ask(
        self,
        messages: list[dict[str, Any]],
        response_model: type[ToolResponse[Any, Any]],
        step: Step,
        *,
        model: str,
        max_retries: int,
        request_kwargs: dict[str, Any],
    ) -> ToolResponse[Any, Any]:
        return await self._ask(messages, step, native=False)

    async def ask_native(
        self,
        messages: list[dict[str, Any]],
        composition: Composition,
        step: Step,
        *,
        model: str,
        tool_choice: str,
        max_retries: int,
        request_kwargs: dict[str, Any],
        agent_mode: str,
        emit: Emit | None = None,
    ) -> ToolResponse[Any, Any]:
        return await self._ask(messages, step, native=True)

    async def aclose(self) -> None:
        return None

    async def _ask(
        self, messages: list[dict[str, Any]], step: Step, *, native: bool
    ) -> ToolResponse[Any, Any]:
        composition = step.composition
        assert composition is not None  # the Agent's step composes before it asks
        config = self.config
        payload = {
            "messages": messages,
            "output": composition.output,
            "tool_choice": composition.tool_choice,
            "offered": [t.name for t in composition.tools],
            "instances": list(composition.instances),
            "not_latent": sorted(
                t.name for t in composition.tools if self.route_of(t.name) != "latent"
            ),
            "native": native,
            "step": step.index,
            "llm": config["llm"],
        }
        try:
            text: str = await workflow.execute_activity(
                LLM_ACTIVITY,
                payload,
                task_queue=self.llm_queue,
                start_to_close_timeout=timedelta(seconds=config["llm"]["activity_timeout"]),
                # the worker heartbeats while the model answers: a lost one is noticed in seconds
                heartbeat_timeout=timedelta(seconds=config["llm"].get("heartbeat", 10.0)),
                retry_policy=RetryPolicy(maximum_attempts=3),
                activity_id=f"llm-{config['invocation']}-{step.index}",
                result_type=str,
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError):
                details: dict[str, Any] = (
                    cast("dict[str, Any]", cause.details[0]) if cause.details else {}
                )
                step.requests.extend(details.get("requests", []))
                step.raw_responses.extend(details.get("raw_responses", []))
                if cause.type == "ResponseValidationError":
                    raise ResponseValidationError(
                        cause.message,
                        errors=details.get("errors", ""),
                        attempts=int(details.get("attempts", 1)),
                        last_response=details.get("last_response"),
                    ) from None
                raise LLMError(cause.message) from None
            raise LLMError(f"the LLM request failed: {failure_text(exc)}") from None
        out = cast("dict[str, Any]", json.loads(text))
        step.requests.extend(out["requests"])
        step.raw_responses.extend(out["raw_responses"])
        return composition.response.model_validate_json(json.dumps(out["response"]))
