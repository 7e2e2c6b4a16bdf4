"""Compiler layer: the library entry points the CLI and users call."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from toolbind.contract import ToolSchema, compose_schema, never_latent

from ._driver import GeneratedTree, build, write_into
from ._load import RefPolicy
from .diagnostics import Diagnostic
from .errors import OutputError, SpecError
from .frontends.openapi import OperationFilter
from .ir import SourceLocation


def generate_tree(
    inputs: Sequence[Path | str],
    progress: Callable[[str], None] | None = None,
    *,
    tags: Sequence[str] = (),
    paths: Sequence[str] = (),
    operations: Sequence[str] = (),
    allow_refs: Sequence[Path | str] = (),
    strict: bool = False,
    package_names: Mapping[str, str] | None = None,
    format_checks: bool = True,
) -> GeneratedTree:
    """Compile spec files (or directories of them) into an in-memory tree of formatted files.

    Each spec becomes a package named after its file; ``package_names`` (spec file → name)
    names others explicitly.

    What a spec says with an assumed meaning (``type: int``, an undeclared path parameter, an
    empty ``enum``...) is read that way with a located warning; ``strict`` refuses it instead.

    The Calls of OpenAPI operations check the formats their API validates (``int32``,
    ``int64``, ``float`` and ``double`` ranges, ``uuid``, ``date``, ``date-time``), so a model's mistake is fed back
    before anything is sent; ``format_checks=False`` leaves formats unchecked.

    ``tags``, ``paths`` (glob patterns such as ``/pets*``) and ``operations`` (operationIds or
    tool names) keep only the matching operations of OpenAPI specs; other formats ignore them.
    ``$ref``s may read files in a spec's directory and below; ``allow_refs`` adds directories
    and http(s) URL prefixes (downloaded with a timeout and a size bound).

    Raises:
        SpecError: a spec has errors; ``.diagnostics`` lists every one, located.
        ValueError: the filter is given and selects no operation of any OpenAPI spec, or
            ``allow_refs`` names something that is neither a directory nor an http(s) URL.
    """
    select = OperationFilter(tags=tuple(tags), paths=tuple(paths), operations=tuple(operations))
    refs = RefPolicy.allowing(allow_refs)
    return build(
        [Path(p) for p in inputs],
        progress,
        select=select or None,
        refs=refs,
        strict=strict,
        names=package_names,
        format_checks=format_checks,
    )


def compile_to_directory(
    inputs: Sequence[Path | str],
    out: Path | str,
    *,
    allow_refs: Sequence[Path | str] = (),
    strict: bool = False,
    package_names: Mapping[str, str] | None = None,
    format_checks: bool = True,
) -> GeneratedTree:
    """Compile and write all-or-nothing to ``out`` (replacing a previous toolbind output);
    ``strict``, ``package_names`` and ``format_checks`` as ``generate_tree``'s."""
    refs = RefPolicy.allowing(allow_refs)
    return write_into(
        [Path(p) for p in inputs],
        Path(out),
        refs=refs,
        strict=strict,
        names=package_names,
        format_checks=format_checks,
    )


def load_package(out: Path | str, package: str) -> ModuleType:
    """Import the generated ``package`` from the output directory ``out``.

    Raises:
        OutputError: ``out`` holds no generated ``package`` (named, with what it does hold).
    """
    directory = Path(out).absolute()
    if not directory.joinpath(*package.split("."), "__init__.py").is_file():  # (a dotted path too)
        held = sorted(p.parent.name for p in directory.glob("*/__init__.py"))
        raise OutputError(
            f"load_package(out={str(out)!r}, package={package!r}): no generated package "
            f"{package!r} in {directory}"
            + (f" (it holds {', '.join(held)})" if held else "")
            + f" — run `toolbind generate SPEC -o {out}` first"
        )
    root = str(directory)
    if root not in sys.path:
        sys.path.insert(0, root)
    importlib.invalidate_caches()
    return importlib.import_module(package)


def spec_tool_entries(
    spec: Path | str, tool: str | None = None, allow_refs: Sequence[Path | str] = ()
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``tools.json`` entries of one spec file (only ``tool``'s when given) and its ``$defs``.

    Raises:
        SpecError: the spec has errors, is a directory, or ``tool`` names none of its tools.
    """
    try:
        is_dir = Path(spec).is_dir()
    except OSError:
        is_dir = False  # build() reports why it cannot be read
    if is_dir:
        raise SpecError(
            [
                Diagnostic(
                    loc=SourceLocation(file=str(spec)),
                    severity="error",
                    found="a directory",
                    expected="one spec file",
                )
            ]
        )
    tree = build([Path(spec)], formatted=False, refs=RefPolicy.allowing(allow_refs))
    (package,) = tree.packages
    data: dict[str, Any] = json.loads(tree.files[f"{package}/tools.json"])
    entries: list[dict[str, Any]] = data["tools"]
    if tool is not None:
        entries = [t for t in entries if t["name"] == tool]
        if not entries:
            names = ", ".join(repr(t["name"]) for t in data["tools"])
            raise SpecError(
                [
                    Diagnostic(
                        loc=SourceLocation(file=str(spec)),
                        severity="error",
                        found=f"no tool named {tool!r}",
                        expected=f"one of {names}",
                    )
                ]
            )
    return entries, data["$defs"]


def composed_schema(
    spec: Path | str,
    *,
    tool: str | None = None,
    output: Mapping[str, Any] | None = None,
    allow_refs: Sequence[Path | str] = (),
) -> dict[str, Any]:
    """The composed LLM-facing schema of one spec file (what ``toolbind schema`` prints).

    Args:
        spec: a spec file.
        tool: only this tool (by its spec name); every tool when None.
        output: the final output's JSON Schema; free text when None.
        allow_refs: directories and URL prefixes ``$ref``s may read beyond the spec's directory.

    Raises:
        SpecError: the spec has errors, or ``tool`` names no tool of it.
    """
    entries, defs = spec_tool_entries(spec, tool, allow_refs)
    tools = [ToolSchema.from_entry(t, defs) for t in entries]
    return compose_schema(tools, output, activities={t["name"] for t in entries if never_latent(t)})
