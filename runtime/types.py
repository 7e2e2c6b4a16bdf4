"""Runtime layer: the building blocks generated models are made of. Imports pydantic and the
kernel's pydantic-free helpers (``toolbind._ecma``, ``._formats``, ``._jsonvalue``).

Generated modules import these names; users rarely need them directly. Each type accepts exactly
the JSON values its JSON Schema counterpart accepts (no lax coercion: ``"1"`` is not an integer,
``true`` is not a number), and dumps them back unchanged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Generic, Self, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    GetPydanticSchema,
    JsonValue,
    ModelWrapValidatorHandler,
    Strict,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.config import ExtraValues
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import SchemaError, SchemaValidator, core_schema

from toolbind._ecma import compile_pattern as _compile
from toolbind._ecma import native_pattern
from toolbind._jsonvalue import json_equal as json_equal

__all__ = [
    "AllOf",
    "BoolLiteral",
    "Bounds",
    "Contains",
    "DependentRequired",
    "DependentSchemas",
    "ExactlyOne",
    "Format",
    "IfThenElse",
    "IntLiteral",
    "JsonBool",
    "JsonInt",
    "JsonNumber",
    "JsonStr",
    "KeepExtrasApart",
    "MultipleOf",
    "Not",
    "NotNull",
    "Nothing",
    "OneOf",
    "Pattern",
    "PatternProperties",
    "Plan",
    "PrefixItems",
    "PropertyNames",
    "ToolCall",
    "ToolModel",
    "ToolResponse",
    "ToolTag",
    "Unevaluated",
    "UniqueItems",
    "json_equal",
]


class ToolModel(BaseModel):
    """Base of every generated model.

    Fields are read and written by their JSON names (the spec's, as ``alias``) and accessed by
    their Python names: ``GreetUserCall(userName="Ann").user_name``. Reading JSON names only
    (``validate_by_name`` off) keeps a model exactly as permissive as its schema: a key that
    happens to equal another field's Python name is an extra property, never that field. Unknown
    properties are kept, as JSON Schema allows them unless ``additionalProperties`` says
    otherwise (generated classes override ``extra`` then). Schema building is deferred to first
    use so that importing a package with hundreds of tools stays fast.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=False,
        serialize_by_alias=True,
        defer_build=True,
        protected_namespaces=(),
        # NaN and ±Infinity (which Python's JSON readers accept, and 1e400 overflows to) are not
        # JSON numbers: a number field refuses them instead of holding a value that dumps as null
        allow_inf_nan=False,
    )

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """``BaseModel.model_validate_json``; without options, straight to the validator (the
        method of a class not built yet: see ``_install_fast_paths``)."""
        if (strict, extra, context, by_alias, by_name) == (None, None, None, None, None):
            return cls.__pydantic_validator__.validate_json(json_data)
        return super().model_validate_json(
            json_data,
            strict=strict,
            extra=extra,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )

    # Validation goes straight to the class's built validator. ``BaseModel.model_validate_json``
    # is a Python function forwarding five keyword arguments, which costs a third of the time of
    # validating a small tool call; the validator's own bound method (C) takes the same
    # arguments. It is installed when pydantic completes the class (the build is deferred to
    # first use) and after every rebuild; until then a class has the generic method, never a
    # parent's (whose validator would make parent instances).

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        setattr(cls, "model_validate_json", ToolModel.__dict__["model_validate_json"])  # noqa: B010
        setattr(cls, "model_validate", BaseModel.__dict__["model_validate"])  # noqa: B010

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        super().__pydantic_on_complete__()
        _install_fast_paths(cls)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Mapping[str, Any] | None = None,
    ) -> bool | None:
        rebuilt = super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,
            _types_namespace=_types_namespace,
        )
        if cls.__pydantic_complete__:
            _install_fast_paths(cls)  # a forced rebuild makes a new validator, without the hook
        return rebuilt


