"""Compiler layer (passes): what changed between two versions of a spec, and whom it breaks.
Imports ``ir`` and ``passes.subset`` only.

``diff_packages(old, new)`` compares two ``SpecPackage``s tool by tool and lists every change as
a ``Change``: a rule, the audience it breaks, where it is (old and new file + JSON pointer), why,
and for a breaking change a *witness* — a Call (or Output) the old spec accepts and the new one
rejects. The audiences:

* ``calls``: what a model produces, or Calls stored from past runs (a removed tool or parameter,
  a new required parameter, a narrowed type/enum/pattern/bound, ``additionalProperties`` closed);
* ``activities``: code that takes Calls and returns Outputs (an Output that must now carry more,
  a widened parameter the code may not handle, another Activity or endpoint);
* ``prompt``: what the model reads only (descriptions, titles, examples, ordering);
* ``safe``: nobody (an added optional parameter, a new tool, a widened Output);
* ``unknown``: the subset check could not decide — never reported as safe.

Narrower and wider are decided on the schemas by ``SchemaTable.subset``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from toolbind.contract import HttpApi, HttpServer

from ..ir import (
    ArrayNode,
    LiteralNode,
    Meta,
    ObjectNode,
    RefNode,
    SchemaNode,
    SourceLocation,
    SpecPackage,
    ToolSpec,
    UnionNode,
    freeze,
    thaw,
)
from .subset import NO_VALUE, SchemaTable, Verdict

Audience = Literal["calls", "activities", "prompt", "safe", "unknown"]
AUDIENCES: tuple[Audience, ...] = ("calls", "activities", "unknown", "prompt", "safe")
BREAKING: frozenset[Audience] = frozenset({"calls", "activities", "unknown"})
Side = Literal["params", "output"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One difference between two versions of a spec.

    Attributes:
        rule: what kind of change (``param-removed``, ``enum-narrowed``, …).
        audience: whom it breaks.
        tools: the tools it concerns (spec names; one change in a shared schema lists each).
        old, new: where it is in each version (None where one side has nothing).
        message: what changed and why it matters.
        witness: canonical JSON of an instance that shows it: for ``calls``, a Call's arguments
            the old spec accepts and the new one does not; for a widened parameter, arguments
            the new spec accepts and the old one did not; for an Output, an Output likewise.
        rejected: whether the new spec rejects ``witness`` (False: it still validates, e.g. a
            removed parameter of an open object is ignored rather than refused).
    """

    rule: str
    audience: Audience
    tools: tuple[str, ...]
    old: SourceLocation | None
    new: SourceLocation | None
    message: str
    witness: str | None = None
    rejected: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "audience": self.audience,
            "tools": list(self.tools),
            "old": str(self.old) if self.old else None,
            "new": str(self.new) if self.new else None,
            "message": self.message,
            "witness": thaw(self.witness) if self.witness is not None else None,
            "rejected": self.rejected,
        }


@dataclass(slots=True)
class _Found:
    """A change below some node; ``witness`` is an instance of that node (``NO_VALUE``: none),
    of the old version (``side`` "old") or of the new one."""

    rule: str
    audience: Audience
    old: SourceLocation | None
    new: SourceLocation | None
    message: str
    witness: Any = NO_VALUE
    side: Literal["old", "new"] = "old"
    rejected: bool = False


@dataclass(slots=True)
class _Ctx:
    old: SchemaTable
    new: SchemaTable
    side: Side
    stack: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    memo: dict[tuple[str, str, Side], list[_Found]] = field(
        default_factory=dict[tuple[str, str, Side], list[_Found]]
    )


