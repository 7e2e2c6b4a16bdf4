"""Runtime layer: native tool calling — each tool its own provider function. Imports ``_compose``,
``_response``, ``errors``, ``types``, pydantic; the ``openai`` client the Agent holds.

``Agent(mode="native")`` (or ``"auto"`` for a request that offers no latent tool) does not send the
single composed ``Response`` function: each offered tool is one OpenAI function (its name the
offered one where a provider accepts it, else ``provider_name``; its parameters the tool's schema
without ``_tool``, with ``_output`` for a latent tool), ``tool_choice`` maps onto the provider's
(``auto``, ``required``, ``none``, a named function). The model's tool calls — parallel ones
included — become ``{"_tool": ..., **arguments}`` items and, with the message's text as ``output``,
are validated by the same Response model as a composed answer: the same Call union, the same
checks, routed the same way. A structured output (a pydantic model or a JSON Schema) is one more
function, ``final_output`` (its parameters the output schema, wrapped in ``{"output": ...}`` when it
is not an object); a text output is the message's content when it makes no call.

An invalid answer — unknown function, arguments that are not JSON, a validation error — goes back
as the tool messages of its calls (or a user message when it made none) for ``max_retries`` retries,
then ``ResponseValidationError``; a request that fails is ``LLMError``. ``feed_back`` writes a
step's results the provider's way: the assistant message with its ``tool_calls``, one ``tool``
message per call id.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from toolbind._compose import (
    TOOL_CHOICES,
    for_grammar,
    names_tool,
    offered_names,
    output_schema_of,
    reachable_defs,
    tool_schema,
)

from ._response import read_answer, retry_feedback
from .errors import FEEDBACK_HEADER, LLMError, ResponseValidationError
from .types import ToolResponse

if TYPE_CHECKING:
    from ._stream import Emit

if TYPE_CHECKING:
    from ._response import Composition

__all__ = ["MODES", "NativeRequest", "feed_back", "native_request", "wants_native"]

MODES = ("composed", "native", "auto")
_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
FINAL = "final_output"


def wants_native(mode: str, composition: Composition) -> bool:
    """Whether a request is sent natively: ``native`` always, ``auto`` when no offered tool is
    latent (a latent tool's ``_output`` is the composed Response's to ask for)."""
    if mode == "native":
        return True
    return mode == "auto" and all(composition.activities.values())


@dataclass(slots=True)
class NativeRequest:
    """One native request's functions and how their names read back."""

    tools: list[dict[str, Any]]
    tool_choice: Any
    by_function: dict[str, str]  # function name → the ``_tool`` value the Response reads
    final: str | None  # the structured output's function, if any
    wrapped: bool  # the final function's parameters are ``{"output": schema}``
    function_of: dict[str, str] = field(default_factory=dict[str, str])  # tool name → function


