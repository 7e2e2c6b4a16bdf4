"""Compiler layer (frontends/openapi): Parameter Objects as the Call's fields and the HTTP
contract's ``HttpParameter``. Imports ``ir``, ``_load``, ``diagnostics``, ``normalise``,
``_common``, ``_context``, ``_servers`` (the path template) and the runtime's HTTP contract.

An operation's parameters are its path item's, overridden by its own by (name, in); the
headers the HTTP client sets itself are never Call fields; a path template's names and the path
parameters must agree. Each kept parameter is a Call field whose name every model provider
takes, its wire name kept beside it. A Swagger 2.0 parameter is read as the OpenAPI 3 parameter
the rules make of it (``normalise.openapi_swagger2``); its ``in: body`` and ``in: formData``
ones are the request body (``_bodies``).
"""

from __future__ import annotations

import re
from typing import Any, cast

from toolbind.contract import (
    IGNORED_HEADERS,
    HttpParameter,
    ParameterLocation,
)

from ..._load import as_array, as_object
from ...diagnostics import describe
from ...ir import Property, SourceLocation
from ...normalise import openapi_parameters, openapi_paths, openapi_swagger2
from ...normalise._openapi import PathParameters
from ...normalise.openapi_swagger2 import STYLES
from ._common import (
    DEFAULT_STYLE,
    LOCATIONS,
    Where,
    annotate,
    never_empty,
)
from ._context import Context

# A property name every model provider takes (Anthropic's and Bedrock's rule, the strictest).
_PROPERTY_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")

Params = dict[tuple[str, str], Where]
"""An operation's parameters by (name, in), each where it was read."""


def collect(
    ctx: Context, owners: list[tuple[dict[str, Any], SourceLocation, Where]]
) -> tuple[Params, str | None]:
    """The parameters of ``owners`` (the path item's parts, then the operation), a later
    owner's replacing an earlier one's, and a declared ``Accept`` header's one value."""
    raw_params: Params = {}
    accept: str | None = None
    for owner, oloc, doc in owners:
        for i, raw in enumerate(as_array(owner.get("parameters")) or []):
            at = Where(raw, oloc.child("parameters", i), doc.root, doc.path)
            found = ctx.deref_object(at, "parameter")
            if found is None:
                ctx.counts["parameters", "read"] += 1
                ctx.counts["parameters", "reported"] += 1
                continue
            p, pobj = found
            pname, pin = pobj.get("name"), pobj.get("in")
            valid = isinstance(pname, str) and pin in (*LOCATIONS, "body", "formData")
            kind = f"parameters in {pin}" if valid else "parameters"
            ctx.counts[kind, "read"] += 1
            if not isinstance(pname, str) or pin not in (*LOCATIONS, "body", "formData"):
                # (no rule: broken input, said and skipped)
                ctx.diags.warning(
                    p.loc,
                    f"parameter without a valid name and location ({describe(pname)}, "
                    f"{describe(pin)})",
                    "name and in: path, query, header or cookie; skipped",
                )
                ctx.counts[kind, "reported"] += 1
                continue
            if (pname, pin) in raw_params:  # the operation's replaces the path item's
                ctx.counts[kind, "overridden"] += 1
            if pin == "header" and pname.lower() in IGNORED_HEADERS:
                raw_params.pop((pname, pin), None)
                value = _ignored_header(ctx, pname, p, kind)
                if pname.lower() == "accept":  # the operation's replaces the path item's
                    accept = value
                continue
            raw_params[(pname, pin)] = p
    return raw_params, accept


