"""The Activity of bench/temporal.py: ``$TOOLBIND_BENCH_IO_MS`` (20) ms of simulated I/O (in process and
on the workers)."""

from __future__ import annotations

import asyncio
import os
from typing import Any


async def weather_check(call: Any) -> dict[str, Any]:
    await asyncio.sleep(float(os.environ.get("TOOLBIND_BENCH_IO_MS", "20")) / 1000)
    return {"temperature": 20.0, "conditions": f"fine in {call.location}"}


ACTIVITIES = {"weatherCheck": weather_check}
