"""Compiler layer (backends): what every writer of one package's render shares — its names
(``Namer``), the state of the render (``RenderState``: the package, the options, the steps)
and the keyed rendering of a file (``Writer``).

Imports ``ir``, ``naming``, ``diagnostics``, ``_steps``, ``passes.unions`` and the backends'
``_templates`` and ``_views``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from .._steps import Steps
from ..diagnostics import Diagnostics
from ..ir import Definition, SpecPackage, ToolSpec
from ..passes.unions import is_class_node
from ._templates import ENV, TEMPLATE_INPUTS, TEMPLATES_DIGEST, TOOL_FIELDS
from ._views import ToolView


class Namer:
    """Allocates every name one package needs, through ``naming`` only."""

    def __init__(self, pkg: SpecPackage, diags: Diagnostics) -> None:
        self.pkg = pkg
        self.diags = diags
        self.classes = naming.Scope(taken=set(naming.RESERVED_CLASS_NAMES))
        self.functions = naming.Scope(taken=set(naming.RESERVED_IDENTIFIERS))
        self.def_names: dict[str, str] = {}
        self.tool_names: dict[str, tuple[str, str, str, str]] = {}
        # each tool's Protocol of an Activity that takes the ActivityContext too (``fn(call, ctx)``)
        self.context_activity_names: dict[str, str] = {}
        self.provider_names: dict[str, str] = {}
        for d in pkg.definitions:
            self.def_names[d.key] = self.classes.claim(
                naming.class_name(d.name_hint), original=d.name_hint
            )
        # Two tools whose names meet after sanitising are an error when an LLM could be offered
        # both (same toolset, or no toolsets at all); otherwise (e.g. different BFCL records) the
        # later one gets a suffixed name and a note.
        by_base: dict[str, ToolSpec] = {}
        by_provider: dict[str, ToolSpec] = {}
        for tool in pkg.tools:
            base = naming.class_name(tool.name)
            provider = naming.provider_tool_name(tool.name)
            clash = by_base.get(base) or by_provider.get(provider)
            if clash is not None and _offered_together(clash, tool):
                diags.error(
                    tool.loc,
                    f"tool name {tool.name!r} collides with {clash.name!r} ({clash.loc}) once "
                    f"made safe for Python and providers ({base!r}, {provider!r})",
                    "tool names that stay distinct after sanitising",
                    hint="rename one of the tools",
                )
            by_base.setdefault(base, tool)
            provider_unique = provider
            n = 2
            while provider_unique in self.provider_names.values():
                suffix = f"_{n}"
                provider_unique = provider[: 64 - len(suffix)] + suffix
                n += 1
            by_provider.setdefault(provider, tool)
            if provider_unique != tool.name:
                diags.note(
                    tool.loc, f"tool {tool.name!r} is offered to providers as {provider_unique!r}"
                )
            self.provider_names[tool.name] = provider_unique
            self.tool_names[tool.name] = (
                self.classes.claim(base + "Call", original=tool.name),
                self.classes.claim(base + "Output", original=tool.name),
                self.classes.claim(base + "Activity", original=tool.name),
                self.functions.claim(naming.function_name(tool.name), original=tool.name),
            )
            self.context_activity_names[tool.name] = self.classes.claim(
                base + "ActivityWithContext", original=tool.name
            )
        # OpenAPI tags: one Call union per tag besides the whole (BFCL records, which can number
        # thousands of one-tool sets, keep only their TOOLSETS entry).
        self.toolset_unions: dict[str, str] = {}
        if pkg.http is not None:
            for s in sorted({s for tool in pkg.tools for s in tool.toolsets}):
                self.toolset_unions[s] = self.classes.claim(
                    naming.toolset_union_name(s), original=s
                )

    def inline_class(self, hint: str) -> str:
        """A class name made from ``hint`` (suffixed when taken)."""
        return self.classes.claim(hint)


def _offered_together(a: ToolSpec, b: ToolSpec) -> bool:
    return not a.toolsets or not b.toolsets or bool(set(a.toolsets) & set(b.toolsets))


@dataclass(eq=False, kw_only=True)
class RenderState:
    """One package's render, as every writer of it sees it: the package, its names, the
    options and the steps its costly parts are run through (``PythonBackend``'s ``steps``)."""

    pkg: SpecPackage
    package: str
    diags: Diagnostics
    version: str
    format_assertion: bool
    format_checks: bool
    """Whether an OpenAPI operation's Call checks the formats its API validates (``_types``)."""
    steps: Steps
    named_steps: bool
    """Whether the whole-package passes are named steps (``Steps.run``: a large package)."""
    names: Namer
    defs: dict[str, Definition] = field(init=False)
    class_defs: set[str] = field(init=False)
    """Definition keys rendered as classes (the rest are aliases)."""
    definitions_key: str | None = None
    """A digest of what the definitions' views and schemas are made from (``_definitions``)."""

    def __post_init__(self) -> None:
        self.defs = {d.key: d for d in self.pkg.definitions}
        self.class_defs = {d.key for d in self.pkg.definitions if is_class_node(d.node, self.defs)}


class Writer:
    """A part of one package's render: the files it writes are keyed in ``state``."""

    def __init__(self, state: RenderState) -> None:
        self.state = state

    def _key(self, *parts: object) -> str:
        """A digest of ``parts`` and of what every file depends on (toolbind's version, the
        templates' text and the backend's options)."""
        text = repr(
            (
                self.state.version,
                TEMPLATES_DIGEST,
                self.state.format_assertion,
                self.state.package,
                parts,
                # (named when off only: a default render's keys stay what they were)
                *(() if self.state.format_checks else ("no-format-checks",)),
            )
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _keyed(self, rel: str, *parts: object) -> bool:
        """Whether ``rel``, keyed on ``parts`` (everything its text is made from), is to be
        made (``Steps.file``; False: it is not made, and not in the files)."""
        return self.state.steps.file(rel, self._key(rel, parts))

    def _render_file(
        self, files: dict[str, str], rel: str, template: str, context: Mapping[str, Any]
    ) -> str | None:
        """``files[rel]``: ``template`` rendered with ``context``, keyed on the values of the
        context variables it reads (``TEMPLATE_INPUTS``); None (and not in ``files``) when
        skipped."""
        fields = TOOL_FIELDS.get(template)
        if fields is not None:
            tools: list[ToolView] = context["tools"]
            views = [{f: getattr(t, f) for f in fields} for t in tools]
            context = {**context, "tools": views}
        inputs = [(n, context[n]) for n in TEMPLATE_INPUTS[template]]
        if not self._keyed(rel, template, inputs):
            return None
        text = files[rel] = ENV.get_template(template).render(context)
        return text


def digest(text: str) -> str:
    """A digest of a large text, for a key (``repr`` of the text itself would copy it)."""
    return hashlib.sha256(text.encode()).hexdigest()


def as_text(value: object) -> str:
    """``value``, a string read back from JSON (else ``TypeError``)."""
    if type(value) is not str:
        raise TypeError(value)
    return value
