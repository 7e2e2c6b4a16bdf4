"""Compiler layer (frontends/openapi): the reader's state, which every OpenAPI object's module
reads and adds to. Imports ``ir``, ``diagnostics``, ``naming``, ``_load``, ``_steps``,
``normalise``, ``_jsonschema``, ``_resolver`` and ``_common``.

One ``Context`` per document read: the spec, its version, the schema lowerer, the tool names
taken, the diagnostics, what was read and what became of it (``counts``), and how the objects
that are not schemas (parameters, bodies, responses, path items, operations) are found behind
their ``$ref``s (``deref``). The normalising rules run through ``normalise`` and say what they
read here, in the order the reader meets what they read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ... import naming
from ..._load import Document, RefPolicy, as_array, as_object, display_path
from ..._steps import Steps
from ...diagnostics import Diagnostic, Diagnostics, describe
from ...ir import ObjectNode, RefNode, SchemaNode, SourceLocation
from ...normalise import Rule, run, run_located
from ...normalise._openapi import OpenApi
from .._jsonschema import SchemaLowerer
from .._resolver import (
    MISSING,
    _explain_missing,  # pyright: ignore[reportPrivateUsage]
    _join_shown,  # pyright: ignore[reportPrivateUsage]
    ref_file,
    walk_pointer,
)
from ._common import Where, load_with_dates_as_text

# Fields of the objects ``Context.fields`` checks that must hold an array / an object.
_ARRAYS = frozenset(
    {"servers", "parameters", "security", "tags", "schemes", "consumes", "produces"}
)
_OBJECTS = frozenset({"responses", "requestBody", "callbacks", "components", "definitions"})


class Context:
    """What reading one OpenAPI document holds while it reads (see the module's docstring)."""

    def __init__(
        self,
        doc: Document,
        path: Path | None,
        diags: Diagnostics,
        refs: RefPolicy,
        steps: Steps,
    ) -> None:
        self.doc = doc
        self.steps = steps
        self.refs = refs
        self.path = path
        self.diags = diags
        self.spec: dict[str, Any] = doc.value
        raw_version = str(self.spec.get("openapi", self.spec.get("swagger", "")))
        self.swagger = "swagger" in self.spec and "openapi" not in self.spec
        self.v31 = raw_version.startswith("3.1")
        self.rules = OpenApi(document=self.spec, swagger=self.swagger)
        self.lowerer = SchemaLowerer(
            diags=diags,
            dialect="jsonschema" if self.v31 else "openapi30",
            allow_remote_files=path is not None,
            lenient=True,
            drop_extensions=True,
            openapi31=self.v31,
            trim_descriptions=True,
            refs=refs,
            load=partial(load_with_dates_as_text, steps=steps),
        )
        self.top = SourceLocation(file=doc.path)
        self.names = naming.ToolNames()
        self._documents: dict[Path, Document | Diagnostic] = {}
        # What was read and what became of it, per kind: every item read is emitted (a tool, a
        # Call field, a body, a declared response), reported (a located warning or note says why
        # not), filtered (--tag/--path/--operation) or overridden (an operation's parameter
        # replaces its path item's, as OpenAPI says). ``toolbind generate -v`` prints it; a test
        # holds read == the rest over every corpus spec.
        self.counts: Counter[tuple[str, str]] = Counter()
        self.extensions: dict[str, list[SourceLocation]] = {}  # x- field → where seen
        # Security scheme names that requirements use → where first: each must be declared.
        self.named_schemes: dict[str, SourceLocation] = {}
        # When a list, each non-schema object's ``$ref`` followed is added to it: its JSON
        # pointer when it leads into this document, else None (what reading an operation
        # read, for whoever runs it: ``Steps.part``; the lowerer's ``ref_log`` says the same
        # of schemas).
        self.read_log: list[str | None] | None = None
        # the wire names of the parameters of the operation being read (``_field``)
        self.wire_names: set[str] = set()

    def normalise(self, rules: Iterable[Rule[OpenApi]], fragment: Any, at: SourceLocation) -> Any:
        """``fragment`` as ``rules`` leave it; what they say is said now."""
        said: list[Diagnostic] = []
        fixed = run(rules, fragment, at, self.rules, said)
        self.diags.items.extend(said)
        return fixed

    def canonical(
        self, rules: Iterable[Rule[OpenApi]], where: Where, fragment: Any = None
    ) -> Where:
        """``where`` as ``rules`` leave its value (or ``fragment``, what the rules read of it
        when that is more than the value), with the places of what they moved; what they say
        is said now."""
        said: list[Diagnostic] = []
        moved = dict(where.moved)
        given = where.value if fragment is None else fragment
        value = run_located(rules, given, where.loc, self.rules, said, moved)
        self.diags.items.extend(said)
        if value is given:
            return where
        return Where(value, where.loc, where.root, where.path, moved)

    # -- references to non-schema objects (parameters, bodies, responses) -------------------

    def deref(self, where: Where, what: str) -> Where | None:
        """Follow ``$ref``s of a parameter/body/response object (local or relative files)."""
        seen: set[str] = set()
        while True:
            obj = as_object(where.value)
            if obj is None or "$ref" not in obj:
                return where
            ref = obj["$ref"]
            rloc = where.loc.child("$ref")
            if not isinstance(ref, str) or ref in seen:
                # (no rule: a reference that leads nowhere is broken input, said and skipped)
                self.diags.warning(
                    rloc, f"{what} $ref is {describe(ref)}", "a resolvable reference; skipped"
                )
                return None
            seen.add(ref)
            file_part, _, fragment = ref.partition("#")
            root, path, file = where.root, where.path, where.loc.file
            if self.read_log is not None:
                local = not file_part and root is self.spec
                self.read_log.append(unquote(fragment) if local else None)
            if file_part:
                loaded = self._ref_document(where, what, ref, file_part)
                if loaded is None:
                    return None
                root, path, file = loaded
            pointer = unquote(fragment)
            value = walk_pointer(root, pointer)
            if value is MISSING:
                why, suggestion = _explain_missing(root, pointer)
                # (no rule: as above; the hint needs the document the reference names)
                self.diags.warning(
                    rloc,
                    f"{what} $ref {ref!r} does not resolve: {why}; the {what} is skipped",
                    f"a JSON pointer to an existing value in {file}",
                    hint=f"did you mean {(file_part + '#' + suggestion)!r}?"
                    if suggestion
                    else None,
                )
                return None
            where = Where(
                value=value, loc=SourceLocation(file=file, pointer=pointer), root=root, path=path
            )

    def deref_object(self, where: Where, what: str) -> tuple[Where, dict[str, Any]] | None:
        """``deref``, then the object found (None: no object there, said why)."""
        found = self.deref(where, what)
        obj = as_object(found.value) if found is not None else None
        if found is None or obj is None:
            if found is not None:
                # (no rule: broken input, said and skipped)
                self.diags.warning(
                    found.loc, f"{what} is {describe(found.value)}", "an object; skipped"
                )
            return None
        return found, obj

    def _ref_document(
        self, where: Where, what: str, ref: str, file_part: str
    ) -> tuple[Any, Path, str] | None:
        """The document a ``$ref`` to another file names (its value, path and name as shown),
        or None (said why)."""
        rloc = where.loc.child("$ref")
        if where.path is None or "://" in file_part:
            # (no rule: a reference outside what may be read, said and skipped)
            self.diags.warning(
                rloc, f"{what} $ref {ref!r} points outside the spec", "a local reference"
            )
            return None
        target = ref_file(where.path.parent, unquote(file_part))
        if target is None:
            self.diags.error(
                rloc,
                f"{what} $ref {ref!r} is not a usable file name",
                "a file name relative to this spec",
            )
            return None
        if not self.refs.allows_file(target):
            self.diags.error(
                rloc,
                f"{what} $ref {ref!r} leads outside the spec's directory ({display_path(target)})",
                "a file in the spec's directory or below it",
                hint="allow the directory with --allow-ref DIR",
            )
            return None
        if target not in self._documents:
            self._documents[target] = load_with_dates_as_text(
                target, _join_shown(where.loc.file, file_part), self.steps
            )
        loaded = self._documents[target]
        if not isinstance(loaded, Document):
            # an error, as for a schema's $ref: what the file holds (a split spec's path
            # items, operations) is lost; it was a warning that said no cause
            self.diags.error(
                rloc,
                f"{what} $ref {ref!r} names a file that cannot be read "
                f"({loaded.place}: {loaded.found})",
                "a readable JSON or YAML file, named relative to this spec",
            )
            return None
        return loaded.value, target, loaded.path

    def schema(self, where: Where) -> SchemaNode:
        self.lowerer.moved = {where.loc.child(*k): at for k, at in where.moved.items()}
        try:
            return self.lowerer.lower_root(
                where.value,
                where.loc,
                root=where.root,
                path=where.path,
                resource=(where.root, SourceLocation(file=where.loc.file)),
            )
        finally:
            self.lowerer.moved = {}

    def resolved(self, node: SchemaNode) -> SchemaNode:
        """``node``, or the schema its ``$ref``s lead to."""
        seen: set[str] = set()
        while isinstance(node, RefNode) and node.target not in seen:
            seen.add(node.target)
            definition = self.lowerer.definitions.get(node.target)
            if definition is None:
                return node
            node = definition.node
        return node

    def object_of(self, node: SchemaNode) -> ObjectNode | None:
        node = self.resolved(node)
        return node if isinstance(node, ObjectNode) else None

    # -- what is read and what becomes of it ------------------------------------------------

    def fields(self, obj: dict[str, Any], loc: SourceLocation, what: str, table: Any) -> None:
        """Report what of ``obj`` toolbind would ignore: a field the spec's version does not
        define for ``what`` (extensions aside: counted, then noted once per spec), and a field of
        the wrong shape."""
        # (no rule: a field is said of the version written, before any rule reads the object)
        allowed: frozenset[str] = table["swagger" if self.swagger else "openapi"]
        version = "Swagger 2.0" if self.swagger else "OpenAPI 3.x"
        arrays, objects = _ARRAYS, _OBJECTS
        if what == "document":  # Swagger 2.0's top-level parameters/responses are maps
            arrays, objects = _ARRAYS - {"parameters"}, _OBJECTS | {"parameters"}
        for key, value in obj.items():
            if key.startswith("x-"):
                self.extensions.setdefault(key, []).append(loc.child(key))
            elif key not in allowed:
                # (no rule: a field toolbind does not read is said, never rewritten)
                self.diags.warning(
                    loc.child(key),
                    f"{key!r} is not a field of {version} {what}s; ignored",
                    f"one of {', '.join(sorted(allowed))}",
                    hint="an extension of your own is named x-…",
                )
            elif key in arrays and value is not None and as_array(value) is None:
                # (no rule: a field of the wrong shape, said and ignored)
                self.diags.warning(
                    loc.child(key), f"{key} is {describe(value)}", "an array; ignored"
                )
            elif key in objects and value is not None and as_object(value) is None:
                # (no rule: as above)
                self.diags.warning(
                    loc.child(key), f"{key} is {describe(value)}", "an object; ignored"
                )

    def summary(self) -> str:
        """What was read and what became of it, per kind (``toolbind generate -v``)."""
        kinds = sorted({"operations", *(kind for kind, _ in self.counts)})
        parts: list[str] = []
        for kind in kinds:
            read = self.counts[kind, "read"]
            fates = [
                f"{self.counts[kind, fate]} {fate}"
                for fate in ("emitted", "reported", "filtered", "overridden")
                if self.counts[kind, fate]
            ]
            parts.append(f"{kind} {read} → {', '.join(fates) or '0 emitted'}")
        return "; ".join(parts)
