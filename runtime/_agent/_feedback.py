"""Runtime layer: what the Agent's loop says to the model — its answer and the results fed back,
the tool listing, the chat messages a caller gives, the streamed step's events. Imports
``_capability``, ``_compose``, ``_events``, ``_stream``, ``errors``, ``types``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from toolbind._compose import TOOL_TAG

from .._binding import ToolBinding
from .._capability import for_the_model, visible
from .._events import AgentEvent, EventType, Step
from .._response import Composition
from .._stream import Emit
from ..errors import UsageError
from ..types import ToolResponse

__all__ = [
    "TOOLS_HEADER",
    "as_offered",
    "feed_back",
    "feed_back_step",
    "message",
    "streamed",
    "unless_started",
    "with_tools_listed",
]


def streamed(
    run_id: str,
    step: int,
    step_key: str,
    queue: asyncio.Queue[AgentEvent],
    started: set[str],
    binding: Callable[[str], ToolBinding | None],
) -> Emit:
    """The ``emit`` of a streamed step: its deltas as events, with the call ids the validated
    calls will have (``step_key-index``)."""

    def emit(kind: str, index: int | None, tool: str | None, data: Any) -> None:
        call_id = None if index is None else f"{step_key}-{index}"
        if kind == "tool-call.start" and call_id is not None:
            started.add(call_id)
        found = binding(tool) if tool else None
        queue.put_nowait(
            AgentEvent(
                type=cast("EventType", kind),
                run_id=run_id,
                step=step,
                call_id=call_id,
                tool=tool,
                data=data,
                visible=visible(found) if found else True,
            )
        )

    return emit


def unless_started(
    queue: asyncio.Queue[AgentEvent], started: set[str]
) -> Callable[[AgentEvent], None]:
    def put(event: AgentEvent) -> None:
        if event.type != "tool-call.start" or event.call_id not in started:
            queue.put_nowait(event)

    return put


def feed_back(
    convo: list[dict[str, Any]],
    response: ToolResponse[Any, Any],
    step: Step,
    asked: Composition,
) -> None:
    """Append the step's answer and its results (one tool message) to the conversation.

    The model reads its own answer as it was asked for it: each tool under the name it was
    offered (``asked.shown``: never ``name@record``), under the key it was offered
    (``asked.tag``)."""
    call_id = f"step-{step.index}"
    function, shown = asked.response.__name__, asked.shown
    answer = response.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if shown or asked.tag != TOOL_TAG:
        answer["calls"] = [as_offered(c, shown, asked.tag) for c in answer.get("calls", [])]
    arguments = json.dumps(_as_asked(answer, asked), ensure_ascii=False, separators=(",", ":"))
    if step.raw_responses:
        try:
            tool_calls = step.raw_responses[-1]["choices"][0]["message"]["tool_calls"]
            call_id = tool_calls[0]["id"] or call_id
        except (KeyError, IndexError, TypeError):
            pass
    convo.append(
        {
            "role": "assistant",
            # the answer as text too: chat templates that ignore tool_calls (SmolLM2's, among
            # others) show the model its own answer; and an empty content would not do — instructor
            # turns a falsy content into [], which llama.cpp's server refuses for an assistant
            "content": arguments,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": function,
                        "arguments": arguments,
                    },
                }
            ],
        }
    )
    if step.calls:
        content: Any = {
            "results": [
                {
                    "call_id": r.call_id,
                    "tool": shown.get(r.tool, r.tool),
                    **r.result.model_dump(mode="json"),
                }
                for r in step.calls
            ]
        }
    elif response.output is None:
        content = {"results": [], "note": "No calls and no output: call tools or give the output."}
    else:
        content = {"results": []}
    convo.append({"role": "tool", "tool_call_id": call_id, "content": for_the_model(content)})


def _as_asked(answer: dict[str, Any], asked: Composition) -> dict[str, Any]:
    """``answer`` with its keys in the order the composed schema asks for them (``calls`` first):
    the Response model's own field order is not the schema's."""
    order: Any = asked.get("properties") or {}
    keys = [k for k in cast("dict[str, Any]", order) if k in answer]
    return {**{k: answer[k] for k in keys}, **answer}


TOOLS_HEADER = "Tools you can call (each call names its tool in `{tag}`):\n"


def with_tools_listed(
    messages: list[dict[str, Any]], listing: str, tag: str = TOOL_TAG
) -> list[dict[str, Any]]:
    """``messages`` for one request, the tool listing added to the system message (a new one
    first when there is none); the conversation itself is left as it is."""
    text = TOOLS_HEADER.format(tag=tag) + listing
    if (
        messages
        and messages[0].get("role") == "system"
        and isinstance(messages[0].get("content"), str)
    ):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{text}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def as_offered(call: Any, shown: Mapping[str, str], tag: str = TOOL_TAG) -> Any:
    """A dumped call with ``_tool`` (and a same-name ``_activity``) as the model was offered them:
    the names ``shown``, the tool's under ``tag``."""
    if not isinstance(call, dict):
        return call
    out = dict(cast("dict[str, Any]", call))
    for meta in ("_tool", "_activity"):
        value = out.get(meta)
        if isinstance(value, str) and value in shown:
            out[meta] = shown[value]
    if tag != TOOL_TAG and TOOL_TAG in out:
        out = {tag: out[TOOL_TAG], **{k: v for k, v in out.items() if k != TOOL_TAG}}
    return out


def message(item: Any, index: int) -> dict[str, Any]:
    """One chat message; the RFC's context items are read too: ``{type: 'text', text}`` is a user
    message. A malformed item is the caller's mistake, said before anything is sent."""
    if not isinstance(item, Mapping):
        raise UsageError(
            f"messages[{index}] is a {type(item).__name__}: expected a chat message "
            "{role, content} or an RFC context item {type: 'text', text}"
        )
    message = dict(cast("Mapping[str, Any]", item))
    if "role" in message:
        return message
    kind = message.get("type")
    if kind == "text" and isinstance(message.get("text"), str):
        return {"role": "user", "content": message["text"]}
    if kind == "tool":
        names = ", ".join(map(str, cast("dict[str, Any]", message.get("tool") or {})))
        raise UsageError(
            f"messages[{index}] is an RFC {{type: 'tool'}} context item ({names or 'no tool'}): "
            "tools are offered from the Agent's registry — Tool.register(name, schema) or "
            "Agent(tools=...) — not from the messages"
        )
    raise UsageError(
        f"messages[{index}] has no role: expected a chat message {{role, content}} or an RFC "
        "context item {type: 'text', text}"
    )


def feed_back_step(
    convo: list[dict[str, Any]], step: Step, response: ToolResponse[Any, Any], asked: Composition
) -> None:
    """The step's answer and its results appended to the conversation (native or composed)."""
    if step.mode == "native":
        from .._native import feed_back as feed_back_native

        results = [
            {"call_id": r.call_id, "tool": asked.shown.get(r.tool, r.tool)}
            | r.result.model_dump(mode="json")
            for r in step.calls
        ]
        feed_back_native(convo, step.raw_responses[-1], asked, results, for_the_model)
    else:
        feed_back(convo, response, step, asked)
