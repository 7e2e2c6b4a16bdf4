"""Compiler layer (frontends/openapi): the Server Objects (Swagger 2.0's host, basePath and
schemes through ``normalise.openapi_swagger2``; AutoRest's ``x-ms-parameterized-host``) as the
HTTP contract's ``HttpServer``. Imports ``ir``, ``_load``, ``diagnostics``, ``normalise``,
``_common``, ``_context`` and the runtime's HTTP contract.
"""

from __future__ import annotations

from typing import Any

from toolbind.contract import HttpServer

from ..._load import as_array, as_object
from ...diagnostics import describe
from ...ir import SourceLocation
from ...normalise import openapi_swagger2
from ...normalise.openapi_paths import PATH_TEMPLATE
from ._common import Where
from ._context import Context


def servers(ctx: Context, owner: dict[str, Any], loc: SourceLocation) -> tuple[HttpServer, ...]:
    """The servers ``owner`` (the document, a path item or an operation) declares."""
    if ctx.swagger:  # servers are the document's only (``normalise.openapi_swagger2``)
        if owner is not ctx.spec:
            return ()
        # (AutoRest's host stays with the Swagger 2.0 servers: its parameters need the reader's
        # deref, split files included, and it belongs with the Swagger 2.0 conversion's SERVERS)
        ms_host = as_object(ctx.spec.get("x-ms-parameterized-host"))
        if ms_host is not None and isinstance(ms_host.get("hostTemplate"), str):
            return (_parameterized_host(ctx, ms_host),)
        owner = ctx.normalise((openapi_swagger2.SERVERS,), owner, loc)
    out: list[HttpServer] = []
    for i, raw in enumerate(as_array(owner.get("servers")) or []):
        server = as_object(raw)
        url = server.get("url") if server is not None else None
        if server is None or not isinstance(url, str):
            # (no rule: broken input, said and skipped)
            ctx.diags.warning(
                loc.child("servers", i), f"server is {describe(raw)}", "{url: ...}; skipped"
            )
            continue
        defaults: dict[str, str] = {}
        enums: dict[str, tuple[str, ...]] = {}
        for name, raw_var in (as_object(server.get("variables")) or {}).items():
            var = as_object(raw_var) or {}
            defaults[name] = str(var.get("default", ""))
            listed = as_array(var.get("enum"))
            if listed:
                enums[name] = tuple(str(v) for v in listed)
        description = server.get("description")
        out.append(
            HttpServer(
                url=url,
                variables=defaults,
                enums=enums,
                description=description if isinstance(description, str) else None,
            )
        )
    if owner is ctx.spec and not out:
        out.append(HttpServer(url="/"))
    return tuple(out)


def _parameterized_host(ctx: Context, ms_host: dict[str, Any]) -> HttpServer:
    """AutoRest's ``x-ms-parameterized-host`` (every Azure data-plane spec: Key Vault's
    ``{vaultBaseUrl}``, Storage's ``{url}``) as a server with variables: its parameters'
    defaults and enums, the others given with ``server_variables=``. Ignored as an
    extension, the API had the server '/', and every client was refused ("not an absolute
    URL") with nothing said of the host the spec declares."""
    loc = ctx.top.child("x-ms-parameterized-host")
    base = ctx.spec.get("basePath") or ""
    base = base if isinstance(base, str) else ""
    schemes = [s for s in as_array(ctx.spec.get("schemes")) or [] if s in ("https", "http")]
    template = str(ms_host["hostTemplate"])
    scheme = str(schemes[0]) if schemes else "https"
    prefix = "" if ms_host.get("useSchemePrefix") is False else f"{scheme}://"
    defaults: dict[str, str] = {}
    enums: dict[str, tuple[str, ...]] = {}
    for i, raw in enumerate(as_array(ms_host.get("parameters")) or []):
        found = ctx.deref(Where(raw, loc.child("parameters", i), ctx.spec, ctx.path), "parameter")
        pobj = (as_object(found.value) if found is not None else None) or {}
        name = pobj.get("name")
        if not isinstance(name, str):
            continue
        if isinstance(pobj.get("default"), (str, int, float)):
            defaults[name] = str(pobj["default"])
        listed = as_array(pobj.get("enum"))
        if listed:
            enums[name] = tuple(str(v) for v in listed)
    url = prefix + template + base
    given = [n for n in PATH_TEMPLATE.findall(url) if n not in defaults]
    ctx.diags.note(
        loc,
        f"x-ms-parameterized-host read as the server {url!r}"
        + (
            f": give {', '.join(map(repr, given))} with "
            "HttpClient(server_variables={...}) (or base_url=)"
            if given
            else ""
        ),
    )
    return HttpServer(url=url, variables=defaults, enums=enums)
