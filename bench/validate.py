"""Validation-throughput benchmark: toolbind's generated models vs peers, in the same run.

What is timed (``timeit``, ``--repeat`` rounds of ``--number`` calls — by default as many as
make a round last ≥ 0.2 s of CPU, per implementation — best round kept, reported as
calls/second) is validating one realistic tool call that arrives as a JSON string:

* toolbind: the tool spec is compiled with ``toolbind.compiler.compile_to_directory`` into a
  temporary directory and imported with ``load_package``; the tool's Call model
  (``next(t for t in pkg.TOOLS if t.name == NAME).call_model``), built first
  (``model_rebuild()``, as the peer's model is), runs ``model_validate_json(payload)``, the
  payload carrying ``"_tool": NAME`` (the Call model's discriminator). Once a toolbind model is
  built, that name is the validator's own method (see ``ToolModel`` in
  ``runtime/types.py``); the peer's is pydantic's ``BaseModel.model_validate_json``.
* jsonschema: ``validator_for(schema)(schema)`` built once (untimed), then
  ``validator.is_valid(json.loads(payload))`` — the JSON parse is inside the timed call, for
  parity with ``model_validate_json``.
* fastjsonschema (when importable): ``fastjsonschema.compile(schema)`` once (untimed), then
  ``validate(json.loads(payload))``.
* datamodel-code-generator: a Pydantic v2 model generated in-process (``generate(...,
  class_name="BenchToolCall")``) into a temporary ``.py`` and imported (untimed), then
  ``BenchToolCall.model_validate_json(payload)``.

Every implementation validates the same contract: the tool's schema as the LLM is asked to fill
it (``toolbind.contract.tool_schema(binding)``, with the package's ``$defs``: ``_tool`` const,
``_activity``, ``_reasoningForCall``, ``_output`` for latent tools, then the parameters), which
is exactly what the Call model implements, and the same payload (the call with ``"_tool"``).
Comparing against the bare parameters schema would time the peers on less work (they would
not read ``_tool`` nor know the meta fields). Every payload is first checked to be valid against
that schema with jsonschema, and every implementation is checked to accept it, before anything
is timed. Rounds are timed in process CPU time, which a busy machine disturbs less than wall
time.

Workloads: ``issue_write`` and ``create_pull_request`` from the corpus' github-mcp-server tools,
``weatherCheck`` from ``specs/seeds.yaml`` (which compiles to one package of 4 tools), and two
OpenAPI operations of the corpus: openai's ``createChatCompletion`` (an ``allOf`` body, so the
one field ``body``, with ``oneOf`` messages and tools; the spec compiles to ~1000 component
models) and Discord's ``create_message`` (a path parameter with an ECMA ``pattern`` and a body
of nullable unions, an int64 ``oneOf``, enums and patterned arrays). OpenAPI payloads are checked against the spec's own request
body schema (with its ``components``). The chat request uses ``safety_identifier``, not the
deprecated ``user``: datamodel-codegen's model for the openai spec raises ``AttributeError:
root`` on ``user`` (its generated ``User`` root model clashes), and every implementation must
accept the payload.

The targets, printed per workload as met or MISSED: toolbind ≥ 1.0× datamodel-codegen and
≥ 10× jsonschema.

Run: ``.venv/bin/python bench/validate.py`` (``--corpus`` to point at another corpus).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from _corpus import corpus_root, require
from datamodel_code_generator import DataModelType, Formatter, InputFileType, generate

from toolbind.compiler import compile_to_directory, load_package
from toolbind.contract import tool_schema

try:
    import fastjsonschema
except ImportError:  # optional peer
    fastjsonschema = None

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = corpus_root()

TARGET_VS_DMCG = 1.0
TARGET_VS_JSONSCHEMA = 10.0
DMCG_ROOT = "BenchToolCall"


@dataclass
class Workload:
    name: str  # the tool's name
    spec: Path  # the spec file toolbind compiles
    schema: dict[str, Any]  # the spec's own schema of the payload (or of its ``part``)
    payload: dict[str, Any]  # a valid call, without ``_tool``
    part: str | None = None  # the payload key ``schema`` describes (None: the whole payload)
    beside: tuple[str, ...] = ()  # payload keys ``schema`` does not describe (path parameters)

    def own_instance(self) -> Any:
        if self.part is not None:
            return self.payload[self.part]
        return {k: v for k, v in self.payload.items() if k not in self.beside}


def mcp_schema(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["inputSchema"]


def seeds_schema(path: Path, name: str) -> dict[str, Any]:
    schema = dict(yaml.safe_load(path.read_text())[name])
    schema["properties"] = {k: v for k, v in schema["properties"].items() if not k.startswith("_")}
    return schema


def openapi_schema(
    path: Path, ref: str | None = None, body_of: str | None = None
) -> dict[str, Any]:
    """A schema of the OpenAPI document ``path``, with its components beside it so that the
    document's ``#/components/...`` refs resolve: the component ``ref``, or the request body
    schema of the ``post`` operation at path ``body_of``."""
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=yaml.CSafeLoader)
    if ref is not None:
        schema: dict[str, Any] = {"$ref": ref}
    else:
        assert body_of is not None
        content = doc["paths"][body_of]["post"]["requestBody"]["content"]
        schema = dict(next(iter(content.values()))["schema"])
    return {**schema, "components": doc["components"]}


def _github_workloads(mcp: Path) -> list[Workload]:
    """Two tools of GitHub's MCP server (the corpus' ``tools/github-mcp-server``)."""
    return [
        Workload(
            "issue_write",
            mcp / "issue_write.json",
            mcp_schema(mcp / "issue_write.json"),
            {
                "method": "update",
                "owner": "octo-org",
                "repo": "toolbind",
                "issue_number": 42,
                "title": "Validation benchmark regresses on nested arrays",
                "body": "Steps to reproduce:\n1. Compile the corpus\n2. Run bench/validate.py\n",
                "assignees": ["alice", "bob"],
                "labels": ["bug", "performance", "needs-triage"],
                "milestone": 3,
                "state": "closed",
                "state_reason": "duplicate",
                "duplicate_of": 17,
                "type": "Bug",
                "issue_fields": [
                    {"field_name": "Priority", "field_option_name": "P1"},
                    {"field_name": "Estimate", "value": 5},
                    {"field_name": "Due date", "value": "2025-07-01"},
                    {"field_name": "Blocked", "delete": True},
                ],
            },
        ),
        Workload(
            "create_pull_request",
            mcp / "create_pull_request.json",
            mcp_schema(mcp / "create_pull_request.json"),
            {
                "owner": "octo-org",
                "repo": "toolbind",
                "title": "Speed up Call model validation",
                "head": "perf/validate-json",
                "base": "main",
                "body": "Closes #3.\n\n- strict JSON types\n- fewer wrappers\n",
                "draft": True,
                "maintainer_can_modify": False,
                "reviewers": ["alice", "octo-org/core-team"],
            },
        ),
    ]


def _chat_completion(openai: Path) -> Workload:
    """OpenAI's ``createChatCompletion``."""
    return Workload(
        # an allOf body (not flattened: the one field ``body``) whose messages are a oneOf
        "createChatCompletion",
        openai,
        openapi_schema(openai, ref="#/components/schemas/CreateChatCompletionRequest"),
        {
            "body": {
                "model": "gpt-4o",
                "messages": [
                    {"role": "system", "content": "You are a concise travel assistant."},
                    {"role": "user", "content": "What is the weather in Paris tomorrow?"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_7f3a",
                                "type": "function",
                                "function": {
                                    "name": "weatherCheck",
                                    "arguments": '{"location": "Paris", "day": "tomorrow"}',
                                },
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "call_7f3a",
                        "content": "Light rain, 14 °C, wind 20 km/h from the west.",
                    },
                ],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "weatherCheck",
                            "description": "Gets the weather for a location and day",
                            "parameters": {
                                "type": "object",
                                "properties": {
                                    "location": {"type": "string"},
                                    "day": {"type": "string"},
                                },
                                "required": ["location"],
                            },
                        },
                    }
                ],
                "tool_choice": "auto",
                "temperature": 0.2,
                "max_completion_tokens": 512,
                "safety_identifier": "user-1234",
            }
        },
        part="body",
    )


