"""Compiler layer (frontends): what every tool-list format shares. Imports ``ir``, ``diagnostics``,
``_load``, ``naming``, ``_jsonschema`` and ``toolbind.runtime.contract`` (the meta-field names).

``ToolReader`` turns one tool's raw parts (name, description, parameter schema, output schema)
into a ``ToolSpec``, checking what every format must satisfy: a string name with something to
build an identifier from, an object parameter root, and a schema-valued output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbind.contract import META_FIELDS

from .._load import as_array, as_object
from ..diagnostics import Diagnostics, describe
from ..ir import (
    AllOfNode,
    AnyNode,
    LiteralNode,
    Meta,
    NeverNode,
    ObjectNode,
    RefNode,
    SchemaNode,
    SourceLocation,
    ToolSpec,
    UnionNode,
)
from ..naming import has_identifier_chars
from ..normalise._schema import JSON_TYPES
from ..normalise.schema_types import type_hint
from ._jsonschema import SchemaLowerer


@dataclass
class ToolReader:
    diags: Diagnostics
    lowerer: SchemaLowerer
    root: Any
    path: Path | None
    left_out: list[str] = field(default_factory=lambda: [])
    """Tools read and deliberately left out, each said in a note (an MCP tool only its server's UI
    calls): a document of only such tools holds no tools, and that is no error."""

    def name(self, value: Any, loc: SourceLocation) -> str | None:
        if not isinstance(value, str) or not value:
            self.diags.error(loc, f"tool name is {describe(value)}", "a non-empty string")
            return None
        if not has_identifier_chars(value):
            self.diags.error(
                loc,
                f"tool name {value!r} has no letters or digits",
                "a name a Python identifier can be made from",
                hint="use ASCII letters, digits, '_' or '-'",
            )
            return None
        return value

    def text(self, value: Any, loc: SourceLocation, what: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.diags.error(loc, f"{what} is {describe(value)}", "a string")
            return None
        return value

    def params(
        self,
        schema: Any,
        loc: SourceLocation,
        *,
        resource: tuple[Any, SourceLocation] | None = None,
    ) -> ObjectNode:
        """Lower a parameters schema, which must describe a JSON object.

        ``resource`` is the schema document its local ``$ref``s are relative to (default: the
        parameters schema itself, as in MCP's ``inputSchema`` and OpenAI's ``parameters``).
        """
        if schema is None or schema == {}:
            return ObjectNode(meta=Meta(loc=loc))
        obj = as_object(schema)
        if obj is None:
            self.diags.error(
                loc,
                f"parameters schema is {describe(schema)}",
                "a JSON Schema object with type 'object'",
            )
            return ObjectNode(meta=Meta(loc=loc))
        declared = obj.get("type")
        declared_types = as_array(declared)
        objectish = declared in ("object", "dict", None) or (
            declared_types is not None and "object" in declared_types
        )
        if not objectish and isinstance(declared, str) and declared not in JSON_TYPES:
            # a misspelt or borrowed name (objekt, Object, Map): said as such, and the object
            # it must be is read on, so that the spec's other errors are said in the same run
            self.diags.error(
                loc.child("type"),
                f"type {declared!r} is not a JSON Schema type",
                "type 'object': tool parameters are always named fields",
                hint=type_hint(declared) or "write type: object",
            )
            obj = {**obj, "type": "object"}
        elif not objectish:
            shown = repr(declared) if isinstance(declared, str) else describe(declared)
            self.diags.error(
                loc.child("type"),
                f"parameters root has type {shown}",
                "type 'object': tool parameters are always named fields",
                hint="wrap the value in an object property",
            )
            return ObjectNode(meta=Meta(loc=loc))
        if declared is None and not obj.keys() & {"$ref", "anyOf", "oneOf", "allOf"}:
            obj = {**obj, "type": "object"}  # tool parameters are an object by contract
        node = self.lowerer.lower_root(obj, loc, root=self.root, path=self.path, resource=resource)
        node = self._through_refs(node)
        if isinstance(node, ObjectNode):
            self._check_param_names(node)
            return node
        if isinstance(node, AnyNode):
            return ObjectNode(meta=node.meta)
        # e.g. an allOf/anyOf root: keep the object shell, the node stays for validation
        found, hint = _describe_root(node)
        self.diags.error(
            loc, f"parameters root is {found}", "a plain object schema with 'properties'", hint=hint
        )
        return ObjectNode(meta=Meta(loc=loc))

    def output(
        self,
        schema: Any,
        loc: SourceLocation,
        *,
        resource: tuple[Any, SourceLocation] | None = None,
    ) -> SchemaNode | None:
        if schema is None:
            return None
        if not isinstance(schema, (dict, bool)):
            self.diags.error(
                loc,
                f"output schema is {describe(schema)}",
                "a JSON Schema (an object or a boolean)",
            )
            return None
        return self.lowerer.lower_root(
            schema, loc, root=self.root, path=self.path, resource=resource
        )

    def _through_refs(self, node: SchemaNode) -> SchemaNode:
        """A parameters root that is only a ``$ref`` (as pydantic writes recursive models)
        stands for the schema it names."""
        seen: set[str] = set()
        while isinstance(node, RefNode) and node.target not in seen:
            seen.add(node.target)
            definition = self.lowerer.definitions.get(node.target)
            if definition is None:
                break
            node = definition.node
        return node

    def _check_param_names(self, node: ObjectNode) -> None:
        for prop in node.properties:
            if prop.name in META_FIELDS:
                self.diags.error(
                    prop.schema.meta.loc,
                    f"parameter {prop.name!r} has the name of a meta field",
                    f"parameter names other than {', '.join(META_FIELDS)}",
                    hint="the Call wire format reserves these names; rename the parameter",
                )


def _describe_root(node: SchemaNode) -> tuple[str, str | None]:
    """How a parameters root that is not a plain object reads in a message, and what to do."""
    match node:
        case UnionNode(form="type"):
            kinds = ", ".join(repr(v.kind) for v in node.variants)
            return f"a schema of several types ({kinds})", "drop every type but 'object'"
        case UnionNode():
            return (
                f"an {node.form} schema",
                f"move {node.form} below a property, or make one object whose properties "
                "are optional",
            )
        case AllOfNode():
            return (
                "an allOf schema that cannot be merged into one object",
                "allOf of inline object schemas is merged; inline the parts that use $ref",
            )
        case LiteralNode():
            article = "an" if node.form == "enum" else "a"
            return f"{article} {node.form} schema", "list the allowed values on a property instead"
        case NeverNode():
            return "false (no value is allowed)", None
        case RefNode():
            return "a $ref cycle", None
        case _:
            return f"a {node.kind} schema", None


def check_duplicates(tools: list[ToolSpec], diags: Diagnostics) -> list[ToolSpec]:
    """Refuse a second tool of the same name, pointing at both."""
    seen: dict[str, ToolSpec] = {}
    out: list[ToolSpec] = []
    for tool in tools:
        first = seen.get(tool.name)
        if first is not None:
            diags.error(
                tool.loc,
                f"duplicate tool name {tool.name!r} (first defined at {first.loc})",
                "tool names unique within a spec",
            )
            continue
        seen[tool.name] = tool
        out.append(tool)
    return out
