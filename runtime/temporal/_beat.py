"""toolbind.runtime.temporal, runtime layer (imports only temporalio's activity API): the heartbeat
an activity sends while it works, so the server notices a lost worker within the heartbeat timeout
instead of the start-to-close one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import timedelta

from temporalio import activity


async def beat(info: activity.Info) -> None:
    """Heartbeat every third of the heartbeat timeout, until cancelled."""
    period = max(0.2, (info.heartbeat_timeout or timedelta(seconds=30)).total_seconds() / 3)
    while True:
        await asyncio.sleep(period)
        activity.heartbeat()


@asynccontextmanager
async def heartbeating() -> AsyncGenerator[None]:
    """Heartbeat in the background while the block runs (the block's own awaits, such as a model
    request, send none)."""
    task = asyncio.create_task(beat(activity.info()))
    try:
        yield
    finally:
        task.cancel()
