"""Compiler layer: the ``toolbind`` command. Thin: parse, call the library, render, exit code.

Exit codes: 0 success, 1 spec errors (or a stale tree with ``--check``, or a broken or unchecked
contract with ``test``), 2 usage errors.
Diagnostics go to stderr, results to stdout. A user's mistake never shows a traceback.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, NoReturn, Union, cast, get_args, get_origin

import typer
from rich.console import Console
from rich.text import Text
from typer.models import OptionInfo, ParameterInfo
from typer.utils import get_params_from_function

from ._driver import (
    MANIFEST,
    OutputError,
    SelectionError,
    build,
    check_output_dir,
    diff_tree,
    file_ancestor,
    manifest_sources,
    scaffold,
    write_into,
)
from ._export import EXPORT_FORMATS, provider_export
from ._load import Document, RefPolicy, display_path, load_document
from ._version import VERSION
from .diagnostics import Diagnostic, SpecError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile tool specs into typed, validated Pydantic tool bindings.",
    pretty_exceptions_enable=False,
)
# emoji=False: rich replaces ``:name:`` codes even with markup off, and a diagnostic quoting
# ``/v1/a:x:b`` or an enum value ``:ok:`` was printed with emoji in their place
_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def _render(diagnostics: list[Diagnostic], *, notes: bool = False) -> None:
    # The same diagnostic at the same place is printed once with its count: a component that
    # hundreds of operations $ref would otherwise repeat one line hundreds of times.
    texts = [d.render() for d in diagnostics]
    times = Counter(texts)
    printed: set[str] = set()
    # one Text, printed once: a print per line cost 50 ms on a spec with 200 warnings
    lines: list[Text] = []
    for d, text in zip(diagnostics, texts, strict=True):
        if (d.severity == "note" and not notes) or text in printed:
            continue
        printed.add(text)
        style = {"error": "red", "warning": "yellow", "note": "dim"}[d.severity]
        suffix = f" [{times[text]} times: once per use]" if times[text] > 1 else ""
        lines.append(Text(text + suffix, style=style))
    errors = sum(d.severity == "error" for d in diagnostics)
    if errors:
        lines.append(Text(f"{errors} error{'s' if errors != 1 else ''}", style="red"))
    if lines:
        _err.print(Text("\n").join(lines))


AllowRef = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-ref",
        metavar="DIR_OR_URL",
        help="Let $refs read files below this directory, or download URLs starting with this "
        "http(s) prefix (repeatable). By default they read only the spec's directory.",
    ),
]


def _allowed_refs(allowed: list[str] | None) -> list[str]:
    """``--allow-ref`` values, checked (a usage error names the bad one)."""
    try:
        RefPolicy.allowing(allowed or [])
    except ValueError as exc:
        raise _usage(f"--allow-ref {exc}") from None
    return allowed or []


def _usage(message: str) -> typer.Exit:
    _err.print(f"toolbind: error: {message}", style="red", markup=False)
    return typer.Exit(2)


class _LateProgress:
    """A progress line that appears only once a run has taken more than a second."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.progress: Any = None  # a rich Progress, imported when first shown
        self.task: Any = None

    def __call__(self, item: str) -> None:
        if self.progress is None and time.monotonic() - self.start > 1.0 and _err.is_terminal:
            # (imported here: most runs never show it, and every run paid for the import)
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=_err,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("")
        if self.progress is not None:
            self.progress.update(self.task, description=f"compiling {item}")

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"toolbind {VERSION}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Compile tool specs into typed, validated Pydantic tool bindings."""


def _package_names(given: list[str], inputs: list[Path]) -> dict[str, str]:
    """``--package`` values as spec → name; a bare NAME needs exactly one spec file."""
    names: dict[str, str] = {}
    for item in given:
        spec, sep, name = item.rpartition("=")
        if not sep:
            if len(inputs) != 1 or inputs[0].is_dir():
                raise _usage(
                    f"--package {item}: with several specs (or a directory) say which spec: "
                    "--package SPEC=NAME"
                )
            spec, name = str(inputs[0]), item
        names[spec] = name
    return names


