"""Demo: the seeds' tools through ``Agent.run`` against a real local model (``make demo``).

Imports ``toolbind.runtime`` (never the compiler: the tools come from the generated ``seeds``
package), httpx, uvicorn and ``demo.llm_server``. Run from the repository root:
``.venv/bin/python -m demo.run`` (after ``make llm``).

What happens:

1. llama.cpp's OpenAI-compatible server starts with the local model (``demo/llm_server.py``):
   Qwen2.5-Coder-0.5B-Instruct, or SmolLM2-135M-Instruct with ``--model smollm2``.
2. The pending store (SQLite, in a temporary directory) is served over HTTP by ``pending_app``
   (uvicorn on 127.0.0.1, a free port): ``POST /runs/{run_id}/tool-results``.
3. ``Agent.astream`` — step "act", ``tool_choice="required"`` (calls, no output): the model's
   answer streams in; each call's partial arguments are printed as they are generated, then the
   validated call and its result. ``weatherCheck`` runs its Activity (a real function),
   ``sentimentAnalysis`` is latent (the model's own ``_output``), ``sendEmail``'s Activity hands
   the mail to an outbox and answers ``Pending``.
4. The mail service (a client) reports the delivery over HTTP with httpx, while no run is going.
5. ``Agent.astream`` again with the same ``run_id`` — step "report", ``tool_choice="none"`` (the
   output, no calls: the step needs no tool): the result of ``sendEmail`` is delivered as an
   event on this next step, and the model writes the final output (its text printed as it
   streams).
6. The transcript and the final output are printed; both servers are stopped.

Small models copy patterns better than they follow instructions, so the conversation opens with
one worked example per phase (few-shot) and sampling is greedy (``temperature=0``); every answer
is validated against the composed schema and an invalid one goes back with its errors
(``max_retries``). Qwen is the default because it gets the demo right (the docs' local-model guide
says what each model printed).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from demo.llm_server import MODELS, LlamaServer, LocalLLMUnavailable, llama_server
from generated.seeds import TOOLS, SendEmailCall, WeatherCheckCall, WeatherCheckOutput
from toolbind.runtime import Agent, AgentEvent, ModelSettings, RunResult, Step, ToolBinding
from toolbind.runtime.capabilities import PendingDelivery
from toolbind.runtime.pending import Pending, PendingStore, pending_app

# the model the demo runs by default: the docs' local-model guide says why
DEMO_MODEL = "qwen"

TASK = (
    "Tasks: 1. weather in Paris. 2. sentiment of 'I love this product'. "
    "3. email bob@example.com with subject 'Weather report'."
)


def _j(value: Any) -> str:
    return json.dumps(value)


# one worked example per phase: the model copies the shape of the last example before its turn
def act_example(tag: str) -> list[dict[str, Any]]:
    """The acting phase's worked example, each call naming its tool under ``tag`` (the key the
    Agent offers: ``composition().tag``)."""
    return [
        {
            "role": "user",
            "content": "Tasks: 1. weather in Rome. 2. sentiment of 'What a bad day'. "
            "3. email ann@example.org with subject 'Hello'.",
        },
        {
            "role": "assistant",
            "content": _j(
                {
                    "output": None,
                    "calls": [
                        {tag: "weatherCheck", "location": "Rome"},
                        {
                            tag: "sentimentAnalysis",
                            "text": "What a bad day",
                            "_output": {"sentiment": "negative", "confidence": 0.9},
                        },
                        {tag: "sendEmail", "recipient": "ann@example.org", "subject": "Hello"},
                    ],
                }
            ),
        },
    ]


REPORT_EXAMPLE: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": "Write the report. Results: "
        + _j(
            {
                "results": [
                    {"tool": "weatherCheck", "success": True, "data": {"temperature": 25}},
                    {"tool": "sentimentAnalysis", "success": True, "data": {"sentiment": "bad"}},
                    {"tool": "sendEmail", "success": True, "data": {"status": "pending"}},
                ]
            }
        ),
    },
    {
        "role": "user",
        "content": _j(
            {
                "event": "tool_result",
                "call_id": "call-1",
                "tool": "sendEmail",
                "result": {
                    "success": True,
                    "data": {"sent": True},
                    "error": None,
                    "metadata": {"execution": "async"},
                },
            }
        ),
    },
    {
        "role": "assistant",
        "content": _j(
            {
                "output": "Weather: 25 degrees. Sentiment: bad. Email: sent.",
                "calls": [],
            }
        ),
    },
]


# -- the Activities ------------------------------------------------------------------------------

WEATHER: dict[str, tuple[float, str]] = {
    "paris": (14.0, "light rain"),
    "rome": (25.0, "clear"),
    "london": (11.0, "overcast"),
}

OUTBOX: list[SendEmailCall] = []


def weather_check(call: WeatherCheckCall) -> WeatherCheckOutput:
    """The explicit Activity of ``weatherCheck``: a lookup in a (tiny) weather table."""
    key = call.location.split(",")[0].strip().lower()
    temperature, conditions = WEATHER.get(key, (18.0, "unknown"))
    return WeatherCheckOutput(temperature=temperature, conditions=conditions)


def send_email(call: SendEmailCall) -> Pending:
    """The Activity of ``sendEmail``: queued for the mail service, which reports back later."""
    OUTBOX.append(call)
    return Pending(ttl=600, message="Queued; the delivery report arrives as a tool_result event.")


# -- the pending endpoint ------------------------------------------------------------------------


@contextmanager
def serve(app: Any) -> Generator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (a free port) in a thread; always stop it."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="pending-endpoint", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the pending endpoint did not start")
            time.sleep(0.01)
        port: int = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- printing ------------------------------------------------------------------------------------


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def print_steps(title: str, steps: Sequence[Step], seconds: float) -> None:
    print(f"  ({title}: {len(steps)} step(s) in {seconds:.1f} s)")
    for step in steps:
        attempts = len(step.raw_responses)
        print(f"  [{title} step {step.index}] {attempts} LLM request(s)")
        for record in step.delivered:
            print(f"    ← delivered {record.tool} ({record.call_id}): {_short(record.result.data)}")
        if step.response is not None:
            answer = step.response.model_dump(mode="json", by_alias=True, exclude_unset=True)
            print(f"    model: {_short(answer, 400)}")
        for record in step.calls:
            outcome = "pending" if record.pending else "ok" if record.result.success else "failed"
            shown = record.result.data if record.result.success else record.result.error
            print(
                f"    → {record.tool} [{record.route}] {_short(record.arguments)}"
                f"  ⇒ {outcome}: {_short(shown)}"
            )


_TEXT = [False]  # whether the output's text is being printed (its line still open)


def show(event: AgentEvent) -> None:
    """One streamed event, as it arrives: the calls' partial arguments, the output's text."""
    if event.type == "text-delta":
        print(("" if _TEXT[0] else "  output: ") + event.data["delta"], end="", flush=True)
        _TEXT[0] = True
        return
    if _TEXT[0]:
        print()
        _TEXT[0] = False
    if event.type == "tool-call.start":
        print(f"  ▸ {event.tool} ({event.call_id}) started")
    elif event.type == "tool-input-delta" and "partial" in event.data:
        print(f"    … {event.tool} arguments so far: {_short(event.data['partial'])}")
    elif event.type == "tool-input-delta":
        print(f"    ✓ {event.tool} validated: {json.dumps(event.data['arguments'])}")
    elif event.type.startswith("tool-call."):
        print(f"    ⇒ {event.tool} {event.type.removeprefix('tool-call.')}")


def streamed_run(agent: Agent, messages: Any, **options: Any) -> tuple[RunResult, float]:
    """``Agent.astream``, every event shown as it arrives; the run's result and its seconds."""

    async def run() -> RunResult:
        async with agent:  # the client made for this event loop is closed with it
            async for event in agent.astream(messages, **options):
                if event.type == "run.complete" and event.result is not None:
                    return event.result
                show(event)
        raise RuntimeError("the stream ended without run.complete")

    t0 = time.monotonic()
    print("  (streaming)")
    result = asyncio.run(run())
    if _TEXT[0]:
        print()
        _TEXT[0] = False
    return result, time.monotonic() - t0


