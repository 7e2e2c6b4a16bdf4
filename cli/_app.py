"""CLI layer: the ``toolbind`` command as a typer app. Thin: parse, call the library, render,
exit code.

Imports the compiler, typer and rich; the runtime, the contract tester and the other commands' modules
(``_serve``, ``_worker``, ``_test``) when their command runs.

Exit codes: 0 success, 1 spec errors (or a stale tree with ``--check``, or a broken or unchecked
contract with ``test``), 2 usage errors.
Diagnostics go to stderr, results to stdout. A user's mistake never shows a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Union, cast, get_args, get_origin

import typer
from rich.console import Console

from toolbind._version import VERSION
from toolbind.compiler._driver import (
    SelectionError,
    file_ancestor,
    scaffold,
)
from toolbind.compiler._load import Document, RefPolicy, display_path, load_document
from toolbind.compiler.errors import SpecError

from ._export import EXPORT_FORMATS, provider_export
from ._generate import (
    LateProgress,
    Param,
    allowed_refs_error,
    render,
    run,
    stderr_console,
    usage,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile tool specs into typed, validated Pydantic tool bindings.",
    pretty_exceptions_enable=False,
)
_err = stderr_console()
_render = render


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
    wrong = allowed_refs_error(allowed)
    if wrong is not None:
        raise _usage(wrong)
    return allowed or []


def _usage(message: str) -> typer.Exit:
    return typer.Exit(usage(message))


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
    no_format_checks: Annotated[
        bool,
        typer.Option(
            "--no-format-checks",
            help="OpenAPI: Calls leave formats unchecked (by default they check int32/int64 "
            "and float/double ranges, uuid, date and date-time before anything is sent).",
        ),
    ] = False,
) -> None:
    """Generate a bindings package per spec file into OUT (all-or-nothing)."""
    code = run(
        specs=specs,
        out=out,
        check=check,
        verbose=verbose,
        tag=tag,
        path=path,
        operation=operation,
        allow_ref=allow_ref,
        strict=strict,
        package=package,
        full=full,
        mcp_config=mcp_config,
        no_format_checks=no_format_checks,
    )
    if code:
        raise typer.Exit(code)


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
    from toolbind.compiler._api import composed_schema  # imports the runtime's composer

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
            "--package",
            help="Import path of the generated package (default: its name, as generate names it; "
            "its output folder on sys.path).",
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


_LIVE = {
    "base_url": "Check that the live server at URL keeps the spec's promises: valid Calls of each "
    "operation go through the generated HTTP Activities, and every answer is checked (status, "
    "content type, body, headers, auth). Safe methods only unless --method says otherwise.",
    "credentials": "With --base-url: JSON/YAML, securitySchemes name → credential (as serve).",
    "credential": "With --base-url: one string credential, e.g. Bearer='${env.API_TOKEN}'.",
    "header": "With --base-url: a header every request sends (repeatable).",
    "budget": "With --base-url: requests sent at most, over all tools.",
    "rate": "With --base-url: requests per second at most (default: no limit).",
    "method": "With --base-url: an HTTP method to send (repeatable; default GET, HEAD, OPTIONS).",
    "unsafe": "With --base-url: send unsafe methods (POST, …) to a host that is not loopback.",
    "junit": "With --base-url: also write the report as JUnit XML to PATH (for CI).",
    "check": "With --base-url: also make this check (repeatable), e.g. negative_data_rejection "
    "(Calls the spec forbids must get a 4xx; off by default).",
    "skip_check": "With --base-url: leave this check out (repeatable), e.g. "
    "positive_data_acceptance.",
}
"""The help of ``test``'s live-server options (``toolbind.testing.live``)."""

