"""Runtime layer: the composed tools exported in each provider's format. Imports ``_compose``, pydantic.

Every export starts from the same LLM-facing tool schema (``tool_schema``: the seeds' meta fields +
the parameters, with the reachable shared ``$defs``) and changes only what the provider needs:

* ``openai_tools`` — ``{"type": "function", "function": {name, description, parameters}}``, faithful.
* ``openai_strict_tools`` — the same with ``strict: true`` and a schema that follows OpenAI's
  published Structured Outputs rules (``strict_violations`` is the rule checker): every object
  closed (``additionalProperties: false``) and listing every property in ``required``, optional
  properties made nullable, only supported keywords. A tool that cannot be made strict without
  changing what it accepts in a way the faithful model could not repair is refused, with the reason
  and the JSON pointer (``StrictExport.refused``). ``call_from_strict`` maps a strict response back:
  the nulls strict mode forced for absent optional properties are dropped, then the faithful Call
  model validates.
* ``anthropic_tools`` — ``{name, description, input_schema}`` (JSON Schema as is).
* ``gemini_tools`` — function declarations in Gemini's OpenAPI-subset ``Schema``: upper-case
  ``type``, ``nullable``, no ``$ref`` (definitions inlined; recursion cut at a depth, with a note),
  no ``additionalProperties``/``const``; what had to be dropped is listed in ``GeminiExport.notes``.
* ``mcp_tools`` — an MCP ``tools/list`` result.

Loosening is always repaired on the way back: a provider's response is validated by the faithful
Call model, so a dropped keyword can cost a retry, never a wrong value.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from pydantic import BaseModel

from ._compose import ComposableTool, def_name, reachable_defs, tool_schema
from .errors import NotStrictable


class ExportableTool(ComposableTool, Protocol):
    """What the exports need of a tool (composition's needs and these); ``ToolBinding`` has it all."""

    @property
    def provider_name(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def annotations(self) -> Mapping[str, Any] | None: ...


class StrictCallable(ExportableTool, Protocol):
    """A tool with its faithful Call model (for ``call_from_strict``)."""

    @property
    def call_model(self) -> type[BaseModel]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportIssue:
    """Why (part of) a tool could not be exported as is.

    Attributes:
        tool: the tool's name ('' from ``strict_violations``, which sees a schema only).
        pointer: RFC 6901 pointer into the tool's composed parameters schema ('' is the root).
        kind: a short category, for counting (e.g. ``free-form object``, ``keyword minLength``).
        message: what was found and what was expected.
    """

    tool: str = ""
    pointer: str
    kind: str
    message: str

    def __str__(self) -> str:
        where = f"{self.tool}: " if self.tool else ""
        return f"{where}#{self.pointer}: {self.message}"


@dataclass(frozen=True, slots=True)
class StrictExport:
    """OpenAI strict tools, and the tools that could not be made strict (with every reason)."""

    tools: list[dict[str, Any]] = field(default_factory=lambda: [])
    refused: list[ExportIssue] = field(default_factory=lambda: [])


@dataclass(frozen=True, slots=True)
class GeminiExport:
    """Gemini function declarations, and what each lost on the way (notes, never silent)."""

    declarations: list[dict[str, Any]] = field(default_factory=lambda: [])
    notes: list[ExportIssue] = field(default_factory=lambda: [])


# -- shared -------------------------------------------------------------------------------------


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def call_schema(tool: ExportableTool, activities: Collection[str] = ()) -> dict[str, Any]:
    """The tool's composed schema (meta fields + parameters) with the ``$defs`` it reaches."""
    schema = tool_schema(tool, activities)
    defs = reachable_defs(schema, tool.defs)
    if defs:
        schema["$defs"] = defs
    return schema


def openai_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = ()
) -> list[dict[str, Any]]:
    """OpenAI function tools (chat completions' ``tools``), faithful schemas."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = call_schema(tool, activities)
        out.append({"type": "function", "function": function})
    return out


def anthropic_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Anthropic Messages API tools: ``{name, description, input_schema}``."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            entry["description"] = tool.description
        entry["input_schema"] = call_schema(tool, activities)
        out.append(entry)
    return out


def mcp_tools(tools: Iterable[ExportableTool], activities: Collection[str] = ()) -> dict[str, Any]:
    """An MCP ``tools/list`` result: ``{"tools": [{name, title?, description?, inputSchema,
    outputSchema?, annotations?}]}``. ``outputSchema`` is given only for object outputs (MCP's
    structured content is an object)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.name}
        if tool.title:
            entry["title"] = tool.title
        if tool.description:
            entry["description"] = tool.description
        entry["inputSchema"] = call_schema(tool, activities)
        output = tool.output_schema
        if output is not None and output.get("type") == "object":
            out_schema = dict(output)
            defs = reachable_defs(out_schema, tool.defs)
            if defs:
                out_schema["$defs"] = defs
            entry["outputSchema"] = out_schema
        if tool.annotations:
            entry["annotations"] = dict(tool.annotations)
        out.append(entry)
    return {"tools": out}


