"""BFCL probe: what in toolbind's request changes a small model's answer? One variable at a time.

``bench/bfcl.py`` compares whole configurations; this script explains them. For each question it
builds the two requests the local server receives — the instructor baseline's (``FunctionCalls``,
a discriminated union tagged ``function``) and toolbind's composed ``Response`` as ``Agent.request``
sends it by default (latent tools, ``ModelSettings()``'s defaults: the lean meta fields, the
``auto`` call tag — ``_tool`` for one function, ``function`` for several —, ``tool_choice="auto"``
unless ``--tool-choice`` says another) — and sends toolbind's again with exactly one thing changed,
straight to the local server (no retries, no validation: the raw arguments the model wrote, scored
as ``bfcl.py`` scores them):

- ``tag-function``, ``tag-_tool``: every call's tag renamed ``function`` / ``_tool`` (where a
  function has a parameter of that name the rename would clash: the request as toolbind sends it);
- ``full``: ``ModelSettings(meta_fields="all")`` (``_activity`` const and ``_reasoningForCall``);
  ``no-guess``: no latent ``_output`` in the calls;
- ``no-output``: no ``output`` property; ``no-desc``: no tool descriptions;
- ``desc-base``: the ``Response`` function described as the baseline describes its own;
- ``norep``: ``repeat_penalty: 1.0`` (llama-cpp-python's default is 1.1) for toolbind and
  ``base-norep`` for the baseline;
- ``listed``: the tools listed in a system message (``ModelSettings(tools_in_prompt=True)``).

Run: ``.venv/bin/python bench/bfcl_probe.py [--model qwen] [--limit 14] [--start 0]
[--category NAME ...] [--variant NAME ...] [--tool-choice auto|required] [-v]``; prints per
variant: answers that parsed, right function(s), right arguments, prompt tokens.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bfcl
from _corpus import REPO, corpus_root

from toolbind.runtime import ModelSettings

sys.path.insert(0, str(REPO))  # demo.llm_server

Schema = dict[str, Any]


def _items(schema: Schema) -> list[Schema]:
    item = schema["properties"]["calls"]["items"]
    return item.get("anyOf", [item])


def tag_of(schema: Schema) -> str:
    """The key the composed calls name their tool under (the first property of a call)."""
    return next(iter(_items(schema)[0]["properties"]))


def _renamed_tag(tag: str) -> Callable[[Schema], Schema]:
    def renamed(schema: Schema) -> Schema:
        old = tag_of(schema)
        for one in _items(schema):
            if tag != old and tag in one["properties"]:  # a parameter of that name: a clash
                raise KeyError(tag)
            one["properties"] = {(tag if k == old else k): v for k, v in one["properties"].items()}
            one["required"] = [tag if r == old else r for r in one["required"]]
        return schema

    return renamed


def _no_guess(schema: Schema) -> Schema:
    for one in _items(schema):
        one["properties"].pop("_output", None)
    return schema


def _no_output(schema: Schema) -> Schema:
    schema["properties"].pop("output")
    schema["required"] = ["calls"]
    return schema


def _no_desc(schema: Schema) -> Schema:
    for one in _items(schema):
        one.pop("description", None)
    return schema


SCHEMA_VARIANTS: dict[str, Callable[[Schema], Schema]] = {
    "tag-function": _renamed_tag("function"),
    "tag-_tool": _renamed_tag("_tool"),
    "no-guess": _no_guess,
    "no-output": _no_output,
    "no-desc": _no_desc,
}
VARIANTS = (
    "base",
    "toolbind",
    *SCHEMA_VARIANTS,
    "full",
    "desc-base",
    "norep",
    "base-norep",
    "listed",
)
BASELINE_DESCRIPTION = "The function calls that answer the user's request."


def _body(question: bfcl.Question, function: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": question.messages,
        "tools": [{"type": "function", "function": function}],
        "tool_choice": {"type": "function", "function": {"name": function["name"]}},
        **bfcl.SETTINGS,
    }


def baseline_request(question: bfcl.Question) -> dict[str, Any]:
    """The baseline's chat completion body, as instructor sends it."""
    from instructor.processing.function_calls import openai_schema

    return _body(question, openai_schema(bfcl.baseline_model(question.functions)).openai_schema)


def toolbind_request(
    question: bfcl.Question, pkg: Any, tool_choice: str, **settings: Any
) -> dict[str, Any]:
    """Toolbind's first chat completion body for ``question``, as ``Agent.request`` sends it."""
    from instructor.processing.function_calls import openai_schema

    from toolbind.runtime import Agent

    by_name = {t.name: t for t in pkg.TOOLS}
    tools = [by_name[n] for n in pkg.TOOLSETS[question.id]]
    agent = Agent(
        "http://127.0.0.1:9/v1", model="m", tools=tools, settings=ModelSettings(**settings)
    )
    response = agent.composition(None, tool_choice, tools).response
    return _body(question, openai_schema(response).openai_schema)


