"""Incremental regeneration: ``toolbind generate`` over the corpus, then
one tool's description changed in the largest spec; the regeneration's time against a full run's,
in the same run (the peer is toolbind's own full run: no other generator regenerates
incrementally).

    .venv/bin/python bench/incremental.py [--corpus DIR] [--json FILE] [--spec NAME]

Steps, each a fresh ``toolbind generate`` process (wall time from spawn to reap):

1. **full**: every spec of ``corpus/openapi/`` into an empty directory;
2. **no change**: the same again into that output (every package reused);
3. **one description**: the first plain one-line ``summary``/``description`` of an operation in
   the largest spec gets " (edited)"; generate into the previous output;
4. **full again**: the edited specs into an empty directory — the reference time, and the tree
   step 3 must equal byte for byte.

Targets: step 3 ≤ 1 s on an idle machine and ≤ 0.2 × step 4.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _corpus import REPO, corpus_root, require

TOOLBIND = str(Path(sys.executable).with_name("toolbind"))
CPU: list[float] = []  # CPU seconds of each run, in order
_YAML_LINE = re.compile(r"^(\s+(?:summary|description): )([A-Za-z][^\n'\"|>#:]*)$", re.M)
_JSON_LINE = re.compile(r'("(?:summary|description)": ")([A-Za-z][^"\\]*)(")')


def run(specs: Path, out: Path) -> float:
    """Wall time of one ``toolbind generate``; its CPU time (user + system, ruff included) is
    added to ``CPU`` — on a loaded machine the closer measure of what an idle one would take."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [TOOLBIND, "generate", str(specs), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=specs.parent,
    )
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        sys.exit(f"toolbind generate failed:\n{result.stderr[-2000:]}")
    return took


def edit_one_description(spec: Path) -> str:
    """Append " (edited)" to the first operation's one-line summary/description."""
    text = spec.read_text(encoding="utf-8")
    head = text.find("paths")
    pattern = _JSON_LINE if spec.suffix == ".json" else _YAML_LINE
    match = pattern.search(text, head if head >= 0 else 0)
    if match is None:
        sys.exit(f"no one-line summary or description to edit in {spec}")
    edited = text[: match.end(2)] + " (edited)" + text[match.end(2) :]
    spec.write_text(edited, encoding="utf-8")
    return match.group(2)[:60]


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--spec", default=None, help="the spec to edit (a file name; default: the largest)"
    )
    args = parser.parse_args()
    corpus = require((args.corpus or corpus_root()) / "openapi", "the OpenAPI corpus")
    with tempfile.TemporaryDirectory(prefix="toolbind-bench-", dir=REPO.parent) as tmp:
        work = Path(tmp)
        specs = work / "specs"
        specs.mkdir()
        for spec in sorted(corpus.iterdir()):
            if spec.suffix in (".json", ".yaml", ".yml"):
                shutil.copyfile(spec, specs / spec.name)
        largest = (
            specs / args.spec if args.spec else max(specs.iterdir(), key=lambda p: p.stat().st_size)
        )
        if not largest.is_file():
            sys.exit(f"--spec {args.spec}: no such spec in {corpus}")
        out = work / "out"
        full = run(specs, out)
        noop = run(specs, out)
        what = edit_one_description(largest)
        incremental = run(specs, out)
        reference = work / "reference"
        full_again = run(specs, reference)
        same = tree(out) == tree(reference)
        result = {
            "specs": len(list(specs.iterdir())),
            "edited_spec": largest.name,
            "largest_bytes": largest.stat().st_size,
            "edited": what,
            "full_s": round(full, 2),
            "no_change_s": round(noop, 2),
            "one_description_s": round(incremental, 2),
            "full_again_s": round(full_again, 2),
            "ratio": round(incremental / full_again, 3),
            "cpu_s": [round(c, 2) for c in CPU],
            "cpu_ratio": round(CPU[2] / CPU[3], 3),
            "byte_identical": same,
            "cpus": os.cpu_count(),
            "load": os.getloadavg()[0],
        }
    print(f"{result['specs']} specs; edited {largest.name} ({result['largest_bytes']:,} bytes)")
    print("                               wall       CPU (user+sys, ruff included)")
    for (label, took), cpu in zip(
        [
            ("full run", full),
            ("no change (all reused)", noop),
            (f"one description in {largest.name}", incremental),
            ("full run of the edited specs", full_again),
        ],
        CPU,
        strict=True,
    ):
        print(f"{label:<30} {took:7.2f} s {cpu:7.2f} s")
    print(
        f"ratio one-description / full: wall {result['ratio']:.3f}, CPU {result['cpu_ratio']:.3f} "
        f"(target ≤ 0.2, ≤ 1 s idle); byte-identical to the full run: {same}; "
        f"load average {result['load']:.1f}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if not same:
        sys.exit("the incremental tree differs from the full run's")


if __name__ == "__main__":
    main()
