"""Report: which tools of specs/ and the corpus can be exported as OpenAI strict tools, and why not.

    .venv/bin/python bench/strict_report.py [--examples N]

Compiles specs/ and the corpus tool files (``TOOLBIND_CORPUS``, default ``tests/corpus``) in a
temporary directory, then prints, for both compositions — every tool latent (the model is asked for
``_output``) and every tool explicit (an Activity runs it) — how many tools are strict-able and the
reasons of the others (a tool counts once per reason kind), plus what Gemini's schema drops.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _corpus import corpus_root

from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime import ToolBinding
from toolbind.runtime.errors import NotStrictable
from toolbind.runtime.exports import gemini_tools, openai_strict_schema

REPO = Path(__file__).resolve().parent.parent
CORPUS = corpus_root()


def load(inputs: list[Path]) -> list[ToolBinding]:
    out = Path(tempfile.mkdtemp(prefix="toolbind-report-"))
    tree = compile_to_directory(inputs, out)
    tools: list[ToolBinding] = []
    for name in sorted(tree.packages):
        tools.extend(load_package(out, name).TOOLS)
    return tools


def report(title: str, tools: list[ToolBinding], examples: int) -> None:
    print(f"\n## {title}: {len(tools)} tools")
    for mode in ("latent", "explicit"):
        activities = {t.name for t in tools} if mode == "explicit" else set[str]()
        strict = 0
        by_kind: Counter[str] = Counter()
        samples: dict[str, list[str]] = {}
        for tool in tools:
            try:
                openai_strict_schema(tool, activities)
            except NotStrictable as exc:
                for kind in sorted({i.kind for i in exc.issues}):
                    by_kind[kind] += 1
                    first = next(i for i in exc.issues if i.kind == kind)
                    samples.setdefault(kind, []).append(str(first))
                continue
            strict += 1
        refused = len(tools) - strict
        print(f"- {mode:8} strict: {strict:5}   refused: {refused:5}")
        for kind, count in by_kind.most_common():
            print(f"    {count:5} tool(s): {kind}")
            for line in samples[kind][:examples]:
                print(f"          e.g. {line}")
    gemini = gemini_tools(tools)
    notes = Counter(n.kind for n in gemini.notes)
    print(
        f"- gemini   declarations: {len(gemini.declarations)}, notes: {dict(notes.most_common())}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2, help="examples printed per reason")
    args = parser.parse_args()
    started = time.monotonic()
    report("specs/", load([REPO / "specs"]), args.examples)
    tool_dirs = [
        CORPUS / "tools" / "github-mcp-server",
        CORPUS / "tools" / "bfcl",
        CORPUS / "tools" / "bfcl" / "multi_turn_func_doc",
    ]
    if tool_dirs[0].is_dir():
        report("corpus tools", load(tool_dirs), args.examples)
    else:
        print(f"\n(corpus not found at {CORPUS}: set TOOLBIND_CORPUS)", file=sys.stderr)
    print(f"\n({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
