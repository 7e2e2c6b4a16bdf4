"""The Activity of bench/temporal.py: 20 ms of simulated I/O (in process and on the workers)."""

from __future__ import annotations

import asyncio
from typing import Any


async def weather_check(call: Any) -> dict[str, Any]:
    await asyncio.sleep(0.02)
    return {"temperature": 20.0, "conditions": f"fine in {call.location}"}


ACTIVITIES = {"weatherCheck": weather_check}
