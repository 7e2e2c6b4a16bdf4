"""Compiler layer (normalise): Azure AutoRest's extensions that carry operations. Imports
``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

AutoRest's ``x-ms-paths`` holds paths whose key carries a fixed query (Azure Storage's
``/{containerName}?restype=container``): Swagger 2.0 cannot declare two operations on one path
that a query tells apart. Skipped as an extension, every such operation was lost (all of a
storage data-plane spec) with one note; read, the query is part of the path template, sent as
written before the call's own query.

AutoRest's ``x-ms-parameterized-host`` (every Azure data-plane spec: Key Vault's
``{vaultBaseUrl}``, Storage's ``{url}``) is the host, with parameters, that Swagger 2.0's
``host`` cannot say. Its parameters are written ``in: path`` but are parts of the host, never of an
operation's path: they are OpenAPI 3's server variables, substituted as given (no encoding:
Key Vault's ``{vaultBaseUrl}`` is a whole URL, ``x-ms-skip-url-encoding``). Skipped as an
extension, the API had the server '/', and every client was refused ("not an absolute URL")
with nothing said of the host the spec declares.
"""

from __future__ import annotations

from typing import Any, cast

from ..diagnostics import Diagnostic
from ..ir import SourceLocation
from ._openapi import OpenApi, PathEntry, followed
from ._rule import Fixed, Rule, note
from ._schema import without
from .openapi_paths import PATH_TEMPLATE


def _x_ms_paths(
    entries: tuple[PathEntry, ...], at: SourceLocation, context: OpenApi
) -> Fixed | None:
    ms_paths = context.document.get("x-ms-paths")
    if not isinstance(ms_paths, dict):
        return None
    ms_at = at.child("x-ms-paths")  # (``at``: the document, whose field it is)
    table = cast("dict[str, Any]", ms_paths)
    added = tuple(PathEntry(route=route, item=item, in_map=ms_at) for route, item in table.items())
    note = Diagnostic(
        loc=ms_at,
        severity="note",
        found=f"{len(added)} path(s) read from x-ms-paths (AutoRest's paths with a fixed "
        "query): each query is sent as written",
    )
    return Fixed(value=entries + added, diagnostics=(note,))


X_MS_PATHS: Rule[OpenApi] = Rule(
    name="x-ms-paths",
    family="openapi-azure",
    accepts="AutoRest's x-ms-paths: paths whose key carries a fixed query (?restype=container)",
    makes="more entries of the paths map, each query part of its path template",
    warning="(a note) N path(s) read from x-ms-paths …: each query is sent as written",
    apply=_x_ms_paths,
)


def _parameterized_host(document: Any, at: SourceLocation, context: OpenApi) -> Fixed | None:
    if not context.swagger or not isinstance(document, dict):
        return None
    doc = cast("dict[str, Any]", document)
    host: Any = doc.get("x-ms-parameterized-host")
    ms_host = cast("dict[str, Any]", host) if isinstance(host, dict) else {}
    if not isinstance(ms_host.get("hostTemplate"), str):
        return None
    hloc = at.child("x-ms-parameterized-host")
    written = context.document
    base = written.get("basePath") or ""
    listed: Any = written.get("schemes")
    schemes = (
        [s for s in cast("list[Any]", listed) if s in ("https", "http")]
        if isinstance(listed, list)
        else []
    )
    scheme = str(schemes[0]) if schemes else "https"
    prefix = "" if ms_host.get("useSchemePrefix") is False else f"{scheme}://"
    url = prefix + ms_host["hostTemplate"] + (base if isinstance(base, str) else "")
    variables = _host_variables(ms_host.get("parameters"), hloc, context)
    given = [n for n in PATH_TEMPLATE.findall(url) if "default" not in variables.get(n, {})]
    said = note(
        hloc,
        f"x-ms-parameterized-host read as the server {url!r}"
        + (
            f": give {', '.join(map(repr, given))} with "
            "HttpClient(server_variables={...}) (or base_url=)"
            if given
            else ""
        ),
    )
    server = {"url": url} | ({"variables": variables} if variables else {})
    canonical = without(doc, "x-ms-parameterized-host") | {"servers": [server]}
    return Fixed(value=canonical, diagnostics=(said,))


def _host_variables(
    parameters: Any, at: SourceLocation, context: OpenApi
) -> dict[str, dict[str, Any]]:
    """The host's parameters (``$ref``s followed) as server variables: each with its default
    and enum; one with neither is left to the URL (the client is given it)."""
    variables: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(cast("list[Any]", parameters) if isinstance(parameters, list) else []):
        found = followed(context, raw, at.child("parameters", i))
        obj = cast("dict[str, Any]", found) if isinstance(found, dict) else {}
        name = obj.get("name")
        if not isinstance(name, str):
            continue
        variable: dict[str, Any] = {}
        if isinstance(obj.get("default"), (str, int, float)):
            variable["default"] = str(obj["default"])
        listed = obj.get("enum")
        if isinstance(listed, list) and listed:
            variable["enum"] = [str(v) for v in cast("list[Any]", listed)]
        if variable:
            variables[name] = variable
    return variables


PARAMETERIZED_HOST: Rule[OpenApi] = Rule(
    name="x-ms-parameterized-host",
    family="openapi-azure",
    accepts="AutoRest's x-ms-parameterized-host in Swagger 2.0: a host template with parameters "
    "(in: path, $refs followed), useSchemePrefix, beside basePath and schemes",
    makes="the document's one server: {url: <scheme>://<hostTemplate><basePath>, variables: "
    "each parameter's default and enum}",
    warning="(a note) x-ms-parameterized-host read as the server '…': give '…' with "
    "HttpClient(server_variables={...}) (or base_url=)",
    apply=_parameterized_host,
)

RULES: tuple[Rule[OpenApi], ...] = (X_MS_PATHS,)
"""The rules of the paths map's entries (the document's context in hand)."""

SERVER_RULES: tuple[Rule[OpenApi], ...] = (PARAMETERIZED_HOST,)
"""The rules of the document's servers."""
