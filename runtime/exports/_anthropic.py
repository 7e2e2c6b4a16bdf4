"""toolbind.runtime.exports, runtime layer (imports ``_common``): Anthropic's tool format.

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from ._common import ExportableTool, call_schema


def anthropic_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Anthropic Messages API tools: ``{name, description, input_schema}``."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            entry["description"] = tool.description
        entry["input_schema"] = call_schema(tool, activities)
        out.append(entry)
    return out
