"""OpenAPI benchmark: toolbind vs datamodel-code-generator on the corpus' ``openapi/`` (``tests/corpus``).

For every corpus spec, toolbind's full output (``toolbind generate``: models, tools, unions,
Activities, ``http.py``, exported schemas; ruff-formatted) is timed in a child process, and the
generated package is measured: import time (a fresh interpreter, second run so bytecode is
cached), first use of one tool (its Call model loaded, built and used once), and the LLM-facing
schema bytes (``schema.json`` as compact JSON, what an LLM is sent for every tool).

On the peer specs (openai, discord, readme, train-travel, slack, netlify, stapi) datamodel-code-generator
(models only, its defaults; a directory output where a spec needs several modules) runs in the
same process tree, and the ratios toolbind / peer are printed for wall time and peak RSS (the
``ru_maxrss`` of the child, from ``os.wait4``). ``--pyright`` also times pyright (strict) over
all generated packages in one process.

    .venv/bin/python bench/openapi.py [--pyright] [--json FILE] [--markdown FILE]
    .venv/bin/python bench/openapi.py --large [SPEC]

``--large`` measures one 500+-operation spec (GitHub's, from npm, by default) beside FastMCP and
datamodel-code-generator instead: compile, and import + register + compose + first call
(``bench/_large.py``).

``bench/compile.py`` runs
it on the peer specs (``--peer-specs``) before its own tool-corpus comparison.

Targets: wall time ≤ 0.25× the peer's; import of the openai package ≤ 0.3 s; first use
≤ 50 ms; openai's LLM-facing schema ≤ 560 KB (0.25× FastMCP's 2.24 MB). Misses are printed.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _corpus import corpus_root, left_out
from _progress import steps

REPO = Path(__file__).resolve().parent.parent
CORPUS = corpus_root() / "openapi"
BIN = Path(sys.executable).parent
PEER_SPECS = (
    "openai__openapi.yaml",
    "discord__http-api.json",
    "readme__readme-api.json",
    "bump-sh__train-travel.json",
    "slack__web-api.json",
    "netlify__api.yaml",
    "stapi__star-trek.json",
)
FASTMCP_OPENAI_BYTES = 2_240_000
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@dataclass
class Run:
    ok: bool
    wall: float
    rss: int  # bytes
    error: str = ""


def measure(argv: list[str], cwd: Path | None = None) -> Run:
    """Run ``argv``; wall time and the child's peak RSS (``os.wait4``)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        err.seek(0)
        message = err.read().decode("utf-8", "replace").strip().splitlines()
    return Run(
        ok=proc.returncode == 0,
        wall=wall,
        rss=usage.ru_maxrss * 1024,
        error=message[-1][:160] if message and proc.returncode else "",
    )


def spec_facts(spec: Path) -> tuple[str, int]:
    """The spec's version and operation count, read in a child process: parsing a large spec
    here would raise this process's peak RSS, which every later child inherits on Linux."""
    code = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from openapi import facts\n"
        "print(json.dumps(facts(sys.argv[1])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(spec), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
    )
    version, count = json.loads(done.stdout)
    return str(version), int(count)


def facts(name: str) -> tuple[str, int]:
    spec = Path(name)
    text = spec.read_text(encoding="utf-8")
    import yaml

    doc: dict[str, Any] = (
        json.loads(text)
        if spec.suffix == ".json"
        else yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    )
    version = str(doc.get("openapi", doc.get("swagger", "?")))
    paths: dict[str, Any] = doc.get("paths") or {}
    return version, sum(1 for item in paths.values() for m in item if m in METHODS)


_PROBE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import {package} as pkg
t1 = time.perf_counter()
from toolbind.compiler.naming import class_name  # not timed: names the model to use
ops = list(__import__("{package}.http", fromlist=["OPERATIONS"]).OPERATIONS)
t2 = time.perf_counter()
used = None
if ops:
    model = getattr(pkg, class_name(ops[0]) + "Call")
    try:
        model.model_validate({{"_tool": ops[0]}})
    except Exception:
        pass
    used = time.perf_counter() - t2