@app.command()
def generate(
    specs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Spec files or directories (default: specs/).", show_default=False, readable=False
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("generated"),
    check: Annotated[
        bool,
        typer.Option("--check", help="Write nothing; exit 1 with a diff when the output is stale."),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also print notes (renamed names, …).")
    ] = False,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="OpenAPI: only operations with this tag (repeatable)."),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option(
            "--path", help="OpenAPI: only operations whose path matches this glob (repeatable)."
        ),
    ] = None,
    operation: Annotated[
        list[str] | None,
        typer.Option(
            "--operation", help="OpenAPI: only this operationId or tool name (repeatable)."
        ),
    ] = None,
    allow_ref: AllowRef = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Refuse what is read with an assumed meaning (every warning is an error).",
        ),
    ] = False,
    package: Annotated[
        list[str] | None,
        typer.Option(
            "--package",
            help="Name a spec's package: SPEC=NAME (repeatable), or NAME with one spec "
            "(default: the spec file's stem).",
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Compile every spec again, reusing nothing of the previous output (after "
            "changing toolbind itself in an editable install: reuse is keyed on its version).",
        ),
    ] = False,
    mcp_config: Annotated[
        list[Path] | None,
        typer.Option(
            "--mcp-config",
            help="An MCP configuration ({mcp: {servers: [...]}}): its servers' tools are listed "
            "now and compiled into a package whose Activities call them (repeatable).",
            readable=False,
        ),
    ] = None,
) -> None:
    """Generate a bindings package per spec file into OUT (all-or-nothing)."""
    inputs = [*(specs or ([] if mcp_config else [Path("specs")])), *(mcp_config or [])]
    names = _package_names(package or [], inputs)
    allowed = _allowed_refs(allow_ref)
    if not check:
        try:  # refuse an output path before spending a compilation on it (checked again later)
            check_output_dir(out, inputs)
        except OutputError as exc:
            raise _usage(str(exc)) from None
    progress = _LateProgress()
    select = None
    if tag or path or operation:  # (imported only then: a run reusing every package reads no spec)
        from .frontends.openapi import OperationFilter

        select = OperationFilter(
            tags=tuple(tag or ()), paths=tuple(path or ()), operations=tuple(operation or ())
        )
    refs = RefPolicy.allowing(allowed)
    before = {} if check else manifest_sources(out / MANIFEST) or {}
    try:
        if check:
            tree = build(
                inputs, progress, select=select or None, refs=refs, strict=strict, names=names
            )
        else:
            tree = write_into(
                inputs,
                out,
                progress,
                select=select or None,
                refs=refs,
                strict=strict,
                names=names,
                reuse=not full,
            )
    except SpecError as exc:
        progress.stop()
        _render(exc.diagnostics, notes=verbose)
        raise typer.Exit(1) from None
    except (OutputError, SelectionError) as exc:
        progress.stop()
        raise _usage(str(exc)) from None
    except OSError as exc:
        progress.stop()
        raise _usage(f"{out}: cannot write the output ({exc.strerror or exc})") from None
    progress.stop()
    _render(tree.diagnostics, notes=verbose)
    if check:
        if not out.is_dir():  # --check only reads: any directory can be compared
            try:
                check_output_dir(out)
            except OutputError as exc:
                raise _usage(str(exc)) from None
        diffs = diff_tree(tree, out)
        if diffs:
            sys.stdout.write("".join(diffs))
            _err.print(
                f"{out}: {len(diffs)} file(s) are stale — run `toolbind generate`",
                style="red",
                markup=False,
            )
            raise typer.Exit(1)
        _err.print(f"{out}: up to date ({len(tree.packages)} package(s))", markup=False)
        return
    for name, source in sorted(tree.packages.items()):
        _err.print(f"{source} → {out}/{name}/", markup=False)
    for name, source in sorted(before.items()):
        if name not in tree.packages:
            # the output holds exactly this run's packages: one a previous run made from
            # another spec is gone, which a user writing several specs' packages into one
            # directory, one run each, did not expect — said, never in silence
            _err.print(
                f"{out}/{name}/: removed — its spec, {source}, is not among this run's "
                f"(hint: pass every spec the directory should hold, or choose another -o)",
                markup=False,
            )


