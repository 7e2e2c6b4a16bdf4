"""Compiler layer (frontends): Swagger 2.0, OpenAPI 3.0 and 3.1 → one tool per operation.

Imports ``ir``, ``diagnostics``, ``naming``, ``_load``, ``normalise``, ``_jsonschema``,
``_resolver``, ``_steps`` and the runtime's frozen HTTP description
(``toolbind.runtime.contract``), which it fills for the backend.

Each operation becomes a ``ToolSpec``: its parameters (path, query, header, cookie; path-level and
operation-level merged, operation-level overriding) and its request body are the Call's fields —
an object body is flattened into the Call when that is safe, any other body is wrapped under one
field — and the first success response (2xx lowest first, then ``default``) is its output. Schemas
go through the shared ``SchemaLowerer``, so a component referenced by many operations is one
``Definition``; definitions no kept tool reaches are dropped. The spec's servers, security
schemes and each operation's wire details become an ``HttpApi`` on the ``SpecPackage``.

One private module per OpenAPI object, each reading it with the reader's state
(``_context.Context``):

- ``_document``: the OpenAPI Object, its paths and path items → the ``SpecPackage``;
- ``_operations``: an Operation → a ``ToolSpec`` and an ``HttpOperation``;
- ``_parameters``, ``_bodies``, ``_responses``: Parameters, Request Bodies, Responses;
- ``_security``, ``_servers``: Security Schemes and Requirements, Servers;
- ``_common``: what they share (``Where``, ``OperationFilter``, media types).

Real specs break rules: what a real spec writes its own way (a path key without its ``/``,
AutoRest's ``x-ms-paths``, a whole map as one ``$ref``, Swagger 2.0's ``collectionFormat``) is
read by a named rule of ``normalise`` (``openapi_*`` families); an empty ``enum``, a ``$ref`` to
nothing, a parameter without a schema are read leniently with a located warning; only what has
no sensible reading is an error.
"""

from __future__ import annotations

from pathlib import Path

from ..._load import NO_EXTRA_REFS, Document, RefPolicy, as_object
from ..._steps import DIRECT, Steps
from ...diagnostics import Diagnostics
from ...ir import SpecPackage
from . import _document
from ._common import OperationFilter
from ._context import Context


def is_document(value: object) -> bool:
    """Whether ``value`` is an OpenAPI 3.x or Swagger 2.0 document."""
    obj = as_object(value)
    if obj is None:
        return False
    version = obj.get("openapi", obj.get("swagger"))
    return isinstance(version, str) and bool(
        obj.keys() & {"paths", "webhooks", "components", "info"}
    )


def read(
    doc: Document,
    path: Path | None,
    diags: Diagnostics,
    select: OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    steps: Steps = DIRECT,
) -> SpecPackage | None:
    """Lower an OpenAPI 3.x / Swagger 2.0 document (``path`` anchors relative ``$ref``s;
    ``refs`` says which files and URLs they may read; ``steps``: how each operation is
    lowered, ``_steps.Steps.part``)."""
    return _document.read(Context(doc, path, diags, refs, steps), select)


__all__ = ["OperationFilter", "is_document", "read"]