def diff_packages(old: SpecPackage | None, new: SpecPackage | None) -> list[Change]:
    """Every change from ``old`` to ``new`` (a missing side: every tool added or removed)."""
    old_tools = {t.name: t for t in old.tools} if old else {}
    new_tools = {t.name: t for t in new.tools} if new else {}
    told = SchemaTable(old.definitions if old else (), old.source if old else "")
    tnew = SchemaTable(new.definitions if new else (), new.source if new else "")
    changes: list[Change] = []
    removed = [t for n, t in old_tools.items() if n not in new_tools]
    added = [t for n, t in new_tools.items() if n not in old_tools]
    renamed: list[tuple[ToolSpec, ToolSpec]] = []
    for t in list(removed):
        shape = told.shape(t.params)[0]
        for u in added:
            if tnew.shape(u.params)[0] == shape and (t.description or "") == (u.description or ""):
                renamed.append((t, u))
                removed.remove(t)
                added.remove(u)
                break
    for t, u in renamed:
        changes.append(
            Change(
                rule="tool-renamed",
                audience="calls",
                tools=(t.name,),
                old=t.loc,
                new=u.loc,
                message=f"tool {t.name!r} is now {u.name!r}: Calls naming {t.name!r} are refused",
                witness=freeze({"_tool": t.name}),
                rejected=True,
            )
        )
    for t in removed:
        w = told.sample(t.params)
        changes.append(
            Change(
                rule="tool-removed",
                audience="calls",
                tools=(t.name,),
                old=t.loc,
                new=SourceLocation(file=new.source) if new else None,
                message=f"tool {t.name!r} was removed: Calls to it are refused",
                witness=freeze({"_tool": t.name, **w}) if isinstance(w, dict) else None,
                rejected=True,
            )
        )
    for u in added:
        changes.append(
            Change(
                rule="tool-added",
                audience="safe",
                tools=(u.name,),
                old=SourceLocation(file=old.source) if old else None,
                new=u.loc,
                message=f"tool {u.name!r} was added",
            )
        )
    for name, t in old_tools.items():
        u = new_tools.get(name)
        if u is not None:
            changes.extend(_diff_tool(t, u, told, tnew))
            if old is not None and new is not None and old.http and new.http:
                changes.extend(_diff_http(t, u, old.http, new.http))
    if old is not None and new is not None and old.http and new.http:
        changes.extend(_diff_servers(old, new, old.http.servers, new.http.servers, ()))
    common_old = [n for n in old_tools if n in new_tools]
    common_new = [n for n in new_tools if n in old_tools]
    if common_old != common_new and old and new:
        changes.append(
            Change(
                rule="tools-reordered",
                audience="prompt",
                tools=tuple(common_new),
                old=SourceLocation(file=old.source),
                new=SourceLocation(file=new.source),
                message="the tools are listed in another order (models see them in it)",
            )
        )
    return _merge(changes)


def diff_schemas(
    old: SchemaNode,
    new: SchemaNode,
    told: SchemaTable,
    tnew: SchemaTable,
    *,
    side: Side = "params",
    tool: str = "",
) -> list[Change]:
    """The changes from ``old`` to ``new`` read as a tool's parameters (or its Output)."""
    ctx = _Ctx(old=told, new=tnew, side=side)
    return _merge([_finish(f, (tool,), old, new, ctx) for f in _compare(old, new, ctx)])


def _merge(changes: list[Change]) -> list[Change]:
    """One change per (rule, location): a change in a shared schema lists every tool."""
    merged: dict[tuple[str, str, str, str], Change] = {}
    for c in changes:
        key = (c.rule, str(c.old), str(c.new), c.message)
        prev = merged.get(key)
        if prev is None:
            merged[key] = c
        else:
            tools = tuple(dict.fromkeys(prev.tools + c.tools))
            merged[key] = replace(prev, tools=tools, witness=prev.witness or c.witness)
    order = {a: i for i, a in enumerate(AUDIENCES)}
    return sorted(
        merged.values(),
        key=lambda c: (order[c.audience], str(c.old or c.new), c.rule, c.tools),
    )


