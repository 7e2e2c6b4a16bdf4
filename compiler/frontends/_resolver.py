"""Compiler layer (frontends): where a ``$ref`` leads — files, allowed URLs, ``$id`` resources,
anchors, dynamic scopes. Imports ``_load``, ``diagnostics`` and ``ir``; never lowers a schema.

``RefResolver.resolve`` turns a ``$ref`` met while lowering into the target's definition key, a
name hint, the target value and the context to lower it in (base URI, resource, dynamic scope), or
reports why it can't (a located error, or a warning where ``lenient``). Local pointers, relative
files (within the ``--allow-ref`` policy), the JSON Schema meta-schemas and ``remotes`` resolve
offline; a URL is downloaded only when the policy allows it, at most ``MAX_URL_DOCUMENTS`` per spec.
``SchemaLowerer`` owns one resolver per spec and asks it at each ``$ref``.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from .._load import (
    Document,
    RefPolicy,
    as_array,
    as_object,
    display_path,
    load_document,
    load_url,
)
from ..diagnostics import Diagnostic, Diagnostics, describe
from ..ir import SourceLocation, escape_pointer_token

Dialect = Literal["jsonschema", "openapi30", "bfcl"]

#: The JSON Schema drafts toolbind reads by name (``model_from_schema(draft=...)``).
Draft = Literal["draft4", "draft6", "draft7", "draft2019-09", "draft2020-12"]


def _defrag(url: str) -> tuple[str, str]:
    """``urldefrag(url)``: the URL without its fragment, and the fragment. A local pointer
    (``#/components/...``: thousands in a large spec) is split here; ``urllib``'s parse costs
    ~10 µs a call, a few percent of lowering a large spec. Only where that parse would change
    nothing (no tab or line break, which it removes) is it skipped."""
    if url.startswith("#") and not ("\t" in url or "\r" in url or "\n" in url):
        return "", url[1:]
    url_part, fragment = urldefrag(url)
    return url_part, fragment


def draft_named(schema: Any) -> Draft | None:
    """The draft a schema's ``$schema`` names, if it names one toolbind knows."""
    uri = (as_object(schema) or {}).get("$schema")
    if not isinstance(uri, str):
        return None
    markers: tuple[tuple[str, Draft], ...] = (
        ("draft-03", "draft4"),  # read as its successor: ``id``, not ``$id``
        ("draft-04", "draft4"),
        ("draft-06", "draft6"),
        ("draft-07", "draft7"),
        ("2019-09", "draft2019-09"),
        ("2020-12", "draft2020-12"),
    )
    return next((draft for marker, draft in markers if marker in uri), None)


def id_keyword(schema: Any, default: str) -> str:
    """The keyword that names a schema resource in a document: ``id`` in drafts 3 and 4,
    ``$id`` from draft 6 on; by the document's ``$schema``, else ``default``."""
    draft = draft_named(schema)
    if draft is None:
        return default
    return "id" if draft == "draft4" else "$id"


MAX_URL_DOCUMENTS = 100
"""How many documents ``$ref``s to allowed URLs may download for one spec."""


@dataclass
class _Context:
    file: str  # as shown in diagnostics
    path: Path | None  # on disk, for relative refs
    root: Any  # the whole document
    # The schema resource local pointers are relative to: a tool's own schema (an MCP
    # ``inputSchema``, an OpenAI ``parameters``, a seeds Tool schema), at ``base`` in the file.
    resource: Any
    base: str = ""
    # The resource's absolute base URI (from ``$id``s or a remote's URI); "" when it has none.
    uri: str = ""
    entered: str = ""  # the location whose ``$id`` set ``uri`` (a schema is lowered in parts)
    # The dynamic scope: the base URIs of the resources entered to get here, outermost first
    # (``$dynamicRef`` resolves to the outermost ``$dynamicAnchor`` of that name among them).
    dynamic: tuple[str, ...] = ()
    # The keyword that names resources in this document: ``$id``, or draft 4's ``id``.
    id_key: str = "$id"


class _DynamicRef(str):
    """A ``$dynamicRef`` value, carried under ``$ref`` so that every reader of ``$ref`` sees it."""

    __slots__ = ()


class _RecursiveRef(str):
    """A draft 2019-09 ``$recursiveRef`` value, carried under ``$ref`` like ``_DynamicRef``."""

    __slots__ = ()


# Where subschemas sit, so that indexing ``$id``/``$anchor`` never reads an enum or const value.
_SCHEMA_MAPS = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
)


