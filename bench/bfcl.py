"""BFCL benchmark: does the model call the tool? toolbind's Agent vs a hand-written instructor baseline.

The same local model (SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server, started on
127.0.0.1 by ``demo/llm_server.py``; ``make llm`` installs it), the same questions (the first
``--limit`` of BFCL's ``live_simple`` category, each answered by exactly one call; ground truth in
``possible_answer/``), the same settings (greedy, ``max_tokens``, one retry), in one run:

- ``instructor``: the baseline a user writes by hand — a pydantic model per function (built from the
  BFCL parameters with ``create_model``), instructor TOOLS mode, the function forced;
- ``toolbind latent``: the question's functions compiled by toolbind (BFCL format), every tool
  zero-config (no Activity: latent), ``Agent.request(question, tool_choice="required")``;
- ``toolbind explicit``: the same with an Activity registered for every tool (explicit);
- ``toolbind auto``: the latent setup with the default ``tool_choice="auto"`` (for information: the
  model may answer in text instead of calling).

Per configuration: valid answers (a call came back and validated), right function, right arguments
(every ground-truth parameter's value among BFCL's allowed values, an optional one absent only where
BFCL allows it), LLM requests and tokens — each also as a ratio to the baseline.

Run: ``.venv/bin/python bench/bfcl.py [--limit 50] [--json FILE]`` (``TOOLBIND_CORPUS`` or
``--corpus`` for the corpus).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from _corpus import REPO, corpus_root, require

sys.path.insert(0, str(REPO))  # demo.llm_server

CATEGORY = "BFCL_v4_live_simple.json"
SETTINGS: dict[str, Any] = {"temperature": 0, "max_tokens": 256}


@dataclass
class Question:
    id: str
    messages: list[dict[str, str]]
    function: dict[str, Any]
    truth: dict[str, dict[str, list[Any]]]  # function name → parameter → allowed values


@dataclass
class Tally:
    name: str
    valid: int = 0
    right_function: int = 0
    right_arguments: int = 0
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list[str])


def load(corpus: Path, limit: int) -> list[Question]:
    bfcl = require(corpus / "tools" / "bfcl", "the BFCL questions")
    answers = {
        (row := json.loads(line))["id"]: row["ground_truth"]
        for line in (bfcl / "possible_answer" / CATEGORY).read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    out: list[Question] = []
    for line in (bfcl / CATEGORY).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        (truth,) = answers[row["id"]]
        (function,) = row["function"]
        out.append(Question(row["id"], row["question"][0], function, truth))
        if len(out) == limit:
            break
    return out


def right_arguments(truth: dict[str, list[Any]], given: dict[str, Any]) -> bool:
    """BFCL's rule: each parameter's value is one of the allowed ones ("" allows it absent), and
    no parameter is given that the answer does not know."""
    for name, allowed in truth.items():
        if name not in given:
            if "" not in allowed:
                return False
            continue
        value = given[name]
        if not any(_same(value, a) for a in allowed if a != "" or value == ""):
            return False
    return set(given) <= set(truth)


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(value, str) and isinstance(allowed, str):
        return value.strip().lower() == allowed.strip().lower()
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    if isinstance(value, int | float) and isinstance(allowed, int | float):
        return float(value) == float(allowed)
    return value == allowed


VERBOSE = False


def score(tally: Tally, question: Question, name: str | None, args: dict[str, Any] | None) -> None:
    if VERBOSE:
        print(
            f"  {tally.name:18} {question.id}: {name} {json.dumps(args)[:200]}  truth {json.dumps(question.truth)[:200]}"
        )
    if name is None or args is None:
        return
    tally.valid += 1
    (expected,) = question.truth
    if name == expected:
        tally.right_function += 1
        if right_arguments(question.truth[expected], args):
            tally.right_arguments += 1


# -- the baseline: instructor with a hand-built pydantic model per function ----------------------

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "dict": dict[str, Any],
    "object": dict[str, Any],
    "any": Any,
}


def baseline_model(function: dict[str, Any]) -> type[Any]:
    """What a user writes by hand for one BFCL function: a pydantic model with its parameters."""
    from pydantic import Field, create_model

    params = function.get("parameters", {})
    required = set(params.get("required", []))
    fields: dict[str, Any] = {}
    for pname, prop in params.get("properties", {}).items():
        kind: Any = _TYPES.get(str(prop.get("type", "any")), Any)
        if prop.get("enum"):
            kind = Literal[tuple(prop["enum"])]  # type: ignore[valid-type]
        description = prop.get("description")
        if pname in required:
            fields[pname] = (kind, Field(description=description))
        else:
            fields[pname] = (kind | None, Field(default=None, description=description))
    name = "".join(c if c.isalnum() else "_" for c in function["name"])
    model = create_model(name, __doc__=function.get("description") or None, **fields)
    return model


def run_baseline(url: str, model_name: str, questions: list[Question]) -> Tally:
    import instructor
    from openai import OpenAI

    tally = Tally("instructor")
    client = instructor.from_openai(
        OpenAI(base_url=url, api_key="local", max_retries=0, timeout=300),
        mode=instructor.Mode.TOOLS,
    )
    responses: list[Any] = []
    client.on("completion:response", responses.append)  # every request instructor makes
    for q in questions:
        model = baseline_model(q.function)
        started = time.monotonic()
        before = len(responses)
        try:
            answer = client.chat.completions.create(
                model=model_name,
                response_model=model,
                messages=q.messages,  # type: ignore[arg-type]
                max_retries=1,
                **SETTINGS,
            )
            score(tally, q, q.function["name"], answer.model_dump(exclude_none=True))
        except Exception as exc:  # an invalid answer after the retry: no call
            tally.failures.append(f"{q.id}: {type(exc).__name__}")
        tally.seconds += time.monotonic() - started
        made = responses[before:]
        tally.requests += len(made)
        tally.tokens += sum(_tokens(r) for r in made)
    return tally


def _tokens(completion: Any) -> int:
    usage = getattr(completion, "usage", None)
    return int(getattr(usage, "total_tokens", 0) or 0)


# -- toolbind ---------------------------------------------------------------------------------


def compile_questions(questions: list[Question], out: Path) -> Any:
    """The questions' functions as one BFCL spec (a toolset per question), compiled by toolbind."""
    from toolbind.compiler import compile_to_directory, load_package

    spec = out / "bfcl_bench.jsonl"
    spec.write_text(
        "\n".join(
            json.dumps({"id": q.id, "question": [q.messages], "function": [q.function]})
            for q in questions
        )
        + "\n",
        encoding="utf-8",
    )
    compile_to_directory([spec], out / "pkg")
    return load_package(out / "pkg", "bfcl_bench")


