"""Compiler layer (normalise): what the JSON Schema quirk families share. Imports ``_rule`` only.

``SchemaContext`` is the read-only state a schema rule may look at (the dialect the schemas are
read in, whether the run is lenient, the draft named, …); the lowerer builds one per run.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import Any, cast

from ..ir import SourceLocation
from ._rule import Fixed, Rule

JSON_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "deprecated",
        "examples",
        "example",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "$defs",
        "definitions",
        "contentMediaType",
        "contentEncoding",
        "xml",
        "externalDocs",
        "discriminator",
    }
)
"""Keywords that only annotate; they never change which instances are valid."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaContext:
    """How the schemas of one run are read, for the schema rules.

    Attributes:
        dialect: ``jsonschema`` (OpenAPI 3.1 too), ``openapi30`` (and Swagger 2.0) or ``bfcl``.
        lenient: real API descriptions: a quirk with one sensible reading is read so, and said.
        draft: the JSON Schema draft named (``draft4`` … ``draft2020-12``), None when none was.
        legacy_ref: drafts 4-7, where a ``$ref`` replaces the schema object it sits in.
        drop_extensions: ``x-`` keys are not carried into the IR (OpenAPI).
        openapi31: an OpenAPI 3.1 document (JSON Schema 2020-12 without a draft named).
        reported: the places (``str(SourceLocation)``) a once-per-place warning was given at.
    """

    dialect: str = "jsonschema"
    lenient: bool = False
    draft: str | None = None
    legacy_ref: bool = False
    drop_extensions: bool = False
    openapi31: bool = False
    reported: Container[str] = frozenset[str]()


def without(fragment: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``fragment`` without ``keys`` (a new dict: a rule never touches what it is given)."""
    return {k: v for k, v in fragment.items() if k not in keys}


PHASES = (
    *("entry", "enter", "before-keywords", "object", "type", "enum", "untyped", "pattern"),
    *("union", "all-of"),
)
"""Where the lowerer reads a schema by the rules: on entry (its shape, its draft, what ``$ref``
replaces), as it enters a resource (``enter``), after the checks are split off
(``before-keywords``), and where a keyword family is read (``object``, ``type``, ``enum``, an
``untyped`` schema, ``pattern``, a ``union`` or an ``all-of``: given its branches, ``schema_unions.Branches``). A rule names its phases; the lowerer asks for each phase's
rules (``_families.schema_phase``), so a new rule is its family module and its test alone."""


@dataclass(frozen=True, slots=True)
class _Trigger:
    when: Callable[[SchemaContext], bool]
    keys: frozenset[str] | None  # None: a fragment that is no object
    phases: frozenset[str]


_TRIGGERS: dict[str, _Trigger] = {}


def schema_rule(
    *,
    name: str,
    family: str,
    accepts: str,
    makes: str,
    warning: str,
    apply: Callable[[Any, SourceLocation, SchemaContext], Fixed | None],
    when: Callable[[SchemaContext], bool],
    keys: Iterable[str] | None,
    phases: Iterable[str],
) -> Rule[SchemaContext]:
    """A schema rule, with what it can fire on: runs ``when`` says (the context), schema
    objects with one of ``keys`` (None: fragments that are no object), in the lowerer's
    ``phases`` (``PHASES``). ``Phase`` reads them so that a schema object with nothing for the
    rules costs one set test."""
    unknown = set(phases) - set(PHASES)
    if unknown or not phases:
        raise ValueError(f"schema rule {name!r}: phases {sorted(unknown)} are none of {PHASES}")
    _TRIGGERS[name] = _Trigger(when, None if keys is None else frozenset(keys), frozenset(phases))
    return Rule(
        name=name, family=family, accepts=accepts, makes=makes, warning=warning, apply=apply
    )


@dataclass(frozen=True, slots=True)
class Phase:
    """The rules of one reading that can fire in a run, and what they can fire on."""

    rules: tuple[Rule[SchemaContext], ...]
    keys: frozenset[str]
    """A schema object with none of these keys is left as it is."""
    other_values: bool
    """Whether a fragment that is no object is read by a rule."""

    @classmethod
    def of(cls, rules: Iterable[Rule[SchemaContext]], context: SchemaContext) -> Phase:
        """The ``rules`` that can fire in ``context``."""
        kept = tuple(r for r in rules if _TRIGGERS[r.name].when(context))
        keys = [_TRIGGERS[r.name].keys for r in kept]
        return cls(
            rules=kept,
            keys=frozenset[str]().union(*(k for k in keys if k is not None)),
            other_values=any(k is None for k in keys),
        )

    def idle(self, fragment: Any) -> bool:
        """Whether no rule of this phase can fire on ``fragment``."""
        if isinstance(fragment, dict):
            return cast("dict[str, Any]", fragment).keys().isdisjoint(self.keys)
        return not self.other_values


def in_phase(rule: Rule[Any], phase: str) -> bool:
    """Whether the lowerer reads ``rule`` in ``phase``."""
    trigger = _TRIGGERS.get(rule.name)
    return trigger is not None and phase in trigger.phases


def schema_object(fragment: Any) -> dict[str, Any] | None:
    """``fragment`` as a schema object, or None when it is something else."""
    return cast("dict[str, Any]", fragment) if isinstance(fragment, dict) else None