@app.command()
def schema(
    spec: Annotated[Path, typer.Argument(help="A spec file.", show_default=False, readable=False)],
    tool: Annotated[
        str | None, typer.Option("--tool", help="Only this tool (its spec name).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output-schema",
            help="A JSON/YAML file with the final output's JSON Schema.",
            readable=False,
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="composed ({output, calls}), or the tools for a provider: "
            + ", ".join(EXPORT_FORMATS)
            + ".",
        ),
    ] = "composed",
    explicit: Annotated[
        bool,
        typer.Option(
            "--explicit",
            help="Provider formats: compose every tool as explicit (an Activity of its name "
            "runs it), so the model is not asked for `_output`.",
        ),
    ] = False,
    allow_ref: AllowRef = None,
) -> None:
    """Print the composed LLM-facing schema ({output, calls}) of SPEC, or its tools in a
    provider's format (--format), as JSON."""
    allowed = _allowed_refs(allow_ref)
    if fmt != "composed":
        if fmt not in EXPORT_FORMATS:  # narrows fmt to ExportFormat
            raise _usage(f"--format {fmt!r}: expected composed, {', '.join(EXPORT_FORMATS)}")
        if output is not None:
            raise _usage("--output-schema goes with --format composed only")
        try:
            value, diagnostics = provider_export(
                spec, fmt, tool=tool, explicit=explicit, allow_refs=allowed
            )
        except SpecError as exc:
            _render(exc.diagnostics)
            raise typer.Exit(1) from None
        _render(diagnostics, notes=True)
        if fmt == "openai-strict":
            refused = len({d.loc for d in diagnostics if d.severity == "warning"})
            _err.print(f"{len(value)} tool(s) strict, {refused} refused", markup=False, style="dim")
        sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
        return
    if explicit:
        raise _usage("--explicit goes with a provider --format")
    out_schema: dict[str, Any] | None = None
    if output is not None:
        doc = load_document(output)
        if not isinstance(doc, Document):
            _render([doc])
            raise typer.Exit(1)
        value: Any = doc.value
        if not isinstance(value, dict):
            _err.print(
                f"{output}#: error: the output schema is not an object — expected a JSON Schema object",
                style="red",
                markup=False,
            )
            raise typer.Exit(1)
        out_schema = cast("dict[str, Any]", value)
    from ._api import composed_schema  # imports the runtime's composer

    try:
        result = composed_schema(spec, tool=tool, output=out_schema, allow_refs=allowed)
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


@app.command("scaffold")
def scaffold_command(
    spec: Annotated[Path, typer.Argument(help="A spec file.", show_default=False, readable=False)],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="The module to write (never overwritten).", show_default=False
        ),
    ],
    package: Annotated[
        str | None,
        typer.Option(
            "--package", help="Import path of the generated package (default: generated.<name>)."
        ),
    ] = None,
    allow_ref: AllowRef = None,
) -> None:
    """Write a starting module of Activity functions for SPEC's tools, once: it is yours to edit."""
    allowed = _allowed_refs(allow_ref)
    inside = file_ancestor(out)
    if inside is not None:
        raise _usage(
            f"{out}: {display_path(inside)} is a file — expected -o to name a file in a directory"
        )
    if out.exists() or out.is_symlink():
        raise _usage(
            f"{out}: already exists — scaffold writes a new file only, so your code is never overwritten"
        )
    try:
        text, _ = scaffold(spec, package, RefPolicy.allowing(allowed))
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise _usage(f"{out}: cannot write ({exc.strerror or exc})") from None
    _err.print(f"{spec} → {out} (Activity functions to fill in)", markup=False)