def _done(call: Any) -> dict[str, bool]:
    """The Activity of every tool in the explicit setup (what it returns is not scored)."""
    return {"ok": True}


def run_toolbind(
    name: str,
    url: str,
    model_name: str,
    questions: list[Question],
    pkg: Any,
    *,
    explicit: bool,
    tool_choice: str,
) -> Tally:
    from toolbind.runtime import Agent

    tally = Tally(name)
    by_name = {t.name: t for t in pkg.TOOLS}
    for q in questions:
        tools = [by_name[n] for n in pkg.TOOLSETS[q.id]]
        activities = {t.name: _done for t in tools} if explicit else None
        agent = Agent(
            url,
            model=model_name,
            tools=tools,
            activities=activities,
            max_retries=1,
            timeout=300,
            request_kwargs=SETTINGS,
        )
        started = time.monotonic()
        try:
            response = agent.request(q.messages, tool_choice=tool_choice)
            calls = list(response.calls)
            if calls:
                first = calls[0]
                binding = by_name[first.tool]
                given = first.model_dump(mode="json", by_alias=True, exclude_unset=True)
                args = {k: v for k, v in given.items() if not k.startswith("_")}
                score(tally, q, binding.original_name or binding.name, args)
            else:
                tally.failures.append(f"{q.id}: no call")
        except Exception as exc:  # ResponseValidationError after the retry, LLMError
            tally.failures.append(f"{q.id}: {type(exc).__name__}")
        tally.seconds += time.monotonic() - started
        step = agent.last_step
        if step is not None:
            tally.requests += step.llm_requests
            tally.tokens += step.usage.get("total_tokens", 0)
    return tally


def report(tallies: list[Tally], count: int) -> None:
    base = tallies[0]

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b else "-"

    print(f"\nBFCL {CATEGORY.removeprefix('BFCL_v4_').removesuffix('.json')}: {count} questions")
    head = (
        f"{'configuration':20} {'valid':>7} {'right fn':>9} {'right args':>11} "
        f"{'requests':>9} {'tokens':>8} {'seconds':>8}  vs baseline (right args, tokens)"
    )
    print(head)
    for t in tallies:
        print(
            f"{t.name:20} {t.valid:>7} {t.right_function:>9} {t.right_arguments:>11} "
            f"{t.requests:>9} {t.tokens:>8} {t.seconds:>8.1f}  "
            f"{ratio(t.right_arguments, base.right_arguments)}, {ratio(t.tokens, base.tokens)}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=50, help="questions (default %(default)s)")
    parser.add_argument("--corpus", type=Path, default=corpus_root())
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every answer")
    parser.add_argument(
        "--only", action="append", default=[], help="run only these toolbind configurations"
    )
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    questions = load(args.corpus, args.limit)
    from demo.llm_server import LocalLLMUnavailable, llama_server

    try:
        server_cm = llama_server()
        server = server_cm.__enter__()
    except LocalLLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="toolbind-bfcl-") as tmp:
            pkg = compile_questions(questions, Path(tmp))
            tallies = [run_baseline(server.base_url, server.model, questions)]
            for name, explicit, choice in (
                ("toolbind latent", False, "required"),
                ("toolbind explicit", True, "required"),
                ("toolbind auto", False, "auto"),
            ):
                if args.only and name not in args.only:
                    continue
                tallies.append(
                    run_toolbind(
                        name,
                        server.base_url,
                        server.model,
                        questions,
                        pkg,
                        explicit=explicit,
                        tool_choice=choice,
                    )
                )
    finally:
        server_cm.__exit__(None, None, None)
    report(tallies, len(questions))
    for t in tallies:
        if t.failures:
            print(f"  {t.name}: {len(t.failures)} without a valid call, e.g. {t.failures[:3]}")
    if args.json:
        args.json.write_text(
            json.dumps([t.__dict__ for t in tallies], indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