def variant(name: str, q: bfcl.Question, pkg: Any, tool_choice: str) -> dict[str, Any]:
    """The request of variant ``name``: the baseline's, or toolbind's with one thing changed."""
    if name.startswith("base"):
        body = baseline_request(q)
    else:
        body = toolbind_request(
            q, pkg, tool_choice, **({"meta_fields": "all"} if name == "full" else {})
        )
    function = body["tools"][0]["function"]
    if name in SCHEMA_VARIANTS:
        try:
            function["parameters"] = SCHEMA_VARIANTS[name](copy.deepcopy(function["parameters"]))
        except KeyError:  # the variant does not apply: the request as toolbind sends it
            return variant("toolbind", q, pkg, tool_choice)
    elif name == "desc-base":
        function["description"] = BASELINE_DESCRIPTION
    elif name.endswith("norep"):
        body["repeat_penalty"] = 1.0
    elif name == "listed":
        from toolbind._compose import describe_tools
        from toolbind.runtime._agent._feedback import with_tools_listed

        by_name = {t.name: t for t in pkg.TOOLS}
        tools = [by_name[n] for n in pkg.TOOLSETS[q.id]]
        body["messages"] = with_tools_listed(list(q.messages), describe_tools(tools))
    return body


def tag_sent(name: str, q: bfcl.Question, body: dict[str, Any]) -> str:
    """The key the calls of ``body`` name their function under."""
    if name.startswith("base"):
        taken = {p for f in q.functions for p in f.get("parameters", {}).get("properties", {})}
        return next(t for t in bfcl.TAGS if t not in taken)
    return tag_of(body["tools"][0]["function"]["parameters"])


def calls_of(arguments: str, tag: str) -> bfcl.Calls | None:
    try:
        answer = json.loads(arguments)
        return [
            (str(c.pop(tag)), bfcl._given({k: v for k, v in c.items() if not k.startswith("_")}))  # pyright: ignore[reportPrivateUsage]
            for c in answer["calls"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=14)
    parser.add_argument("--start", type=int, default=0, help="skip the first questions")
    parser.add_argument("--category", action="append", choices=bfcl.CATEGORIES)
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    parser.add_argument("--tool-choice", choices=("auto", "required"), default="auto")
    parser.add_argument(
        "--model",
        choices=("qwen", "smollm2"),
        default=None,
        help="the local model (default: $TOOLBIND_LOCAL_MODEL, else smollm2; demo/llm_server.py)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every answer")
    args = parser.parse_args(argv)
    categories = list(args.category or ("parallel_multiple", "live_parallel_multiple"))
    questions = bfcl.load(corpus_root(), categories, args.limit)[args.start :]
    names = list(args.variant or ("base", "toolbind", "tag-function", "full", "listed"))
    import httpx

    from demo.llm_server import LocalLLMUnavailable, llama_server

    tallies = {n: bfcl.Tally(n) for n in names}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="toolbind-probe-") as tmp,
            llama_server(args.model, n_ctx=4096) as server,
            httpx.Client(timeout=600) as http,
        ):
            pkg = bfcl.compile_questions(questions, Path(tmp))
            for q in questions:
                for name in names:
                    sent = variant(name, q, pkg, args.tool_choice)
                    body = {"model": server.model, **sent}
                    reply = http.post(f"{server.base_url}/chat/completions", json=body).json()
                    message = reply["choices"][0]["message"]
                    tool_calls = message.get("tool_calls") or []
                    text = tool_calls[0]["function"]["arguments"] if tool_calls else ""
                    tally = tallies[name]
                    tally.prompt_tokens += reply["usage"]["prompt_tokens"]
                    bfcl.score(tally, q, calls_of(text, tag_sent(name, q, sent)))
                    if args.verbose:
                        print(f"  {q.id} {name:12} {text[:300]}", flush=True)
    except LocalLLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\n{len(questions)} questions ({', '.join(categories)}), tool_choice={args.tool_choice}")
    print(f"{'variant':12} {'parsed':>6} {'right fn':>8} {'right args':>10} {'prompt tok':>10}")
    for t in tallies.values():
        print(
            f"{t.name:12} {t.valid:>6} {t.right_function:>8} {t.right_arguments:>10} "
            f"{t.prompt_tokens:>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
