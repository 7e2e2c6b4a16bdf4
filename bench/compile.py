"""Compile-time benchmark: toolbind vs datamodel-code-generator, OpenAPI specs and tool corpus.

First (``--part openapi``) the OpenAPI peer comparison: ``bench/openapi.py --peer-specs`` — openai,
discord, readme, train-travel, slack, netlify and stapi compiled by ``toolbind generate`` (full output) and
by datamodel-codegen (models only), the wall-time and RSS ratios, and the openai package's
import time, first use and LLM-facing schema bytes (see that script). Then (``--part tools``)
the tool corpus, described below.

Both compilers run in the same invocation of this script, on the same machine, on the same tool
schemas, as subprocesses started the way a user starts them, and are timed the same way.

Inputs:
    The corpus (``--corpus``, default ``tests/corpus`` in the repository, or ``$TOOLBIND_CORPUS``):
    ``tools/github-mcp-server/*.json`` (MCP tool definitions) and ``tools/bfcl/*.json`` plus
    ``tools/bfcl/multi_turn_func_doc/*.json`` (BFCL function docs, JSON Lines). The corpus is
    only read.

toolbind:
    ``python -m toolbind.cli generate <the three corpus directories> -o <fresh dir>``
    — the full output (models, Call unions, activities, JSON schemas), formatted by toolbind
    with ruff (a grandchild process). When ``-m`` does not work (a ``cli.py`` without a
    ``__main__`` guard exits 0 doing nothing), ``python -c "from toolbind.cli import
    main; main()"`` is used instead; the report shows which.

datamodel-code-generator (the peer):
    It reads plain JSON Schema, so an untimed preparation step extracts one schema file per tool,
    exactly the tools toolbind emits: an MCP tool's ``inputSchema``; a BFCL function's
    ``parameters`` left as written (``"dict"``, ``"float"``, ``"any"`` … — the schemas the user
    has). Files are laid out one directory per corpus spec file, one file per tool, mirroring
    toolbind's one package per spec file. Then ``datamodel-codegen --input <dir>
    --input-file-type jsonschema --output <fresh dir> --output-model-type pydantic_v2.BaseModel
    --formatters black isort`` is timed — one process for the whole corpus, as a user would run
    it. ``black isort`` is 0.89's default formatter set, passed explicitly so that the output
    does not change when the default does (``--peer-formatters`` picks others).

    datamodel-codegen aborts the whole run when one input is bad, so when the first (untimed)
    run fails, the failing inputs are found by bisection (untimed), counted as failures, and
    left out of the timed runs.

Measurement:
    Each compiler runs once untimed (warm-up: files in the page cache, bytecode of both compilers
    written to one fresh ``PYTHONPYCACHEPREFIX`` in the scratch directory; its output is
    checked), then ``--repeat`` times, alternating which compiler goes first. Each run
    writes to a fresh, empty output directory. Reported per compiler, as the median over runs:

    * wall time: ``time.perf_counter`` from just before the process is spawned until
      ``os.wait4`` reaps it;
    * CPU time: user + system time from ``os.wait4`` (the child and the descendants it waited
      for) — less sensitive than wall time to other load on the machine;
    * peak memory: the peak of the summed resident set size (RSS) of the process and all its
      descendants, sampled from ``/proc`` every ``--sample-interval`` seconds, and never less
      than the ``ru_maxrss`` that ``os.wait4`` returns. On Linux that ``ru_maxrss`` is the
      largest RSS of the child *or any descendant it waited for* (a maximum, not a sum), so a
      grandchild such as ruff is covered, but memory held by two processes at once is not; the
      sampled sum covers that and may miss peaks shorter than the sampling interval, so the
      figure is a lower bound of the true peak. Pages shared by two processes count in each.

    ``ratio = toolbind / datamodel-codegen``; below 1 means toolbind is faster / smaller.

Caveats:
    The two compilers do not produce the same thing: toolbind also writes Call unions, activities
    and JSON schemas, and formats with ruff; the peer writes models only and formats with
    black + isort. The numbers compare "compile this corpus into Pydantic v2 code" as each tool
    does it by default. "failures" counts inputs a compiler rejected (or, for the peer, wrote no
    module for); it says nothing about how well the rest is typed — e.g. the peer does not know
    BFCL's type names and types a ``"float"`` parameter as ``Any``.

Exit status: 0 on success; 1 when a timed run of either compiler failed; 2 when
datamodel-codegen is not installed or the corpus is missing.

Usage:
    .venv/bin/python bench/compile.py [--repeat 3] [--json] [--corpus PATH]

OpenAPI:
    The OpenAPI peer comparison (openai, discord, readme, train-travel, slack, netlify, stapi: wall
    time, peak RSS, import, first use, LLM-facing schema bytes) is ``bench/openapi.py``; see
    bench/README.md for what each script measures and the last table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from _corpus import corpus_root
from _progress import steps

REPO = Path(__file__).resolve().parent.parent
PEER_NAME = "datamodel-codegen"
PEER_EXPECTED_VERSION = "0.89.0"
TOOLBIND_ENTRIES = (
    ("-m", "toolbind.cli"),
    ("-c", "from toolbind.cli import main; main()"),
)
MIB = 1024 * 1024


# --------------------------------------------------------------------------------------------
# Preparation: the tool schemas the peer compiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Corpus:
    """The corpus inputs: what toolbind is given and the spec files they contain."""

    mcp_dir: Path
    bfcl_dirs: tuple[Path, ...]

    @property
    def toolbind_inputs(self) -> list[Path]:
        return [self.mcp_dir, *self.bfcl_dirs]

    def spec_files(self) -> list[Path]:
        """Spec files as toolbind finds them: ``*.json`` at the top of each directory."""
        return [p for d in self.toolbind_inputs for p in sorted(d.glob("*.json")) if p.is_file()]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The extracted schemas (relative to ``root``) and counts of what the corpus holds."""

    root: Path
    schemas: list[Path]
    spec_files: int
    raw_functions: int


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text, flags=re.ASCII).strip("_") or "tool"
    return f"t_{name}" if name[0].isdigit() else name


