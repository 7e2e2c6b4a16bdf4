"""Compiler layer (frontends): JSON Schema → IR schema nodes, with ``$ref`` resolution.

Imports ``ir``, ``diagnostics``, ``_load`` and ``_resolver``. Every frontend lowers its parameter
and output schemas through ``SchemaLowerer`` so all formats share one reading of JSON Schema.

``$ref`` targets become ``Definition``s keyed by ``<file>#<pointer>``: each is lowered once and
shared, and cycles work because a ``RefNode`` only names its target. Where a ``$ref`` leads is
``_resolver.RefResolver``'s business (files, allowed URLs, ``$id`` resources, anchors); lowering
only asks it.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urldefrag, urljoin

from toolbind.contract import compile_pattern

from .._load import (
    Document,
    RefPolicy,
    as_array,
    as_object,
    load_document,
    load_url,
)
from ..diagnostics import Diagnostic, Diagnostics, describe
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    Check,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    Definition,
    DependentRequiredCheck,
    DependentSchemasCheck,
    EvalPlan,
    IntegerNode,
    LiteralNode,
    Meta,
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
    SourceLocation,
    StringNode,
    UnevaluatedCheck,
    UnionNode,
    freeze,
)
from ._resolver import (
    Dialect,
    Draft,
    RefResolver,
    _Context,  # pyright: ignore[reportPrivateUsage]
    _DynamicRef,  # pyright: ignore[reportPrivateUsage]
    _metaschemas,  # pyright: ignore[reportPrivateUsage]
    _pushed,  # pyright: ignore[reportPrivateUsage]
    _RecursiveRef,  # pyright: ignore[reportPrivateUsage]
    id_keyword,
)
from ._vocabulary import NEVER_READ, READ_ONLY_IN, SPELLED, vocabulary_of

_INLINE_FLAGS = re.compile(r"\(\?([ims]+)\)")
"""Inline flags at a pattern's start (``(?i)``): Java's and Python's, not ECMA-262's."""

# BFCL's function docs use Python and Java type names; each maps to the JSON Schema type that
# accepts the values those names stand for. ``any`` and the empty string accept everything.
BFCL_TYPES: dict[str, str | None] = {
    "dict": "object",
    "hashmap": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "long": "integer",
    "int": "integer",
    "short": "integer",
    "byte": "integer",
    "tuple": "array",
    "list": "array",
    "arraylist": "array",
    "char": "string",
    "str": "string",
    "bool": "boolean",
    "any": None,
    "": None,
}

JSON_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")

# Keywords that only annotate; they never change which instances are valid.
_ANNOTATIONS = {
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
# What a type-only schema may say besides annotations (``_plain_type``): ``format`` is read as an
# annotation where it is lenient (OpenAPI's ``int64``, ``double``), ``items`` is checked apart.
_PLAIN_KEYS = {"type", "format", "items", "nullable", "x-nullable"}
_OBJECT_KEYS = {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}
_ARRAY_KEYS = {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}
_STRING_KEYS = {"minLength", "maxLength", "pattern", "format"}
_NUMBER_KEYS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
# Applicators that check the instance beside its type; lowered to a ``CheckedNode``.
_CHECK_KEYS = frozenset(
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
_CONSUMED = (
    _OBJECT_KEYS
    | _ARRAY_KEYS
    | _STRING_KEYS
    | _NUMBER_KEYS
    | {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "nullable"}
    | {"title", "description", "default", "deprecated"}
)
_NOT_EXTRA = _CONSUMED | {"$defs", "definitions"}
"""Keys ``_meta`` does not keep as extra keywords (read elsewhere, or definitions)."""
_MAX_DEPTH = 200


@dataclass
class SchemaLowerer:
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
    # Where a keyword toolbind does not read was reported (``_unread``): once per place.
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
    # Where each ``$ref`` lowered led (the definition's key; None: nowhere), when a list: what
    # an OpenAPI operation's lowering read (``_opmemo``).
    ref_log: list[str | None] | None = None

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

    # Where each ``$ref`` leads (files, URLs, ``$id`` resources, anchors): built from the above.
    resolver: RefResolver = field(init=False)

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

    # -- public -----------------------------------------------------------------------------

    def lower_root(
        self,
        schema: Any,
        loc: SourceLocation,
        *,
        root: Any,
        path: Path | None,
        resource: tuple[Any, SourceLocation] | None = None,
    ) -> SchemaNode:
        """Lower ``schema`` found at ``loc`` inside the document ``root`` (read from ``path``).

        ``resource`` is the schema document that local ``$ref`` pointers (``#/$defs/X``) are
        relative to, and where it is; by default ``schema`` itself. A pointer that does not
        resolve there is tried against the whole file, for specs that point from the top.
        """
        value, where = resource if resource is not None else (schema, loc)
        ctx = _Context(
            file=loc.file,
            path=path,
            root=root,
            resource=value,
            base=where.pointer,
            id_key=id_keyword(root, self.resolver.id_key),
        )
        self.resolver.index_root(value, file=loc.file, path=path, root=root, pointer=where.pointer)
        outer = self._vocabulary_off
        self._vocabulary_off = self._vocabulary(root, loc) or outer
        try:
            node = self._lower(schema, loc, ctx, 0)
            self._drain()
        finally:
            self._vocabulary_off = outer
        self._check_cycles()
        return node

    def _vocabulary(self, root: Any, loc: SourceLocation) -> frozenset[str]:
        """The keywords the root's meta-schema (its ``$schema``) switches off by its
        ``$vocabulary``; an unknown vocabulary it requires is an error."""
        uri = (as_object(root) or {}).get("$schema")
        if not isinstance(uri, str):
            return frozenset()
        key = uri.rstrip("#")
        meta = self.remotes.get(uri, self.remotes.get(key, _metaschemas().get(key)))
        found = vocabulary_of(meta)
        if found is None:
            return frozenset()
        off, unknown = found
        for vocabulary in unknown:
            self.diags.error(
                SourceLocation(file=loc.file).child("$schema"),
                f"the meta-schema {uri!r} requires the vocabulary {vocabulary!r}, "
                "which toolbind does not know",
                "vocabularies of JSON Schema 2019-09 or 2020-12",
                hint="mark it false in the meta-schema's $vocabulary if it may be ignored",
            )
        return off

    def sorted_definitions(self) -> tuple[Definition, ...]:
        return tuple(self.definitions[k] for k in sorted(self.definitions))

    # -- refs -------------------------------------------------------------------------------

    def _drain(self) -> None:
        while self._pending:
            key, hint, target, ctx, loc = self._pending.pop()
            node = self._lower(target, loc, ctx, 0)
            self.definitions[key] = Definition(key=key, name_hint=hint, node=node)

    def _check_cycles(self) -> None:
        """Report ``$ref`` chains that come back to where they started without an object or
        array in between (``A: {$ref: B}, B: {allOf: [{$ref: A}]}``): no instance can ever be
        checked against them, and generated code would alias itself forever."""
        # what is checked is a subset of the definitions (cycles are made of them), so equal
        # sizes mean nothing new: a large spec calls this after each of its thousands of
        # schemas, and the set difference over every definition added up
        if len(self._cycles_checked) == len(self.definitions):
            return
        for key in sorted(set(self.definitions) - self._cycles_checked):
            cycle = self._cycle_from(key)
            reported = cycle is not None and bool(self._cycles_checked & set(cycle))
            self._cycles_checked.add(key)
            if cycle is None or reported:  # no cycle, or reported from another of its members
                continue
            self._cycles_checked.update(cycle)
            node = self.definitions[key].node
            where = node.meta.loc.child("$ref") if isinstance(node, RefNode) else node.meta.loc
            chain = " → ".join(_short_key(k, where.file) for k in cycle)
            self.diags.error(
                where,
                f"$ref cycle {chain} never reaches a schema",
                "references that end in a schema",
                hint="a recursive schema needs an object property or array items between "
                "its references",
            )

    def _cycle_from(self, start: str) -> list[str] | None:
        seen = {start}
        # depth-first along references that are not inside an object or array
        stack = [(t, [start]) for t in reversed(_direct_refs(self.definitions[start].node))]
        while stack:
            target, path = stack.pop()
            if target == start:
                return [*path, start]
            if target in seen or target not in self.definitions:
                continue
            seen.add(target)
            stack.extend(
                (t, [*path, target]) for t in reversed(_direct_refs(self.definitions[target].node))
            )
        return None

    def _ref(
        self, ref: Any, schema: dict[str, Any], loc: SourceLocation, ctx: _Context
    ) -> SchemaNode:
        meta = self._meta(schema, loc, consumed_extra={"$ref"})
        if not isinstance(ref, str):
            self.diags.error(
                loc.child("$ref"), f"$ref is {describe(ref)}", "a URI reference string"
            )
            return AnyNode(meta=meta)
        resolved = self.resolver.resolve(ref, loc, ctx)
        if self.ref_log is not None:
            self.ref_log.append(None if resolved is None else resolved[0])
        if resolved is None:
            return AnyNode(meta=meta)
        key, hint, target, target_ctx, target_loc = resolved
        if key not in self.definitions and key not in self._reserved:
            self._reserved.add(key)
            self._pending.append((key, hint, target, target_ctx, target_loc))
        return RefNode(meta=meta, target=key)

    # -- schemas ----------------------------------------------------------------------------

    def _lower(self, schema: Any, loc: SourceLocation, ctx: _Context, depth: int) -> SchemaNode:
        if depth > _MAX_DEPTH:
            self.diags.error(loc, f"schema nested more than {_MAX_DEPTH} levels deep", None)
            return AnyNode(meta=Meta(loc=loc))
        if schema is True:
            return AnyNode(meta=Meta(loc=loc))
        if schema is False:
            return NeverNode(meta=Meta(loc=loc))
        s = as_object(schema)
        if s is None and self.lenient and (schema is None or isinstance(schema, str)):
            # real specs leave a schema empty (``name:`` in YAML) or write its description where
            # the schema goes: no constraint is meant, so any value — said, not guessed at
            text = schema.strip() if isinstance(schema, str) else ""
            self.diags.warning(
                loc,
                f"schema is {describe(schema)}; read as any value"
                + (" described by that text" if text else ""),
                "a JSON Schema object or boolean",
                hint="write {} for any value" if not text else "write {description: ...}",
            )
            return AnyNode(meta=Meta(loc=loc, description=text or None))
        if s is None:
            self.diags.error(
                loc, f"schema is {describe(schema)}", "a JSON Schema object or boolean"
            )
            return AnyNode(meta=Meta(loc=loc))
        self._unread(s, loc)
        if self.legacy_ref and "$ref" in s:
            s = {"$ref": s["$ref"]}
        elif self.dialect == "openapi30" and "$ref" in s:
            s = self._reference_object(s, loc)
        if self._vocabulary_off:
            s = {k: v for k, v in s.items() if k not in self._vocabulary_off}
        s, ctx = self._enter(s, loc, ctx)
        if self.lenient and s.get("enum") == []:
            self.diags.warning(
                loc.child("enum"),
                "enum is empty; it is ignored",
                "at least one allowed value",
                hint="remove the enum, or list the allowed values",
            )
            s = {k: v for k, v in s.items() if k != "enum"}
        if s.keys() & _CHECK_KEYS:
            return self._checked(s, loc, ctx, depth)
        if (
            self.drop_extensions
            and self.dialect == "openapi30"
            and s.get("x-nullable") is True
            and "nullable" not in s
        ):
            # Swagger 2.0 has no nullable; its tools spell it x-nullable, with one meaning: an
            # API that sends null there (a container engine's does) must not fail its output
            at = loc.child("x-nullable")
            self.x_nullable[str(at)] = at
            s = {k: v for k, v in s.items() if k != "x-nullable"}
            s["nullable"] = True
        if s.get("nullable") is True and self.dialect != "openapi30" and self.lenient:
            # OpenAPI 3.0's keyword in a 3.1 (JSON Schema) document: its meaning is plain
            self.diags.warning(
                loc.child("nullable"),
                "nullable is OpenAPI 3.0's keyword; read as also allowing null",
                "type: [..., 'null'] in OpenAPI 3.1",
            )
        if (self.dialect == "openapi30" or self.lenient) and s.get("nullable") is True:
            inner = self._lower(
                {k: v for k, v in s.items() if k != "nullable"}, loc, ctx, depth + 1
            )
            if "enum" in s and None in s["enum"] and "type" not in s:
                return inner  # (a type narrows the enum's null away: 3.0.3 asks to list it)
            return UnionNode(
                meta=Meta(loc=loc), variants=(inner, NullNode(meta=Meta(loc=loc))), form="type"
            )
        if "$ref" in s:  # (after nullable: beside a $ref it widens the reference, too)
            rest = {k: v for k, v in s.items() if k not in _ANNOTATIONS and k != "$ref"}
            raw_types: Any = rest.get("type")
            types = cast("list[Any]", raw_types) if isinstance(raw_types, list) else []
            if self.lenient and "null" in types and len(types) > 1:
                # OpenAPI 3.1's spelling of 3.0's ``nullable: true`` beside a $ref (Mastodon's
                # spec, a 3.0 → 3.1 conversion): read as JSON Schema (all of them), null would
                # be refused whenever the referenced schema refuses it, and every answer with
                # that null fail; so it widens the reference, as nullable does, and says so
                self.diags.warning(
                    loc.child("type"),
                    "type beside $ref lists 'null': read as also allowing null, whatever the "
                    "referenced schema allows",
                    "anyOf: [{$ref: ...}, {type: 'null'}] for a reference that may be null",
                )
                kept = [t for t in types if t != "null"]
                inner = self._lower(
                    {**s, "type": kept[0] if len(kept) == 1 else kept}, loc, ctx, depth + 1
                )
                return UnionNode(
                    meta=Meta(loc=loc), variants=(inner, NullNode(meta=Meta(loc=loc))), form="type"
                )
            ref = self._ref(s["$ref"], s, loc, ctx)
            if not rest:
                return ref
            other = self._lower(rest, loc, ctx, depth + 1)
            return AllOfNode(meta=Meta(loc=loc), parts=(ref, other))
        if "allOf" in s:
            return self._all_of(s, loc, ctx, depth)
        for combinator in ("anyOf", "oneOf"):
            if combinator in s:
                return self._union(s, combinator, loc, ctx, depth)
        if "const" in s:
            return LiteralNode(meta=self._meta(s, loc), values=(freeze(s["const"]),), form="const")
        if "enum" in s:
            return self._enum(s, loc)
        types = self._types(s, loc)
        if types is None:
            return self._untyped(s, loc, ctx, depth)
        if len(types) == 1:
            return self._typed(types[0], s, loc, ctx, depth)
        variants = tuple(self._typed(t, s, loc, ctx, depth, annotate=False) for t in types)
        return UnionNode(meta=self._meta(s, loc), variants=variants, form="type")

    def _unread(self, s: dict[str, Any], loc: SourceLocation) -> None:
        """Nothing ignored in silence: a keyword toolbind reads but not in the draft in force
        (or never: draft 3's), and keywords a ``$ref`` replaces (drafts 4-7), are warnings —
        errors under ``--strict`` — once per place."""
        if self.dialect != "jsonschema":
            return
        draft = self.draft
        for key in s:
            # (a location made only for a keyword that is reported: this runs on every schema)
            if key not in NEVER_READ and (
                draft is None or key not in READ_ONLY_IN or draft in READ_ONLY_IN[key]
            ):
                continue
            where = loc.child(key)
            if str(where) in self._unread_reported:
                continue
            if key in NEVER_READ:
                self._unread_reported.add(str(where))
                self.diags.warning(
                    where,
                    f"{key} is JSON Schema draft 3's keyword; toolbind does not read it, so it "
                    "checks nothing",
                    f"{NEVER_READ[key]} (drafts 4 and later)",
                )
            elif draft is not None and key in READ_ONLY_IN and draft not in READ_ONLY_IN[key]:
                self._unread_reported.add(str(where))
                self.diags.warning(
                    where,
                    f"{key} is no keyword of JSON Schema {draft}; it is ignored",
                    SPELLED[key],
                    hint=f"name the draft it belongs to (draft=, $schema) or write {SPELLED[key]}",
                )
        if self.legacy_ref and "$ref" in s:
            beside = sorted(k for k in s if k != "$ref" and k not in _ANNOTATIONS and k != "id")
            where = loc.child("$ref")
            if beside and str(where) not in self._unread_reported:
                self._unread_reported.add(str(where))
                self.diags.warning(
                    where,
                    f"$ref replaces the keywords beside it in JSON Schema {draft or 'draft 7'}: "
                    f"{', '.join(beside)} check nothing",
                    "a $ref alone in its schema",
                    hint="wrap them: allOf: [{$ref: ...}, {...}], or use draft 2019-09 or later",
                )

    def _reference_object(self, s: dict[str, Any], loc: SourceLocation) -> dict[str, Any]:
        """OpenAPI 3.0 and Swagger 2.0: a ``$ref`` is a Reference Object, whose other fields
        "SHALL be ignored". Read beside it, a ``type`` can make the schema accept nothing (a
        real accounting API writes ``rate: {$ref: Amount, type: number}``, ``Amount`` an
        object): ignored as the spec says, with a located warning. Annotations stay, and so
        does ``nullable: true`` (or ``x-nullable``): it only widens, and an API that writes it
        sends null there."""
        keep = _ANNOTATIONS | {"$ref", "nullable", "x-nullable"}
        beside = sorted(k for k in s if k not in keep and not k.startswith("x-"))
        if not beside:
            return s
        where = loc.child("$ref")
        if str(where) not in self._unread_reported:
            self._unread_reported.add(str(where))
            self.diags.warning(
                where,
                "$ref replaces the fields beside it in OpenAPI 3.0 and Swagger 2.0: "
                f"{', '.join(beside)} ignored",
                "a $ref alone in its schema (annotations and nullable beside it are read)",
                hint="wrap them: allOf: [{$ref: ...}, {...}] (OpenAPI 3.1 reads them beside it)",
            )
        return {k: v for k, v in s.items() if k not in beside}

    def _enter(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context
    ) -> tuple[dict[str, Any], _Context]:
        """The context a schema object's keywords are read in (its ``$id`` starts a resource)."""
        ident = s.get(ctx.id_key)
        if isinstance(ident, str) and ctx.entered != str(loc):
            absolute, fragment = urldefrag(urljoin(ctx.uri, ident))
            if absolute and not fragment:
                ctx = replace(
                    ctx,
                    uri=absolute,
                    resource=s,
                    base=loc.pointer,
                    entered=str(loc),
                    dynamic=_pushed(ctx.dynamic, absolute),
                )
        ref = s.get("$dynamicRef")
        if isinstance(ref, str) and "$ref" not in s:
            s = {k: v for k, v in s.items() if k != "$dynamicRef"} | {"$ref": _DynamicRef(ref)}
        ref = s.get("$recursiveRef")
        if "$recursiveRef" in s and (self.dialect != "jsonschema" or self.openapi31):
            # OpenAPI 3.0 schemas have no $recursiveRef and 3.1's (2020-12) none either: followed,
            # "#" would be the whole API description
            s = {k: v for k, v in s.items() if k != "$recursiveRef"}
            where = loc.child("$recursiveRef")
            if ref is not None and str(where) not in self._unread_reported:
                self._unread_reported.add(str(where))
                self.diags.warning(
                    where,
                    "$recursiveRef is no keyword of OpenAPI schemas (draft 2019-09's); it is "
                    "ignored, so the value it names is not checked",
                    "$ref to the schema meant",
                )
        elif isinstance(ref, str) and self.draft in (None, "draft2019-09"):
            s = {k: v for k, v in s.items() if k != "$recursiveRef"}
            if "$ref" in s:  # both: each applies, as two parts of an allOf
                parts = [*(as_array(s.get("allOf")) or []), {"$ref": _RecursiveRef(ref)}]
                s = s | {"allOf": parts}
            else:
                s = s | {"$ref": _RecursiveRef(ref)}
        return s, ctx

    def _plan(
        self,
        schema: Any,
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
        seen: frozenset[str] = frozenset(),
    ) -> EvalPlan:
        """What ``schema`` evaluates of an instance, for ``unevaluated*`` (see ``EvalPlan``)."""
        s = as_object(schema)
        if s is None or depth > _MAX_DEPTH:
            return EvalPlan()
        if self._vocabulary_off:
            s = {k: v for k, v in s.items() if k not in self._vocabulary_off}
        s, ctx = self._enter(s, loc, ctx)

        def plan(value: Any, *tokens: str | int) -> EvalPlan:
            return self._plan(value, loc.child(*tokens), ctx, depth + 1, seen)

        def lower(value: Any, *tokens: str | int) -> SchemaNode:
            return self._lower(value, loc.child(*tokens), ctx, depth + 1)

        def listed(key: str) -> list[Any]:
            return as_array(s.get(key)) or []

        always = [plan(part, "allOf", i) for i, part in enumerate(listed("allOf"))]
        ref = s.get("$ref")
        if isinstance(ref, str):
            before = len(self.diags.items)
            resolved = self.resolver.resolve(ref, loc, ctx)
            del self.diags.items[before:]  # reported once, where the $ref is lowered
            if self.ref_log is not None:
                self.ref_log.append(None if resolved is None else resolved[0])
            if resolved is not None and resolved[0] not in seen:
                key, _, target, target_ctx, target_loc = resolved
                always.append(self._plan(target, target_loc, target_ctx, depth + 1, seen | {key}))
        branches = [
            (lower(v, key, i), plan(v, key, i))
            for key in ("anyOf", "oneOf")
            for i, v in enumerate(listed(key))
        ]
        dependent = [
            (name, plan(v, key, name))
            for key in ("dependentSchemas", "dependencies")
            for name, v in (as_object(s.get(key)) or {}).items()
            if as_array(v) is None
        ]
        tuple_items = as_array(s.get("items"))
        prefix = len(tuple_items) if tuple_items is not None else len(listed("prefixItems"))
        return EvalPlan(
            properties=tuple(as_object(s.get("properties")) or {}),
            patterns=tuple(as_object(s.get("patternProperties")) or {}),
            all_properties="additionalProperties" in s or "unevaluatedProperties" in s,
            prefix=prefix,
            all_items=("items" in s and tuple_items is None)
            or (tuple_items is not None and "additionalItems" in s)
            or "unevaluatedItems" in s,
            contains=lower(s["contains"], "contains") if "contains" in s else None,
            always=tuple(always),
            branches=tuple(branches),
            if_=(lower(s["if"], "if"), plan(s["if"], "if")) if "if" in s else None,
            then=plan(s["then"], "then") if "if" in s and "then" in s else None,
            else_=plan(s["else"], "else") if "if" in s and "else" in s else None,
            dependent=tuple(dependent),
        )

    def _checked(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        # With patternProperties, additionalProperties only covers keys no pattern matches, so
        # both are checked together and the base type allows every extra key.
        moved = _CHECK_KEYS | (
            {"additionalProperties"} if "patternProperties" in s else frozenset[str]()
        )
        base = self._lower({k: v for k, v in s.items() if k not in moved}, loc, ctx, depth + 1)
        checks: list[Check] = []

        def sub(key: str, *tokens: str) -> SchemaNode:
            value: Any = s[key]
            for t in tokens:
                value = value[t]
            return self._lower(value, loc.child(key, *tokens), ctx, depth + 1)

        if "not" in s:
            checks.append(NotCheck(schema=sub("not")))
        if "if" in s and ("then" in s or "else" in s):
            checks.append(
                ConditionalCheck(
                    if_=sub("if"),
                    then=sub("then") if "then" in s else None,
                    else_=sub("else") if "else" in s else None,
                )
            )
        if "contains" in s:
            low = self._count(s, "minContains", loc)
            checks.append(
                ContainsCheck(
                    schema=sub("contains"),
                    min_contains=1 if low is None else low,
                    max_contains=self._count(s, "maxContains", loc),
                )
            )
        requires: list[tuple[str, tuple[str, ...]]] = []
        schemas: list[tuple[str, SchemaNode]] = []
        for key in ("dependentRequired", "dependentSchemas", "dependencies"):
            table = as_object(s.get(key))
            if key in s and table is None:
                self.diags.error(loc.child(key), f"{key} is {describe(s[key])}", "an object")
                continue
            for name, value in (table or {}).items():
                names = as_array(value)
                if names is not None and key != "dependentSchemas":
                    if not all(isinstance(n, str) for n in names):
                        self.diags.error(
                            loc.child(key, name),
                            f"{key} entry is {describe(value)}",
                            "an array of property names",
                        )
                        continue
                    requires.append((name, tuple(str(n) for n in names)))
                elif key != "dependentRequired":
                    schemas.append((name, sub(key, name)))
                else:
                    self.diags.error(
                        loc.child(key, name),
                        f"dependentRequired entry is {describe(value)}",
                        "an array of property names",
                    )
        if requires:
            checks.append(DependentRequiredCheck(requires=tuple(requires)))
        if schemas:
            checks.append(DependentSchemasCheck(schemas=tuple(schemas)))
        if "propertyNames" in s:
            checks.append(PropertyNamesCheck(schema=sub("propertyNames")))
        patterns = as_object(s.get("patternProperties"))
        if "patternProperties" in s and patterns is None:
            self.diags.error(
                loc.child("patternProperties"),
                f"patternProperties is {describe(s['patternProperties'])}",
                "an object mapping regular expressions to schemas",
            )
        elif patterns is not None:
            declared = tuple(as_object(s.get("properties")) or {})
            for p in patterns:
                self._valid_regex(p, loc.child("patternProperties", p), "patternProperties key")
            checks.append(
                PatternPropertiesCheck(
                    patterns=tuple((p, sub("patternProperties", p)) for p in patterns),
                    declared=declared,
                    additional=sub("additionalProperties") if "additionalProperties" in s else None,
                )
            )
        for kind in ("properties", "items"):
            key = "unevaluatedProperties" if kind == "properties" else "unevaluatedItems"
            if key in s:
                rest = {k: v for k, v in s.items() if k != key}
                checks.append(
                    UnevaluatedCheck(
                        kind=kind, schema=sub(key), plan=self._plan(rest, loc, ctx, depth + 1)
                    )
                )
        if not checks:
            return base
        return CheckedNode(meta=base.meta, base=base, checks=tuple(checks))

    def _types(self, s: dict[str, Any], loc: SourceLocation) -> list[str] | None:
        if "type" not in s:
            return None
        raw = s["type"]
        listed = as_array(raw)
        names: list[Any] = listed if listed is not None else [raw]
        out: list[str] = []
        for i, name in enumerate(names):
            where = loc.child("type", i) if listed is not None else loc.child("type")
            if not isinstance(name, str):
                self.diags.error(
                    where, f"type is {describe(name)}", f"one of {', '.join(JSON_TYPES)}"
                )
                continue
            if self.dialect == "bfcl" and name.lower() in BFCL_TYPES:
                mapped = BFCL_TYPES[name.lower()]
                if mapped is None:
                    return None
                name = mapped
            elif self.dialect == "bfcl":
                name = name.lower()
            elif self.lenient and name not in JSON_TYPES:
                # one bad type name must not refuse a whole real spec: a name with no reading
                # constrains nothing (any value), said where it is; --strict refuses it
                found = _lenient_type(name)
                alias = found if found is not False else None
                # a real API's own spec says ``type: int``: one obvious meaning, read so
                self.diags.warning(
                    where,
                    f"type {name!r} is not a JSON Schema type; read as "
                    + (repr(alias) if alias else "any value (no type)"),
                    f"one of {', '.join(JSON_TYPES)}",
                    hint=f"write {alias!r}" if alias else "leave out 'type'",
                )
                if alias is None:
                    return None
                name = alias
            if name not in JSON_TYPES:
                self.diags.error(
                    where,
                    f"unknown type {name!r}",
                    f"one of {', '.join(JSON_TYPES)}",
                    hint=_type_hint(name),
                )
                continue
            if name not in out:
                out.append(name)
        if not out:
            return None
        return out

    def _untyped(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        family = set(s) & (_OBJECT_KEYS | _ARRAY_KEYS | _STRING_KEYS | _NUMBER_KEYS)
        if self.lenient and family and family <= _OBJECT_KEYS and "properties" in family:
            # OpenAPI: ``properties`` without ``type`` (Discourse writes 30 of its 44 bodies so)
            # means an object to every generator; read as JSON Schema, a required body would
            # accept "hello", 42 or null, and a body would not be spread into fields
            self.diags.warning(
                loc.child("properties"),
                "properties without type: read as type: object",
                "type: object beside properties (without it, JSON Schema lets any non-object "
                "value through)",
            )
            return self._typed("object", s, loc, ctx, depth)
        if family:
            # Without ``type``, each keyword constrains only the instances of its own type
            # (``properties`` says nothing about a string): every JSON type stays allowed, each
            # with the keywords that apply to it. Tool parameter roots are objects by contract
            # and are read with ``type: object`` by the frontends.
            variants = tuple(
                self._typed(t, s, loc, ctx, depth, annotate=False)
                for t in ("null", "boolean", "object", "array", "number", "string")
            )
            return UnionNode(meta=self._meta(s, loc), variants=variants, form="type")
        return AnyNode(meta=self._meta(s, loc))

    def _typed(
        self,
        name: str,
        s: dict[str, Any],
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
        *,
        annotate: bool = True,
    ) -> SchemaNode:
        meta = self._meta(s, loc) if annotate else Meta(loc=loc)
        match name:
            case "null":
                return NullNode(meta=meta)
            case "boolean":
                return BooleanNode(meta=meta)
            case "integer":
                return IntegerNode(meta=meta, bounds=self._bounds(s, loc))
            case "number":
                return NumberNode(meta=meta, bounds=self._bounds(s, loc))
            case "string":
                return StringNode(
                    meta=meta,
                    min_length=self._count(s, "minLength", loc),
                    max_length=self._count(s, "maxLength", loc),
                    pattern=self._pattern(s, loc),
                    format=self._string(s, "format", loc),
                )
            case "array":
                return self._array(s, meta, loc, ctx, depth)
            case _:
                return self._object(s, meta, loc, ctx, depth)

    def _object(
        self, s: dict[str, Any], meta: Meta, loc: SourceLocation, ctx: _Context, depth: int
    ) -> ObjectNode:
        props_raw = s.get("properties", {})
        props_map = as_object(props_raw)
        if props_map is None:
            self.diags.error(
                loc.child("properties"),
                f"properties is {describe(props_raw)}",
                "an object mapping names to schemas",
            )
            props_map = {}
        required_raw = s.get("required", [])
        required_list = as_array(required_raw)
        required: set[str] = set()
        if required_list is not None:
            for i, r in enumerate(required_list):
                if isinstance(r, str):
                    required.add(r)
                else:
                    self.diags.error(
                        loc.child("required", i),
                        f"required entry is {describe(r)}",
                        "a property name string",
                    )
        elif isinstance(required_raw, bool) and self.dialect == "bfcl":
            pass
        elif isinstance(required_raw, bool) and self.lenient:
            pass  # draft 3's form: the parent object read it (and said so) below
        else:
            self.diags.error(
                loc.child("required"),
                f"required is {describe(required_raw)}",
                "an array of property names",
            )
        if self.lenient:
            # draft 3's boolean ``required`` inside a property (still common in real specs):
            # ``true`` means this object requires the property, ``false`` nothing
            for pname, pschema in props_map.items():
                pobj = as_object(pschema)
                flag: object = pobj.get("required") if pobj is not None else None
                if isinstance(flag, bool):
                    if flag:
                        required.add(pname)
                    self.diags.warning(
                        loc.child("properties", pname, "required"),
                        f"required is a boolean {str(flag).lower()} (JSON Schema draft 3's form); "
                        + (f"read as: the object requires {pname!r}" if flag else "ignored"),
                        "the property's name in the object's required array",
                    )
        if self.lenient and required:
            # OpenAPI: a required readOnly property is required in responses only, a writeOnly
            # one in requests only. A component serves both, so a Call would need the server's
            # ``id`` (the spec's own request examples refused) and an Output a password the API
            # never returns: such a name is read as optional, and said
            one_way = sorted(
                name
                for name in required
                if (pobj := as_object(props_map.get(name))) is not None
                and (pobj.get("readOnly") is True or pobj.get("writeOnly") is True)
            )
            if one_way:
                required.difference_update(one_way)
                self.diags.warning(
                    loc.child("required"),
                    f"required lists readOnly/writeOnly {', '.join(one_way)}: read as optional "
                    "(OpenAPI requires a readOnly property in responses only, a writeOnly one "
                    "in requests only, and this schema is read for both)",
                    "required naming properties required both ways",
                )
        props: list[Property] = []
        for pname, pschema in props_map.items():
            node = self._lower(pschema, loc.child("properties", pname), ctx, depth + 1)
            props.append(Property(name=pname, schema=node, required=pname in required))
        additional: SchemaNode | None = None
        if "additionalProperties" in s:
            ap = s["additionalProperties"]
            if ap is not True and ap != {}:
                additional = self._lower(ap, loc.child("additionalProperties"), ctx, depth + 1)
        # Required names without a property schema still constrain the instance; one that looks
        # like a declared property misspelt (``username`` beside ``userName``) is almost surely a
        # typo that makes every valid call need a field nobody will send: said, not guessed at.
        declared = [p.name for p in props]
        for i, name in enumerate(required_list or []):
            if not isinstance(name, str) or name in props_map:
                continue
            close = [d for d in declared if d.lower() == name.lower()] or difflib.get_close_matches(
                name, declared, n=1, cutoff=0.85
            )
            if close:
                self.diags.warning(
                    loc.child("required", i),
                    f"required names {name!r}, a property that is not declared; it is required "
                    "with any value",
                    "the name of a declared property",
                    hint=f"did you mean {close[0]!r}?",
                )
        for name in sorted(required - {p.name for p in props}):
            props.append(
                Property(
                    name=name,
                    schema=additional
                    if additional is not None
                    else AnyNode(meta=Meta(loc=loc.child("required"))),
                    required=True,
                )
            )
        return ObjectNode(
            meta=meta,
            properties=tuple(props),
            additional=additional,
            min_properties=self._count(s, "minProperties", loc),
            max_properties=self._count(s, "maxProperties", loc),
        )

    def _array(
        self, s: dict[str, Any], meta: Meta, loc: SourceLocation, ctx: _Context, depth: int
    ) -> ArrayNode:
        items: SchemaNode | None = None
        prefix: list[SchemaNode] = []
        raw_items = s.get("items")
        tuple_items = as_array(raw_items)
        if tuple_items is not None:  # draft 7 tuple form
            for i, sub in enumerate(tuple_items):
                prefix.append(self._lower(sub, loc.child("items", i), ctx, depth + 1))
            if "additionalItems" in s:
                items = self._lower(
                    s["additionalItems"], loc.child("additionalItems"), ctx, depth + 1
                )
        else:
            prefix_items = as_array(s.get("prefixItems"))
            if prefix_items is not None:
                for i, sub in enumerate(prefix_items):
                    prefix.append(self._lower(sub, loc.child("prefixItems", i), ctx, depth + 1))
            if raw_items is not None:
                items = self._lower(raw_items, loc.child("items"), ctx, depth + 1)
        if isinstance(items, AnyNode) and items.meta.description is None:
            items = None
        return ArrayNode(
            meta=meta,
            items=items,
            prefix_items=tuple(prefix),
            min_items=self._count(s, "minItems", loc),
            max_items=self._count(s, "maxItems", loc),
            unique_items=s.get("uniqueItems") is True,
        )

    def _enum(self, s: dict[str, Any], loc: SourceLocation) -> SchemaNode:
        raw = s["enum"]
        meta = self._meta(s, loc)
        values = as_array(raw)
        if values is None:
            self.diags.error(
                loc.child("enum"), f"enum is {describe(raw)}", "an array of allowed values"
            )
            return AnyNode(meta=meta)
        if not values:
            self.diags.warning(
                loc.child("enum"),
                "enum is empty, so no value is allowed",
                "at least one allowed value",
                hint="remove the enum to allow any value",
            )
            return NeverNode(meta=meta)
        # ``type`` narrows an enum: ``{type: string, enum: ["a", 1]}`` allows only "a".
        types = self._types(s, loc) if "type" in s else None
        if self.lenient and types is not None and "string" in types:
            values = self._scalars_as_text(values, types, loc)
        kept: list[str] = []
        for v in values:
            if types is None or _json_type_matches(v, types):
                text = freeze(v)
                if text not in kept:
                    kept.append(text)
        if not kept:
            declared = " or ".join(types or ())
            self.diags.warning(
                loc.child("enum"),
                f"no enum value has the declared type ({declared}), so no {declared} value is "
                "allowed",
                f"enum values of type {declared}",
                hint="list values of the declared type, or change the type",
            )
            return NeverNode(meta=meta)
        return LiteralNode(meta=meta, values=tuple(kept), form="enum")

    def _scalars_as_text(
        self, values: list[Any], types: list[str], loc: SourceLocation
    ) -> list[Any]:
        """``{type: string, enum: [4.1, 4, 3]}`` or ``enum: [true, false]``: YAML reads an
        unquoted ``4.1`` as a number and ``true`` as a boolean, and neither is a string, so the
        enum allowed nothing (a real fintech API's version and indicator fields: every response
        carrying them failed). Each is read as its JSON text (``'4.1'``, ``'true'``), unless the
        type allows it as it is, with a warning naming what was read."""

        def text(v: Any) -> Any:
            if not isinstance(v, bool | int | float) or _json_type_matches(v, types):
                return v
            if isinstance(v, bool):
                return "true" if v else "false"
            return repr(v) if isinstance(v, float) else str(v)

        read = [text(v) for v in values]
        changed = [(v, t) for v, t in zip(values, read, strict=True) if t is not v]
        if not changed:
            return values
        kinds = sorted({"booleans" if isinstance(v, bool) else "numbers" for v, _ in changed})
        first, first_text = changed[0]
        kind = "a boolean" if isinstance(first, bool) else "a number"
        language = "JSON" if loc.file.lower().endswith((".json", ".jsonl")) else "YAML"
        self.diags.warning(
            loc.child("enum"),
            f"enum value(s) {', '.join(t for _, t in changed)} are {' and '.join(kinds)} "
            f"under type: string; read as the string(s) "
            f"{', '.join(repr(t) for _, t in changed)}",
            "strings",
            hint=f"quote them: an unquoted {first_text} in {language} is {kind}, not a string",
        )
        return read

    def _union(
        self, s: dict[str, Any], combinator: str, loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        raw = s[combinator]
        meta = self._meta(s, loc)
        subs = as_array(raw)
        if not subs:
            self.diags.error(
                loc.child(combinator),
                f"{combinator} is {describe(raw)}",
                "a non-empty array of schemas",
            )
            return AnyNode(meta=meta)
        variants = tuple(
            self._lower(sub, loc.child(combinator, i), ctx, depth + 1) for i, sub in enumerate(subs)
        )
        if self.lenient and "discriminator" in s:
            read = self._discriminated(s, subs, variants, combinator, loc, ctx, depth)
            if read is not variants:  # (read into the branches: not kept as an annotation,
                # whose mapping names the spec's components, which the schemas written don't have)
                variants = read
                meta = self._meta({k: v for k, v in s.items() if k != "discriminator"}, loc)
        form: Literal["oneOf", "anyOf"] = "oneOf" if combinator == "oneOf" else "anyOf"
        if self.lenient and form == "oneOf" and "discriminator" not in s:
            open_branches = [
                i for i, sub in enumerate(subs) if self._accepts_empty_object(sub, ctx)
            ]
            if len(open_branches) > 1:
                # Vonage's SMS response is oneOf [SMS, Error], two objects that require nothing:
                # every response matched both, so every call "failed" on the API's own answer
                form = "anyOf"
                self.diags.warning(
                    loc.child(combinator),
                    f"oneOf branches {', '.join(map(str, open_branches))} require nothing: an "
                    "object they all accept ({} and every object with none of their properties) "
                    "matches more than one, and oneOf refuses it; read as anyOf (the first "
                    "branch that matches)",
                    "branches that exclude each other (a required property, a const/enum, a "
                    "discriminator)",
                    hint="write anyOf, or make the branches exclusive",
                )
            elif (nested := self._nested_branches(subs, ctx)) is not None:
                # Chroma's metadata values are oneOf [boolean, integer, number, string, ...] (a
                # Rust enum as utoipa writes it): an integer is a number too, so every integer
                # matched two branches and was refused, in Calls and in the API's own answers
                inner, outer = nested
                form = "anyOf"
                self.diags.warning(
                    loc.child(combinator),
                    f"oneOf branch {inner} is within branch {outer}: every value branch {inner} "
                    "accepts matches both, and oneOf refuses it, so no value could ever be read "
                    f"as branch {inner}; read as anyOf (the first branch that matches)",
                    "branches that exclude each other (an integer is also a number: type integer "
                    "beside type number matches every integer twice)",
                    hint="write anyOf, or drop or narrow the wider branch",
                )
        union = UnionNode(meta=meta, variants=variants, form=form)
        if self.lenient and "type" in s:
            s = self._type_beside_branches(s, subs, combinator, loc, ctx)
        rest = {k: v for k, v in s.items() if k not in _ANNOTATIONS and k != combinator}
        if not rest:
            return union
        base = self._lower(rest, loc, ctx, depth + 1)
        if isinstance(base, AnyNode):
            return union
        return AllOfNode(meta=Meta(loc=loc), parts=(base, union))

    def _type_beside_branches(
        self,
        s: dict[str, Any],
        subs: list[Any],
        combinator: str,
        loc: SourceLocation,
        ctx: _Context,
    ) -> dict[str, Any]:
        """``s`` without its ``type`` when that type excludes branches of its ``oneOf``/``anyOf``
        which declare their own: Label Studio's filter value is ``type: object`` beside
        ``oneOf [string, integer, number, boolean, object, object]`` (drf-spectacular writes the
        serializer field's type beside the union), so every number was refused — in the Calls
        of a number filter, which the API needs — while no author writes branches that can
        never match. Read as the branches say, with a warning; ``s`` as it is otherwise."""
        outer = _schema_types({"type": s["type"]})
        if outer is None:
            return s
        excluded: list[str] = []
        for i, sub in enumerate(subs):
            read = self._dereferenced(sub, ctx)
            types = _schema_types(read[0]) if read is not None else None
            if types is not None and not any(
                t in outer
                or (t == "integer" and "number" in outer)
                or (t == "number" and "integer" in outer)
                for t in types
            ):
                excluded.append(f"{i} ({' or '.join(sorted(types))})")
        if not excluded:
            return s
        declared = " or ".join(sorted(outer))
        self.diags.warning(
            loc.child("type"),
            f"type {declared} beside {combinator} excludes branch(es) {', '.join(excluded)}: "
            "no value could match them; read as the branches' own types (the type beside them "
            "left out)",
            f"a type that allows every branch of {combinator}",
            hint=f"drop the type beside {combinator}, or widen it to the branches' types",
        )
        return {k: v for k, v in s.items() if k != "type"}

    def _discriminated(
        self,
        s: dict[str, Any],
        subs: list[Any],
        variants: tuple[SchemaNode, ...],
        combinator: str,
        loc: SourceLocation,
        ctx: _Context,
        depth: int,
    ) -> tuple[SchemaNode, ...]:
        """OpenAPI's ``discriminator`` on a ``oneOf``/``anyOf`` of ``$ref``s: the value of
        ``propertyName`` picks the branch — the ``mapping`` keys naming it, else its schema's
        name. JSON Schema has no such keyword, and real specs leave that property an open
        string in every branch (Ory Kratos' login bodies), so every body matched several
        branches of a ``oneOf`` and was refused: each branch is read with its property
        required to be one of its values (``allOf: [{$ref}, {required, properties: {enum}}]``,
        in the models and in the schema a model sees). A discriminator that can't be read so
        (a branch that is no ``$ref``, a mapping to no branch) is said, and left an
        annotation."""
        where = loc.child("discriminator")
        disc = as_object(s["discriminator"])
        name = disc.get("propertyName") if disc is not None else None
        if disc is None or not isinstance(name, str):
            self.diags.warning(
                where,
                f"discriminator is {describe(s['discriminator'])}; it is ignored",
                "an object with propertyName (a string)",
            )
            return variants
        refs = [
            cast("dict[str, Any]", sub).get("$ref") if isinstance(sub, dict) else None
            for sub in subs
        ]
        if not all(isinstance(r, str) for r in refs):
            self.diags.warning(
                where,
                f"discriminator on a {combinator} whose branches are not all $refs; it is "
                "ignored, so the branches are told apart by their schemas alone",
                f"each branch of the {combinator} a $ref (the discriminator's values name schemas)",
            )
            return variants
        targets = [cast("str", r) for r in refs]
        values: list[list[str]] = [[] for _ in targets]
        raw_mapping = disc.get("mapping", {})
        mapping = as_object(raw_mapping)
        if mapping is None:
            mapping = {}
            self.diags.warning(
                where.child("mapping"),
                f"mapping is {describe(raw_mapping)}; it is ignored",
                "an object: discriminator value → schema name or $ref",
            )

        def last(ref: str) -> str:
            return ref.rsplit("/", 1)[-1]

        for key, target in mapping.items():
            value = str(key)  # (a YAML key 1 is the discriminator value "1")
            if not isinstance(target, str):
                self.diags.warning(
                    where.child("mapping", value),
                    f"discriminator mapping {value!r} is {describe(target)}; it picks no branch",
                    "a schema name or $ref (a string)",
                )
                continue
            bare = "/" not in target and "#" not in target  # (a name: ``io.k8s.Pod`` too)
            hits = [
                i
                for i, ref in enumerate(targets)
                if ref.removeprefix("./") == target.removeprefix("./")
                or (bare and last(ref) == target)
            ]
            if len(hits) != 1:
                self.diags.warning(
                    where.child("mapping", value),
                    f"discriminator mapping {value!r} → {target!r} names "
                    + ("no branch" if not hits else "several branches")
                    + f" of the {combinator}; that value picks no branch",
                    f"a schema name or $ref that is one of the {combinator}'s branches",
                )
                continue
            values[hits[0]].append(value)
        for i, ref in enumerate(targets):
            # OpenAPI's implicit mapping (the schema's name), for a branch whose property
            # allows that name: open, or an enum of every branch's name (Vonage's reports). One
            # that fixes it to other values (openai's ``role: {enum: [user]}`` in
            # ``ChatCompletionRequestUserMessage``) is told apart by its own value already
            if values[i]:
                continue
            allowed = self._property_values(subs[i], name, loc, ctx)
            if allowed == "open" or (isinstance(allowed, tuple) and last(ref) in allowed):
                values[i].append(last(ref))
            elif allowed is None:
                self.diags.note(
                    loc.child(combinator, i),
                    f"no discriminator value is known for this branch ({ref}): no mapping names "
                    f"it and its schema does not declare {name!r}; it is told apart by its "
                    "schema alone",
                )
        seen: set[str] = set()
        for vs in values:
            if seen & set(vs):
                self.diags.warning(
                    where,
                    "discriminator values pick more than one branch; it is ignored",
                    "each value naming one branch",
                )
                return variants
            seen.update(vs)
        out: list[SchemaNode] = []
        for i, (variant, vs) in enumerate(zip(variants, values, strict=True)):
            if not vs:
                out.append(variant)
                continue
            tag = self._lower(
                {"type": "object", "required": [name], "properties": {name: {"enum": vs}}},
                where,
                ctx,
                depth + 1,
            )
            out.append(AllOfNode(meta=Meta(loc=loc.child(combinator, i)), parts=(variant, tag)))
        return tuple(out)

    def _says_object(self, schema: Any, ctx: _Context, depth: int = 0) -> bool:
        """Whether the raw ``schema`` (through ``$ref``s, quietly: a bad one is said where it is
        lowered) declares ``type: object``."""
        s = as_object(schema)
        if s is None or depth > 16:
            return False
        if "$ref" in s:
            resolved = self._quiet_resolve(s["$ref"], ctx)
            return resolved is not None and self._says_object(resolved[0], resolved[1], depth + 1)
        return s.get("type") == "object"

    def _quiet_resolve(
        self, ref: Any, ctx: _Context
    ) -> tuple[Any, _Context, SourceLocation] | None:
        """A ``$ref``'s target, its context and place, or None; nothing said (a look ahead of
        lowering: a bad ``$ref`` is said once, where the schema holding it is lowered)."""
        if not isinstance(ref, str):
            return None
        with self.resolver.quietly():
            resolved = self.resolver.resolve(ref, SourceLocation(file=ctx.file), ctx)
        return None if resolved is None else (resolved[2], resolved[3], resolved[4])

    def _accepts_empty_object(self, schema: Any, ctx: _Context, depth: int = 0) -> bool:
        """Whether the raw ``schema`` surely accepts ``{}``: an object schema (or one without
        ``type``) that requires nothing, through ``$ref``s and ``allOf``; False when unsure. A
        ``$ref`` that does not resolve is False here and said where the branch is lowered."""
        if schema is True:
            return True
        s = as_object(schema)
        if s is None or depth > 16:
            return False
        if "$ref" in s:
            resolved = self._quiet_resolve(s["$ref"], ctx)
            return resolved is not None and self._accepts_empty_object(
                resolved[0], resolved[1], depth + 1
            )
        types = s.get("type", "object")
        if types != "object" and not (isinstance(types, list) and "object" in types):
            return False
        if s.get("required") or s.get("minProperties"):
            return False
        if any(k in s for k in ("enum", "const", "not", "anyOf", "oneOf", "if")):
            return False  # (unsure: they may exclude {})
        return all(
            self._accepts_empty_object(part, ctx, depth + 1)
            for part in as_array(s.get("allOf")) or []
        )

    def _nested_branches(self, subs: list[Any], ctx: _Context) -> tuple[int, int] | None:
        """The first pair (i, j) of raw ``oneOf`` branches where every instance branch i accepts,
        branch j surely accepts too (``_within``); None when no branch is surely within another.
        Such a branch can never match alone: oneOf refuses every value of it."""
        read = [(i, r) for i, sub in enumerate(subs) if (r := self._dereferenced(sub, ctx))]
        outers = [(j, r) for j, r in read if _plain_type(r[0]) is not None]
        for i, (a, a_ctx) in read:
            for j, (b, b_ctx) in outers:
                if i != j and self._within(a, a_ctx, b, b_ctx):
                    return i, j
        return None

    def _dereferenced(
        self, schema: Any, ctx: _Context, depth: int = 0
    ) -> tuple[dict[str, Any], _Context] | None:
        """The raw ``schema`` with its ``$ref``s followed while it is nothing but one (beside
        annotations), and its context; None when one does not resolve or it is no object."""
        s = as_object(schema)
        if s is None or depth > 16:
            return None
        if "$ref" not in s:
            return s, ctx
        if set(s) - _ANNOTATIONS - {"$ref"}:
            return None  # (unsure: nullable or a type beside it widens it, other keywords narrow)
        resolved = self._quiet_resolve(s["$ref"], ctx)
        return None if resolved is None else self._dereferenced(*resolved[:2], depth + 1)

    def _within(
        self, a: dict[str, Any], a_ctx: _Context, b: dict[str, Any], b_ctx: _Context, depth: int = 0
    ) -> bool:
        """Whether every instance the raw schema ``a`` accepts, ``b`` surely accepts too: ``b``
        is types and nothing else (``_plain_type``; an array's ``items`` too) and ``a``'s types
        are among them (an integer is a number) — its other keywords only narrow it; False when
        unsure. (Lenient readings only: ``format`` is an annotation in the specs read so.)"""
        a_types, b_types = _schema_types(a), _plain_type(b)
        if a_types is None or b_types is None or depth > 16:
            return False
        if not all(t in b_types or (t == "integer" and "number" in b_types) for t in a_types):
            return False
        if "array" not in a_types or "items" not in b:
            return True
        b_items = self._dereferenced(b["items"], b_ctx)
        a_items = None if "prefixItems" in a else self._dereferenced(a.get("items"), a_ctx)
        if b_items is None or _plain_type(b_items[0]) is None or a_items is None:
            return b["items"] is True
        return self._within(*a_items, *b_items, depth + 1)

    def _property_values(
        self, schema: Any, name: str, loc: SourceLocation, ctx: _Context, depth: int = 0
    ) -> tuple[Any, ...] | Literal["open"] | None:
        """What the raw ``schema`` (a branch) lets property ``name`` be: ``"open"`` when it
        declares it without ``enum``/``const``, the values when it lists them (through
        ``allOf`` parts and ``$ref``s, its own or its property's), None when it does not say
        (read before the branch's definition is lowered: definitions are lowered later)."""
        s = as_object(schema)
        if s is None or depth > 16:
            return None
        if "$ref" in s:
            resolved = self._quiet_resolve(s["$ref"], ctx)
            if resolved is None:
                return None
            target, target_ctx, target_loc = resolved
            return self._property_values(target, name, target_loc, target_ctx, depth + 1)
        found: list[tuple[Any, ...] | Literal["open"] | None] = []
        prop = (as_object(s.get("properties")) or {}).get(name)
        if prop is not None:
            found.append(self._listed_values(prop, loc.child("properties", name), ctx, depth))
        for i, part in enumerate(as_array(s.get("allOf")) or []):
            found.append(self._property_values(part, name, loc.child("allOf", i), ctx, depth + 1))
        listed = [f for f in found if isinstance(f, tuple)]
        return listed[0] if listed else "open" if "open" in found else None

    def _listed_values(
        self, prop: Any, loc: SourceLocation, ctx: _Context, depth: int
    ) -> tuple[Any, ...] | Literal["open"] | None:
        """A property schema's ``enum``/``const`` values (behind a ``$ref`` too), ``"open"``
        when it lists none."""
        p = as_object(prop)
        if p is None or depth > 16:
            return None
        if "$ref" in p:
            resolved = self._quiet_resolve(p["$ref"], ctx)
            if resolved is None:
                return None
            target, target_ctx, target_loc = resolved
            return self._listed_values(target, target_loc, target_ctx, depth + 1)
        if "const" in p:
            return (p["const"],)
        enum = as_array(p.get("enum"))
        return tuple(enum) if enum is not None else "open"

    def _all_of(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        raw = s["allOf"]
        meta = self._meta(s, loc)
        subs = as_array(raw)
        if not subs:
            self.diags.error(
                loc.child("allOf"), f"allOf is {describe(raw)}", "a non-empty array of schemas"
            )
            return AnyNode(meta=meta)
        if self.lenient:
            # a part with ``properties`` and no ``type`` beside one that says object (Lago's
            # ``allOf: [{$ref: Base}, {properties: ...}]``) is an object already: not said.
            # (The parts' $refs are looked through only when a part lacks its type.)
            typed = [_typed_object(sub) for sub in subs]
            if any(t is not sub for t, sub in zip(typed, subs, strict=True)) and (
                s.get("type") == "object" or any(self._says_object(sub, ctx) for sub in subs)
            ):
                subs = typed
        parts: list[SchemaNode] = [
            self._lower(sub, loc.child("allOf", i), ctx, depth + 1) for i, sub in enumerate(subs)
        ]
        rest = {k: v for k, v in s.items() if k not in _ANNOTATIONS and k != "allOf"}
        if rest:
            parts.insert(0, self._lower(rest, loc, ctx, depth + 1))
        parts = [p for p in parts if not (isinstance(p, AnyNode) and p.meta.extra is None)]
        if not parts:
            return AnyNode(meta=meta)
        if len(parts) == 1 and not isinstance(parts[0], RefNode):
            return _with_meta(parts[0], meta)
        if all(isinstance(p, ObjectNode) for p in parts):
            return _merge_objects([p for p in parts if isinstance(p, ObjectNode)], meta)
        return AllOfNode(meta=meta, parts=tuple(parts))

    # -- small readers ----------------------------------------------------------------------

    def _meta(
        self, s: dict[str, Any], loc: SourceLocation, consumed_extra: set[str] | None = None
    ) -> Meta:
        title = s.get("title")
        description = s.get("description")
        extra: dict[str, Any] = {}
        # (one set and the flags read once: every schema of a spec passes here)
        skip = _NOT_EXTRA | consumed_extra if consumed_extra else _NOT_EXTRA
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

    def _pattern(self, s: dict[str, Any], loc: SourceLocation) -> str | None:
        pattern = self._string(s, "pattern", loc)
        if pattern is None:
            return None
        read = self._inline_flags(pattern, loc.child("pattern")) if self.lenient else None
        if read is not None:
            return read
        if not self._valid_regex(pattern, loc.child("pattern"), "pattern"):
            return None
        return pattern

    def _inline_flags(self, pattern: str, loc: SourceLocation) -> str | None:
        """``(?i)^(all|none)$`` (PayPal's: Java's and Python's inline flags, which ECMA-262 has
        not) read as ES2025's modifier group over the rest, ``(?i:^(all|none)$)``, and said;
        None when ``pattern`` does not start so or is ECMA-262 as it is. The spec failed to
        compile on such a pattern. (OpenAPI's, ``lenient``: a JSON Schema's ``pattern`` agrees
        with ``format: regex``, which refuses it.)"""
        import regex  # (as in _valid_regex)

        lead = _INLINE_FLAGS.match(pattern)
        if lead is None or len(set(lead[1])) != len(lead[1]):
            return None
        try:
            compile_pattern(pattern)
            return None
        except regex.error:
            pass
        read = f"(?{lead[1]}:{pattern[lead.end() :]})"
        try:
            compile_pattern(read)
        except regex.error:
            return None
        self.diags.warning(
            loc,
            f"pattern {pattern!r} starts with {lead[0]!r}, an inline flag group ECMA-262 has not "
            f"(Java's, Python's); read as {read!r}, the flags over the whole pattern",
            "an ECMA-262 regular expression",
            hint=f"write {read!r} (ECMA-262's modifier group)",
        )
        return read

    def _valid_regex(self, pattern: str, loc: SourceLocation, what: str) -> bool:
        """Whether ``pattern`` is an ECMA-262 regex the runtime can use; reports it if not."""
        import regex  # (here, not at the top: the ``regex`` module costs a tenth of toolbind's import)

        try:
            compile_pattern(pattern)  # ECMA-262's reading (``[]``, ``\\k<n>``; not ``(?P<n>)``)
        except regex.error as ecma:
            reason = str(ecma)
            try:  # where the pattern as written fails too, its positions are the user's
                regex.compile(pattern)
            except regex.error as as_written:
                reason = str(as_written)
            self.diags.error(
                loc,
                f"{what} {pattern!r} is not a valid regular expression ({reason})",
                "an ECMA-262 regular expression",
            )
            return False
        return True

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

    def _bounds(self, s: dict[str, Any], loc: SourceLocation) -> NumericBounds:
        minimum = self._number(s, "minimum", loc)
        maximum = self._number(s, "maximum", loc)
        exclusive_minimum: int | float | None = None
        exclusive_maximum: int | float | None = None
        # Draft 4 / OpenAPI 3.0 spell exclusivity as a boolean beside minimum/maximum.
        if isinstance(s.get("exclusiveMinimum"), bool):
            if s["exclusiveMinimum"] and minimum is not None:
                exclusive_minimum, minimum = minimum, None
        else:
            exclusive_minimum = self._number(s, "exclusiveMinimum", loc)
        if isinstance(s.get("exclusiveMaximum"), bool):
            if s["exclusiveMaximum"] and maximum is not None:
                exclusive_maximum, maximum = maximum, None
        else:
            exclusive_maximum = self._number(s, "exclusiveMaximum", loc)
        multiple_of = self._number(s, "multipleOf", loc)
        if multiple_of is not None and multiple_of <= 0:
            self.diags.error(
                loc.child("multipleOf"), f"multipleOf is {multiple_of}", "a number greater than 0"
            )
            multiple_of = None
        return NumericBounds(
            minimum=minimum,
            maximum=maximum,
            exclusive_minimum=exclusive_minimum,
            exclusive_maximum=exclusive_maximum,
            multiple_of=multiple_of,
        )


# Type names from other languages and schema systems, for hints only (never accepted).
_OTHER_TYPE_NAMES: dict[str, str | None] = {
    "text": "string",
    "varchar": "string",
    "decimal": "number",
    "real": "number",
    "numeric": "number",
    "none": "null",
    "nil": "null",
    "dictionary": "object",
    "record": "object",
    "sequence": "array",
    "json": None,
}
# Type names that JSON Schema spells as a string format.
_STRING_FORMATS = {
    "date": "date",
    "datetime": "date-time",
    "date-time": "date-time",
    "time": "time",
    "email": "email",
    "uri": "uri",
    "url": "uri",
    "uuid": "uuid",
}


def _lenient_type(name: str) -> str | Literal[False] | None:
    """The JSON type a non-JSON type name (``int``, ``Integer``, ``double``, ``dict``...) stands
    for; None for "any value" (``any``); False when it names nothing obvious."""
    lowered = name.lower()
    if lowered in JSON_TYPES:
        return lowered
    known = {**BFCL_TYPES, **_OTHER_TYPE_NAMES, "int32": "integer", "int64": "integer"}
    known |= {"float32": "number", "float64": "number", "integer": "integer"}
    if lowered in known and lowered != "":
        return known[lowered]
    close = difflib.get_close_matches(lowered, JSON_TYPES, n=1, cutoff=0.8)
    return close[0] if close else False  # a misspelling with one obvious reading: "itneger"


def _type_hint(name: str) -> str | None:
    """How JSON Schema spells a type name borrowed from a programming language."""
    lowered = name.lower()
    if lowered in JSON_TYPES:
        return f"type names are lower-case: {lowered!r}"
    if lowered in _STRING_FORMATS:
        return f"use type 'string' with format {_STRING_FORMATS[lowered]!r}"
    known = {**BFCL_TYPES, **_OTHER_TYPE_NAMES}
    if lowered in known:
        mapped = known[lowered]
        return (
            f"JSON Schema spells it {mapped!r}" if mapped else "leave out 'type' to allow any value"
        )
    close = difflib.get_close_matches(lowered, JSON_TYPES, n=1)
    return f"did you mean {close[0]!r}?" if close else None


def _short_key(key: str, file: str) -> str:
    """``"<file>#<pointer>"`` as ``'#<pointer>'`` when it is in ``file``."""
    target_file, _, pointer = key.partition("#")
    return f"'#{pointer}'" if target_file == file else repr(key)


def _direct_refs(node: SchemaNode) -> list[str]:
    """Definitions ``node`` stands for without an object or array around them."""
    match node:
        case RefNode():
            return [node.target]
        case AllOfNode():
            return [t for part in node.parts for t in _direct_refs(part)]
        case UnionNode():
            return [t for variant in node.variants for t in _direct_refs(variant)]
        case CheckedNode():
            return _direct_refs(node.base)
        case _:
            return []


def _json_type_matches(value: Any, types: list[str]) -> bool:
    for t in types:
        if t == "null" and value is None:
            return True
        if t == "boolean" and isinstance(value, bool):
            return True
        if t == "string" and isinstance(value, str):
            return True
        if t == "object" and isinstance(value, dict):
            return True
        if t == "array" and isinstance(value, list):
            return True
        if (
            not isinstance(value, bool)
            and isinstance(value, (int, float))
            and (t == "number" or (t == "integer" and float(value).is_integer()))
        ):
            return True
    return False


def _schema_types(s: dict[str, Any]) -> set[str] | None:
    """The JSON types a raw schema's instances may have — its ``type`` (``nullable`` adds
    null), else its ``const``/``enum`` values' —; None when it does not say or names another."""
    raw: Any = s.get("type")
    if raw is None:
        values = [s["const"]] if "const" in s else as_array(s.get("enum"))
        if not values:
            return None
        types = {_value_type(v) for v in values}
    else:
        names = cast("list[Any]", raw) if isinstance(raw, list) else [raw]
        types = {n if isinstance(n, str) else "other" for n in names}
    if s.get("nullable") is True or s.get("x-nullable") is True:
        types.add("null")
    return types if types <= set(JSON_TYPES) else None


def _value_type(value: Any) -> str:
    """The JSON type of a JSON value (``other`` for an array or object)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def _plain_type(s: dict[str, Any]) -> set[str] | None:
    """The JSON types a raw schema accepts when it says nothing else (annotations, ``format``,
    an array's ``items``, ``x-`` keys aside): every instance of them; None otherwise."""
    if any(k not in _ANNOTATIONS and k not in _PLAIN_KEYS and not k.startswith("x-") for k in s):
        return None
    if s.get("nullable") not in (None, True, False):
        return None
    types = _schema_types(s) if "type" in s else set[str](JSON_TYPES)
    if types is not None and "items" in s and not isinstance(s["items"], dict | bool):
        return None  # (draft 4-2019's tuple form: unsure)
    return types


def _typed_object(schema: Any) -> Any:
    """``schema`` with ``type: object`` when it has ``properties`` and no ``type``."""
    s = as_object(schema)
    if s is None or "type" in s or "properties" not in s or "$ref" in s:
        return schema
    return {"type": "object", **s}


def _with_meta(node: SchemaNode, meta: Meta) -> SchemaNode:
    merged = Meta(
        loc=node.meta.loc,
        title=meta.title or node.meta.title,
        description=meta.description or node.meta.description,
        default=meta.default or node.meta.default,
        deprecated=meta.deprecated or node.meta.deprecated,
        extra=node.meta.extra or meta.extra,
    )
    return replace(node, meta=merged)


def _merge_objects(parts: list[ObjectNode], meta: Meta) -> ObjectNode:
    """Merge ``allOf`` members that are all inline objects into one object node."""
    props: dict[str, Property] = {}
    additional: SchemaNode | None = None
    for part in parts:
        for p in part.properties:
            if p.name in props:
                old = props[p.name]
                schema = p.schema if isinstance(old.schema, AnyNode) else old.schema
                if (
                    not isinstance(p.schema, AnyNode)
                    and not isinstance(old.schema, AnyNode)
                    and p.schema != old.schema
                ):
                    schema = AllOfNode(
                        meta=Meta(loc=p.schema.meta.loc), parts=(old.schema, p.schema)
                    )
                props[p.name] = Property(
                    name=p.name, schema=schema, required=old.required or p.required
                )
            else:
                props[p.name] = p
        if part.additional is not None:
            additional = part.additional
    return ObjectNode(meta=meta, properties=tuple(props.values()), additional=additional)
