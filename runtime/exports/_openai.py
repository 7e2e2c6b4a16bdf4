"""toolbind.runtime.exports, runtime layer (imports ``_common``): OpenAI function tools (faithful).

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from ._common import ExportableTool, call_schema


def openai_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = ()
) -> list[dict[str, Any]]:
    """OpenAI function tools (chat completions' ``tools``), faithful schemas."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = call_schema(tool, activities)
        out.append({"type": "function", "function": function})
    return out
