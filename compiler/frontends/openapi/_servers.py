"""Compiler layer (frontends/openapi): the Server Objects as the HTTP contract's ``HttpServer``.
Imports ``ir``, ``_load``, ``diagnostics``, ``normalise``, ``_common``, ``_context`` and the
runtime's HTTP contract.

The document's servers are read as its server rules leave them: Swagger 2.0's ``host``,
``basePath`` and ``schemes`` (``normalise.openapi_swagger2``) and AutoRest's
``x-ms-parameterized-host`` (``normalise.openapi_azure``) are OpenAPI 3's ``servers`` there.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from toolbind.contract import HttpServer

from ..._load import as_array, as_object
from ...diagnostics import Diagnostic, describe
from ...ir import SourceLocation
from ...normalise import openapi_azure, openapi_swagger2, run
from ._common import Where
from ._context import Context

# The rules that make the document's servers of what Swagger 2.0 and AutoRest write instead,
# in order: AutoRest's host, where it is written, is the server Swagger 2.0's host is not.
_DOCUMENT_RULES = (openapi_swagger2.SERVERS, *openapi_azure.SERVER_RULES)


def servers(ctx: Context, owner: dict[str, Any], loc: SourceLocation) -> tuple[HttpServer, ...]:
    """The servers ``owner`` (the document, a path item or an operation) declares."""
    whole = owner is ctx.spec
    if whole:
        owner = _canonical_document(ctx)
    elif ctx.swagger:  # (no rule: Swagger 2.0 has servers for the whole API only; ``fields`` said)
        return ()
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
            if "default" in var:  # (OpenAPI requires one; without, the client is given it)
                defaults[name] = str(var["default"])
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
    if whole and not out:
        out.append(HttpServer(url="/"))
    return tuple(out)


def _canonical_document(ctx: Context) -> dict[str, Any]:
    """The document as its server rules leave it; what they say is said now. An extension a rule
    read (and left out) is no longer one toolbind ignores."""
    said: list[Diagnostic] = []
    context = replace(ctx.rules, follow=partial(_follow, ctx))
    document: dict[str, Any] = run(_DOCUMENT_RULES, ctx.spec, ctx.top, context, said)
    ctx.diags.items.extend(said)
    for key in ctx.spec.keys() - document.keys():
        ctx.extensions.pop(key, None)
    return document


def _follow(ctx: Context, fragment: Any, at: SourceLocation) -> Any:
    """What ``fragment`` at ``at`` is, its ``$ref``s followed (split files too) as a
    parameter's are (None: it leads nowhere, said)."""
    found = ctx.deref(Where(fragment, at, ctx.spec, ctx.path), "parameter")
    return found.value if found is not None else None