def _finish(
    f: _Found, tools: tuple[str, ...], old: SchemaNode, new: SchemaNode, ctx: _Ctx
) -> Change:
    """A located change with its witness checked against the whole schema of each side."""
    witness: str | None = None
    rejected = False
    audience = f.audience
    if f.witness is not NO_VALUE:
        here, there = (ctx.old, ctx.new) if f.side == "old" else (ctx.new, ctx.old)
        first, second = (old, new) if f.side == "old" else (new, old)
        if here.valid(first, f.witness) is True:
            other = there.valid(second, f.witness)
            witness = freeze(f.witness)
            rejected = other is False
            if f.side == "new" and other is not False:
                witness = None  # "the new spec accepts more": only shown when the old refused it
    if audience == "calls" and witness is None and f.rejected:
        audience = "unknown"  # a narrowing without a checked witness is not proved
    return Change(
        rule=f.rule,
        audience=audience,
        tools=tools,
        old=f.old,
        new=f.new,
        message=f.message,
        witness=witness,
        rejected=rejected if f.side == "old" else False,
    )


def _diff_tool(t: ToolSpec, u: ToolSpec, told: SchemaTable, tnew: SchemaTable) -> list[Change]:
    out: list[Change] = []
    tools = (t.name,)

    def add(rule: str, audience: Audience, field_: str, message: str) -> None:
        out.append(
            Change(
                rule=rule,
                audience=audience,
                tools=tools,
                old=t.loc.child(field_) if field_ else t.loc,
                new=u.loc.child(field_) if field_ else u.loc,
                message=message,
            )
        )

    if (t.description or "") != (u.description or ""):
        add("tool-description-changed", "prompt", "description", "the tool's description changed")
    if (t.title or "") != (u.title or ""):
        add("tool-title-changed", "prompt", "title", "the tool's title changed")
    if t.deprecated != u.deprecated:
        add(
            "tool-deprecated" if u.deprecated else "tool-undeprecated",
            "prompt",
            "deprecated",
            "the tool is now deprecated" if u.deprecated else "the tool is no longer deprecated",
        )
    if t.activity != u.activity:
        add(
            "activity-changed",
            "activities",
            "_activity",
            f"the tool's Activity changed from {t.activity!r} to {u.activity!r}",
        )
    if t.execution_type != u.execution_type:
        add(
            "execution-type-changed",
            "activities",
            "executionType",
            f"the execution type changed from {t.execution_type} to {u.execution_type}",
        )
    if t.execution != u.execution:
        add("execution-changed", "activities", "execution", "the execution config changed")
    if (t.visible is not False) and u.visible is False:
        add("tool-hidden", "calls", "visible", "the tool is no longer offered to models")
    elif t.visible is False and u.visible is not False:
        add("tool-shown", "safe", "visible", "the tool is now offered to models")
    if bool(t.strict) != bool(u.strict):
        add("strict-changed", "prompt", "strict", f"strict mode is now {bool(u.strict)}")
    if t.annotations != u.annotations:
        add("tool-annotations-changed", "prompt", "annotations", "the tool's annotations changed")
    if t.toolsets != u.toolsets:
        add("toolsets-changed", "prompt", "", f"toolsets {list(t.toolsets)} → {list(u.toolsets)}")
    ctx = _Ctx(old=told, new=tnew, side="params")
    for f in _compare(t.params, u.params, ctx):
        out.append(_finish(f, tools, t.params, u.params, ctx))
    if t.output is None and u.output is not None:
        add(
            "output-added",
            "activities",
            "",
            "the tool now declares an Output schema: Activities must return a valid Output",
        )
    elif t.output is not None and u.output is None:
        add("output-removed", "safe", "", "the tool no longer declares an Output schema")
    elif t.output is not None and u.output is not None:
        octx = _Ctx(old=told, new=tnew, side="output")
        for f in _compare(t.output, u.output, octx):
            out.append(_finish(f, tools, t.output, u.output, octx))
    return out


