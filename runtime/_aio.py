"""Runtime layer: asyncio helpers shared by the Agent loop and the MCP client. Imports nothing
of toolbind."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

T = TypeVar("T")


async def drain(queue: asyncio.Queue[T], task: asyncio.Task[Any]) -> AsyncIterator[T]:
    """The items ``task`` puts on ``queue`` while it runs, then what is left on it (the task's
    outcome is left to read); a consumer that stops listening cancels the task."""
    try:
        while True:
            getter = asyncio.create_task(queue.get())
            done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
                continue
            getter.cancel()
            break
        while not queue.empty():
            yield queue.get_nowait()
    finally:
        if not task.done():  # the consumer stopped listening: stop the work too
            task.cancel()