def _create_message(discord: Path) -> Workload:
    """Discord's ``create_message``."""
    return Workload(
        # a path parameter with an ECMA ``pattern`` and a body of nullable unions, an int64
        # ``oneOf``, enums in nested objects and a bounded array of patterned strings
        "create_message",
        discord,
        openapi_schema(discord, body_of="/channels/{channel_id}/messages"),
        {  # the body's fields are the Call's own, beside the path parameter
            "channel_id": "1122334455667788990",
            "content": "Your table for 2 at 19:30 is confirmed. React with ❌ to cancel.",
            "nonce": 7316230917012345678,
            "tts": False,
            "flags": 4,
            # not ``parse``: datamodel-codegen reads its items (an enum in ``allOf``) as objects
            "allowed_mentions": {"replied_user": False},
            "message_reference": {"message_id": "1122334455667788001", "fail_if_not_exists": False},
            "sticker_ids": ["749054660769218631"],
        },
        beside=("channel_id",),
    )


def workloads(corpus: Path) -> list[Workload]:
    """Each tool with a valid call; one whose spec the corpus lacks is left out, said on stderr."""
    seeds = ROOT / "specs" / "seeds.yaml"
    found = [
        *_github_workloads(corpus / "tools" / "github-mcp-server"),
        Workload(
            "weatherCheck",
            seeds,
            seeds_schema(seeds, "weatherCheck"),
            {"location": "Paris"},
        ),
        _chat_completion(corpus / "openapi" / "openai__openapi.yaml"),
        _create_message(corpus / "openapi" / "discord__http-api.json"),
    ]
    return found