def _diff_http(t: ToolSpec, u: ToolSpec, old: HttpApi, new: HttpApi) -> list[Change]:
    """How the tool's operation is called over HTTP: what the generated HTTP Activity does."""
    a = old.operations.get(t.name)
    b = new.operations.get(u.name)
    if a is None or b is None:
        return []
    out: list[Change] = []

    def add(rule: str, message: str) -> None:
        out.append(
            Change(
                rule=rule,
                audience="activities",
                tools=(t.name,),
                old=t.loc,
                new=u.loc,
                message=message,
            )
        )

    if (a.method, a.path) != (b.method, b.path):
        add(
            "http-endpoint-changed",
            f"the operation is now {b.method} {b.path} (was {a.method} {a.path}): the HTTP "
            "Activity calls another endpoint",
        )
    wire_a = {(p.field, p.name, p.location, p.style, p.explode) for p in a.parameters}
    wire_b = {(p.field, p.name, p.location, p.style, p.explode) for p in b.parameters}
    if wire_a != wire_b:
        moved = sorted({f for f, *_ in wire_a ^ wire_b})
        add(
            "http-parameters-changed",
            f"where or how {', '.join(repr(m) for m in moved)} go on the wire changed",
        )
    media_a = a.body.media_type if a.body else None
    media_b = b.body.media_type if b.body else None
    if media_a != media_b:
        add("http-body-changed", f"the request body is sent as {media_b} (was {media_a})")
    if a.security != b.security:
        add("http-security-changed", "the operation's security requirements changed")
    if a.servers and b.servers:
        out.extend(
            replace(c, old=t.loc, new=u.loc)
            for c in _diff_servers(None, None, a.servers, b.servers, (t.name,))
        )
    elif a.servers != b.servers:
        add(
            "http-servers-changed",
            "the operation's own servers were "
            + ("removed: it is called on the API's servers" if a.servers else "added")
            + f" ({_server_list(b.servers or a.servers)})",
        )
    return out


def _server_list(servers: tuple[HttpServer, ...]) -> str:
    return ", ".join(_server_url(s) for s in servers)


def _server_url(server: HttpServer) -> str:
    """A server's URL with its variables' defaults filled in (what is called by default)."""
    url = server.url
    for name, value in server.variables.items():
        url = url.replace("{" + name + "}", value)
    return url


def _diff_servers(
    old: SpecPackage | None,
    new: SpecPackage | None,
    a: tuple[HttpServer, ...],
    b: tuple[HttpServer, ...],
    tools: tuple[str, ...],
) -> list[Change]:
    """The base URLs an HTTP Activity calls: the default (the first server) and the others a
    client may pin (``HttpClient(base_url=...)`` must name one of them)."""
    where_old = SourceLocation(file=old.source) if old else None
    where_new = SourceLocation(file=new.source) if new else None
    urls_a = [_server_url(x) for x in a]
    urls_b = [_server_url(x) for x in b]
    out: list[Change] = []

    def add(rule: str, audience: Audience, message: str) -> None:
        out.append(
            Change(
                rule=rule,
                audience=audience,
                tools=tools,
                old=where_old,
                new=where_new,
                message=message,
            )
        )

    gone = [u for u in urls_a if u not in urls_b]
    if urls_a[:1] != urls_b[:1]:
        add(
            "server-changed",
            "activities",
            f"the default server is now {urls_b[0] if urls_b else 'none'} (was "
            f"{urls_a[0] if urls_a else 'none'}): HTTP Activities call another base URL"
            + (
                ", and a client that pinned the old one is refused"
                if urls_a[:1] == gone[:1]
                else ""
            ),
        )
        gone = [u for u in gone if u not in urls_a[:1]]
    if gone:
        add(
            "server-removed",
            "activities",
            f"server {', '.join(gone)} is no longer listed: a client that pinned it "
            "(base_url=) is refused",
        )
    added = [u for u in urls_b if u not in urls_a and u not in urls_b[:1]]
    if added and urls_a:
        add("server-added", "safe", f"server {', '.join(added)} was added")
    return out


# -- schema comparison ----------------------------------------------------------------------


