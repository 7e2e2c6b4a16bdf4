"""Runtime layer: ``compose`` — the composed ``{output, calls}`` schema and its Response type.

Imports ``_compose`` (the seeds' composition rules), ``_binding``, ``types``, ``errors`` (the model's
feedback, ``ModelFeedback``) and pydantic; a raw JSON Schema output is compiled through ``_compiler``.

The Response type is a ``ToolResponse`` over the discriminated union (on ``_tool``) of the tools'
Call models, ``output`` typed by the output model (or ``str``). It validates what the LLM sent
against exactly the schema the LLM was sent: the composed schema, which is also its JSON Schema.
A latent tool's ``_output`` is optional there (the seeds' composition rule), so it is optional
here too: a model constrained by a grammar built from the schema is never refused for following it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, cast

from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import ErrorDetails

from toolbind._compose import (
    TOOL_CHOICES,
    TOOL_TAG,
    ComposableTool,
    MetaFields,
    call_tag,
    for_grammar,
    names_tool,
    offered_names,
    resolve_activity,
)
from toolbind._compose import compose as compose_schema

from ._meta import call_schemas, refused_meta
from ._salvage import CONTROL_NOTE, cut_off_calls, lenient_json
from .errors import FEEDBACK_HEADER, MAX_FEEDBACK_LINE_CHARS, MAX_FEEDBACK_LINES, ModelFeedback
from .types import Nothing, NotNull, ToolResponse, ToolTag

__all__ = ["Composition", "compose"]

OutputSpec = Any
"""A pydantic model, any type pydantic validates (``str``, ``list[int]``), a JSON Schema, or None."""


class Composition(dict[str, Any]):
    """The composed schema (a plain dict, exactly the seeds' JSON) that also knows its Response.

    What ``compose`` returns: ``compose`` is the verb (tools and an output in), ``Composition``
    its result (the schema the LLM fills, its Response model and the names the model saw).

    Attributes:
        tools: the tools, in the order the LLM sees them.
        activities: each tool's resolved ``_activity`` (``''`` for latent).
        shown: tool name → the ``_tool`` value the model is offered instead, for each tool offered
            by another name (the spec's own where the package qualified it: ``offered_names``);
            the Agent's transcript and the feedback to the model use these names.
        tag: the key each call names its tool under in what the model is sent (``_tool``, the
            seeds', unless another was asked for: ``compose(tag=...)``); the Response reads it
            back as ``_tool``, so the Calls are the same.
    """

    def __init__(
        self,
        schema: dict[str, Any],
        tools: list[ComposableTool],
        output: OutputSpec,
        activities: Collection[str],
        response_name: str,
        max_calls: int | None = None,
        tool_choice: str = "auto",
        instances: tuple[str, ...] = (),
        tag: str = TOOL_TAG,
    ) -> None:
        super().__init__(schema)
        self.tag = tag
        self.instances = instances
        self.tool_choice = tool_choice
        self.tools = tools
        self.output = output
        self.activities = {t.name: resolve_activity(t, activities) for t in tools}
        self.shown = {n: o for n, o in offered_names(tools).items() if o != n}
        self.max_calls = max_calls
        self._response_name = response_name
        self._response: type[ToolResponse[Any, Any]] | None = None

    @property
    def schema(self) -> dict[str, Any]:
        """The composed JSON Schema as a plain dict (a copy)."""
        return dict(self)

    @property
    def response(self) -> type[ToolResponse[Any, Any]]:
        """The pydantic Response model matching this schema (built on first use).

        Raises:
            TypeError: a tool has no Call model (only ``ToolBinding``s and registered tools do).
        """
        if self._response is None:
            latent = frozenset(n for n, a in self.activities.items() if not a)
            aliases = {o: n for n, o in self.shown.items()}
            self._response = response_model(
                self.tools,
                self.output,
                latent=latent,
                schema=dict(self),
                name=self._response_name,
                activities=self.activities,
                max_calls=self.max_calls,
                tool_choice=self.tool_choice,
                aliases=aliases,
                instances=self.instances,
                tag=self.tag,
            )
        return self._response


def compose(
    tools: Iterable[ComposableTool],
    output: OutputSpec = None,
    *,
    activities: Collection[str] = (),
    response_name: str = "Response",
    max_calls: int | None = None,
    tool_choice: str = "auto",
    meta_fields: MetaFields = "all",
    instances: Sequence[str] = (),
    tag: str = TOOL_TAG,
) -> Composition:
    """Compose tools (and an output schema) for the LLM, as the seeds specify.

    Args:
        tools: the tools offered (``ToolBinding``s, a ``ToolRegistry``, a package's ``TOOLS``).
        output: the final output: a pydantic model, any type pydantic validates (``str``,
            ``list[int]``, a TypedDict), a JSON Schema dict, or None for free text.
        activities: names of registered Activities (zero-config matching: explicit
            ``_activity`` > same-name Activity > latent ``''``).
        response_name: the Response model's class name (the function name the LLM calls).
        max_calls: the most calls one answer may hold (None: no limit); a longer ``calls`` is
            refused before its items are validated, like any invalid answer.
        tool_choice: ``auto``; ``required`` (at least one call, ``output`` null); ``none`` (no
            call, the output); or a tool's name (only that tool is offered, and called). The
            schema says so and the Response model holds the answer to it.
        meta_fields: ``all`` (the seeds' composition: ``_tool``, ``_activity``,
            ``_reasoningForCall``, ``_output`` for latent tools) or ``needed`` (``_tool`` and a
            latent tool's ``_output``; the answer is read the same way).
        instances: the instance ids of a multi-instance context (related/013): each tool
            takes an optional ``_instance`` of these, and its Call model a typed ``instance``.
        tag: the key each call names its tool under in the schema the model fills: ``_tool``
            (the seeds' wire format) or a name a model reads better (``ModelSettings(call_tag=...)``);
            where an offered tool takes a parameter of that name, ``tag + "_name"``, else
            ``_tool`` (``Composition.tag`` says which). The Response reads it back as ``_tool``.

    Returns:
        The composed schema (a dict equal to the seeds' JSON) with ``.response``, the pydantic
        Response type that validates what the LLM fills.
    """
    tool_list = list(tools)
    schema = compose_schema(
        tool_list,
        output,
        activities=activities,
        tool_choice=tool_choice,
        meta_fields=meta_fields,
        instances=instances,
        tag=tag,
    )
    offered = [t for t in tool_list if tool_choice in TOOL_CHOICES or names_tool(t, tool_choice)]
    return Composition(
        schema,
        offered,
        output,
        activities,
        response_name,
        max_calls,
        tool_choice,
        tuple(instances),
        call_tag(offered, tag, instances),
    )


def _output_type(output: OutputSpec) -> Any:
    if output is None:
        return str
    if isinstance(output, Mapping):
        # a raw JSON Schema: compiled to the same faithful model a generated one would be
        from ._compiler import model_from_schema

        return model_from_schema(dict(cast("Mapping[str, Any]", output)), name="Output")
    return output


def response_model(
    tools: Iterable[ComposableTool],
    output: OutputSpec,
    *,
    latent: Collection[str],
    schema: Mapping[str, Any],
    name: str = "Response",
    activities: Mapping[str, str] | None = None,
    max_calls: int | None = None,
    tool_choice: str = "auto",
    aliases: Mapping[str, str] | None = None,
    instances: Sequence[str] = (),
    tag: str = TOOL_TAG,
) -> type[ToolResponse[Any, Any]]:
    """The Response model over the tools' Call models (see the module docstring).

    ``aliases``: the ``_tool`` value the model was offered → the tool's name, where they differ
    (``offered_names``); a call naming the offered one is read as the tool's. ``tag``: the key
    the model was offered for ``_tool`` (``compose(tag=...)``): read back as ``_tool`` (a call
    that names its tool in ``_tool`` itself is read too: the Calls' own dump, a native answer).

    ``activities`` (tool → its resolved ``_activity``, as composed) makes a call's ``_activity``
    hold to the composed ``const``: a model cannot re-route a call by naming another Activity.
    ``max_calls`` bounds ``calls`` before any item is validated.
    """
    calls: list[type[BaseModel]] = []
    # each tool's parameter names, told to the model beside a field its tool does not take
    fields: dict[str, list[str]] = {}
    for tool in tools:
        props: Any = tool.parameters.get("properties")
        fields[tool.name] = list(cast("dict[str, Any]", props)) if isinstance(props, dict) else []
        found: Any = getattr(tool, "call_model", None)
        if not (isinstance(found, type) and issubclass(found, BaseModel)):
            raise TypeError(f"tool {tool.name!r} has no Call model (register it as a tool first)")
        if instances and "_instance" not in (getattr(tool, "extensions", None) or {}):
            found = with_instance(found, tuple(instances))
        calls.append(found)
    call_type: Any
    if not calls:
        call_type = Nothing
    elif len(calls) == 1:
        call_type = calls[0]
    else:
        call_type = Annotated[Union[tuple(calls)], Field(discriminator="tool"), ToolTag]  # noqa: UP007
    base: type[ToolResponse[Any, Any]] = ToolResponse[call_type, _output_type(output)]
    # A latent call may leave ``_output`` out: the composed schema makes it optional (the seeds'
    # rule), and the validator holds to the schema it sent — a grammar-constrained model follows
    # that schema exactly. Such a call's result is null (``Agent`` notes it in the metadata).
    del latent
    composed_activities = dict(activities or {})
    frozen_schema = dict(schema)
    renamed = dict(aliases or {})
    # the other way: what the model reads in feedback names each tool as it was offered
    offered_as = {n: o for o, n in renamed.items()}

    def check_meta_fields(self: Any) -> Any:
        problems: list[str] = []
        for index, call in enumerate(cast("list[Any]", self.calls)):
            tool = getattr(call, "tool", None)
            shown = _short(offered_as.get(tool, tool) if isinstance(tool, str) else tool)
            expected = composed_activities.get(tool) if isinstance(tool, str) else None
            given = _meta_value(call, "_activity")
            if expected is not None and given is not None and given != expected:
                problems.append(
                    f"- calls[{index}] (tool {shown}) field _activity: must be "
                    f"{offered_as.get(expected, expected)!r} or left out, found "
                    f"{_short(offered_as.get(given, given) if isinstance(given, str) else given)}"
                    " (keyword: const)"
                )
        count = len(cast("list[Any]", self.calls))
        if tool_choice == "none" and count:
            problems.append(
                f"- field calls: {count} calls, none allowed this step (keyword: maxItems)"
            )
        elif tool_choice not in ("auto", "none") and not count:
            problems.append(
                "- field calls: no call; this step needs at least one"
                + (f" (of {tool_choice})" if tool_choice != "required" else "")
                + " (keyword: minItems)"
            )
        if tool_choice == "none" and self.output is None:
            problems.append("- field output: required this step, no calls allowed (keyword: type)")
        if tool_choice not in ("auto", "none") and self.output is not None:
            problems.append("- field output: must be null while calls are required (keyword: type)")
        if problems:
            raise ModelFeedback(problems)
        return self

    sent = for_grammar(frozen_schema)
    by_tool = call_schemas(frozen_schema, tag)

    def model_json_schema(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        # what instructor sends as the function's parameters: the composed schema, written so a
        # grammar builder reads it (``for_grammar``: the same answers valid)
        return {"title": name, **sent}

    def explain(cls: Any, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        raw_calls: Any = (
            cast("dict[str, Any]", data).get("calls") if isinstance(data, dict) else None
        )
        if max_calls is not None and isinstance(raw_calls, list):
            count = len(cast("list[Any]", raw_calls))
            if count > max_calls:  # refused before validating (and later running) every item
                raise ModelFeedback(
                    [
                        f"- field calls: {count} calls, at most {max_calls} per answer "
                        "(keyword: maxItems)"
                    ]
                )
        unoffered = _unoffered_meta(by_tool, raw_calls, tag, renamed)
        if (renamed or tag != TOOL_TAG) and isinstance(raw_calls, list):
            data = {
                **cast("dict[str, Any]", data),
                "calls": [
                    _renamed(c, renamed, tag, i) for i, c in enumerate(cast("list[Any]", raw_calls))
                ],
            }
        extra = _extra_output_keys(frozen_schema, data)
        if extra:
            # the composed schema closes an object output (additionalProperties: false); pydantic
            # models ignore extra keys by default, so the validator says what the schema says
            raise ModelFeedback(
                [
                    f"- field output: unexpected key {_short(key)}; the output takes "
                    f"{', '.join(extra[key]) or 'no keys'} (keyword: additionalProperties)"
                    for key in list(extra)[:MAX_FEEDBACK_LINES]
                ]
            )
        not_json = _non_finite(data)
        if not_json:
            raise ModelFeedback(
                [
                    f"- field {_path(loc)}: NaN and Infinity are not JSON numbers (keyword: type)"
                    for loc in not_json
                ]
            )
        try:
            made = handler(data)
        except ValidationError as exc:
            errors = exc.errors()
            # feedback our own validators raised is kept by pydantic as the typed value itself
            own = [e.get("ctx", {}).get("error") for e in errors]
            if own and all(isinstance(e, ModelFeedback) for e in own):
                raise cast("ModelFeedback", own[0]) from None
            raise feedback_for(
                [*unoffered, *errors], data, fields, offered_as, tag, brief=True
            ) from None
        if unoffered:
            raise feedback_for(unoffered, data, fields, offered_as, tag, brief=True)
        return made

    validators: dict[str, Any] = {
        "check_meta_fields": model_validator(mode="after")(check_meta_fields),
        "explain_errors": model_validator(mode="wrap")(explain),
    }
    model: type[ToolResponse[Any, Any]] = create_model(
        name,
        __base__=base,
        __validators__=validators,
        __doc__=(
            "Answer with `calls` (tools to run now) and/or `output` (the final answer, or null "
            "while you still need tool results)."
        ),
    )
    model.model_json_schema = classmethod(model_json_schema)  # type: ignore[method-assign, assignment]
    return model


def read_answer(text: str) -> tuple[Any, str | None]:
    """A composed answer's arguments as data, and a note when it was not strict JSON but could
    still be read as meant (``salvage``).

    Raises:
        ValueError: ``text`` is not JSON (or nests too deep to read), nor what ``salvage`` reads.
    """
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        salvaged = salvage(text)
        if salvaged is None:
            raise ValueError(str(exc)) from None
        return salvaged


def salvage(text: str) -> tuple[Any, str] | None:
    """What ``_salvage`` reads of a composed answer that is not strict JSON — raw control
    characters inside strings, or an answer cut off inside ``calls`` (its complete calls; no
    ``output``: it comes after them) — and the note saying so; None for anything else (strict
    JSON included: nothing to read differently; a text nested too deep to read at all)."""
    try:
        try:
            json.loads(text)
        except ValueError:
            pass
        else:
            return None
        try:
            return lenient_json(text), CONTROL_NOTE
        except ValueError:
            pass
        salvaged = cut_off_calls(text)
    except RecursionError:  # a hostile answer: left to the validator, which refuses it
        return None
    if salvaged is None:
        return None
    data, said = salvaged
    return {"output": None, **data}, said


_MAX_NAME_CHARS = 64
_INSTANCED: dict[tuple[type[BaseModel], tuple[str, ...]], type[BaseModel]] = {}


def with_instance(call_model: type[BaseModel], instances: tuple[str, ...]) -> type[BaseModel]:
    """``call_model`` with an optional ``instance`` field (JSON ``_instance``), one of
    ``instances`` (related/013): the Call model of a tool offered in a multi-instance context."""
    key = (call_model, instances)
    found = _INSTANCED.get(key)
    if found is None:
        if len(_INSTANCED) >= 256:
            _INSTANCED.clear()
        annotation: Any = Annotated[Literal[instances] | None, NotNull]  # type: ignore[valid-type]
        found = create_model(
            call_model.__name__,
            __base__=call_model,
            __module__=call_model.__module__,
            instance=(annotation, Field(default=None, alias="_instance")),
        )
        _INSTANCED[key] = found
    return found


def _unoffered_meta(
    by_tool: Mapping[str, Mapping[str, Any]], raw: Any, tag: str, renamed: Mapping[str, str]
) -> list[ErrorDetails]:
    """The meta fields the calls (``raw``, as the model sent them) give that their composed
    schemas refuse (the rule of ``_meta``: a closed schema refuses ``_output`` on a tool an
    Activity runs as it refuses any other undeclared key), as pydantic's own errors at the place pydantic puts
    them (the tool's name in the place only when the calls are a union), so they are told in
    the same words."""
    union = len(by_tool) > 1
    errors: list[ErrorDetails] = []
    for index, call in enumerate(cast("list[Any]", raw) if isinstance(raw, list) else []):
        if not isinstance(call, dict):
            continue
        given = cast("dict[str, Any]", call)
        tool: Any = given.get(tag, given.get(TOOL_TAG))
        schema = by_tool.get(tool) if isinstance(tool, str) else None
        if schema is None:
            continue
        for key, message, keyword in refused_meta(schema, given, tag=tag):
            if keyword != "additionalProperties":  # (a wrong const: ``check_meta_fields``)
                continue
            name = renamed.get(tool, tool)
            loc = ("calls", index, name, key) if union else ("calls", index, key)
            errors.append(
                {"type": "extra_forbidden", "loc": loc, "msg": message, "input": given[key]}
            )
    return errors


def _extra_output_keys(schema: Mapping[str, Any], data: Any) -> dict[str, list[str]]:
    """The keys of ``data["output"]`` a closed object output (as composed) does not take, each
    with the keys it does take."""
    props: Any = schema.get("properties")
    out_schema: Any = (
        cast("dict[str, Any]", props).get("output") if isinstance(props, dict) else None
    )
    if not isinstance(out_schema, dict) or not isinstance(data, dict):
        return {}
    closed = cast("dict[str, Any]", out_schema)
    known: Any = closed.get("properties")
    given: Any = cast("dict[str, Any]", data).get("output")
    if closed.get("additionalProperties") is not False or closed.get("patternProperties"):
        return {}
    if not isinstance(known, dict) or not isinstance(given, dict):
        return {}
    names = list(cast("dict[str, Any]", known))
    return {k: names for k in cast("dict[str, Any]", given) if k not in names}


def _renamed(call: Any, aliases: Mapping[str, str], tag: str = TOOL_TAG, index: int = 0) -> Any:
    """``call`` with its ``tag`` read back as ``_tool`` (first, where the Calls' dumps have it),
    and its ``_tool`` (and a same-name ``_activity``) from the offered name to the tool's own."""
    if not isinstance(call, dict):
        return call
    fields = cast("dict[str, Any]", call)
    if tag != TOOL_TAG and tag in fields:
        if TOOL_TAG in fields:  # not in the schema sent: which of the two names the tool?
            raise ModelFeedback(
                [
                    f"- calls[{index}] field {TOOL_TAG}: unexpected; name the tool in {tag} only "
                    "(keyword: required)"
                ]
            )
        fields = {TOOL_TAG: fields[tag], **{k: v for k, v in fields.items() if k != tag}}
    out = fields
    for meta in ("_tool", "_activity"):  # a same-name Activity was shown by the offered name
        value = fields.get(meta)
        if isinstance(value, str) and value in aliases:
            out = {**out, meta: aliases[value]}
    return out


def _short(value: Any) -> str:
    """``repr(value)``, cut to ``_MAX_NAME_CHARS``."""
    text = repr(value)
    if len(text) <= _MAX_NAME_CHARS:
        return text
    return f"{text[: _MAX_NAME_CHARS - 1]}… ({len(text)} characters)"


def _non_finite(data: Any) -> list[list[Any]]:
    """Where ``data`` holds NaN or ±Infinity (Python's JSON readers accept them; JSON has no such
    numbers, and a field typed by an untyped schema would keep them), at most ``MAX_FEEDBACK_LINES + 1``."""
    found: list[list[Any]] = []
    stack: list[tuple[list[Any], Any]] = [([], data)]
    while stack and len(found) <= MAX_FEEDBACK_LINES:
        loc, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                found.append(loc)
        elif isinstance(value, dict):
            items = cast("dict[Any, Any]", value).items()
            stack.extend(([*loc, k], v) for k, v in reversed(list(items)))
        elif isinstance(value, list):
            values = cast("list[Any]", value)
            stack.extend(([*loc, i], v) for i, v in reversed(list(enumerate(values))))
    return found


def _meta_value(call: Any, alias: str) -> Any:
    """The value of the Call field whose JSON name is ``alias`` (``_activity``), or None."""
    fields: Any = getattr(call.__class__, "model_fields", {})
    for name, info in cast("dict[str, Any]", fields).items():
        if getattr(info, "alias", None) == alias:
            return getattr(call, name, None)
    return None


# pydantic error type → the JSON Schema keyword the value broke (what the model can act on)
_KEYWORDS = {
    "missing": "required",
    "extra_forbidden": "additionalProperties",
    "literal_error": "const/enum",
    "enum": "enum",
    "union_tag_invalid": "_tool (no such tool)",
    "union_tag_not_found": "_tool (missing)",
    "string_too_short": "minLength",
    "string_too_long": "maxLength",
    "string_pattern_mismatch": "pattern",
    "greater_than_equal": "minimum",
    "greater_than": "exclusiveMinimum",
    "less_than_equal": "maximum",
    "less_than": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "too_short": "minItems/minProperties",
    "too_long": "maxItems/maxProperties",
}
_SCHEMA_KEYWORDS = (
    "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "uniqueItems", "allOf",
    "oneOf", "dependentRequired", "propertyNames", "multipleOf", "contains", "pattern",
)  # fmt: skip


# what the faithful validators of ``types`` say → the keyword they enforce
_PHRASES = (
    ("does not match pattern", "pattern"),
    ("not one of the allowed", "enum/const"),
    ("null is not allowed", "type"),
    ("the schema is false", "false schema"),
    ("additional property", "additionalProperties"),
    ("not a multiple of", "multipleOf"),
    ("does not match its schema", "prefixItems/items"),
)


def _keyword(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind.startswith("union_tag_") and "'_tool'" not in str(
        error.get("ctx", {}).get("discriminator")
    ):
        # a oneOf/anyOf of classes told apart by a required const/enum property (the compiler
        # makes it a tagged union): the tag is missing, or none of the variants' values
        return "required" if kind == "union_tag_not_found" else "const/enum"
    if kind in _KEYWORDS:
        return _KEYWORDS[kind]
    if kind.endswith("_type") or kind in ("model_attributes_type", "is_instance_of"):
        return "type"
    message = error["msg"]
    for keyword in _SCHEMA_KEYWORDS:
        if f"({keyword})" in message or f"'{keyword}'" in message:
            return keyword
    for phrase, keyword in _PHRASES:
        if phrase in message:
            return keyword
    return kind


def explain_errors(errors: list[ErrorDetails], data: Any) -> str:
    """The text of ``feedback_for(errors, data)``: what the model reads."""
    return feedback_for(errors, data).render()


def feedback_for(
    errors: list[ErrorDetails],
    data: Any,
    fields: Mapping[str, list[str]] | None = None,
    offered_as: Mapping[str, str] | None = None,
    tag: str = TOOL_TAG,
    *,
    brief: bool = False,
) -> ModelFeedback:
    """One line per error: which call (and tool), which field, what was wrong, which keyword.

    ``fields`` (tool → its parameter names): a field the tool does not take is told beside the
    ones it does, so the model can move the value where it belongs. ``offered_as`` (tool → the
    ``_tool`` value the model was offered, where they differ): the lines name tools so. ``tag``:
    the key the model was offered for ``_tool``: the lines name it so (``data`` is read after
    the tag was read back as ``_tool``). ``brief`` (the model's retry): a line also says the
    value given, when that is a plain value (an object or array is found by the location), and
    names no Python class (``or instance of WeatherCheckOutput``: the model writes JSON)."""
    shown = dict(offered_as or {})
    plain: dict[str, Any] = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    raw_calls: Any = plain.get("calls")
    calls: list[Any] = cast("list[Any]", raw_calls) if isinstance(raw_calls, list) else []
    lines: list[str] = []
    for error in errors[:MAX_FEEDBACK_LINES]:  # the rest are only counted
        loc = list(error["loc"])
        where: str
        if len(loc) >= 2 and loc[0] == "calls" and isinstance(loc[1], int):
            index = loc[1]
            rest = loc[2:]
            item: Any = calls[index] if index < len(calls) else None
            tool: Any = (
                cast("dict[str, Any]", item).get("_tool") if isinstance(item, dict) else None
            )
            if rest and isinstance(tool, str) and rest[0] == tool:
                rest = rest[1:]
            where = (
                f"calls[{index}] (tool {_short(shown.get(tool, tool))})"
                if isinstance(tool, str)
                else f"calls[{index}]"
            )
            if rest:
                where += " field " + _path([tag if p == TOOL_TAG else p for p in rest])
        elif loc:
            where = "field " + _path(loc)
        else:
            where = "response"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden" and fields is not None and len(loc) == 4:
            named: Any = loc[2]
            takes = fields.get(named) if isinstance(named, str) else None
            if takes is not None:
                message += f"; {shown.get(named, named)} takes " + (
                    ", ".join(takes) if takes else "no parameters"
                )
        elif error["type"] == "union_tag_invalid":
            for name, offered in shown.items():  # the expected tags, as the model was offered them
                message = message.replace(repr(name), repr(offered))
        keyword = _keyword(error)
        if tag != TOOL_TAG:  # the tag as the model was offered it
            # pydantic names the discriminator's Python-name fallback too: not the model's
            message = message.replace(f"{TOOL_TAG!r} | 'tool'", repr(TOOL_TAG))
            message = message.replace(repr(TOOL_TAG), repr(tag))
            keyword = keyword.replace(TOOL_TAG, tag)
        given: Any = error.get("input")
        if brief:
            message = _CLASS_NAMED.sub("", message)
            if error["type"] not in _NOT_GIVEN and isinstance(given, _PLAIN):
                message += f", found {_short(given)}"
        if len(message) > MAX_FEEDBACK_LINE_CHARS:
            message = message[: MAX_FEEDBACK_LINE_CHARS - 1] + "…"
        lines.append(f"- {where}: {message} (keyword: {keyword})")
    return ModelFeedback(lines, len(errors))


_PLAIN = (str, int, float, bool, type(None))
# errors whose input is not the value at their location (a missing field's input is its object)
# or whose message names it already (the tag found), or the model's whole text (invalid JSON)
_NOT_GIVEN = frozenset({"missing", "union_tag_invalid", "union_tag_not_found", "json_invalid"})
_CLASS_NAMED = re.compile(r" or instance of \w+")


def retry_feedback(exc: BaseException) -> str:
    """What the model reads of an invalid answer it is asked to fix: one line per problem — its
    location, the message, the value given, the keyword — never pydantic's own rendering of a
    ``ValidationError`` (its error count, type names, input dump and documentation URL cost
    tokens and teach the model nothing)."""
    if isinstance(exc, ModelFeedback):
        return exc.render()
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        own = [e.get("ctx", {}).get("error") for e in errors]
        if own and all(isinstance(e, ModelFeedback) for e in own):
            return cast("ModelFeedback", own[0]).render()
        return feedback_for(errors, None, brief=True).render()
    return FEEDBACK_HEADER + f"- response: {exc}"


def _path(parts: list[Any]) -> str:
    text = ".".join(str(p) for p in parts)
    return text if len(text) <= _MAX_NAME_CHARS else f"{text[: _MAX_NAME_CHARS - 1]}…"
