"""Compiler layer (backends): the model classes of one package as views (``ModelViews``) — the
definitions', and each tool's Call, Output and error models — ready for the models writer.

Imports ``ir``, ``naming``, ``diagnostics``, ``passes.unions``, ``toolbind.runtime.contract``
(the meta fields' names) and the backends' ``_context``, ``_source``, ``_types`` and ``_views``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast, get_args

from toolbind.contract import META_FIELD_NAMES

from .. import naming
from ..diagnostics import Diagnostic, Severity
from ..ir import (
    AllOfNode,
    AnyNode,
    Definition,
    NeverNode,
    ObjectNode,
    Property,
    RefNode,
    SchemaNode,
    SourceLocation,
    ToolSpec,
)
from ..passes.unions import admits_null, is_class_node
from ._context import RenderState, Writer, as_text, digest
from ._source import docstring, py_str
from ._types import Annotations
from ._views import AliasView, ClassView, FieldView, ToolView


class ModelViews(Writer):
    """The views of every model class and alias of one package, in the order they are made
    (a class before the classes nested in it)."""

    def __init__(self, state: RenderState) -> None:
        super().__init__(state)
        self.classes: list[ClassView] = []
        self.aliases: list[AliasView] = []
        self.types = Annotations(state, self.aliases, self._model_class)

    def build(self) -> list[ToolView]:
        """Every definition's views, then each tool's (its Call, Output and error models)."""
        self._definitions()
        return [self._tool(tool, i) for i, tool in enumerate(self.state.pkg.tools)]

    def model(self, root: SchemaNode, name: str) -> str:
        """The views of one schema's model (and of every definition), and its class name:
        ``root``'s own class, the class of the definition it names, or a ``RootModel``."""
        for d in self.state.pkg.definitions:
            self._definition(d)
        if isinstance(root, RefNode) and root.target in self.state.class_defs:
            return self.state.names.def_names[root.target]
        cls = self.state.names.inline_class(naming.class_name(name))
        if is_class_node(root, self.state.defs):
            self._class(cls, root, base="ToolModel")
        else:
            self._root_model(cls, root, cls + "Value", config=None)
        return cls

    def _root_model(self, name: str, node: SchemaNode, hint: str, *, config: str | None) -> None:
        """A ``RootModel`` class ``name`` of a schema that is not an object."""
        expr, _ = self.types.annotation(node, hint)
        doc = node.meta.description
        self.classes.append(
            ClassView(
                name=name,
                bases=f"RootModel[{expr}]",
                root=expr,
                doc=docstring(doc) if doc and doc.strip() else None,
                config=config,
            )
        )

    def _model_class(self, name: str, node: SchemaNode) -> None:
        self._class(name, node, base="ToolModel")

    def _definitions(self) -> None:
        """The views of every definition, in order (classes, aliases, the class names they
        claim and what they report).

        A large package's (``STEPS_MIN``) are a named step (``definitions``) keyed on the
        definitions (their generated reprs name every field), their class names and the names
        taken before them — all that ``_definition`` reads (the views of a definition depend
        on the definitions it references). Views read back are added, their names claimed and
        their diagnostics reported, as making them would."""
        if not self.state.named_steps:
            for d in self.state.pkg.definitions:
                self._definition(d)
            return
        key = self.state.definitions_key = self._key(
            "definitions",
            digest(repr(self.state.pkg.definitions)),
            sorted(self.state.names.def_names.items()),
            sorted(self.state.names.classes.taken),
        )
        self.state.steps.run(
            "definitions", key, self._made_definitions, _views_to_json, self._read_views
        )

    def _made_definitions(self) -> _Views:
        scope = self.state.names.classes
        before = set(scope.taken)
        n_renames, n_diags = len(scope.renames), len(self.state.diags.items)
        for d in self.state.pkg.definitions:
            self._definition(d)
        return (
            list(self.classes),
            list(self.aliases),
            sorted(scope.taken - before),
            scope.renames[n_renames:],
            self.state.diags.items[n_diags:],
        )

    def _read_views(self, kept: dict[str, Any]) -> _Views | None:
        """The views ``_views_to_json`` wrote, added as making them would (None: not whole)."""
        views = _views_from_json(kept)
        if views is None:
            return None
        classes, aliases, taken, renames, diagnostics = views
        scope = self.state.names.classes
        self.classes.extend(classes)
        self.aliases.extend(aliases)
        scope.taken.update(taken)
        scope.renames.extend(renames)
        self.state.diags.items.extend(diagnostics)
        return views

    def _definition(self, d: Definition) -> None:
        name = self.state.names.def_names[d.key]
        if d.key in self.state.class_defs:
            self._class(name, d.node, base="ToolModel")
            return
        expr, _ = self.types.annotation(d.node, name)
        self.aliases.append(AliasView(name=name, value=py_str(expr), expr=expr))

    def _tool(self, tool: ToolSpec, index: int) -> ToolView:
        call_cls, out_cls, act_cls, fn = self.state.names.tool_names[tool.name]
        self._output(out_cls, tool.output)
        meta_fields: list[FieldView] = [
            FieldView(
                "tool",
                f"Literal[{py_str(tool.name)}]",
                f"Field(default={py_str(tool.name)}, alias='_tool')",
            ),
            FieldView(
                "activity",
                "Annotated[JsonStr | None, NotNull]",
                "Field(default=None, alias='_activity')",
            ),
            *self._extension_fields(call_cls, tool),
            FieldView(
                "reasoning_for_call",
                "Annotated[JsonStr | None, NotNull]",
                "Field(default=None, alias='_reasoningForCall', description='Why the model made this call.')",
            ),
            FieldView(
                "output",
                # NotNull: None means absent, so dumps leave it out whatever `model_fields_set`
                # says (an extra key `output` beside open parameters marks it). An Output that
                # admits null (or any JSON: no schema) takes a given `_output: null` itself,
                # as `Output(None)`; any other Output refuses it.
                f"Annotated[{out_cls} | None, NotNull]",
                "Field(default=None, alias='_output')",
            ),
        ]
        doc = tool.description or tool.title
        # what a Call holds is sent to an API: it checks the formats the API validates
        self.types.sending = self.state.format_checks and self.state.pkg.http is not None
        try:
            self._class(call_cls, tool.params, base="ToolCall", meta_fields=meta_fields, doc=doc)
        finally:
            self.types.sending = False
        provider = self.state.names.provider_names[tool.name]
        return ToolView(
            name=tool.name,
            name_literal=py_str(tool.name),
            provider_name=provider,
            provider_literal=py_str(provider),
            call_class=call_cls,
            output_class=out_cls,
            activity_class=act_cls,
            function_name=fn,
            context_activity_class=self.state.names.context_activity_names[tool.name],
            doc=docstring(doc) if doc and doc.strip() else None,
            description_literal=py_str(doc or ""),
            index=index,
            errors=tuple(
                (py_str(status), self._error(call_cls, status, node))
                for status, node in tool.errors
            ),
        )

    def _extension_fields(self, call_cls: str, tool: ToolSpec) -> list[FieldView]:
        """The Call fields of the RFC's extensions the tool declares (``_outputPath`` → a field
        ``output_path`` typed by its schema); absent stays absent (None, left out of dumps)."""
        names = dict((wire, py) for py, wire in META_FIELD_NAMES)
        out: list[FieldView] = []
        for wire, node in tool.extensions:
            annotation, _ = self.types.annotation(
                node, call_cls + naming.class_name(wire.lstrip("_"))
            )
            out.append(
                FieldView(
                    names[wire],
                    f"Annotated[{annotation} | None, NotNull]",
                    f"Field(default=None, alias={py_str(wire)})",
                )
            )
        return out

    def _error(self, call_cls: str, status: str, node: SchemaNode) -> str:
        """The model a failed call's body is read into: the schema's own class when it names
        one (most specs share one ``Error``), else a new ``<Tool>Error<status>`` model."""
        if isinstance(node, RefNode) and node.target in self.state.class_defs:
            return self.state.names.def_names[node.target]
        suffix = "" if status == "default" else status.upper().replace("XX", "xx")
        name = self.state.names.inline_class(call_cls.removesuffix("Call") + "Error" + suffix)
        self._output(name, node)
        return name

    def _output(self, name: str, node: SchemaNode | None) -> None:
        if node is None:
            self.classes.append(
                ClassView(
                    name=name,
                    bases="RootModel[JsonValue]",
                    root="JsonValue",
                    doc=docstring("Any JSON value: the spec declares no output schema."),
                    config="defer_build=True",
                )
            )
            return
        if isinstance(node, ObjectNode):
            self._class(name, node, base="ToolModel")
            return
        if isinstance(node, RefNode) and node.target in self.state.class_defs:
            # A subclass, not an alias: the Output model is a class like every other tool's.
            target = self.state.names.def_names[node.target]
            self.classes.append(ClassView(name=name, bases=target))
            return
        self._root_model(name, node, name, config="defer_build=True")

    def _class(
        self,
        name: str,
        node: SchemaNode,
        *,
        base: str,
        meta_fields: list[FieldView] | None = None,
        doc: str | None = None,
    ) -> None:
        bases = [base]
        obj: ObjectNode
        if isinstance(node, AllOfNode):
            parents, inline = self._all_of_parts(node)
            bases = parents + ([] if parents and base == "ToolModel" else [base])
            obj = inline
        elif isinstance(node, ObjectNode):
            obj = node
        else:  # pragma: no cover - guarded by is_class_node
            raise AssertionError(node.kind)
        doc = doc or obj.meta.description or node.meta.description
        view = ClassView(
            name=name, bases=", ".join(bases), doc=docstring(doc) if doc and doc.strip() else None
        )
        self.classes.append(view)  # before fields: nested classes follow their parent
        # Meta fields first, with fixed names (the Call union discriminates on ``tool``); a
        # parameter that wants one of those names gets a suffix. Data is read by JSON name only
        # and Python construction by Python name only, so the two never mix fields up.
        scope = naming.Scope(taken=set())
        for f in meta_fields or []:
            scope.claim(f.name)
            view.fields.append(f)
        apart = False  # see KeepExtrasApart
        inherited = self._inherited(node) if isinstance(node, AllOfNode) else {}
        shared = self._shared_by_parents(node, obj) if isinstance(node, AllOfNode) else ()
        for prop in (*obj.properties, *shared):
            # allOf restates a parent's property: pydantic validates the subclass's field only,
            # so the parents' schemas of it are checked on the value too (allOf: all hold).
            parents = [
                s
                for s in inherited.get(prop.name, ())
                if s != prop.schema and not isinstance(s, AnyNode)
            ]
            f, renamed_optional = self._field(name, prop, scope, parents)
            if prop.name in inherited:
                # pyright reports the narrowed field as an incompatible override
                f.override = True
            view.fields.append(f)
            apart = apart or renamed_optional
        for r in scope.renames:
            self.state.diags.note(
                obj.meta.loc,
                f"property {r.original!r} of {name} is the Python field {r.chosen!r} ({r.reason})",
            )
        if isinstance(obj.additional, NeverNode):
            view.config = 'extra="forbid"'
        elif apart:
            view.bases += ", KeepExtrasApart"
        if obj.additional is not None and not isinstance(obj.additional, NeverNode):
            extra_type, _ = self.types.annotation(obj.additional, name + "Extra")
            view.extra_type = f"dict[str, {extra_type}]"

    def _inherited(self, node: AllOfNode) -> dict[str, list[SchemaNode]]:
        """JSON name → schemas, of the properties the parent classes of ``node`` declare
        (transitively, each parent's own schema of the property)."""
        schemas: dict[str, list[SchemaNode]] = {}
        stack = [p.target for p in node.parts if isinstance(p, RefNode)]
        seen: set[str] = set()
        while stack:
            key = stack.pop()
            if key in seen or key not in self.state.class_defs:
                continue
            seen.add(key)
            target = self.state.defs[key].node
            declared: list[Property] = []
            if isinstance(target, ObjectNode):
                declared.extend(target.properties)
            elif isinstance(target, AllOfNode):
                for part in target.parts:
                    if isinstance(part, RefNode):
                        stack.append(part.target)
                    elif isinstance(part, ObjectNode):
                        declared.extend(part.properties)
            for p in declared:
                found = schemas.setdefault(p.name, [])
                if p.schema not in found:
                    found.append(p.schema)
        return schemas

    def _shared_by_parents(self, node: AllOfNode, inline: ObjectNode) -> list[Property]:
        """Properties two parent classes declare differently (and ``node`` does not restate):
        restated here, required if any parent requires it, every parent's schema checked.
        Left to the bases, pydantic took the first parent's alone (a real email API's
        ``FullSegment``: ``name`` optional in one parent, required in the other, was optional)
        and pyright refused the class ("Base classes ... define variable in incompatible way")."""
        own = {p.name for p in inline.properties}
        found: dict[str, list[Property]] = {}
        keys = [
            p.target
            for p in node.parts
            if isinstance(p, RefNode) and p.target in self.state.class_defs
        ]
        for key in dict.fromkeys(keys):
            lineage: dict[str, Property] = {}
            for k in (key, *sorted(self._ancestors(key))):
                target = self.state.defs[k].node
                parts = target.parts if isinstance(target, AllOfNode) else (target,)
                for part in parts:
                    if isinstance(part, ObjectNode):
                        for prop in part.properties:
                            lineage.setdefault(prop.name, prop)
            for name, prop in lineage.items():
                if name not in own and prop not in found.setdefault(name, []):
                    found[name].append(prop)
        return [
            Property(name=name, schema=props[0].schema, required=any(p.required for p in props))
            for name, props in found.items()
            if len(props) > 1
        ]

    def _ancestors(self, key: str) -> set[str]:
        """The class definitions ``key``'s class inherits from, transitively (its allOf refs)."""
        found: set[str] = set()
        stack = [key]
        while stack:
            target = self.state.defs[stack.pop()].node
            if isinstance(target, AllOfNode):
                for part in target.parts:
                    if (
                        isinstance(part, RefNode)
                        and part.target in self.state.class_defs
                        and part.target not in found
                    ):
                        found.add(part.target)
                        stack.append(part.target)
        return found

    def _all_of_parts(self, node: AllOfNode) -> tuple[list[str], ObjectNode]:
        keys = [
            p.target
            for p in node.parts
            if isinstance(p, RefNode) and p.target in self.state.class_defs
        ]
        # A parent that another parent already extends adds nothing, and beside it gives no
        # consistent MRO: a real email API's ``allOf: [Base, Common]`` with ``Common: allOf:
        # [Base, ...]`` was ``class C(Base, Common)`` — a TypeError when the model loaded.
        lineage = {k: self._ancestors(k) for k in dict.fromkeys(keys)}
        parents: list[str] = []
        for key in lineage:
            if not any(key in up and other not in lineage[key] for other, up in lineage.items()):
                parents.append(self.state.names.def_names[key])
        props: list[Property] = []
        additional: SchemaNode | None = None
        for part in node.parts:
            if isinstance(part, ObjectNode):
                props.extend(part.properties)
                additional = part.additional if part.additional is not None else additional
        return parents, ObjectNode(meta=node.meta, properties=tuple(props), additional=additional)

    def _field(
        self,
        owner: str,
        prop: Property,
        scope: naming.Scope,
        parents: Sequence[SchemaNode] = (),
    ) -> tuple[FieldView, bool]:
        """The field, and whether it is renamed and optional with a value that doesn't tell
        absence (nullable or defaulted): such a class needs ``KeepExtrasApart``.

        ``parents``: the schemas parent classes give the same property, checked on the value.
        """
        fname = scope.claim(naming.field_name(prop.name), original=prop.name)
        hint = owner + naming.pascal_case(prop.name)
        expr, nullable = self.types.annotation(prop.schema, hint)
        if parents:
            checks = [
                self.types.sub_schema(p, f"{hint}Inherited{i + 1}") for i, p in enumerate(parents)
            ]
            expr = f"Annotated[{expr}, AllOf({', '.join(checks)})]"
            nullable = nullable and all(admits_null(p, self.state.defs, set()) for p in parents)
        args: list[str] = []
        default = self.types.default(prop) if not prop.required else None
        ambiguous = False
        if not prop.required:
            if default is not None:
                args.append(f"default={default}")
                ambiguous = True
            else:
                args.append("default=None")
                if not nullable:
                    expr = f"Annotated[{expr} | None, NotNull]"
                ambiguous = nullable
        if fname != prop.name:
            args.append(f"alias={py_str(prop.name)}")
        desc = prop.schema.meta.description
        if desc:
            args.append(f"description={py_str(desc)}")
        rhs = f"Field({', '.join(args)})" if args else None
        return FieldView(fname, expr, rhs), ambiguous and fname != prop.name


