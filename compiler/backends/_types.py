"""Compiler layer (backends): the Python annotation of each IR schema node (``Annotations``) —
the types of model fields, with the checks pydantic cannot express as ``Annotated`` metadata.

Imports ``ir``, ``naming``, ``passes.unions``, ``toolbind.runtime.contract`` (the formats it
asserts) and the backends' ``_context``, ``_source`` and ``_views``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from toolbind.contract import FORMATS

from .. import naming
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    DependentRequiredCheck,
    DependentSchemasCheck,
    EvalPlan,
    IntegerNode,
    LiteralNode,
    NeverNode,
    NotCheck,
    NullNode,
    NumberNode,
    NumericBounds,
    ObjectNode,
    PatternPropertiesCheck,
    Property,
    PropertyNamesCheck,
    RefNode,
    SchemaNode,
    StringNode,
    UnevaluatedCheck,
    UnionNode,
    freeze,
    thaw,
)
from ..passes.unions import admits_null, is_class_node, mutually_exclusive, tag_property
from ._context import RenderState
from ._source import IMPORT_SOURCES, py_literal, py_str
from ._views import AliasView

SENT_FORMATS = frozenset({"uuid", "date", "date-time"})
"""The string formats an OpenAPI Call checks (``Annotations.sending``): values an API parses
into a typed column or object and refuses when they do not parse. ``email``, ``uri`` and the
like are left annotations: APIs read them loosely (a search by part of an address), and a
stricter check than the API's would refuse calls it takes."""
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
"""OpenAPI's integer formats, as the ranges their values must be in."""
FLOAT_RANGES = {"float": 3.4028234663852886e38, "double": 1.7976931348623157e308}
"""OpenAPI's number formats, as the largest finite magnitude of their IEEE-754 type (single,
double precision): a value beyond it (or NaN, or an infinity) cannot be read as one — an API
parsing it into a ``float32`` column refuses it or reads an infinity."""


