"""Kernel layer: schema composition exactly as the seeds specify. Imports pydantic for annotations only.

For each tool (tool-system.md "Schema Composition", tool-system.ru.md):

* meta fields come first: ``_tool`` (``const``), ``_activity`` (``const``, resolved below),
  the RFC's Call extensions the tool declares (``_delegate``, ``_scopes``, ``_instance``,
  ``_outputPath``, ``_outputMethod``), ``_reasoningForCall`` (optional string), then ``_output``
  — optional, and only for latent tools (an explicit tool's output comes from its Activity, a
  delegated one's from its delegate, so the LLM is not asked for it) — then the parameters in
  spec order; ``required`` is ``_tool`` plus the parameters' own;
* ``_activity``: the spec's explicit ``_activity`` > an Activity registered under the tool's name
  > ``''`` (latent).

The composed schema is ``{output, calls}`` (agent-tool-rfc.md "Composing Schemas for the LLM"):
``output`` is the user's output schema made nullable and, when it is an object that says nothing
about extra properties, closed with ``additionalProperties: false`` as in the RFC's example
(without an output schema, ``output`` is free text: ``{"type": ["string", "null"]}``); ``calls`` is
an array whose items are the one tool schema, or ``anyOf`` the tool schemas; both are required.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from pydantic import BaseModel


class ComposableTool(Protocol):
    """What composition needs of a tool; ``ToolBinding`` has it all."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    @property
    def output_schema(self) -> Mapping[str, Any] | None: ...
    @property
    def activity(self) -> str | None: ...
    @property
    def defs(self) -> Mapping[str, Any]: ...


DEFAULT_OUTPUT_SCHEMA: Mapping[str, Any] = {"type": "string"}

# The Call extensions of agent-tool-rfc.md that a tool's schema declares where the tool uses them
# (related/008 Output, 013 Instancing, 014 Delegate, 015 Scopes); in the order a composed schema
# lists them, after ``_activity``. A Call model has a field for each its tool declares. (Exported
# by ``contract``; here so that composing needs no ``contract``.)
CALL_EXTENSIONS: tuple[str, ...] = (
    "_delegate",
    "_scopes",
    "_instance",
    "_outputPath",
    "_outputMethod",
)


# The seeds' meta fields (wire names): the tool-system's four and the Call extensions. (Exported
# by ``contract``; here so that reading a model's answer needs no ``contract``.)
META_FIELDS: tuple[str, ...] = (
    "_tool",
    "_activity",
    *CALL_EXTENSIONS,
    "_output",
    "_reasoningForCall",
)


def resolve_activity(tool: ComposableTool, activities: Collection[str] = ()) -> str:
    """Zero-config activity matching: explicit ``_activity`` > same-name Activity > ``''``."""
    if tool.activity:
        return tool.activity
    if tool.name in activities:
        return tool.name
    return ""


def spec_name(tool: ComposableTool) -> str:
    """The name the spec gave ``tool``: a package may have qualified it (BFCL's ``name@record``
    for a function defined differently in several records)."""
    original: Any = getattr(tool, "original_name", None)
    return original if isinstance(original, str) and original else tool.name


def offered_names(tools: Iterable[ComposableTool]) -> dict[str, str]:
    """Each tool's name → the ``_tool`` value the model is offered: the spec's own name wherever
    it is unique among ``tools`` (a model copies ``lawsuit_details.find@multiple_139`` as it is;
    within one toolset the spec's names are unique), else the package's name."""
    tool_list = list(tools)
    wanted = {t.name: spec_name(t) for t in tool_list}
    uses: dict[str, int] = {}  # name → how many tools it names (as package or spec name)
    for n, w in wanted.items():
        for name in {n, w}:
            uses[name] = uses.get(name, 0) + 1
    return {n: w if uses[w] == 1 else n for n, w in wanted.items()}


def names_tool(tool: ComposableTool, choice: str) -> bool:
    """Whether ``tool_choice=choice`` names ``tool`` (by the package's or the spec's name)."""
    return choice in (tool.name, spec_name(tool))


