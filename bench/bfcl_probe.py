"""BFCL probe: what in toolbind's request changes a small model's answer? One variable at a time.

``bench/bfcl.py`` compares whole configurations; this script explains them. For each question it
builds the two requests llama.cpp receives — the instructor baseline's (``FunctionCalls``, a
discriminated union tagged ``function``) and toolbind's composed ``Response`` (latent tools, the
seeds' meta fields and tag ``_tool``: ``ModelSettings(call_tag="_tool")``, ``tool_choice="required"``) —
and sends toolbind's again with exactly one
thing changed, straight to the local server (no retries, no validation: the raw arguments the
model wrote, scored as ``bfcl.py`` scores them):

- ``key``: the ``_tool`` tag renamed ``function`` (the baseline's tag, and ``Agent``'s default
  ``call_tag``); ``key-name``, ``key-tool``: renamed ``name``, ``tool``;
- ``lean``: no ``_activity``/``_reasoningForCall``/``_output`` (``meta_fields="needed"`` minus
  ``_output``);
- ``no-output``: no ``output`` property; ``no-min``: no ``minItems``; ``no-desc``: no tool
  descriptions (they never reach SmolLM2: its chat template ignores ``tools``);
- ``tag-last``: ``_tool`` after the arguments (llama.cpp writes required properties in order);
- ``norep``: ``repeat_penalty: 1.0`` (llama-cpp-python's default is 1.1) for toolbind and
  ``base-norep`` for the baseline;
- ``listed``: the tools listed in a system message (``ModelSettings(tools_in_prompt=True)``).

Run: ``.venv/bin/python bench/bfcl_probe.py [--limit 14] [--start 0] [--category NAME ...]
[--variant NAME ...] [-v]``; prints per variant: answers that parsed, right function(s), right
arguments, prompt tokens.
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


def _renamed_tag(tag: str) -> Callable[[Schema], Schema]:
    def renamed(schema: Schema) -> Schema:
        for one in _items(schema):
            if tag in one["properties"]:  # a parameter of that name: the rename would clash
                raise KeyError(tag)
            one["properties"] = {
                (tag if k == "_tool" else k): v for k, v in one["properties"].items()
            }
            one["required"] = [tag if r == "_tool" else r for r in one["required"]]
        return schema

    return renamed


def _lean(schema: Schema) -> Schema:
    for one in _items(schema):
        for meta in ("_activity", "_reasoningForCall", "_output"):
            one["properties"].pop(meta, None)
    return schema


def _no_output(schema: Schema) -> Schema:
    schema["properties"].pop("output")
    schema["required"] = ["calls"]
    return schema


def _no_min(schema: Schema) -> Schema:
    schema["properties"]["calls"].pop("minItems", None)
    return schema


def _tag_last(schema: Schema) -> Schema:
    for one in _items(schema):
        tag = one["properties"].pop("_tool")
        one["properties"]["_tool"] = tag
        one["required"] = [*(r for r in one["required"] if r != "_tool"), "_tool"]
    return schema


def _no_desc(schema: Schema) -> Schema:
    for one in _items(schema):
        one.pop("description", None)
    return schema


SCHEMA_VARIANTS: dict[str, Callable[[Schema], Schema]] = {
    "key": _renamed_tag("function"),
    "key-name": _renamed_tag("name"),
    "key-tool": _renamed_tag("tool"),
    "lean": _lean,
    "no-output": _no_output,
    "no-min": _no_min,
    "no-desc": _no_desc,
    "tag-last": _tag_last,
}
TAGS = {"key": "function", "key-name": "name", "key-tool": "tool"}
VARIANTS = ("base", "toolbind", *SCHEMA_VARIANTS, "norep", "base-norep", "listed")


def requests_for(question: bfcl.Question, pkg: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The baseline's and toolbind's chat completion bodies, as instructor sends them."""
    from instructor.processing.function_calls import openai_schema

    from toolbind.runtime import Agent

    def body(function: dict[str, Any]) -> dict[str, Any]:
        return {
            "messages": question.messages,
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": function["name"]}},
            **bfcl.SETTINGS,
        }

    baseline = openai_schema(bfcl.baseline_model(question.functions)).openai_schema
    by_name = {t.name: t for t in pkg.TOOLS}
    tools = [by_name[n] for n in pkg.TOOLSETS[question.id]]
    agent = Agent(
        "http://127.0.0.1:9/v1",
        model="m",
        tools=tools,
        activities={},
        settings=ModelSettings(call_tag="_tool"),
    )
    composed = openai_schema(agent.composition(None, "required", tools).response).openai_schema
    return body(baseline), body(composed)


