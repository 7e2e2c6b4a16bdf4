"""Runtime layer: streamed completions — deltas read as they arrive. Imports ``jiter`` (pydantic's
JSON parser, partial mode), the kernel's ``contract`` and the ``openai`` client the Agent holds.

``complete`` sends one chat-completions request with ``stream=True`` and rebuilds the whole
message from the chunks (content, and each tool call's id, name and arguments by index), calling
``on_delta`` as each piece arrives. ``Deltas`` turns the pieces into the Agent's events:

* native (a function per tool): content pieces are ``text-delta``; a tool call's first piece is
  ``tool-call.start``, every arguments piece a ``tool-input-delta`` carrying the piece and the
  arguments so far, parsed partially (``{"location": "Par"}``);
* composed (one ``Response`` function): its arguments are parsed partially as they grow — each
  call of ``calls`` gets ``tool-call.start`` once its tool's name is written (under the key the
  model was offered: ``_tool`` or the Agent's ``call_tag``), then a ``tool-input-delta`` whenever
  its arguments grow (the meta fields and that key left out); the text of ``output`` gives
  ``text-delta``s.

The partial arguments are the tool's parameters only, in both modes: the keys the validated
call's arguments hold (no meta field; a latent call's ``_output`` is its result, told with it). The
validated call comes after (the Agent's ``tool-input-delta`` with the whole arguments under
``arguments``, then ``tool-call.complete``/``error``): a consumer sees partial arguments before the
call completes. A refused answer that is retried ends with ``attempt.discarded`` (``discard``): what
it streamed is void, and the retry streams its calls from their start under the same ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

import jiter

from toolbind.contract import META_FIELDS

__all__ = ["Deltas", "Emit", "complete"]

Emit = Callable[[str, int | None, str | None, Any], None]
"""``emit(event type, call index or None, tool or None, data)``."""


def _partial(text: str, *, strings: bool = True) -> Any:
    """``text`` (JSON cut anywhere) parsed as far as it goes (a string being written kept as
    far as it goes, or left out without ``strings``); None before the first value."""
    try:
        return jiter.from_json(text.encode(), partial_mode="trailing-strings" if strings else "on")
    except ValueError:
        return None


class Deltas:
    """Turns streamed pieces into events (see the module docstring)."""

    def __init__(
        self,
        emit: Emit,
        *,
        composed: bool,
        tool_of: Callable[[str], str | None],
        tag: str = "_tool",
    ) -> None:
        self.emit = emit
        self.composed = composed
        self.tag = tag  # the key a composed call names its tool under
        self.tool_of = tool_of  # a function or ``_tool`` name → the tool's name (None: not a tool)
        self._text = 0  # characters of text told so far
        self._started: dict[int, str] = {}  # call index → tool
        self._told: dict[int, str] = {}  # call index → the arguments last told (JSON)
        self._native_index: dict[int, int] = {}  # a tool call's stream index → its call index

    def discard(self, attempt: int, errors: str) -> None:
        """The answer streamed so far was refused and the model is asked again: one
        ``attempt.discarded`` event (what it streamed is void: its text, its calls' starts and
        arguments), then the next attempt's calls start anew under the same ids."""
        self.emit("attempt.discarded", None, None, {"attempt": attempt, "errors": errors})
        self._text = 0
        self._started.clear()
        self._told.clear()
        self._native_index.clear()

    def content(self, piece: str) -> None:
        if piece and not self.composed:
            self.emit("text-delta", None, None, {"delta": piece})

    def arguments(self, index: int, name: str | None, piece: str, so_far: str) -> None:
        if self.composed:
            self._composed(so_far)
            return
        tool = self.tool_of(name or "")
        if tool is None:  # the final output's function, or a name that is no tool
            return
        call = self._native_index.setdefault(index, len(self._native_index))
        if call not in self._started:
            self._started[call] = tool
            self.emit("tool-call.start", call, tool, {"streaming": True})
        if piece:
            partial: Any = _partial(so_far)
            arguments = (
                _arguments(cast("dict[str, Any]", partial), None)  # a native call has no tag
                if isinstance(partial, dict)
                else {}
            )
            self.emit("tool-input-delta", call, tool, {"delta": piece, "partial": arguments})

    def _composed(self, so_far: str) -> None:
        data = _partial(so_far)
        if not isinstance(data, dict):
            return
        answer = cast("dict[str, Any]", data)
        whole: Any = _partial(so_far, strings=False)  # the strings written to their end
        calls: Any = answer.get("calls")
        items = cast("list[Any]", calls) if isinstance(calls, list) else []
        done: Any = cast("dict[str, Any]", whole).get("calls") if isinstance(whole, dict) else None
        names = [
            _tool_named(cast("dict[str, Any]", c), self.tag) if isinstance(c, dict) else None
            for c in (cast("list[Any]", done) if isinstance(done, list) else [])
        ]
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            call = cast("dict[str, Any]", item)
            named: Any = names[i] if i < len(names) else None
            if not isinstance(named, str):
                continue  # the tool's name is still being written
            tool = self.tool_of(named) or named
            if i not in self._started:
                self._started[i] = tool
                self.emit("tool-call.start", i, tool, {"streaming": True})
            arguments = _arguments(call, self.tag)
            told = json.dumps(arguments, sort_keys=True)
            if arguments and told != self._told.get(i):
                self._told[i] = told
                self.emit("tool-input-delta", i, tool, {"partial": arguments})
        output: Any = answer.get("output")
        if isinstance(output, str) and len(output) > self._text:
            self.emit("text-delta", None, None, {"delta": output[self._text :]})
            self._text = len(output)