MetaFields = str
"""``"all"``: the seeds' composition (``_tool``, ``_activity``, ``_reasoningForCall``, and
``_output`` for a latent tool); ``"needed"``: only what reading the answer needs (``_tool``, and
``_output`` for a latent tool) — ``_activity`` is a ``const`` the model can only copy and the
validator fills in, ``_reasoningForCall`` an optional note. Fewer prompt tokens (see
bench/bfcl.py)."""
META_FIELD_CHOICES = ("all", "needed")


def instance_schema(instances: Sequence[str]) -> dict[str, Any]:
    """The ``_instance`` property a multi-instance context adds to every tool (related/013)."""
    return {
        "enum": list(instances),
        "description": "The instance this call works on (its references and _outputPath "
        "resolve there); leave it out for the global context.",
    }


TOOL_TAG = "_tool"
"""The seeds' call tag: the key of a call that names its tool (the wire format of Calls)."""


AUTO_TAG = "auto"
"""``call_tag="auto"``: ``_tool`` when one tool is offered, ``function`` when several (measured on
BFCL with SmolLM2: ``_tool`` won the single-function questions, ``function`` the multi-function
ones, where under ``_tool`` a second call copied the first call's tool: bench/README.md)."""


def call_tag(tools: Iterable[ComposableTool], wanted: str, instances: Sequence[str] = ()) -> str:
    """The key that names the tool in each call the model writes: ``wanted``, unless a tool
    offered takes a parameter of that name — then ``wanted + "_name"``, else the seeds' ``_tool``
    (a reserved meta field, never a parameter); ``AUTO_TAG`` picks by how many tools are offered.
    Deterministic: the same tools give the same tag, so an answer validates the same wherever it
    is composed (a Temporal worker, the workflow)."""
    if wanted == AUTO_TAG:
        tools = list(tools)
        wanted = TOOL_TAG if len(tools) <= 1 else "function"
    if wanted == TOOL_TAG:
        return wanted
    taken: set[str] = {"_instance"} if instances else set()
    for tool in tools:
        props: Any = tool.parameters.get("properties")
        if isinstance(props, dict):
            taken.update(cast("dict[str, Any]", props))
        declared: Any = getattr(tool, "extensions", None)
        if isinstance(declared, Mapping):
            taken.update(cast("Mapping[str, Any]", declared))
    return next((t for t in (wanted, f"{wanted}_name") if t not in taken), TOOL_TAG)


def tool_schema(
    tool: ComposableTool,
    activities: Collection[str] = (),
    offered: str | None = None,
    *,
    meta_fields: MetaFields = "all",
    instances: Sequence[str] = (),
    tag: str = TOOL_TAG,
) -> dict[str, Any]:
    """The LLM-facing schema of one tool, with the meta fields composed in; ``offered`` is the
    ``_tool`` value the model sees (default: the tool's name); ``meta_fields``: ``all`` or
    ``needed`` (``META_FIELD_CHOICES``); ``instances``: the context's instance ids, offered as
    ``_instance`` (unless the tool declares its own); ``tag``: the key the tool's name is written
    under (``_tool``, the seeds' wire format, unless an Agent offers another: ``call_tag``).

    The RFC's Call extensions a tool declares (``_delegate``, ``_scopes``, ``_instance``,
    ``_outputPath``, ``_outputMethod``: ``CALL_EXTENSIONS``) follow ``_activity``, in that order,
    whatever ``meta_fields`` says: they change what a call does."""
    activity = resolve_activity(tool, activities)
    params = dict(tool.parameters)
    # a same-name Activity is shown under the name the tool is offered by (read back likewise)
    shown = offered if offered and activity == tool.name else activity
    properties: dict[str, Any] = {tag: {"const": offered or tool.name}}
    if meta_fields == "all":
        properties["_activity"] = {"const": shown}
    declared: Any = getattr(tool, "extensions", None)
    extensions = dict(cast("Mapping[str, Any]", declared)) if isinstance(declared, Mapping) else {}
    if instances and "_instance" not in extensions:
        extensions["_instance"] = instance_schema(instances)
    for name in CALL_EXTENSIONS:
        if name in extensions:
            properties[name] = extensions[name]
    if meta_fields == "all":
        # before the arguments, so a model that writes it thinks before it fills them
        properties["_reasoningForCall"] = {
            "type": "string",
            "description": "Optional: why this call, in one short sentence, before its arguments.",
        }
    if not activity and "_delegate" not in extensions:  # a delegate produces the output (014)
        properties["_output"] = dict(tool.output_schema) if tool.output_schema is not None else {}
    properties.update(params.pop("properties", {}))
    out: dict[str, Any] = {"type": "object"}
    if tool.description:
        out["description"] = tool.description
    params.pop("type", None)
    params.pop("description", None)
    params.pop("title", None)
    out["properties"] = properties
    needed: Any = getattr(tool, "extensions_required", ())
    out["required"] = [tag, *needed, *params.pop("required", [])]
    out.update(params)
    return out


