"""toolbind.runtime.temporal, runtime layer (imports temporalio's activity API, the runtime's model
call (``_llm``, instructor and openai, lazily), composition and errors, and this package's
``_names``, ``_beat`` and ``_world``): the activity ``toolbind.llm`` that asks the model on a worker.

The workflow sends what it decided (the tools offered, output, tool choice, instances, composed or
native); the activity composes the same request here (once per worker) and asks the model. It
heartbeats while the model answers, so a worker lost mid-request is noticed within the heartbeat
timeout and the request is sent again from another worker.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any, cast

from temporalio import activity
from temporalio.exceptions import ApplicationError

from .._events import Step
from .._response import Composition, compose
from ..errors import LLMError, ResponseValidationError
from ..types import ToolResponse
from ._beat import heartbeating
from ._names import LLM_ACTIVITY
from ._world import World


def llm_activity(world: World) -> Callable[..., Any]:
    """The worker's LLM activity; its model clients are kept per base URL and timeouts."""
    models: dict[str, Any] = {}
    _warm()

    @activity.defn(name=LLM_ACTIVITY)
    async def ask(payload: dict[str, Any]) -> str:
        llm = cast("dict[str, Any]", payload["llm"])
        model = _model(models, llm)
        composition = _composition(world, payload, llm)
        native = bool(payload.get("native"))
        step = Step(index=payload["step"], mode="native" if native else "composed")
        try:
            async with heartbeating():
                response = await _request(model, payload, llm, composition, step, native=native)
        except ResponseValidationError as exc:
            raise ApplicationError(
                str(exc),
                {
                    "errors": exc.errors,
                    "attempts": exc.attempts,
                    "last_response": exc.last_response,
                    "requests": step.requests,
                    "raw_responses": step.raw_responses,
                },
                type="ResponseValidationError",
                non_retryable=True,
            ) from None
        except LLMError as exc:
            raise ApplicationError(
                str(exc),
                {"requests": step.requests, "raw_responses": step.raw_responses},
                type="LLMError",
                non_retryable=True,
            ) from None
        return json.dumps(
            {
                "response": response.model_dump(mode="json", by_alias=True, exclude_unset=True),
                "requests": step.requests,
                "raw_responses": step.raw_responses,
            }
        )

    return ask


def _warm() -> None:
    """Import the model client's modules now, as the worker starts: the first request would
    import them in the activity (seconds on a loaded machine, the event loop blocked), and an
    activity that sends no heartbeat for its heartbeat timeout is taken for lost and asked again."""
    import instructor
    import openai

    from .._llm import InstructorModel

    del InstructorModel  # (imported for its module's imports)
    # (no request is made: the client is only built, so instructor loads its provider's modules)
    instructor.from_openai(openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1"))


def _model(models: dict[str, Any], llm: Mapping[str, Any]) -> Any:
    """The model client for ``llm``'s base URL and timeouts (made on first use)."""
    from .._llm import InstructorModel

    key = json.dumps([llm["base_url"], llm["timeout"], llm["http_retries"]])
    model = models.get(key)
    if model is None:
        model = models[key] = InstructorModel(
            llm["base_url"],
            timeout=llm["timeout"],
            http_retries=llm["http_retries"],
            api_key=os.environ.get(llm.get("api_key_env") or "OPENAI_API_KEY"),
        )
    return model


def _composition(world: World, payload: Mapping[str, Any], llm: Mapping[str, Any]) -> Composition:
    """The request the workflow composed: the same tools (a per-run subset, the selected ones),
    output, tool choice and instances, composed here the same way (once per worker)."""
    offered: list[str] = payload.get("offered") or [t.name for t in world.tools]
    instances = tuple(payload.get("instances") or ())
    ckey = json.dumps(
        [
            offered,
            payload["not_latent"],
            payload["output"],
            payload["tool_choice"],
            llm["max_calls"],
            llm["meta_fields"],
            instances,
            llm.get("call_tag", "_tool"),
        ],
        sort_keys=True,
    )
    composition = world.composer.get(ckey)
    if composition is None:
        tools = [b for b in (world.tools.get(n) for n in offered) if b is not None]
        composition = world.composer[ckey] = compose(
            tools,
            payload["output"],
            activities=frozenset(payload["not_latent"]),
            max_calls=llm["max_calls"],
            tool_choice=payload["tool_choice"],
            meta_fields=llm["meta_fields"],
            instances=instances,
            tag=llm.get("call_tag", "_tool"),
        )
    return composition


async def _request(
    model: Any,
    payload: Mapping[str, Any],
    llm: Mapping[str, Any],
    composition: Composition,
    step: Step,
    *,
    native: bool,
) -> ToolResponse[Any, Any]:
    """Ask the model, natively or with the composed response model."""
    messages = cast("list[dict[str, Any]]", payload["messages"])  # tools listed, if asked
    if native:
        return await model.ask_native(
            messages,
            composition,
            step,
            model=llm["model"],
            tool_choice=payload["tool_choice"],
            max_retries=llm["max_retries"],
            request_kwargs=dict(llm["request_kwargs"]),
            agent_mode=llm.get("mode") or "composed",
        )
    return await model.ask(
        messages,
        composition.response,
        step,
        model=llm["model"],
        max_retries=llm["max_retries"],
        request_kwargs=dict(llm["request_kwargs"]),
    )
