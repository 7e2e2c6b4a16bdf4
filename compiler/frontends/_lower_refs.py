"""Compiler layer (frontends): the lowerer's references — roots, ``$ref``, ``$id`` resources,
``$dynamicRef``/``$recursiveRef``, shared definitions and ``$ref`` cycles. Imports ``ir``,
``diagnostics``, ``_load``, ``_resolver``, ``_vocabulary``, ``normalise`` and ``_lower_base``.

``$ref`` targets become ``Definition``s keyed by ``<file>#<pointer>``: each is lowered once and
shared, and cycles work because a ``RefNode`` only names its target. Where a ``$ref`` leads is
``_resolver.RefResolver``'s business; lowering only asks it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import (
    AllOfNode,
    AnyNode,
    CheckedNode,
    Definition,
    Meta,
    RefNode,
    SchemaNode,
    SourceLocation,
    UnionNode,
)
from ..normalise._families import schema_phase
from ..normalise._schema import ANNOTATIONS
from ._lower_base import LowererBase
from ._resolver import (
    _Context,  # pyright: ignore[reportPrivateUsage]
    _DynamicRef,  # pyright: ignore[reportPrivateUsage]
    _metaschemas,  # pyright: ignore[reportPrivateUsage]
    _pushed,  # pyright: ignore[reportPrivateUsage]
    _RecursiveRef,  # pyright: ignore[reportPrivateUsage]
    id_keyword,
)
from ._vocabulary import vocabulary_of

_ON_ENTER = schema_phase("enter")


class RefsLowerer(LowererBase):
    """Roots, references and the definitions they lead to."""

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

    def _with_siblings(
        self, s: dict[str, Any], loc: SourceLocation, ctx: _Context, depth: int
    ) -> SchemaNode:
        """A ``$ref`` with the keywords beside it: each applies (2019-09 on), as an allOf."""
        rest = {k: v for k, v in s.items() if k not in ANNOTATIONS and k != "$ref"}
        ref = self._ref(s["$ref"], s, loc, ctx)
        if not rest:
            return ref
        other = self._lower(rest, loc, ctx, depth + 1)
        return AllOfNode(meta=Meta(loc=loc), parts=(ref, other))

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
        if "$recursiveRef" in s or "$recursiveAnchor" in s:
            s = self._normalise(_ON_ENTER, s, loc)
        ref = s.get("$recursiveRef")
        if isinstance(ref, str) and self.draft in (None, "draft2019-09"):
            s = {k: v for k, v in s.items() if k != "$recursiveRef"}
            if "$ref" in s:  # both: each applies, as two parts of an allOf
                parts = [*(as_array(s.get("allOf")) or []), {"$ref": _RecursiveRef(ref)}]
                s = s | {"allOf": parts}
            else:
                s = s | {"$ref": _RecursiveRef(ref)}
        return s, ctx

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

    def _target(self, ref: Any, ctx: Any) -> tuple[Any, Any] | None:
        """``_quiet_resolve`` as the union rules look through ``$ref``s: the target and its
        context (``normalise.schema_unions.Resolve``)."""
        resolved = self._quiet_resolve(ref, ctx)
        return None if resolved is None else resolved[:2]


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
