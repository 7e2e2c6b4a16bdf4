"""Test support: a real HTTP server speaking the OpenAI chat-completions protocol, from a script.

``ScriptedLLM`` is an ASGI app (Starlette) serving ``POST /v1/chat/completions``. Each request
takes the next entry of the script: a tool call (the arguments as a dict, or any raw string to
inject invalid JSON), plain text, an HTTP error, a slow reply (to trip the client's timeout), or a
raw response body (any bytes: a completion of the wrong shape, not JSON at all), or several native
tool calls at once (``tools``: parallel calls, with text beside them or not). A request with
``"stream": true`` gets the same answer as server-sent ``chat.completion.chunk`` events: the text
and each call's arguments cut into ``chunk``-character deltas, as providers stream them.
Every request body is recorded, so tests assert how many LLM requests were made and what was sent
back to the model (e.g. the validation errors of a retry). Serve it with ``serve_asgi``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer."""

    arguments: Any = None  # dict → JSON-encoded tool-call arguments; str → sent verbatim
    name: str | None = None  # the function name; default: the one the request forces
    text: str | None = None  # a plain assistant message instead of a tool call
    status: int = 200  # an HTTP error when not 200
    delay: float = 0.0  # seconds to wait before answering
    raw: bytes | None = None  # the whole response body, sent verbatim (with ``status``)
    finish_reason: str | None = None  # default: "tool_calls" for a tool call, else "stop"
    tools: tuple[tuple[str, Any], ...] | None = None  # native calls: (function name, arguments)
    chunk: int = 8  # characters per streamed delta
    media_type: str = "application/json"  # the content type of a ``raw`` body


def tools(*calls: tuple[str, Any], text: str | None = None, chunk: int = 8) -> Reply:
    """Native tool calls, in parallel: ``(function name, arguments)`` each (text beside them)."""
    return Reply(tools=calls, text=text, chunk=chunk)


def call(arguments: Any, *, name: str | None = None, delay: float = 0.0) -> Reply:
    """A tool call whose arguments are ``arguments`` (a dict, or a raw string)."""
    return Reply(arguments=arguments, name=name, delay=delay)


def error(status: int = 500) -> Reply:
    """An HTTP error reply."""
    return Reply(status=status)


def raw(body: bytes | str, *, status: int = 200, media_type: str = "application/json") -> Reply:
    """A response body sent verbatim (``application/json`` content type unless ``media_type``
    says another, whatever it holds)."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(raw=data, status=status, media_type=media_type)


class ScriptedLLM:
    """The scripted server; ``requests`` holds every JSON body received, in order."""

    def __init__(self, *script: Reply) -> None:
        self.script: deque[Reply] = deque(script)
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self.script.extend(replies)

    def tool_messages(self, index: int) -> list[dict[str, Any]]:
        """The ``tool`` role messages of the ``index``-th request."""
        return [m for m in self.requests[index]["messages"] if m.get("role") == "tool"]

    async def _chat(self, request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        self.requests.append(body)
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        reply = self.script.popleft()
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.raw is not None:
            return Response(reply.raw, status_code=reply.status, media_type=reply.media_type)
        if reply.status != 200:
            return JSONResponse(
                {"error": {"message": f"scripted {reply.status}", "type": "server_error"}},
                status_code=reply.status,
            )
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tools is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(reply.tools)
            ] or None
        elif reply.text is None:
            forced: Any = body.get("tool_choice")
            name: str = reply.name or (
                str(cast("Any", forced)["function"]["name"])
                if isinstance(forced, dict)
                else "Response"
            )
            args = (
                reply.arguments if isinstance(reply.arguments, str) else json.dumps(reply.arguments)
            )
            message["tool_calls"] = [
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
            ]
        finish = reply.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
        if body.get("stream"):
            return StreamingResponse(
                _chunks(n, body.get("model", "scripted"), message, finish, reply.chunk),
                media_type="text/event-stream",
            )
        return JSONResponse(
            {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": finish,
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


async def _chunks(
    n: int, model: str, message: dict[str, Any], finish: str, size: int
) -> AsyncIterator[str]:
    """``message`` as OpenAI streams it: a role delta, the content and each tool call's arguments
    in ``size``-character pieces (a call's id and name in its first delta), the finish reason,
    the usage, then ``[DONE]``."""

    def event(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
        chunk = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    text: str = message.get("content") or ""
    for start in range(0, len(text), size):
        yield event({"content": text[start : start + size]})
        await asyncio.sleep(0)
    for index, item in enumerate(cast("list[dict[str, Any]]", message.get("tool_calls") or [])):
        function = item["function"]
        yield event(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": item["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        arguments: str = function["arguments"]
        for start in range(0, len(arguments), size):
            piece = arguments[start : start + size]
            yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            await asyncio.sleep(0)
    yield event({}, finish)
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    yield f"data: {json.dumps({'id': f'chatcmpl-{n}', 'object': 'chat.completion.chunk', 'created': 0, 'model': model, 'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"
