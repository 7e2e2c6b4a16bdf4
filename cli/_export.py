"""CLI layer: a spec file's tools in a provider's format (``toolbind schema --format``).

Imports the compiler (to compile the spec in memory) and ``toolbind.runtime``'s exports, which do the
work; this module only turns a compiled ``tools.json`` into the tools the exports read, and their
refusals and notes into located diagnostics.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolbind.compiler.diagnostics import Diagnostic
from toolbind.compiler.ir import SourceLocation

if TYPE_CHECKING:
    from toolbind.contract import ToolSchema
    from toolbind.runtime.exports import ExportIssue

ExportFormat = Literal["openai", "openai-strict", "anthropic", "gemini", "mcp"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("openai", "openai-strict", "anthropic", "gemini", "mcp")


def _location(source: str) -> SourceLocation:
    file, _, pointer = source.partition("#")
    return SourceLocation(file=file, pointer=pointer)


def _diagnostic(tools: dict[str, ToolSchema], issue: ExportIssue, what: str) -> Diagnostic:
    tool = tools[issue.tool]
    return Diagnostic(
        loc=_location(tool.source),
        severity="warning" if what == "strict" else "note",
        found=(
            f"tool {issue.tool!r} {'cannot be made strict' if what == 'strict' else 'for Gemini'}:"
            f" at #{issue.pointer} of its composed schema, {issue.message}"
        ),
    )


def provider_export(
    spec: Path | str,
    fmt: ExportFormat,
    *,
    tool: str | None = None,
    explicit: bool = False,
    allow_refs: Sequence[Path | str] = (),
) -> tuple[Any, list[Diagnostic]]:
    """The tools of one spec file in a provider's format, and what the export had to say.

    Args:
        spec: a spec file.
        fmt: ``openai``, ``openai-strict``, ``anthropic``, ``gemini`` or ``mcp``.
        tool: only this tool (its spec name).
        explicit: compose every tool as explicit (an Activity of its name is registered), so no
            ``_output`` is asked of the model.

    Returns:
        The JSON value to print, and diagnostics: a warning per reason a tool was left out of the
        strict export, a note per thing Gemini's schema could not say.

    Raises:
        SpecError: the spec has errors, or ``tool`` names none of its tools.
    """
    # the exporters load pydantic: imported when asked for, so `toolbind generate` starts faster
    # (imported here: the ``toolbind`` command imports this module for its formats' names, and
    # a ``generate`` that reuses every package needs neither a frontend nor a backend)
    from toolbind.compiler._api import spec_tool_entries
    from toolbind.contract import ToolSchema, never_latent
    from toolbind.runtime.exports import (
        anthropic_tools,
        gemini_tools,
        mcp_tools,
        openai_strict_tools,
        openai_tools,
    )

    entries, defs = spec_tool_entries(spec, tool, allow_refs)
    tools = [ToolSchema.from_entry(t, defs) for t in entries]
    # a tool that never runs latently (an MCP tool runs on its server) is explicit anyway
    activities = {t["name"] for t in entries if explicit or never_latent(t)}
    by_name = {t.name: t for t in tools}
    if fmt == "openai":
        return openai_tools(tools, activities), []
    if fmt == "anthropic":
        return anthropic_tools(tools, activities), []
    if fmt == "mcp":
        return mcp_tools(tools, activities), []
    if fmt == "gemini":
        gemini = gemini_tools(tools, activities)
        notes = [_diagnostic(by_name, n, "gemini") for n in gemini.notes]
        return {"functionDeclarations": gemini.declarations}, notes
    strict = openai_strict_tools(tools, activities)
    return strict.tools, [_diagnostic(by_name, i, "strict") for i in strict.refused]
