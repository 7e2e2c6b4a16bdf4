"""Compiler layer (frontends): AgentB tool definitions (agentb-tools.md, ``IToolDefinition``).

``{name, description, parameters: [{name, type, description, required, schema}]}``: each
parameter becomes a property; ``schema`` (a JSON Schema fragment) wins over ``type`` when given.
Each parameter is lowered where it is written, so diagnostics point into the parameter list;
``$ref``s in a fragment are relative to the whole file (a fragment is not a schema document).
"""

from __future__ import annotations

from typing import Any

from toolbind.contract import META_FIELDS

from .._load import as_array, as_object
from ..diagnostics import describe
from ..ir import Meta, ObjectNode, Property, SourceLocation, ToolSpec
from ._common import ToolReader


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and "name" in obj and as_array(obj.get("parameters")) is not None


def read_tool(reader: ToolReader, value: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    diags = reader.diags
    name = reader.name(value.get("name"), loc.child("name"))
    if name is None:
        return None
    properties: list[Property] = []
    seen: set[str] = set()
    for i, raw_param in enumerate(value["parameters"]):
        ploc = loc.child("parameters", i)
        param = as_object(raw_param)
        if param is None:
            diags.error(
                ploc,
                f"parameter is {describe(raw_param)}",
                "an object {name, type, description, required, schema}",
            )
            continue
        pname = param.get("name")
        if not isinstance(pname, str):
            diags.error(
                ploc.child("name") if "name" in param else ploc,
                f"parameter name is {describe(pname)}"
                if "name" in param
                else "parameter has no name",
                "a string",
            )
            continue
        if pname in seen:
            diags.error(
                ploc.child("name"),
                f"duplicate parameter {pname!r}",
                "parameter names unique within a tool",
            )
            continue
        if pname in META_FIELDS:
            diags.error(
                ploc.child("name"),
                f"parameter {pname!r} has the name of a meta field",
                f"parameter names other than {', '.join(META_FIELDS)}",
                hint="the Call wire format reserves these names; rename the parameter",
            )
            continue
        seen.add(pname)
        raw_schema = param.get("schema")
        schema: dict[str, Any]
        if raw_schema is None:
            # ``type`` sits beside the name, so its diagnostics point into the parameter
            schema, sloc = ({"type": param["type"]} if "type" in param else {}), ploc
        else:
            given = as_object(raw_schema)
            if given is None:
                diags.error(
                    ploc.child("schema"),
                    f"schema is {describe(raw_schema)}",
                    "a JSON Schema object",
                )
                continue
            schema, sloc = dict(given), ploc.child("schema")
        if isinstance(param.get("description"), str) and "description" not in schema:
            schema["description"] = param["description"]
        node = reader.lowerer.lower_root(
            schema,
            sloc,
            root=reader.root,
            path=reader.path,
            resource=(reader.root, SourceLocation(file=loc.file)),
        )
        properties.append(Property(name=pname, schema=node, required=param.get("required") is True))
    return ToolSpec(
        name=name,
        loc=loc,
        params=ObjectNode(meta=Meta(loc=loc.child("parameters")), properties=tuple(properties)),
        description=reader.text(value.get("description"), loc.child("description"), "description"),
    )