def nullable(schema: Mapping[str, Any] | bool) -> dict[str, Any]:
    """``schema`` that also accepts null (and is closed when it is an open object)."""
    if isinstance(schema, bool):
        return {} if schema else {"type": "null"}
    out = dict(schema)
    declared = out.get("type")
    if isinstance(declared, str):
        out["type"] = [declared, "null"] if declared != "null" else "null"
    elif isinstance(declared, list):
        out["type"] = [*declared, *([] if "null" in declared else ["null"])]
    elif out:
        return {"anyOf": [out, {"type": "null"}]}
    if out.get("type") in ("object", ["object", "null"]) and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def output_schema_of(output: Any) -> Mapping[str, Any]:
    """The JSON Schema of an output spec: None (free text), a JSON Schema dict, a pydantic model,
    or any other type pydantic validates (``str``, ``list[int]``, a TypedDict, a dataclass)."""
    if output is None:
        return DEFAULT_OUTPUT_SCHEMA
    if isinstance(output, Mapping):
        return cast("Mapping[str, Any]", output)
    from pydantic import BaseModel, TypeAdapter
    from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

    if isinstance(output, type) and issubclass(output, BaseModel):
        return output.model_json_schema(by_alias=True)
    try:
        return TypeAdapter[Any](cast(Any, output)).json_schema(by_alias=True)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        from .errors import UsageError

        raise UsageError(
            f"output={output!r} is not an output spec — a pydantic model, a type pydantic can "
            "validate (str, list[int], a TypedDict), a JSON Schema dict, or None for free text"
        ) from exc


ToolChoice = str
"""``"auto"`` (calls and/or output), ``"required"`` (at least one call, no output this step),
``"none"`` (no call: the output), or a tool's name (at least one call, of that tool only)."""
TOOL_CHOICES = ("auto", "required", "none")


def _chosen(tools: list[ComposableTool], tool_choice: str) -> list[ComposableTool]:
    """The tools a step offers: all of them, or the one ``tool_choice`` names.

    Raises:
        ValueError: ``tool_choice`` is no choice and names no tool offered.
    """
    if tool_choice in TOOL_CHOICES:
        return tools
    chosen = [t for t in tools if names_tool(t, tool_choice)]
    if not chosen:
        offered = ", ".join(t.name for t in tools) or "none"
        raise ValueError(
            f"tool_choice={tool_choice!r}: expected auto, required, none or a tool offered "
            f"({offered})"
        )
    return chosen