def _compare(a: SchemaNode, b: SchemaNode, ctx: _Ctx, *, annotations: bool = True) -> list[_Found]:
    """Changes from ``a`` to ``b``, structurally where both have the same shape of node.

    A ``$ref`` is compared as what it names, annotated as the model reads it there: the
    annotations written beside it, else the named schema's (so a schema moved behind a ``$ref``
    with the same text is no change)."""
    if isinstance(a, RefNode) or isinstance(b, RefNode):
        found = _annotations(_read_meta(a, ctx.old), _read_meta(b, ctx.new)) if annotations else []
        ka = ctx.old.ref_key(a.target) if isinstance(a, RefNode) else "inline"
        kb = ctx.new.ref_key(b.target) if isinstance(b, RefNode) else "inline"
        memo_key = (ka, kb, ctx.side)
        if isinstance(a, RefNode) and isinstance(b, RefNode) and memo_key in ctx.memo:
            return found + ctx.memo[memo_key]
        if (ka, kb) in ctx.stack:
            return found  # a recursive schema: the changes inside are reported on the first visit
        ctx.stack.add((ka, kb))
        try:
            inside = _compare(ctx.old.resolve(a), ctx.new.resolve(b), ctx, annotations=False)
        finally:
            ctx.stack.discard((ka, kb))
        if isinstance(a, RefNode) and isinstance(b, RefNode):
            ctx.memo[memo_key] = inside
        return found + inside
    out = _annotations(a.meta, b.meta) if annotations else []
    if isinstance(a, ObjectNode) and isinstance(b, ObjectNode):
        out.extend(_objects(a, b, ctx))
    elif (
        isinstance(a, ArrayNode)
        and isinstance(b, ArrayNode)
        and not (a.prefix_items or b.prefix_items)
    ):
        out.extend(_arrays(a, b, ctx))
    elif (
        isinstance(a, UnionNode)
        and isinstance(b, UnionNode)
        and len(a.variants) == len(b.variants)
        and _pairwise(a, b, ctx)
    ):
        for va, vb in zip(a.variants, b.variants, strict=True):
            out.extend(_compare(va, vb, ctx))
    else:
        out.extend(_leaf(a, b, ctx))
    return out


def _read_meta(node: SchemaNode, table: SchemaTable) -> Meta:
    """The annotations a model reads where ``node`` stands: a ``$ref``'s own, else (each one it
    leaves out) those of the schema it names, at the place they are written."""
    if not isinstance(node, RefNode):
        return node.meta
    named = table.resolve(node)
    if isinstance(named, RefNode):  # (a chain: its end's annotations)
        named = table.resolve(named)
    here, there = node.meta, named.meta
    if here.description is None and here.title is None:
        return replace(there, default=here.default or there.default)
    return replace(
        here,
        description=here.description if here.description is not None else there.description,
        title=here.title if here.title is not None else there.title,
        extra=here.extra or there.extra,
        default=here.default or there.default,
        deprecated=here.deprecated or there.deprecated,
    )


def _pairwise(a: UnionNode, b: UnionNode, ctx: _Ctx) -> bool:
    """Whether variants can be compared one by one: the same JSON types in the same places, and
    pairwise disjoint (so that narrowing one variant is not made up for by another)."""
    seen: set[str] = set()
    for va, vb in zip(a.variants, b.variants, strict=True):
        ta, tb = ctx.old.types(va), ctx.new.types(vb)
        if ta is None or tb is None or ta != tb or (ta & seen):
            return False
        seen |= ta
    return True


def _annotations(a: Meta, b: Meta) -> list[_Found]:
    out: list[_Found] = []
    for name, key in (("description", "description"), ("title", "title")):
        if getattr(a, name) != getattr(b, name):
            out.append(
                _Found(
                    rule=f"{name}-changed",
                    audience="prompt",
                    old=a.loc.child(key),
                    new=b.loc.child(key),
                    message=f"the {name} changed",
                )
            )
    ea = _examples(a)
    eb = _examples(b)
    if ea != eb:
        out.append(
            _Found(
                rule="examples-changed",
                audience="prompt",
                old=a.loc,
                new=b.loc,
                message="the examples changed",
            )
        )
    if a.default != b.default:
        out.append(
            _Found(
                rule="default-changed",
                audience="activities",
                old=a.loc.child("default"),
                new=b.loc.child("default"),
                message=f"the default changed from {a.default or 'none'} to {b.default or 'none'}: "
                "an Activity receives another value when a Call leaves it out",
            )
        )
    if a.deprecated != b.deprecated:
        out.append(
            _Found(
                rule="deprecated-changed",
                audience="prompt",
                old=a.loc,
                new=b.loc,
                message="now deprecated" if b.deprecated else "no longer deprecated",
            )
        )
    return out


