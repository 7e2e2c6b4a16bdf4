"""Compiler layer (frontends): what every part of the JSON Schema lowerer shares — its state, the
keyword families, the small readers (annotations, counts, numbers), and the normalising rules'
entry. Imports ``ir``, ``diagnostics``, ``_load``, ``_resolver`` and ``normalise``.

``SchemaLowerer`` (``_jsonschema``) is this class with one part per keyword family on top, each
part a subclass of the one below it (so a part reads the parts below it, never one above):
references (``_lower_refs``) ← objects and arrays (``_lower_objects``) ← scalars and the
reading by ``type`` (``_lower_scalars``) ← union branches and discriminators
(``_lower_branches``) ← combinators (``_lower_unions``) ← checks (``_lower_checks``) ←
``SchemaLowerer``, whose ``_lower`` (declared here) every part calls for a sub-schema.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._load import Document, RefPolicy, load_document, load_url
from ..diagnostics import Diagnostic, Diagnostics, describe
from ..ir import Definition, Meta, SchemaNode, SourceLocation, freeze
from ..normalise import Rule, run
from ..normalise._schema import Phase, SchemaContext
from ..normalise.schema_nullable import X_NULLABLE_NOTE
from ._resolver import (
    Dialect,
    Draft,
    RefResolver,
    _Context,  # pyright: ignore[reportPrivateUsage]
)

OBJECT_KEYS = {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}
ARRAY_KEYS = {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}
STRING_KEYS = {"minLength", "maxLength", "pattern", "format"}
NUMBER_KEYS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
# Applicators that check the instance beside its type; lowered to a ``CheckedNode``.
CHECK_KEYS = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "contains",
        "minContains",
        "maxContains",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "propertyNames",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
CONSUMED = (
    OBJECT_KEYS
    | ARRAY_KEYS
    | STRING_KEYS
    | NUMBER_KEYS
    | {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "nullable"}
    | {"title", "description", "default", "deprecated"}
)
NOT_EXTRA = CONSUMED | {"$defs", "definitions"}
"""Keys ``_meta`` does not keep as extra keywords (read elsewhere, or definitions)."""
MAX_DEPTH = 200


@dataclass
class LowererBase:
    """Lowers JSON Schema values to IR nodes, collecting shared definitions as it goes."""

    diags: Diagnostics
    dialect: Dialect = "jsonschema"
    allow_remote_files: bool = True
    # Drafts 4-7: a ``$ref`` replaces the schema object it sits in (siblings, ``$id`` included,
    # are ignored). Draft 2019-09 on: ``$ref`` is an applicator beside its siblings.
    legacy_ref: bool = False
    # The draft the schemas are written in, when one was named (``model_from_schema``); None
    # reads every draft's spellings (tool specs rarely say). Draft 4 names resources with
    # ``id`` instead of ``$id``.
    draft: Draft | None = None
    # Documents that ``$ref``s may name by absolute URI (``model_from_schema(remotes=...)``);
    # nothing is ever fetched.
    remotes: Mapping[str, Any] = field(default_factory=lambda: {})
    definitions: dict[str, Definition] = field(default_factory=lambda: {})
    _pending: list[tuple[str, str, Any, _Context, SourceLocation]] = field(
        default_factory=lambda: []
    )
    _reserved: set[str] = field(default_factory=lambda: set())
    _cycles_checked: set[str] = field(default_factory=lambda: set())
    # Keywords the meta-schema in force leaves out of its ``$vocabulary`` (``lower_root``).
    _vocabulary_off: frozenset[str] = frozenset()
    # Where a once-per-place warning was given (a keyword toolbind does not read, a rule's).
    _unread_reported: set[str] = field(default_factory=lambda: set())
    load: Callable[[Path, str], Document | Diagnostic] = load_document
    # Which files and URLs ``$ref``s may read beyond the spec's own directory.
    refs: RefPolicy = field(default_factory=RefPolicy)
    fetch: Callable[[str], Document | Diagnostic] = load_url
    # Real-world API descriptions (OpenAPI) break rules that have a sensible reading: with
    # ``lenient`` an empty ``enum`` is ignored and a ``$ref`` to nothing allows any value, each
    # reported as a located warning instead of an error.
    lenient: bool = False
    # OpenAPI vendor extensions (``x-*``) annotate schemas for a vendor's tooling, not for
    # validation or for an LLM; with ``drop_extensions`` they are not carried into the IR.
    drop_extensions: bool = False
    # An OpenAPI 3.1 document (JSON Schema 2020-12 without a draft named): no $recursiveRef.
    openapi31: bool = False
    # The ``x-`` keys dropped, key → where (``drop_extensions``): the frontend reports them.
    dropped_extensions: dict[str, dict[str, SourceLocation]] = field(default_factory=lambda: {})
    # Where ``x-nullable: true`` was read as 3.0's ``nullable`` (``drop_extensions``).
    x_nullable: dict[str, SourceLocation] = field(default_factory=lambda: {})
    # YAML block scalars end descriptions with a line break that says nothing: trim them.
    trim_descriptions: bool = False
    # When a list, where each ``$ref`` lowered led is added to it (the definition's key; None:
    # nowhere): what lowering an OpenAPI operation read, for whoever runs it (``Steps.part``).
    ref_log: list[str | None] | None = None
    # Where the properties a normalising rule gathered into one object are written (Swagger
    # 2.0's form parameters), by the place they have in that object: what is said of them
    # points there.
    moved: dict[SourceLocation, SourceLocation] = field(default_factory=lambda: {})
    # Where each ``$ref`` leads (files, URLs, ``$id`` resources, anchors): built from the above.
    resolver: RefResolver = field(init=False)
    # What the normalising rules read of this run (``_normalise``).
    _rule_context: SchemaContext = field(init=False)
    # The rules of each reading (by the tuple's id) that can fire in this run.
    _phases: dict[int, Phase] = field(init=False)

    def __post_init__(self) -> None:
        self.resolver = RefResolver(
            diags=self.diags,
            dialect=self.dialect,
            allow_remote_files=self.allow_remote_files,
            legacy_ref=self.legacy_ref,
            id_key="id" if self.draft == "draft4" else "$id",
            lenient=self.lenient,
            remotes=self.remotes,
            refs=self.refs,
            load=self.load,
            fetch=self.fetch,
        )
        self._rule_context = self._new_rule_context()
        self._phases = {}

    def report_extensions(self, skip: frozenset[str] = frozenset()) -> None:
        """A note for the ``x-`` keys dropped from schemas (but ``skip``, those toolbind reads
        elsewhere): dropped, not lost in silence."""
        if self.x_nullable:
            self.diags.note(
                next(iter(self.x_nullable.values())),
                f"x-nullable: true read as nullable in {len(self.x_nullable)} schema(s): the "
                "Swagger 2.0 extension (go-swagger, Swashbuckle, NSwag) for OpenAPI 3.0's nullable",
            )
        keys = sorted(k for k in self.dropped_extensions if k not in skip)
        if not keys:
            return
        places = [at for k in keys for at in self.dropped_extensions[k].values()]
        self.diags.note(
            places[0],
            f"{len(places)} extension key(s) in schemas not sent to models ({', '.join(keys)}): "
            "x- keys annotate a schema for other tools; no provider takes them",
        )

    def sorted_definitions(self) -> tuple[Definition, ...]:
        """The definitions ``$ref``s led to so far, sorted by key (output is deterministic)."""
        return tuple(self.definitions[k] for k in sorted(self.definitions))

    # -- the normalising rules ----------------------------------------------------------------

    def _new_rule_context(self) -> SchemaContext:
        return SchemaContext(
            dialect=self.dialect,
            lenient=self.lenient,
            draft=self.draft,
            legacy_ref=self.legacy_ref,
            drop_extensions=self.drop_extensions,
            openapi31=self.openapi31,
            reported=self._unread_reported,
        )

    def _normalise(
        self, rules: tuple[Rule[SchemaContext], ...], fragment: Any, loc: SourceLocation
    ) -> Any:
        """``fragment`` (a schema at ``loc``) as ``rules`` leave it, their warnings said.

        A warning's place is remembered (``_unread_reported``: the rules that warn once per
        place read it); the x-nullable note is counted instead (``x_nullable``: said once, by
        ``report_extensions``)."""
        phase = self._phases.get(id(rules))
        if phase is None:
            phase = self._phases[id(rules)] = Phase.of(rules, self._rule_context)
        if phase.idle(fragment):  # (the common case: every schema object passes here)
            return fragment
        context = self._rule_context
        if (
            context.reported is not self._unread_reported
        ):  # (the set object may change: the rules read the current one)
            context = self._rule_context = self._new_rule_context()
        out: list[Diagnostic] = []
        fragment = run(phase.rules, fragment, loc, context, out)
        for said in out:
            if said.severity == "note" and said.found == X_NULLABLE_NOTE:
                self.x_nullable[str(said.loc)] = said.loc
            elif said.severity == "note":  # (another rule's note: said where it is)
                self.diags.add(said)
            else:
                self._unread_reported.add(str(said.loc))
                self.diags.add(said)
        return fragment

    # -- small readers --------------------------------------------------------------------------

    def _meta(
        self, s: dict[str, Any], loc: SourceLocation, consumed_extra: set[str] | None = None
    ) -> Meta:
        title = s.get("title")
        description = s.get("description")
        extra: dict[str, Any] = {}
        # (one set and the flags read once: every schema of a spec passes here)
        skip = NOT_EXTRA | consumed_extra if consumed_extra else NOT_EXTRA
        drop, bfcl = self.drop_extensions, self.dialect == "bfcl"
        for k, v in s.items():
            if k in skip:
                continue
            if drop and k.startswith("x-"):
                at = loc.child(k)
                self.dropped_extensions.setdefault(k, {})[str(at)] = at
                continue
            # BFCL's ``optional`` says again what ``required`` says: its own key, never a
            # provider's (it would reach the model as an unknown keyword)
            if bfcl and k == "optional":
                continue
            extra[k] = v
        if isinstance(description, str) and self.trim_descriptions:
            description = description.strip()
        return Meta(
            loc=loc,
            title=title if isinstance(title, str) else None,
            description=description if isinstance(description, str) else None,
            default=freeze(s["default"]) if "default" in s else None,
            deprecated=s.get("deprecated") is True,
            extra=freeze(extra) if extra else None,
        )

    def _count(self, s: dict[str, Any], key: str, loc: SourceLocation) -> int | None:
        if key not in s:
            return None
        v = s[key]
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            self.diags.error(loc.child(key), f"{key} is {describe(v)}", "a non-negative integer")
            return None
        return v

    def _string(self, s: dict[str, Any], key: str, loc: SourceLocation) -> str | None:
        if key not in s:
            return None
        v = s[key]
        if not isinstance(v, str):
            self.diags.error(loc.child(key), f"{key} is {describe(v)}", "a string")
            return None
        return v

    def _number(self, s: dict[str, Any], key: str, loc: SourceLocation) -> int | float | None:
        if key not in s:
            return None
        v = s[key]
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or (isinstance(v, float) and not math.isfinite(v))
        ):
            self.diags.error(loc.child(key), f"{key} is {describe(v)}", "a finite number")
            return None
        return v

    # -- what every part calls: ``SchemaLowerer`` defines it -----------------------------------

    def _lower(self, schema: Any, loc: SourceLocation, ctx: _Context, depth: int) -> SchemaNode:
        raise NotImplementedError
