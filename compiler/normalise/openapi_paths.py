"""Compiler layer (normalise): the paths map's keys as real specs write them. Imports
``diagnostics`` and ``ir`` (through ``_rule``) and ``_openapi``.

Each rule of ``RULES`` reads one path key (a route) at its path item's place; the reader reads
the route they leave, which starts with ``/`` and has no white space around it. The rules of
``PARAMETER_RULES`` read an operation's path parameters beside its route (``PathParameters``):
what they leave declares exactly the names of the path's ``{templates}``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..ir import SourceLocation
from ._openapi import OpenApi, PathParameters
from ._rule import Fixed, Rule, warn

PATH_TEMPLATE = re.compile(r"\{([^{}/]+)\}")
"""``{name}`` in a path template (RFC 6570 level 1, as OpenAPI uses it)."""

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


def _not_in_template(fragment: PathParameters, at: SourceLocation, _: OpenApi) -> Fixed | None:
    templates = dict.fromkeys(PATH_TEMPLATE.findall(fragment.route))
    dropped = [name for name in fragment.declared if name not in templates]
    if not dropped:
        return None
    # no place in the URL: a Call field for it would ask the model for a value that goes
    # nowhere (or, named like 'a}@{b', replaces the wrong part of the path)
    said = tuple(
        warn(
            fragment.declared[name][1],
            f"path parameter {name!r} is not named in the path {fragment.route!r}; it is not "
            "a Call field",
            "a path parameter whose name is one of the path's {templates} "
            f"({', '.join(templates) or 'none'})",
            hint="rename it after its {template}, or move it to the query",
        )
        for name in dropped
    )
    kept = {name: p for name, p in fragment.declared.items() if name in templates}
    return Fixed(value=replace(fragment, declared=kept), diagnostics=said)


def _undeclared(fragment: PathParameters, at: SourceLocation, context: OpenApi) -> Fixed | None:
    missing = [
        name
        for name in dict.fromkeys(PATH_TEMPLATE.findall(fragment.route))
        if name not in fragment.declared
    ]
    if not missing:
        return None
    # the URL can't be built without it: one obvious meaning, a required string
    said = tuple(
        warn(
            at,
            f"the path {fragment.route!r} names {{{name}}}, which the operation does not "
            "declare; read as a required string path parameter",
            f"a parameter {{name: {name}, in: path, required: true}}",
            hint="declare it in the operation's or the path item's parameters",
        )
        for name in missing
    )
    string = {"type": "string"} if context.swagger else {"schema": {"type": "string"}}
    added = {
        name: ({"name": name, "in": "path", "required": True} | string, at) for name in missing
    }
    return Fixed(value=replace(fragment, declared={**fragment.declared, **added}), diagnostics=said)


NOT_IN_TEMPLATE: Rule[OpenApi] = Rule(
    name="path-parameter-not-in-template",
    family="openapi-paths",
    accepts="a path parameter whose name no {template} of the path names",
    makes="no such parameter (it would be a Call field whose value goes nowhere)",
    warning="path parameter '…' is not named in the path '…'; it is not a Call field",
    apply=_not_in_template,
)
UNDECLARED: Rule[OpenApi] = Rule(
    name="path-template-undeclared",
    family="openapi-paths",
    accepts="a {template} of the path that no parameter of the operation declares",
    makes="a required string path parameter of that name",
    warning="the path '…' names {…}, which the operation does not declare; read as a required "
    "string path parameter",
    apply=_undeclared,
)

PARAMETER_RULES: tuple[Rule[OpenApi], ...] = (NOT_IN_TEMPLATE, UNDECLARED)
"""The rules of an operation's path parameters beside its route, in the order they apply."""
