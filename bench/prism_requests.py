"""Requests against a request-validating mock: every operation of real OpenAPI specs called
through its generated HTTP Activity with hypothesis-drawn Calls, sent to Stoplight Prism
(``prism mock SPEC --errors``: a request the spec refuses is answered 422 with the violations).

For each spec given on the command line (a path: the bench reads no corpus of its own), the spec
is compiled into a temporary directory, Prism serves it on 127.0.0.1, and for every operation
``--examples`` Calls are drawn from the tool's Call schema (``toolbind.testing.strategies_for``;
meta fields left out) and counted as:

- **refused by the Call**: the generated Call model refuses it (what the model is told);
- **refused by the client**: the HTTP Activity refuses it before sending (``invalid_input``);
- **accepted**: sent, and Prism answered below 400 — or 500 because its own mock answer broke
  the spec's response schema (listed apart: the request passed its validation);
- **refused by Prism**: sent, and Prism answered 422 (its request validation) or another status
  of 400 or more (no route, a method the path lacks: listed apart).

``--calls FILE`` keeps the drawn Calls (written when FILE does not exist, replayed when it
does), so two versions of toolbind are measured on the same Calls::

    nice -n 10 .venv/bin/python bench/prism_requests.py --prism PRISM --calls calls.json SPEC...

Prism: ``npm install --prefix DIR @stoplight/prism-cli@5.16.0``, then ``--prism
DIR/node_modules/.bin/prism`` (default: the copy ``make install`` puts under tests/mcp/npm).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

from hypothesis import HealthCheck, Phase, given, settings

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests._servers import free_port  # noqa: E402
from tests.realworld._served import placeholder_credentials, running  # noqa: E402

META = ("_activity", "_output", "_reasoningForCall")
MOCK_BROKE = "accepted, Prism's answer broke the spec"
KINDS = ("sent", "accepted", MOCK_BROKE, "refused by Prism (422)", "refused by Prism (other)")
KINDS_FIRST = ("refused by the Call", "refused by the client")


@contextlib.contextmanager
def _prism(prism: Path, spec: Path, log: Path, start_timeout: float) -> Generator[str]:
    """Prism serving ``spec`` (``--errors``) until the block ends; its base URL."""
    port = free_port()
    command = [str(prism), "mock", "-h", "127.0.0.1", "-p", str(port), "--errors", str(spec)]
    base = f"http://127.0.0.1:{port}"
    # (Prism answers any path: a request it refuses is still an answer, so health is its own)
    started = time.monotonic()
    with running("Prism", command, f"{base}/__health", log, ok=(404,), timeout=start_timeout):
        print(f"{spec.name}: Prism started in {time.monotonic() - started:.1f} s", file=sys.stderr)
        yield base


def _draw(binding: Any, examples: int) -> list[dict[str, Any]]:
    """``examples`` Calls of ``binding`` drawn by hypothesis (derandomized: the same schema,
    the same Calls)."""
    from toolbind.testing import strategies_for

    drawn: list[dict[str, Any]] = []

    @settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=cast("list[HealthCheck]", list(HealthCheck)),
        phases=[Phase.generate],
    )
    @given(strategies_for(binding))
    def collect(instance: Any) -> None:
        if isinstance(instance, dict) and len(drawn) < examples:
            fields = cast("dict[str, Any]", instance)
            drawn.append({k: v for k, v in fields.items() if k not in META})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            collect()
        except Exception as exc:  # a schema hypothesis-jsonschema cannot draw from
            print(f"  {binding.name}: no Calls drawn ({type(exc).__name__})", file=sys.stderr)
    return drawn


def _only_the_answer(data: Any) -> bool:
    """Whether Prism's 500 says only its own answer broke the spec (the request passed its
    validation: a mock answer drawn from a schema whose pattern it does not keep, Discord's
    snowflake ids), never the request."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(by_alias=True)
    if isinstance(data, str):
        # an answer read as text (the operation's Output is no object), cut to the length an
        # error body keeps: the locations it names
        where = re.findall(r'"location":\s*\["(\w+)"', data)
        return bool(where) and set(where) == {"response"}
    found: Any = cast("dict[str, Any]", data).get("validation") if isinstance(data, dict) else None
    if not isinstance(found, list) or not found:
        return False
    return all(
        isinstance(v, dict)
        and (cast("dict[str, Any]", v).get("location") or [None])[0] == "response"
        for v in cast("list[Any]", found)
    )