_Views = tuple[list[ClassView], list[AliasView], list[str], list[naming.Rename], list[Diagnostic]]
"""The definitions' views: classes, aliases, the class names claimed, the renames, the
diagnostics (``ModelViews._definitions``)."""


def _views_to_json(views: _Views) -> dict[str, Any]:
    classes, aliases, taken, renames, diagnostics = views
    return {
        "classes": [
            [
                c.name,
                c.bases,
                c.doc,
                c.config,
                c.extra_type,
                c.root,
                [[f.name, f.annotation, f.default, f.override] for f in c.fields],
            ]
            for c in classes
        ],
        "aliases": [[a.name, a.value, a.expr] for a in aliases],
        "taken": taken,
        "renames": [[r.original, r.chosen, r.reason] for r in renames],
        "diagnostics": [_diagnostic_row(d) for d in diagnostics],
    }


def _views_from_json(kept: dict[str, Any]) -> _Views | None:
    """The views ``_views_to_json`` wrote, if whole; else None."""
    try:
        classes = [
            ClassView(
                name=as_text(name),
                bases=as_text(bases),
                doc=_maybe_text(doc),
                config=_maybe_text(config),
                extra_type=_maybe_text(extra_type),
                root=_maybe_text(root),
                fields=[
                    FieldView(as_text(n), as_text(a), _maybe_text(v), _flag(o))
                    for n, a, v, o in fields
                ],
            )
            for name, bases, doc, config, extra_type, root, fields in kept["classes"]
        ]
        aliases = [
            AliasView(name=as_text(n), value=as_text(v), expr=as_text(e))
            for n, v, e in kept["aliases"]
        ]
        taken = [as_text(n) for n in kept["taken"]]
        renames = [
            naming.Rename(original=as_text(o), chosen=as_text(c), reason=as_text(r))
            for o, c, r in kept["renames"]
        ]
        diagnostics = [
            Diagnostic(
                loc=SourceLocation(file=as_text(file), pointer=as_text(pointer)),
                severity=_severity(severity),
                found=as_text(found),
                expected=_maybe_text(expected),
                hint=_maybe_text(hint),
                line=_maybe_int(line),
                column=_maybe_int(column),
            )
            for file, pointer, severity, found, expected, hint, line, column in kept["diagnostics"]
        ]
    except (KeyError, TypeError, ValueError):  # (a shape not as written: made again)
        return None
    return classes, aliases, taken, renames, diagnostics


def _diagnostic_row(d: Diagnostic) -> list[object]:
    return [d.loc.file, d.loc.pointer, d.severity, d.found, d.expected, d.hint, d.line, d.column]


def _maybe_text(value: object) -> str | None:
    return None if value is None else as_text(value)


def _flag(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError(value)
    return value


def _maybe_int(value: object) -> int | None:
    if value is not None and type(value) is not int:
        raise TypeError(value)
    return value


def _severity(value: object) -> Severity:
    for severity in get_args(Severity):
        if value == severity:
            return cast("Severity", severity)
    raise ValueError(value)