def _arguments(call: dict[str, Any], tag: str | None) -> dict[str, Any]:
    """A call's arguments as far as they are written: its tool's parameters, the keys the
    validated call's ``arguments`` hold — never a meta field (a latent call's ``_output`` is its
    result, told with the result) nor the key a composed call names its tool under."""
    return {k: v for k, v in call.items() if k not in META_FIELDS and k != tag}


def _tool_named(call: dict[str, Any], tag: str) -> Any:
    """The tool a composed call names: under ``tag``, else ``_tool`` (read back alike)."""
    return call[tag] if tag in call else call.get("_tool")


async def complete(client: Any, kwargs: Mapping[str, Any], deltas: Deltas) -> dict[str, Any]:
    """One streamed request; the completion rebuilt as a non-streamed one would read."""
    import openai

    try:  # the usage comes in a last chunk only when asked for
        stream: Any = await client.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
    except openai.BadRequestError:  # a server that does not know stream_options
        stream = await client.chat.completions.create(**kwargs, stream=True)
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: Any = None
    ident = ""
    async for chunk in stream:
        dumped: dict[str, Any] = chunk.model_dump(mode="json")
        ident = dumped.get("id") or ident
        usage = dumped.get("usage") or usage
        for choice in cast("list[dict[str, Any]]", dumped.get("choices") or []):
            finish = choice.get("finish_reason") or finish
            delta: dict[str, Any] = choice.get("delta") or {}
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                content.append(piece)
                deltas.content(piece)
            for item in cast("list[dict[str, Any]]", delta.get("tool_calls") or []):
                index = int(item.get("index") or 0)
                call = calls.setdefault(
                    index,
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = item.get("id") or call["id"]
                function: dict[str, Any] = item.get("function") or {}
                named: str = function.get("name") or ""
                if named != call["function"]["name"]:  # llama-cpp-python repeats it every chunk
                    call["function"]["name"] += named
                added: str = function.get("arguments") or ""
                call["function"]["arguments"] += added
                deltas.arguments(
                    index, call["function"]["name"], added, call["function"]["arguments"]
                )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": ident,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }
