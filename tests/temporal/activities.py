"""Activities of the mixed run (explicit, latent, pending) — in process and on Temporal workers.

weatherCheck is an async generator (a progress item, then its result), sendEmail answers later
(``Pending``: its result is submitted through ``POST /runs/{run_id}/tool-results``) and
sentimentAnalysis has no Activity (latent: the model's ``_output`` is its result).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from toolbind.runtime import Pending


async def weather_check(call: Any) -> AsyncIterator[dict[str, Any]]:
    yield {"stage": f"looking up {call.location}"}
    yield {"temperature": 21.5, "conditions": f"sunny in {call.location}"}


def send_email(call: Any) -> Pending:
    return Pending(ttl=120)


ACTIVITIES = {"weatherCheck": weather_check, "sendEmail": send_email}