@app.command("test")
def test_command(
    specs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Spec files or directories (default: specs/).", show_default=False, readable=False
        ),
    ] = None,
    activities: Annotated[
        str | None,
        typer.Option(
            "--activities",
            help="Module (import path or .py file) whose Activities to check: its ACTIVITIES dict "
            "(tool name → function), else functions named like the tools.",
        ),
    ] = None,
    examples: Annotated[
        int, typer.Option("--examples", min=1, help="Examples per property and schema.")
    ] = 100,
    tool: Annotated[
        list[str] | None, typer.Option("--tool", help="Only this tool (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Hypothesis seed (same seed, same run).")] = 0,
    allow_unchecked: Annotated[
        bool,
        typer.Option(
            "--allow-unchecked",
            help="Exit 0 when every contract checked holds even if a part could not be checked "
            "(no instance could be generated); without it such a run exits 1.",
        ),
    ] = False,
    allow_ref: AllowRef = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0,
            help="Seconds each part of a tool's contract (its Call model, its Output model, its "
            "Activity) may take; a part that takes longer is reported not checked. 0: no limit.",
        ),
    ] = 300,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Tools checked at once, each in its own process (default: one per CPU; 1 for "
            "Activities that must not run concurrently).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Property-test the contracts of SPEC's tools: models round-trip valid instances and reject
    invalid ones; with --activities, every Activity takes every Call and returns a valid Output.
    Exit 1 when a contract is broken or a part of one could not be checked (see
    --allow-unchecked)."""
    allowed = _allowed_refs(allow_ref)
    try:
        from toolbind.testing._cli import CommandLineError, run
    except ImportError as exc:
        raise _usage(
            f"toolbind test needs the testing extra ({exc.name or exc}): "
            "pip install 'toolbind[testing]'"
        ) from None
    out = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 160)
    try:
        code = run(
            specs or [Path("specs")],
            activities=activities,
            examples=examples,
            tools=tool or [],
            seed=seed,
            out=out,
            err=_err,
            allow_refs=allowed,
            allow_unchecked=allow_unchecked,
            jobs=jobs,
            budget=timeout or None,
        )
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except CommandLineError as exc:
        raise _usage(str(exc)) from None
    raise typer.Exit(code)


@app.command("serve")
def serve_command(
    specs: Annotated[
        list[Path],
        typer.Argument(
            help="Spec files or directories to serve.", show_default=False, readable=False
        ),
    ],
    activities: Annotated[
        str | None,
        typer.Option(
            "--activities",
            help="Module (import path or .py file) with the Activities: its ACTIVITIES dict "
            "(tool name → function), else functions named like the tools.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Where an OpenAPI spec's operations are called (default: its first server).",
        ),
    ] = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http", metavar="HOST:PORT", help="Serve streamable HTTP at /mcp (default: stdio)."
        ),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env", metavar="NAME", help="Require 'Authorization: Bearer $NAME' over HTTP."
        ),
    ] = None,
    credentials_file: Annotated[
        Path | None,
        typer.Option(
            "--credentials",
            metavar="FILE",
            help="JSON/YAML: securitySchemes name → credential (as HttpClient takes; "
            "'${env.NAME}' values) for the OpenAPI operations.",
        ),
    ] = None,
    credential: Annotated[
        list[str] | None,
        typer.Option(
            "--credential",
            metavar="SCHEME=VALUE",
            help="One string credential (API key, bearer token), e.g. Bearer='${env.API_TOKEN}'.",
        ),
    ] = None,
    latent: Annotated[
        bool,
        typer.Option(
            "--latent", help="Also serve tools with no Activity: the result is the call's _output."
        ),
    ] = False,
    allow_ref: AllowRef = None,
) -> None:
    """Serve SPEC's tools as an MCP server: each tool with an Activity (an OpenAPI operation over
    HTTP, or a function of --activities) is an MCP tool; calls are validated by the generated Call
    models. stdio by default; --http HOST:PORT for streamable HTTP."""
    import os

    from toolbind.runtime.errors import UsageError

    from ._serve import parse_address, prepare, read_credentials, run

    allowed = _allowed_refs(allow_ref)
    token: str | None = None
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token:
            raise _usage(f"--token-env {token_env}: the variable is not set (or empty)")
    try:
        address = parse_address(http, token) if http is not None else None
        credentials = read_credentials(credentials_file, credential or [])
        server, served, skipped, root = prepare(
            specs,
            activities=activities,
            base_url=base_url,
            allow_refs=allowed,
            credentials=credentials,
            latent=latent,
        )
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except UsageError as exc:
        raise _usage(str(exc)) from None
    import signal

    # an MCP client stops a stdio server with SIGTERM, whose default ends the process
    # without `finally`: the compiled packages were left in the temp dir at every stop
    # (the HTTP server installs its own graceful handler over this one). Installed before
    # "serving" is said, so a client that stops the server as soon as it is told still
    # reaches the cleanup.
    try:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        if skipped:
            _err.print(
                f"not served (no Activity{'' if not latent else ', never latent'}): "
                f"{', '.join(skipped[:20])}"
                f"{' …' if len(skipped) > 20 else ''}",
                markup=False,
            )
        where = f"http://{http}/mcp" if http else "stdio"
        _err.print(f"serving {len(served)} tool(s) over {where}", markup=False)
        run(server, address, token)
    finally:
        import shutil

        shutil.rmtree(root, ignore_errors=True)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@app.command("diff")
def diff_command(
    old: Annotated[
        str,
        typer.Argument(help="The old spec: a file, a directory or REV:PATH.", show_default=False),
    ],
    new: Annotated[
        str,
        typer.Argument(help="The new spec: a file, a directory or REV:PATH.", show_default=False),
    ],
    fmt: Annotated[str, typer.Option("--format", help="text, json or markdown.")] = "text",
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            help="Exit 1 on: breaking (Calls, Activities or undecided), any change, or none.",
        ),
    ] = "breaking",
    allow_ref: AllowRef = None,
) -> None:
    """Compare two versions of specs at the tool surface: each change says whom it breaks
    (Calls, Activities, prompt only, safe) and where, with a witness for a breaking one."""
    from ._diff import diff_specs, render

    allowed = _allowed_refs(allow_ref)
    if fmt not in ("text", "json", "markdown"):
        raise _usage(f"--format {fmt!r}: expected text, json or markdown")
    if fail_on not in ("breaking", "any", "none"):
        raise _usage(f"--fail-on {fail_on!r}: expected breaking, any or none")
    try:
        report = diff_specs(old, new, RefPolicy.allowing(allowed))
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except SelectionError as exc:
        raise _usage(str(exc)) from None
    _render(report.diagnostics)
    sys.stdout.write(render(report, fmt))  # pyright: ignore[reportArgumentType]
    raise typer.Exit(1 if report.fails(fail_on) else 0)  # pyright: ignore[reportArgumentType]


@app.command("worker")
def worker_command(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="SPEC_OR_PACKAGE...",
            help="Spec files/directories (compiled in memory) or generated packages' import names.",
            show_default=False,
        ),
    ],
    task_queue: Annotated[
        str, typer.Option("--task-queue", help="The Temporal task queue to poll.")
    ] = "toolbind",
    activities: Annotated[
        str | None,
        typer.Option(
            "--activities",
            help="Module (import path or .py file) with the Activities: its ACTIVITIES dict "
            "(tool name → function), else functions named like the tools.",
        ),
    ] = None,
    address: Annotated[
        str, typer.Option("--address", help="The Temporal frontend, HOST:PORT.")
    ] = "127.0.0.1:7233",
    namespace: Annotated[str, typer.Option("--namespace")] = "default",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Where OpenAPI operations are called (default: the spec's first server).",
        ),
    ] = None,
    queues: Annotated[
        str,
        typer.Option(
            "--queues",
            help="Where the agent loop schedules tool activities: one queue, one per toolset or per tool (TASK_QUEUE.NAME).",
        ),
    ] = "one",
    workflows: Annotated[
        bool, typer.Option("--workflows/--no-workflows", help="Host the durable agent loop.")
    ] = True,
    llm: Annotated[bool, typer.Option("--llm/--no-llm", help="Host the LLM activity.")] = True,
    max_concurrent: Annotated[
        int, typer.Option("--max-concurrent", help="Activities run at once.")
    ] = 100,
    allow_ref: AllowRef = None,
) -> None:
    """Run a Temporal worker (the temporal extra): the durable agent loop, the LLM activity
    and every tool Activity of SPEC_OR_PACKAGE (generated HTTP Activities, --activities functions)."""
    from toolbind.runtime.errors import UsageError

    from ._worker import run

    allowed = _allowed_refs(allow_ref)
    try:
        run(
            sources,
            task_queue=task_queue,
            address=address,
            namespace=namespace,
            activities=activities,
            base_url=base_url,
            queues=queues,
            workflows=workflows,
            llm=llm,
            max_concurrent=max_concurrent,
            allow_refs=allowed,
        )
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except UsageError as exc:
        raise _usage(str(exc)) from None


def _direct_generate(argv: list[str]) -> dict[str, Any] | None:
    """``generate``'s keyword arguments from ``argv`` (the words after ``generate``), as typer
    would pass them, when every word is in a plain form; None for anything else, which typer
    then parses (and reports).

    Typer coerces each parameter through a pydantic ``TypeAdapter``, so parsing a ``generate``
    command line imported pydantic and built ten adapters: a fifth of a run that reuses every
    package (and a twentieth of one that compiles the largest spec again), where nothing else
    imports pydantic. Read here from ``generate``'s own declaration (its names, types and
    defaults), so the two cannot disagree: an option spelled as declared (``--out``, ``-o``)
    with its value in the next word, a flag without a value, a list option repeated, the rest
    spec paths. Anything else — ``--help``, ``--opt=value``, ``-oDIR``, ``--``, an unknown or
    repeated scalar option, a value that starts with ``-`` or is empty, a path that exists
    unreadable — goes to typer."""
    params = get_params_from_function(generate)  # typer's own reading of the declaration
    by_decl: dict[str, str] = {}
    positional = ""
    kinds: dict[str, tuple[bool, bool, Any, bool]] = {}  # name → flag, list, element, readable
    values: dict[str, Any] = {}
    for name, meta in params.items():
        info = meta.default
        if not isinstance(info, ParameterInfo) or callable(info.default):
            return None
        if info.envvar or info.callback or info.parser or info.is_eager or not info.expose_value:
            return None
        if info.exists or info.resolve_path or info.writable or info.allow_dash:
            return None
        if not (info.file_okay and info.dir_okay):
            return None
        base = meta.annotation
        union = get_origin(base) in (types.UnionType, Union)
        arms = [a for a in get_args(base) if a is not type(None)] if union else [base]
        if len(arms) != 1:
            return None
        element: Any = arms[0]
        many = get_origin(element) is list
        if many:
            (element,) = get_args(element)
        if element not in (bool, str, Path) or (element is bool and (many or union)):
            return None
        kinds[name] = (element is bool, many, element, info.readable)
        values[name] = info.default
        if isinstance(info, OptionInfo):
            if not info.param_decls or any("/" in d for d in info.param_decls):
                return None
            for decl in info.param_decls:
                by_decl[decl] = name
        elif positional or not many:
            return None
        else:
            positional = name
    given: set[str] = set()
    words = iter(argv)
    for word in words:
        if word.startswith("-"):
            name = by_decl.get(word)
            if name is None:
                return None
            flag, many, element, readable = kinds[name]
            if name in given and not many:
                return None
            given.add(name)
            if flag:
                values[name] = True
                continue
            value = next(words, None)
            if value is None or not value or value.startswith("-"):
                return None
        elif positional and word:
            name, value = positional, word
            _, many, element, readable = kinds[name]
        else:
            return None
        if element is Path:
            value = Path(value)
            if readable and os.path.exists(value) and not os.access(value, os.R_OK):
                return None
        if many:
            values[name] = [*(values[name] or ()), value]
        else:
            values[name] = value
    if any(value is ... for value in values.values()):  # a required parameter not given
        return None
    return values


def _exit_now(code: int) -> NoReturn:
    """End a ``generate`` process once its output is flushed, without the interpreter's
    teardown (as mypy's ``hard_exit`` does): freeing a large spec's parse, IR and rendered text
    object by object, and the collection that comes with it, took 40–70 ms, a twentieth of a
    one-description regeneration. Everything ``generate`` writes is written and closed by
    then; nothing it starts registers work for exit."""
    for stream in (sys.stdout, sys.stderr):
        # (a closed pipe: nothing more can be said on it)
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def main() -> None:
    """Console-script entry point."""
    try:
        direct = _direct_generate(sys.argv[2:]) if sys.argv[1:2] == ["generate"] else None
        if direct is None:
            app()
            return
        # no cyclic collection for the rest of a process that ends in ``_exit_now``: the one
        # that ``build`` re-enabling it set off walked every object it had made (about 40 ms
        # on the largest spec) to free next to nothing
        gc.disable()
        try:
            generate(**direct)
        except KeyboardInterrupt:  # as typer has it
            raise SystemExit(130) from None
        except typer.Exit as exc:
            _exit_now(exc.exit_code)
        _exit_now(0)
    except KeyboardInterrupt:  # pragma: no cover - interactive
        _err.print("interrupted; the output directory was left as it was", markup=False)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
