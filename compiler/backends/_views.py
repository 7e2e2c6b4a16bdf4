"""Compiler layer (backends): the views templates are given — plain values made from the IR,
each field already Python source text (a literal, an annotation, a name).

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FieldView:
    """One field of a generated model: its Python name, annotation and ``Field(...)``."""

    name: str
    annotation: str
    default: str | None  # the right-hand side, or None for a required field without metadata
    override: bool = False  # narrows a field of a parent class (allOf)


@dataclass
class ClassView:
    """One generated model class (a ``RootModel`` when ``root`` is set)."""

    name: str
    bases: str
    doc: str | None = None
    config: str | None = None  # e.g. 'extra="forbid"'
    extra_type: str | None = None  # annotation for typed additional properties
    fields: list[FieldView] = field(default_factory=lambda: [])
    root: str | None = None  # for RootModel classes: the root type


@dataclass
class AliasView:
    """One named type alias (``TypeAliasType``) of a generated models module."""

    name: str
    value: str  # a string literal holding ``expr`` (aliases are resolved lazily)
    expr: str


@dataclass
class ToolView:
    """One tool's names and literals, as every module of its package spells them."""

    name: str  # wire name
    name_literal: str
    provider_name: str  # raw
    provider_literal: str
    call_class: str
    output_class: str
    activity_class: str
    function_name: str
    context_activity_class: str
    doc: str | None
    description_literal: str
    index: int
    # OpenAPI: (status literal, model class) of each declared error response
    errors: tuple[tuple[str, str], ...] = ()


def class_key(c: ClassView) -> tuple[object, ...]:
    """Every field of ``c`` (and of its fields), as a tuple of strings: what a module key needs
    of it, at a fraction of the cost of the dataclasses' generated ``repr``."""
    fields = tuple((f.name, f.annotation, f.default, f.override) for f in c.fields)
    return (c.name, c.bases, c.doc, c.config, c.extra_type, c.root, fields)