def toolbind_validators(
    items: list[Workload], tmp: Path
) -> dict[str, tuple[Callable[[str], Any], dict[str, Any]]]:
    """Each tool's Call ``model_validate_json`` and the composed schema it implements."""
    specs = sorted({w.spec for w in items})
    tree = compile_to_directory(specs, tmp / "toolbind")
    by_spec = {Path(src).resolve(): pkg for pkg, src in tree.packages.items()}
    result: dict[str, tuple[Callable[[str], Any], dict[str, Any]]] = {}
    for w in items:
        pkg = load_package(tmp / "toolbind", by_spec[w.spec.resolve()])
        binding = next(t for t in pkg.TOOLS if t.name == w.name)
        schema = tool_schema(binding)
        if binding.defs:
            schema["$defs"] = dict(binding.defs)
        binding.call_model.model_rebuild()  # built before timing, as the peer's model is
        result[w.name] = (binding.call_model.model_validate_json, schema)
    return result


def dmcg_validator(w: Workload, schema: dict[str, Any], tmp: Path) -> Callable[[str], Any]:
    out = tmp / f"dmcg_{w.name}.py"
    generate(
        json.dumps(schema),
        input_file_type=InputFileType.JsonSchema,
        output=out,
        output_model_type=DataModelType.PydanticV2BaseModel,
        class_name=DMCG_ROOT,  # not "Model": openai has a component of that name
        formatters=[Formatter.BLACK, Formatter.ISORT],  # 0.89's default set, explicitly
    )
    module_name = f"_bench_dmcg_{w.name}"
    spec = importlib.util.spec_from_file_location(module_name, out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    model = getattr(module, DMCG_ROOT)
    model.model_rebuild()
    return model.model_validate_json


def best_rate(fn: Callable[[str], Any], payload: str, number: int, repeat: int) -> float:
    """Calls per CPU second, best of ``repeat`` rounds of ``number`` calls (``number`` 0: as
    many as make a round last ≥ 0.2 s, from ``timeit``'s ``autorange``)."""
    timer = timeit.Timer(lambda: fn(payload), timer=time.process_time)
    if number <= 0:
        number, _ = timer.autorange()
    return number / min(timer.repeat(number=number, repeat=repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--number", type=int, default=0, help="calls per timed round (0: ≥ 0.2 s per round)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (best is kept)")
    parser.add_argument(
        "--json", type=Path, help="also write the table here (docs/plots.py draws it)"
    )
    args = parser.parse_args()

    items = workloads(require(args.corpus, "the corpus directory"))
    impls = ["toolbind", "datamodel-codegen", "jsonschema"]
    if fastjsonschema is not None:
        impls.append("fastjsonschema")

    rates: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="toolbind-bench-validate-") as d:
        tmp = Path(d)
        tb = toolbind_validators(items, tmp)
        for w in items:
            toolbind_fn, schema = tb[w.name]
            call = {"_tool": w.name, **w.payload}
            jsonschema.validate(w.own_instance(), w.schema)  # valid against the spec's schema …
            cls = jsonschema.validators.validator_for(schema)
            for problem in cls(cls.META_SCHEMA).iter_errors(schema):  # noted, not fatal: the
                # spec's own (e.g. openai's ``$recursiveAnchor: true``, a 2019-09 keyword)
                print(f"note: {w.name}'s schema breaks its meta-schema at {problem.json_path}")
            problem = jsonschema.exceptions.best_match(cls(schema).iter_errors(call))
            if problem is not None:  # … and against the composed one, checked first
                raise SystemExit(f"the {w.name} payload is invalid: {problem}")
            tagged = json.dumps(call)

            validator = cls(schema)
            fns: dict[str, tuple[Callable[[str], Any], str]] = {
                "toolbind": (toolbind_fn, tagged),
                "datamodel-codegen": (dmcg_validator(w, schema, tmp), tagged),
                "jsonschema": (lambda s, v=validator: v.is_valid(json.loads(s)), tagged),
            }
            if fastjsonschema is not None:
                fast = fastjsonschema.compile(schema)
                fns["fastjsonschema"] = (lambda s, f=fast: f(json.loads(s)), tagged)

            for impl, (fn, payload) in fns.items():  # every implementation accepts the call
                ok = fn(payload)
                if ok is False:
                    raise SystemExit(f"{impl} rejects the {w.name} payload")
            rates[w.name] = {
                impl: best_rate(fn, payload, args.number, args.repeat)
                for impl, (fn, payload) in fns.items()
            }

    rounds = f"{args.number} calls" if args.number > 0 else "≥ 0.2 s CPU"
    print(f"Validation throughput, calls/s (best of {args.repeat} rounds of {rounds})")
    print(f"python {sys.version.split()[0]}")
    width = max(len(w.name) for w in items)
    print(f"{'workload':<{width}}  " + "  ".join(f"{i:>18}" for i in impls))
    for w in items:
        row = "  ".join(f"{rates[w.name][i]:>18,.0f}" for i in impls)
        print(f"{w.name:<{width}}  {row}")

    print()
    print("Ratios (toolbind / peer) against the targets")
    misses = 0
    for w in items:
        r = rates[w.name]
        for peer, target in (
            ("datamodel-codegen", TARGET_VS_DMCG),
            ("jsonschema", TARGET_VS_JSONSCHEMA),
        ):
            ratio = r["toolbind"] / r[peer]
            met = ratio >= target
            misses += not met
            verdict = "met" if met else "MISSED"
            print(
                f"{w.name:<{width}}  toolbind/{peer:<17} {ratio:6.2f}×"
                f"  (target ≥ {target:g}×: {verdict})"
            )
    print()
    print("all targets met" if misses == 0 else f"{misses} target(s) missed")
    if args.json is not None:
        write_json(args.json, impls, rates, rounds)


def write_json(
    path: Path, impls: list[str], rates: dict[str, dict[str, float]], rounds: str
) -> None:
    """The table as ``docs/plots.py`` reads it: calls per CPU second per workload."""
    table = {
        "source": f"bench/validate.py, best of rounds of {rounds}, python {sys.version.split()[0]}",
        "implementations": impls,
        "workloads": [
            {"workload": name, **{i: round(r[i]) for i in impls}} for name, r in rates.items()
        ],
    }
    path.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