print(json.dumps({{"import": t1 - t0, "first_use": used, "tools": len(ops)}}))
"""


def probe(out: Path, package: str) -> dict[str, Any]:
    code = _PROBE.format(package=package)
    result: dict[str, Any] = {}
    for _ in range(2):  # the first run writes the bytecode cache
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1][:160]}
        result = json.loads(done.stdout)
    return result


def import_floor() -> float:
    """What every generated package's import pays at least: pydantic and
    ``toolbind.runtime.types`` (best of three warm runs), to read the import times against."""
    code = (
        "import time; t = time.perf_counter(); import toolbind.runtime.types; "
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    return min(runs)


def schema_bytes(out: Path, package: str) -> int:
    data = json.loads((out / package / "schema.json").read_text(encoding="utf-8"))
    data.pop("$comment", None)
    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def peer(spec: Path, work: Path) -> Run:
    exe = BIN / "datamodel-codegen"
    base = [str(exe), "--input", str(spec), "--input-file-type", "openapi"]
    run = measure([*base, "--output", str(work / "model.py")])
    if not run.ok and "directory" in run.error.lower():
        run = measure([*base, "--output", str(work / "models")])
    return run


def _spec_row(spec: Path, work: Path) -> dict[str, Any]:
    """One spec's figures: toolbind's run and its package's, and the peer's on a peer spec."""
    out = work / "toolbind" / spec.stem
    run = measure([str(BIN / "toolbind"), "generate", str(spec), "-o", str(out)])
    version, operations = spec_facts(spec)
    row: dict[str, Any] = {
        "spec": spec.name,
        "version": version,
        "operations": operations,
        "toolbind": asdict(run),
    }
    if run.ok:
        manifest = json.loads((out / "toolbind.json").read_text(encoding="utf-8"))
        (package,) = manifest["packages"]
        row.update(probe(out, package))
        row["schema_bytes"] = schema_bytes(out, package)
    if spec.name in PEER_SPECS:
        peer_dir = work / "peer" / spec.stem
        peer_dir.mkdir(parents=True)
        row["peer"] = asdict(peer(spec, peer_dir))
    return row


def _time_pyright(work: Path) -> None:
    """Time pyright (strict) over every package toolbind wrote under ``work``, and print it."""
    dirs = [str(p) for p in sorted((work / "toolbind").glob("*/*")) if p.is_dir()]
    config = work / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.11",
                "venvPath": str(REPO),
                "venv": ".venv",
                "reportMissingTypeStubs": False,
            }
        ),
        encoding="utf-8",
    )
    run = measure([str(BIN / "pyright"), "-p", str(config), *dirs])
    print(
        f"pyright strict over {len(dirs)} packages: {'clean' if run.ok else 'ERRORS'} "
        f"in {run.wall:.1f} s, peak RSS {run.rss / 2**20:.0f} MiB"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pyright", action="store_true", help="also time pyright over all")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    parser.add_argument("--markdown", type=Path, help="write the per-spec table as Markdown")
    parser.add_argument(
        "--spec",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the corpus specs whose file name matches (repeatable; e.g. 'openai*')",
    )
    parser.add_argument(
        "--peer-specs",
        action="store_true",
        help="only the specs compared with the peer (openai, discord, slack, …)",
    )
    parser.add_argument(
        "--large",
        nargs="?",
        const="",
        metavar="SPEC",
        help="one large spec beside FastMCP (default: GitHub's REST API, from npm)",
    )
    args = parser.parse_args(argv)
    if args.large is not None:
        from _large import large

        return large(args.large or None)
    if args.peer_specs:
        args.spec += [s for s in PEER_SPECS if not left_out(CORPUS / s, "the peer's figure on it")]
    if not CORPUS.is_dir():
        print(f"error: no corpus at {CORPUS} (set TOOLBIND_CORPUS)", file=sys.stderr)
        return 2
    specs = sorted(
        p
        for p in CORPUS.iterdir()
        if p.suffix in (".json", ".yaml")
        and (not args.spec or any(fnmatch.fnmatch(p.name, g) for g in args.spec))
    )
    work = Path(tempfile.mkdtemp(prefix="toolbind-bench-openapi-"))
    rows: list[dict[str, Any]] = []
    floor = import_floor()
    print(f"import floor (pydantic + toolbind.runtime.types): {floor * 1000:.0f}ms", flush=True)
    try:
        for spec in steps(specs, "specs"):
            rows.append(_spec_row(spec, work))
            print(_line(rows[-1]), flush=True)
        print(_summary(rows))
        if args.pyright:
            _time_pyright(work)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        if args.markdown:
            args.markdown.write_text(
                markdown(rows) + f"import floor (pydantic + toolbind.runtime.types): "
                f"{floor * 1000:.0f}ms\n",
                encoding="utf-8",
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _line(row: dict[str, Any]) -> str:
    tb = row["toolbind"]
    text = (
        f"{row['spec']:46} {row['version']:6} ops {row['operations']:4} "
        f"tools {row.get('tools', '-')!s:>4} "
        f"compile {tb['wall']:6.2f}s rss {tb['rss'] / 2**20:5.0f}MiB "
    )
    if not tb["ok"]:
        return text + f"FAILED: {tb['error']}"
    first = row.get("first_use")
    text += (
        f"import {row.get('import', float('nan')) * 1000:6.0f}ms "
        f"first-use {first * 1000 if first is not None else float('nan'):5.0f}ms "
        f"schema {row['schema_bytes'] / 1000:7.1f}KB"
    )
    if "peer" in row:
        p = row["peer"]
        text += f" | peer {p['wall']:6.2f}s {p['rss'] / 2**20:4.0f}MiB " + (
            f"ratio wall {tb['wall'] / p['wall']:.2f} rss {tb['rss'] / p['rss']:.2f}"
            if p["ok"]
            else f"peer FAILED ({p['error'][:60]})"
        )
    return text


def markdown(rows: list[dict[str, Any]]) -> str:
    """The per-spec table (and the summary) as Markdown, for bench/README.md."""
    lines = [
        "| spec | version | ops | tools | compile s | peak RSS MiB | import ms | first use ms "
        "| schema KB | peer s (MiB) | ratio |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        tb = row["toolbind"]
        first = row.get("first_use")
        cells = [
            row["spec"].removesuffix(".json").removesuffix(".yaml"),
            row["version"],
            str(row["operations"]),
            str(row.get("tools", "-")),
            f"{tb['wall']:.2f}" if tb["ok"] else "FAILED",
            f"{tb['rss'] / 2**20:.0f}",
            f"{row['import'] * 1000:.0f}" if "import" in row else "-",
            f"{first * 1000:.0f}" if first is not None else "-",
            f"{row['schema_bytes'] / 1000:.1f}" if "schema_bytes" in row else "-",
        ]
        peer = row.get("peer")
        if peer is None:
            cells += ["", ""]
        elif peer["ok"]:
            cells += [
                f"{peer['wall']:.2f} ({peer['rss'] / 2**20:.0f})",
                f"{tb['wall'] / peer['wall']:.2f}",
            ]
        else:
            cells += ["fails", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + _summary(rows) + "\n"


def _summary(rows: list[dict[str, Any]]) -> str:
    both = [r for r in rows if "peer" in r and r["peer"]["ok"] and r["toolbind"]["ok"]]
    ok = sum(r["toolbind"]["ok"] for r in rows)
    lines = [f"toolbind compiled {ok}/{len(rows)} specs"]
    peer_ok = sum(r["peer"]["ok"] for r in rows if "peer" in r)
    lines.append(
        f"datamodel-codegen compiled {peer_ok}/{sum('peer' in r for r in rows)} peer specs"
    )
    if both:
        tb = sum(r["toolbind"]["wall"] for r in both)
        pw = sum(r["peer"]["wall"] for r in both)
        rss = max(r["toolbind"]["rss"] for r in both) / max(r["peer"]["rss"] for r in both)
        ratio = tb / pw
        lines.append(
            f"on the {len(both)} specs both compile: wall {tb:.1f}s vs {pw:.1f}s = {ratio:.2f}× "
            f"(target ≤ 0.25{'' if ratio <= 0.25 else ' MISSED'}); peak RSS ratio {rss:.2f}"
        )
    openai = next((r for r in rows if r["spec"] == "openai__openapi.yaml"), None)
    if openai and openai["toolbind"]["ok"]:
        imp, first, size = openai["import"], openai["first_use"], openai["schema_bytes"]
        lines.append(
            f"openai: import {imp:.3f}s (target ≤ 0.3{'' if imp <= 0.3 else ' MISSED'}), "
            f"first use {first * 1000:.0f}ms (target ≤ 50{'' if first <= 0.05 else ' MISSED'}), "
            f"LLM-facing schema {size / 1000:.0f}KB = {size / FASTMCP_OPENAI_BYTES:.3f}× FastMCP "
            f"(target ≤ 560KB{'' if size <= 560_000 else ' MISSED'})"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