_AllowUnchecked = Annotated[
    bool,
    typer.Option(
        "--allow-unchecked",
        help="Exit 0 when every contract checked holds even if a part could not be checked "
        "(no instance could be generated); without it such a run exits 1.",
    ),
]
_TestTimeout = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0,
        help="Seconds each part of a tool's contract (its Call model, its Output model, its "
        "Activity) may take; a part that takes longer is reported not checked. 0: no limit.",
    ),
]
_Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Tools checked at once, each in its own process (default: one per CPU; 1 for "
        "Activities that must not run concurrently).",
        show_default=False,
    ),
]
# the types of ``test``'s live-server options that take text
_Credentials = Annotated[
    Path | None, typer.Option("--credentials", metavar="FILE", help=_LIVE["credentials"])
]
_Credential = Annotated[
    list[str] | None,
    typer.Option("--credential", metavar="SCHEME=VALUE", help=_LIVE["credential"]),
]
_Header = Annotated[
    list[str] | None, typer.Option("--header", metavar="'NAME: VALUE'", help=_LIVE["header"])
]
_Method = Annotated[list[str] | None, typer.Option("--method", help=_LIVE["method"])]
_Junit = Annotated[Path | None, typer.Option("--junit-xml", metavar="PATH", help=_LIVE["junit"])]
_Check = Annotated[list[str] | None, typer.Option("--check", metavar="NAME", help=_LIVE["check"])]
_SkipCheck = Annotated[
    list[str] | None, typer.Option("--skip-check", metavar="NAME", help=_LIVE["skip_check"])
]


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
    allow_unchecked: _AllowUnchecked = False,
    allow_ref: AllowRef = None,
    timeout: _TestTimeout = 300,
    jobs: _Jobs = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help=_LIVE["base_url"])] = None,
    credentials_file: _Credentials = None,
    credential: _Credential = None,
    header: _Header = None,
    budget: Annotated[int, typer.Option("--budget", min=1, help=_LIVE["budget"])] = 100,
    rate: Annotated[float | None, typer.Option("--rate", min=0, help=_LIVE["rate"])] = None,
    method: _Method = None,
    allow_unsafe: Annotated[bool, typer.Option("--allow-unsafe", help=_LIVE["unsafe"])] = False,
    junit_xml: _Junit = None,
    check: _Check = None,
    skip_check: _SkipCheck = None,
) -> None:
    """Property-test the contracts of SPEC's tools: models round-trip valid instances and reject
    invalid ones; with --activities, every Activity takes every Call and returns a valid Output;
    with --base-url, a live server keeps the spec's promises. Exit 1 when a contract is broken or
    a part of one could not be checked (see --allow-unchecked)."""
    if base_url is not None:
        live: dict[str, Any] = {
            "credentials": (credentials_file, credential or []),
            "headers": header or [],
            "budget": budget,
            "rate": rate,
            "allow_unsafe": allow_unsafe,
            "tools": tool or None,
            "seed": seed,
            "checks": (check or [], skip_check or []),
            **({"methods": [m.upper() for m in method]} if method else {}),
        }
        raise typer.Exit(_run_live_tests(specs or [Path("specs")], base_url, junit_xml, live))
    settings: dict[str, Any] = {
        "activities": activities,
        "examples": examples,
        "tools": tool or [],
        "seed": seed,
        "allow_refs": _allowed_refs(allow_ref),
        "allow_unchecked": allow_unchecked,
        "jobs": jobs,
        "budget": timeout or None,
    }
    raise typer.Exit(_run_contract_tests(specs or [Path("specs")], settings))


def _headers(lines: list[str]) -> dict[str, str]:
    """``--header 'Name: value'`` lines as a mapping (a line without a colon is a usage error)."""
    from toolbind.errors import UsageError

    out: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        name, sep, value = line.partition(":")
        if not sep or not name.strip():  # (the text itself is not shown: it may hold a secret)
            raise UsageError(f"--header (the {number}. one): expected 'NAME: VALUE'")
        out[name.strip()] = value.strip()
    return out


def _checks(added: list[str], removed: list[str]) -> list[str]:
    """The live checks to make: the default ones, ``--check``'s added, ``--skip-check``'s removed
    (an unknown name is a usage error naming the flag)."""
    from toolbind.errors import UsageError
    from toolbind.testing.live import CHECKS, DEFAULT_CHECKS

    for flag, names in (("--check", added), ("--skip-check", removed)):
        unknown = [n for n in names if n not in CHECKS]
        if unknown:
            raise UsageError(
                f"{flag} {', '.join(unknown)}: no such check (checks: {', '.join(CHECKS)})"
            )
    return [c for c in CHECKS if (c in DEFAULT_CHECKS or c in added) and c not in removed]


def _run_live_tests(
    specs: list[Path], base_url: str, junit: Path | None, options: dict[str, Any]
) -> int:
    """``toolbind test --base-url``'s run (``toolbind.testing.live.run_live``): its exit code;
    a caller's mistake ends the command with exit 2, a bad spec with exit 1."""
    try:
        from toolbind.testing.live import run_live
    except ImportError as exc:
        raise _usage(
            f"toolbind test needs the testing extra ({exc.name or exc}): "
            "pip install 'toolbind[testing]'"
        ) from None
    from toolbind.errors import UsageError

    from ._serve import read_credentials

    try:
        options["credentials"] = read_credentials(*options["credentials"])
        options["headers"] = _headers(options["headers"])
        options["checks"] = _checks(*options["checks"])
        return run_live(specs, base_url, junit=junit, echo=_out_line, **options)
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except UsageError as exc:
        raise _usage(str(exc)) from None


def _out_line(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _run_contract_tests(specs: list[Path], settings: dict[str, Any]) -> int:
    """``toolbind test``'s run (``_test.run`` with ``settings``): its exit code; a bad spec or
    a usage error ends the command as ``test`` says it."""
    try:
        from ._test import CommandLineError, run
    except ImportError as exc:
        raise _usage(
            f"toolbind test needs the testing extra ({exc.name or exc}): "
            "pip install 'toolbind[testing]'"
        ) from None
    out = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 160)
    try:
        return run(specs, out=out, err=_err, **settings)
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except CommandLineError as exc:
        raise _usage(str(exc)) from None