def compose(
    tools: Iterable[ComposableTool],
    output: type[BaseModel] | Mapping[str, Any] | None = None,
    *,
    activities: Collection[str] = (),
    tool_choice: ToolChoice = "auto",
    meta_fields: MetaFields = "all",
    instances: Sequence[str] = (),
    tag: str = TOOL_TAG,
) -> dict[str, Any]:
    """The composed ``{calls, output}`` schema the LLM fills.

    ``calls`` comes first: a model fills properties in order, and a small one that meets
    ``output`` first answers in text and stops (measured on BFCL: 94 % right function
    with calls first and required, against 40 % with output first). ``tool_choice`` narrows one
    step: ``required`` makes ``calls`` ``minItems: 1`` and ``output`` null, a tool's name offers
    only that tool (and requires a call of it), ``none`` allows no call and requires the output.

    Args:
        tools: the tools offered, in the order the LLM should see them.
        output: the final output's schema (a JSON Schema or a pydantic model); None for text.
        activities: names of registered Activities, for zero-config activity matching.
        tool_choice: ``auto``, ``required``, ``none`` or a tool's name.
        meta_fields: ``all`` (the seeds' composition) or ``needed`` (``_tool``, and ``_output``
            for latent tools: no ``_activity`` const, no ``_reasoningForCall``).
        instances: the instance ids of a multi-instance context (related/013): every tool
            takes an optional ``_instance`` of these.
        tag: the key each call names its tool under: ``_tool`` (the seeds'), or another name
            wanted (``call_tag`` picks a free one: a tool's own parameter keeps its name).

    Raises:
        ValueError: ``tool_choice`` or ``meta_fields`` is none of these (an unknown tool name
            included).
    """
    if meta_fields not in META_FIELD_CHOICES:
        raise ValueError(
            f"meta_fields={meta_fields!r}: expected one of {', '.join(META_FIELD_CHOICES)}"
        )
    tool_list = _chosen(list(tools), tool_choice)
    names = offered_names(tool_list)
    tag = call_tag(tool_list, tag, instances)
    schemas = [
        tool_schema(
            t, activities, names[t.name], meta_fields=meta_fields, instances=instances, tag=tag
        )
        for t in tool_list
    ]
    items: dict[str, Any] = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if not schemas:
        items = {"not": {}}
    out_schema = dict(output_schema_of(output))
    out_defs = out_schema.pop("$defs", None)
    calls: dict[str, Any] = {"type": "array", "items": items}
    output_property = nullable(out_schema)
    if tool_choice == "none":
        calls["maxItems"] = 0
        output_property = out_schema
    elif tool_choice != "auto":  # required, or one tool by name
        calls["minItems"] = 1
        output_property = {"type": "null"}
    composed: dict[str, Any] = {
        "type": "object",
        "properties": {"calls": calls, "output": output_property},
        "required": ["calls", "output"],
    }
    # each tool's definitions, a later one winning a name: one lookup over the distinct mappings
    # (a package's tools share one, which a large package parses per definition on first use)
    sources: list[Mapping[str, Any]] = [out_defs] if out_defs else []
    for t in reversed(tool_list):
        if t.defs and not any(t.defs is seen for seen in sources):
            sources.append(t.defs)
    kept = reachable_defs(composed, _FirstOf(sources))
    if kept:
        composed, kept = inline_single_use(composed, kept)
        if kept:
            composed["$defs"] = kept
    return composed


class _FirstOf(Mapping[str, Any]):
    """Mappings read as one, the first that holds a name giving its value (a read-only
    ``ChainMap``: no copy, so a lazily parsed mapping parses only what is looked up)."""

    def __init__(self, maps: Sequence[Mapping[str, Any]]) -> None:
        self._maps = maps

    def __getitem__(self, name: str) -> Any:
        for found in self._maps:
            if name in found:
                return found[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(name in found for found in self._maps)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(name for found in reversed(self._maps) for name in found))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_DEFS = "#/$defs/"
_RESOLUTION_KEYWORDS = ("$id", "$anchor", "$dynamicAnchor", "$dynamicRef")
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})
"""Keywords whose values are instances, not schemas: a ``$ref`` key in them is data."""
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})


def _subschemas(obj: dict[str, Any]) -> list[Any]:
    """What may hold schemas below ``obj`` (the values of data keywords left out)."""
    out: list[Any] = []
    for key, value in obj.items():
        if key in _DATA_KEYWORDS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out.extend(cast("dict[str, Any]", value).values())
        else:
            out.append(value)
    return out


