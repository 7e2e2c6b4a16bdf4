"""Tool selection on large toolsets: recall@k of the selector and the
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
main's BM25 before the vocabulary work::

    git show main:runtime/_selection.py | sed 's/^from \\./from toolbind.runtime./' > /tmp/v1.py
    PYTHONPATH=/tmp .venv/bin/python bench/selection.py --selector v1:BM25Selector

``--ablate`` measures the default selector with each of its parts taken out in turn (recall at
5/10/20 and, smoother, the mean recall over k = 1..30): a part is kept when it helps, or is
neutral, on both sets.

Run: ``.venv/bin/python bench/selection.py [--k 5 10 20] [--questions FILE ...] [--ablate]
[--json FILE] [-v]``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any
from unittest import mock

from _corpus import REPO, corpus_root, require

DATA = REPO / "tests" / "runtime" / "data"
SETS = [DATA / "slack_questions.json", DATA / "netlify_questions.json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 10, 20, 30])
    parser.add_argument("--questions", type=Path, nargs="+", default=SETS, help="question sets")
    parser.add_argument("--corpus", type=Path, default=corpus_root())
    parser.add_argument("--selector", help="module:factory of another ToolSelector (given k)")
    parser.add_argument("--ablate", action="store_true", help="each part of the default taken out")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)

    from toolbind.runtime._selection import BM25Selector

    factory: Any = BM25Selector
    if args.selector:
        module, _, name = args.selector.partition(":")
        factory = getattr(importlib.import_module(module), name)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolbind-selection-") as tmp:
        sets = [load(q, Path(tmp), args.corpus) for q in args.questions]
        if args.ablate:
            rows = ablate(sets)
        else:
            for one in sets:
                rows.extend(measure(one, factory, args))
            names = [one[0] for one in sets]
            print(f"\nrecall@k  {' '.join(f'{n:>8}' for n in names)}")
            for k in args.k:
                got = [r["recall"] for n in names for r in rows if r["set"] == n and r["k"] == k]
                print(f"{k:>8}  {' '.join(f'{v:>8.2f}' for v in got)}")
            print("target: recall >= 0.95 at k = 10")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


QuestionSet = tuple[str, str, list[Any], list[dict[str, str]]]  # name, spec, tools, questions


def load(questions_file: Path, tmp: Path, corpus: Path) -> QuestionSet:
    """A question set with its spec compiled by toolbind and its package's tools."""
    from toolbind.compiler import compile_to_directory, load_package

    data: dict[str, Any] = json.loads(questions_file.read_text(encoding="utf-8"))
    spec = require(corpus / data["spec"], f"the spec of {questions_file.name}")
    name = questions_file.stem.removesuffix("_questions")
    out = tmp / name
    tree = compile_to_directory([spec], out)
    pkg = load_package(out, next(iter(tree.packages)))
    return name, data["spec"], list(pkg.TOOLS), data["questions"]


def measure(one: QuestionSet, factory: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One question set: recall@k, bytes per request and ms per selection for each k."""
    from toolbind.runtime import compose

    name, spec, tools, questions = one

    def size(offered: list[Any], question: str) -> int:
        schema = compose(offered, activities={t.name for t in offered})
        return len(json.dumps(schema, separators=(",", ":"))) + len(question.encode())

    every = sum(size(tools, q["question"]) for q in questions) / len(questions)
    print(
        f"{name} ({spec}): {len(tools)} operations, {len(questions)} questions "
        f"for {len({q['operation'] for q in questions})} operations"
    )
    print(f"every tool offered: {every / 1000:.1f} KB per request")
    print(f"{'k':>4} {'recall@k':>9} {'KB/request':>11} {'vs all':>7} {'ms/select':>10}")
    rows: list[dict[str, Any]] = []
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


def ablations() -> dict[str, Callable[[], contextlib.AbstractContextManager[Any]]]:
    """Each part of the default selector, taken out (the module's internals patched)."""
    import toolbind.runtime._selection as s

    thesaurus = s._thesaurus  # pyright: ignore[reportPrivateUsage]
    words = s._words  # pyright: ignore[reportPrivateUsage]

    @contextlib.contextmanager
    def nouns() -> Generator[None]:
        thesaurus.cache_clear()
        with mock.patch.object(s, "_NOUNS", dict[str, str]()):
            yield
        thesaurus.cache_clear()

    def no_prefix(self: Any, query: str, tools: Any) -> list[str]:
        return s.terms(s._stems(s._VALUE.sub(" ", query)))  # pyright: ignore[reportPrivateUsage]

    def no_classes() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
        return {}, frozenset()

    def no_generic() -> tuple[Any, frozenset[str]]:
        return thesaurus()[0], frozenset()

    def no_past(text: str) -> list[tuple[str, bool]]:
        return [(w, False) for w, _ in words(text)]

    weights = ("_NAME", "_TAGS", "_PARAMETERS", "_PARAMETER_TEXT", "_OUTPUT")
    return {
        "every part": contextlib.nullcontext,
        "no thesaurus": lambda: mock.patch.object(s, "_thesaurus", no_classes),
        "no noun classes": nouns,
        "generic verbs kept as words": lambda: mock.patch.object(s, "_thesaurus", no_generic),
        "no past-form rule": lambda: mock.patch.object(s, "_words", no_past),
        "values kept": lambda: mock.patch.object(s, "_VALUE", re.compile(r"(?!)")),
        "no prefix/suffix match": lambda: mock.patch.object(
            s.BM25Selector, "query_terms", no_prefix
        ),
        "no group share": lambda: mock.patch.object(s, "_GROUP", 0.0),
        "equal field weights": lambda: mock.patch.multiple(s, **dict.fromkeys(weights, 1.0)),
    }


def ablate(sets: list[QuestionSet]) -> list[dict[str, Any]]:
    """The default selector with each part taken out: recall@5/10/20 and the mean recall over
    k = 1..30 per set."""
    from toolbind.runtime._selection import BM25Selector

    rows: list[dict[str, Any]] = []
    print(f"| taken out | {' | '.join(f'{one[0]} @5 / @10 / @20 (mean @1..30)' for one in sets)} |")
    print(f"| --- |{' --- |' * len(sets)}")
    for label, patch in ablations().items():
        cells: list[str] = []
        for name, _, tools, questions in sets:
            with patch():
                selector = BM25Selector(30)
                ranks = [
                    [t.name for t, _ in selector.rank(q["question"], tools)].index(q["operation"])
                    + 1
                    for q in questions
                ]
            at = {k: sum(r <= k for r in ranks) / len(ranks) for k in range(1, 31)}
            smooth = sum(at.values()) / 30
            rows.append({"set": name, "ablation": label, "recall": at, "mean_recall": smooth})
            cells.append(f"{at[5]:.2f} / {at[10]:.2f} / {at[20]:.2f} ({smooth:.3f})")
        print(f"| {label} | {' | '.join(cells)} |")
    return rows


if __name__ == "__main__":
    sys.exit(main())