def _one(pkg: Any, activities: Any, tool: str, args: dict[str, Any]) -> tuple[str, str]:
    """(kind, detail) of one Call."""
    from pydantic import ValidationError

    try:
        call = pkg.CallAdapter.validate_python({**args, "_tool": tool})
    except ValidationError as exc:
        first = exc.errors()[0]
        return "refused by the Call", f"{'/'.join(map(str, first['loc']))}: {first['msg']}"
    result = activities[tool](call)
    meta = result.metadata
    if meta.get("error_type") == "invalid_input":
        return "refused by the client", str(result.error)[:160]
    status = meta.get("status")
    if status is None:
        return "refused by Prism (other)", f"no answer: {meta.get('error_type')}"
    if status < 400:
        return "accepted", str(status)
    detail = json.dumps(result.data, default=str)[:240] if result.data is not None else ""
    if status == 500 and _only_the_answer(result.data):
        return MOCK_BROKE, f"{status} {detail}"
    return ("refused by Prism (422)" if status == 422 else "refused by Prism (other)"), (
        f"{status} {detail}"
    )


def run_spec(
    spec: Path,
    prism: Path,
    examples: int,
    calls: dict[str, Any],
    work: Path,
    start_timeout: float = 120.0,
) -> tuple[Counter[str], list[str]]:
    """The counts of one spec and a few refusals by Prism, as examples."""
    from toolbind.compiler import compile_to_directory, load_package
    from toolbind.runtime.http import HttpClient

    name = "prism_" + "".join(c if c.isalnum() else "_" for c in spec.stem).lower()
    compile_to_directory([spec], work / name, package_names={str(spec): name})
    pkg = load_package(work / name, name)
    drawn: dict[str, list[dict[str, Any]]] = calls.setdefault(spec.name, {})
    counts: Counter[str] = Counter()
    examples_of: list[str] = []
    with (
        _prism(prism, spec, work / f"{name}.log", start_timeout) as base,
        HttpClient(
            pkg.API, base_url=base, credentials=placeholder_credentials(pkg.API), timeout=30
        ) as client,
    ):
        activities = pkg.HttpActivities(client).activities()
        for binding in pkg.TOOLS:
            if binding.name not in drawn:
                drawn[binding.name] = _draw(binding, examples)
            for args in drawn[binding.name]:
                kind, detail = _one(pkg, activities, binding.name, args)
                counts[kind] += 1
                if kind.startswith(("refused by Prism", "accepted")):
                    counts["sent"] += 1
                if kind != "accepted" and len(examples_of) < 400:
                    examples_of.append(f"{binding.name}: {kind}: {detail}")
    counts["operations"] = len(pkg.TOOLS)
    # what Prism found wrong, from its log (its 422 body is read into the spec's error model)
    log = (work / f"{name}.log").read_text(errors="replace")
    violations = Counter(
        line.split("Violation: ", 1)[1].strip()
        for line in log.splitlines()
        if "Violation: " in line
    )
    examples_of.extend(f"Prism: {n} × {text}" for text, n in violations.most_common(60))
    return counts, examples_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("specs", nargs="+", type=Path, help="OpenAPI spec files")
    parser.add_argument(
        "--prism", type=Path, default=REPO / "tests/mcp/npm/node_modules/.bin/prism"
    )
    parser.add_argument("--examples", type=int, default=5, help="Calls drawn per operation")
    parser.add_argument("--calls", type=Path, help="keep (or replay) the drawn Calls here")
    parser.add_argument("--json", type=Path, help="write the counts here")
    parser.add_argument("--details", type=Path, help="write every refusal here")
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=120.0,
        help="seconds Prism may take to start on a spec (a large one, on a loaded machine: more)",
    )
    args = parser.parse_args(argv)
    if not args.prism.exists():
        print(f"error: no Prism at {args.prism} (--prism PATH)", file=sys.stderr)
        return 2
    missing = [str(s) for s in args.specs if not s.is_file()]
    if missing:
        print(f"error: no such spec: {', '.join(missing)}", file=sys.stderr)
        return 2
    calls: dict[str, Any] = {}
    if args.calls is not None and args.calls.exists():
        calls = json.loads(args.calls.read_text(encoding="utf-8"))
    table: dict[str, dict[str, int]] = {}
    details: dict[str, list[str]] = {}
    columns = ("operations", "calls", *KINDS_FIRST, *KINDS)
    print("| spec | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|", flush=True)
    with tempfile.TemporaryDirectory(prefix="prism-bench-") as tmp:
        sys.path.insert(0, tmp)
        for spec in args.specs:
            print(f"{spec.name} ...", file=sys.stderr)
            replayed = spec.name in calls
            counts, found = run_spec(
                spec, args.prism, args.examples, calls, Path(tmp), args.start_timeout
            )
            if args.calls is not None and not replayed:  # kept spec by spec: a long run may stop
                args.calls.write_text(json.dumps(calls, sort_keys=True), encoding="utf-8")
            table[spec.name] = c = dict(counts)
            details[spec.name] = found
            total = sum(c.get(k, 0) for k in (*KINDS_FIRST, *KINDS[1:]))
            cells = [str(c.get("operations", 0)), str(total)]
            cells += [str(c.get(k, 0)) for k in columns[2:]]
            print(f"| {spec.name} | " + " | ".join(cells) + " |", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if args.details is not None:
        args.details.write_text(json.dumps(details, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
