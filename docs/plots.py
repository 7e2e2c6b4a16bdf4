"""Docs layer: the Benchmarks page's plots, PNGs made from the benches' JSON outputs in docs/bench/.
Imports matplotlib (the ``docs`` extra) and the standard library.

    .venv/bin/python docs/plots.py            # docs/bench/*.json → docs/bench/*.png

Each plot is drawn from one file when it is there: ``openapi.json`` (``bench/openapi.py --json``:
compile wall time by spec size, toolbind beside datamodel-code-generator), ``validate.json``
(``bench/validate.py``'s table: calls per CPU second), ``bfcl.json`` (``bench/bfcl.py``'s figures by
configuration), ``selection.json`` (``bench/selection.py --json``: recall@k).
"""

# matplotlib types its methods with **kwargs left unannotated: every call is "partially unknown"
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt

HERE = Path(__file__).resolve().parent / "bench"


def _read(name: str) -> Any:
    path = HERE / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _save(fig: Any, name: str) -> None:
    # no timestamp or software version in the file: the same figures give the same bytes
    fig.tight_layout()
    fig.savefig(HERE / name, dpi=100, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {HERE / name}")


def compile_time(rows: list[dict[str, Any]]) -> None:
    """Compile wall time by operations: toolbind and datamodel-code-generator, per spec."""
    rows = sorted(rows, key=lambda r: r["operations"])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(
        [r["operations"] for r in rows],
        [r["toolbind"]["wall"] for r in rows],
        "o-",
        label="toolbind generate",
    )
    peers = [r for r in rows if r.get("peer") and r["peer"].get("ok")]
    ax.plot(
        [r["operations"] for r in peers],
        [r["peer"]["wall"] for r in peers],
        "s--",
        label="datamodel-codegen (models only)",
    )
    for r in rows:
        ax.annotate(
            r["spec"].split("__")[0],
            (r["operations"], r["toolbind"]["wall"]),
            textcoords="offset points",
            xytext=(4, -10),
            fontsize=8,
        )
    ax.set_xlabel("operations in the spec")
    ax.set_ylabel("wall time, s (loaded machine)")
    ax.set_title("Compile time by spec size")
    ax.legend()
    _save(fig, "compile_time.png")


def validation(data: dict[str, Any]) -> None:
    """Calls validated per CPU second, per workload and implementation (log scale)."""
    workloads = data["workloads"]
    names = data["implementations"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(names)
    for i, impl in enumerate(names):
        xs = [j + i * width for j in range(len(workloads))]
        ax.bar(xs, [w[impl] for w in workloads], width, label=impl)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))])
    ax.set_xticklabels([w["workload"] for w in workloads], rotation=15, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("calls per CPU second")
    ax.set_title("Validating one tool call")
    ax.legend(fontsize=8)
    _save(fig, "validation.png")


def bfcl(data: dict[str, Any]) -> None:
    """Valid answers, right functions and right arguments per configuration."""
    configs = data["configurations"]
    keys = ("valid", "right_function", "right_arguments")
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        ax.barh(
            [j + i * width for j in range(len(configs))],
            [c[key] for c in configs],
            width,
            label=key.replace("_", " "),
        )
    ax.set_yticks([j + width for j in range(len(configs))])
    ax.set_yticklabels([c["name"] for c in configs], fontsize=8)
    ax.set_xlabel(f"of {data['questions']} BFCL questions ({data.get('model', 'SmolLM2-135M')})")
    ax.set_title("BFCL accuracy by configuration")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    _save(fig, "bfcl.png")


def selection(rows: list[dict[str, Any]]) -> None:
    """Recall@k of the BM25 tool selector, per question set."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in sorted({r["set"] for r in rows}):
        mine = sorted((r for r in rows if r["set"] == name), key=lambda r: r["k"])
        ax.plot([r["k"] for r in mine], [r["recall"] for r in mine], "o-", label=name)
    ax.set_xlabel("k (tools offered per request)")
    ax.set_ylabel("recall@k (50 questions)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Tool selection on 174-operation specs")
    ax.legend()
    _save(fig, "selection.png")


def main() -> int:
    """Draw every plot whose input is there; exit 1 when none is."""
    drawn = 0
    for name, draw in (
        ("openapi.json", compile_time),
        ("validate.json", validation),
        ("bfcl.json", bfcl),
        ("selection.json", selection),
    ):
        data = _read(name)
        if data is not None:
            draw(data)
            drawn += 1
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main())