_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


_SCHEMA_ONE = (
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "items",
)


@dataclass(frozen=True, slots=True)
class _Resource:
    value: Any
    file: str
    path: Path | None
    root: Any
    pointer: str
    id_key: str = "$id"


class _Missing:
    pass


MISSING: Any = _Missing()


def _pushed(scope: tuple[str, ...], uri: str) -> tuple[str, ...]:
    """``scope`` with the resource ``uri`` entered (re-entering the innermost adds nothing)."""
    return scope if scope and scope[-1] == uri else (*scope, uri)


@cache
def _metaschemas() -> dict[str, Any]:
    """The JSON Schema meta-schemas by URI (drafts 3 to 2020-12, from jsonschema-specifications):
    ``$ref``s to them resolve offline, like ``remotes``."""
    from jsonschema_specifications import REGISTRY  # pyright: ignore[reportMissingTypeStubs]

    return {str(uri): REGISTRY.contents(uri) for uri in REGISTRY}


def walk_pointer(root: Any, pointer: str) -> Any:
    """The value at the JSON pointer (RFC 6901, already percent-decoded) in ``root``, or
    ``MISSING``."""
    if pointer == "":
        return root
    node: Any = root
    for raw in pointer.lstrip("/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        obj = as_object(node)
        array = as_array(node)
        if obj is not None and token in obj:
            node = obj[token]
        elif array is not None and token.isdigit() and int(token) < len(array):
            node = array[int(token)]
        else:
            return MISSING
    return node


def _explain_missing(root: Any, pointer: str) -> tuple[str, str | None]:
    """Why ``pointer`` finds nothing in ``root``, and the closest pointer that would."""
    node: Any = root
    walked = ""
    for raw in pointer.lstrip("/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        obj = as_object(node)
        array = as_array(node)
        at = f"'#{walked}'"
        if obj is not None:
            if token not in obj:
                close = difflib.get_close_matches(token, [str(k) for k in obj], n=1)
                suggestion = f"{walked}/{escape_pointer_token(close[0])}" if close else None
                return f"{at} has no member {token!r}", suggestion
            node = obj[token]
        elif array is not None:
            if not (token.isdigit() and int(token) < len(array)):
                return f"{at} is an array of {len(array)} item(s), with no item {token!r}", None
            node = array[int(token)]
        else:
            return f"{at} is {describe(node)}, not an object or array", None
        walked += "/" + raw
    return "no such value", None  # pragma: no cover - only called for a missing pointer


def _describe_resource(ctx: _Context) -> str:
    if ctx.base:
        return f"the schema at '#{ctx.base}'"
    return ctx.file


def _find_anchor(
    root: Any, anchor: str, pointer: str = "", id_key: str = "$id"
) -> tuple[Any, str] | None:
    obj = as_object(root)
    array = as_array(root)
    if obj is not None:
        # drafts 4-7: "$id": "#a" (draft 4: "id": "#a")
        if (
            anchor in (obj.get("$anchor"), obj.get("$dynamicAnchor"))
            or obj.get(id_key) == "#" + anchor
        ):
            return obj, pointer
        for k, v in obj.items():
            found = _find_anchor(v, anchor, f"{pointer}/{escape_pointer_token(str(k))}", id_key)
            if found:
                return found
    elif array is not None:
        for i, v in enumerate(array):
            found = _find_anchor(v, anchor, f"{pointer}/{i}", id_key)
            if found:
                return found
    return None


def _name_hint(pointer: str, file: str) -> str:
    if pointer:
        return pointer.rstrip("/").rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    return Path(file).stem


def _join_shown(shown_from: str, uri: str) -> str:
    parent = Path(shown_from).parent
    joined = (parent / unquote(uri)).as_posix()
    parts: list[str] = []
    for part in joined.split("/"):
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def ref_file(base: Path, name: str) -> Path | None:
    """The resolved path a ``$ref`` names relative to ``base``; None when no file can have that
    name (a NUL byte, a name too long for the file system)."""
    try:
        return (base / name).resolve()
    except (ValueError, OSError):
        return None


@dataclass(kw_only=True)
class RefResolver:
    """Resolves ``$ref``s for one spec: every document it reads or downloads is read once."""

    diags: Diagnostics
    dialect: Dialect = "jsonschema"
    allow_remote_files: bool = True
    # Drafts 4-7: a ``$ref``'s sibling ``$id`` is ignored.
    legacy_ref: bool = False
    # The keyword naming resources where a document's ``$schema`` does not say: draft 4's ``id``
    # or ``$id``.
    id_key: str = "$id"
    # A ``$ref`` to nothing allows any value (a warning) instead of an error.
    lenient: bool = False
    # Documents that ``$ref``s may name by absolute URI (``model_from_schema(remotes=...)``).
    remotes: Mapping[str, Any] = field(default_factory=lambda: {})
    # Which files and URLs ``$ref``s may read beyond the spec's own directory.
    refs: RefPolicy = field(default_factory=RefPolicy)
    load: Callable[[Path, str], Document | Diagnostic] = load_document
    fetch: Callable[[str], Document | Diagnostic] = load_url
    _documents: dict[Path, Document | Diagnostic] = field(default_factory=lambda: {})
    # Absolute URI → schema resource, and (URI, anchor) → (schema, pointer), from ``$id``s.
    _resources: dict[str, _Resource] = field(default_factory=lambda: {})
    _anchors: dict[tuple[str, str], tuple[Any, str]] = field(default_factory=lambda: {})
    _dynamic_anchors: set[tuple[str, str]] = field(default_factory=lambda: set())
    # Resources whose root says ``"$recursiveAnchor": true`` (draft 2019-09), by URI.
    _recursive_anchors: set[str] = field(default_factory=lambda: set())
    # A remote's URI → the base URI its root's ``$id`` gives it, where the two differ.
    _named: dict[str, str] = field(default_factory=lambda: {})
    _downloads: dict[str, Diagnostic] = field(default_factory=lambda: {})
    # The files and URLs refused so far: said once as an error, then a note at each other $ref
    # (a split spec's hundred refs into one refused directory are one fix, not a hundred errors).
    _refused: set[str] = field(default_factory=lambda: set())
    _fetched_urls: set[str] = field(default_factory=lambda: set())
    _indexed: set[tuple[int, str, str]] = field(default_factory=lambda: set())

    def index_root(
        self, value: Any, *, file: str, path: Path | None, root: Any, pointer: str
    ) -> None:
        """Record the ``$id`` resources and anchors of a schema about to be lowered; a large
        document shared by many roots (an OpenAPI spec) is indexed once."""
        indexed = (id(value), file, pointer)
        if indexed not in self._indexed:
            self._indexed.add(indexed)
            resource = _Resource(
                value=value,
                file=file,
                path=path,
                root=root,
                pointer=pointer,
                id_key=id_keyword(root, self.id_key),
            )
            self.index(value, resource, "")

    def resolve(
        self, ref: str, loc: SourceLocation, ctx: _Context
    ) -> tuple[str, str, Any, _Context, SourceLocation] | None:
        """``_resolve`` plus the dynamic scope: a ``$dynamicRef`` whose static target is a
        ``$dynamicAnchor`` goes to the outermost resource in scope with that anchor, and a
        definition lowered under a scope that binds dynamic anchors is keyed by that binding
        (the same schema reached through different scopes can mean different things)."""
        resolved = self._resolve(ref, loc, ctx)
        if resolved is None:
            return None
        fragment = _defrag(ref)[1]
        if (
            isinstance(ref, _DynamicRef)
            and fragment
            and (resolved[3].uri, fragment) in self._dynamic_anchors
        ):
            outer = next((u for u in ctx.dynamic if (u, fragment) in self._dynamic_anchors), None)
            if outer is not None and outer != resolved[3].uri:
                resolved = self._resolve_uri(f"{outer}#{fragment}", loc, ctx) or resolved
        if (
            isinstance(ref, _RecursiveRef)
            and not fragment.lstrip("/")
            and resolved[3].uri in self._recursive_anchors
        ):
            # 2019-09: from a resource root with "$recursiveAnchor": true, outwards through the
            # dynamic scope for as long as each resource has one too
            outer = self._recursive_target([*ctx.dynamic, resolved[3].uri])
            if outer is not None and outer != resolved[3].uri:
                resolved = self._resolve_uri(outer, loc, ctx) or resolved
        key, hint, target, target_ctx, target_loc = resolved
        entered = target_ctx.uri
        own = (as_object(target) or {}).get(target_ctx.id_key)
        if entered and isinstance(own, str) and not (self.legacy_ref and "$ref" in target):
            # a pointer to a schema with its own $id enters that resource, not the document's
            absolute, own_fragment = _defrag(urljoin(entered, own))
            entered = absolute if absolute and not own_fragment else entered
        scope = _pushed(ctx.dynamic, entered) if entered else ctx.dynamic
        target_ctx = replace(target_ctx, dynamic=scope)
        binding = sorted(
            {
                name: uri
                for uri in reversed(scope)
                for (u, name) in self._dynamic_anchors
                if u == uri
            }.items()
        )
        recursive = self._recursive_target(scope)
        if recursive is not None:
            binding.append(("$recursiveAnchor", recursive))
        if binding:
            key += "@" + ",".join(f"{name}={uri}" for name, uri in binding)
        return key, hint, target, target_ctx, target_loc

    def _recursive_target(self, scope: list[str] | tuple[str, ...]) -> str | None:
        """Where a ``$recursiveRef`` from the innermost resource of ``scope`` leads, when that
        resource has ``"$recursiveAnchor": true`` (else None): the outermost resource of the
        unbroken run of such resources that ends with it."""
        target: str | None = None
        for uri in reversed(scope):
            if uri not in self._recursive_anchors:
                break
            target = uri
        return target

    def _resolve(
        self, ref: str, loc: SourceLocation, ctx: _Context
    ) -> tuple[str, str, Any, _Context, SourceLocation] | None:
        if ctx.uri or (not ref.startswith("#") and urlsplit(ref).scheme):  # "#...": no scheme
            # JSON Schema's own addressing: the ref is relative to the resource's base URI.
            before = len(self.diags.items)
            via_uri = self._resolve_uri(ref, loc, ctx)
            if via_uri is not None or len(self.diags.items) > before:
                return via_uri
        uri, fragment = _defrag(ref)
        target_ctx = ctx
        if uri and ctx.path is None and urlsplit(ctx.uri).scheme in ("http", "https"):
            uri = urljoin(ctx.uri, uri)  # a relative ref inside a downloaded document
        if uri:
            if "://" in uri or uri.startswith("//") or uri.startswith("urn:"):
                if self.refs.allows_url(uri):
                    return self._fetched(uri, fragment, ref, loc, ctx)
                self._refuse(
                    uri,
                    loc.child("$ref"),
                    f"$ref {ref!r} points to a URL",
                    "a local pointer ('#/...') or a relative file",
                    hint="download the schema next to the spec and refer to it by file name, "
                    "or allow the URL with --allow-ref",
                )
                return None
            file_ctx = self._file_context(ref, uri, loc, ctx)
            if file_ctx is None:
                return None
            target_ctx = file_ctx
        found = self._target(ref, uri, unquote(fragment), loc, target_ctx)
        if found is None:
            return None
        target_value, pointer, target_ctx = found
        full = target_ctx.base + pointer
        key = f"{target_ctx.file}#{full}"
        hint = _name_hint(full, target_ctx.file)
        target_loc = SourceLocation(file=target_ctx.file, pointer=full)
        return key, hint, target_value, self._scope_along(target_ctx, pointer), target_loc

    def _file_context(
        self, ref: str, uri: str, loc: SourceLocation, ctx: _Context
    ) -> _Context | None:
        """Where a ``$ref`` to the file ``uri`` (relative to ``ctx``'s) leads: the file's
        document as a resource, or None (said why)."""
        if ctx.path is None or not self.allow_remote_files:
            self.diags.error(
                loc.child("$ref"),
                f"$ref {ref!r} points to another file",
                "a local pointer ('#/...')",
                hint="inline schemas from other files when compiling from a dict",
            )
            return None
        file_path = ref_file(ctx.path.parent, unquote(uri))
        if file_path is None:
            self.diags.error(
                loc.child("$ref"),
                f"$ref {ref!r} is not a usable file name",
                "a file name relative to this spec",
            )
            return None
        if not self.refs.allows_file(file_path):
            self._refuse(
                str(file_path),
                loc.child("$ref"),
                f"$ref {ref!r} leads outside the spec's directory ({display_path(file_path)})",
                "a file in the spec's directory or below it",
                hint="allow the directory with --allow-ref DIR",
            )
            return None
        doc = self._document(file_path, ctx.file, uri)
        if not isinstance(doc, Document):
            where = doc.place
            self._refuse(
                str(file_path),
                loc.child("$ref"),
                f"$ref {ref!r} names a file that cannot be read ({where}: {doc.found})",
                "a readable JSON or YAML file, named relative to this spec",
            )
            return None
        # the name it was first loaded under: one file reached by several paths (``../``,
        # links, a link to its own directory) is one document, and ref chains through it end
        return _Context(
            file=doc.path,
            path=file_path,
            root=doc.value,
            resource=doc.value,
            base="",
            id_key=id_keyword(doc.value, self.id_key),
        )

    def _target(
        self, ref: str, uri: str, pointer: str, loc: SourceLocation, target_ctx: _Context
    ) -> tuple[Any, str, _Context] | None:
        """What ``pointer`` (a JSON pointer or an anchor's name) names in ``target_ctx``'s
        resource: the value, its pointer and the context it is in; None (said why)."""
        if pointer and not pointer.startswith("/"):
            target = _find_anchor(target_ctx.resource, pointer, id_key=target_ctx.id_key)
            if target is None and target_ctx.base:
                target_ctx = replace(target_ctx, resource=target_ctx.root, base="")
                target = _find_anchor(target_ctx.root, pointer, id_key=target_ctx.id_key)
            if target is None:
                self.diags.error(
                    loc.child("$ref"),
                    f"$ref {ref!r} names an anchor that does not exist",
                    f"a '$anchor': {pointer!r} in {_describe_resource(target_ctx)}, "
                    "or a JSON pointer ('#/...')",
                )
                return None
            return target[0], target[1], target_ctx
        target_value = walk_pointer(target_ctx.resource, pointer)
        if target_value is MISSING and target_ctx.base:
            # a pointer from the top of the file, as some tool lists share definitions
            from_top = walk_pointer(target_ctx.root, pointer)
            if from_top is not MISSING:
                target_value = from_top
                target_ctx = replace(target_ctx, resource=target_ctx.root, base="")
        if target_value is MISSING:
            why, suggestion = _explain_missing(target_ctx.resource, pointer)
            report = self.diags.warning if self.lenient else self.diags.error
            report(
                loc.child("$ref"),
                f"$ref {ref!r} does not resolve: {why}"
                + ("; any value is allowed there" if self.lenient else ""),
                f"a JSON pointer into {_describe_resource(target_ctx)}",
                hint=f"did you mean {(uri + '#' + suggestion)!r}?" if suggestion else None,
            )
            return None
        return target_value, pointer, target_ctx

    @contextlib.contextmanager
    def quietly(self) -> Generator[None]:
        """Resolve without saying anything (a look ahead of lowering): what a $ref here would
        say is said when the schema holding it is lowered, as if never looked at."""
        said, refused = self.diags, set(self._refused)
        self.diags = Diagnostics()
        try:
            yield
        finally:
            self.diags, self._refused = said, refused

    def _refuse(
        self, target: str, loc: SourceLocation, found: str, expected: str, hint: str | None = None
    ) -> None:
        """An error for the first $ref to ``target`` (a URL or file) that is refused; a note at
        each later one, which the same fix allows."""
        if target in self._refused:
            self.diags.note(loc, f"{found}: refused as at the first $ref to it (an error)")
            return
        self._refused.add(target)
        self.diags.error(loc, found, expected, hint=hint)

    def _fetched(
        self, uri: str, fragment: str, ref: str, loc: SourceLocation, ctx: _Context
    ) -> tuple[str, str, Any, _Context, SourceLocation] | None:
        """Resolve a ref to an allowed URL: download the document once, then address it."""
        if uri not in self._resources:
            if uri not in self._downloads and len(self._fetched_urls) >= MAX_URL_DOCUMENTS:
                self.diags.error(
                    loc.child("$ref"),
                    f"$ref {ref!r} would download document number {MAX_URL_DOCUMENTS + 1}",
                    f"at most {MAX_URL_DOCUMENTS} documents downloaded for one spec",
                    hint="a server that names a new URL in every document never ends",
                )
                return None
            self._fetched_urls.add(uri)
            doc = self._downloads.get(uri) or self.fetch(uri)
            if not isinstance(doc, Document):
                self._downloads[uri] = doc  # reported at every ref, downloaded once
                where = f"{doc.loc.file}:{doc.line}:{doc.column or 1}" if doc.line else str(doc.loc)
                self.diags.error(
                    loc.child("$ref"),
                    f"$ref {ref!r} names a URL that cannot be read ({where}: {doc.found})",
                    "a JSON or YAML document at an allowed URL",
                    hint=doc.hint,
                )
                return None
            resource = _Resource(
                value=doc.value,
                file=uri,
                path=None,
                root=doc.value,
                pointer="",
                id_key=id_keyword(doc.value, self.id_key),
            )
            self._resources[uri] = resource
            self.index(doc.value, resource, uri)
        return self._resolve_uri(f"{uri}#{fragment}" if fragment else uri, loc, ctx)

    def _scope_along(self, ctx: _Context, pointer: str) -> _Context:
        """The context at ``pointer`` inside ``ctx.resource``: the ``$id``s of the schemas a
        pointer passes through (not the target's own: lowering it applies that) set the base
        URI and the resource, as if the schema had been entered from the top."""
        if not ctx.uri or not pointer.startswith("/"):
            return ctx
        node: Any = ctx.resource
        here = ctx.base
        for raw in pointer[1:].split("/")[:-1]:
            node = walk_pointer(node, "/" + raw)
            here += "/" + raw
            obj = as_object(node)
            if obj is None:
                continue
            ident = obj.get(ctx.id_key)
            if isinstance(ident, str) and not (self.legacy_ref and "$ref" in obj):
                absolute, fragment = _defrag(urljoin(ctx.uri, ident))
                if absolute and not fragment:
                    ctx = replace(
                        ctx,
                        uri=absolute,
                        resource=obj,
                        base=here,
                        entered=str(SourceLocation(file=ctx.file, pointer=here)),
                    )
        return ctx

    def index(self, value: Any, where: _Resource, base: str) -> None:
        """Record the ``$id``-named resources and anchors below ``value`` (iteratively)."""
        stack: list[tuple[Any, str, str]] = [(value, where.pointer, base)]
        while stack:
            node, pointer, uri = stack.pop()
            obj = as_object(node)
            if obj is None:
                continue
            ident = obj.get(where.id_key, obj.get("id") if self.dialect == "openapi30" else None)
            if self.legacy_ref and "$ref" in obj:
                ident = None  # draft 7: a $ref's sibling $id is ignored
            if isinstance(ident, str):
                absolute, fragment = _defrag(urljoin(uri, ident))
                if absolute and not fragment:
                    uri = absolute
                    self._resources.setdefault(
                        uri,
                        _Resource(
                            value=obj,
                            file=where.file,
                            path=where.path,
                            root=where.root,
                            pointer=pointer,
                            id_key=where.id_key,
                        ),
                    )
                elif fragment and not fragment.startswith("/"):  # draft 7: "$id": "#name"
                    self._anchors.setdefault((absolute or uri, fragment), (obj, pointer))
            if obj.get("$recursiveAnchor") is True and uri:
                self._recursive_anchors.add(uri)
            for key in ("$anchor", "$dynamicAnchor"):
                name = obj.get(key)
                if isinstance(name, str):
                    self._anchors.setdefault((uri, name), (obj, pointer))
                    if key == "$dynamicAnchor":
                        self._dynamic_anchors.add((uri, name))
            for key in _SCHEMA_MAPS:
                for name, sub in (as_object(obj.get(key)) or {}).items():
                    stack.append((sub, f"{pointer}/{key}/{escape_pointer_token(name)}", uri))
            for key in _SCHEMA_LISTS:
                for i, sub in enumerate(as_array(obj.get(key)) or []):
                    stack.append((sub, f"{pointer}/{key}/{i}", uri))
            for key in _SCHEMA_ONE:
                if as_object(obj.get(key)) is not None:
                    stack.append((obj[key], f"{pointer}/{key}", uri))

    def _resolve_uri(
        self, ref: str, loc: SourceLocation, ctx: _Context
    ) -> tuple[str, str, Any, _Context, SourceLocation] | None:
        """Resolve ``ref`` against the base URI, through ``$id``-named resources and remotes."""
        uri, fragment = _defrag(urljoin(ctx.uri, ref))
        if uri not in self._resources and (uri in self.remotes or uri in _metaschemas()):
            remote = self.remotes[uri] if uri in self.remotes else _metaschemas()[uri]
            self._resources[uri] = _Resource(
                value=remote,
                file=uri,
                path=None,
                root=remote,
                pointer="",
                id_key=id_keyword(remote, self.id_key),
            )
            self.index(remote, self._resources[uri], uri)
            own = (as_object(remote) or {}).get(self._resources[uri].id_key)
            if isinstance(own, str) and not (self.legacy_ref and "$ref" in remote):
                absolute, own_fragment = _defrag(urljoin(uri, own))
                if absolute and not own_fragment and absolute != uri:
                    self._named[uri] = absolute
        found = self._resources.get(uri)
        if found is None:
            return None
        # a document retrieved by one URI that names itself another: its own is the base
        uri = self._named.get(uri, uri)
        target_ctx = _Context(
            file=found.file,
            path=found.path,
            root=found.root,
            resource=found.value,
            base=found.pointer,
            uri=uri,
            # the resource's own ``$id`` made ``uri``: lowering its root must not apply it again
            entered=str(SourceLocation(file=found.file, pointer=found.pointer)),
            id_key=found.id_key,
        )
        pointer = unquote(fragment)
        if pointer and not pointer.startswith("/"):
            anchored = self._anchors.get((uri, pointer))
            if anchored is None:
                self.diags.error(
                    loc.child("$ref"),
                    f"$ref {ref!r} names an anchor that does not exist",
                    f"a '$anchor': {pointer!r} in the resource {uri!r}",
                )
                return None
            target_value, full = anchored
        else:
            target_value = walk_pointer(found.value, pointer)
            if target_value is MISSING:
                why, _ = _explain_missing(found.value, pointer)
                self.diags.error(
                    loc.child("$ref"),
                    f"$ref {ref!r} does not resolve: {why}",
                    f"a JSON pointer into the resource {uri!r}",
                )
                return None
            full = found.pointer + pointer
            target_ctx = self._scope_along(target_ctx, pointer)
        key = f"{found.file}#{full}"
        return (
            key,
            _name_hint(full, found.file),
            target_value,
            target_ctx,
            SourceLocation(file=found.file, pointer=full),
        )

    def _document(self, path: Path, shown_from: str, uri: str) -> Document | Diagnostic:
        if path not in self._documents:
            self._documents[path] = self.load(path, _join_shown(shown_from, uri))
        return self._documents[path]
