"""Compiler layer: a spec file's tools in a provider's format (``toolbind schema --format``).

Imports the driver (to compile the spec in memory) and ``toolbind.runtime``'s exports, which do the
work; this module only turns a compiled ``tools.json`` into the tools the exports read, and their
refusals and notes into located diagnostics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._api import spec_tool_entries
from .diagnostics import Diagnostic
from .ir import SourceLocation

if TYPE_CHECKING:
    from toolbind.runtime import ExportIssue

ExportFormat = Literal["openai", "openai-strict", "anthropic", "gemini", "mcp"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("openai", "openai-strict", "anthropic", "gemini", "mcp")


@dataclass(frozen=True, slots=True, kw_only=True)
class _EntryTool:
    """One tool of a compiled ``tools.json`` (what ``toolbind.runtime``'s exports read)."""

    name: str
    provider_name: str
    description: str | None
    title: str | None
    parameters: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    activity: str | None
    defs: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    source: str

    @classmethod
    def from_entry(cls, entry: dict[str, Any], defs: dict[str, Any]) -> _EntryTool:
        return cls(
            name=entry["name"],
            provider_name=entry["provider_name"],
            description=entry.get("description"),
            title=entry.get("title"),
            parameters=entry["parameters"],
            output_schema=entry.get("output_schema"),
            activity=entry.get("activity"),
            defs=defs,
            annotations=entry.get("annotations"),
            source=entry.get("source", ""),
        )


def _location(source: str) -> SourceLocation:
    file, _, pointer = source.partition("#")
    return SourceLocation(file=file, pointer=pointer)


def _diagnostic(tools: dict[str, _EntryTool], issue: ExportIssue, what: str) -> Diagnostic:
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
    from toolbind.runtime import (
        anthropic_tools,
        gemini_tools,
        mcp_tools,
        openai_strict_tools,
        openai_tools,
    )

    entries, defs = spec_tool_entries(spec, tool, allow_refs)
    tools = [_EntryTool.from_entry(t, defs) for t in entries]
    activities = {t.name for t in tools} if explicit else set[str]()
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
