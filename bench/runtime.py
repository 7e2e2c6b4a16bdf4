"""Runtime benchmark: the Agent's per-step overhead (excluding the LLM) vs jsonschema, same run.

One step's work besides the LLM request, for a response with 10 calls over the seeds' 4 tools
(``generated/seeds``: 4 weatherCheck, 2 sendEmail, 2 greetUser — explicit, trivial async
Activities — and 2 sentimentAnalysis — latent, with ``_output``):

* toolbind: ``agent.composition()`` (the composed schema and Response type, cached per tool set
  as in a real run), ``Response.model_validate_json(payload)`` (typed Calls, latent ``_output``
  check) and dispatching the 10 calls (routing, concurrent Activity execution, ToolResult
  envelopes, events) — what ``Agent.arun`` does per step around the LLM call.
* jsonschema: ``validator_for(composed)(composed)`` built once (untimed), then
  ``validator.is_valid(json.loads(payload))`` — validation only, no dispatch.

Also printed: a cold ``compose`` (schema + Response type built from scratch, the first step's
cost). Best of ``--repeat`` rounds of ``--number`` steps; ratios are toolbind / jsonschema.

Run: ``.venv/bin/python bench/runtime.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import jsonschema

from toolbind.compiler import load_package
from toolbind.runtime import ActivityRegistry, Agent, ToolRegistry, compose

ROOT = Path(__file__).resolve().parent.parent


async def weather(call: Any) -> dict[str, Any]:
    return {"temperature": 20, "conditions": call.location}


async def send(call: Any) -> dict[str, Any]:
    return {"sent": True}


async def greet(call: Any) -> str:
    return f"hello {call.userName}"


def payload() -> str:
    calls: list[dict[str, Any]] = []
    for city in ("Paris", "Oslo", "Lima", "Pune"):
        calls.append({"_tool": "weatherCheck", "location": city, "_reasoningForCall": "asked"})
    for who in ("a@b.c", "d@e.f"):
        calls.append({"_tool": "sendEmail", "recipient": who, "subject": "Hi"})
    for name in ("Ann", "Bob"):
        calls.append({"_tool": "greetUser", "userName": name})
    for text in ("great", "awful"):
        calls.append(
            {
                "_tool": "sentimentAnalysis",
                "text": text,
                "_output": {"sentiment": text, "confidence": 0.5},
            }
        )
    return json.dumps({"output": None, "calls": calls})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    seeds = load_package(ROOT / "generated", "seeds")
    tools = ToolRegistry(seeds.TOOLS)
    activities = ActivityRegistry({"weatherCheck": weather, "sendEmail": send, "greetUser": greet})
    # the URL is never contacted: the bench times everything around the LLM request
    agent = Agent("http://127.0.0.1:9/v1", model="none", tools=tools, activities=activities)
    data = payload()
    composed = agent.composition()
    validator_cls = jsonschema.validators.validator_for(composed)
    validator_cls.check_schema(composed)
    validator = validator_cls(composed)
    assert validator.is_valid(json.loads(data)), "the payload must be valid for the peer"

    async def step() -> list[Any]:
        response = agent.composition().response.model_validate_json(data)
        return await agent._execute("bench", 0, "call", response, lambda event: None)  # pyright: ignore[reportPrivateUsage]

    async def steps(n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            records = await step()
            assert len(records) == 10 and all(r.result.success for r in records)
        return time.perf_counter() - started

    def best_async() -> float:
        return min(asyncio.run(steps(args.number)) for _ in range(args.repeat)) / args.number

    def best(fn: Any) -> float:
        return min(timeit.repeat(fn, number=args.number, repeat=args.repeat)) / args.number

    toolbind_step = best_async()
    peer = best(lambda: validator.is_valid(json.loads(data)))
    validate_only = best(lambda: agent.composition().response.model_validate_json(data))
    cold = best(
        lambda: compose(tools, activities={"weatherCheck", "sendEmail", "greetUser"}).response
    )

    print(f"python {sys.version.split()[0]}, {args.repeat}×{args.number} steps, best round")
    print(f"{'':44} {'µs/step':>10} {'vs jsonschema':>14}")
    rows = [
        ("toolbind step (compose+validate+dispatch 10)", toolbind_step),
        ("toolbind validate only (cached compose)", validate_only),
        ("toolbind cold compose (schema + Response)", cold),
        ("jsonschema is_valid (compiled once)", peer),
    ]
    for label, seconds in rows:
        print(f"{label:44} {seconds * 1e6:>10.1f} {seconds / peer:>13.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