# -- OpenAI structured outputs: the rules ------------------------------------------------------

# OpenAI, "Structured Outputs — Supported schemas": the types, the keywords per type, the formats,
# and the limits below. Everything else is refused by the API in strict mode.
STRICT_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_STRICT_KEYWORDS = frozenset(
    {
        # any schema
        "type",
        "description",
        "title",
        "enum",
        "const",
        "anyOf",
        "$ref",
        # string
        "pattern",
        "format",
        # number / integer
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        # array
        "items",
        "minItems",
        "maxItems",
        # object
        "properties",
        "required",
        "additionalProperties",
    }
)
STRICT_MAX_DEPTH = 10
STRICT_MAX_PROPERTIES = 5000
STRICT_MAX_ENUM_VALUES = 1000
STRICT_MAX_STRING_LENGTH = 120_000
STRICT_LARGE_ENUM = 250
STRICT_LARGE_ENUM_STRING_LENGTH = 15_000


def _types_of(node: Mapping[str, Any]) -> list[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in cast("list[Any]", declared) if isinstance(t, str)]
    return []


def strict_violations(schema: Any) -> list[ExportIssue]:
    """Every way ``schema`` breaks OpenAI's Structured Outputs rules for a strict function.

    Checks: the root is an object schema (not ``anyOf``); every object lists ``properties``, all
    of them in ``required``, and ``additionalProperties: false``; every schema is typed (``type``,
    ``enum``, ``const``, ``anyOf`` or ``$ref``) with supported types only; only supported keywords
    and formats; arrays have one ``items`` schema; ``$ref`` points into the root's ``$defs`` (or is
    ``#``); at most 10 levels of object nesting, 5000 properties, 1000 enum values, 120,000
    characters of property names, definition names, enum and const values, and 15,000 characters
    of enum values for an enum of more than 250 string values.

    Returns:
        The violations, each with the JSON pointer of the offending schema; empty when it passes.
    """
    issues: list[ExportIssue] = []

    def bad(pointer: str, kind: str, message: str) -> None:
        issues.append(ExportIssue(pointer=pointer, kind=kind, message=message))

    if not isinstance(schema, dict):
        bad("", "root", "the root is not a schema object")
        return issues
    root = cast("dict[str, Any]", schema)
    defs_value = root.get("$defs", {})
    defs: dict[str, Any] = (
        cast("dict[str, Any]", defs_value) if isinstance(defs_value, dict) else {}
    )
    if not isinstance(defs_value, dict):
        bad("/$defs", "$defs", "$defs is not an object")
    if root.get("type") != "object":
        bad("", "root", "the root must be `type: object`")
    if "anyOf" in root:
        bad("", "root", "the root must not be `anyOf`")

    totals = {"properties": 0, "enum": 0, "chars": sum(len(name) for name in defs)}

    def check(node: Any, pointer: str) -> None:
        if not isinstance(node, dict):
            bad(pointer, "boolean schema", "a boolean schema — expected a schema object")
            return
        n = cast("dict[str, Any]", node)
        for key in n:
            if key == "$defs" and pointer == "":
                continue
            if key not in _STRICT_KEYWORDS:
                bad(pointer, f"keyword {key}", f"unsupported keyword {key!r}")
        types = _types_of(n)
        if "type" in n:
            declared = n["type"]
            well_formed = isinstance(declared, str) or (
                isinstance(declared, list)
                and len(cast("list[Any]", declared)) > 0
                and all(isinstance(t, str) for t in cast("list[Any]", declared))
            )
            if not well_formed:
                bad(pointer, "type", f"malformed type {declared!r}")
            for t in types:
                if t not in STRICT_TYPES:
                    bad(pointer, "type", f"unsupported type {t!r}")
        if not ({"type", "enum", "const", "anyOf", "$ref"} & n.keys()):
            bad(
                pointer, "untyped", "no type — strict mode needs a type, enum, const, anyOf or $ref"
            )
        if "$ref" in n:
            ref = n["$ref"]
            name = def_name(ref) if isinstance(ref, str) else None
            if ref != "#" and (name is None or name not in defs):
                bad(pointer, "$ref", f"$ref {ref!r} does not point into the root's $defs")
        if "format" in n and n["format"] not in STRICT_FORMATS:
            bad(pointer, "format", f"unsupported format {n['format']!r}")
        if "enum" in n:
            values = n["enum"]
            if not isinstance(values, list) or not values:
                bad(pointer, "enum", "enum must be a non-empty array")
            else:
                enum_values = cast("list[Any]", values)
                totals["enum"] += len(enum_values)
                strings = [v for v in enum_values if isinstance(v, str)]
                length = sum(len(v) for v in strings)
                totals["chars"] += length
                if len(strings) > STRICT_LARGE_ENUM and length > STRICT_LARGE_ENUM_STRING_LENGTH:
                    bad(
                        pointer,
                        "limit",
                        f"an enum of {len(strings)} strings totals {length} characters"
                        f" (over {STRICT_LARGE_ENUM_STRING_LENGTH})",
                    )
                if any(isinstance(v, (dict, list)) for v in enum_values):
                    bad(pointer, "enum", "enum values must be strings, numbers, booleans or null")
        if isinstance(n.get("const"), str):
            totals["chars"] += len(n["const"])
        if "anyOf" in n:
            branches = n["anyOf"]
            if not isinstance(branches, list) or not branches:
                bad(pointer, "anyOf", "anyOf must be a non-empty array")
            else:
                for i, branch in enumerate(cast("list[Any]", branches)):
                    check(branch, f"{pointer}/anyOf/{i}")
        is_object = "object" in types or "properties" in n
        if is_object:
            props = n.get("properties")
            if not isinstance(props, dict):
                bad(pointer, "free-form object", "an object without `properties`")
                props = {}
            properties = cast("dict[str, Any]", props)
            if n.get("additionalProperties") is not False:
                bad(pointer, "additionalProperties", "objects need `additionalProperties: false`")
            required = n.get("required")
            if not isinstance(required, list) or set(cast("list[Any]", required)) != set(
                properties
            ):
                bad(pointer, "required", "`required` must list every property")
            totals["properties"] += len(properties)
            for name, sub in properties.items():
                totals["chars"] += len(name)
                check(sub, f"{pointer}/properties/{_escape(name)}")
        elif "additionalProperties" in n or "required" in n:
            bad(pointer, "object keyword", "object keywords on a schema that is not an object")
        if "array" in types or "items" in n:
            items = n.get("items")
            if not isinstance(items, dict):
                bad(pointer, "items", "an array needs one `items` schema")
            else:
                check(items, f"{pointer}/items")

    check(root, "")
    for name, sub in defs.items():
        check(sub, f"/$defs/{_escape(name)}")

    # nesting depth: objects within objects, following $refs (a cycle counts once)
    def depth(node: Any, on_path: frozenset[str]) -> int:
        if not isinstance(node, dict):
            return 0
        n = cast("dict[str, Any]", node)
        ref = n.get("$ref")
        if isinstance(ref, str):
            name = def_name(ref)
            if name is None or name in on_path or name not in defs:
                return 0
            return depth(defs[name], on_path | {name})
        children: list[Any] = []
        props = n.get("properties")
        if isinstance(props, dict):
            children.extend(cast("dict[str, Any]", props).values())
        if isinstance(n.get("items"), dict):
            children.append(n["items"])
        if isinstance(n.get("anyOf"), list):
            children.extend(cast("list[Any]", n["anyOf"]))
        below = max((depth(c, on_path) for c in children), default=0)
        own = 1 if ("object" in _types_of(n) or isinstance(props, dict)) else 0
        return own + below

    levels = depth(root, frozenset())
    if levels > STRICT_MAX_DEPTH:
        bad("", "limit", f"{levels} levels of object nesting (at most {STRICT_MAX_DEPTH})")
    if totals["properties"] > STRICT_MAX_PROPERTIES:
        bad("", "limit", f"{totals['properties']} properties (at most {STRICT_MAX_PROPERTIES})")
    if totals["enum"] > STRICT_MAX_ENUM_VALUES:
        bad("", "limit", f"{totals['enum']} enum values (at most {STRICT_MAX_ENUM_VALUES})")
    if totals["chars"] > STRICT_MAX_STRING_LENGTH:
        bad(
            "",
            "limit",
            f"{totals['chars']} characters of names and values (at most {STRICT_MAX_STRING_LENGTH})",
        )
    return issues


