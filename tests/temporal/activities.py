"""Activities of the mixed run (explicit, latent, pending) — in process and on Temporal workers.

weatherCheck is an async generator (a progress item, then its result) that takes the
``ActivityContext`` (its step and tool in the progress item: the same in process and on a worker);
with ``$TOOLBIND_TEST_PROGRESS_GATE`` set it waits (30 s at most) after its first item until that
file exists, and says whether it did (the live-progress tests),
sendEmail answers later
(``Pending``: its result is submitted through ``POST /runs/{run_id}/tool-results``) and
sentimentAnalysis has no Activity (latent: the model's ``_output`` is its result). greetUser runs
until it is cancelled.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from toolbind.runtime import ActivityContext
from toolbind.runtime.pending import Pending


async def weather_check(call: Any, ctx: ActivityContext[Any]) -> AsyncIterator[dict[str, Any]]:
    yield {"stage": f"looking up {call.location}", "tool": ctx.tool, "step": ctx.step}
    gate = os.environ.get("TOOLBIND_TEST_PROGRESS_GATE")
    if gate:  # the live-progress tests: the client opens it when it has seen the item above
        for _ in range(600):
            if Path(gate).exists():
                break
            await asyncio.sleep(0.05)
        yield {"gate": "opened" if Path(gate).exists() else "still shut"}
    yield {"temperature": 21.5, "conditions": f"sunny in {call.location}"}


def send_email(call: Any) -> Pending:
    return Pending(ttl=120)


async def greet_user(call: Any) -> str:
    """Runs until cancelled (the cancellation test): says it started, and that it was cancelled."""
    Path(os.environ["TOOLBIND_TEST_STARTED"]).touch()
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        Path(os.environ["TOOLBIND_TEST_CANCELLED"]).touch()
        raise
    return "never"


ACTIVITIES = {"weatherCheck": weather_check, "sendEmail": send_email, "greetUser": greet_user}
