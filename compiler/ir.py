"""Compiler layer: the intermediate representation. Imports only the standard library, and the
frozen, stdlib-only HTTP description of ``toolbind.runtime.contract`` (an OpenAPI package's
``HttpApi`` is the same value in the IR and in the generated code).

Every type here is frozen: passes build new values with ``dataclasses.replace`` instead of
mutating. Schema nodes form a closed union (``SchemaNode``) that backends match exhaustively.
Nodes never point back at their parents; a ``RefNode`` names a ``Definition`` by key and the
look-up goes through ``SpecPackage.definitions``.

JSON values that a spec carries verbatim (defaults, enum members, examples, execution configs)
are stored as canonical JSON text (``JsonText``) so the IR stays immutable and hashable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

from toolbind.contract import ExecutionType, HttpApi

JsonText = str
"""Canonical JSON text: ``json.dumps(value, sort_keys=True, separators=(",", ":"))``."""


def freeze(value: Any) -> JsonText:
    """Return the canonical JSON text of ``value`` (the IR's immutable form of a JSON value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def thaw(text: JsonText) -> Any:
    """Return the JSON value that ``freeze`` turned into ``text``."""
    return json.loads(text)


def escape_pointer_token(token: str) -> str:
    """Escape one RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceLocation:
    """Where a value came from: a spec file (as the user named it) and an RFC 6901 pointer."""

    file: str
    pointer: str = ""

    def child(self, *tokens: str | int) -> SourceLocation:
        """Return the location of a value below this one."""
        # (called for every value a frontend reads: a fifth of lowering a large spec went to
        # a generator, a join and two replaces for tokens that have nothing to escape)
        pointer = self.pointer
        for t in tokens:
            token = t if type(t) is str else str(t)
            if "~" in token or "/" in token:
                token = escape_pointer_token(token)
            pointer = f"{pointer}/{token}"
        return SourceLocation(file=self.file, pointer=pointer)

    def __str__(self) -> str:
        return f"{self.file}#{self.pointer}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Meta:
    """Annotations shared by every schema node."""

    loc: SourceLocation
    title: str | None = None
    description: str | None = None
    default: JsonText | None = None
    deprecated: bool = False
    # Keywords kept verbatim in exported schemas but not (yet) enforced by generated models,
    # e.g. ``examples``, ``x-*`` extensions and validation keywords outside the modelled set.
    extra: JsonText | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AnyNode:
    """``true`` or ``{}``: every JSON value."""

    meta: Meta
    kind: Literal["any"] = "any"


@dataclass(frozen=True, slots=True, kw_only=True)
class NeverNode:
    """``false``: no JSON value."""

    meta: Meta
    kind: Literal["never"] = "never"


@dataclass(frozen=True, slots=True, kw_only=True)
class NullNode:
    meta: Meta
    kind: Literal["null"] = "null"


@dataclass(frozen=True, slots=True, kw_only=True)
class BooleanNode:
    meta: Meta
    kind: Literal["boolean"] = "boolean"


@dataclass(frozen=True, slots=True, kw_only=True)
class NumericBounds:
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IntegerNode:
    meta: Meta
    bounds: NumericBounds = field(default_factory=NumericBounds)
    format: str | None = None
    kind: Literal["integer"] = "integer"


@dataclass(frozen=True, slots=True, kw_only=True)
class NumberNode:
    meta: Meta
    bounds: NumericBounds = field(default_factory=NumericBounds)
    format: str | None = None
    kind: Literal["number"] = "number"


@dataclass(frozen=True, slots=True, kw_only=True)
class StringNode:
    meta: Meta
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    kind: Literal["string"] = "string"


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayNode:
    meta: Meta
    items: SchemaNode | None = None
    prefix_items: tuple[SchemaNode, ...] = ()
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    kind: Literal["array"] = "array"


@dataclass(frozen=True, slots=True, kw_only=True)
class Property:
    name: str
    schema: SchemaNode
    required: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectNode:
    meta: Meta
    properties: tuple[Property, ...] = ()
    # None: any additional property is allowed (the JSON Schema default);
    # NeverNode: none is; another node: each additional value must match it.
    additional: SchemaNode | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    kind: Literal["object"] = "object"


@dataclass(frozen=True, slots=True, kw_only=True)
class LiteralNode:
    """``enum`` or ``const``: the instance equals one of ``values`` (canonical JSON texts)."""

    meta: Meta
    values: tuple[JsonText, ...]
    form: Literal["enum", "const"] = "enum"
    kind: Literal["literal"] = "literal"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnionNode:
    """``anyOf`` / ``oneOf`` / a ``type`` array: the instance matches one of ``variants``."""

    meta: Meta
    variants: tuple[SchemaNode, ...]
    form: Literal["anyOf", "oneOf", "type"] = "anyOf"
    kind: Literal["union"] = "union"


@dataclass(frozen=True, slots=True, kw_only=True)
class AllOfNode:
    """``allOf`` that could not be merged into one node."""

    meta: Meta
    parts: tuple[SchemaNode, ...]
    kind: Literal["allOf"] = "allOf"


@dataclass(frozen=True, slots=True, kw_only=True)
class RefNode:
    """A ``$ref``, resolved to the key of a ``Definition`` in the package."""

    meta: Meta
    target: str
    kind: Literal["ref"] = "ref"


@dataclass(frozen=True, slots=True, kw_only=True)
class NotCheck:
    """``not``: the instance must not match ``schema``."""

    schema: SchemaNode


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalCheck:
    """``if``/``then``/``else``."""

    if_: SchemaNode
    then: SchemaNode | None = None
    else_: SchemaNode | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainsCheck:
    """``contains``/``minContains``/``maxContains`` (arrays only)."""

    schema: SchemaNode
    min_contains: int = 1
    max_contains: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DependentRequiredCheck:
    """``dependentRequired`` (and draft 7 ``dependencies`` with an array): key → required keys."""

    requires: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DependentSchemasCheck:
    """``dependentSchemas`` (and draft 7 ``dependencies`` with a schema): key → schema."""

    schemas: tuple[tuple[str, SchemaNode], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PropertyNamesCheck:
    """``propertyNames``: every key of an object matches ``schema``."""

    schema: SchemaNode


@dataclass(frozen=True, slots=True, kw_only=True)
class PatternPropertiesCheck:
    """``patternProperties``, and ``additionalProperties`` for keys neither declared nor matched."""

    patterns: tuple[tuple[str, SchemaNode], ...]
    declared: tuple[str, ...]
    additional: SchemaNode | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalPlan:
    """Which properties / items one schema *evaluates* (JSON Schema annotations), for
    ``unevaluatedProperties`` / ``unevaluatedItems``.

    Only in-place applicators are followed (``allOf``, ``$ref``, ``anyOf``/``oneOf``,
    ``if``/``then``/``else``, ``dependentSchemas``): they look at the same instance. A branch
    (``anyOf``/``oneOf`` variant, ``if``) contributes only when the instance matches it.
    """

    properties: tuple[str, ...] = ()  # ``properties`` names
    patterns: tuple[str, ...] = ()  # ``patternProperties`` regexes
    all_properties: bool = False  # ``additionalProperties`` / ``unevaluatedProperties``
    prefix: int = 0  # ``prefixItems`` (draft 7: array ``items``) length
    all_items: bool = False  # ``items`` / ``additionalItems`` / ``unevaluatedItems``
    contains: SchemaNode | None = None  # items matching ``contains`` are evaluated
    always: tuple[EvalPlan, ...] = ()  # ``allOf`` parts and ``$ref`` targets
    branches: tuple[tuple[SchemaNode, EvalPlan], ...] = ()  # ``anyOf``/``oneOf`` variants
    if_: tuple[SchemaNode, EvalPlan] | None = None
    then: EvalPlan | None = None
    else_: EvalPlan | None = None
    dependent: tuple[tuple[str, EvalPlan], ...] = ()  # ``dependentSchemas``


@dataclass(frozen=True, slots=True, kw_only=True)
class UnevaluatedCheck:
    """``unevaluatedProperties`` / ``unevaluatedItems``: what ``plan`` leaves unevaluated
    must match ``schema``."""

    kind: Literal["properties", "items"]
    schema: SchemaNode
    plan: EvalPlan


Check = (
    NotCheck
    | PatternPropertiesCheck
    | ConditionalCheck
    | ContainsCheck
    | DependentRequiredCheck
    | DependentSchemasCheck
    | PropertyNamesCheck
    | UnevaluatedCheck
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedNode:
    """``base`` plus applicator checks on the same instance that no Python type can spell."""

    meta: Meta
    base: SchemaNode
    checks: tuple[Check, ...]
    kind: Literal["checked"] = "checked"


SchemaNode = (
    AnyNode
    | NeverNode
    | NullNode
    | BooleanNode
    | IntegerNode
    | NumberNode
    | StringNode
    | ArrayNode
    | ObjectNode
    | LiteralNode
    | UnionNode
    | AllOfNode
    | RefNode
    | CheckedNode
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Definition:
    """A schema reached through ``$ref``; generated once and shared by every tool."""

    key: str  # "<file>#<pointer>" of the resolved target
    name_hint: str  # the last pointer token, e.g. "Address" for #/$defs/Address
    node: SchemaNode


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """One tool: what the LLM fills (``params``) and what it produces (``output``)."""

    name: str  # the spec's own name: the value of ``_tool`` on the wire
    loc: SourceLocation
    params: ObjectNode
    output: SchemaNode | None = None
    description: str | None = None
    title: str | None = None
    activity: str | None = None  # explicit ``_activity`` from the spec
    execution_type: ExecutionType | None = None
    visible: bool | None = None
    execution: JsonText | None = None  # the gateway's declarative execution config
    display: JsonText | None = None
    annotations: JsonText | None = None  # MCP tool annotations
    strict: bool | None = None  # OpenAI ``strict`` flag
    deprecated: bool = False
    toolsets: tuple[str, ...] = ()  # e.g. BFCL record ids, OpenAPI tags
    # the tool's place in each of ``toolsets`` (a BFCL record's function order), when it has one;
    # a toolset lists its tools in that order, as the spec gives them to a model
    toolset_positions: tuple[int, ...] = ()
    original_name: str | None = None  # set when the frontend had to qualify ``name``
    # OpenAPI: the declared error responses' schemas (``"404"``, ``"4XX"``, ``"default"``), which
    # a failed call's body is read into
    errors: tuple[tuple[str, SchemaNode], ...] = ()
    # the RFC's Call extensions the tool's schema declares (``_outputPath``, ``_outputMethod``,
    # ``_instance``, ``_delegate``: contract.CALL_EXTENSIONS order), each with its schema
    extensions: tuple[tuple[str, SchemaNode], ...] = ()
    extensions_required: tuple[str, ...] = ()  # those the tool's ``required`` lists
    requires_approval: bool = False  # ``x-requires-approval``: its calls wait for a human


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecPackage:
    """Everything one spec file declares; the unit the backends turn into a package."""

    source: str  # the spec file as the user named it (relative where possible)
    format: str  # which frontend read it, e.g. "mcp", "openai", "seeds"
    tools: tuple[ToolSpec, ...]
    definitions: tuple[Definition, ...] = ()
    # OpenAPI: how each tool's operation is called over HTTP (tools by wire name).
    http: HttpApi | None = None
    # An MCP configuration: where each tool is called (tools/call on its server).
    mcp: McpSource | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class McpSource:
    """The MCP servers a package's tools were listed from (``toolbind generate`` on an MCP
    configuration): each server's configuration in the gateway's shape (``${env.X}`` as
    written), and the server of each tool (by wire name)."""

    servers: tuple[JsonText, ...]
    tool_servers: tuple[tuple[str, str], ...]


def _plain_reprs(kinds: list[type[Any]]) -> None:
    """Give each of ``kinds`` the ``repr`` dataclasses write, less their guard against a value
    that holds itself (``reprlib.recursive_repr``): no IR value does (frozen, a ``RefNode``
    names its definition by key), and the guard took two fifths of the ``repr`` that
    incremental generation keys a large spec's definitions on (30 → 18 ms on the openai spec).
    (One source for all of them: compiling one per class cost 15 ms of every import.)"""
    source: list[str] = []
    for n, kind in enumerate(kinds):
        body = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields(kind) if f.repr)
        source.append(f"def r{n}(self):\n    return f'{kind.__qualname__}({body})'\n")
    scope: dict[str, Any] = {}
    exec("".join(source), scope)
    for n, kind in enumerate(kinds):
        made = scope[f"r{n}"]
        made.__qualname__ = f"{kind.__qualname__}.__repr__"
        kind.__repr__ = made


_plain_reprs(
    [
        v
        for v in list(globals().values())
        if isinstance(v, type) and is_dataclass(v) and v.__module__ == __name__
    ]
)
