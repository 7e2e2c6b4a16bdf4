"""BFCL benchmark: does the model call the right tools? toolbind's Agent vs a hand-written instructor baseline.

The same local model (``--model qwen``: Qwen2.5-Coder-0.5B-Instruct, or ``smollm2``, behind llama.cpp's
OpenAI-compatible server, started on 127.0.0.1 by ``demo/llm_server.py``; ``make llm`` installs both), the
same questions, the same settings (greedy, ``max_tokens``, one retry), in one run. The questions: BFCL's
development categories that come with answers in ``possible_answer/`` — ``live_simple``, ``parallel``,
``parallel_multiple``, ``live_parallel`` (16 questions), ``live_parallel_multiple`` (24) — the first
``--limit`` taken round-robin over them (so every category is in a short run); every question's own
functions are offered, and only those.

Configurations (the Agent's defaults unless said: ``meta_fields="needed"``, ``call_tag="auto"``, the
tools not listed):

- ``instructor``: the baseline a user writes by hand — one pydantic model per function (built from
  the BFCL parameters with ``create_model``; a required ``function: Literal[name]`` tag first), the
  answer ``{calls: [discriminated union]}``, instructor TOOLS mode (the one function forced);
- ``toolbind latent``: the question's functions compiled by toolbind (the BFCL frontend), every
  tool zero-config (no Activity: latent), ``Agent.request(question, tool_choice="required")``;
- ``toolbind auto``: the same with the default ``tool_choice="auto"`` (the model may answer in
  text): the Agent as a user gets it;
- ``... full``: ``ModelSettings(meta_fields="all")`` (the ``_activity`` const and
  ``_reasoningForCall`` too);
- ``... function`` / ``... _tool``: ``ModelSettings(call_tag=...)``: every call names its tool under
  ``function`` (the baseline's tag) or ``_tool`` (the seeds'); ``"auto"`` offers ``_tool`` for one
  function and ``function`` for several;
- ``... listed``: ``ModelSettings(tools_in_prompt=True)`` (the tools listed in a system message);
- ``toolbind explicit`` (``explicit listed``): an Activity registered for every tool (explicit);
- ``toolbind native``: ``Agent(mode="native")`` — each function its own tool, the provider's tool
  calling (``tool_choice="required"``), every tool explicit (native offers no ``_output``);
- ``toolbind native auto``: the same with ``tool_choice="auto"``;
- ``toolbind mode auto``: ``Agent(mode="auto")``, explicit tools (so native), ``required``.

Scored as BFCL scores (its AST checker's rules, simplified): *valid* — a call came back and
validated; *right function(s)* — the multiset of functions called is the answer's; *right
arguments* — besides, the calls can be matched one to one with the answer's, each required
parameter's value among the allowed ones (strings compared without case, spaces and punctuation;
"" allows a parameter absent), no parameter the answer does not know. Also: LLM requests, prompt
and total tokens, seconds — per configuration and as ratios to the baseline.

The configurations take turns on each question (the baseline first), so a run cut short still
compares them on the same questions: ``--progress FILE`` rewrites the table so far after each one.

``--tokens-only`` asks nothing: each configuration's first request of each question is rendered with
the model's own chat template and counted with its tokenizer (``PromptCounter``: the GGUF loaded
``vocab_only``), as llama-cpp-python's server counts ``usage.prompt_tokens`` — seconds for 200
questions, where a run with answers takes hours on a shared 2-core machine.

Run: ``.venv/bin/python bench/bfcl.py [--model qwen] [--limit 50] [--category NAME ...]
[--only CONFIG ...] [--tokens-only] [-v] [--json FILE] [--progress FILE]`` (``TOOLBIND_CORPUS`` or
``--corpus`` for the corpus).
"""

from __future__ import annotations

import argparse
import json
import keyword
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import httpx
from _corpus import REPO, corpus_root, require
from _progress import steps

from toolbind.runtime import ModelSettings

sys.path.insert(0, str(REPO))  # demo.llm_server

