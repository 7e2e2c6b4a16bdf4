"""Compiler layer (normalise): the paths map's keys as real specs write them. Imports
``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

Each rule reads one path key (a route) at its path item's place; the reader reads the route
they leave, which starts with ``/`` and has no white space around it.
"""

from __future__ import annotations

import re

from ..ir import SourceLocation
from ._openapi import OpenApi
from ._rule import Fixed, Rule, warn

# A whole path segment ``:name``: an Express/Rails route parameter, which OpenAPI does not read.
_EXPRESS_SEGMENT = re.compile(r"(?<=/):([A-Za-z_][A-Za-z0-9_]*)(?=/|$)")


def _white_space(route: str, at: SourceLocation, _: OpenApi) -> Fixed | None:
    if route == route.strip():
        return None
    # Matrix's invite: "/rooms/{roomId}/invite " — the space went out as %20 on every call, a
    # path no server has (Prism: no such route)
    return Fixed(
        value=route.strip(),
        diagnostics=(
            warn(
                at,
                f"the path {route!r} has white space around it; read as {route.strip()!r}",
                "a path that starts with / and has no white space (a URL has none: a space "
                "would be sent as %20)",
            ),
        ),
    )


def _leading_slash(route: str, at: SourceLocation, _: OpenApi) -> Fixed | None:
    if route.startswith(("/", "?")):  # ("?...": an x-ms-paths key after basePath)
        return None
    # a path is appended to the server URL: "pets/{id}" after ".../api" went out as
    # ".../apipets/7", refused at run time as outside the servers, nothing said here
    return Fixed(
        value="/" + route,
        diagnostics=(
            warn(
                at,
                f"the path {route!r} does not start with /; read as {'/' + route!r}",
                "a path that starts with / (OpenAPI appends it to the server URL)",
            ),
        ),
    )


def _express(route: str, at: SourceLocation, _: OpenApi) -> Fixed | None:
    express = [f":{m}" for m in _EXPRESS_SEGMENT.findall(route)]
    if not express:
        return None
    # Vonage's media API: ``/:id/info`` is sent as written, and asks for no id
    return Fixed(
        value=route,
        diagnostics=(
            warn(
                at,
                f"the path {route!r} has {', '.join(map(repr, express))}, a parameter as "
                "Express writes it; OpenAPI's are {name}, so it is sent as written",
                "a path template: " + _EXPRESS_SEGMENT.sub(r"{\1}", route),
                hint="write the path with {name} and declare the path parameter",
            ),
        ),
    )


WHITE_SPACE: Rule[OpenApi] = Rule(
    name="path-white-space",
    family="openapi-paths",
    accepts="a path key with white space around it ('/rooms/{id}/invite ')",
    makes="the path without it",
    warning="the path '…' has white space around it; read as '…'",
    apply=_white_space,
)
LEADING_SLASH: Rule[OpenApi] = Rule(
    name="path-leading-slash",
    family="openapi-paths",
    accepts="a path key without its leading / ('pets/{id}')",
    makes="the path with it ('/pets/{id}')",
    warning="the path '…' does not start with /; read as '/…'",
    apply=_leading_slash,
)
EXPRESS: Rule[OpenApi] = Rule(
    name="path-express-parameter",
    family="openapi-paths",
    accepts="a path segment written as Express does (/:id/info)",
    makes="the path as written (sent so: OpenAPI's parameters are {name})",
    warning="the path '…' has ':id', a parameter as Express writes it; … sent as written",
    apply=_express,
)

RULES: tuple[Rule[OpenApi], ...] = (WHITE_SPACE, LEADING_SLASH, EXPRESS)
"""The rules of a path key, in the order they apply."""