def results_of(result: RunResult) -> str:
    calls = [c for step in result.steps for c in step.calls]
    return _j(
        {
            "results": [
                {"tool": c.tool, **c.result.model_dump(mode="json", exclude={"metadata"})}
                for c in calls
            ]
        }
    )


# -- the demo ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m demo.run",
        description="The seeds' tools through Agent.run against a local model (make llm).",
    )
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        default=DEMO_MODEL,
        help=f"the local model (default: {DEMO_MODEL}; see demo/llm_server.py)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        with llama_server(args.model) as llm:
            code = run_demo(llm, started)
    except LocalLLMUnavailable as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    print("servers stopped")
    return code


def run_demo(llm: LlamaServer, started: float) -> int:
    tools: Mapping[str, ToolBinding] = {t.name: t for t in TOOLS}
    chosen = [tools[n] for n in ("weatherCheck", "sentimentAnalysis", "sendEmail")]
    activities = {"weatherCheck": weather_check, "sendEmail": send_email}
    print(
        f"local model {llm.model} at {llm.base_url}: started in {llm.timings['start']:.1f} s,"
        f" warmed up in {llm.timings['warm_up']:.1f} s"
    )
    with (
        tempfile.TemporaryDirectory(prefix="toolbind-demo-") as tmp,
        PendingStore(Path(tmp) / "pending.sqlite3") as store,
        serve(pending_app(store)) as endpoint,
    ):
        print(f"pending results endpoint: POST {endpoint}/runs/{{run_id}}/tool-results\n")
        agent = Agent(
            llm.base_url,
            model=llm.model,
            tools=chosen,
            activities=activities,
            capabilities=[PendingDelivery(store)],
            settings=ModelSettings(
                max_retries=3, request_kwargs={"temperature": 0, "max_tokens": 300}
            ),
        )

        print(f"user: {TASK}   [tool_choice=required: calls, no output]")
        act, act_s = streamed_run(
            agent,
            [
                *act_example(agent.composition(tool_choice="required").tag),
                {"role": "user", "content": TASK},
            ],
            max_steps=1,
            tool_choice="required",
        )
        print_steps("act", act.steps, act_s)
        routes = {c.tool: c.route for s in act.steps for c in s.calls}
        pending = [
            cid
            for cid in act.pending
            if (item := store.get(act.run_id, cid)) and item.tool == "sendEmail"
        ]
        if not pending:
            print(f"\ndemo: the model made no sendEmail call (calls: {routes})", file=sys.stderr)
            return 1

        print(f"\nmail service: {len(OUTBOX)} mail(s) in the outbox; reporting over HTTP")
        with httpx.Client(base_url=endpoint, timeout=10) as client:
            for call_id in pending:
                reply = client.post(
                    f"/runs/{act.run_id}/tool-results",
                    json={"call_id": call_id, "result": {"sent": True}},
                )
                print(f"  POST /runs/{act.run_id}/tool-results {call_id} → {reply.status_code}")
                reply.raise_for_status()

        report_prompt = f"Write the report. Results: {results_of(act)}"
        print(f"\nuser: {report_prompt}   [tool_choice=none: the output, no calls]")
        report, report_s = streamed_run(
            agent,
            [*REPORT_EXAMPLE, {"role": "user", "content": report_prompt}],
            max_steps=1,
            run_id=act.run_id,
            tool_choice="none",  # the step writes the report: no tool is needed, the output is
        )
        print_steps("report", report.steps, report_s)
        delivered = [d.tool for s in report.steps for d in s.delivered]
        print(f"\nfinal output: {report.output!r}")
        print(
            f"run {report.run_id}: routes {routes}; delivered {delivered}; "
            f"finished={report.finished}; still pending {report.pending}"
        )
        print(
            f"timings: act {act_s:.1f} s, report {report_s:.1f} s, "
            f"whole demo {time.monotonic() - started:.1f} s"
        )
        ok = (
            report.finished
            and delivered == ["sendEmail"]
            and routes.get("weatherCheck") == "explicit"
            and routes.get("sentimentAnalysis") == "latent"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