def _examples(meta: Meta) -> Any:
    if meta.extra is None:
        return None
    extra = thaw(meta.extra)
    if not isinstance(extra, dict):
        return None
    return json.dumps(
        {k: v for k, v in extra.items() if k in ("examples", "example")},  # pyright: ignore[reportUnknownVariableType]
        sort_keys=True,
    )


def _objects(a: ObjectNode, b: ObjectNode, ctx: _Ctx) -> list[_Found]:
    out: list[_Found] = []
    pa = {p.name: p for p in a.properties}
    pb = {p.name: p for p in b.properties}
    base_old = _as_dict(ctx.old.sample(a))
    base_new = _as_dict(ctx.new.sample(b))
    params = ctx.side == "params"

    def wrap(f: _Found, name: str) -> _Found:
        base = base_old if f.side == "old" else base_new
        if f.witness is NO_VALUE or base is None:
            f.witness = NO_VALUE
        else:
            f.witness = {**base, name: f.witness}
        return f

    for name, p in pa.items():
        q = pb.get(name)
        if q is None:
            w: Any = NO_VALUE
            if base_old is not None:
                value = base_old.get(name, ctx.old.sample(p.schema))
                w = NO_VALUE if value is NO_VALUE else {**base_old, name: value}
            out.append(
                _Found(
                    rule="param-removed" if params else "output-field-removed",
                    audience="calls" if params else "safe",
                    old=p.schema.meta.loc,
                    new=b.meta.loc,
                    message=f"{'parameter' if params else 'Output field'} {name!r} was removed"
                    + (
                        ": Calls that pass it are refused, or its value is ignored"
                        if params
                        else ": Activities may still return it"
                    ),
                    witness=w if params else NO_VALUE,
                    rejected=params,
                )
            )
            continue
        if p.required and not q.required:
            out.append(
                _Found(
                    rule="param-now-optional" if params else "output-field-now-optional",
                    audience="activities" if params else "safe",
                    old=p.schema.meta.loc,
                    new=q.schema.meta.loc,
                    message=f"{name!r} is no longer required"
                    + (": Activities may receive Calls without it" if params else ""),
                    witness=(
                        {k: v for k, v in base_new.items() if k != name}
                        if params and base_new is not None
                        else NO_VALUE
                    ),
                    side="new",
                )
            )
        elif q.required and not p.required:
            out.append(
                _Found(
                    rule="param-now-required" if params else "output-field-now-required",
                    audience="calls" if params else "activities",
                    old=p.schema.meta.loc,
                    new=q.schema.meta.loc,
                    message=f"{name!r} is now required: "
                    + ("Calls without it are refused" if params else "Outputs must carry it"),
                    witness={k: v for k, v in base_old.items() if k != name}
                    if base_old is not None
                    else NO_VALUE,
                    rejected=True,
                )
            )
        out.extend(wrap(f, name) for f in _compare(p.schema, q.schema, ctx))
    for name, q in pb.items():
        if name in pa:
            continue
        if q.required:
            out.append(
                _Found(
                    rule="param-added-required" if params else "output-field-added-required",
                    audience="calls" if params else "activities",
                    old=a.meta.loc,
                    new=q.schema.meta.loc,
                    message=f"required {'parameter' if params else 'Output field'} {name!r} was "
                    "added: "
                    + ("Calls without it are refused" if params else "Outputs must carry it"),
                    witness=base_old if base_old is not None else NO_VALUE,
                    rejected=True,
                )
            )
        else:
            narrowed = a.additional is not None and not _holds(
                ctx.old.subset(a.additional, q.schema, ctx.new)
            )
            out.append(
                _Found(
                    rule="param-added-optional" if params else "output-field-added-optional",
                    audience=("calls" if params else "activities") if narrowed else "safe",
                    old=a.meta.loc,
                    new=q.schema.meta.loc,
                    message=f"optional {'parameter' if params else 'Output field'} {name!r} was added"
                    + (
                        " (narrowing what additionalProperties allowed under that key)"
                        if narrowed
                        else ""
                    ),
                    rejected=narrowed,
                )
            )
    if a.additional != b.additional:
        out.extend(_additional(a, b, ctx, base_old, base_new))
    order_a = [n for n in pa if n in pb]
    order_b = [n for n in pb if n in pa]
    if order_a != order_b:
        out.append(
            _Found(
                rule="properties-reordered",
                audience="prompt",
                old=a.meta.loc,
                new=b.meta.loc,
                message="the properties are listed in another order",
            )
        )
    if (a.min_properties, a.max_properties) != (b.min_properties, b.max_properties):
        out.extend(_leaf(_bare_object(a), _bare_object(b), ctx, rule="property-count"))
    return out