# the options ``serve`` and ``worker`` share: where the tools run
_Activities = Annotated[
    str | None,
    typer.Option(
        "--activities",
        help="Module (import path or .py file) with the Activities: its ACTIVITIES dict "
        "(tool name → function), else functions named like the tools.",
    ),
]
_ApiBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Where an OpenAPI spec's operations are called (default: its first server).",
    ),
]


@app.command("serve")
def serve_command(
    specs: Annotated[
        list[Path],
        typer.Argument(
            help="Spec files or directories to serve.", show_default=False, readable=False
        ),
    ],
    activities: _Activities = None,
    base_url: _ApiBaseUrl = None,
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
    allowed = _allowed_refs(allow_ref)
    token: str | None = None
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token:
            raise _usage(f"--token-env {token_env}: the variable is not set (or empty)")
    prepared = _serve_prepared(
        specs,
        activities=activities,
        base_url=base_url,
        http=http,
        token=token,
        credentials=(credentials_file, credential or []),
        latent=latent,
        allowed=allowed,
    )
    _serve_until_stopped(prepared, http=http, token=token, latent=latent)


def _serve_prepared(
    specs: list[Path],
    *,
    activities: str | None,
    base_url: str | None,
    http: str | None,
    token: str | None,
    credentials: tuple[Path | None, list[str]],
    latent: bool,
    allowed: list[str],
) -> tuple[Any, ...]:
    """``serve``'s server, compiled from ``specs``: (server, served, skipped, temp root,
    address); a bad spec or a usage error ends the command as ``serve`` says it."""
    from toolbind.errors import UsageError

    from ._serve import parse_address, prepare, read_credentials

    try:
        address = parse_address(http, token) if http is not None else None
        server, served, skipped, root = prepare(
            specs,
            activities=activities,
            base_url=base_url,
            allow_refs=allowed,
            credentials=read_credentials(*credentials),
            latent=latent,
        )
    except SpecError as exc:
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except UsageError as exc:
        raise _usage(str(exc)) from None
    return server, served, skipped, root, address


def _serve_until_stopped(
    prepared: tuple[Any, ...], *, http: str | None, token: str | None, latent: bool
) -> None:
    """Run the prepared server until it stops, then remove the packages compiled for it."""
    import signal

    from ._serve import run

    server, served, skipped, root, address = prepared

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
    from toolbind.compiler._diff import diff_specs, render

    allowed = _allowed_refs(allow_ref)
    if fmt not in ("text", "json", "markdown"):
        raise _usage(f"--format {fmt!r}: expected text, json or markdown")
    if fail_on not in ("breaking", "any", "none"):
        raise _usage(f"--fail-on {fail_on!r}: expected breaking, any or none")
    progress = LateProgress(doing="")  # (a line on a terminal once the run takes a second)
    try:
        report = diff_specs(old, new, RefPolicy.allowing(allowed), progress)
    except SpecError as exc:
        progress.stop()
        _render(exc.diagnostics)
        raise typer.Exit(1) from None
    except SelectionError as exc:
        progress.stop()
        raise _usage(str(exc)) from None
    progress.stop()
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
    activities: _Activities = None,
    address: Annotated[
        str, typer.Option("--address", help="The Temporal frontend, HOST:PORT.")
    ] = "127.0.0.1:7233",
    namespace: Annotated[str, typer.Option("--namespace")] = "default",
    base_url: _ApiBaseUrl = None,
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
    from toolbind.errors import UsageError

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


def plain_parameters() -> tuple[Param, ...]:
    """``generate``'s parameters as typer reads its declaration (``_generate.GENERATE`` must be
    these: a test compares them)."""
    from typer.models import OptionInfo, ParameterInfo
    from typer.utils import get_params_from_function

    found: list[Param] = []
    for name, meta in get_params_from_function(generate).items():
        info = meta.default
        assert isinstance(info, ParameterInfo)
        base = meta.annotation
        union = get_origin(base) in (types.UnionType, Union)
        (element,) = [a for a in get_args(base) if a is not type(None)] if union else [base]
        many = get_origin(element) is list
        if many:
            (element,) = get_args(element)
        decls = tuple(info.param_decls or ()) if isinstance(info, OptionInfo) else ()
        found.append(
            Param(name, decls, element is bool, many, element, bool(info.readable), info.default)
        )
    return tuple(found)


def app_main() -> None:
    """The typer app (every command line ``_main.main`` does not run itself)."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        _err.print("interrupted; the output directory was left as it was", markup=False)
        raise SystemExit(130) from None
