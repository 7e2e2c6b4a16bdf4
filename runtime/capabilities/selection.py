"""Runtime layer: ``ToolSelection`` — offer only the most relevant tools per request (large
toolsets). Imports ``_capability``, ``_binding``, ``_selection``, ``errors``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._binding import ToolBinding
from .._capability import Capability, written_by_toolbind
from .._selection import ToolSelector, as_selector, offered_tools
from ..errors import UsageError

__all__ = ["ToolSelection"]


class ToolSelection(Capability):
    """Offer each request only the tools ``selector`` picks for the user's latest request (the
    latest user message the Agent did not write itself: never the context it shows the model or
    a result it delivers).

    Args:
        selector: a number k (BM25 over names, descriptions and parameter names:
            ``BM25Selector(k)``, needs ``toolbind[select]``) or any ``ToolSelector``
            (``select(query, tools)``, sync or async: embeddings, an LLM router). A tool the
            request's ``tool_choice`` names is always offered.

    Raises:
        UsageError: ``selector`` is neither (the message names the argument).
    """

    def __init__(self, selector: int | ToolSelector) -> None:
        self.k = selector if isinstance(selector, int) else None
        chosen = as_selector(selector)
        assert chosen is not None
        self.selector: ToolSelector = chosen

    def for_child(self) -> None:
        return None  # a delegate's own few tools are all offered

    def durable(self) -> Mapping[str, Any]:
        if self.k is None:
            raise UsageError(
                f"DurableAgent(capabilities=[ToolSelection({self.selector!r})]): a durable run "
                "selects tools in workflow code, which must be deterministic and cannot receive "
                "objects: give a number k (BM25) — a ToolSelector runs only in process"
            )
        return {"tool_selection": self.k}

    async def prepare_tools(
        self, tools: list[ToolBinding], messages: Sequence[Mapping[str, Any]], tool_choice: str
    ) -> list[ToolBinding]:
        # the user's request: not the context, results or updates the Agent wrote as user messages
        asked = [m for m in messages if not written_by_toolbind(m)]
        return await offered_tools(tools, asked, selector=self.selector, tool_choice=tool_choice)