def _as_dict(value: Any) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _bare_object(node: ObjectNode) -> ObjectNode:
    return replace(node, properties=tuple(replace(p, required=False) for p in node.properties))


def _additional(
    a: ObjectNode,
    b: ObjectNode,
    ctx: _Ctx,
    base_old: dict[str, Any] | None,
    base_new: dict[str, Any] | None,
) -> list[_Found]:
    from .subset import UNDECLARED_KEY

    key = UNDECLARED_KEY
    while any(p.name == key for p in (*a.properties, *b.properties)):
        key += "_"
    closed_b = b.additional is not None and ctx.new.types(b.additional) == frozenset()
    closed_a = a.additional is not None and ctx.old.types(a.additional) == frozenset()
    if closed_a and closed_b:
        return []
    if a.additional is not None and b.additional is not None and not (closed_a or closed_b):
        found = _compare(a.additional, b.additional, ctx)
        for f in found:
            base = base_old if f.side == "old" else base_new
            f.witness = (
                {**base, key: f.witness}
                if f.witness is not NO_VALUE and base is not None
                else NO_VALUE
            )
        return found
    params = ctx.side == "params"
    bare_a = replace(a, properties=())
    bare_b = replace(b, properties=())
    sub = ctx.old.subset(bare_a, bare_b, ctx.new)
    if sub.holds is False:
        undeclared = _as_dict(sub.witness)
        w: Any = (
            {**base_old, key: undeclared.get(key)}
            if base_old is not None and undeclared is not None
            else NO_VALUE
        )
        return [
            _Found(
                rule="additional-properties-closed"
                if closed_b
                else "additional-properties-narrowed",
                audience="calls" if params else "activities",
                old=a.meta.loc,
                new=b.meta.loc.child("additionalProperties"),
                message="undeclared properties are no longer accepted"
                if closed_b
                else "undeclared properties must now match additionalProperties",
                witness=w,
                rejected=True,
            )
        ]
    if sub.holds is None:
        return [
            _Found(
                rule="additional-properties-changed",
                audience="unknown",
                old=a.meta.loc,
                new=b.meta.loc.child("additionalProperties"),
                message="additionalProperties changed, and whether it narrows is undecided",
            )
        ]
    return [
        _Found(
            rule="additional-properties-opened",
            audience="activities" if params else "safe",
            old=a.meta.loc,
            new=b.meta.loc,
            message="undeclared properties are now accepted"
            + (": Activities may receive keys they do not know" if params else ""),
        )
    ]


def _arrays(a: ArrayNode, b: ArrayNode, ctx: _Ctx) -> list[_Found]:
    out: list[_Found] = []
    if a.items is not None and b.items is not None:
        for f in _compare(a.items, b.items, ctx):
            if f.witness is not NO_VALUE:
                table = ctx.old if f.side == "old" else ctx.new
                f.witness = _array_of(table, a if f.side == "old" else b, f.witness)
            out.append(f)
    elif a.items is not None or b.items is not None:
        out.extend(
            _leaf(
                replace(a, min_items=None, max_items=None, unique_items=False),
                replace(b, min_items=None, max_items=None, unique_items=False),
                ctx,
                rule="items",
            )
        )
    if (a.min_items, a.max_items, a.unique_items) != (b.min_items, b.max_items, b.unique_items):
        # the length bounds alone: the new bounds over the old items
        out.extend(_leaf(a, replace(b, items=a.items), ctx, rule="array-bounds"))
    return out


