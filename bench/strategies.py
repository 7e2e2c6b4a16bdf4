"""Building ``toolbind.testing.strategies_for`` for every tool of one large spec — what
``toolbind test`` (and ``--base-url``) pays before its first Call is drawn — with each tool's
schema carrying only the shared definitions it reaches, beside the way it was before: every
definition of the spec attached to every tool.

```sh
nice -n 10 .venv/bin/python bench/strategies.py SPEC [--limit N] [--draw]
```

The spec is compiled once per run into a temporary package (not timed). Each way runs in a
child process of its own (no cache shared): for each tool (the first ``N`` with ``--limit``),
``strategies_for(tool)`` — the Call's contract schema checked with ``jsonschema`` and
hypothesis-jsonschema's strategy — and, with ``--draw``, one instance drawn from it. CPU seconds
are the figure (a shared machine's wall time says more about its other users); wall time is
printed beside them. Prints per way: tools, CPU and wall seconds in all and per tool, the mean
schema size; then the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import HypothesisException

WAYS = ("every", "reached")


def _draw_one(strategy: Any) -> None:
    @settings(max_examples=1, database=None, deadline=None, suppress_health_check=HealthCheck.all())
    @given(strategy)
    def once(_: object) -> None:
        pass

    # (a schema hypothesis cannot draw from: its time still counts)
    with contextlib.suppress(HypothesisException):
        once()


def _every_definition() -> None:
    """The way before: every shared definition of the package attached to each schema."""
    from toolbind.testing import _contract

    def with_every_def(schema: dict[str, Any], binding: Any) -> dict[str, Any]:
        if binding.defs:
            return {**schema, "$defs": {**dict(binding.defs), **schema.get("$defs", {})}}
        return schema

    _contract.with_defs = with_every_def  # (call_schema/output_schema look it up at call time)


def measure(spec: Path, way: str, limit: int, draw: bool) -> dict[str, Any]:
    """One way's figures (run in the child)."""
    from toolbind.testing import ContractError, contract_schema, strategies_for
    from toolbind.testing._runner import compile_specs

    warnings.simplefilter("ignore")
    if way == "every":
        _every_definition()
    compiled = compile_specs([spec])
    try:
        tools = [t for _, t in compiled.tools][: limit or None]
        cpu = wall = 0.0
        size = refused = 0
        for tool in tools:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            try:
                strategy = strategies_for(tool)
            except ContractError:  # (its time counts; it is counted)
                refused += 1
            else:
                if draw:
                    _draw_one(strategy)
            cpu += time.process_time() - cpu0
            wall += time.perf_counter() - wall0
            with contextlib.suppress(ContractError):
                size += len(json.dumps(contract_schema(tool)))
    finally:
        compiled.close()
    return {"tools": len(tools), "cpu": cpu, "wall": wall, "bytes": size, "refused": refused}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="the first N tools only")
    parser.add_argument("--draw", action="store_true", help="also draw one instance per tool")
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # (the child's)
    args = parser.parse_args()
    if args.way:
        print(json.dumps(measure(args.spec, args.way, args.limit, args.draw)))
        return
    found: dict[str, dict[str, Any]] = {}
    for way in WAYS:
        extra = [
            *(["--limit", str(args.limit)] if args.limit else []),
            *(["--draw"] if args.draw else []),
        ]
        child = subprocess.run(
            [sys.executable, __file__, str(args.spec), "--way", way, *extra],
            capture_output=True,
            text=True,
            check=True,
        )
        found[way] = json.loads(str(child.stdout).strip().splitlines()[-1])
        f = found[way]
        n = max(1, f["tools"])
        print(
            f"{way:>8} definitions: {f['tools']} tools, {f['cpu']:.1f} CPU-s "
            f"({1000 * f['cpu'] / n:.0f} ms per tool), {f['wall']:.1f} s wall; schema "
            f"{f['bytes'] // n:,} bytes per tool; {f['refused']} refused as invalid"
        )
    ratio = found["every"]["cpu"] / max(found["reached"]["cpu"], 1e-9)
    print(f"reached vs every: {ratio:.1f}x less CPU time")


if __name__ == "__main__":
    main()
