"""Runtime layer: ``compose`` — the composed ``{output, calls}`` schema and its Response type.

Imports ``_compose`` (the seeds' composition rules), ``_binding``, ``types`` and pydantic.

The Response type is a ``ToolResponse`` over the discriminated union (on ``_tool``) of the tools'
Call models, ``output`` typed by the output model (or ``str``). It validates what the LLM sent and
additionally requires ``_output`` on every call of a latent tool (the LLM is the executor, so the
output is part of its answer). Its JSON Schema, the one sent to the LLM, is exactly the composed
schema.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Annotated, Any, Union, cast

from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import ErrorDetails

from ._compose import ComposableTool, resolve_activity
from ._compose import compose as compose_schema
from .types import Nothing, ToolResponse

__all__ = ["Composition", "compose"]

OutputSpec = type[BaseModel] | Mapping[str, Any] | None


class Composition(dict[str, Any]):
    """The composed schema (a plain dict, exactly the seeds' JSON) that also knows its Response.

    Attributes:
        tools: the tools, in the order the LLM sees them.
        activities: each tool's resolved ``_activity`` (``''`` for latent).
    """

    def __init__(
        self,
        schema: dict[str, Any],
        tools: list[ComposableTool],
        output: OutputSpec,
        activities: Collection[str],
        response_name: str,
    ) -> None:
        super().__init__(schema)
        self.tools = tools
        self.output = output
        self.activities = {t.name: resolve_activity(t, activities) for t in tools}
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
            self._response = response_model(
                self.tools, self.output, latent=latent, schema=dict(self), name=self._response_name
            )
        return self._response


def compose(
    tools: Iterable[ComposableTool],
    output: OutputSpec = None,
    *,
    activities: Collection[str] = (),
    response_name: str = "Response",
) -> Composition:
    """Compose tools (and an output schema) for the LLM, as the seeds specify.

    Args:
        tools: the tools offered (``ToolBinding``s, a ``ToolRegistry``, a package's ``TOOLS``).
        output: the final output: a pydantic model, a JSON Schema dict, or None for free text.
        activities: names of registered Activities (zero-config matching: explicit
            ``_activity`` > same-name Activity > latent ``''``).
        response_name: the Response model's class name (the function name the LLM calls).

    Returns:
        The composed schema (a dict equal to the seeds' JSON) with ``.response``, the pydantic
        Response type that validates what the LLM fills.
    """
    tool_list = list(tools)
    schema = compose_schema(tool_list, output, activities=activities)
    return Composition(schema, tool_list, output, activities, response_name)


def _output_type(output: OutputSpec) -> Any:
    if output is None:
        return str
    if isinstance(output, Mapping):
        # a raw JSON Schema: compiled to the same faithful model a generated one would be (the
        # compiler is imported here only, when an output is given as a dict)
        from toolbind.compiler import model_from_schema

        return model_from_schema(dict(output), name="Output")
    return output


def response_model(
    tools: Iterable[ComposableTool],
    output: OutputSpec,
    *,
    latent: Collection[str],
    schema: Mapping[str, Any],
    name: str = "Response",
) -> type[ToolResponse[Any, Any]]:
    """The Response model over the tools' Call models (see the module docstring)."""
    calls: list[type[BaseModel]] = []
    for tool in tools:
        found: Any = getattr(tool, "call_model", None)
        if not (isinstance(found, type) and issubclass(found, BaseModel)):
            raise TypeError(f"tool {tool.name!r} has no Call model (register it as a tool first)")
        calls.append(found)
    call_type: Any
    if not calls:
        call_type = Nothing
    elif len(calls) == 1:
        call_type = calls[0]
    else:
        call_type = Annotated[Union[tuple(calls)], Field(discriminator="tool")]  # noqa: UP007
    base: type[ToolResponse[Any, Any]] = ToolResponse[call_type, _output_type(output)]
    latent_names = frozenset(latent)
    frozen_schema = dict(schema)

    def require_latent_output(self: Any) -> Any:
        problems: list[str] = []
        for index, call in enumerate(cast("list[Any]", self.calls)):
            tool = getattr(call, "tool", None)
            if tool in latent_names and getattr(call, "output", None) is None:
                problems.append(
                    f"- calls[{index}] (tool {tool!r}) field _output: missing — {tool} has no "
                    "Activity, so you produce its output yourself (keyword: required)"
                )
        if problems:
            raise ValueError(_HEADER + "\n".join(problems))
        return self

    def model_json_schema(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        # what instructor sends as the function's parameters: exactly the composed schema
        return {"title": name, **frozen_schema}

    def explain(cls: Any, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            errors = exc.errors()
            own = [e for e in errors if _HEADER in e["msg"]]
            if own and len(own) == len(errors):
                raise ValueError(own[0]["msg"].removeprefix("Value error, ")) from None
            raise ValueError(explain_errors(errors, data)) from None

    validators: dict[str, Any] = {
        "require_latent_output": model_validator(mode="after")(require_latent_output),
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


_HEADER = "Invalid response (fix each and answer again):\n"

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
    """One line per error: which call (and tool), which field, what was wrong, which keyword."""
    plain: dict[str, Any] = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    raw_calls: Any = plain.get("calls")
    calls: list[Any] = cast("list[Any]", raw_calls) if isinstance(raw_calls, list) else []
    lines: list[str] = []
    for error in errors:
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
                f"calls[{index}] (tool {tool!r})" if isinstance(tool, str) else f"calls[{index}]"
            )
            if rest:
                where += " field " + ".".join(str(p) for p in rest)
        elif loc:
            where = "field " + ".".join(str(p) for p in loc)
        else:
            where = "response"
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"- {where}: {message} (keyword: {_keyword(error)})")
    return _HEADER + "\n".join(lines)
