"""Fixtures of the runtime tests: the scripted OpenAI-protocol server and the seeds' package."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests._servers import serve_asgi
from tests.conftest import REPO
from tests.scripted_llm import ScriptedLLM
from toolbind.compiler import load_package


@pytest.fixture
def llm() -> Iterator[tuple[ScriptedLLM, str]]:
    """A scripted LLM server on 127.0.0.1 and its OpenAI base URL."""
    server = ScriptedLLM()
    with serve_asgi(server.app) as url:
        yield server, f"{url}/v1"


@pytest.fixture(scope="module")
def seeds() -> ModuleType:
    """The seeds' generated package (``generated/seeds``)."""
    return load_package(REPO / "generated", "seeds")


def weather(call: Any) -> dict[str, Any]:
    return {"temperature": 21.5, "conditions": f"sunny in {call.location}"}


def sent(call: Any) -> dict[str, Any]:
    return {"sent": True}


ACTIVITIES = {"weatherCheck": weather, "sendEmail": sent}
"""Activities for two of the seeds' tools (the other two stay latent)."""
