"""Compiler layer (frontends/openapi): Security Scheme and Security Requirement Objects, and
the parameters named like a credential that no scheme declares. Imports ``ir``, ``_load``,
``diagnostics``, ``normalise``, ``_common``, ``_context`` and the runtime's HTTP contract.
"""

from __future__ import annotations

import re
from typing import Any

from toolbind.contract import HttpApi, SecurityRequirement, SecurityScheme

from ..._load import as_array, as_object
from ...diagnostics import describe
from ...ir import (
    AnyNode,
    NullNode,
    ObjectNode,
    RefNode,
    SchemaNode,
    SourceLocation,
    StringNode,
    ToolSpec,
    UnionNode,
)
from ...normalise import openapi_refs, openapi_swagger2
from ._common import Where
from ._context import Context

# A query, header or cookie parameter name that says it carries a secret
# (``looks_like_credential``). Its last word names a secret (``X-Api-Key``, ``client_secret``,
# ``refreshToken``, Ory Kratos's ``X-Session-Token``); a session id only as the whole name
# (``login_session_id`` is an admin's filter in Ory Hydra). A bare ``token`` is not one: in the
# query it is as often an invitation's or a page's (``page_token``, ``next_token``).
_CREDENTIAL_NAME = re.compile(
    r"(?:(?:^|[-_])(?:api[-_]?key|apikey|"
    r"(?:access|api|auth|bearer|private|refresh|security|session)[-_]?token|"
    r"secret|password|authorization)|^(?:x-)?session[-_]?id)$",
    re.IGNORECASE,
)
# In a header, a token is the caller's credential whatever names it (``X-Vault-Token``, GitLab's
# ``Private-Token``, ``X-Amz-Security-Token``), but for a page's or a retry's (``X-Next-Token``,
# ``X-Continuation-Token``, ``X-Idempotency-Token``).
_HEADER_TOKEN = re.compile(r"(?:^|[-_])token$", re.IGNORECASE)
_CURSOR_TOKEN = re.compile(
    r"(?:^|[-_])(?:page|next|prev|previous|continuation|sync|cursor|resume|pagination|delta|"
    r"idempotency)[-_]?token$",
    re.IGNORECASE,
)
# In a request body a password or secret is more often a value being set (a new user's) than the
# caller's own credential: there only names that say they authenticate the call.
_BODY_CREDENTIAL_NAME = re.compile(
    r"(?:^|[-_])(?:api[-_]?key|apikey|api[-_]?secret|access[-_]?token|auth[-_]?token|"
    r"refresh[-_]?token|client[-_]?secret)$",
    re.IGNORECASE,
)


def security_schemes(ctx: Context) -> dict[str, SecurityScheme]:
    """The document's security schemes by key; a requirement naming none is reported."""
    document = Where(ctx.spec, ctx.top, ctx.spec, ctx.path)
    document = ctx.canonical((openapi_swagger2.SECURITY_DEFINITIONS,), document)
    raw_table = (as_object(document.value.get("components")) or {}).get("securitySchemes")
    loc = document.at("components", "securitySchemes")
    where = Where(raw_table, loc, ctx.spec, ctx.path)
    ctx.normalise((openapi_refs.SECURITY_SCHEMES_REF,), raw_table, loc)
    if isinstance(raw_table, dict) and "$ref" in raw_table:
        where = ctx.deref(where, "security schemes") or Where({}, loc, ctx.spec, ctx.path)
    table = as_object(where.value) or {}
    out: dict[str, SecurityScheme] = {}
    for key, raw in table.items():
        at = where.loc.child(key)
        found = ctx.deref(Where(raw, at, where.root, where.path), "security scheme")
        if found is None:  # (deref said why)
            continue
        scheme = as_object(found.value)
        if scheme is None:
            ctx.diags.warning(
                at, f"security scheme is {describe(found.value)}", "an object; skipped"
            )
            continue
        scheme = ctx.normalise((openapi_swagger2.SECURITY_SCHEME,), scheme, found.loc)
        made = _scheme(ctx, key, scheme, found.loc)
        if made is not None:
            out[key] = made
    for name, at in ctx.named_schemes.items():
        if name not in table:  # (one declared but not supported has its own note)
            ctx.diags.warning(
                at,
                f"security requirement names {name!r}, which no security scheme declares: "
                "no credential can be given for it, so an operation that needs it fails",
                f"a key of {loc.pointer.lstrip('/').replace('/', '.')}"
                + (f" ({', '.join(sorted(table))})" if table else ""),
            )
    return out


def _scheme(
    ctx: Context, key: str, s: dict[str, Any], loc: SourceLocation
) -> SecurityScheme | None:
    kind = s.get("type")
    if kind == "apiKey":
        where = s.get("in")
        name = s.get("name")
        if where not in ("header", "query", "cookie") or not isinstance(name, str):
            ctx.diags.warning(
                loc, "apiKey scheme without a valid 'name' and 'in'", "name and in; skipped"
            )
            return None
        return SecurityScheme(key=key, type="apiKey", name=name, location=where)
    if kind == "http":
        scheme = s.get("scheme")
        return SecurityScheme(
            key=key, type="http", scheme=scheme.lower() if isinstance(scheme, str) else None
        )
    if kind == "oauth2":
        return _oauth2(key, s)
    if kind == "openIdConnect":
        url = s.get("openIdConnectUrl")
        return SecurityScheme(
            key=key, type="openIdConnect", openid_url=url if isinstance(url, str) else None
        )
    ctx.diags.note(loc, f"security scheme type {describe(kind)} is not supported; skipped")
    return None