def _unique(path: Path) -> Path:
    candidate, n = path, 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}_{n}{path.suffix}")
        n += 1
    return candidate


def _object(value: object) -> dict[str, Any] | None:
    """``value`` as a JSON object, or None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _array(value: object) -> list[Any]:
    """``value`` as a JSON array; anything else is an empty one."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def _json_values(path: Path) -> list[Any]:
    """A JSON document (an array is its items) or JSON Lines (one value per line)."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        value: object = json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    items = _array(value)
    return items if isinstance(value, list) else [value]


def _mcp_schemas(path: Path) -> list[tuple[str, Any]]:
    """(tool name, inputSchema) of an MCP tool file: one tool, a list, or ``{"tools": [...]}``."""
    tools: list[dict[str, Any]] = []
    for value in _json_values(path):
        obj = _object(value)
        if obj is None:
            continue
        if isinstance(obj.get("tools"), list):
            tools.extend(t for t in map(_object, _array(obj["tools"])) if t is not None)
        else:
            tools.append(obj)
    return [(str(t.get("name", path.stem)), t["inputSchema"]) for t in tools if "inputSchema" in t]


def _bfcl_schemas(path: Path) -> tuple[list[tuple[str, Any]], int]:
    """(tool name, parameters) per tool toolbind emits for a BFCL file, and the raw count.

    Mirrors toolbind's BFCL frontend so both compilers get the same list of tools: a function
    name defined identically in every record is one tool; when its definitions differ, toolbind
    emits one tool per distinct definition (``name@<first record using it>``), and so does this.
    """
    by_name: dict[str, list[tuple[str | None, dict[str, Any], str]]] = {}
    raw = 0
    for value in _json_values(path):
        obj = _object(value)
        if obj is None:
            continue
        if "function" in obj and "id" in obj:
            record: str | None = str(obj["id"])
            functions = _array(obj["function"])
        else:
            record, functions = None, [obj]
        for fn in map(_object, functions):
            if fn is not None and "name" in fn:
                raw += 1
                text = json.dumps(fn, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                by_name.setdefault(str(fn["name"]), []).append((record, fn, text))
    out: list[tuple[str, Any]] = []
    for name, entries in by_name.items():
        if len({text for _, _, text in entries}) == 1:
            out.append((name, entries[0][1].get("parameters", {})))
        else:
            first: dict[str, tuple[str | None, dict[str, Any]]] = {}
            for record, fn, text in entries:
                first.setdefault(text, (record, fn))
            out.extend(
                (f"{name}@{record}" if record else name, fn.get("parameters", {}))
                for record, fn in first.values()
            )
    return out, raw


def prepare(corpus: Corpus, root: Path) -> Prepared:
    """Write one JSON Schema file per tool under ``root/<spec file>/<tool>.json``.

    One file per tool (rather than one file per spec file with the schemas under ``$defs``):
    each schema is a standalone document whose ``$ref``s, if any, are relative to its own root,
    and one file per schema is how a user would hand a directory of schemas to the peer.
    """
    schemas: list[Path] = []
    raw = 0
    files = corpus.spec_files()
    for spec in steps(files, "tool files"):
        if spec.parent == corpus.mcp_dir:
            tools = _mcp_schemas(spec)
            raw += len(tools)
        else:
            tools, n = _bfcl_schemas(spec)
            raw += n
        package = _unique(root / _identifier(spec.stem.lower()))
        package.mkdir(parents=True)
        for name, schema in tools:
            target = _unique(package / f"{_identifier(name)}.json")
            target.write_text(
                json.dumps(schema, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
            )
            schemas.append(target.relative_to(root))
    return Prepared(root=root, schemas=schemas, spec_files=len(files), raw_functions=raw)


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


def _kib_to_bytes(maxrss: int) -> int:
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # macOS reports bytes


class TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants from ``/proc`` (Linux)."""

    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self.available = Path(f"/proc/{pid}/statm").exists()
        self._stop_event = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _children(self, pid: int) -> list[int]:
        kids: list[int] = []
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                kids.extend(int(k) for k in (task / "children").read_text().split())
        except OSError:
            pass
        return kids

    def _rss(self, pid: int) -> int:
        try:
            return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self._page
        except (OSError, IndexError, ValueError):
            return 0

    def sample(self) -> None:
        total, todo, seen = 0, [self.pid], set[int]()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            total += self._rss(pid)
            todo.extend(self._children(pid))
        self.samples += 1
        self.peak = max(self.peak, total)

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured run."""

    wall_s: float
    cpu_s: float  # user + system time of the child and its waited-for descendants
    exit_code: int
    tree_peak_bytes: int  # max(sampled RSS sum of the tree, largest single process)
    largest_process_bytes: int  # ru_maxrss from wait4: child or any waited-for descendant
    rss_samples: int


def measure(
    argv: Sequence[str], cwd: Path, env: dict[str, str], log: Path, interval: float
) -> Sample:
    """Run ``argv`` once; stdout/stderr go to ``log`` (.out / .err)."""
    with log.with_suffix(".out").open("wb") as out, log.with_suffix(".err").open("wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        sampler = TreeSampler(proc.pid, interval)
        if sampler.available:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if sampler.available:
            sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    largest = _kib_to_bytes(usage.ru_maxrss)
    return Sample(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        exit_code=proc.returncode,
        tree_peak_bytes=max(sampler.peak, largest),
        largest_process_bytes=largest,
        rss_samples=sampler.samples,
    )


# --------------------------------------------------------------------------------------------
# The two compilers
# --------------------------------------------------------------------------------------------


@dataclass
class Result:
    """What one compiler did, over all timed runs."""

    name: str
    version: str
    command: list[str]
    inputs: int
    failures: int = 0
    failed_inputs: list[str] = field(default_factory=lambda: list[str]())
    notes: list[str] = field(default_factory=lambda: list[str]())
    output_files: int = 0
    output_bytes: int = 0
    unparsable_modules: int = 0
    samples: list[Sample] = field(default_factory=lambda: list[Sample]())

    @property
    def ok(self) -> bool:
        return bool(self.samples) and all(s.exit_code == 0 for s in self.samples)

    def median(self, attr: str) -> float:
        return statistics.median(float(getattr(s, attr)) for s in self.samples)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "command": self.command,
            "inputs": self.inputs,
            "failures": self.failures,
            "failed_inputs": self.failed_inputs,
            "ok": self.ok,
            "exit_codes": [s.exit_code for s in self.samples],
            "wall_s": {"median": self.median("wall_s"), "runs": [s.wall_s for s in self.samples]},
            "cpu_s": {"median": self.median("cpu_s"), "runs": [s.cpu_s for s in self.samples]},
            "peak_mib": {
                "median": self.median("tree_peak_bytes") / MIB,
                "runs": [s.tree_peak_bytes / MIB for s in self.samples],
            },
            "largest_process_mib": {
                "median": self.median("largest_process_bytes") / MIB,
                "runs": [s.largest_process_bytes / MIB for s in self.samples],
            },
            "rss_samples": [s.rss_samples for s in self.samples],
            "output_files": self.output_files,
            "output_bytes": self.output_bytes,
            "unparsable_modules": self.unparsable_modules,
            "notes": self.notes,
        }


def _files(root: Path) -> Iterator[Path]:
    return (p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)


def _check_output(result: Result, out: Path) -> None:
    """Size of the output and how many of its modules Python cannot parse (untimed)."""
    files = list(_files(out))
    result.output_files = len(files)
    result.output_bytes = sum(p.stat().st_size for p in files)
    for p in files:
        if p.suffix == ".py":
            try:
                compile(p.read_bytes(), str(p), "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                result.unparsable_modules += 1


def _last_line(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    lines = text.splitlines()
    return lines[-1][:200] if lines else "(no output)"


class Bench:
    """Runs and checks both compilers inside one scratch directory."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.python: str = args.python
        self.peer: str = args.peer
        self.peer_formatters: list[str] = args.peer_formatters
        self.toolbind_entry: tuple[str, str] = args.toolbind_entry
        self.interval: float = args.sample_interval
        self.work = work
        # Both compilers load bytecode from one fresh cache that the warm-up fills, whatever the
        # environment says (PYTHONDONTWRITEBYTECODE would make the one whose sources have no
        # __pycache__ — an editable toolbind — recompile its modules on every run).
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        self.logs = work / "logs"
        self.logs.mkdir()
        self._n = 0

    def _fresh(self, label: str) -> Path:
        self._n += 1
        return self.work / f"out-{self._n:03d}-{label}"

    def _log(self, label: str) -> Path:
        return self.logs / f"{self._n:03d}-{label}"

    # toolbind -------------------------------------------------------------------------------

    def toolbind_argv(self, inputs: Sequence[Path], out: Path) -> list[str]:
        return [self.python, *self.toolbind_entry, "generate", *map(str, inputs), "-o", str(out)]

    def run_toolbind(self, inputs: Sequence[Path]) -> tuple[Sample, Path, Path]:
        out = self._fresh("toolbind")
        log = self._log("toolbind")
        sample = measure(self.toolbind_argv(inputs, out), self.work, self.env, log, self.interval)
        return sample, out, log.with_suffix(".err")

    def check_toolbind(self, result: Result, sample: Sample, out: Path, err: Path) -> None:
        """Failures: error diagnostics (exit 1), or everything on a crash / missing output."""
        text = err.read_text(encoding="utf-8", errors="replace")
        errors = sorted(
            {line.split(": error: ")[0] for line in text.splitlines() if ": error: " in line}
        )
        if sample.exit_code == 1 and errors:
            result.failures, result.failed_inputs = len(errors), errors
        elif sample.exit_code != 0:
            result.failures = result.inputs
            result.notes.append(f"toolbind exited {sample.exit_code}: {_last_line(err)}")
        elif not (out / "toolbind.json").is_file():
            result.failures = result.inputs
            result.notes.append("toolbind exited 0 but wrote no output")
        else:
            _check_output(result, out)
            emitted = 0
            for tools in out.glob("*/tools.json"):
                try:
                    emitted += len(json.loads(tools.read_text(encoding="utf-8"))["tools"])
                except (ValueError, KeyError, TypeError):
                    emitted = -1
                    break
            if emitted >= 0 and emitted != result.inputs:
                result.notes.append(
                    f"toolbind emitted {emitted} tools; the peer was given {result.inputs}"
                )

    # datamodel-codegen ----------------------------------------------------------------------

    def peer_argv(self, source: Path, out: Path) -> list[str]:
        return [
            self.peer,
            "--input", str(source),
            "--input-file-type", "jsonschema",
            "--output", str(out),
            "--output-model-type", "pydantic_v2.BaseModel",
            "--formatters", *self.peer_formatters,
        ]  # fmt: skip

    def run_peer(self, source: Path) -> tuple[Sample, Path, Path]:
        out = self._fresh("peer")
        log = self._log("peer")
        sample = measure(self.peer_argv(source, out), self.work, self.env, log, self.interval)
        return sample, out, log.with_suffix(".err")

    def _peer_accepts(self, root: Path, subset: Sequence[Path]) -> bool:
        trial = Path(tempfile.mkdtemp(prefix="probe-", dir=self.work))
        try:
            for rel in subset:
                (trial / "in" / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / rel, trial / "in" / rel)
            done = subprocess.run(
                self.peer_argv(trial / "in", trial / "out"),
                cwd=self.work,
                env=self.env,
                capture_output=True,
                check=False,
            )
            return done.returncode == 0
        finally:
            shutil.rmtree(trial, ignore_errors=True)

    def peer_failures(self, root: Path, schemas: Sequence[Path]) -> list[Path]:
        """The inputs the peer rejects, by bisection (it aborts the whole run on one bad input)."""
        if not schemas or self._peer_accepts(root, schemas):
            return []
        if len(schemas) == 1:
            return list(schemas)
        mid = len(schemas) // 2
        return self.peer_failures(root, schemas[:mid]) + self.peer_failures(root, schemas[mid:])

    def check_peer(self, result: Result, prepared: Prepared, out: Path) -> None:
        _check_output(result, out)
        missing = [
            str(rel) for rel in prepared.schemas if not (out / rel).with_suffix(".py").is_file()
        ]
        if missing:
            result.failures += len(missing)
            result.failed_inputs.extend(missing)
            result.notes.append(f"{len(missing)} input(s) produced no module (exit 0)")


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _version(argv: Sequence[str]) -> str | None:
    """The last word ``argv`` prints, or None when it does not run."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else None


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _find_peer(python: str, explicit: str | None) -> str | None:
    if explicit:
        return explicit if Path(explicit).is_file() else shutil.which(explicit)
    beside = Path(python).parent / PEER_NAME
    return str(beside) if beside.is_file() else shutil.which(PEER_NAME)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--corpus",
        type=Path,
        default=corpus_root(),
        help="corpus root (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timed runs per compiler; the median is reported (default: %(default)s)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the numbers as JSON instead of a table"
    )
    parser.add_argument(
        "--python",
        default=_default_python(),
        help="interpreter with toolbind installed (default: %(default)s)",
    )
    parser.add_argument(
        "--peer",
        default=None,
        help=f"{PEER_NAME} executable (default: beside --python, else on PATH)",
    )
    parser.add_argument(
        "--peer-formatters",
        nargs="+",
        default=["black", "isort"],
        metavar="NAME",
        help="formatters for the peer (default: %(default)s, its 0.89 default)",
    )
    parser.add_argument(
        "--sample-interval",
        type=float,
        default=0.01,
        help="RSS sampling interval, seconds (default: %(default)s)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (inputs, outputs, logs)"
    )
    parser.add_argument(
        "--part",
        choices=["all", "openapi", "tools"],
        default="all",
        help="openapi: the comparison on the OpenAPI peer specs (bench/openapi.py "
        "--peer-specs); tools: the tool corpus; all: both, in that order (default)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def report(results: list[Result], meta: dict[str, Any], as_json: bool) -> None:
    tb, peer = results
    both = tb.ok and peer.ok
    wall = _ratio(tb.median("wall_s"), peer.median("wall_s")) if both else None
    mem = _ratio(tb.median("tree_peak_bytes"), peer.median("tree_peak_bytes")) if both else None
    cpu = _ratio(tb.median("cpu_s"), peer.median("cpu_s")) if both else None
    if as_json:
        data = {
            **meta,
            "results": [r.as_json() for r in results],
            "ratios": {"wall": wall, "peak_memory": mem, "cpu": cpu},
        }
        print(json.dumps(data, indent=2))
        return
    print(
        f"corpus: {meta['corpus']}  ({meta['spec_files']} spec files, {meta['raw_functions']} tool definitions, "
        f"{tb.inputs} tools after toolbind's de-duplication)"
    )
    load = meta["loadavg_1min"]
    print(
        f"machine: {meta['platform']}, {meta['cpus']} CPUs, Python {meta['python_version']}, "
        f"load average {load['before']} before / {load['after']} after"
    )
    print(f"median of {meta['repeat']} timed run(s) per compiler, after 1 untimed warm-up each")
    print()
    rows = [
        ("tool", "inputs", "failures", "wall s (median)", "peak MiB", "cpu s", "largest proc MiB")
    ]
    for r in results:
        name = f"{r.name} {r.version}"
        if not r.ok:
            name += f" (FAILED, exit {','.join(str(s.exit_code) for s in r.samples)})"
        rows.append(
            (
                name,
                str(r.inputs),
                str(r.failures),
                f"{r.median('wall_s'):.2f}",
                f"{r.median('tree_peak_bytes') / MIB:.1f}",
                f"{r.median('cpu_s'):.2f}",
                f"{r.median('largest_process_bytes') / MIB:.1f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if k == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print(
        f"{tb.name}/{peer.name}: wall {_fmt_ratio(wall)}, peak memory {_fmt_ratio(mem)}"
        f" (cpu {_fmt_ratio(cpu)})"
    )
    print()
    print("peak MiB: summed RSS of the process tree, sampled, at least ru_maxrss (a lower bound);")
    print("cpu s: user+sys of the tree; largest proc MiB: ru_maxrss from wait4 (max, not sum).")
    print(
        "All columns but inputs/failures are medians over the timed runs (see the module docstring)."
    )
    for r in results:
        print(
            f"{r.name}: {r.output_files} files, {r.output_bytes / MIB:.1f} MiB written; {shlex.join(r.command)}"
        )
        for note in r.notes:
            print(f"  note: {note}")
        if r.unparsable_modules:
            print(f"  note: {r.unparsable_modules} generated module(s) do not parse")
        for item in r.failed_inputs[:10]:
            print(f"  failed: {item}")
        if len(r.failed_inputs) > 10:
            print(f"  … and {len(r.failed_inputs) - 10} more (see --json)")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.part != "tools":
        # the peer comparison: openai, discord, readme, train-travel, slack, netlify, stapi
        import openapi  # bench/openapi.py, beside this script

        print("== OpenAPI specs: toolbind generate vs datamodel-codegen (bench/openapi.py) ==")
        status = openapi.main(["--peer-specs"])
        if status or args.part == "openapi":
            return status
        print("\n== Tool corpus (MCP + BFCL) ==")
    corpus_root: Path = args.corpus.resolve()
    tools = corpus_root / "tools"
    corpus = Corpus(
        mcp_dir=tools / "github-mcp-server",
        bfcl_dirs=(tools / "bfcl", tools / "bfcl" / "multi_turn_func_doc"),
    )
    missing = [str(d) for d in corpus.toolbind_inputs if not d.is_dir()]
    if missing:
        print(
            f"error: corpus directories not found: {', '.join(missing)} (use --corpus or set TOOLBIND_CORPUS)",
            file=sys.stderr,
        )
        return 2
    peer_path = _find_peer(args.python, args.peer)
    if peer_path is None:
        where = args.peer if args.peer else f"beside {args.python} or on PATH"
        print(
            f"error: {PEER_NAME} is not installed (not found: {where}); install it with: "
            f"pip install 'datamodel-code-generator=={PEER_EXPECTED_VERSION}' "
            "(or pip install -e '.[bench]')",
            file=sys.stderr,
        )
        return 2
    args.peer = peer_path
    peer_version = _version([peer_path, "--version"])
    if peer_version is None:
        print(
            f"error: {peer_path} --version fails; is {PEER_NAME} installed properly?",
            file=sys.stderr,
        )
        return 2
    toolbind_version: str | None = None
    for entry in TOOLBIND_ENTRIES:  # the first way of starting the CLI that answers --version
        toolbind_version = _version([args.python, *entry, "--version"])
        if toolbind_version is not None:
            args.toolbind_entry = entry
            break
    if toolbind_version is None:
        print(f"error: toolbind does not run with {args.python} (use --python)", file=sys.stderr)
        return 2
    python_version = _version(
        [args.python, "-c", "import platform; print(platform.python_version())"]
    )

    load_before = _loadavg()
    work = Path(tempfile.mkdtemp(prefix="toolbind-bench-"))
    try:
        bench = Bench(args, work)
        _progress(f"preparing peer inputs in {work} …")
        prepared = prepare(corpus, work / "schemas")
        n = len(prepared.schemas)
        tb = Result(
            "toolbind",
            toolbind_version,
            bench.toolbind_argv(corpus.toolbind_inputs, Path("<out>")),
            n,
        )
        peer = Result(PEER_NAME, peer_version, bench.peer_argv(prepared.root, Path("<out>")), n)
        if peer.version != PEER_EXPECTED_VERSION:
            peer.notes.append(f"expected {PEER_NAME} {PEER_EXPECTED_VERSION}, found {peer.version}")

        # Warm-up (untimed) — also the correctness check of each compiler's output.
        _progress("warm-up: toolbind …")
        sample, out, err = bench.run_toolbind(corpus.toolbind_inputs)
        bench.check_toolbind(tb, sample, out, err)
        _progress(f"warm-up: {PEER_NAME} …")
        sample, out, err = bench.run_peer(prepared.root)
        if sample.exit_code != 0:
            _progress(
                f"{PEER_NAME} failed on the corpus ({_last_line(err)}); bisecting for the bad inputs …"
            )
            bad = bench.peer_failures(prepared.root, prepared.schemas)
            for rel in bad:
                (prepared.root / rel).unlink()
            peer.failures, peer.failed_inputs = len(bad), [str(p) for p in bad]
            prepared = Prepared(
                prepared.root,
                [p for p in prepared.schemas if p not in bad],
                prepared.spec_files,
                prepared.raw_functions,
            )
            if bad:
                peer.notes.append(f"the timed runs leave out the {len(bad)} input(s) it fails on")
            sample, out, err = bench.run_peer(prepared.root)
        if sample.exit_code == 0:
            bench.check_peer(peer, prepared, out)
        else:
            peer.notes.append(f"{PEER_NAME} exited {sample.exit_code}: {_last_line(err)}")

        runners: dict[str, Callable[[], tuple[Sample, Path, Path]]] = {
            "toolbind": lambda: bench.run_toolbind(corpus.toolbind_inputs),
            PEER_NAME: lambda: bench.run_peer(prepared.root),
        }
        results = {"toolbind": tb, PEER_NAME: peer}
        for i in range(args.repeat):
            order = ["toolbind", PEER_NAME] if i % 2 == 0 else [PEER_NAME, "toolbind"]
            for name in order:
                sample, out, _ = runners[name]()
                results[name].samples.append(sample)
                shutil.rmtree(out, ignore_errors=True)
                _progress(
                    f"run {i + 1}/{args.repeat} {name}: {sample.wall_s:.2f} s, {sample.tree_peak_bytes / MIB:.1f} MiB, exit {sample.exit_code}"
                )

        meta: dict[str, Any] = {
            "corpus": str(corpus_root),
            "spec_files": prepared.spec_files,
            "raw_functions": prepared.raw_functions,
            "repeat": args.repeat,
            "warmup_runs": 1,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python_version": python_version,
            "python": args.python,
            "sample_interval_s": args.sample_interval,
            # Other work on the machine skews both compilers' wall times; quote numbers from a
            # run whose load average stayed well below the CPU count.
            "loadavg_1min": {"before": load_before, "after": _loadavg()},
        }
        report([tb, peer], meta, args.json)
        return 0 if tb.ok and peer.ok else 1
    finally:
        if args.keep:
            _progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