# -- OpenAI structured outputs: the transform --------------------------------------------------

# Keywords that describe but never constrain: dropped, strict mode refuses unknown keys.
_ANNOTATIONS = frozenset(
    {
        "default",
        "examples",
        "example",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "contentMediaType",
        "contentEncoding",
        "optional",  # BFCL's non-standard marker; ``required`` says the same
    }
)
# Keywords that constrain and that strict mode cannot express: the tool is refused.
_UNSUPPORTED = frozenset(
    {
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "prefixItems",
        "additionalItems",
        "minLength",
        "maxLength",
        "contentSchema",
        "$id",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
    }
)


def _refuse(issues: list[ExportIssue], pointer: str, kind: str, message: str) -> dict[str, Any]:
    """Record why the schema at ``pointer`` cannot be strict; a placeholder to keep walking."""
    issues.append(ExportIssue(pointer=pointer, kind=kind, message=message))
    return {}


def _strict_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` that also accepts null (for an optional property strict mode makes required)."""
    if "$ref" in node or "const" in node:
        outer: dict[str, Any] = {"anyOf": [node, {"type": "null"}]}
        return outer
    if "anyOf" in node:
        branches = cast("list[dict[str, Any]]", node["anyOf"])
        if not any(b.get("type") == "null" for b in branches):
            node = {**node, "anyOf": [*branches, {"type": "null"}]}
        return node
    out = dict(node)
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    declared = out.get("type")
    if isinstance(declared, str) and declared != "null":
        out["type"] = [declared, "null"]
    elif isinstance(declared, list) and "null" not in declared:
        out["type"] = [*cast("list[str]", declared), "null"]
    return out


def _strict_node(node: Any, pointer: str, issues: list[ExportIssue]) -> dict[str, Any]:
    if isinstance(node, bool):
        return _refuse(
            issues,
            pointer,
            "unconstrained value",
            "a boolean schema (any value or none) — strict mode needs a typed schema",
        )
    if not isinstance(node, dict):
        return _refuse(issues, pointer, "malformed", "not a schema object")
    source = cast("dict[str, Any]", node)
    # Keep the lone ``allOf: [X]`` that wraps a reference to add a description.
    all_of = source.get("allOf")
    if isinstance(all_of, list) and len(cast("list[Any]", all_of)) == 1:
        rest = {k: v for k, v in source.items() if k != "allOf"}
        if set(rest) <= {"description", "title", *_ANNOTATIONS}:
            inner = cast("list[Any]", all_of)[0]
            merged = _strict_node(inner, f"{pointer}/allOf/0", issues)
            if "description" in rest and "$ref" not in merged:
                merged["description"] = rest["description"]
            return merged
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key in _UNSUPPORTED:
            return _refuse(
                issues,
                f"{pointer}/{_escape(key)}",
                f"keyword {key}",
                f"{key!r} has no strict-mode equivalent",
            )
        if key in _ANNOTATIONS or key.startswith("x-") or key == "$defs":
            continue
        if key not in _STRICT_KEYWORDS:
            continue  # an unknown keyword constrains nothing in JSON Schema
        out[key] = value
    if "enum" in out and (
        not isinstance(out["enum"], list)
        or not out["enum"]
        or any(isinstance(v, (dict, list)) for v in cast("list[Any]", out["enum"]))
    ):
        return _refuse(
            issues, pointer, "enum", "enum needs a non-empty list of strings, numbers, booleans"
        )
    if "format" in out and out["format"] not in STRICT_FORMATS:
        # An annotation in JSON Schema 2020-12; the faithful model still checks what it can.
        del out["format"]
    if "$ref" in out:
        ref = out["$ref"]
        if not isinstance(ref, str) or (ref != "#" and def_name(ref) is None):
            return _refuse(issues, pointer, "$ref", f"$ref {ref!r} does not point into $defs")
        kept = {k: out[k] for k in ("$ref", "description") if k in out}
        if set(out) - {"$ref", "description", "title"}:
            return _refuse(
                issues, pointer, "$ref siblings", "$ref with constraining sibling keywords"
            )
        return kept
    types = _types_of(out)
    if "type" not in out and not ({"enum", "const", "anyOf"} & out.keys()):
        if "properties" in out:
            out["type"] = "object"
            types = ["object"]
        elif "items" in out:
            out["type"] = "array"
            types = ["array"]
        else:
            return _refuse(
                issues,
                pointer,
                "unconstrained value",
                "any JSON value (no type) — strict mode needs a typed schema",
            )
    for t in types:
        if t not in STRICT_TYPES:
            return _refuse(issues, pointer, "type", f"type {t!r} is not a JSON Schema type")
    if "anyOf" in out:
        branches = out["anyOf"]
        if not isinstance(branches, list) or not branches:
            return _refuse(issues, pointer, "anyOf", "anyOf must be a non-empty array")
        out["anyOf"] = [
            _strict_node(b, f"{pointer}/anyOf/{i}", issues)
            for i, b in enumerate(cast("list[Any]", branches))
        ]
    if "object" in types:
        props_value = out.get("properties", {})
        if not isinstance(props_value, dict):
            return _refuse(issues, pointer, "malformed", "properties is not an object")
        props = cast("dict[str, Any]", props_value)
        extra = out.get("additionalProperties", True)
        if not props and extra is not False:
            return _refuse(
                issues,
                pointer,
                "free-form object",
                "an object with no declared properties (a free-form map) — strict mode needs"
                " every key declared",
            )
        required = [r for r in cast("list[Any]", out.get("required", [])) if isinstance(r, str)]
        undeclared = [r for r in required if r not in props]
        if undeclared:
            return _refuse(
                issues,
                pointer,
                "required undeclared",
                f"required {undeclared[0]!r} is not a declared property",
            )
        new_props: dict[str, Any] = {}
        for name, sub in props.items():
            strict_sub = _strict_node(sub, f"{pointer}/properties/{_escape(name)}", issues)
            new_props[name] = strict_sub if name in required else _strict_nullable(strict_sub)
        out["properties"] = new_props
        out["required"] = list(new_props)
        out["additionalProperties"] = False
    else:
        for key in ("properties", "required", "additionalProperties"):
            out.pop(key, None)
    if "array" in types:
        items = out.get("items")
        if items is None:
            return _refuse(
                issues,
                pointer,
                "untyped items",
                "an array of any values — strict mode needs `items`",
            )
        if isinstance(items, list):
            return _refuse(
                issues, pointer, "keyword items", "tuple-form `items` has no strict-mode equivalent"
            )
        out["items"] = _strict_node(items, f"{pointer}/items", issues)
    else:
        for key in ("items", "minItems", "maxItems"):
            out.pop(key, None)
    return out


def openai_strict_schema(tool: ExportableTool, activities: Collection[str] = ()) -> dict[str, Any]:
    """The tool's composed schema made strict.

    Raises:
        NotStrictable: the tool cannot be made strict; ``.issues`` says where and why.
    """
    composed = call_schema(tool, activities)
    defs = cast("dict[str, Any]", composed.pop("$defs", {}))
    issues: list[ExportIssue] = []
    strict = _strict_node(composed, "", issues)
    if defs:
        strict["$defs"] = {
            name: _strict_node(sub, f"/$defs/{_escape(name)}", issues) for name, sub in defs.items()
        }
    if not issues:  # the limits are counted on the finished schema
        issues = [i for i in strict_violations(strict) if i.kind == "limit"]
    if issues:
        raise NotStrictable(tool.name, [_with_tool(i, tool.name) for i in issues])
    return strict


def _with_tool(issue: ExportIssue, tool: str) -> ExportIssue:
    return ExportIssue(tool=tool, pointer=issue.pointer, kind=issue.kind, message=issue.message)


def openai_strict_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = ()
) -> StrictExport:
    """OpenAI function tools with ``strict: true``; the tools that cannot be strict are refused."""
    export = StrictExport()
    for tool in tools:
        try:
            parameters = openai_strict_schema(tool, activities)
        except NotStrictable as exc:
            export.refused.extend(exc.issues)
            continue
        function: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = parameters
        function["strict"] = True
        export.tools.append({"type": "function", "function": function})
    return export


def _admits_null(node: Any, defs: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    if node is True or node == {}:
        return True
    if not isinstance(node, dict):
        return False
    n = cast("dict[str, Any]", node)
    ref = n.get("$ref")
    if isinstance(ref, str):
        name = def_name(ref)
        if name is None or name in seen or name not in defs:
            return False
        return _admits_null(defs[name], defs, seen | {name})
    if "const" in n:
        return n["const"] is None
    if "enum" in n:
        return None in cast("list[Any]", n["enum"])
    if "anyOf" in n or "oneOf" in n:
        branches = cast("list[Any]", n.get("anyOf", n.get("oneOf", [])))
        return any(_admits_null(b, defs, seen) for b in branches)
    if "type" in n:
        return "null" in _types_of(n)
    return True


def _drop_forced_nulls(value: Any, node: Any, defs: Mapping[str, Any], depth: int = 0) -> Any:
    """``value`` (a strict response) with the nulls strict mode forced on absent optionals removed,
    walking the faithful schema ``node``."""
    if depth > 200 or not isinstance(node, dict):
        return value
    n = cast("dict[str, Any]", node)
    ref = n.get("$ref")
    if isinstance(ref, str):
        name = def_name(ref)
        target = defs.get(name) if name is not None else None
        return _drop_forced_nulls(value, target, defs, depth + 1)
    all_of = n.get("allOf")
    if isinstance(all_of, list) and len(cast("list[Any]", all_of)) == 1:
        return _drop_forced_nulls(value, cast("list[Any]", all_of)[0], defs, depth + 1)
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        branches = cast("list[Any]", n.get("anyOf", []))
        if branches:
            # a strict object carries every declared key: the branch with the same keys is it
            for branch in branches:
                if isinstance(branch, dict) and set(
                    cast("dict[str, Any]", cast("dict[str, Any]", branch).get("properties", {}))
                ) == set(obj):
                    return _drop_forced_nulls(obj, branch, defs, depth + 1)
            return obj
        props = cast("dict[str, Any]", n.get("properties", {}))
        required = set(cast("list[Any]", n.get("required", [])))
        out: dict[str, Any] = {}
        for key, item in obj.items():
            sub = props.get(key)
            if (
                item is None
                and key in props
                and key not in required
                and not _admits_null(sub, defs)
            ):
                continue
            out[key] = _drop_forced_nulls(item, sub, defs, depth + 1)
        return out
    if isinstance(value, list):
        items = n.get("items")
        if not isinstance(items, dict):
            branches = cast("list[Any]", n.get("anyOf", []))
            items = next(
                (
                    cast("dict[str, Any]", b).get("items")
                    for b in branches
                    if isinstance(b, dict) and "items" in b
                ),
                None,
            )
        return [_drop_forced_nulls(v, items, defs, depth + 1) for v in cast("list[Any]", value)]
    return value


def call_from_strict(
    tool: StrictCallable,
    arguments: str | bytes | Mapping[str, Any],
    activities: Collection[str] = (),
) -> BaseModel:
    """Map a strict-mode response (the function call's arguments) back to the faithful Call.

    The nulls strict mode made the model write for absent optional properties are dropped
    (a property whose faithful schema itself admits null keeps its null), then the tool's Call
    model validates.

    Raises:
        pydantic.ValidationError: the arguments are not a valid Call (feedback for the model).
        ValueError: ``arguments`` is not JSON.
    """
    data: Any = json.loads(arguments) if isinstance(arguments, (str, bytes)) else dict(arguments)
    schema = call_schema(tool, activities)
    defs = cast("dict[str, Any]", schema.pop("$defs", {}))
    cleaned = _drop_forced_nulls(data, schema, defs)
    return tool.call_model.model_validate(cleaned)


# -- Gemini -------------------------------------------------------------------------------------

_GEMINI_KEEP = frozenset(
    {
        "format",
        "title",
        "description",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)


# Gemini's Schema.format: float/double for NUMBER, int32/int64 for INTEGER, enum/date-time for STRING.
_GEMINI_FORMATS = frozenset({"float", "double", "int32", "int64", "enum", "date-time"})


class _Gemini:
    def __init__(self, tool: str, defs: Mapping[str, Any], recursion: int) -> None:
        self.tool = tool
        self.defs = defs
        self.recursion = recursion
        self.notes: list[ExportIssue] = []

    def note(self, pointer: str, kind: str, message: str) -> None:
        self.notes.append(ExportIssue(tool=self.tool, pointer=pointer, kind=kind, message=message))

    def convert(self, node: Any, pointer: str, stack: tuple[str, ...]) -> dict[str, Any]:
        if node is True or node == {}:
            return {}
        if not isinstance(node, dict):
            self.note(pointer, "boolean schema", "a `false` schema: Gemini cannot say 'nothing'")
            return {}
        n = cast("dict[str, Any]", node)
        ref = n.get("$ref")
        if isinstance(ref, str):
            name = def_name(ref)
            if name is None or name not in self.defs:
                self.note(pointer, "$ref", f"$ref {ref!r} is not a local definition: left open")
                return {}
            if stack.count(name) >= self.recursion:
                self.note(
                    pointer,
                    "recursion",
                    f"recursive definition {name!r} cut after {self.recursion} level(s)",
                )
                target = cast("dict[str, Any]", self.defs[name])
                cut: dict[str, Any] = {}
                if isinstance(target.get("type"), str):
                    cut["type"] = str(target["type"]).upper()
                cut["description"] = f"(recursive {name}: structure not expanded further)"
                return cut
            inlined = self.convert(self.defs[name], pointer, (*stack, name))
            if "description" in n:
                inlined["description"] = n["description"]
            return inlined
        out: dict[str, Any] = {}
        dropped: list[str] = []
        nullable = False
        types = _types_of(n)
        if "null" in types:
            nullable = True
            types = [t for t in types if t != "null"]
        for key, value in n.items():
            if key in _GEMINI_KEEP:
                out[key] = value
            elif (
                key
                in (
                    "type",
                    "properties",
                    "required",
                    "items",
                    "enum",
                    "const",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "additionalProperties",
                    "$ref",
                    "$defs",
                )
                or key in _ANNOTATIONS
                or key.startswith("x-")
            ):
                continue
            else:
                dropped.append(key)
        if "format" in out and out["format"] not in _GEMINI_FORMATS:
            dropped.append("format")
            del out["format"]
        if len(types) == 1:
            out["type"] = types[0].upper()
        elif len(types) > 1:
            out["anyOf"] = [{"type": t.upper()} for t in types]
        if "const" in n:
            if isinstance(n["const"], str):
                out["type"] = "STRING"
                out["enum"] = [n["const"]]
            elif n["const"] is None:
                nullable = True
            else:
                dropped.append("const")
        if "enum" in n:
            values = cast("list[Any]", n["enum"])
            if None in values:
                nullable = True
            strings = [v for v in values if v is not None]
            if strings and all(isinstance(v, str) for v in strings):
                out["enum"] = strings
                out.setdefault("type", "STRING")
            elif strings:
                dropped.append("enum")
        branches = n.get("anyOf", n.get("oneOf"))
        if "oneOf" in n:
            self.note(
                pointer, "oneOf", "oneOf sent as anyOf (exactly-one is checked on the way back)"
            )
        if isinstance(branches, list):
            converted: list[dict[str, Any]] = []
            for i, b in enumerate(cast("list[Any]", branches)):
                if isinstance(b, dict) and cast("dict[str, Any]", b).get("type") == "null":
                    nullable = True
                    continue
                key = "anyOf" if "anyOf" in n else "oneOf"
                converted.append(self.convert(b, f"{pointer}/{key}/{i}", stack))
            if len(converted) == 1 and "type" not in out:
                out.update(converted[0])
            elif converted:
                out["anyOf"] = converted
        all_of = n.get("allOf")
        if isinstance(all_of, list):
            parts = cast("list[Any]", all_of)
            if len(parts) > 1:
                self.note(
                    pointer, "allOf", "allOf merged key by key (the faithful model checks all)"
                )
            for i, part in enumerate(parts):
                for key, value in self.convert(part, f"{pointer}/allOf/{i}", stack).items():
                    out.setdefault(key, value)
        props = n.get("properties")
        if isinstance(props, dict):
            out.setdefault("type", "OBJECT")
            out["properties"] = {
                name: self.convert(sub, f"{pointer}/properties/{_escape(name)}", stack)
                for name, sub in cast("dict[str, Any]", props).items()
            }
            required = [
                r for r in cast("list[Any]", n.get("required", [])) if r in out["properties"]
            ]
            if required:
                out["required"] = required
        extra = n.get("additionalProperties")
        if extra is not None and extra is not False:
            self.note(
                pointer,
                "additionalProperties",
                "extra properties cannot be described to Gemini (no additionalProperties)",
            )
        items = n.get("items")
        if isinstance(items, dict):
            out["items"] = self.convert(items, f"{pointer}/items", stack)
        elif items is not None:
            self.note(pointer, "items", "tuple-form items cannot be described to Gemini")
        if nullable:
            out["nullable"] = True
        if dropped:
            self.note(
                pointer,
                "dropped keywords",
                f"not in Gemini's schema, dropped: {', '.join(sorted(set(dropped)))}",
            )
        return out


def gemini_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = (), *, recursion: int = 2
) -> GeminiExport:
    """Gemini function declarations (``{name, description, parameters}``), no ``$ref``.

    Args:
        recursion: how many times one recursive definition is expanded on a path before it is cut
            (and a note says so).
    """
    export = GeminiExport()
    for tool in tools:
        composed = call_schema(tool, activities)
        defs = cast("dict[str, Any]", composed.pop("$defs", {}))
        converter = _Gemini(tool.name, defs, recursion)
        declaration: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            declaration["description"] = tool.description
        declaration["parameters"] = converter.convert(composed, "", ())
        export.declarations.append(declaration)
        export.notes.extend(converter.notes)
    return export