def native_request(composition: Composition, tool_choice: str) -> NativeRequest:
    """The functions (and ``tool_choice``) of a native request for ``composition``."""
    names = offered_names(composition.tools)
    explicit = [n for n, a in composition.activities.items() if a]
    taken: set[str] = set()
    out: list[dict[str, Any]] = []
    by_function: dict[str, str] = {}
    function_of: dict[str, str] = {}
    for tool in composition.tools:
        offered = names[tool.name]
        function = offered if _SAFE.match(offered) else getattr(tool, "provider_name", tool.name)
        if function in taken:  # two offered names made safe alike: the package's are unique
            function = tool.name
        taken.add(function)
        by_function[function] = offered if function == offered else tool.name
        function_of[tool.name] = function
        # a copy: its top-level keys are rewritten below, and tool_schema's dict may be shared
        # (the composed schema of the same tool, built elsewhere, read it changed)
        schema = dict(
            tool_schema(
                tool, explicit, offered, meta_fields="needed", instances=composition.instances
            )
        )
        props = dict(cast("dict[str, Any]", schema.get("properties", {})))
        props.pop("_tool", None)
        schema["properties"] = props
        schema["required"] = [r for r in schema.get("required", []) if r != "_tool"]
        defs = reachable_defs(schema, tool.defs)
        if defs:
            schema["$defs"] = defs
        description = schema.pop("description", None)
        function_def: dict[str, Any] = {"name": function}
        if description:
            function_def["description"] = description
        function_def["parameters"] = for_grammar(schema)
        out.append({"type": "function", "function": function_def})
    final: str | None = None
    wrapped = False
    structured = composition.output is not None and composition.output is not str
    if structured and tool_choice in ("auto", "none"):
        final = FINAL
        while final in taken:
            final += "_"
        schema = dict(output_schema_of(composition.output))
        defs: Any = schema.pop("$defs", None)
        if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
            schema = {"type": "object", "properties": {"output": schema}, "required": ["output"]}
            wrapped = True
        if defs:
            schema["$defs"] = defs
        out.append(
            {
                "type": "function",
                "function": {
                    "name": final,
                    "description": "Give the final answer (call it alone, when no tool is needed).",
                    "parameters": for_grammar(schema),
                },
            }
        )
    choice: Any
    if tool_choice == "none" and final is not None:
        out = [t for t in out if t["function"]["name"] == final]
        choice = {"type": "function", "function": {"name": final}}
    elif tool_choice == "none":
        choice = "none"  # the tools stay listed: the conversation may name them
    elif tool_choice == "required" and len(composition.tools) == 1 and final is None:
        # the same thing, said so that servers without "required" (llama-cpp-python) force it
        choice = {"type": "function", "function": {"name": out[0]["function"]["name"]}}
    elif tool_choice in TOOL_CHOICES:
        choice = tool_choice
    else:
        named = [t for t in composition.tools if names_tool(t, tool_choice)]
        choice = {"type": "function", "function": {"name": function_of[named[0].name]}}
    return NativeRequest(out, choice, by_function, final, wrapped, function_of)


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|JSON|tool_call)?\s*\n?(.*?)```", re.DOTALL)


def calls_in_text(text: str, functions: Collection[str]) -> list[dict[str, Any]] | None:
    """The tool calls a model wrote in its text, as ``tool_calls`` items, or ``None``.

    Servers that apply no tool-call grammar and parse none (llama-cpp-python's for ``auto`` and
    ``required``) return what the model wrote: Qwen's and Hermes' ``<tool_call>{...}</tool_call>``,
    a fenced or bare JSON object ``{"name": ..., "arguments": {...}}`` or an array of them. They
    are read only when every one names an offered function, so text that merely holds JSON is
    still text."""
    stripped = text.strip()
    pieces = _TAGGED.findall(stripped) or _FENCED.findall(stripped) or [stripped]
    found: list[Any] = []
    for piece in pieces:
        try:
            value: Any = json.loads(piece)
        except ValueError:
            return None
        found.extend(cast("list[Any]", value) if isinstance(value, list) else [value])
    calls: list[dict[str, Any]] = []
    for index, item in enumerate(found):
        if not isinstance(item, dict):
            return None
        fields = cast("dict[str, Any]", item)
        name = fields.get("name")
        arguments: Any = fields.get("arguments", fields.get("parameters", {}))
        if not isinstance(name, str) or name not in functions:
            return None
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(
            {
                "id": f"text_call_{index}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return calls or None


def read_text_calls(message: dict[str, Any], request: NativeRequest) -> str | None:
    """Move the tool calls written in ``message``'s text into its ``tool_calls`` (the message is
    then fed back as if the server had parsed them); the note for the step, or ``None``."""
    content = message.get("content")
    if message.get("tool_calls") or not isinstance(content, str) or not content.strip():
        return None
    functions = {*request.by_function, *([request.final] if request.final else [])}
    calls = calls_in_text(content, functions)
    if calls is None:
        return None
    message["tool_calls"] = calls
    message["content"] = None
    names = ", ".join(c["function"]["name"] for c in calls)
    return (
        f"tool calls read from the answer's text ({names}): the server returned none, and the "
        "model wrote them as text"
    )


def _answer(message: Mapping[str, Any], request: NativeRequest) -> tuple[dict[str, Any], list[str]]:
    """The Response data of one assistant message, and what was wrong before validation."""
    problems: list[str] = []
    calls: list[dict[str, Any]] = []
    output: Any = None
    raw_calls: Any = message.get("tool_calls") or []
    for index, item in enumerate(cast("list[Any]", raw_calls)):
        function: Any = cast("Mapping[str, Any]", item).get("function") or {}
        name = str(function.get("name") or "")
        text = function.get("arguments") or "{}"
        try:
            arguments: Any = json.loads(text) if isinstance(text, str) else text
        except ValueError as exc:
            problems.append(f"- tool_calls[{index}] ({name}): the arguments are not JSON: {exc}")
            continue
        if not isinstance(arguments, dict):
            problems.append(f"- tool_calls[{index}] ({name}): the arguments must be a JSON object")
            continue
        args = cast("dict[str, Any]", arguments)
        if request.final is not None and name == request.final:
            output = args.get("output") if request.wrapped else args
        elif name in request.by_function:
            calls.append({**args, "_tool": request.by_function[name]})
        else:
            offered = ", ".join(request.by_function) or "none"
            problems.append(
                f"- tool_calls[{index}]: no tool named {name[:64]!r} is offered this step; "
                f"call one of: {offered}"
            )
    content = message.get("content")
    if output is None and not raw_calls and isinstance(content, str) and content.strip():
        output = content
        if request.final is not None:  # a structured output given as text: read it as JSON
            try:
                parsed: Any = json.loads(content)
            except ValueError:
                problems.append(
                    f"- output: give the final answer by calling {request.final} (the output "
                    "schema), not as text"
                )
            else:
                output = parsed
                if request.wrapped and isinstance(parsed, dict):
                    output = cast("dict[str, Any]", parsed).get("output")
    return {"calls": calls, "output": output}, problems


def _composed_answer(message: Mapping[str, Any]) -> tuple[tuple[Any, str | None], list[str]]:
    """The Response data of a composed answer (its one function call's arguments) with the note
    of a cut-off answer read up to its last complete call (``read_answer``)."""
    calls: Any = message.get("tool_calls") or []
    if not calls:
        return (None, None), ["- response: answer by calling the Response function, not with text"]
    function: Any = cast("Mapping[str, Any]", cast("list[Any]", calls)[0]).get("function") or {}
    try:
        return read_answer(str(function.get("arguments") or "")), []
    except ValueError as exc:
        return (None, None), [f"- response: the arguments are not JSON: {exc}"]


async def ask(
    *,
    client: Any,
    is_async: bool,
    model: str,
    messages: list[dict[str, Any]],
    composition: Composition,
    tool_choice: str,
    max_retries: int,
    request_kwargs: Mapping[str, Any],
    record_request: Callable[[dict[str, Any]], None],
    record_response: Callable[[dict[str, Any]], None],
    redact: Callable[[str], str],
    composed: bool = False,
    emit: Emit | None = None,
    record_note: Callable[[str], None] = lambda _: None,
) -> ToolResponse[Any, Any]:
    """One step: send, read, validate; retry with the feedback (see the module docstring).

    ``client`` is an ``openai.AsyncOpenAI`` (or ``OpenAI`` when ``is_async`` is False).
    ``composed``: send the one composed ``Response`` function instead (a streamed composed step:
    instructor does not stream partial calls of a union). ``emit``: stream the completion and
    tell its deltas (``_stream``); an async client only. ``record_note``: told what was done to
    an answer beyond validating it (a cut-off composed answer read up to its last whole call)."""
    import openai

    from ._stream import Deltas, complete

    request = native_request(composition, tool_choice)
    aliases = {o: n for n, o in composition.shown.items()}
    if composed:
        function = composition.response.__name__
        request = NativeRequest(
            [
                {
                    "type": "function",
                    "function": {
                        "name": function,
                        "description": composition.response.__doc__ or "",
                        "parameters": composition.response.model_json_schema(),
                    },
                }
            ],
            {"type": "function", "function": {"name": function}},
            {},
            None,
            False,
        )

    def tool_of(name: str) -> str | None:
        if composed:
            return aliases.get(name, name)
        found = request.by_function.get(name)
        return None if found is None else aliases.get(found, found)

    deltas = (
        Deltas(emit, composed=composed, tool_of=tool_of, tag=composition.tag)
        if emit and is_async
        else None
    )
    convo = list(messages)
    errors = ""
    last: dict[str, Any] | None = None
    attempt = 0
    for attempt in range(max_retries + 1):
        kwargs: dict[str, Any] = {"model": model, "messages": convo, **request_kwargs}
        if request.tools:
            kwargs["tools"] = request.tools
            kwargs["tool_choice"] = request.tool_choice
        record_request(
            {
                "model": model,
                "messages": json.loads(json.dumps(convo)),
                "tool_choice": kwargs.get("tool_choice"),
            }
        )
        try:
            create = client.chat.completions.create
            if deltas is not None:
                completion: Any = await complete(client, kwargs, deltas)
            elif is_async:
                completion = await cast("Awaitable[Any]", create(**kwargs))
            else:
                completion = await asyncio.to_thread(create, **kwargs)
        except openai.OpenAIError as exc:
            after = f" (after {attempt} invalid answer(s))" if attempt else ""
            raise LLMError(
                redact(f"the LLM request failed{after}: {type(exc).__name__}: {exc}")
            ) from None
        dumped = _dumped(completion, redact)
        record_response(dumped)
        last = dumped
        try:
            choice: dict[str, Any] = dumped["choices"][0]
            message: dict[str, Any] = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                redact("the LLM's answer holds no message (choices[0].message)")
            ) from None
        said: str | None = None
        if composed:
            (data, said), problems = _composed_answer(message)
        else:
            message = dict(message)  # (the recorded answer stays as the model sent it)
            said = read_text_calls(message, request)
            data, problems = _answer(message, request)
        if problems:
            errors = FEEDBACK_HEADER + "\n".join(problems)
        else:
            try:
                result = composition.response.model_validate(data)
            except ValidationError as exc:
                errors = retry_feedback(exc)
            else:
                # whole, or (composed) cut off inside ``calls`` and read up to its last whole call
                if said is not None:
                    record_note(said)
                if choice.get("finish_reason") != "length" or said is not None:
                    return result
        if choice.get("finish_reason") == "length":
            # cut off at max_tokens: not retried unchanged (the same answer would come back)
            errors = (
                "the answer was cut off (finish_reason 'length': the max_tokens limit was "
                "reached before the arguments were complete)"
            )
            break
        if deltas is not None:  # what this attempt streamed is void: the retry streams anew
            deltas.discard(attempt + 1, redact(errors))
        convo.extend(_retry_messages(message, redact(errors)))
    raise ResponseValidationError(
        f"the model's answer was still invalid after {attempt + 1} attempt(s) "
        f"(max_retries={max_retries}); last errors:\n{redact(errors)}",
        errors=redact(errors),
        attempts=attempt + 1,
        last_response=last,
    )


def _retry_messages(message: Mapping[str, Any], errors: str) -> list[dict[str, Any]]:
    """The invalid answer and the feedback: a tool message per call id, or a user message."""
    calls: Any = message.get("tool_calls") or []
    assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if not calls:
        return [assistant, {"role": "user", "content": errors}]
    assistant["tool_calls"] = calls
    return [
        assistant,
        *(
            {
                "role": "tool",
                "tool_call_id": str(cast("Mapping[str, Any]", c).get("id")),
                "content": errors,
            }
            for c in cast("list[Any]", calls)
        ),
    ]


def feed_back(
    convo: list[dict[str, Any]],
    raw_response: Mapping[str, Any],
    composition: Composition,
    results: Sequence[Any],
    shown: Callable[[Any], str],
) -> None:
    """Append a native step's answer (as the model gave it) and one ``tool`` message per call.

    ``results``: each call's result envelope, in the order of the model's tool calls that named
    a tool (the ``final_output`` call is the answer: it gets an acknowledgement); ``shown`` writes
    a tool message's content (secrets scrubbed)."""
    request = native_request(composition, composition.tool_choice)
    # the answer as recorded (verbatim); calls the model wrote as text are read again, alike
    message: dict[str, Any] = dict(raw_response["choices"][0]["message"])
    read_text_calls(message, request)
    calls: list[Any] = list(message.get("tool_calls") or [])
    assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if calls:
        assistant["tool_calls"] = calls
    convo.append(assistant)
    pending = list(results)
    for item in calls:
        fields = cast("Mapping[str, Any]", item)
        function = cast("Mapping[str, Any]", fields.get("function") or {})
        content: Any = {"received": True}
        if function.get("name") in request.by_function and pending:
            content = pending.pop(0)
        convo.append(
            {"role": "tool", "tool_call_id": str(fields.get("id")), "content": shown(content)}
        )


def _dumped(completion: Any, redact: Callable[[str], str]) -> dict[str, Any]:
    """The completion as JSON data.

    Raises:
        LLMError: what came is no completion (openai gives the text of a body whose content
            type is not JSON).
    """
    if isinstance(completion, str):
        raise LLMError(redact(not_a_completion(completion)))
    if isinstance(completion, dict):
        return cast("dict[str, Any]", completion)
    return cast("dict[str, Any]", completion.model_dump(mode="json"))


def not_a_completion(body: str) -> str:
    """What the LLM server sent instead of a completion (openai gives the text of a body whose
    content type is not JSON, such as a proxy's HTML error page with a 200), for ``LLMError``."""
    shown = body if len(body) <= 200 else body[:199] + "…"
    return f"the LLM server's answer is not a completion: {shown!r}"
