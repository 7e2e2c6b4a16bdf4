"""Compiler layer (backends): the models a package's tools use — ``models.py`` (one module, or
a large package's ``_models/`` modules loaded lazily through it).

Imports ``naming``, ``passes.graph`` and the backends' ``_context``, ``_source``, ``_templates``
and ``_views``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import naming
from ..passes.graph import strongly_connected
from ._context import RenderState, Writer, as_text, digest
from ._source import IMPORT_SOURCES, IMPORTS_MARK, imports_for, names_in, py_str, with_imports
from ._templates import ENV
from ._views import AliasView, ClassView, ToolView, class_key


def models_module(context: Mapping[str, Any]) -> str:
    """``models.py`` holding every class and alias of ``context`` (``models.py.jinja``)."""
    aliases: list[AliasView] = context["aliases"]
    body = ENV.get_template("models.py.jinja").render({**context, "imports": IMPORTS_MARK})
    return with_imports(body, "\n".join(a.expr for a in aliases))


_Split = tuple[dict[str, list[str]], dict[str, str], list[list[str]], list[str]]
"""``LazyModels._split_modules``: what each unit uses, the text each class inherits, the
units of each module and its name."""


class LazyModels(Writer):
    """A large package's models, split so that a tool loads only the models it reaches.

    Every class and alias is a node of the graph of the names it uses; each strongly
    connected component becomes one module under ``_models/`` that imports the components it
    depends on (so the modules import each other without cycles), and ``models.py`` loads
    them on first access through a module ``__getattr__``.
    """

    def __init__(
        self, state: RenderState, classes: list[ClassView], aliases: list[AliasView]
    ) -> None:
        super().__init__(state)
        self.classes = classes
        self.aliases = aliases
        self.model_modules: dict[str, str] = {}
        """Each model → its module under ``_models/`` (set by ``write``)."""

    def write(self, ctx: dict[str, Any]) -> dict[str, str]:
        """The files of ``_models/`` and ``models.py`` (those not skipped by key)."""
        units: dict[str, ClassView | AliasView] = {}
        for unit in [*self.aliases, *self.classes]:
            units[unit.name] = unit
        texts: dict[str, str] = {}
        for name, unit in units.items():
            texts[name] = (
                unit.expr
                if isinstance(unit, AliasView)
                else " ".join(
                    [unit.bases, unit.extra_type or "", unit.root or ""]
                    + [f"{f.annotation} {f.default or ''}" for f in unit.fields]
                )
            )
        uses, inherited, components, chunk_names = self._split(units, texts, ctx["tools"])
        module_of = {
            m: module
            for members, module in zip(components, chunk_names, strict=True)
            for m in members
        }
        files: dict[str, str] = {}
        header = ctx["header"]
        classes_in: dict[str, list[ClassView]] = {}
        for c in self.classes:
            classes_in.setdefault(module_of[c.name], []).append(c)
        aliases_in: dict[str, list[AliasView]] = {}
        for a in self.aliases:
            aliases_in.setdefault(module_of[a.name], []).append(a)
        for members, module in zip(components, chunk_names, strict=True):
            member_set = set(members)
            imports: dict[str, list[str]] = {}
            for m in members:
                for used in uses[m]:
                    if used not in member_set:
                        imports.setdefault(module_of[used], []).append(used)
            cross = "\n".join(
                f"from .{mod} import {', '.join(f'{n} as {n}' for n in sorted(set(names)))}"
                for mod, names in sorted(imports.items())
            )
            classes, aliases = classes_in.get(module, []), aliases_in.get(module, [])
            own = (classes, aliases, [inherited.get(m, "") for m in members])
            self._module(files, ctx, f"_models/{module}.py", sorted(member_set), own, cross)
        files["_models/__init__.py"] = (
            f'{header}\n"""The model modules of {self.state.package}; import them through ``models``."""\n'
        )
        self.model_modules = module_of
        where = sorted(module_of.items())
        self._render_file(
            files,
            "models.py",
            "lazy_models.py.jinja",
            {**ctx, "where": [(py_str(n), py_str(m)) for n, m in where], "where_names": where},
        )
        return files

    def _module(
        self,
        files: dict[str, str],
        ctx: dict[str, Any],
        rel: str,
        exported: list[str],
        own: tuple[list[ClassView], list[AliasView], list[str]],
        cross: str,
    ) -> None:
        """``files[rel]``: one module of ``_models/`` holding ``own`` (its classes, aliases and
        the text each member inherits), its lines importing other modules ``cross``."""
        classes, aliases, inherits = own
        # the module's text is a function of exactly these (the template's inputs, and
        # what its import lines are computed from); a large spec has hundreds of modules,
        # and an edit changes a few
        key = self._key(
            "models.py.jinja",
            ctx["header"],
            ctx["source_literal"],
            [(a.name, a.value, a.expr) for a in aliases],
            [class_key(c) for c in classes],
            exported,
            inherits,
            cross,
        )
        if not self.state.steps.file(rel, key):
            return
        body = ENV.get_template("models.py.jinja").render(
            {
                **ctx,
                "classes": classes,
                "aliases": aliases,
                "exported": exported,
                "imports": IMPORTS_MARK,
            }
        )
        alias_code = "\n".join(a.expr for a in aliases)
        direct = names_in(body) | names_in(alias_code)
        block = imports_for(direct)
        # names only inherited annotations use (re-exported form: pyright sees them used)
        only_inherited = sorted((names_in(" ".join(inherits)) - direct) & IMPORT_SOURCES.keys())
        if only_inherited:
            block += "\n" + "\n".join(
                f"from {IMPORT_SOURCES[n]} import {n} as {n}" for n in only_inherited
            )
        files[rel] = body.replace(IMPORTS_MARK, f"{block}\n\n{cross}" if cross else block)

    def _split(
        self,
        units: dict[str, ClassView | AliasView],
        texts: dict[str, str],
        tool_views: list[ToolView],
    ) -> _Split:
        """``_split_modules``'s result; a large package's a named step (``modules``)."""
        if not self.state.named_steps:
            return self._split_modules(units, texts, tool_views)
        # the split is a function of exactly these: each unit's name, text and bases (in
        # order) and the models each tool starts from
        key = self._key(
            "modules",
            digest(
                repr(
                    (
                        [
                            (n, texts[n], u.bases if isinstance(u, ClassView) else None)
                            for n, u in units.items()
                        ],
                        [(t.call_class, t.output_class) for t in tool_views],
                    )
                )
            ),
        )
        return self.state.steps.run(
            "modules",
            key,
            lambda: self._split_modules(units, texts, tool_views),
            _split_to_json,
            lambda kept: _split_from_json(kept, units),
        )

    def _split_modules(
        self,
        units: dict[str, ClassView | AliasView],
        texts: dict[str, str],
        tool_views: list[ToolView],
    ) -> _Split:
        """What each unit uses, the text it inherits, the units of each module and the
        modules' names (``write``)."""
        uses: dict[str, list[str]] = {}
        for name, text in texts.items():
            found = names_in(text)
            uses[name] = sorted(n for n in found if n in units and n != name)
        # pydantic evaluates inherited annotations in the subclass's module: a class also uses
        # what its base classes use.
        inherited: dict[str, str] = {}
        for c in self.classes:
            extra: set[str] = set()
            stack = [b for b in c.bases.split(", ") if b in units]
            seen_bases: set[str] = set()
            while stack:
                base = stack.pop()
                if base in seen_bases:
                    continue
                seen_bases.add(base)
                extra.update(uses[base])
                unit = units[base]
                if isinstance(unit, ClassView):
                    stack.extend(b for b in unit.bases.split(", ") if b in units)
            inherited[c.name] = " ".join(texts[b] for b in sorted(seen_bases))
            if extra:
                uses[c.name] = sorted((set(uses[c.name]) | extra) - {c.name})
        # Units reached by the same set of tools share a module: a tool then loads exactly the
        # models it reaches, and modules import each other without cycles (a unit's
        # dependencies are reached by at least the tools that reach it).
        order = [m for c in strongly_connected(list(units), uses) for m in c]
        reach: dict[str, list[int]] = {n: [] for n in units}
        for i, t in enumerate(tool_views):
            seen: set[str] = set()
            stack = [n for n in (t.call_class, t.output_class) if n in units]
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                reach[n].append(i)
                stack.extend(uses[n])
        groups: dict[tuple[int, ...], list[str]] = {}
        for n in order:
            groups.setdefault(tuple(reach[n]), []).append(n)
        first = {n: i for i, n in enumerate(units)}
        components = sorted(groups.values(), key=lambda members: min(first[m] for m in members))
        modules = naming.Scope(taken={"__init__"})
        chunk_names = [
            modules.claim("m_" + naming.snake_case(members[0])[:40]) for members in components
        ]
        return uses, inherited, components, chunk_names


def _split_to_json(split: _Split) -> dict[str, Any]:
    uses, inherited, components, chunk_names = split
    return {
        "uses": uses,
        "inherited": inherited,
        "components": components,
        "modules": chunk_names,
    }


def _split_from_json(
    kept: dict[str, Any], units: Mapping[str, ClassView | AliasView]
) -> _Split | None:
    """The split ``_split_to_json`` wrote, if whole (None: not as written)."""
    try:
        uses = {as_text(n): [as_text(u) for u in used] for n, used in kept["uses"].items()}
        inherited = {as_text(n): as_text(t) for n, t in kept["inherited"].items()}
        components = [[as_text(m) for m in members] for members in kept["components"]]
        names = [as_text(m) for m in kept["modules"]]
    except (AttributeError, KeyError, TypeError):
        return None
    members = [m for ms in components for m in ms]
    if (
        len(names) != len(components)
        or sorted(members) != sorted(units)
        or set(uses) != set(units)
        or not all(u in units for used in uses.values() for u in used)
        or not all(isinstance(u, ClassView) for u in (units.get(n) for n in inherited))
    ):
        return None
    return uses, inherited, components, names