class Annotations:
    """Makes the annotation of each schema node a field or alias needs.

    An object schema becomes a model class through ``model_class`` (the class builder's);
    a check's sub-schema becomes a named alias in ``aliases``.
    """

    def __init__(
        self,
        state: RenderState,
        aliases: list[AliasView],
        model_class: Callable[[str, SchemaNode], None],
    ) -> None:
        self.state = state
        self.names = state.names
        self.defs = state.defs
        self.class_defs = state.class_defs
        self.aliases = aliases
        self.model_class = model_class
        self.sending = False
        """Whether what is made now is sent to an API (an OpenAPI operation's Call, and the
        classes written inline in it), which checks ``SENT_FORMATS``, ``INT_RANGES`` and
        ``FLOAT_RANGES``. A
        definition behind a ``$ref`` may be a response's too, read as it comes: not checked."""

    def default(self, prop: Property) -> str | None:
        """A Python default for a scalar JSON default that already fits the field's type."""
        raw = prop.schema.meta.default
        if raw is None:
            return None
        value = thaw(raw)
        node = prop.schema
        fits = _scalar_default_fits(node, value)
        return py_literal(value) if fits else None

    def annotation(self, node: SchemaNode, hint: str) -> tuple[str, bool]:
        """The annotation for ``node`` and whether it admits null."""
        match node:
            case AnyNode():
                return "JsonValue", True
            case NeverNode():
                return "Nothing", False
            case NullNode():
                return "None", True
            case BooleanNode():
                return "JsonBool", False
            case IntegerNode():
                return self._integer_type(node)
            case NumberNode():
                return self._number_type(node)
            case StringNode():
                return self._string_type(node)
            case ArrayNode():
                return self._array_type(node, hint)
            case ObjectNode():
                return self._object_type(node, hint)
            case LiteralNode():
                return self._literal_type(node)
            case UnionNode():
                return self._union_type(node, hint)
            case AllOfNode():
                return self._all_of_type(node, hint)
            case RefNode():
                return self._ref_type(node)
            case CheckedNode():
                return self._checked_type(node, hint)

    def _integer_type(self, node: IntegerNode) -> tuple[str, bool]:
        b = node.bounds
        if self.sending and node.format in INT_RANGES:
            low, high = INT_RANGES[node.format]
            b = replace(
                b,
                minimum=low if b.minimum is None else max(b.minimum, low),
                maximum=high if b.maximum is None else min(b.maximum, high),
            )
        args = _bound_args(b)
        extra: list[str] = []
        if b.multiple_of is not None:
            if isinstance(b.multiple_of, int):
                args.append(f"multiple_of={b.multiple_of!r}")
            else:
                extra.append(f"MultipleOf({b.multiple_of!r})")
        meta = ([f"Field({', '.join(args)})"] if args else []) + extra
        return (f"Annotated[JsonInt, {', '.join(meta)}]" if meta else "JsonInt"), False

    def _number_type(self, node: NumberNode) -> tuple[str, bool]:
        b = node.bounds
        args = _bound_args(b)
        meta = [f"Bounds({', '.join(args)})"] if args else []
        if self.sending and node.format in FLOAT_RANGES:
            top = FLOAT_RANGES[node.format]
            meta.append(f"Bounds(ge={-top!r}, le={top!r}, format={node.format!r})")
        if b.multiple_of is not None:
            meta.append(f"MultipleOf({b.multiple_of!r})")
        return (f"Annotated[JsonNumber, {', '.join(meta)}]" if meta else "JsonNumber"), False

    def _string_type(self, node: StringNode) -> tuple[str, bool]:
        args = [
            f"{k}={v!r}"
            for k, v in (("min_length", node.min_length), ("max_length", node.max_length))
            if v is not None
        ]
        meta = [f"Field({', '.join(args)})"] if args else []
        if node.pattern is not None:
            meta.append(f"Pattern({py_str(node.pattern)})")
        if (self.state.format_assertion and node.format in FORMATS) or (
            self.sending and node.format in SENT_FORMATS
        ):
            meta.append(f"Format({py_str(node.format)})")
        elif self.state.format_assertion and node.format is not None:
            self.state.diags.warning(  # the spec says an unknown format is ignored: never in silence
                node.meta.loc.child("format"),
                f"format {node.format!r} is not one toolbind asserts; it is not checked",
                "one of " + ", ".join(sorted(FORMATS)),
            )
        return (f"Annotated[JsonStr, {', '.join(meta)}]" if meta else "JsonStr"), False

    def _array_type(self, node: ArrayNode, hint: str) -> tuple[str, bool]:
        if node.prefix_items or node.items is None:
            item = "JsonValue"
        else:
            item, _ = self.annotation(node.items, hint + "Item")
        args = [
            f"{k}={v!r}"
            for k, v in (("min_length", node.min_items), ("max_length", node.max_items))
            if v is not None
        ]
        meta = [f"Field({', '.join(args)})"] if args else []
        if node.unique_items:
            meta.append("UniqueItems()")
        if node.prefix_items:
            # Positions are optional in JSON Schema (a shorter array is valid), so a
            # tuple type can't say it: each position is checked against its schema.
            positions = [
                self.sub_schema(p, f"{hint}Item{i + 1}") for i, p in enumerate(node.prefix_items)
            ]
            rest = self.sub_schema(node.items, f"{hint}Rest") if node.items is not None else "None"
            meta.append(f"PrefixItems(({''.join(p + ', ' for p in positions)}), rest={rest})")
        expr = f"list[{item}]"
        return (f"Annotated[{expr}, {', '.join(meta)}]" if meta else expr), False

    def _object_type(self, node: ObjectNode, hint: str) -> tuple[str, bool]:
        if node.properties or isinstance(node.additional, NeverNode):
            name = self.names.inline_class(hint)
            self.model_class(name, node)
            return name, False
        value = "JsonValue"
        if node.additional is not None:
            value, _ = self.annotation(node.additional, hint + "Value")
        args = [
            f"{k}={v!r}"
            for k, v in (
                ("min_length", node.min_properties),
                ("max_length", node.max_properties),
            )
            if v is not None
        ]
        expr = f"dict[str, {value}]"
        return (f"Annotated[{expr}, Field({', '.join(args)})]" if args else expr), False

    def _literal_type(self, node: LiteralNode) -> tuple[str, bool]:
        values = [thaw(v) for v in node.values]
        if _literal_ok(node):
            non_null = [v for v in values if v is not None]
            parts: list[str] = []
            if non_null:
                literal = f"Literal[{', '.join(py_literal(v) for v in non_null)}]"
                if any(type(v) is int for v in non_null):
                    literal = f"Annotated[{literal}, IntLiteral]"
                elif any(isinstance(v, bool) for v in non_null):
                    literal = f"Annotated[{literal}, BoolLiteral]"
                parts.append(literal)
            if None in values:
                parts.append("None")
            return " | ".join(parts), None in values
        texts = ", ".join(py_str(v) for v in node.values)
        return f"Annotated[JsonValue, OneOf({texts})]", None in values

    def _union_type(self, node: UnionNode, hint: str) -> tuple[str, bool]:
        exprs: list[str] = []
        per_variant: list[str] = []
        nullable = False
        for i, v in enumerate(node.variants):
            e, n = self.annotation(v, f"{hint}{_variant_suffix(v, i)}")
            per_variant.append(e)
            nullable = nullable or n
            if e not in exprs:
                exprs.append(e)
        if "JsonValue" in exprs:
            union, nullable = "JsonValue", True
        else:
            if "None" in exprs:  # keep None last, where readers look for it
                exprs.remove("None")
                exprs.append("None")
            union = " | ".join(exprs)
        classes = [
            (v, e)
            for v, e in zip(node.variants, per_variant, strict=True)
            if not isinstance(v, NullNode)
        ]
        tag = tag_property(tuple(v for v, _ in classes), self.defs, self.class_defs)
        if tag is not None and len({e for _, e in classes}) == len(classes):
            # Every variant (but null) is a class requiring ``tag`` with its own string
            # values: at most one can match, whatever the form, and pydantic's tagged
            # union picks it by one key lookup instead of trying every class in turn.
            members = " | ".join(e for _, e in classes)
            tagged = f"Annotated[{members}, Field(discriminator={py_str(tag)})]"
            return (tagged + " | None" if nullable else tagged), nullable
        if (
            node.form == "oneOf"
            and len(node.variants) > 1
            and not mutually_exclusive(node.variants, self.defs)
        ):
            # pydantic takes the best-matching member; oneOf wants exactly one to match.
            # (Variants told apart by a required const/enum property, e.g. a
            # discriminator, can't both match: the union alone is exactly one.)
            names = [self._alias(e, f"{hint}OneOf{i + 1}") for i, e in enumerate(per_variant)]
            return f"Annotated[{union}, ExactlyOne({', '.join(names)})]", nullable
        return union, nullable

    def _all_of_type(self, node: AllOfNode, hint: str) -> tuple[str, bool]:
        if is_class_node(node, self.defs):
            name = self.names.inline_class(hint)
            self.model_class(name, node)
            return name, False
        informative = [p for p in node.parts if not isinstance(p, AnyNode)]
        if not informative:
            return "JsonValue", True
        # The first part gives the Python type; every other part is checked on the value.
        first, nullable = self.annotation(informative[0], hint)
        if len(informative) == 1:
            return first, nullable
        others = [self.sub_schema(p, f"{hint}AllOf{i + 2}") for i, p in enumerate(informative[1:])]
        return f"Annotated[{first}, AllOf({', '.join(others)})]", nullable

    def _ref_type(self, node: RefNode) -> tuple[str, bool]:
        target = self.defs[node.target]
        name = self.names.def_names[node.target]
        return name, admits_null(target.node, self.defs, set())

    def _checked_type(self, node: CheckedNode, hint: str) -> tuple[str, bool]:
        base, nullable = self.annotation(node.base, hint)
        return (
            f"Annotated[{base}, {', '.join(self._check(c, hint) for c in node.checks)}]",
            nullable,
        )

    def _alias(self, expr: str, hint: str) -> str:
        """A named alias for a type expression already made (checks resolve it lazily).

        An imported building block (``JsonStr``, ``JsonInt``…) is used as it is; a generated
        class gets an alias, as a check may name a class defined further down the module.
        """
        if expr in IMPORT_SOURCES:
            return expr
        name = self.names.inline_class(hint)
        self.aliases.append(AliasView(name=name, value=py_str(expr), expr=expr))
        return name

    def sub_schema(self, node: SchemaNode, hint: str) -> str:
        """The type a check validates a sub-schema against, named through ``_alias``."""
        return self._alias(self.annotation(node, hint + "Value")[0], hint)

    def _plan(self, plan: EvalPlan, hint: str) -> str:
        """``EvalPlan`` as a ``Plan(...)`` expression, sub-schemas named through ``_alias``."""
        args: list[str] = []
        if plan.properties:
            args.append(f"properties=({''.join(py_str(p) + ', ' for p in plan.properties)})")
        if plan.patterns:
            args.append(f"patterns=({''.join(py_str(p) + ', ' for p in plan.patterns)})")
        if plan.all_properties:
            args.append("all_properties=True")
        if plan.prefix:
            args.append(f"prefix={plan.prefix!r}")
        if plan.all_items:
            args.append("all_items=True")
        if plan.contains is not None:
            args.append(f"contains={self.sub_schema(plan.contains, hint + 'Contains')}")
        if plan.always:
            args.append(f"always=({''.join(self._plan(p, hint) + ', ' for p in plan.always)})")
        if plan.branches:
            pairs = "".join(
                f"({self.sub_schema(node, hint + 'Branch')}, {self._plan(p, hint)}), "
                for node, p in plan.branches
            )
            args.append(f"branches=({pairs})")
        if plan.if_ is not None:
            node, p = plan.if_
            args.append(f"if_=({self.sub_schema(node, hint + 'If')}, {self._plan(p, hint)})")
        if plan.then is not None:
            args.append(f"then={self._plan(plan.then, hint)}")
        if plan.else_ is not None:
            args.append(f"else_={self._plan(plan.else_, hint)}")
        if plan.dependent:
            pairs = "".join(f"({py_str(k)}, {self._plan(p, hint)}), " for k, p in plan.dependent)
            args.append(f"dependent=({pairs})")
        return f"Plan({', '.join(args)})"

    def _check(self, check: Any, hint: str) -> str:
        match check:
            case NotCheck():
                return f"Not({self.sub_schema(check.schema, hint + 'Not')})"
            case ConditionalCheck():
                args = [self.sub_schema(check.if_, hint + "If")]
                if check.then is not None:
                    args.append(f"then={self.sub_schema(check.then, hint + 'Then')}")
                if check.else_ is not None:
                    args.append(f"else_={self.sub_schema(check.else_, hint + 'Else')}")
                return f"IfThenElse({', '.join(args)})"
            case ContainsCheck():
                sub = self.sub_schema(check.schema, hint + "Contains")
                return f"Contains({sub}, min_contains={check.min_contains!r}, max_contains={check.max_contains!r})"
            case DependentRequiredCheck():
                table = ", ".join(
                    f"{py_str(k)}: ({''.join(py_str(n) + ', ' for n in v)})"
                    for k, v in check.requires
                )
                return f"DependentRequired({{{table}}})"
            case DependentSchemasCheck():
                table = ", ".join(
                    f"{py_str(k)}: {self.sub_schema(v, hint + 'If' + naming.pascal_case(k))}"
                    for k, v in check.schemas
                )
                return f"DependentSchemas({{{table}}})"
            case PatternPropertiesCheck():
                table = ", ".join(
                    f"{py_str(k)}: {self.sub_schema(v, hint + 'Pattern')}"
                    for k, v in check.patterns
                )
                additional = (
                    self.sub_schema(check.additional, hint + "Additional")
                    if check.additional is not None
                    else "None"
                )
                declared = "".join(py_str(d) + ", " for d in check.declared)
                return f"PatternProperties({{{table}}}, declared=({declared}), additional={additional})"
            case PropertyNamesCheck():
                return f"PropertyNames({self.sub_schema(check.schema, hint + 'Names')})"
            case UnevaluatedCheck():
                what = "Unevaluated" + check.kind.capitalize()
                sub = self.sub_schema(check.schema, hint + what)
                return f"Unevaluated({check.kind!r}, {sub}, {self._plan(check.plan, hint)})"
            case _:  # pragma: no cover - the Check union is closed
                raise AssertionError(check)


