"""Runtime layer: large toolsets — which tools a request offers. Imports ``_compose``, ``errors``;
``bm25s`` and ``Stemmer`` (PyStemmer; the ``select`` extra) when a ``BM25Selector`` first ranks.

A 174-operation spec composes to a 130 KB function: more than a small model's context, and more
than any model reads well. Three ways to offer fewer tools, composable:

* ``toolset(tools, tags=..., names=..., exclude=..., prefix=...)`` — a filtered view of a package
  or registry: by tag (a tool's ``toolsets``: OpenAPI tags, BFCL records), by name pattern
  (``fnmatch`` globs on the tool's or the spec's name), and prefixing (the model reads
  ``prefix + name``; calls, Activities and results keep the tool's own name);
* a per-run subset: ``Agent.request/run(..., tools=[names or bindings])``;
* ``ToolSelection(k or a ToolSelector)`` (an Agent capability): per request, the ``k`` most relevant tools for the
  latest user message. ``BM25Selector`` (the default for an ``int``) ranks with BM25 (``bm25s``)
  per field over each tool's name (split at ``_ . -`` and camelCase), tags, description,
  parameters and output fields, the question and the tools normalised alike (Snowball stems, a
  thesaurus of API verbs and nouns; see "BM25" below); any object with ``select(query, tools)`` (sync or async) plugs in instead — embeddings, or an LLM
  router that asks a model to pick.

A tool the model names that was not offered in a step is not in that step's Response model: the
answer is invalid and goes back to the model with the tools it may call (never a crash).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from toolbind._compose import TOOL_CHOICES, names_tool, spec_name

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
#
# How a user asks and how an API names things differ ("edit the message" is chat.update, "add Bob
# to #design" is conversations.invite). Both sides go through the same normaliser: identifiers
# split, Snowball stems (PyStemmer), irregular past forms to their verb, and a small thesaurus of
# API vocabulary — verb classes (CRUD and a few more: edit/change/modify/update/set are one
# ``~update``) and general nouns (user/member/people, image/photo/avatar, link/url/permalink, ...)
# — that adds a class term beside the word. A generic verb (get, add, edit, ...) says nothing its
# class does not, so only its class is kept; a specific one (invite, kick, revoke) keeps its word
# too; a past form ("the message I sent") keeps only its word: it describes, it does not ask.
# Values in a question (quoted text, #channel, @user, e-mails, URLs, ids with digits) are what a
# call carries, not what picks the tool: they are left out. A word of the question the tools
# never use matches the tools' words it begins or ends ("link" finds "permalink").
#
# Each tool is scored per field (BM25 per field, weighted: the name most, then the description,
# tags, parameter names and enum values, parameter descriptions, output field names), plus a share
# of the best score for its group (its first tag, else its name's first word) when the question
# matches that group's text as a whole: "the #design channel" points at the conversations_* group
# before "add" picks invite in it.
#
# Measured with bench/selection.py on two sets of 50 questions each (Slack's 174 operations, and
# Netlify's 174 as a held-out set written before this selector ran on it); every part is kept
# because it helps, or is neutral, on both.

_WORD = re.compile(r"[A-Za-z]+|[0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_STOP_WORDS = (
    "a an and are as at be been by can do does for from had has have how i in into is it its me my "
    "of on or our please so that the this to us we when where will with you your "
    "should would could any was were"
)
_STOP = frozenset(_STOP_WORDS.split())
# a question's word for reading: "what were the last messages" reads, "who is in #ops" too
_ASKS = ("what", "which", "who", "whose")
_IRREGULAR: dict[str, str] = {
    past: verb
    for verb, pasts in (
        ("send", "sent"),
        ("make", "made"),
        ("write", "wrote written"),
        ("take", "took taken"),
        ("give", "gave given"),
        ("get", "got gotten"),
        ("show", "shown"),
        ("find", "found"),
        ("leave", "left"),
        ("build", "built"),
        ("begin", "began begun"),
        ("run", "ran"),
        ("tell", "told"),
        ("choose", "chose chosen"),
        ("draw", "drew drawn"),
        ("freeze", "froze frozen"),
        ("hide", "hid hidden"),
        ("keep", "kept"),
        ("lose", "lost"),
        ("pay", "paid"),
        ("say", "said"),
        ("see", "saw seen"),
        ("stand", "stood"),
        ("throw", "threw thrown"),
        ("go", "went gone"),
        ("win", "won"),
    )
    for past in pasts.split()
}
# verb classes of API operations; the first words of each line are generic (only the class is
# kept), the rest specific (the word is kept beside its class)
_VERBS: dict[str, tuple[str, str]] = {
    "update": (
        "edit change modify update set alter adjust",
        "rename patch replace configure correct fix amend tweak",
    ),
    "create": (
        "add create new make insert generate build",
        "invite register provision setup open start spin",
    ),
    "delete": (
        "remove delete drop erase destroy clear",
        "kick revoke purge unset discard eject ban",
    ),
    "read": (
        "what which who whose get show fetch read view retrieve find look see check "
        "display tell info information detail details describe",
        "lookup inspect",
    ),
    "list": ("list all every many", "enumerate browse index"),
    "search": ("find", "search query lookup filter match"),
    "send": ("send post write say", "notify publish share broadcast reply announce"),
    "enable": ("enable activate turn", "resume unpause restart reenable"),
    "disable": ("disable deactivate off", "pause suspend offline"),
    "stop": ("stop end cancel close finish", "abort halt terminate"),
    "approve": ("approve accept allow", "grant authorize confirm permit"),
    "deny": ("deny reject", "decline refuse block"),
    "restore": ("", "restore undo revert rollback recover unarchive undelete back"),
    "move": ("move", "transfer migrate relocate"),
    "upload": ("upload", "attach import"),
    "download": ("download", "export"),
    "join": ("join", "enter subscribe follow"),
    "leave": ("leave", "exit quit unsubscribe unfollow"),
}
# general nouns of APIs: the word is kept beside its class
_NOUNS = {
    "user": "user member person people someone account profile",
    "team": "team workspace organization org company group",
    "image": "image picture photo avatar icon logo",
    "link": "link url permalink uri href address",
    "backup": "backup snapshot copy",
    "secret": "token key credential secret password",
    "log": "log audit event history activity",
    "notice": "notification alert hook webhook notify",
    "setting": "setting settings config configuration preference option",
    "file": "file document attachment upload",
    "addon": "addon plugin extension integration service app",
}
# quoted text (not an apostrophe: "don't", "Bob's"), #names, @names, e-mails, URLs, ids with digits
_VALUE = re.compile(
    r"(?<!\w)'[^']*'(?!\w)|\"[^\"]*\"|[#@][\w.-]+|\S+@\S+|https?://\S+|\b(?=\w*\d)\w+\b"
)
# field weights (see above), and the group's share of the best score
_NAME, _TAGS, _DESCRIPTION, _PARAMETERS, _PARAMETER_TEXT, _OUTPUT = 2.0, 0.5, 1.0, 0.6, 0.5, 0.3
_GROUP = 0.3


@cache
def _stemmer() -> Any:
    try:
        stemmer: Any = importlib.import_module("Stemmer")
    except ImportError as exc:
        raise UsageError(
            "tool_selection stems words with PyStemmer: pip install 'toolbind[select]' "
            "(or pass a ToolSelector of your own)"
        ) from exc
    return stemmer.Stemmer("english")


def _words(text: str) -> list[tuple[str, bool]]:
    """Lower-case words of ``text``, identifiers split at ``_ . -`` and camelCase, irregular
    past forms to their verb, stop words left out (a question's what/which/who kept); each
    with whether it was a past form ("the message I sent", "messages posted in #ops": a past
    form describes a thing, it does not ask for the action, so it gets no class terms)."""
    out: list[tuple[str, bool]] = []
    for found in _WORD.finditer(_CAMEL.sub(" ", text)):
        lower = found.group().lower()
        word = _IRREGULAR.get(lower, lower)
        if word in _ASKS or (len(word) > 1 and word not in _STOP):
            out.append((word, lower in _IRREGULAR or (len(lower) > 4 and lower.endswith("ed"))))
    return out


def _stems(text: str) -> list[tuple[str, bool]]:
    """The Snowball stems of ``text``'s words, each with whether it was a past form."""
    stemmer = _stemmer()
    return [(w if w in _ASKS else str(stemmer.stemWord(w)), past) for w, past in _words(text)]


def tokens(text: str) -> list[str]:
    """The Snowball stems of ``text``'s words: identifiers split at ``_ . -`` and camelCase,
    stop words left out."""
    return [stem for stem, _ in _stems(text)]


@cache
def _thesaurus() -> tuple[Mapping[str, tuple[str, ...]], frozenset[str]]:
    """Each stem's class terms (``~update``, ``~user``), and the generic verbs' stems."""
    classes: dict[str, set[str]] = {}
    generic: set[str] = set()
    for name, (common, specific) in _VERBS.items():
        for i, words in enumerate((common, specific)):
            for stem in tokens(words):
                classes.setdefault(stem, set()).add("~" + name)
                if i == 0:
                    generic.add(stem)
    for name, words in _NOUNS.items():
        for stem in tokens(words):
            classes.setdefault(stem, set()).add("~" + name)
    return {s: tuple(sorted(c)) for s, c in classes.items()}, frozenset(generic)


def terms(stems: Iterable[tuple[str, bool]]) -> list[str]:
    """What is indexed and searched for ``stems`` (``_stems``): each with its class terms, a
    generic verb by its class alone, a past form by its stem alone."""
    classes, generic = _thesaurus()
    out: list[str] = []
    for stem, past in stems:
        if past:
            out.append(stem)
            continue
        if stem not in generic:
            out.append(stem)
        out.extend(classes.get(stem, ()))
    return out


def _fields(tool: ToolBinding) -> tuple[str, ...]:
    """A tool's text per field: name (the spec's and the offered one), tags, description,
    parameter names and enum values, parameter descriptions, output field names."""
    props: Any = tool.parameters.get("properties")
    params: Mapping[str, Any] = (
        cast("Mapping[str, Any]", props) if isinstance(props, Mapping) else {}
    )
    described: list[str] = []
    values: list[str] = []
    for schema in params.values():
        if isinstance(schema, Mapping):
            field = cast("Mapping[str, Any]", schema)
            described.append(str(field.get("description") or ""))
            enum: Any = field.get("enum")
            if isinstance(enum, list):
                values.extend(str(v) for v in cast("list[Any]", enum))
    out: Any = (tool.output_schema or {}).get("properties")
    answers = list(cast("Mapping[str, Any]", out)) if isinstance(out, Mapping) else []
    name = f"{spec_name(tool)} {tool.name}" if spec_name(tool) != tool.name else tool.name
    return (
        name,
        " ".join(tool.toolsets),
        tool.description or "",
        " ".join([*params, *values]),
        " ".join(described),
        " ".join(answers),
    )


def _group(tool: ToolBinding) -> str:
    """The group a tool is scored with: its first tag, else its name's first word."""
    if tool.toolsets:
        return tool.toolsets[0]
    first = _words(spec_name(tool))
    return first[0][0] if first else tool.name


@dataclass(frozen=True)
class _Index:
    tools: Sequence[ToolBinding]  # kept alive: their ids stay theirs
    fields: tuple[tuple[float, Any], ...]  # (weight, bm25s.BM25 over that field)
    groups: Any  # bm25s.BM25 over each group's whole text
    member: Any  # numpy array: each tool's group
    vocabulary: frozenset[str]  # every stem the tools use


class BM25Selector:
    """The ``k`` tools that best match the query: BM25 (``bm25s``) per field over names,
    descriptions, tags, parameters and outputs, both sides normalised (Snowball stems, API verb
    and noun classes; install ``toolbind[select]``). Indexes are kept per tool list (a few)."""

    def __init__(self, k: int = 10) -> None:
        if k < 1:
            raise UsageError(f"BM25Selector(k={k!r}) must be >= 1")
        self.k = k
        self._indexes: dict[tuple[int, ...], _Index] = {}

    def _index(self, tools: Sequence[ToolBinding]) -> _Index:
        key = tuple(id(t) for t in tools)
        found = self._indexes.get(key)
        if found is None:
            try:
                import bm25s
                import numpy as np
            except ImportError as exc:
                raise UsageError(
                    "tool_selection ranks tools with BM25 from the bm25s package: "
                    "pip install 'toolbind[select]' (or pass a ToolSelector of your own)"
                ) from exc

            def bm25(texts: Iterable[str]) -> Any:
                retriever: Any = bm25s.BM25()
                # an empty document would leave bm25s' vocabulary empty: "_" stands in
                retriever.index([terms(_stems(t)) or ["_"] for t in texts], show_progress=False)
                return retriever

            texts = [_fields(t) for t in tools]
            weights = (_NAME, _TAGS, _DESCRIPTION, _PARAMETERS, _PARAMETER_TEXT, _OUTPUT)
            fields = tuple((w, bm25(f[i] for f in texts)) for i, w in enumerate(weights))
            names = sorted({_group(t) for t in tools})
            number = {g: i for i, g in enumerate(names)}
            grouped = [
                [" ".join(f) for t, f in zip(tools, texts, strict=True) if _group(t) == g]
                for g in names
            ]
            vocabulary = frozenset(s for f in texts for s in tokens(" ".join(f)))
            found = _Index(
                tools,
                fields,
                bm25(" ".join(g) for g in grouped),
                np.array([number[_group(t)] for t in tools]),
                vocabulary,
            )
            if len(self._indexes) >= 8:
                self._indexes.clear()
            self._indexes[key] = found
        return found

    def query_terms(self, query: str, tools: Sequence[ToolBinding]) -> list[str]:
        """What ``query`` is searched as among ``tools``: its values left out, its stems with
        their class terms, and a stem the tools never use joined by those it begins or ends."""
        vocabulary = self._index(tools).vocabulary
        stems: list[tuple[str, bool]] = []
        for stem, past in _stems(_VALUE.sub(" ", query)):
            stems.append((stem, past))
            if stem not in vocabulary and len(stem) >= 4:
                stems.extend(
                    (v, past)
                    for v in sorted(vocabulary)
                    if len(v) > len(stem) and (v.startswith(stem) or v.endswith(stem))
                )
        return terms(stems)

    def rank(self, query: str, tools: Sequence[ToolBinding]) -> list[tuple[ToolBinding, float]]:
        """Every tool with its score for ``query``, best first (ties in the tools' order)."""
        if not tools:
            return []
        index = self._index(tools)
        words = self.query_terms(query, tools)
        if not words:
            return [(t, 0.0) for t in tools]
        scores: Any = sum(w * retriever.get_scores(words) for w, retriever in index.fields)
        groups: Any = index.groups.get_scores(words)
        best = float(scores.max())
        if float(groups.max()) > 0:
            scores = scores + _GROUP * (groups / groups.max())[index.member] * (best or 1.0)
        order = sorted(range(len(tools)), key=lambda i: (-float(scores[i]), i))
        return [(tools[i], float(scores[i])) for i in order]

    def select(self, query: str, tools: Sequence[ToolBinding]) -> list[ToolBinding]:
        """The ``k`` best tools for ``query``, best first (all of them when there are ``k`` or
        fewer)."""
        if len(tools) <= self.k:
            return list(tools)
        return [t for t, _ in self.rank(query, tools)[: self.k]]


def as_selector(value: int | ToolSelector | None) -> ToolSelector | None:
    """``ToolSelection(selector)``: None (every tool), an int k (``BM25Selector(k)``), or a
    ``ToolSelector``."""
    if value is None:
        return None
    given: Any = value
    if isinstance(given, bool) or not isinstance(given, int | ToolSelector):
        raise UsageError(
            f"ToolSelection(selector={value!r}): expected a number of tools (BM25) or an object "
            "with select(query, tools)"
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
