"""Test support: a real HTTP server speaking the OpenAI chat-completions protocol, from a script.

``ScriptedLLM`` is an ASGI app (Starlette) serving ``POST /v1/chat/completions``. Each request
takes the next entry of the script: a tool call (the arguments as a dict, or any raw string to
inject invalid JSON), plain text, an HTTP error, a slow reply (to trip the client's timeout), or a
raw response body (any bytes: a completion of the wrong shape, not JSON at all).
Every request body is recorded, so tests assert how many LLM requests were made and what was sent
back to the model (e.g. the validation errors of a retry). Serve it with ``serve_asgi``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from dataclasses import dataclass
from typing import Any, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
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


def call(arguments: Any, *, name: str | None = None, delay: float = 0.0) -> Reply:
    """A tool call whose arguments are ``arguments`` (a dict, or a raw string)."""
    return Reply(arguments=arguments, name=name, delay=delay)


def error(status: int = 500) -> Reply:
    """An HTTP error reply."""
    return Reply(status=status)


def raw(body: bytes | str, *, status: int = 200) -> Reply:
    """A response body sent verbatim (``application/json`` content type, whatever it holds)."""
    return Reply(raw=body.encode() if isinstance(body, str) else body, status=status)


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
            return Response(reply.raw, status_code=reply.status, media_type="application/json")
        if reply.status != 200:
            return JSONResponse(
                {"error": {"message": f"scripted {reply.status}", "type": "server_error"}},
                status_code=reply.status,
            )
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.text is None:
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
                        "finish_reason": reply.finish_reason
                        or ("tool_calls" if reply.text is None else "stop"),
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )
