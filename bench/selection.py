"""Tool selection on large toolsets (issue 15, must-show 2): recall@k of the selector and the
prompt bytes with and without selection.

Two question sets, each one question a user would ask for 50 different operations of a
174-operation spec from the corpus, compiled by toolbind: ``tests/runtime/data/slack_questions.json``
(Slack's Web API, the set the selector was developed on) and
``tests/runtime/data/netlify_questions.json`` (Netlify's API, a held-out set written before the
selector ran on that spec). For each set and k: recall@k (the operation asked for is among the k
tools the selector offers) and the bytes of what the model is sent — the composed ``{calls,
output}`` function (compact JSON, as instructor sends it) plus the question — with every tool
offered vs the k selected (mean over the questions). The peer in the same run is offering every
tool; another selector can be measured with ``--selector module:factory`` (called with k), e.g.
main's BM25 before issue 15's vocabulary work::

    git show main:runtime/_selection.py | sed 's/^from \\./from toolbind.runtime./' > /tmp/v1.py
    PYTHONPATH=/tmp .venv/bin/python bench/selection.py --selector v1:BM25Selector

Run: ``.venv/bin/python bench/selection.py [--k 5 10 20] [--questions FILE ...] [--json FILE] [-v]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _corpus import REPO, corpus_root, require

DATA = REPO / "tests" / "runtime" / "data"
SETS = [DATA / "slack_questions.json", DATA / "netlify_questions.json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 10, 20, 30])
    parser.add_argument("--questions", type=Path, nargs="+", default=SETS, help="question sets")
    parser.add_argument("--corpus", type=Path, default=corpus_root())
    parser.add_argument("--selector", help="module:factory of another ToolSelector (given k)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)

    from toolbind.runtime._selection import BM25Selector

    factory: Any = BM25Selector
    if args.selector:
        module, _, name = args.selector.partition(":")
        factory = getattr(importlib.import_module(module), name)
    rows: list[dict[str, Any]] = []
    for questions in args.questions:
        rows.extend(measure(questions, factory, args))
    names = [q.stem.removesuffix("_questions") for q in args.questions]
    print(f"\nrecall@k  {' '.join(f'{n:>8}' for n in names)}")
    for k in args.k:
        got = [r["recall"] for n in names for r in rows if r["set"] == n and r["k"] == k]
        print(f"{k:>8}  {' '.join(f'{v:>8.2f}' for v in got)}")
    print("target (issue 15): recall >= 0.95 at k = 10")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


def measure(questions_file: Path, factory: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One question set: recall@k, bytes per request and ms per selection for each k."""
    from toolbind.compiler import compile_to_directory, load_package
    from toolbind.runtime import compose

    data: dict[str, Any] = json.loads(questions_file.read_text(encoding="utf-8"))
    spec = require(args.corpus / data["spec"], f"the spec of {questions_file.name}")
    name = questions_file.stem.removesuffix("_questions")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolbind-selection-") as tmp:
        tree = compile_to_directory([spec], Path(tmp))
        pkg = load_package(Path(tmp), next(iter(tree.packages)))
        tools = list(pkg.TOOLS)
        questions: list[dict[str, str]] = data["questions"]

        def size(offered: list[Any], question: str) -> int:
            schema = compose(offered, activities={t.name for t in offered})
            return len(json.dumps(schema, separators=(",", ":"))) + len(question.encode())

        every = sum(size(tools, q["question"]) for q in questions) / len(questions)
        print(
            f"{name} ({data['spec']}): {len(tools)} operations, {len(questions)} questions "
            f"for {len({q['operation'] for q in questions})} operations"
        )
        print(f"every tool offered: {every / 1000:.1f} KB per request")
        print(f"{'k':>4} {'recall@k':>9} {'KB/request':>11} {'vs all':>7} {'ms/select':>10}")
        for k in args.k:
            selector = factory(k)
            selector.select("warm up", tools)  # the index is built once per tool list
            hits = 0
            total = 0
            seconds = 0.0
            for q in questions:
                started = time.perf_counter()
                chosen = list(selector.select(q["question"], tools))
                seconds += time.perf_counter() - started
                total += size(chosen, q["question"])
                if q["operation"] in {t.name for t in chosen}:
                    hits += 1
                elif args.verbose:
                    print(f"    miss at k={k}: {q['operation']}: {q['question']}")
            mean = total / len(questions)
            recall = hits / len(questions)
            rows.append({"set": name, "k": k, "recall": recall, "bytes": mean, "all_bytes": every})
            print(
                f"{k:>4} {recall:>9.2f} {mean / 1000:>11.1f} {mean / every:>6.2f}x "
                f"{1000 * seconds / len(questions):>10.2f}"
            )
    return rows


if __name__ == "__main__":
    sys.exit(main())