def _bound_args(b: NumericBounds) -> list[str]:
    """pydantic's ``Field`` arguments for a number's inclusive and exclusive bounds."""
    pairs = (
        ("ge", b.minimum),
        ("le", b.maximum),
        ("gt", b.exclusive_minimum),
        ("lt", b.exclusive_maximum),
    )
    return [f"{k}={v!r}" for k, v in pairs if v is not None]


def _within(bounds: NumericBounds, value: float) -> bool:
    b = bounds
    return (
        (b.minimum is None or value >= b.minimum)
        and (b.maximum is None or value <= b.maximum)
        and (b.exclusive_minimum is None or value > b.exclusive_minimum)
        and (b.exclusive_maximum is None or value < b.exclusive_maximum)
        and (b.multiple_of is None or (value / b.multiple_of).is_integer())
    )


def _scalar_default_fits(node: SchemaNode, value: Any) -> bool:
    """Whether a JSON default is a scalar the field's type accepts (else no Python default)."""
    match node:
        case StringNode():
            return (
                isinstance(value, str)
                and node.pattern is None
                and (node.min_length is None or len(value) >= node.min_length)
                and (node.max_length is None or len(value) <= node.max_length)
            )
        case BooleanNode():
            return isinstance(value, bool)
        case IntegerNode():
            return type(value) is int and _within(node.bounds, value)
        case NumberNode():
            return (
                type(value) in (int, float) and math.isfinite(value) and _within(node.bounds, value)
            )
        case LiteralNode():
            return (
                freeze(value) in node.values
                and isinstance(value, (str, int, bool))
                and _literal_ok(node)
            )
        case _:
            return False


def _variant_suffix(node: SchemaNode, index: int) -> str:
    title = node.meta.title
    if title and naming.has_identifier_chars(title):
        return naming.pascal_case(title)
    return f"Option{index + 1}"


def _literal_ok(node: LiteralNode) -> bool:
    """Whether ``Literal[...]`` spells exactly this enum (strings, ints, bools and null)."""
    values = [thaw(v) for v in node.values]
    has_bool = any(isinstance(v, bool) for v in values)
    has_int = any(type(v) is int for v in values)
    # Literal[1] would also accept True (1 == True in Python): keep bool and int apart.
    if has_bool and has_int:
        return False
    return all(v is None or isinstance(v, (str, bool)) or type(v) is int for v in values)