def _oauth2(key: str, s: dict[str, Any]) -> SecurityScheme:
    """An OAuth 2 scheme: its client-credentials token URL and every flow's scopes."""
    token_url: Any = None
    scopes: dict[str, Any] = {}
    flows = as_object(s.get("flows")) or {}
    flow = as_object(flows.get("clientCredentials"))
    if flow is not None:
        token_url = flow.get("tokenUrl")
    for raw_flow in flows.values():
        scopes.update(as_object((as_object(raw_flow) or {}).get("scopes")) or {})
    return SecurityScheme(
        key=key,
        type="oauth2",
        token_url=token_url if isinstance(token_url, str) else None,
        scopes=tuple(sorted(scopes)),
    )


def security(
    ctx: Context, raw: Any, loc: SourceLocation
) -> tuple[tuple[SecurityRequirement, ...], ...] | None:
    """A ``security`` field's requirements (None: the field is absent or no array)."""
    items = as_array(raw)
    if items is None:
        return None
    out: list[tuple[SecurityRequirement, ...]] = []
    for i, raw_req in enumerate(items):
        req = as_object(raw_req)
        if req is None:
            ctx.diags.warning(
                loc.child(i), f"security requirement is {describe(raw_req)}", "an object"
            )
            continue
        for k in req:
            ctx.named_schemes.setdefault(k, loc.child(i, k))
        out.append(
            tuple(
                SecurityRequirement(
                    scheme=k,
                    scopes=tuple(str(x) for x in as_array(v) or []),
                )
                for k, v in req.items()
            )
        )
    return tuple(out)


def credential_parameters(ctx: Context, api: HttpApi, tools: list[ToolSpec]) -> None:
    """A parameter named like a credential (``Api-Key``, ``X-Auth-Token``) that no apiKey
    scheme declares is a Call field: a model is asked for the secret (Discourse's spec
    declares no securitySchemes and an ``Api-Key`` header on 22 operations). Said once per
    name and place, at its first operation; it stays a field (it may be no secret). A path
    parameter is never one: it names a resource (PagerDuty's ``session_id`` of a session an
    admin revokes), and no apiKey scheme can be ``in: path``."""
    declared = {
        (s.name.lower(), s.location)
        for s in api.security_schemes.values()
        if s.type == "apiKey" and s.name is not None
    }
    where = {t.name: t for t in tools}
    found: dict[tuple[str, str], list[str]] = {}
    for name, op in api.operations.items():
        for pname, pin, schema in _places(
            op, {f.name: f.schema for f in where[name].params.properties}
        ):
            if (
                looks_like_credential(pname, pin)
                and (pname.lower(), pin) not in declared
                # a flag or number (GitHub's ``hide_secret: boolean``) carries no secret
                and _may_be_secret(schema)
            ):
                found.setdefault((pname, pin), []).append(name)
    for (pname, pin), tool_names in found.items():
        many = len(tool_names)
        ctx.diags.warning(
            where[tool_names[0]].loc,
            f"{'request body property' if pin == 'body' else pin + ' parameter'} {pname!r} "
            "looks like a credential, and no securityScheme declares it: it is a Call field, "
            "so a model is asked for it"
            + (f" ({many} operations, the first here)" if many > 1 else ""),
            f"an apiKey securityScheme (name: {pname}, in: {pin}): its value then comes "
            "from configuration (credentials=, the environment), never from a model"
            if pin != "body"
            else "a secret from configuration: OpenAPI declares one as an apiKey "
            "securityScheme in a header, the query or a cookie, never in a body",
        )


def _places(op: Any, fields: dict[str, SchemaNode]) -> list[tuple[str, str, SchemaNode | None]]:
    """An operation's parameters and body properties: (name, where, the Call field's schema)."""
    places: list[tuple[str, str, SchemaNode | None]] = [
        (p.name, p.location, fields.get(p.field)) for p in op.parameters
    ]
    body = op.body
    # Vonage's SMS API takes api_key/api_secret in its form body
    if body is not None and body.wrapped is None:
        places += [(prop, "body", fields.get(field)) for field, prop in body.fields]
    elif body is not None and body.wrapped is not None:
        wrapped = fields.get(body.wrapped)
        if isinstance(wrapped, UnionNode):  # an optional body: ``body | None``
            wrapped = next((v for v in wrapped.variants if isinstance(v, ObjectNode)), None)
        if isinstance(wrapped, ObjectNode):
            places += [(f.name, "body", f.schema) for f in wrapped.properties]
    return places


def looks_like_credential(name: str, where: str) -> bool:
    """Whether a parameter (or, ``where == "body"``, a request body property) is named like the
    caller's own credential (``_CREDENTIAL_NAME``, ``_BODY_CREDENTIAL_NAME``); a path parameter
    never is."""
    if where == "path":
        return False
    if where == "body":
        return _BODY_CREDENTIAL_NAME.search(name) is not None
    if _CREDENTIAL_NAME.search(name):
        return True
    return (
        where == "header"
        and _HEADER_TOKEN.search(name) is not None
        and _CURSOR_TOKEN.search(name) is None
    )


def _may_be_secret(node: SchemaNode | None) -> bool:
    """Whether a parameter's value can be a secret: a string (or a nullable one, or a value whose
    type is open or behind a ``$ref``); never a boolean, number, array or object."""
    if isinstance(node, UnionNode):
        return any(_may_be_secret(v) for v in node.variants if not isinstance(v, NullNode))
    return node is None or isinstance(node, (StringNode, AnyNode, RefNode))