def _array_of(table: SchemaTable, node: ArrayNode, item: Any) -> Any:
    from .subset import _pad  # pyright: ignore[reportPrivateUsage]

    return _pad(table, node, item)


def _holds(v: Verdict) -> bool:
    return v.holds is True


def _what(a: SchemaNode, b: SchemaNode) -> str:
    if isinstance(b, LiteralNode) and a.kind in ("string", "integer", "number", "boolean"):
        return "enum"
    if a.kind != b.kind:
        return "type"
    if isinstance(a, LiteralNode):
        return "enum"
    match a.kind:
        case "integer" | "number":
            return "bounds"
        case "string":
            sa, sb = a, b
            if getattr(sa, "pattern", None) != getattr(sb, "pattern", None):
                return "pattern"
            if getattr(sa, "format", None) != getattr(sb, "format", None) and (
                getattr(sa, "min_length", None),
                getattr(sa, "max_length", None),
            ) == (getattr(sb, "min_length", None), getattr(sb, "max_length", None)):
                return "format"
            return "length"
        case "union":
            return "variants"
        case _:
            return a.kind


def _leaf(a: SchemaNode, b: SchemaNode, ctx: _Ctx, rule: str | None = None) -> list[_Found]:
    """The change from ``a`` to ``b`` as a whole, decided by the subset check both ways."""
    if ctx.old.same(a, ctx.new, b):
        return []
    refs_a = ctx.old.shape(a)[1]
    refs_b = ctx.new.shape(b)[1]
    what = rule or _what(a, b)
    if what == "format":
        return [
            _Found(
                rule="format-changed",
                audience="prompt",
                old=a.meta.loc,
                new=b.meta.loc,
                message="the string format changed (an annotation: the models do not assert "
                "formats unless asked to)",
            )
        ]
    sub = ctx.old.subset(a, b, ctx.new)
    params = ctx.side == "params"
    if sub.holds is None:
        return [
            _Found(
                rule=f"{what}-changed",
                audience="unknown",
                old=a.meta.loc,
                new=b.meta.loc,
                message="the schema changed, and whether every old value is still accepted is "
                "undecided",
            )
        ]
    if sub.holds is False:
        return [
            _Found(
                rule=f"{what}-narrowed",
                audience="calls" if params else "activities",
                old=a.meta.loc,
                new=b.meta.loc,
                message=f"{_NOUN.get(what, what)} narrower: "
                + ("a Call valid before is refused" if params else "Outputs must satisfy more"),
                witness=sub.witness,
                rejected=True,
            )
        ]
    sup = ctx.new.subset(b, a, ctx.old)
    if sup.holds is True:
        if refs_a or refs_b:
            return []
        return [
            _Found(
                rule=f"{what}-rewritten",
                audience="safe",
                old=a.meta.loc,
                new=b.meta.loc,
                message="the schema is written differently and accepts the same values",
            )
        ]
    return [
        _Found(
            rule=f"{what}-widened",
            audience="activities" if params else "safe",
            old=a.meta.loc,
            new=b.meta.loc,
            message=f"{_NOUN.get(what, what)} wider: "
            + (
                "Activities may receive values they do not handle"
                if params
                else "Outputs may carry values consumers did not see before"
            ),
            witness=sup.witness if sup.holds is False else NO_VALUE,
            side="new",
        )
    ]


def breaking(changes: Iterable[Change]) -> list[Change]:
    """The changes that break someone (or may: ``unknown``)."""
    return [c for c in changes if c.audience in BREAKING]


_NOUN = {
    "type": "the type is",
    "enum": "the enum is",
    "bounds": "the numeric bounds are",
    "pattern": "the pattern is",
    "length": "the length bounds are",
    "variants": "the variants are",
    "items": "the items are",
    "array-bounds": "the array bounds are",
    "property-count": "the property count bounds are",
}
