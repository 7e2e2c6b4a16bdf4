"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``): shared by every
export: what a tool must offer, the result types, the composed Call schema.

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from toolbind._compose import ComposableTool, reachable_defs, tool_schema


class ExportableTool(ComposableTool, Protocol):
    """What the exports need of a tool (composition's needs and these); ``ToolBinding`` has it all."""

    @property
    def provider_name(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def annotations(self) -> Mapping[str, Any] | None: ...


class StrictCallable(ExportableTool, Protocol):
    """A tool with its faithful Call model (for ``call_from_strict``)."""

    @property
    def call_model(self) -> type[BaseModel]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportIssue:
    """Why (part of) a tool could not be exported as is.

    Attributes:
        tool: the tool's name ('' from ``strict_violations``, which sees a schema only).
        pointer: RFC 6901 pointer into the tool's composed parameters schema ('' is the root).
        kind: a short category, for counting (e.g. ``free-form object``, ``keyword minLength``).
        message: what was found and what was expected.
    """

    tool: str = ""
    pointer: str
    kind: str
    message: str

    def __str__(self) -> str:
        where = f"{self.tool}: " if self.tool else ""
        return f"{where}#{self.pointer}: {self.message}"


@dataclass(frozen=True, slots=True)
class StrictExport:
    """OpenAI strict tools, and the tools that could not be made strict (with every reason)."""

    tools: list[dict[str, Any]] = field(default_factory=lambda: [])
    refused: list[ExportIssue] = field(default_factory=lambda: [])


@dataclass(frozen=True, slots=True)
class GeminiExport:
    """Gemini function declarations, and what each lost on the way (notes, never silent)."""

    declarations: list[dict[str, Any]] = field(default_factory=lambda: [])
    notes: list[ExportIssue] = field(default_factory=lambda: [])


# -- shared -------------------------------------------------------------------------------------


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def call_schema(tool: ExportableTool, activities: Collection[str] = ()) -> dict[str, Any]:
    """The tool's composed schema (meta fields + parameters) with the ``$defs`` it reaches."""
    schema = tool_schema(tool, activities)
    defs = reachable_defs(schema, tool.defs)
    if defs:
        schema["$defs"] = defs
    return schema