CATEGORIES = (
    "live_simple",
    "parallel",
    "parallel_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
SETTINGS: dict[str, Any] = {"temperature": 0, "max_tokens": 384}

Truth = list[
    dict[str, dict[str, list[Any]]]
]  # one {function: {parameter: allowed values}} per call
Calls = list[tuple[str, dict[str, Any]]]  # (function, arguments) per call the model made


@dataclass
class Question:
    id: str
    category: str
    messages: list[dict[str, str]]
    functions: list[dict[str, Any]]
    truth: Truth


@dataclass
class Tally:
    name: str
    questions: int = 0
    valid: int = 0
    right_function: int = 0
    right_arguments: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    tokens: int = 0
    request_bytes: int = 0  # the request bodies sent (messages and tool schemas), compact JSON
    seconds: float = 0.0
    read_as_meant: int = 0  # answers read by toolbind's salvage (Step.notes), not retried
    failures: list[str] = field(default_factory=list[str])
    per_category: dict[str, list[int]] = field(default_factory=dict[str, list[int]])


def load(corpus: Path, categories: list[str], limit: int) -> list[Question]:
    """The first ``limit`` questions, taken round-robin over ``categories`` (file order)."""
    bfcl = require(corpus / "tools" / "bfcl", "the BFCL questions")
    pools: list[list[Question]] = []
    for category in categories:
        name = f"BFCL_v4_{category}.json"
        answers = {
            (row := json.loads(line))["id"]: row["ground_truth"]
            for line in (bfcl / "possible_answer" / name).read_text("utf-8").splitlines()
            if line.strip()
        }
        pool: list[Question] = []
        for line in (bfcl / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["id"] in answers:
                    messages = row["question"][0]
                    pool.append(
                        Question(row["id"], category, messages, row["function"], answers[row["id"]])
                    )
        pools.append(pool)
    out: list[Question] = []
    index = 0
    while len(out) < limit and any(index < len(p) for p in pools):
        for pool in pools:
            if index < len(pool) and len(out) < limit:
                out.append(pool[index])
        index += 1
    return out


# -- scoring (BFCL's AST checker, simplified) ----------------------------------------------------

_PUNCTUATION = re.compile(r"[ ,./\-_*^]")


def _standard(text: str) -> str:
    """BFCL compares strings without case, spaces and some punctuation, ' as "."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(allowed, dict) and isinstance(value, dict):
        return _right_arguments(allowed, value)  # type: ignore[arg-type]
    if isinstance(value, str) and isinstance(allowed, str):
        return _standard(value) == _standard(allowed)
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    if isinstance(value, int | float) and isinstance(allowed, int | float):
        return float(value) == float(allowed)
    if isinstance(value, list | tuple) and isinstance(allowed, list | tuple):
        return len(value) == len(allowed) and all(
            _same(v, a) for v, a in zip(value, allowed, strict=True)
        )
    return value == allowed


def _right_arguments(truth: dict[str, list[Any]], given: dict[str, Any]) -> bool:
    """Each parameter's value is one of the allowed ones ("" allows it absent), and no
    parameter is given that the answer does not know."""
    for name, allowed in truth.items():
        if name not in given:
            if "" not in allowed:
                return False
            continue
        if not any(_same(given[name], a) for a in allowed if a != "" or given[name] == ""):
            return False
    return set(given) <= set(truth)


def _matched(truth: Truth, calls: Calls) -> bool:
    """Whether the calls match the answer's one to one (any order)."""
    if len(truth) != len(calls):
        return False
    if not truth:
        return True
    ((function, params),) = truth[0].items()
    for i, (name, args) in enumerate(calls):
        rest = calls[:i] + calls[i + 1 :]
        if name == function and _right_arguments(params, args) and _matched(truth[1:], rest):
            return True
    return False


VERBOSE = False


def score(tally: Tally, question: Question, calls: Calls | None) -> None:
    tally.questions += 1
    row = tally.per_category.setdefault(question.category, [0, 0, 0, 0, 0])
    row[0] += 1
    if VERBOSE:
        print(
            f"  {tally.name:24} {question.id}: {json.dumps(calls)[:240]}"
            f"  truth {json.dumps(question.truth)[:240]}"
        )
    if not calls:
        return
    tally.valid += 1
    row[1] += 1
    expected = sorted(next(iter(t)) for t in question.truth)
    if sorted(name for name, _ in calls) != expected:
        return
    tally.right_function += 1
    row[2] += 1
    if _matched(question.truth, calls):
        tally.right_arguments += 1
        row[3] += 1


def _given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a call gave (a null is read as absent, for every configuration alike)."""
    return {k: v for k, v in arguments.items() if v is not None}


# -- the baseline: instructor with hand-built pydantic models ------------------------------------

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "any": Any,
}


def _python_type(prop: dict[str, Any], name: str) -> Any:
    """What a user writes by hand for one BFCL parameter."""
    from pydantic import create_model

    if prop.get("enum"):
        return Literal[tuple(prop["enum"])]  # type: ignore[valid-type]
    kind = str(prop.get("type", "any"))
    if kind in ("array", "tuple"):
        items = prop.get("items")
        return list[_python_type(items, name) if isinstance(items, dict) else Any]  # type: ignore[misc]
    if kind in ("dict", "object"):
        if isinstance(prop.get("properties"), dict):
            return create_model(f"{name}_value", **_fields(prop))  # type: ignore[call-overload]
        return dict[str, Any]
    return _TYPES.get(kind, Any)


def _fields(params: dict[str, Any]) -> dict[str, Any]:
    from pydantic import Field

    required = set(params.get("required", []))
    fields: dict[str, Any] = {}
    for pname, prop in params.get("properties", {}).items():
        kind = _python_type(prop, pname)
        description = prop.get("description")
        field_name = pname
        if not pname.isidentifier() or pname.startswith("_") or keyword.iskeyword(pname):
            field_name = "f_" + "".join(c if c.isalnum() else "_" for c in pname)
        if pname in required:
            fields[field_name] = (kind, Field(alias=pname, description=description))
        else:
            fields[field_name] = (
                kind | None,
                Field(default=None, alias=pname, description=description),
            )
    return fields


TAGS = ("function", "function_name", "tool", "tool_name_")


def baseline_model(functions: list[dict[str, Any]]) -> type[Any]:
    """One pydantic model per function (its name a required ``function`` tag, first), the answer
    a list of calls of them: a discriminated union, as instructor's docs show."""
    from pydantic import BaseModel, Field, create_model

    models: list[type[BaseModel]] = []
    taken = {p for f in functions for p in f.get("parameters", {}).get("properties", {})}
    tag = next(t for t in TAGS if t not in taken)
    for function in functions:
        safe = "".join(c if c.isalnum() else "_" for c in function["name"])
        fields = {tag: (Literal[function["name"]], ...)}  # type: ignore[valid-type]
        fields.update(_fields(function.get("parameters", {})))
        models.append(
            create_model(safe, __doc__=function.get("description") or None, **fields)  # type: ignore[call-overload]
        )
    item: Any = (
        models[0] if len(models) == 1 else Annotated[Union[tuple(models)], Field(discriminator=tag)]  # noqa: UP007
    )
    return create_model(
        "FunctionCalls",
        __doc__="The function calls that answer the user's request.",
        calls=(list[item], ...),
    )


Runner = tuple[Tally, Callable[[Question], None]]
"""A configuration's tally and how it answers one question (the configurations take turns per
question, so a run cut short compares them on the same questions)."""


def run_baseline(url: str, model_name: str, transport: Any = None) -> Runner:
    import instructor
    from openai import OpenAI

    tally = Tally("instructor")
    client = instructor.from_openai(
        OpenAI(
            base_url=url,
            api_key="local",
            max_retries=0,
            timeout=300,
            http_client=_counting_client(tally, transport),
        ),
        mode=instructor.Mode.TOOLS,
    )
    responses: list[Any] = []
    client.on("completion:response", responses.append)  # every request instructor makes

    def ask(q: Question) -> None:
        model = baseline_model(q.functions)
        started = time.monotonic()
        before = len(responses)
        if transport is not None:
            transport.tally, transport.question = tally, q
        calls: Calls | None = None
        try:
            answer = client.chat.completions.create(
                model=model_name,
                response_model=model,
                messages=q.messages,  # type: ignore[arg-type]
                max_retries=1,
                **SETTINGS,
            )
            calls = []
            for item in answer.calls:
                dumped = item.model_dump(mode="json", by_alias=True)
                name = dumped.pop(next(iter(dumped)))  # the tag is the first field
                calls.append((name, _given(dumped)))
        except Exception as exc:  # an invalid answer after the retry: no call
            tally.failures.append(f"{q.id}: {type(exc).__name__}")
        score(tally, q, calls)
        tally.seconds += time.monotonic() - started
        made = responses[before:]
        tally.requests += len(made)
        _add_tokens(
            tally,
            q,
            sum(_tokens(r, "prompt_tokens") for r in made),
            sum(_tokens(r, "total_tokens") for r in made),
        )

    return tally, ask


def _counting_client(tally: Tally, transport: Any = None) -> Any:
    """An httpx client that adds each request body's size (compact JSON) to ``tally``: what a
    provider that renders the tool schema into the prompt reads (llama.cpp with SmolLM2's chat
    template counts only the messages as prompt tokens; the schema becomes the grammar).
    ``transport``: where the requests go (``--tokens-only``: a ``PromptCounter``, no server)."""
    import httpx

    def count(request: httpx.Request) -> None:
        body = json.loads(request.content or b"{}")
        tally.request_bytes += len(json.dumps(body, separators=(",", ":"), ensure_ascii=False))

    return httpx.Client(event_hooks={"request": [count]}, timeout=300, transport=transport)


def _add_tokens(tally: Tally, question: Question, prompt: int, total: int) -> None:
    tally.prompt_tokens += prompt
    tally.tokens += total
    tally.per_category[question.category][4] += prompt


class PromptCounter(httpx.BaseTransport):
    """``--tokens-only``: an httpx transport that answers no request but counts the prompt
    tokens of the first one of each question, as llama-cpp-python's server would: the request's
    messages and tools rendered by the model's own chat template (its ``Jinja2ChatFormatter``, as
    the server builds it from the GGUF) and tokenized by the model's tokenizer (the GGUF loaded
    with ``vocab_only``: no weights, no generation). Every request is answered 400, so each
    configuration sends its first request and gives up."""

    def __init__(self, gguf: Path) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = Llama(str(gguf), vocab_only=True, verbose=False)
        self.model = gguf.stem

        def text(token: int) -> str:
            return self.llm.detokenize([token], special=True).decode() if token != -1 else ""

        self.format = Jinja2ChatFormatter(
            template=self.llm.metadata["tokenizer.chat_template"],
            eos_token=text(self.llm.token_eos()),
            bos_token=text(self.llm.token_bos()),
        )
        self.tally: Tally | None = None
        self.question: Question | None = None

    def count(self, body: dict[str, Any]) -> int:
        """The prompt tokens of one chat completion request body."""
        rendered = self.format(
            messages=body["messages"], tools=body.get("tools"), tool_choice=body.get("tool_choice")
        )
        tokens = self.llm.tokenize(
            rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
        )
        return len(tokens)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.tally is not None and self.question is not None:
            self.tally.requests += 1
            _add_tokens(self.tally, self.question, self.count(json.loads(request.content)), 0)
            self.tally = None  # a retry repeats the first request: counted once
        return httpx.Response(
            400, json={"error": {"message": "tokens only", "type": "invalid_request_error"}}
        )


def _tokens(completion: Any, key: str) -> int:
    usage = getattr(completion, "usage", None)
    return int(getattr(usage, key, 0) or 0)


# -- toolbind ---------------------------------------------------------------------------------


def compile_questions(questions: list[Question], out: Path) -> Any:
    """The questions' functions as one BFCL spec (a toolset per question), compiled by toolbind."""
    from toolbind.compiler import compile_to_directory, load_package

    spec = out / "bfcl_bench.jsonl"
    spec.write_text(
        "\n".join(
            json.dumps({"id": q.id, "question": [q.messages], "function": q.functions})
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
    pkg: Any,
    *,
    explicit: bool = False,
    tool_choice: str = "required",
    mode: str = "composed",
    transport: Any = None,
    **settings: Any,
) -> Runner:
    """``settings``: ``ModelSettings`` fields beside the bench's own (``meta_fields``,
    ``call_tag``, ``tools_in_prompt``); the rest are ``ModelSettings``' defaults."""
    from openai import OpenAI

    from toolbind.runtime import Agent

    tally = Tally(name)
    client = OpenAI(
        base_url=url,
        api_key="local",
        max_retries=0,
        timeout=300,
        http_client=_counting_client(tally, transport),
    )
    by_name = {t.name: t for t in pkg.TOOLS}

    def ask(q: Question) -> None:
        tools = [by_name[n] for n in pkg.TOOLSETS[q.id]]
        activities = {t.name: _done for t in tools} if explicit else None
        agent = Agent(
            client,
            model=model_name,
            tools=tools,
            activities=activities,
            mode=mode,
            settings=ModelSettings(max_retries=1, timeout=300, request_kwargs=SETTINGS, **settings),
        )
        started = time.monotonic()
        calls: Calls | None = None
        if transport is not None:
            transport.tally, transport.question = tally, q
        try:
            response = agent.request(q.messages, tool_choice=tool_choice)
            calls = []
            for call in response.calls:
                binding = by_name[call.tool]
                given = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
                args = {k: v for k, v in given.items() if not k.startswith("_")}
                calls.append((binding.original_name or binding.name, _given(args)))
            if not calls:
                tally.failures.append(f"{q.id}: no call")
        except Exception as exc:  # ResponseValidationError after the retry, LLMError
            tally.failures.append(f"{q.id}: {type(exc).__name__}")
        score(tally, q, calls)
        tally.seconds += time.monotonic() - started
        step = agent.last_step
        if step is not None:
            tally.read_as_meant += bool(step.notes)
            tally.requests += step.llm_requests
            _add_tokens(
                tally, q, step.usage.get("prompt_tokens", 0), step.usage.get("total_tokens", 0)
            )

    return tally, ask


SETUPS: dict[str, dict[str, Any]] = {
    "toolbind latent": {},
    "toolbind latent full": {"meta_fields": "all"},
    "toolbind latent function": {"call_tag": "function"},
    "toolbind latent _tool": {"call_tag": "_tool"},
    "toolbind explicit": {"explicit": True},
    "toolbind listed": {"tools_in_prompt": True},
    "toolbind auto": {"tool_choice": "auto"},
    "toolbind auto full": {"tool_choice": "auto", "meta_fields": "all"},
    "toolbind auto function": {"tool_choice": "auto", "call_tag": "function"},
    "toolbind auto _tool": {"tool_choice": "auto", "call_tag": "_tool"},
    "toolbind auto listed": {"tool_choice": "auto", "tools_in_prompt": True},
    "toolbind explicit listed": {"explicit": True, "tools_in_prompt": True},
    "toolbind native": {"explicit": True, "mode": "native"},
    "toolbind native auto": {"explicit": True, "mode": "native", "tool_choice": "auto"},
    "toolbind mode auto": {"explicit": True, "mode": "auto"},
}
"""Each toolbind configuration: ``run_toolbind``'s keywords."""
CONFIGS = tuple(SETUPS)


def report(tallies: list[Tally], questions: list[Question]) -> None:
    base = tallies[0]
    count = len(questions)

    def pct(n: int) -> str:
        return f"{n} ({100 * n / count:.0f}%)" if count else "0"

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b else "-"

    categories = sorted({q.category for q in questions}, key=CATEGORIES.index)
    print(f"\nBFCL ({', '.join(categories)}): {count} questions")
    print(
        f"{'configuration':24} {'valid':>9} {'right fn':>9} {'right args':>10} {'requests':>8} "
        f"{'prompt tok':>10} {'tokens':>7} {'request KB':>10} {'s/question':>10}  vs baseline: "
        "right fn, right args, prompt tokens, request bytes"
    )
    for t in tallies:
        print(
            f"{t.name:24} {pct(t.valid):>9} {pct(t.right_function):>9} "
            f"{pct(t.right_arguments):>10} {t.requests:>8} {t.prompt_tokens:>10} {t.tokens:>7} "
            f"{t.request_bytes / 1000:>10.1f} {t.seconds / max(1, t.questions):>10.2f}  "
            f"{t.right_function - base.right_function:+d}, "
            f"{t.right_arguments - base.right_arguments:+d}, "
            f"{ratio(t.prompt_tokens, base.prompt_tokens)}, "
            f"{ratio(t.request_bytes, base.request_bytes)}"
        )
    print("per category (questions: valid / right fn / right args):")
    for t in tallies:
        cells = [
            f"{c} {r[0]}: {r[1]}/{r[2]}/{r[3]}"
            for c in categories
            if (r := t.per_category.get(c)) is not None
        ]
        print(f"  {t.name:24} " + "; ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=50, help="questions (default %(default)s)")
    parser.add_argument(
        "--category",
        action="append",
        choices=CATEGORIES,
        help="BFCL categories (default: all five with answers)",
    )
    parser.add_argument("--corpus", type=Path, default=corpus_root())
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--progress", type=Path, help="rewrite the table so far here after each question"
    )
    parser.add_argument(
        "--tokens-only",
        action="store_true",
        help="count each configuration's prompt tokens with the model's template and tokenizer; "
        "no server, no answers",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every answer")
    parser.add_argument(
        "--only", action="append", choices=CONFIGS, help="run only these toolbind configurations"
    )
    parser.add_argument(
        "--model",
        choices=("qwen", "smollm2"),
        default=None,
        help="the local model (default: $TOOLBIND_LOCAL_MODEL, else smollm2; demo/llm_server.py)",
    )
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    questions = load(args.corpus, list(args.category or CATEGORIES), args.limit)
    names = [n for n in CONFIGS if not args.only or n in args.only]
    from demo.llm_server import LocalLLMUnavailable, llama_server, local_model

    if args.tokens_only:
        logging.getLogger("instructor").setLevel(logging.CRITICAL)  # every request fails
        try:
            counter = PromptCounter(local_model(args.model).gguf())
        except (LocalLLMUnavailable, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        tallies = run_all(
            questions, names, "http://127.0.0.1:9/v1", "local", counter, args.progress
        )
        report_tokens(tallies, questions)
        _write_json(args.json, tallies, questions, counter.model, " ".join(sys.argv[1:]))
        return 0
    try:
        server_cm = llama_server(args.model, n_ctx=4096)
        server = server_cm.__enter__()
    except LocalLLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        tallies = run_all(questions, names, server.base_url, server.model, None, args.progress)
    finally:
        server_cm.__exit__(None, None, None)
    report(tallies, questions)
    for t in tallies:
        if t.failures:
            print(f"  {t.name}: {len(t.failures)} without a valid call, e.g. {t.failures[:3]}")
        if t.read_as_meant:
            print(
                f"  {t.name}: {t.read_as_meant} answers cut off or with raw control characters read as meant (Step.notes)"
            )
    _write_json(args.json, tallies, questions, server.model, " ".join(sys.argv[1:]))
    return 0


def run_all(
    questions: list[Question],
    names: list[str],
    url: str,
    model_name: str,
    transport: PromptCounter | None,
    progress: Path | None,
) -> list[Tally]:
    """The baseline and each configuration named, taking turns on each question."""
    with tempfile.TemporaryDirectory(prefix="toolbind-bfcl-") as tmp:
        pkg = compile_questions(questions, Path(tmp))
        runners = [run_baseline(url, model_name, transport)] + [
            run_toolbind(name, url, model_name, pkg, transport=transport, **SETUPS[name])
            for name in names
        ]
        tallies = [tally for tally, _ in runners]
        for done, q in enumerate(steps(questions, "questions", name=lambda q: q.id), 1):
            for _, ask in runners:  # each configuration in turn, on the same question
                ask(q)
            if progress:  # the table so far: a run cut short still compares alike
                with progress.open("w", encoding="utf-8") as out, redirect_stdout(out):
                    report(tallies, questions[:done])
    return tallies


def report_tokens(tallies: list[Tally], questions: list[Question]) -> None:
    """``--tokens-only``: each configuration's prompt tokens (first request of each question),
    in all and per category, as ratios to the baseline's."""
    base = tallies[0]
    categories = sorted({q.category for q in questions}, key=CATEGORIES.index)
    print(f"\nprompt tokens, first request of each of {len(questions)} questions (no answer asked)")
    print(f"{'configuration':26} {'all':>12} " + " ".join(f"{c[:22]:>22}" for c in categories))
    for t in tallies:
        cells = [f"{t.prompt_tokens:>6} {t.prompt_tokens / max(1, base.prompt_tokens):4.2f}x"]
        for c in categories:
            mine, theirs = t.per_category.get(c, [0] * 5)[4], base.per_category.get(c, [0] * 5)[4]
            cells.append(f"{mine:>16} {mine / max(1, theirs):4.2f}x")
        print(
            f"{t.name:26} "
            + " ".join(f"{x:>12}" if i == 0 else f"{x:>22}" for i, x in enumerate(cells))
        )


def _write_json(
    path: Path | None, tallies: list[Tally], questions: list[Question], model: str, how: str
) -> None:
    """The figures as ``docs/plots.py`` reads them (``docs/bench/bfcl.json``): each
    configuration's counts in all and per category, and which questions were asked."""
    if not path:
        return
    keys = ("questions", "valid", "right_function", "right_arguments", "prompt_tokens")
    data = {
        "source": f"bench/bfcl.py {how}",
        "model": model,
        "questions": len(questions),
        "question_ids": [q.id for q in questions],
        "configurations": [
            {
                "name": t.name,
                **{k: getattr(t, k) for k in keys[1:]},
                "requests": t.requests,
                "tokens": t.tokens,
                "seconds": round(t.seconds, 1),
                "per_category": {
                    c: dict(zip(keys, row, strict=True)) for c, row in t.per_category.items()
                },
                "failures": t.failures,
            }
            for t in tallies
        ],
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