def _ignored_header(ctx: Context, pname: str, p: Where, kind: str) -> str | None:
    """A header parameter the HTTP client sets (OpenAPI ignores Accept/Content-Type/
    Authorization parameters): the model is never asked for credentials or for what frames the
    request. Said so; the value of an ``Accept`` that declares one."""
    value = one_value(ctx, p) if pname.lower() == "accept" else None
    if value is not None:
        # a versioned media type (``application/vnd.x+json;version=2``) that the API may
        # require: sent as declared, instead of the response's media type
        ctx.diags.note(
            p.loc,
            f"header parameter {pname!r} is not a Call field: every call sends "
            f"the value it declares, {value!r}",
        )
        ctx.counts[kind, "emitted"] += 1
        return value
    if pname.lower() == "cookie":
        # a session the API wants passed on (Ory Kratos: ``Cookie`` on 19 operations): never
        # asked of a model, and the client cannot make it up
        found = (
            f"header parameter {pname!r} is not a Call field: calls send the "
            "cookies the API set earlier and those of apiKey schemes in: cookie"
        )
        hint = "HttpClient(headers={'Cookie': 'name=value'}) sends it on every call"
        if (as_object(p.value) or {}).get("required") is True:
            # (no rule: a cookie no model can give, said about canonical input)
            ctx.diags.warning(
                p.loc,
                found + "; the operation requires it",
                "a cookie the API needs from elsewhere: configuration",
                hint=hint,
            )
        else:
            ctx.diags.note(p.loc, found, hint=hint)
        ctx.counts[kind, "reported"] += 1
        return None
    ctx.diags.note(
        p.loc,
        f"header parameter {pname!r} is not a Call field: the HTTP client sets "
        "it (credentials come from securitySchemes and configuration)",
    )
    ctx.counts[kind, "reported"] += 1
    return None


def match_template(
    ctx: Context, route: str, raw_params: Params, loc: SourceLocation, item: Where
) -> None:
    """Make the path parameters and the names of ``route``'s template agree
    (``normalise.openapi_paths.PARAMETER_RULES``): one the path does not name is dropped, a
    name no parameter declares becomes a required string (both said)."""
    declared = {name: (p.value, p.loc) for (name, pin), p in raw_params.items() if pin == "path"}
    read = ctx.normalise(
        openapi_paths.PARAMETER_RULES, PathParameters(route=route, declared=declared), loc
    )
    for name in declared.keys() - read.declared.keys():
        ctx.counts["parameters in path", "reported"] += 1
        del raw_params[(name, "path")]
    for name, (value, at) in read.declared.items():
        if name not in declared:
            ctx.counts["parameters in path", "read"] += 1  # read from the path template
            raw_params[(name, "path")] = Where(value, at, item.root, item.path)


def parameters(
    ctx: Context, raw_params: Params, taken: set[str], props: list[Property], tool: str
) -> list[HttpParameter]:
    """The path, query, header and cookie parameters (in that order) as Call fields."""
    ctx.wire_names = {pname for pname, _ in raw_params}
    params: list[HttpParameter] = []
    for location in LOCATIONS:
        for (pname, pin), p in raw_params.items():
            if pin != location:
                continue
            made = _parameter(ctx, pname, location, p, taken, props, tool)
            params.append(made)
            ctx.counts[f"parameters in {location}", "emitted"] += 1
    return params