def variant(name: str, baseline: dict[str, Any], composed: dict[str, Any], pkg: Any, q: Any) -> Any:
    body = copy.deepcopy(baseline if name.startswith("base") else composed)
    if name in SCHEMA_VARIANTS:
        function = body["tools"][0]["function"]
        try:
            function["parameters"] = SCHEMA_VARIANTS[name](function["parameters"])
        except KeyError:  # the variant does not apply: the request as toolbind sends it
            return variant("toolbind", baseline, composed, pkg, q)
    elif name.endswith("norep"):
        body["repeat_penalty"] = 1.0
    elif name == "listed":
        from toolbind._compose import describe_tools
        from toolbind.runtime._agent._feedback import with_tools_listed

        by_name = {t.name: t for t in pkg.TOOLS}
        tools = [by_name[n] for n in pkg.TOOLSETS[q.id]]
        body["messages"] = with_tools_listed(list(q.messages), describe_tools(tools))
    return body


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
    parser.add_argument("-v", "--verbose", action="store_true", help="print every answer")
    args = parser.parse_args(argv)
    categories = list(args.category or ("parallel_multiple", "live_parallel_multiple"))
    questions = bfcl.load(corpus_root(), categories, args.limit)[args.start :]
    names = list(args.variant or ("base", "toolbind", "key", "lean", "listed"))
    import httpx

    from demo.llm_server import LocalLLMUnavailable, llama_server

    tallies = {n: bfcl.Tally(n) for n in names}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="toolbind-probe-") as tmp,
            llama_server(n_ctx=4096) as server,
            httpx.Client(timeout=600) as http,
        ):
            pkg = bfcl.compile_questions(questions, Path(tmp))
            for q in questions:
                baseline, composed = requests_for(q, pkg)
                for name in names:
                    body = {"model": server.model, **variant(name, baseline, composed, pkg, q)}
                    reply = http.post(f"{server.base_url}/chat/completions", json=body).json()
                    message = reply["choices"][0]["message"]
                    tool_calls = message.get("tool_calls") or []
                    text = tool_calls[0]["function"]["arguments"] if tool_calls else ""
                    tag = TAGS.get(name, "_tool")
                    if TAGS.get(name) and any(
                        tag in f.get("parameters", {}).get("properties", {}) for f in q.functions
                    ):
                        tag = "_tool"  # the variant fell back to toolbind's request
                    if name.startswith("base"):
                        taken = {
                            p
                            for f in q.functions
                            for p in f.get("parameters", {}).get("properties", {})
                        }
                        tag = next(t for t in bfcl.TAGS if t not in taken)
                    calls = calls_of(text, tag)
                    tally = tallies[name]
                    tally.prompt_tokens += reply["usage"]["prompt_tokens"]
                    bfcl.score(tally, q, calls)
                    if args.verbose:
                        print(f"  {q.id} {name:10} {text[:300]}", flush=True)
    except LocalLLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\n{len(questions)} questions ({', '.join(categories)})")
    print(f"{'variant':12} {'parsed':>6} {'right fn':>8} {'right args':>10} {'prompt tok':>10}")
    for t in tallies.values():
        print(
            f"{t.name:12} {t.valid:>6} {t.right_function:>8} {t.right_arguments:>10} "
            f"{t.prompt_tokens:>10}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
