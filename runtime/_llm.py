"""Runtime layer: the model call — the LLM client an Agent talks to, one instructor request, and
the mapping of the client's failures onto ``LLMError`` / ``ResponseValidationError``.

Imports ``_events``, ``_response`` (a cut-off answer's complete calls: ``salvage``), ``_secrets``,
``errors``; ``instructor`` and ``openai`` when a client is built,
``_native`` (and through it ``_stream``) for a native or streamed request.
The loop (``_agent``) composes the Response model and the messages; ``InstructorModel.ask`` sends
them (validation retries with the errors fed back are instructor's), records every request and
raw response in the ``Step`` and returns the validated Response. ``ask_native`` sends the same
composition the provider's way (each tool its own function: ``Agent(mode="native")``), or streams
a composed one (``Agent.astream``): the raw OpenAI-protocol client, the same Response model.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import ValidationError

from ._events import Step
from ._response import retry_feedback, salvage
from .errors import AgentError, LLMError, ResponseValidationError, UsageError
from .types import ToolResponse

if TYPE_CHECKING:
    import instructor

    from ._response import Composition
    from ._secrets import Redactor
    from ._stream import Emit


class ModelCall(Protocol):
    """One validated LLM request of a step (what the loop needs of the model side)."""

    async def ask(
        self,
        messages: list[dict[str, Any]],
        response_model: type[ToolResponse[Any, Any]],
        step: Step,
        *,
        model: str,
        max_retries: int,
        request_kwargs: dict[str, Any],
    ) -> ToolResponse[Any, Any]: ...

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
    ) -> ToolResponse[Any, Any]: ...

    @property
    def streams(self) -> bool:
        """Whether ``ask_native`` can stream (an async client)."""
        ...

    async def aclose(self) -> None: ...


class InstructorModel:
    """The model through instructor: a base URL (the client is built per event loop and closed
    by ``aclose``), an ``openai`` client, or an instructor client (see ``Agent``'s ``client``)."""

    def __init__(
        self,
        client: str | Any,
        *,
        mode: instructor.Mode | None = None,
        timeout: float = 60.0,
        http_retries: int = 2,
        api_key: str | None = None,
    ) -> None:
        import instructor as _instructor
        import openai

        from ._secrets import Redactor

        chosen = mode if mode is not None else _instructor.Mode.TOOLS
        self._mode = chosen
        raw: Any = client
        # a client built from a URL is the Agent's own: made in the event loop that uses it
        # (httpx connections belong to one loop) and closed by ``aclose`` / after each sync call
        self._owned: dict[str, Any] | None = None
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._async = True
        self.redact: Redactor = Redactor()
        if isinstance(raw, str):
            key = api_key or os.environ.get("OPENAI_API_KEY")
            self._owned = {
                "base_url": raw,
                "api_key": key or "not-needed",
                "timeout": timeout,
                "max_retries": http_retries,
            }
            if key:
                self.redact.add(key)
        elif isinstance(raw, _instructor.AsyncInstructor):
            self._client = raw
        elif isinstance(raw, _instructor.Instructor):
            self._client, self._async = raw, False
        elif isinstance(raw, openai.AsyncOpenAI):
            self._client = _instructor.from_openai(raw, mode=chosen)
        elif isinstance(raw, openai.OpenAI):
            self._client, self._async = _instructor.from_openai(raw, mode=chosen), False
        else:
            raise TypeError(
                "Agent(client=...): expected a base URL, an openai client or an instructor "
                f"client, found {type(raw).__name__}"
            )
        given_key = getattr(getattr(raw, "client", raw), "api_key", None)  # a client passed in
        if isinstance(given_key, str):
            self.redact.add(given_key)

    def _instructor(self) -> Any:
        if self._owned is None:
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            import instructor as _instructor
            import openai

            raw = openai.AsyncOpenAI(**self._owned)
            self._client, self._client_loop = _instructor.from_openai(raw, mode=self._mode), loop
        return self._client

    @property
    def streams(self) -> bool:
        """Whether a request can be streamed: only through an async client."""
        return self._async

    async def aclose(self) -> None:
        """Close the client built from a URL (a no-op for clients passed in)."""
        if self._owned is not None and self._client is not None:
            client, self._client, self._client_loop = self._client, None, None
            await client.client.close()

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
        """The validated Response; every request and raw response is recorded in ``step``.

        Raises:
            ResponseValidationError: the answers stayed invalid after ``max_retries`` retries.
            LLMError: the request failed (HTTP error, timeout, not a completion).
        """
        from instructor.core.exceptions import (
            IncompleteOutputException,
            InstructorError,
            InstructorRetryException,
        )

        recorder = _Recorder(step, response_model, self.redact)
        create: Callable[..., Any] = self._instructor().create
        self.redact.scrub_logs()  # the loggers instructor made when wrapping the client
        kwargs: dict[str, Any] = {
            "messages": messages,
            "response_model": response_model,
            "max_retries": max_retries,
            # None, not False: a validate-time strict=False would override the models' field-level
            # Strict() and coerce "1" or true to an integer; the models are as strict as their schemas
            "strict": None,
            "hooks": recorder.hooks(),
            "model": model,
            **request_kwargs,
        }
        redact = self.redact
        failure: AgentError
        try:
            if self._async:
                result = await cast("Awaitable[Any]", create(**kwargs))
            else:
                result = await asyncio.to_thread(create, **kwargs)
            return cast("ToolResponse[Any, Any]", result)
        except InstructorRetryException as exc:
            failure = _retry_failure(exc, recorder, max_retries, redact)
        except IncompleteOutputException as exc:
            # the completion was cut off (finish_reason "length"): an answer, but not a whole one;
            # if it was cut inside ``calls``, its complete calls are the answer (``_salvage``)
            last_completion: Any = exc.last_completion
            salvaged = _read_as_meant(last_completion, response_model, step)
            if salvaged is not None:
                return salvaged
            errors = (
                "the answer was cut off (finish_reason 'length': the max_tokens limit was "
                "reached before the arguments were complete)"
            )
            failure = ResponseValidationError(
                f"the model's answer was incomplete; {errors}",
                errors=errors,
                attempts=max(1, len(step.requests)),
                last_response=(
                    _scrub(_dump(last_completion), redact) if last_completion is not None else None
                ),
            )
        except InstructorError as exc:
            failure = LLMError(redact(f"the LLM request failed: {type(exc).__name__}: {exc}"))
        # raised outside the except blocks: no __context__ keeps the client's exception (whose
        # text may hold what a server echoed, the API key included)
        raise failure

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
        """The validated Response of a native request (``step.mode == "native"``: each tool its
        own function) or of a streamed composed one (``emit`` told each delta); recorded in
        ``step`` like ``ask``'s. ``agent_mode``: the Agent's ``mode``, for the error message.

        Raises:
            UsageError: the client is not an OpenAI-protocol one.
            ResponseValidationError, LLMError: as for ``ask``.
        """
        from . import _native

        client: Any = getattr(self._instructor(), "client", None)
        if getattr(getattr(client, "chat", None), "completions", None) is None:
            raise UsageError(
                f"Agent(mode={agent_mode!r}) needs an OpenAI-protocol client (a base URL, an "
                "openai client or instructor.from_openai(...))"
            )
        self.redact.scrub_logs()
        return await _native.ask(
            client=client,
            is_async=self._async,
            model=model,
            messages=messages,
            composition=composition,
            tool_choice=tool_choice,
            max_retries=max_retries,
            request_kwargs=request_kwargs,
            record_request=step.requests.append,
            record_response=lambda r: step.raw_responses.append(_scrub(r, self.redact)),
            redact=self.redact,
            composed=step.mode == "composed",
            emit=emit,
            record_note=step.notes.append,
        )


class _Recorder:
    """instructor's hooks for one ``ask``: each request and raw response recorded in the step,
    and whether the latest request got a completion back (else the request failed, not the
    model)."""

    def __init__(
        self, step: Step, response_model: type[ToolResponse[Any, Any]], redact: Any
    ) -> None:
        self.step, self.response_model, self.redact = step, response_model, redact
        self.answered = False
        self.not_completion: list[str] = []  # bodies that came back instead of one

    def hooks(self) -> Any:
        from instructor.core.hooks import HookName, Hooks

        hooks = Hooks()
        _say_retries_briefly(hooks)  # first: the requests are recorded as they are sent
        hooks.on(HookName.COMPLETION_KWARGS, self.on_kwargs)
        hooks.on(HookName.COMPLETION_RESPONSE, self.on_response)
        return hooks

    def on_kwargs(self, *args: Any, **kwargs: Any) -> None:
        self.answered = False
        # what went to the model (never the client's credentials: they are not kwargs)
        self.step.requests.append(
            {
                k: copy.deepcopy(kwargs[k])
                for k in ("model", "messages", "tool_choice")
                if k in kwargs
            }
        )

    def on_response(self, response: Any) -> None:
        # openai hands back the body's text when its content type is not JSON (an HTML error
        # page with a 200): no completion came, so the request failed (not the model)
        self.answered = not isinstance(response, str)
        if isinstance(response, str):
            self.not_completion.append(response)
        self.step.raw_responses.append(_scrub(_dump(response), self.redact))
        # an answer that is not strict JSON but has one meaning — cut off inside ``calls``
        # (llama-cpp-python says "tool_calls", not "length"), raw newlines in strings:
        # instructor parses what it meant instead of retrying (``_salvage``)
        if _finish_reason(response) != "length":
            _read_as_meant(response, self.response_model, self.step)


def _retry_failure(exc: Any, recorder: _Recorder, max_retries: int, redact: Any) -> AgentError:
    """What instructor's giving up means: the request failed (no completion came back: an HTTP
    error, a timeout, a body that is no completion — maybe after invalid answers), or the
    model's answers stayed invalid."""
    failed = list(exc.failed_attempts or [])
    cause = exc.__cause__ or exc
    if not recorder.answered and recorder.not_completion:
        from ._native import not_a_completion

        return LLMError(redact(not_a_completion(recorder.not_completion[-1])))
    if not recorder.answered or not failed:
        after = f" (after {len(failed)} invalid answer(s))" if failed else ""
        return LLMError(redact(f"the LLM request failed{after}: {type(cause).__name__}: {cause}"))
    last = failed[-1]
    errors = redact(retry_feedback(last.exception))
    return ResponseValidationError(
        f"the model's answer was still invalid after {len(failed)} attempt(s) "
        f"(max_retries={max_retries}); last errors:\n{errors}",
        errors=errors,
        attempts=len(failed),
        last_response=(
            _scrub(_dump(last.completion), redact) if last.completion is not None else None
        ),
    )


def _say_retries_briefly(hooks: Any) -> None:
    """Make each retry's feedback the model reads ours (``retry_feedback``: the problems, where,
    what was given), not instructor's message, which wraps pydantic's rendering of the error
    (its error count, type names, input dump and a documentation URL)."""
    from instructor.core.hooks import HookName

    said: dict[str, str] = {}  # instructor's text of each invalid answer's error → ours

    def on_parse_error(error: Exception, *args: Any, **kwargs: Any) -> None:
        said[str(error)] = retry_feedback(error)

    def on_kwargs(*args: Any, **kwargs: Any) -> None:
        _reworded(kwargs.get("messages"), said)

    hooks.on(HookName.PARSE_ERROR, on_parse_error)
    hooks.on(HookName.COMPLETION_KWARGS, on_kwargs)


def _reworded(messages: Any, said: Mapping[str, str]) -> None:
    """Each message of ``messages`` (a request's, about to be sent) that holds the text of an
    error in ``said`` replaced by the feedback ``said`` maps it to."""
    if not said or not isinstance(messages, list):
        return
    for message in cast("list[Any]", messages):
        if not isinstance(message, dict):
            continue
        fields = cast("dict[str, Any]", message)
        content = fields.get("content")
        if isinstance(content, str):
            for raw, ours in said.items():
                if raw in content:
                    fields["content"] = ours
                    break


def _arguments(completion: Any) -> str | None:
    """The arguments text of a completion's first tool call, if it has one."""
    try:
        text: Any = completion.choices[0].message.tool_calls[0].function.arguments
    except (AttributeError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) else None


def _finish_reason(completion: Any) -> Any:
    try:
        return completion.choices[0].finish_reason
    except (AttributeError, IndexError, TypeError):
        return None


def _read_as_meant(
    completion: Any, response_model: type[ToolResponse[Any, Any]], step: Step
) -> ToolResponse[Any, Any] | None:
    """If ``completion``'s composed answer is not strict JSON but ``salvage`` reads it (raw
    control characters in strings; cut off inside ``calls``: its complete calls) as a valid
    answer, put that in its place (what instructor then parses), note it on ``step`` and return
    the validated Response; else None. What still fails validation is left as it came: its own
    error goes back."""
    text = _arguments(completion)
    salvaged = None if text is None else salvage(text)
    if salvaged is None:
        return None
    data, said = salvaged
    try:
        result = response_model.model_validate(data)
    except ValidationError:
        return None
    completion.choices[0].message.tool_calls[0].function.arguments = json.dumps(data)
    step.notes.append(said)
    return result


def _scrub(value: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """``value`` (a JSON-ready dump) with every secret ``redact`` knows replaced."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return {"repr": redact(repr(value))}
    clean = redact(text)
    return value if clean == text else cast("dict[str, Any]", json.loads(clean))


def _dump(response: Any) -> dict[str, Any]:
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(mode="json"))
    return {"repr": repr(response)}