def inline_single_use(
    schema: dict[str, Any], defs: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write each definition that is referenced exactly once in place of that reference.

    A definition shared by several references stays in ``$defs`` (written once); one used once
    costs its name twice and a ``$ref`` for nothing. Only a plain ``{"$ref": ...}`` is replaced
    (a ``$ref`` with sibling keywords is left as it is), and never a definition that reaches
    itself, is referenced below its root (``#/$defs/A/properties/x``) or holds ``$id``,
    ``$anchor`` or ``$dynamic…`` keywords. Every other reference is a JSON pointer from the
    document root, which inlining does not move, so the result accepts exactly the same
    instances with the same annotations. Returns the new schema and the definitions kept.
    """
    counts: dict[str, int] = {}
    plain: dict[str, int] = {}
    pinned: set[str] = set()
    edges: dict[str, set[str]] = {name: set() for name in defs}

    def scan(node: Any, owner: str | None) -> None:
        stack: list[Any] = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(cast("list[Any]", item))
                continue
            if not isinstance(item, dict):
                continue
            obj = cast("dict[str, Any]", item)
            if owner is not None and any(k in obj for k in _RESOLUTION_KEYWORDS):
                pinned.add(owner)
            ref = obj.get("$ref")
            if isinstance(ref, str) and ref.startswith(_DEFS):
                name, _, rest = ref.removeprefix(_DEFS).partition("/")
                if name in defs:
                    counts[name] = counts.get(name, 0) + 1
                    if rest:
                        pinned.add(name)
                    elif len(obj) == 1:
                        plain[name] = plain.get(name, 0) + 1
                    if owner is not None:
                        edges[owner].add(name)
            stack.extend(_subschemas(obj))

    scan(schema, None)
    for name, body in defs.items():
        scan(body, name)
    inline = {
        n
        for n in defs
        if counts.get(n) == 1 and plain.get(n) == 1 and n not in pinned and not _cyclic(n, edges)
    }
    if not inline:
        return schema, dict(defs)

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [rewrite(v) for v in cast("list[Any]", node)]
        if not isinstance(node, dict):
            return node
        obj = cast("dict[str, Any]", node)
        ref = obj.get("$ref")
        if len(obj) == 1 and isinstance(ref, str) and ref.removeprefix(_DEFS) in inline:
            return rewrite(defs[ref.removeprefix(_DEFS)])
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if key in _DATA_KEYWORDS:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: rewrite(v) for k, v in cast("dict[str, Any]", value).items()}
            else:
                out[key] = rewrite(value)
        return out

    kept = {n: rewrite(body) for n, body in defs.items() if n not in inline}
    return rewrite(schema), kept


def _cyclic(name: str, edges: Mapping[str, set[str]]) -> bool:
    """Whether definition ``name`` reaches itself through references."""
    seen: set[str] = set()
    stack = list(edges.get(name, ()))
    while stack:
        current = stack.pop()
        if current == name:
            return True
        if current not in seen:
            seen.add(current)
            stack.extend(edges.get(current, ()))
    return False


def def_name(ref: str) -> str | None:
    """``Name`` of ``#/$defs/Name`` (JSON Pointer escapes undone), else None."""
    if ref.startswith(_DEFS) and "/" not in ref[len(_DEFS) :]:
        return ref[len(_DEFS) :].replace("~1", "/").replace("~0", "~")
    return None


def reachable_defs(schema: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``$defs`` entries ``schema`` reaches through ``#/$defs/...`` references, transitively,
    in name order: a package's definitions used only by tools not offered (or only by outputs of
    explicit tools) stay out of a composed or exported schema."""
    found: dict[str, Any] = {}
    todo: list[Any] = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            items = cast("dict[str, Any]", node)
            ref = items.get("$ref")
            if isinstance(ref, str):
                name = def_name(ref)
                if name is not None and name in defs and name not in found:
                    found[name] = defs[name]
                    todo.append(defs[name])
            # data is not schema, but a property named ``default`` or ``enum`` is one (Harbor's
            # ``Instance.default``); a scalar holds no reference (pushed, it was popped again
            # for nothing: a large package's composed schema holds ~100k of them)
            todo.extend(cast("Any", v) for v in _subschemas(items) if isinstance(v, dict | list))
        elif isinstance(node, list):
            todo.extend(cast("list[Any]", node))
    return {name: found[name] for name in sorted(found)}


def _type_text(schema: Any) -> str:
    """A short reading of a parameter's schema: ``string``, ``"a"|"b"``, ``array of integer``."""
    if not isinstance(schema, dict):
        return "any"
    node = cast("dict[str, Any]", schema)
    if "const" in node:
        return json.dumps(node["const"])
    enum: Any = node.get("enum")
    if isinstance(enum, list) and enum:
        return "|".join(json.dumps(v) for v in cast("list[Any]", enum)[:12])
    kind: Any = node.get("type")
    if isinstance(kind, list):
        kind = "|".join(str(k) for k in cast("list[Any]", kind) if k != "null") or "null"
    if kind == "array":
        return f"array of {_type_text(node.get('items'))}"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options: Any = node.get(key)
        if isinstance(options, list):
            return "|".join(_type_text(o) for o in cast("list[Any]", options)[:6])
    return "object" if "properties" in node else "any"


def describe_tools(tools: Iterable[ComposableTool], *, max_chars: int = 400) -> str:
    """The offered tools as text, one line each: ``name(param: type, opt?: type) — description``,
    then one indented line per described parameter. For a model whose chat template does not
    show the tool schema (llama.cpp applies the GGUF's template; SmolLM2's ignores ``tools`` and
    only the grammar built from the schema reaches the model), this is what it reads of them.
    Names are those offered (``offered_names``); each description is cut to ``max_chars``."""
    tool_list = list(tools)
    names = offered_names(tool_list)

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"

    lines: list[str] = []
    for tool in tool_list:
        props: Any = tool.parameters.get("properties")
        params = cast("dict[str, Any]", props) if isinstance(props, dict) else {}
        required: Any = tool.parameters.get("required")
        needed = set(cast("list[str]", required)) if isinstance(required, list) else set[str]()
        signature = ", ".join(
            f"{p}{'' if p in needed else '?'}: {_type_text(s)}"
            for p, s in params.items()
            if not p.startswith("_")
        )
        head = f"- {names[tool.name]}({signature})"
        if tool.description:
            head += f" — {cut(tool.description)}"
        lines.append(head)
        for p, s in params.items():
            node = cast("dict[str, Any]", s) if isinstance(s, dict) else {}
            text: Any = node.get("description")
            default: Any = node.get("default")
            if isinstance(text, str) and text.strip() and not p.startswith("_"):
                extra = f" (default {json.dumps(default)})" if default not in (None, "") else ""
                lines.append(f"    {p}: {cut(text)}{extra}")
    return "\n".join(lines)


# -- the schema as sent to a model ---------------------------------------------------------------

_ANY_TYPES = ("string", "number", "boolean", "object", "array", "null")
# keywords that say nothing of which values are valid: a schema of only these accepts any value
_ANNOTATION_KEYWORDS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "example",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def _never(schema: Any) -> bool:
    """Whether ``schema`` accepts no value (``false``, or ``not: {}`` with annotations)."""
    if schema is False:
        return True
    return (
        isinstance(schema, dict)
        and cast("dict[str, Any]", schema).get("not") in ({}, True)
        and set(cast("dict[str, Any]", schema)) - {"not"} <= _ANNOTATION_KEYWORDS
    )


def for_grammar(schema: Any) -> Any:
    """``schema`` written so that a grammar builder reads it — llama.cpp's json-schema-to-grammar,
    which servers such as llama-cpp-python run on the function's parameters — accepting the same
    answers the validator does.

    Such a builder refuses a whole schema over one subschema it cannot read, and the server then
    lets the model write anything: a BFCL function with an untyped parameter (``{description}``,
    any value) or one no value satisfies (``type: integer`` with a string ``enum`` lowers to
    ``not: {}``) made a small model answer ``{"arguments": ...}``. So an unconstrained subschema
    names every JSON type, and a property no value satisfies is left out of ``properties``
    (giving it is refused by the validator all the same); everything else is as composed.
    """
    if isinstance(schema, list):
        return [for_grammar(s) for s in cast("list[Any]", schema)]
    if not isinstance(schema, dict):
        return schema
    s = cast("dict[str, Any]", schema)
    if set(s) <= _ANNOTATION_KEYWORDS:
        return {**s, "type": list(_ANY_TYPES)}
    out = dict(s)
    props: Any = s.get("properties")
    if isinstance(props, dict):
        required: Any = s.get("required") or []
        out["properties"] = {
            name: for_grammar(sub)
            for name, sub in cast("dict[str, Any]", props).items()
            if not (_never(sub) and name not in required)
        }
    defs: Any = s.get("$defs")
    if isinstance(defs, dict):
        out["$defs"] = {k: for_grammar(v) for k, v in cast("dict[str, Any]", defs).items()}
    for key in (*_SCHEMA_LISTS, *_SCHEMA_VALUES):
        if key in s and key != "not":
            out[key] = for_grammar(s[key])
    return out
