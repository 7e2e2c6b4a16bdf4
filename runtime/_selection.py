"""Runtime layer: large toolsets — which tools a request offers. Imports ``_compose``, ``errors``;
``bm25s`` (the ``select`` extra) when a ``BM25Selector`` first ranks.

A 174-operation spec composes to a 130 KB function: more than a small model's context, and more
than any model reads well. Three ways to offer fewer tools, composable:

* ``toolset(tools, tags=..., names=..., exclude=..., prefix=...)`` — a filtered view of a package
  or registry: by tag (a tool's ``toolsets``: OpenAPI tags, BFCL records), by name pattern
  (``fnmatch`` globs on the tool's or the spec's name), and prefixing (the model reads
  ``prefix + name``; calls, Activities and results keep the tool's own name);
* a per-run subset: ``Agent.request/run(..., tools=[names or bindings])``;
* ``Agent(tool_selection=k or a ToolSelector)``: per request, the ``k`` most relevant tools for the
  latest user message. ``BM25Selector`` (the default for an ``int``) ranks with BM25 (``bm25s``)
  over each tool's name (split at ``_ . -`` and camelCase), description, parameter names and tags;
  any object with ``select(query, tools)`` (sync or async) plugs in instead — embeddings, or an LLM
  router that asks a model to pick.

A tool the model names that was not offered in a step is not in that step's Response model: the
answer is invalid and goes back to the model with the tools it may call (never a crash).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from ._compose import TOOL_CHOICES, names_tool, spec_name
from .errors import UsageError

if TYPE_CHECKING:
    from ._binding import ToolBinding

__all__ = ["BM25Selector", "ToolSelector", "offered_tools", "selection_query", "toolset"]

T = TypeVar("T")


@runtime_checkable
class ToolSelector(Protocol):
    """Chooses the tools one request offers: the most relevant of ``tools`` for ``query`` (the
    latest user message), best first. May be async (an LLM router, a remote embedding model)."""

    def select(
        self, query: str, tools: Sequence[ToolBinding]
    ) -> Sequence[ToolBinding] | Awaitable[Sequence[ToolBinding]]: ...


# -- filters ------------------------------------------------------------------------------------


def toolset(
    tools: Iterable[ToolBinding] | Any,
    *,
    tags: Iterable[str] = (),
    names: Iterable[str] = (),
    exclude: Iterable[str] = (),
    prefix: str = "",
) -> list[ToolBinding]:
    """A filtered (and optionally prefixed) view of ``tools``.

    Args:
        tools: ``ToolBinding``s, a ``ToolRegistry`` or a generated package (its ``TOOLS``).
        tags: keep the tools in any of these toolsets (OpenAPI tags, BFCL record ids; a tool's
            ``toolsets``); empty keeps all.
        names: keep the tools whose name (or the spec's name) matches one of these ``fnmatch``
            patterns (``chat_*``, ``users_?et*``); empty keeps all.
        exclude: then drop the tools matching one of these patterns.
        prefix: offer each tool to the model as ``prefix + name`` (two toolsets with the same
            names side by side, or a hint of where a tool comes from); calls, Activities and
            results keep the tool's own name.

    Raises:
        UsageError: nothing is left (a filter that matches no tool is a mistake, said early).
    """
    found: Any = getattr(tools, "TOOLS", tools)
    pool: list[ToolBinding] = list(cast("Iterable[ToolBinding]", found))
    wanted_tags = set(tags)
    patterns = list(names)
    dropped = list(exclude)

    def matches(tool: ToolBinding, globs: list[str]) -> bool:
        return any(fnmatchcase(tool.name, g) or fnmatchcase(spec_name(tool), g) for g in globs)

    kept = [
        t
        for t in pool
        if (not wanted_tags or wanted_tags & set(t.toolsets))
        and (not patterns or matches(t, patterns))
        and not matches(t, dropped)
    ]
    if pool and not kept:
        raise UsageError(
            f"toolset(tags={sorted(wanted_tags)}, names={patterns}, exclude={dropped}) keeps none "
            f"of the {len(pool)} tools (e.g. {', '.join(t.name for t in pool[:5])})"
        )
    if prefix:
        kept = [replace(t, original_name=prefix + spec_name(t)) for t in kept]
    return kept


def _subset(tools: Sequence[ToolBinding], wanted: Iterable[str | ToolBinding]) -> list[ToolBinding]:
    """The per-run subset: names resolved among ``tools`` (by the tool's or the spec's name),
    bindings offered as given."""
    out: list[ToolBinding] = []
    for item in wanted:
        if isinstance(item, str):
            found = [t for t in tools if names_tool(t, item)]
            if not found:
                raise UsageError(
                    f"tools=[{item!r}, ...]: no such tool among the Agent's {len(tools)} "
                    f"(e.g. {', '.join(t.name for t in tools[:5]) or 'none'})"
                )
            out.extend(t for t in found if t not in out)
        elif item not in out:
            out.append(item)
    return out


# -- BM25 ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z]+|[0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_STOP_WORDS = (
    "a an and are as at be by can do does for from get has have how i in into is it its me my "
    "of on or our please so that the this to us we what when where which who will with you your "
    "should would could all any"
)
_STOP = frozenset(_STOP_WORDS.split())


def _stem(word: str) -> str:
    """A light suffix stripper (plurals, -ing, -ed, a final e): ``messages``/``message``,
    ``pinned``/``pin``, ``scheduled``/``schedule`` meet; enough for tool names and one-line
    descriptions, with no dependency."""
    if len(word) <= 4:
        return word
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] != "l":  # pinned → pin
                word = word[:-1]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def tokens(text: str) -> list[str]:
    """Lower-case word stems of ``text``: identifiers split at ``_ . -`` and camelCase
    boundaries, stop words left out."""
    out: list[str] = []
    for raw in _WORD.findall(_CAMEL.sub(" ", text)):
        word = raw.lower()
        if len(word) > 1 and word not in _STOP:
            out.append(_stem(word))
    return out


def tool_text(tool: ToolBinding) -> str:
    """What the BM25 index reads of a tool: its offered and own names (twice: a name is the
    densest description there is), tags, description, parameter names and descriptions, and the
    names of its output's fields (what it answers: "is Tom online?" asks for ``online``)."""
    props: Any = tool.parameters.get("properties")
    params: Mapping[str, Any] = (
        cast("Mapping[str, Any]", props) if isinstance(props, Mapping) else {}
    )
    described = [
        str(cast("Mapping[str, Any]", s).get("description") or "")
        for s in params.values()
        if isinstance(s, Mapping)
    ]
    out: Any = (tool.output_schema or {}).get("properties")
    answers = list(cast("Mapping[str, Any]", out)) if isinstance(out, Mapping) else []
    name = f"{spec_name(tool)} {tool.name}" if spec_name(tool) != tool.name else tool.name
    parts = [name, name, " ".join(tool.toolsets), tool.description or "", " ".join(params)]
    return " ".join([*parts, *described, " ".join(answers)])


class BM25Selector:
    """The ``k`` tools whose name, description and parameter names best match the query (BM25,
    with ``bm25s``; install ``toolbind[select]``). Indexes are kept per tool list (a few)."""

    def __init__(self, k: int = 10) -> None:
        if k < 1:
            raise ValueError("BM25Selector(k=...) must be >= 1")
        self.k = k
        self._indexes: dict[tuple[int, ...], tuple[Sequence[ToolBinding], Any]] = {}

    def _index(self, tools: Sequence[ToolBinding]) -> Any:
        key = tuple(id(t) for t in tools)
        found = self._indexes.get(key)
        if found is None:
            try:
                import bm25s
            except ImportError as exc:
                raise UsageError(
                    "tool_selection ranks tools with BM25 from the bm25s package: "
                    "pip install 'toolbind[select]' (or pass a ToolSelector of your own)"
                ) from exc
            retriever: Any = bm25s.BM25()
            # an empty document (a tool with no text at all) would leave bm25s' vocabulary empty
            retriever.index([tokens(tool_text(t)) or ["_"] for t in tools], show_progress=False)
            if len(self._indexes) >= 8:
                self._indexes.clear()
            found = (tools, retriever)  # the tools kept alive: their ids stay theirs
            self._indexes[key] = found
        return found[1]

    def rank(self, query: str, tools: Sequence[ToolBinding]) -> list[tuple[ToolBinding, float]]:
        """Every tool with its BM25 score for ``query``, best first (ties in the tools' order)."""
        if not tools:
            return []
        words = tokens(query)
        retriever = self._index(tools)
        if not words:
            return [(t, 0.0) for t in tools]
        scores: Any = retriever.get_scores(words)
        order = sorted(range(len(tools)), key=lambda i: (-float(scores[i]), i))
        return [(tools[i], float(scores[i])) for i in order]

    def select(self, query: str, tools: Sequence[ToolBinding]) -> list[ToolBinding]:
        """The ``k`` best tools for ``query``, best first (all of them when there are ``k`` or
        fewer)."""
        if len(tools) <= self.k:
            return list(tools)
        return [t for t, _ in self.rank(query, tools)[: self.k]]


def as_selector(value: int | ToolSelector | None) -> ToolSelector | None:
    """``Agent(tool_selection=...)``: None (every tool), an int k (``BM25Selector(k)``), or a
    ``ToolSelector``."""
    if value is None:
        return None
    given: Any = value
    if isinstance(given, bool) or not isinstance(given, int | ToolSelector):
        raise UsageError(
            f"Agent(tool_selection={value!r}): expected a number of tools (BM25), an object with "
            "select(query, tools), or None"
        )
    if isinstance(value, int):
        return BM25Selector(value)
    return value


# -- per request --------------------------------------------------------------------------------


def selection_query(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text tools are selected for: the latest user message (its text parts)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [
                str(cast("Mapping[str, Any]", p).get("text", ""))
                for p in cast("list[Any]", content)
                if isinstance(p, Mapping)
            ]
            return " ".join(p for p in parts if p)
    return ""


async def offered_tools(
    tools: Sequence[ToolBinding],
    messages: Sequence[Mapping[str, Any]],
    *,
    subset: Iterable[str | ToolBinding] | None = None,
    selector: ToolSelector | None = None,
    tool_choice: str = "auto",
) -> list[ToolBinding]:
    """The tools one request offers: ``subset`` (names or bindings) of ``tools`` when given,
    narrowed by ``selector`` for the latest user message; a tool ``tool_choice`` names is
    always among them."""
    pool = list(tools) if subset is None else _subset(tools, subset)
    if selector is None:
        return pool
    picked: Any = selector.select(selection_query(messages), pool)
    if inspect.isawaitable(picked):
        picked = await cast("Awaitable[Sequence[ToolBinding]]", picked)
    chosen = list(cast("Sequence[ToolBinding]", picked))
    known = {id(t) for t in pool}
    strays = [t.name for t in chosen if id(t) not in known]
    if strays:
        raise UsageError(
            f"the tool selector returned tools it was not given: {', '.join(strays[:5])}"
        )
    named = tool_choice not in TOOL_CHOICES
    forced = [t for t in pool if named and names_tool(t, tool_choice) and t not in chosen]
    return [*chosen, *forced]
