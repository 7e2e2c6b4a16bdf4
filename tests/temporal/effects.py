"""Activities with a side effect: a row in a SQLite file (``$TOOLBIND_TEST_DB``).

greetUser writes its row under its call's stable key (``current_call().key``): however often it
runs, one row — exactly once. sentimentAnalysis writes a row per attempt: at least once. After
its effect each waits until the file ``$TOOLBIND_TEST_GATE`` exists, so a test can kill the worker
between the effect and the completion (the window where a lost worker makes Temporal retry).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path
from typing import Any

from toolbind.runtime.execution import current_call


def _effect(tool: str, keyed: bool) -> None:
    ctx = current_call()
    assert ctx is not None, "an Activity runs with its call's context"
    with sqlite3.connect(os.environ["TOOLBIND_TEST_DB"], timeout=30) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS effects (tool TEXT, key TEXT, attempt INTEGER, "
            "pid INTEGER, once TEXT UNIQUE)"
        )
        db.execute(
            "INSERT OR IGNORE INTO effects VALUES (?, ?, ?, ?, ?)",
            (tool, ctx.key, ctx.attempt, os.getpid(), ctx.key if keyed else None),
        )


async def _gate() -> None:
    gate = Path(os.environ["TOOLBIND_TEST_GATE"])
    while not gate.exists():
        await asyncio.sleep(0.05)


async def greet_user(call: Any) -> str:
    _effect("greetUser", keyed=True)
    await _gate()
    return f"hello {call.userName}"


async def sentiment_analysis(call: Any) -> dict[str, Any]:
    _effect("sentimentAnalysis", keyed=False)
    await _gate()
    return {"sentiment": "positive", "confidence": 0.5}


ACTIVITIES = {"greetUser": greet_user, "sentimentAnalysis": sentiment_analysis}
