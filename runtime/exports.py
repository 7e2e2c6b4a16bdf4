"""toolbind.runtime.exports: tools in a provider's format. Runtime layer, public; imports the
exporters (``_exports``) when imported.

``openai_tools``, ``anthropic_tools``, ``gemini_tools`` and ``mcp_tools`` write a toolset as each
provider declares tools; ``openai_strict_tools``/``openai_strict_schema`` make OpenAI's strict
mode of it (``StrictExport``, with ``call_from_strict`` to read a strict answer back), and
``strict_violations`` says why a schema cannot be strict (``ExportIssue``s; the refusal itself
is ``toolbind.runtime.errors.NotStrictable``). ``GeminiExport`` is Gemini's declaration with
the notes of what it had to leave out.
"""

from __future__ import annotations

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
from ._exports import (
    ExportIssue,
    GeminiExport,
    StrictExport,
    anthropic_tools,
    call_from_strict,
    gemini_tools,
    mcp_tools,
    openai_strict_schema,
    openai_strict_tools,
    openai_tools,
    strict_violations,
)

__all__ = [
    "ExportIssue",
    "GeminiExport",
    "StrictExport",
    "anthropic_tools",
    "call_from_strict",
    "gemini_tools",
    "mcp_tools",
    "openai_strict_schema",
    "openai_strict_tools",
    "openai_tools",
    "strict_violations",
]
# -- end of the block written from _EXPORTS --

# What this namespace exports: each module and the names it gives (the one list of them).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._exports": (
        "ExportIssue",
        "GeminiExport",
        "StrictExport",
        "anthropic_tools",
        "call_from_strict",
        "gemini_tools",
        "mcp_tools",
        "openai_strict_schema",
        "openai_strict_tools",
        "openai_tools",
        "strict_violations",
    ),
}
