"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``, ``contract``,
``errors`` and ``types``, and ``_common``, ``_strict_rules``): OpenAI strict tools: the transform,
and the way back (``call_from_strict``).

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any, cast

from pydantic import BaseModel

from toolbind._compose import def_name

from ..contract import json_type
from ..errors import NotStrictable
from ..types import json_equal
from ._common import (
    ExportableTool,
    ExportIssue,
    StrictCallable,
    StrictExport,
    call_schema,
    escape_token,
)
from ._strict_rules import (
    STRICT_FORMATS,
    STRICT_KEYWORDS,
    STRICT_TYPES,
    strict_violations,
    types_of,
)

# -- OpenAI structured outputs: the transform --------------------------------------------------

# Keywords that describe but never constrain: dropped, strict mode refuses unknown keys.
ANNOTATIONS = frozenset(
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


def _exclusive(branches: list[Any], defs: Mapping[str, Any]) -> bool:
    """Whether no value matches two of a ``oneOf``'s ``branches``: each names its JSON types
    (``type``, through ``$ref``s into ``defs``) or one value (``const``), and no two share a
    type (an integer is a number) — except two consts, which must differ."""
    read: list[tuple[set[str], tuple[Any] | None]] = []  # (types, the const's value)
    for branch in branches:
        b = _dereferenced(branch, defs)
        if b is None:
            return False
        if "const" in b:
            read.append(({json_type(b["const"])}, (b["const"],)))
        elif types_of(b):
            read.append((set(types_of(b)), None))
        else:
            return False  # (a $ref, an untyped schema: not known here)
    for i, (a, a_const) in enumerate(read):
        for b, b_const in read[i + 1 :]:
            widened = {*a, *(("number",) if "integer" in a else ())}
            shared = widened & b or ("integer" in b and "number" in a)
            # (two consts: one value to JSON Schema, 1 and 1.0 alike, matches both)
            if shared and (
                a_const is None or b_const is None or json_equal(a_const[0], b_const[0])
            ):
                return False
    return True


def _dereferenced(node: Any, defs: Mapping[str, Any], depth: int = 0) -> dict[str, Any] | None:
    """``node``, or the definition its lone ``$ref`` names (followed); None when unknown."""
    if not isinstance(node, dict) or depth > 16:
        return None
    n = cast("dict[str, Any]", node)
    ref = n.get("$ref")
    if ref is None:
        return n
    name = def_name(ref) if isinstance(ref, str) else None
    if name is None or name not in defs or set(n) - {"$ref", "description", "title"}:
        return None
    return _dereferenced(defs[name], defs, depth + 1)


def _strict_node(
    node: Any, pointer: str, issues: list[ExportIssue], defs: Mapping[str, Any]
) -> dict[str, Any]:
    """``node`` made strict; where it cannot be, the issue is recorded and ``{}`` stands in."""
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
    merged = _lone_all_of(source, pointer, issues, defs)
    if merged is not None:
        return merged
    source, branches_at = _one_of_as_any_of(source, defs)
    out = _supported(source, pointer, issues)
    if out is None:
        return {}
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
    types = _types(out, pointer, issues)
    if types is None:
        return {}
    if "anyOf" in out:
        branches = out["anyOf"]
        if not isinstance(branches, list) or not branches:
            return _refuse(issues, pointer, "anyOf", "anyOf must be a non-empty array")
        out["anyOf"] = [
            _strict_node(b, f"{pointer}/{branches_at}/{i}", issues, defs)
            for i, b in enumerate(cast("list[Any]", branches))
        ]
    if "object" in types:
        if not _strict_object(out, pointer, issues, defs):
            return {}
    else:
        for key in ("properties", "required", "additionalProperties"):
            out.pop(key, None)
    if "array" in types:
        if not _strict_array(out, pointer, issues, defs):
            return {}
    else:
        for key in ("items", "minItems", "maxItems"):
            out.pop(key, None)
    return out


def _lone_all_of(
    source: dict[str, Any], pointer: str, issues: list[ExportIssue], defs: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The lone ``allOf: [X]`` that wraps a reference to add a description, kept: X made strict
    with that description; None when ``source`` is not one."""
    all_of = source.get("allOf")
    if not isinstance(all_of, list) or len(cast("list[Any]", all_of)) != 1:
        return None
    rest = {k: v for k, v in source.items() if k != "allOf"}
    if not set(rest) <= {"description", "title", *ANNOTATIONS}:
        return None
    inner = cast("list[Any]", all_of)[0]
    merged = _strict_node(inner, f"{pointer}/allOf/0", issues, defs)
    if "description" in rest and "$ref" not in merged:
        merged["description"] = rest["description"]
    return merged


def _one_of_as_any_of(
    source: dict[str, Any], defs: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    """``source`` with an exclusive ``oneOf`` read as ``anyOf``, and where its branches' issues
    are (``oneOf`` or ``anyOf``, in the composed schema)."""
    one_of: Any = source.get("oneOf")
    exclusive = isinstance(one_of, list) and _exclusive(cast("list[Any]", one_of), defs)
    if exclusive and "anyOf" not in source:
        # A oneOf no value can match twice (branches of distinct types or consts; Litestar
        # writes every Optional[X] as oneOf [X, {type: null}]: 28 of Evidently's 66 tools
        # were left out) accepts what its anyOf accepts, which strict mode takes.
        rest: dict[str, Any] = {k: v for k, v in source.items() if k != "oneOf"}
        return {**rest, "anyOf": cast("list[Any]", one_of)}, "oneOf"
    return source, "anyOf"


def _supported(
    source: dict[str, Any], pointer: str, issues: list[ExportIssue]
) -> dict[str, Any] | None:
    """The keywords strict mode keeps (annotations and unknown keywords dropped, an unsupported
    format too); None, with the issue recorded, for a keyword it has no equivalent of or an enum
    it cannot take."""
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key in _UNSUPPORTED:
            _refuse(
                issues,
                f"{pointer}/{escape_token(key)}",
                f"keyword {key}",
                f"{key!r} has no strict-mode equivalent",
            )
            return None
        if key in ANNOTATIONS or key.startswith("x-") or key == "$defs":
            continue
        if key not in STRICT_KEYWORDS:
            continue  # an unknown keyword constrains nothing in JSON Schema
        out[key] = value
    if "enum" in out and (
        not isinstance(out["enum"], list)
        or not out["enum"]
        or any(isinstance(v, (dict, list)) for v in cast("list[Any]", out["enum"]))
    ):
        _refuse(
            issues, pointer, "enum", "enum needs a non-empty list of strings, numbers, booleans"
        )
        return None
    if "format" in out and out["format"] not in STRICT_FORMATS:
        # An annotation in JSON Schema 2020-12; the faithful model still checks what it can.
        del out["format"]
    return out


def _types(out: dict[str, Any], pointer: str, issues: list[ExportIssue]) -> list[str] | None:
    """The schema's types (an untyped object or array schema typed as such); None, with the
    issue recorded, for a schema of any value or an unknown type."""
    types = types_of(out)
    if "type" not in out and not ({"enum", "const", "anyOf"} & out.keys()):
        if "properties" in out:
            out["type"] = "object"
            types = ["object"]
        elif "items" in out:
            out["type"] = "array"
            types = ["array"]
        else:
            _refuse(
                issues,
                pointer,
                "unconstrained value",
                "any JSON value (no type) — strict mode needs a typed schema",
            )
            return None
    for t in types:
        if t not in STRICT_TYPES:
            _refuse(issues, pointer, "type", f"type {t!r} is not a JSON Schema type")
            return None
    return types


def _strict_object(
    out: dict[str, Any], pointer: str, issues: list[ExportIssue], defs: Mapping[str, Any]
) -> bool:
    """Make an object schema strict in place: closed, every property required (the optional
    ones nullable); False, with the issue recorded, when it cannot be."""
    props_value = out.get("properties", {})
    if not isinstance(props_value, dict):
        _refuse(issues, pointer, "malformed", "properties is not an object")
        return False
    props = cast("dict[str, Any]", props_value)
    extra = out.get("additionalProperties", True)
    if not props and extra is not False:
        _refuse(
            issues,
            pointer,
            "free-form object",
            "an object with no declared properties (a free-form map) — strict mode needs"
            " every key declared",
        )
        return False
    required = [r for r in cast("list[Any]", out.get("required", [])) if isinstance(r, str)]
    undeclared = [r for r in required if r not in props]
    if undeclared:
        _refuse(
            issues,
            pointer,
            "required undeclared",
            f"required {undeclared[0]!r} is not a declared property",
        )
        return False
    new_props: dict[str, Any] = {}
    for name, sub in props.items():
        strict_sub = _strict_node(sub, f"{pointer}/properties/{escape_token(name)}", issues, defs)
        new_props[name] = strict_sub if name in required else _strict_nullable(strict_sub)
    out["properties"] = new_props
    out["required"] = list(new_props)
    out["additionalProperties"] = False
    return True


def _strict_array(
    out: dict[str, Any], pointer: str, issues: list[ExportIssue], defs: Mapping[str, Any]
) -> bool:
    """Make an array schema's ``items`` strict in place; False, with the issue recorded, when
    there is none or it is the tuple form."""
    items = out.get("items")
    if items is None:
        _refuse(
            issues, pointer, "untyped items", "an array of any values — strict mode needs `items`"
        )
        return False
    if isinstance(items, list):
        _refuse(
            issues, pointer, "keyword items", "tuple-form `items` has no strict-mode equivalent"
        )
        return False
    out["items"] = _strict_node(items, f"{pointer}/items", issues, defs)
    return True


def openai_strict_schema(tool: ExportableTool, activities: Collection[str] = ()) -> dict[str, Any]:
    """The tool's composed schema made strict.

    Raises:
        NotStrictable: the tool cannot be made strict; ``.issues`` says where and why.
    """
    composed = call_schema(tool, activities)
    defs = cast("dict[str, Any]", composed.pop("$defs", {}))
    issues: list[ExportIssue] = []
    strict = _strict_node(composed, "", issues, defs)
    if defs:
        strict["$defs"] = {
            name: _strict_node(sub, f"/$defs/{escape_token(name)}", issues, defs)
            for name, sub in defs.items()
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
        return "null" in types_of(n)
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