def _parameter(
    ctx: Context,
    pname: str,
    location: ParameterLocation,
    p: Where,
    taken: set[str],
    props: list[Property],
    tool: str,
) -> HttpParameter:
    p = ctx.canonical(openapi_swagger2.PARAMETER, p)  # (Swagger 2.0's: OpenAPI 3's form)
    pobj: dict[str, Any] = p.value
    content_type: str | None = None
    pobj = ctx.normalise(openapi_parameters.RULES, pobj, p.loc)
    schema_value = pobj.get("schema")
    schema_loc = p.at("schema")
    content = as_object(pobj.get("content"))
    if schema_value is None and content:
        content_type = next(iter(content))
        schema_value = (as_object(content[content_type]) or {}).get("schema")
        schema_loc = p.at("content", content_type, "schema")
    raw_style = pobj.get("style", DEFAULT_STYLE[location])
    style = raw_style if raw_style in STYLES else DEFAULT_STYLE[location]
    explode = pobj.get("explode", style == "form") is True
    schema_value = ctx.normalise((openapi_swagger2.FILE_TYPE,), schema_value, schema_loc)
    node = ctx.schema(Where(schema_value, schema_loc, p.root, p.path))
    node = annotate(node, pobj)
    if location == "path":
        node = never_empty(node)
    required = location == "path" or pobj.get("required") is True
    field_name = field(ctx, pname, location, taken, tool, p.loc)
    props.append(Property(name=field_name, schema=node, required=required))
    return HttpParameter(
        name=pname,
        field=field_name,
        location=location,
        style=style,
        explode=explode,
        allow_reserved=pobj.get("allowReserved") is True,
        allow_empty=pobj.get("allowEmptyValue") is True,
        required=required,
        content_type=content_type,
    )


def one_value(ctx: Context, p: Where) -> str | None:
    """The one string a header parameter declares: its ``default``, ``const`` or one-value
    ``enum`` (Swagger 2.0: on the parameter; 3.x: on its schema, which may be a ``$ref``)."""
    obj = as_object(ctx.canonical((openapi_swagger2.PARAMETER_SCHEMA,), p).value) or {}
    if obj.get("schema") is not None:
        schema = Where(obj["schema"], p.loc.child("schema"), p.root, p.path)
        where = ctx.deref(schema, "schema")
        obj = (as_object(where.value) if where is not None else None) or {}
    enum: Any = obj.get("enum")
    candidates: list[Any] = [obj.get("const"), obj.get("default")]
    if isinstance(enum, list) and len(cast("list[Any]", enum)) == 1:
        candidates.append(cast("list[Any]", enum)[0])
    for value in candidates:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def field(
    ctx: Context, original: str, location: str, taken: set[str], tool: str, loc: SourceLocation
) -> str:
    """A Call field (JSON name) for the spec's name ``original``; a taken one gets its
    location as suffix.

    A name a provider refuses as a property key (Anthropic and Bedrock take
    ``[a-zA-Z0-9_.-]{1,64}``; Lago's query has ``statuses[]`` and ``metadata[key]``, and one
    such key fails the whole request) is a field named without the rest; the wire keeps
    the spec's name (``HttpParameter.field``, ``HttpBody.fields``)."""
    wanted = chosen = original
    renamed = not _PROPERTY_KEY.fullmatch(wanted)
    if renamed:
        chosen = wanted = _property_key(wanted) or location
    # (a renamed one never takes the name another parameter has: Twilio's ``StartTime<``
    # beside ``StartTime``)
    if chosen in taken or (renamed and chosen in ctx.wire_names):
        chosen = f"{wanted}_{location}"
        n = 2
        while chosen in taken:
            chosen = f"{wanted}_{location}{n}"
            n += 1
        ctx.diags.note(
            loc,
            f"{location} {wanted!r} of tool {tool!r} is the Call field {chosen!r} "
            f"({wanted!r} was taken)",
        )
    if renamed:
        ctx.diags.note(
            loc,
            f"{location} {original!r} of tool {tool!r} is the Call field {chosen!r}: a model "
            "provider refuses such a property name (Anthropic takes [a-zA-Z0-9_.-]{1,64}); "
            "it is sent as the spec names it",
        )
    taken.add(chosen)
    return chosen


def _property_key(name: str) -> str:
    """``name`` as a property name every provider takes: ``statuses[]`` → ``statuses``,
    ``metadata[key]`` → ``metadata_key``, ``StartTime<`` → ``StartTime_lt``; "" if nothing is
    left."""
    for mark, word in (("[]", ""), ("<=", "_lte"), (">=", "_gte"), ("<", "_lt"), (">", "_gt")):
        name = name.replace(mark, word)
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_.-]", "_", name)).strip("_")[:64]
