"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``, ``contract``,
``errors``, ``types``; pydantic): the composed tools exported in each provider's format.

One module per provider (``_openai``, ``_openai_strict``, ``_anthropic``, ``_gemini``, ``_mcp``), the
OpenAI strict-mode rule checker (``_strict_rules``) and what they share (``_common``).

Every export starts from the same LLM-facing tool schema (``tool_schema``: the seeds' meta fields +
the parameters, with the reachable shared ``$defs``) and changes only what the provider needs:

* ``openai_tools`` — ``{"type": "function", "function": {name, description, parameters}}``, faithful.
* ``openai_strict_tools`` — the same with ``strict: true`` and a schema that follows OpenAI's
  published Structured Outputs rules (``strict_violations`` is the rule checker): every object
  closed (``additionalProperties: false``) and listing every property in ``required``, optional
  properties made nullable, only supported keywords. A tool that cannot be made strict without
  changing what it accepts in a way the faithful model could not repair is refused, with the reason
  and the JSON pointer (``StrictExport.refused``). ``call_from_strict`` maps a strict response back:
  the nulls strict mode forced for absent optional properties are dropped, then the faithful Call
  model validates.
* ``anthropic_tools`` — ``{name, description, input_schema}`` (JSON Schema as is).
* ``gemini_tools`` — function declarations in Gemini's OpenAPI-subset ``Schema``: upper-case
  ``type``, ``nullable``, no ``$ref`` (definitions inlined; recursion cut at a depth, with a note),
  no ``additionalProperties``/``const``; what had to be dropped is listed in ``GeminiExport.notes``.
* ``mcp_tools`` — an MCP ``tools/list`` result.

Loosening is always repaired on the way back: a provider's response is validated by the faithful
Call model, so a dropped keyword can cost a retry, never a wrong value.
"""

from __future__ import annotations

# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --
from ._anthropic import anthropic_tools
from ._common import ExportIssue, GeminiExport, StrictExport
from ._gemini import gemini_tools
from ._mcp import mcp_tools
from ._openai import openai_tools
from ._openai_strict import call_from_strict, openai_strict_schema, openai_strict_tools
from ._strict_rules import strict_violations

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

_EXPORTS: dict[str, tuple[str, ...]] = {
    "._anthropic": ("anthropic_tools",),
    "._common": ("ExportIssue", "GeminiExport", "StrictExport"),
    "._gemini": ("gemini_tools",),
    "._mcp": ("mcp_tools",),
    "._openai": ("openai_tools",),
    "._openai_strict": ("call_from_strict", "openai_strict_schema", "openai_strict_tools"),
    "._strict_rules": ("strict_violations",),
}
"""The face's names, by the module each is defined in: the one list (the block below is written
from it). ``NotStrictable``, the refusal, is ``toolbind.runtime.errors``'."""