def _install_fast_paths(cls: type[BaseModel]) -> None:
    validator = cls.__pydantic_validator__
    if isinstance(validator, SchemaValidator):  # built (and no pydantic plugin wrapping it)
        setattr(cls, "model_validate_json", validator.validate_json)  # noqa: B010
        setattr(cls, "model_validate", validator.validate_python)  # noqa: B010


class KeepExtrasApart(BaseModel):
    """Mixed into generated classes that allow extra properties and rename an optional field
    whose absence can't be told from its value (nullable, or with a default).

    pydantic records an *extra* key in ``model_fields_set`` by its name, so an extra property
    that happens to equal such a field's Python name (``{"user_name": ...}`` beside the
    ``user-name`` field) would mark that field as set and put it into every ``exclude_unset``
    dump. This validator undoes that; it runs in Python, so only the classes that need it carry
    it (``NotNull`` fields are left out of dumps by value instead).
    """

    # Built with the class that mixes it in, not on import (loading pydantic's plugins and
    # building a validator here cost every generated package's import ~30 ms).
    model_config = ConfigDict(defer_build=True)

    @model_validator(mode="wrap")
    @classmethod
    def _extras_are_not_fields(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        model = handler(data)
        extra = model.__pydantic_extra__
        if extra and isinstance(data, dict):
            fields = type(model).model_fields
            for key in extra.keys() & fields.keys():
                alias = fields[key].alias
                if alias is not None and alias not in data:
                    model.__pydantic_fields_set__.discard(key)
        return model


def _tool_tag_first(source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    schema = handler(source)
    if schema["type"] == "tagged-union" and schema["discriminator"] == [["tool"], ["_tool"]]:
        schema["discriminator"] = [["_tool"], ["tool"]]
    return schema


ToolTag = GetPydanticSchema(_tool_tag_first)
"""After ``Field(discriminator="tool")`` on a union of Calls: the tag is read from ``_tool``
first. pydantic looks a discriminator up by the field's Python name before its alias, so a
parameter (or an extra property) named ``tool`` — the Python name of ``_tool`` — was read as the
tag and the call refused; ``tool`` stays the fallback, for Call instances."""


CallT = TypeVar("CallT")
OutputT = TypeVar("OutputT")


class ToolResponse(ToolModel, Generic[CallT, OutputT]):
    """What the LLM fills (agent-tool-rfc.md): a final ``output`` (or null) and the ``calls``.

    Each generated package defines ``Response = ToolResponse[Call, OutputT]``; parametrise that
    with your own output model: ``Response[Summary]``, or ``Response[str]`` for text.
    """

    output: OutputT | None
    calls: list[CallT]

    def _mark_calls(self) -> None:
        for call in self.calls:
            if isinstance(call, ToolCall):
                call.__pydantic_fields_set__.add("tool")

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        self._mark_calls()
        return super().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        self._mark_calls()
        return super().model_dump_json(**kwargs)


class ToolCall(ToolModel):
    """Base of every generated Call model: ``_tool`` is part of every dump, also of a Call made
    in Python without it (``WeatherCheckCall(location="Paris")``).

    The field is marked set when a dump starts rather than by a validation hook, which would
    run Python on every validation and halve the throughput of small models.
    """

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        self.__pydantic_fields_set__.add("tool")
        return super().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        self.__pydantic_fields_set__.add("tool")
        return super().model_dump_json(**kwargs)


def _integral(value: Any) -> Any:
    # JSON Schema: 1.0 is an integer. Only exact integral floats convert; bool stays rejected.
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def _int_literal(value: Any) -> Any:
    # Literal[1] alone would take True (True == 1 in Python) and refuse 1.0 (an integer in JSON).
    if isinstance(value, bool):
        raise ValueError("a boolean is not one of the allowed numbers")
    return _integral(value)


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("null is not allowed here (leave the property out instead)")
    return value


def _without_null(source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    # ``X | None`` with the ``None`` taken out again, in the core schema: absent keeps the
    # default (None, never validated), an explicit null is refused, and no Python runs.
    schema = handler(source)
    if schema["type"] == "nullable":
        return schema["schema"]
    return core_schema.no_info_before_validator_function(_not_null, schema)


def _is_none(value: Any) -> bool:
    return value is None


def _nothing(value: Any) -> Any:
    raise ValueError("no value is allowed here (the schema is false)")


JsonStr = Annotated[str, Strict()]
JsonBool = Annotated[bool, Strict()]
JsonInt = Annotated[int, Strict(), BeforeValidator(_integral)]
JsonNumber = Annotated[int, Strict()] | Annotated[float, Strict()]


def _bool_literal(value: Any) -> Any:
    # Literal[False] alone would take 0 (and Literal[True] 1): JSON tells booleans and numbers apart.
    if type(value) in (int, float):
        raise ValueError("a number is not one of the allowed values")
    return value


BoolLiteral = BeforeValidator(_bool_literal)
"""Makes ``Literal[...]`` with booleans refuse numbers, as JSON equality does."""
IntLiteral = BeforeValidator(_int_literal)
"""Makes ``Literal[...]`` with integers compare as JSON does (no booleans, 1.0 == 1)."""
NotNull = Field(exclude_if=_is_none)
NotNull.metadata.append(GetPydanticSchema(_without_null))
"""Marks an optional, non-nullable property (``Annotated[X | None, NotNull] = None``): absent
is fine, an explicit null is not, and since None can only mean absent, dumps leave it out."""
Nothing = Annotated[JsonValue, BeforeValidator(_nothing)]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return value


def OneOf(*json_texts: str) -> AfterValidator:
    """Accept only values JSON-equal to one of ``json_texts`` (for enums Literal can't spell)."""
    allowed = [json.loads(t) for t in json_texts]

    def check(value: Any) -> Any:
        plain = _plain(value)
        if any(json_equal(plain, a) for a in allowed):
            return value
        raise ValueError(f"value is not one of the allowed values {list(json_texts)}")

    return AfterValidator(check)


def Format(name: str) -> AfterValidator:
    """``format`` asserted (models compiled with format assertion on; see ``_formats``)."""
    # here, not at import: the format checkers (their regexes, ``ipaddress``, ``unicodedata``)
    # load when a model asserts a format, not with every generated package
    from toolbind._formats import FORMATS

    test = FORMATS[name]

    def check(value: str) -> str:
        if not test(value):
            raise ValueError(f"string is not a valid {name!r} (format)")
        return value

    return AfterValidator(check)


def _quoted(pattern: str) -> str:
    """A pattern as written, in quotes: ``repr`` doubles every backslash, and a model copies
    what it reads."""
    for quote in ("'", '"'):
        if quote not in pattern:
            return f"{quote}{pattern}{quote}"
    return repr(pattern)


def Pattern(pattern: str) -> AfterValidator | NativePattern:
    """ECMA-262 unanchored ``pattern`` match (a search, not a full match).

    Checked in pydantic-core, without a call into Python per value, where Rust's regex crate
    reads the pattern as ECMA-262 does (``native_pattern``); by the ``regex`` package otherwise.
    Either way the error is the same ``value_error``.
    """
    compiled = _compile(pattern)  # an invalid pattern fails here, whichever engine checks it
    native = _native_spelling(pattern)
    if native is not None:
        return NativePattern(pattern, native)

    def check(value: str) -> str:
        if compiled.search(value) is None:
            raise ValueError(_mismatch(pattern))
        return value

    return AfterValidator(check)


def _mismatch(pattern: str) -> str:
    return f"string does not match pattern {_quoted(pattern)}"


@lru_cache(maxsize=4096)
def _native_spelling(pattern: str) -> str | None:
    """``native_pattern(pattern)`` if pydantic-core also builds it (Rust's size limits), else
    None."""
    native = native_pattern(pattern)
    if native is None:
        return None
    try:
        SchemaValidator(core_schema.str_schema(pattern=native, regex_engine="rust-regex"))
    except SchemaError:
        return None
    return native


@dataclass(frozen=True)
class NativePattern:
    """A ``pattern`` pydantic-core checks (see ``Pattern``): after the value's own schema, a
    Rust regex search whose failure is the ``value_error`` the Python check would raise."""

    pattern: str
    native: str

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        check = core_schema.custom_error_schema(
            core_schema.str_schema(pattern=self.native, regex_engine="rust-regex"),
            custom_error_type="value_error",
            custom_error_context={"error": _mismatch(self.pattern)},
        )
        return core_schema.chain_schema([handler(source), check])

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # the value's own schema in both modes, as the Python check gives (pydantic would show
        # the Rust spelling in serialization mode)
        steps = cast("list[core_schema.CoreSchema]", schema.get("steps", [schema]))
        return handler(steps[0])


def UniqueItems() -> AfterValidator:
    """No two items of the array are JSON-equal."""

    def check(value: list[Any]) -> list[Any]:
        plain = [_plain(v) for v in value]
        for i in range(len(plain)):
            for j in range(i + 1, len(plain)):
                if json_equal(plain[i], plain[j]):
                    raise ValueError(f"items {i} and {j} are equal (uniqueItems)")
        return value

    return AfterValidator(check)


def Bounds(
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    format: str | None = None,
) -> AfterValidator:
    """Numeric bounds for ``number`` values (an int-or-float union pydantic can't constrain).

    ``format``: the bounds are the range of OpenAPI's ``float``/``double``, said in the message
    (NaN and the infinities are refused by every model's ``allow_inf_nan=False``).
    """
    why = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
    if format is not None:
        why = dict.fromkeys(why, f"format {format}")

    def check(value: float) -> float:
        if ge is not None and not value >= ge:
            raise ValueError(f"value must be >= {ge} ({why['ge']})")
        if gt is not None and not value > gt:
            raise ValueError(f"value must be > {gt} ({why['gt']})")
        if le is not None and not value <= le:
            raise ValueError(f"value must be <= {le} ({why['le']})")
        if lt is not None and not value < lt:
            raise ValueError(f"value must be < {lt} ({why['lt']})")
        return value

    return AfterValidator(check)


_REMEMBERED_TEXT = 16_384
"""The longest JSON text of a value whose outcome a sub-schema check remembers."""
_REMEMBERED_VALUES = 1_024
"""How many outcomes one sub-schema check remembers (then it starts afresh)."""


class _Sub:
    """A sub-schema's type, turned into a TypeAdapter on first use (the module is complete then)."""

    def __init__(self, tp: Any) -> None:
        self.tp = tp
        self._adapter: TypeAdapter[Any] | None = None
        # what validating a small value gave, by its JSON text (see ``_outcome``)
        self._outcomes: dict[str, ValidationError | None] = {}

    def _validate(self, value: Any) -> None:
        if self._adapter is None:
            self._adapter = TypeAdapter(self.tp)
        self._adapter.validate_python(value)

    def _outcome(self, value: Any) -> ValidationError | None:
        """What validating ``value`` gives: None, or the error — remembered for a small plain
        JSON value. A oneOf/allOf check validates the value against each variant, whose own
        checks validate the value's parts again, once per variant tried at every level above
        (and pydantic's union tries its members too): nested variants cost the product of
        their counts. Validation is a function of the JSON value, so each part is checked once
        per variant."""
        try:
            text = json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):  # not plain JSON (a model instance): not remembered
            return self._run(value)
        if len(text) > _REMEMBERED_TEXT:
            return self._run(value)
        if text in self._outcomes:
            return self._outcomes[text]
        outcome = self._run(value)
        if len(self._outcomes) >= _REMEMBERED_VALUES:
            self._outcomes.clear()
        self._outcomes[text] = outcome
        return outcome

    def _run(self, value: Any) -> ValidationError | None:
        try:
            self._validate(value)
        except ValidationError as exc:
            return exc
        return None

    def matches(self, value: Any) -> bool:
        return self._outcome(value) is None  # (no message made: oneOf tries every variant)

    def problems(self, value: Any) -> str | None:
        """None when ``value`` matches; else what does not, as the first few errors (where and
        why: a model retrying, or a developer, learns which field to fix)."""
        exc = self._outcome(value)
        if exc is not None:
            errors = exc.errors(include_url=False, include_input=False)
            shown = [
                (".".join(str(p) for p in e["loc"]) or "the value") + ": " + e["msg"]
                for e in errors[:3]
            ]
            more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
            return "; ".join(shown) + more
        return None


_SUBS: dict[Any, _Sub] = {}


def _sub(tp: Any) -> _Sub:
    """The one ``_Sub`` of ``tp``. A generated alias's annotation (``Annotated[A | B,
    ExactlyOne(A, B)]``) is evaluated again each time pydantic builds a schema that reaches
    it, and each evaluation made new checks, each building its own TypeAdapter on first use:
    with nested variants (OpenSearch's mappings: a property is one of 47 kinds, with
    properties of its own) thousands were built while one answer was checked — a 3 KB part of
    a 168 KB index template answer took 8 s, the whole answer over 8 minutes."""
    try:
        found = _SUBS.get(tp)
    except TypeError:  # an unhashable type: its own check
        return _Sub(tp)
    if found is None:
        found = _SUBS.setdefault(tp, _Sub(tp))
    return found


def AllOf(*tps: Any) -> BeforeValidator:
    """``allOf`` parts beyond the one that gives the Python type: the value matches each."""
    subs = [_sub(tp) for tp in tps]

    def check(value: Any) -> Any:
        plain = _plain(value)
        for i, sub in enumerate(subs):
            problems = sub.problems(plain)
            if problems is not None:
                raise ValueError(f"value does not match allOf part {i + 2}: {problems}")
        return value

    return BeforeValidator(check)


def ExactlyOne(*tps: Any) -> BeforeValidator:
    """``oneOf``: exactly one of the variants matches (pydantic's union takes the best one)."""
    subs = [_sub(tp) for tp in tps]

    def check(value: Any) -> Any:
        plain = _plain(value)
        count = sum(1 for sub in subs if sub.matches(plain))
        if count != 1:
            raise ValueError(f"value matches {count} of the oneOf schemas, exactly one must match")
        return value

    return BeforeValidator(check)


def PrefixItems(prefix: tuple[Any, ...], rest: Any = None) -> BeforeValidator:
    """``prefixItems`` (draft 7: array ``items``) and the ``items`` that follow them."""
    subs = [_sub(tp) for tp in prefix]
    tail = _sub(rest) if rest is not None else None

    def check(value: Any) -> Any:
        data: object = value
        if isinstance(data, list):
            for i, item in enumerate(cast("list[Any]", data)):
                sub = subs[i] if i < len(subs) else tail
                if sub is not None and not sub.matches(_plain(item)):
                    raise ValueError(f"item {i} does not match its schema")
        return value

    return BeforeValidator(check)


def Not(tp: Any) -> BeforeValidator:
    """``not``: reject values that match ``tp``."""
    sub = _sub(tp)

    def check(value: Any) -> Any:
        if sub.matches(_plain(value)):
            raise ValueError("value must not match the 'not' schema")
        return value

    return BeforeValidator(check)


def IfThenElse(if_: Any, then: Any = None, else_: Any = None) -> BeforeValidator:
    """``if``/``then``/``else``: ``then`` must hold where ``if`` matches, ``else`` elsewhere."""
    cond, yes, no = (
        _sub(if_),
        _sub(then) if then is not None else None,
        _sub(else_) if else_ is not None else None,
    )

    def check(value: Any) -> Any:
        plain = _plain(value)
        branch, which = (yes, "then") if cond.matches(plain) else (no, "else")
        if branch is not None and not branch.matches(plain):
            raise ValueError(f"value does not match the '{which}' schema")
        return value

    return BeforeValidator(check)


def Contains(tp: Any, min_contains: int = 1, max_contains: int | None = None) -> BeforeValidator:
    """``contains`` with ``minContains``/``maxContains`` (arrays only)."""
    sub = _sub(tp)

    def check(value: Any) -> Any:
        data: object = value
        if isinstance(data, list):
            count = sum(1 for item in cast("list[Any]", data) if sub.matches(_plain(item)))
            if count < min_contains:
                raise ValueError(f"{count} item(s) match 'contains', at least {min_contains} must")
            if max_contains is not None and count > max_contains:
                raise ValueError(f"{count} items match 'contains', at most {max_contains} may")
        return value

    return BeforeValidator(check)


def DependentRequired(requires: dict[str, tuple[str, ...]]) -> BeforeValidator:
    """``dependentRequired``: when a key is present, these keys must be too."""

    def check(value: Any) -> Any:
        plain = _plain(value)
        if isinstance(plain, dict):
            keys = cast("dict[str, Any]", plain).keys()
            for key, needed in requires.items():
                missing = [n for n in needed if key in keys and n not in keys]
                if missing:
                    raise ValueError(f"{key!r} requires {missing!r} (dependentRequired)")
        return value

    return BeforeValidator(check)


def DependentSchemas(schemas: dict[str, Any]) -> BeforeValidator:
    """``dependentSchemas``: when a key is present, the whole object must match its schema."""
    subs = {key: _sub(tp) for key, tp in schemas.items()}

    def check(value: Any) -> Any:
        plain = _plain(value)
        if isinstance(plain, dict):
            for key, sub in subs.items():
                if key in plain and not sub.matches(plain):
                    raise ValueError(f"object with {key!r} does not match its dependent schema")
        return value

    return BeforeValidator(check)


def PatternProperties(
    patterns: dict[str, Any], declared: tuple[str, ...] = (), additional: Any = None
) -> BeforeValidator:
    """``patternProperties``; ``additional`` covers keys neither ``declared`` nor matched."""
    compiled = [(_compile(p), p, _sub(tp)) for p, tp in patterns.items()]
    rest = _sub(additional) if additional is not None else None
    known = frozenset(declared)

    def check(value: Any) -> Any:
        plain = _plain(value)
        if isinstance(plain, dict):
            for key, item in cast("dict[str, Any]", plain).items():
                matched = False
                for regex, written, sub in compiled:
                    if regex.search(key):
                        matched = True
                        if not sub.matches(item):
                            raise ValueError(
                                f"property {key!r} does not match the schema of pattern {_quoted(written)}"
                            )
                if not matched and key not in known and rest is not None and not rest.matches(item):
                    raise ValueError(f"additional property {key!r} is not allowed here")
        return value

    return BeforeValidator(check)


def PropertyNames(tp: Any) -> BeforeValidator:
    """``propertyNames``: every key of an object matches ``tp``."""
    sub = _sub(tp)

    def check(value: Any) -> Any:
        plain = _plain(value)
        if isinstance(plain, dict):
            for key in cast("dict[str, Any]", plain):
                if not sub.matches(key):
                    raise ValueError(f"property name {key!r} does not match 'propertyNames'")
        return value

    return BeforeValidator(check)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Which properties / items a schema evaluates, for ``Unevaluated`` (JSON Schema
    annotations). Sub-schemas (``contains``, branch and ``if`` schemas) are types, as in the
    other checks; a branch contributes only when the instance matches it."""

    properties: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    all_properties: bool = False
    prefix: int = 0
    all_items: bool = False
    contains: Any = None
    always: tuple[Plan, ...] = ()
    branches: tuple[tuple[Any, Plan], ...] = ()
    if_: tuple[Any, Plan] | None = None
    then: Plan | None = None
    else_: Plan | None = None
    dependent: tuple[tuple[str, Plan], ...] = ()


class _Evaluator:
    """``Plan`` with its sub-schema types made ``_Sub``s once."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.patterns = [_compile(p) for p in plan.patterns]
        self.contains = _sub(plan.contains) if plan.contains is not None else None
        self.always = [_Evaluator(p) for p in plan.always]
        self.branches = [(_sub(tp), _Evaluator(p)) for tp, p in plan.branches]
        self.if_ = (_sub(plan.if_[0]), _Evaluator(plan.if_[1])) if plan.if_ else None
        self.then = _Evaluator(plan.then) if plan.then is not None else None
        self.else_ = _Evaluator(plan.else_) if plan.else_ is not None else None
        self.dependent = [(k, _Evaluator(p)) for k, p in plan.dependent]

    def _applied(self, value: Any) -> list[_Evaluator]:
        """The in-place sub-schemas whose annotations count for ``value``."""
        out = list(self.always)
        out.extend(ev for sub, ev in self.branches if sub.matches(value))
        if self.if_ is not None:
            cond, ev = self.if_
            if cond.matches(value):
                out.append(ev)
                if self.then is not None:
                    out.append(self.then)
            elif self.else_ is not None:
                out.append(self.else_)
        if isinstance(value, dict):
            out.extend(ev for key, ev in self.dependent if key in value)
        return out

    def properties(self, value: dict[str, Any]) -> Collection[str]:
        if self.plan.all_properties:
            return value.keys()
        done = {k for k in self.plan.properties if k in value}
        done.update(k for k in value if any(r.search(k) for r in self.patterns))
        for ev in self._applied(value):
            done.update(ev.properties(value))
        return done

    def items(self, value: list[Any]) -> Collection[int]:
        if self.plan.all_items:
            return range(len(value))
        done = set(range(min(self.plan.prefix, len(value))))
        if self.contains is not None:
            done.update(i for i, item in enumerate(value) if self.contains.matches(item))
        for ev in self._applied(value):
            done.update(ev.items(value))
        return done


def Unevaluated(kind: str, tp: Any, plan: Plan) -> BeforeValidator:
    """``unevaluatedProperties`` / ``unevaluatedItems``: what ``plan`` does not evaluate must
    match ``tp``."""
    sub = _sub(tp)
    evaluator = _Evaluator(plan)

    def check(value: Any) -> Any:
        plain = _plain(value)
        if kind == "properties" and isinstance(plain, dict):
            obj = cast("dict[str, Any]", plain)
            done = evaluator.properties(obj)
            for key, item in obj.items():
                if key not in done and not sub.matches(item):
                    raise ValueError(f"property {key!r} is not allowed (unevaluatedProperties)")
        elif kind == "items" and isinstance(plain, list):
            arr = cast("list[Any]", plain)
            done = evaluator.items(arr)
            for i, item in enumerate(arr):
                if i not in done and not sub.matches(item):
                    raise ValueError(f"item {i} is not allowed (unevaluatedItems)")
        return value

    return BeforeValidator(check)


def MultipleOf(divisor: float) -> AfterValidator:
    """``multipleOf`` for numbers, exact for integers and tolerant of float rounding."""

    def check(value: float) -> float:
        if isinstance(value, int) and isinstance(divisor, int):
            ok = value % divisor == 0
        else:
            quotient = value / divisor
            ok = math.isfinite(quotient) and abs(quotient - round(quotient)) < 1e-9
        if not ok:
            raise ValueError(f"value is not a multiple of {divisor}")
        return value

    return AfterValidator(check)


Check = Callable[[Any], Any]
