"""Test support: a TCP proxy on 127.0.0.1 that injects faults between a client and a real server.

``FaultProxy(upstream_port)`` forwards bytes both ways (an asyncio server in a thread of its own)
until ``fault`` is set; the fault applies to what crosses it from then on, whatever connection it
crosses (a client's kept-alive connections included):

- ``"silent"``: what the client sends is swallowed — the server never hears it, the client never
  hears back (a server that accepts and never answers);
- ``"cut"``: the next answer's headers and ``keep`` bytes of its body (at most half of what
  came) reach the client, then the connection is closed (a server that dies mid-body, or a proxy that gives up);
- ``"cut-once"``: ``"cut"`` for one answer, then ``"none"`` (a fault that does not come back);
- ``"reset"``: the request reaches the server, which does what it does; its answer is dropped
  and the client's connection reset (RST) — the server died after the effect, before the answer;
- ``drop()``: every open connection is closed (a server restarted between two calls: the
  client's kept-alive connections are dead).

``connections`` counts the connections accepted (how often the client connected).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import Literal

Fault = Literal["none", "silent", "cut", "cut-once", "reset"]


class FaultProxy:
    """A fault-injecting TCP proxy in front of ``127.0.0.1:upstream_port``."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.fault: Fault = "none"
        self.keep = 16
        self.connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def drop(self) -> None:
        """Close every open connection, both ways (the server went away between calls)."""

        def close_all() -> None:
            for writer in list(self._writers):
                writer.close()

        self._loop.call_soon_threadsafe(close_all)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))
        try:
            await asyncio.gather(
                self._requests(reader, up_writer), self._answers(up_reader, writer)
            )
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.close()

    async def _requests(self, reader: asyncio.StreamReader, up: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                if self.fault == "silent":
                    continue  # swallowed: the server never hears it
                up.write(data)
                await up.drain()
        up.close()

    async def _answers(self, up: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen = b""
        with contextlib.suppress(OSError):
            while data := await up.read(65536):
                if self.fault == "reset":
                    _reset(writer)
                    return
                if self.fault in ("cut", "cut-once"):
                    seen += data
                    end = seen.find(b"\r\n\r\n") + 4
                    if end < 4 or len(seen) == end:
                        continue  # (until the headers and some of the body have come)
                    # ``keep`` bytes of the body, at most half of what came: never all of it
                    writer.write(seen[: end + min(self.keep, (len(seen) - end) // 2)])
                    if self.fault == "cut-once":
                        self.fault = "none"
                    await writer.drain()
                    writer.close()
                    return
                writer.write(data)
                await writer.drain()
        writer.close()

    @contextmanager
    def running(self) -> Generator[FaultProxy]:
        """Serve on a free port of 127.0.0.1 for the duration of the block."""
        started = threading.Event()

        async def start() -> None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()

        thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        thread.start()
        asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        started.wait(10)
        try:
            yield self
        finally:

            async def stop() -> None:
                assert self._server is not None
                self._server.close()
                for writer in list(self._writers):
                    writer.close()  # (each pipe then reads its end and returns)
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                if tasks:
                    await asyncio.wait(tasks, timeout=2)

            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(10)
            self._loop.close()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST, not a FIN (SO_LINGER 0): the peer sees a reset connection."""
    sock: socket.socket | None = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
