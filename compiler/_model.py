"""Compiler layer: one JSON Schema → one model class, at run time, through the same pipeline.

``model_from_schema`` lowers the schema with the frontends' ``SchemaLowerer``, renders it with
the Python backend exactly as ``toolbind generate`` would, and executes the source in a fresh
module (the backend escapes every spec string, so executing it runs nothing from the schema).
"""

from __future__ import annotations

import itertools
import sys
import types
import warnings
from collections.abc import Mapping
from typing import Any, cast, get_args

from pydantic import BaseModel

from toolbind._version import VERSION

from ._driver import _warnings_as_errors  # pyright: ignore[reportPrivateUsage]
from ._load import as_object
from .backends.python import PythonBackend
from .diagnostics import Diagnostics
from .errors import SpecError
from .frontends._jsonschema import SchemaLowerer
from .frontends._resolver import Draft, draft_named
from .ir import SourceLocation, SpecPackage, ToolSpec

_counter = itertools.count()

_LEGACY_REF_DRAFTS = frozenset({"draft4", "draft6", "draft7"})


def model_from_schema(
    schema: Any,
    *,
    name: str | None = None,
    remotes: Mapping[str, Any] | None = None,
    draft: Draft | None = None,
    format_assertion: bool = False,
    strict: bool = False,
) -> type[BaseModel]:
    """Compile any JSON Schema to a pydantic model class.

    Args:
        schema: the schema (an object or a boolean); a root that is not an object schema
            becomes a ``RootModel``.
        name: the class name (made a safe identifier); default: the schema's ``title`` or
            ``Model``.
        remotes: documents ``$ref``s may name by absolute URI (nothing is fetched).
        draft: the JSON Schema draft the schema is written in; default: the one its
            ``$schema`` names, else 2020-12. Drafts 4-7 differ in ``$ref`` (it replaces its
            siblings); the draft 7 spellings (``definitions``, ``dependencies``, array
            ``items``/``additionalItems``) are read in every draft.
        format_assertion: check ``format`` by its RFC grammar (date, time, date-time,
            duration, email, idn-email, hostname, idn-hostname, ipv4, ipv6, uuid, regex, uri,
            uri-reference, iri, iri-reference, uri-template, json-pointer,
            relative-json-pointer) instead of treating it as an annotation (the 2020-12
            default).
        strict: a warning (a keyword not read in the draft in force, keywords a draft 4-7
            ``$ref`` replaces, a format that is not asserted) is an error; without it each
            warning is issued as a ``UserWarning`` naming its place.

    Raises:
        SpecError: the schema has errors; ``.diagnostics`` locates each (``<schema>#/pointer``).
        ValueError: ``draft`` names no draft toolbind reads.
    """
    if draft is not None and draft not in get_args(Draft):
        raise ValueError(f"draft={draft!r}: expected one of {', '.join(get_args(Draft))}")
    source = "<schema>"
    diags = Diagnostics()
    draft = draft or draft_named(schema)  # None: every draft's spellings, $ref as in 2020-12
    lowerer = SchemaLowerer(
        diags=diags,
        allow_remote_files=False,
        remotes=dict(remotes or {}),
        legacy_ref=draft in _LEGACY_REF_DRAFTS,
        draft=draft,
    )
    root = lowerer.lower_root(schema, SourceLocation(file=source), root=schema, path=None)
    if diags.has_errors:
        raise SpecError(diags.items)
    title = (as_object(schema) or {}).get("title")
    wanted = name or (title if isinstance(title, str) and title.strip() else "Model")
    pkg = SpecPackage(
        source=source, format="jsonschema", tools=(), definitions=lowerer.sorted_definitions()
    )
    module_name = f"toolbind_models_{next(_counter)}"
    code, cls_name = PythonBackend(
        pkg, module_name, diags, version=VERSION, format_assertion=format_assertion
    ).render_model(root, wanted)
    if strict:
        _warnings_as_errors(diags)
    if diags.has_errors:
        raise SpecError(diags.items)
    module = types.ModuleType(module_name)
    # Registered so pydantic resolves the module's forward references by name.
    sys.modules[module_name] = module
    exec(compile(code, f"<toolbind model {module_name}>", "exec"), module.__dict__)
    model = cast("type[BaseModel]", module.__dict__[cls_name])
    model.model_rebuild()
    for diagnostic in diags.items:
        if diagnostic.severity == "warning":
            warnings.warn(diagnostic.render(), UserWarning, stacklevel=2)
    return model


def read_tool_schema(name: str, schema: Any, *, source: str) -> ToolSpec:
    """Read one seeds-format tool schema as the seeds frontend reads a spec file's tools.

    The runtime registers a raw tool schema (``Tool.register(name, {...})``) through this, so a
    registered schema and a spec file are checked by the same reader, with the same messages.

    Args:
        name: the name it is registered under (``_tool``'s ``const``, when present, must equal it).
        schema: the tool's JSON Schema: parameters plus ``_tool``/``_output``/``_activity``.
        source: what the diagnostics name as the file (e.g. ``<Tool.register('x')>``).

    Raises:
        SpecError: the schema is not a usable tool schema; ``.diagnostics`` locates each problem.
    """
    from .diagnostics import describe
    from .frontends._common import ToolReader
    from .frontends.seeds import read_tool

    diags = Diagnostics()
    loc = SourceLocation(file=source)
    obj = as_object(schema)
    tool: ToolSpec | None = None
    if obj is None:
        diags.error(loc, f"the tool schema is {describe(schema)}", "an object schema")
    else:
        lowerer = SchemaLowerer(diags=diags, allow_remote_files=False)
        reader = ToolReader(diags=diags, lowerer=lowerer, root=obj, path=None)
        tool = read_tool(reader, obj, loc, key=name)
    if tool is None or diags.has_errors:
        raise SpecError(diags.items)
    return tool
