"""Testing layer: a broken contract, told readably. Imports pydantic, jsonschema, the stdlib and
``toolbind.runtime.errors`` (the root of the error tree).

``ContractViolation`` carries the minimal counterexample and where it fails: the JSON pointer
into the instance and the JSON Schema keyword involved, taken from the reference validator's
error when it has one, else read off pydantic's error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

import jsonschema.exceptions
import jsonschema.protocols
from pydantic import ValidationError

from toolbind.runtime.errors import ToolbindError

from ._contract import pointer

_ABSENT: Any = object()


class ContractViolation(ToolbindError, AssertionError):
    """A model, or an Activity, breaks the contract its tool's schema states.

    Attributes:
        subject: what broke it (``greetUser Call (GreetUserCall)``, ``greetUser Activity greet_user``).
        problem: what went wrong, in one sentence.
        instance: the minimal counterexample (the JSON value given to the model, or the Call
            given to the Activity, as JSON).
        returned: what the Activity returned, as JSON (absent for model checks).
        pointer: RFC 6901 pointer to the failing value (in ``returned`` when there is one).
        keyword: the JSON Schema keyword involved (``type``, ``required``, ``maximum``, …).
        detail: the validator's own message.
        schema_path: where in the schema the keyword is, when the reference validator says.
        check: which property broke: ``round-trip``, ``rejects invalid`` or ``activity``.
    """

    def __init__(
        self,
        subject: str,
        problem: str,
        *,
        instance: Any = _ABSENT,
        returned: Any = _ABSENT,
        pointer: str | None = None,
        keyword: str | None = None,
        detail: str | None = None,
        schema_path: str | None = None,
        check: str = "",
    ) -> None:
        self.check = check
        self.subject = subject
        self.problem = problem
        self.instance = instance
        self.returned = returned
        self.pointer = pointer
        self.keyword = keyword
        self.detail = detail
        self.schema_path = schema_path
        super().__init__(self.render())

    def __reduce__(self) -> tuple[Any, ...]:
        # (keyword-only arguments: the default pickling would call the class with ``args``);
        # a check run in another process (``toolbind test --jobs``) sends its failure back
        return (_rebuild_violation, (self.subject, self.problem, self._fields()))

    def _fields(self) -> dict[str, Any]:
        fields = {
            "pointer": self.pointer,
            "keyword": self.keyword,
            "detail": self.detail,
            "schema_path": self.schema_path,
            "check": self.check,
        }
        if self.has_instance:
            fields["instance"] = self.instance
        if self.has_returned:
            fields["returned"] = self.returned
        return fields

    @property
    def has_instance(self) -> bool:
        return self.instance is not _ABSENT

    @property
    def has_returned(self) -> bool:
        return self.returned is not _ABSENT

    def render(self) -> str:
        """The readable block: subject and problem, counterexample, pointer and keyword."""
        lines = [f"{self.subject}: {self.problem}"]
        if self.has_instance:
            lines.append(f"  counterexample: {show(self.instance)}")
        if self.has_returned:
            lines.append(f"  returned:       {show(self.returned)}")
        if self.pointer is not None or self.keyword is not None:
            where = f"at {self.pointer or '/'} (the {'returned value' if self.has_returned else 'instance'})"
            keyword = f" — schema keyword `{self.keyword}`" if self.keyword else ""
            at_schema = f" at #{self.schema_path}" if self.schema_path else ""
            lines.append(f"  {where}{keyword}{at_schema}")
        if self.detail:
            lines.append(f"  {self.detail}")
        return "\n".join(lines)


def _rebuild_violation(subject: str, problem: str, fields: dict[str, Any]) -> ContractViolation:
    return ContractViolation(subject, problem, **fields)


def show(value: Any, limit: int = 2000) -> str:
    """Compact JSON for a report (truncated past ``limit`` characters)."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def schema_error(
    validator: jsonschema.protocols.Validator, instance: Any
) -> jsonschema.exceptions.ValidationError | None:
    """The reference validator's most relevant error for ``instance``, or None when valid."""
    best_match: Callable[..., Any] = jsonschema.exceptions.best_match  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return cast(
        "jsonschema.exceptions.ValidationError | None", best_match(validator.iter_errors(instance))
    )


def from_schema_error(err: jsonschema.exceptions.ValidationError) -> dict[str, Any]:
    """``pointer``/``keyword``/``detail``/``schema_path`` keyword arguments from a jsonschema error."""
    return {
        "pointer": pointer(err.absolute_path),
        "keyword": str(err.validator),
        "detail": err.message,
        "schema_path": pointer(err.absolute_schema_path),
    }


_TYPE_ERRORS = re.compile(r"_type$|^none_required$|^is_instance_of$|^int_from_float$")
_KEYWORDS = {
    "missing": "required",
    "extra_forbidden": "additionalProperties",
    "string_too_short": "minLength",
    "string_too_long": "maxLength",
    "greater_than_equal": "minimum",
    "greater_than": "exclusiveMinimum",
    "less_than_equal": "maximum",
    "less_than": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "string_pattern_mismatch": "pattern",
    "union_tag_invalid": "const",
    "union_tag_not_found": "required",  # the tag property of a oneOf/anyOf of classes
}
# Messages of toolbind.runtime.types' validators → the keyword each enforces.
_MESSAGE_KEYWORDS = [
    (re.compile(r"\((\w+)\)"), None),
    (re.compile(r"null is not allowed|a boolean is not|a number is not"), "type"),
    (re.compile(r"allowed values"), "enum"),
    (re.compile(r"does not match pattern"), "pattern"),
    (re.compile(r"allOf"), "allOf"),
    (re.compile(r"oneOf"), "oneOf"),
    (re.compile(r"anyOf"), "anyOf"),
    (re.compile(r"'not'"), "not"),
    (re.compile(r"'then'"), "then"),
    (re.compile(r"'else'"), "else"),
    (re.compile(r"'contains'"), "contains"),
    (re.compile(r"dependent schema"), "dependentSchemas"),
    (re.compile(r"propertyNames"), "propertyNames"),
    (re.compile(r"additional property"), "additionalProperties"),
    (re.compile(r"multiple of"), "multipleOf"),
    (re.compile(r"schema is false"), "false"),
    (re.compile(r"does not match its schema"), "items"),
]


def from_pydantic_error(exc: ValidationError, instance: Any) -> dict[str, Any]:
    """``pointer``/``keyword``/``detail`` keyword arguments from pydantic's first error."""
    errors = exc.errors(include_url=False)
    if not errors:  # pragma: no cover - pydantic always reports at least one
        return {"detail": str(exc)}
    first = errors[0]
    path = _json_path(instance, first["loc"])
    value = _at(instance, path)
    return {
        "pointer": pointer(path),
        "keyword": _keyword(first["type"], first["msg"], value),
        "detail": f"{first['msg']} (pydantic: {first['type']})",
    }


def _keyword(kind: str, message: str, value: Any) -> str | None:
    if _TYPE_ERRORS.search(kind) or kind in ("model_type", "dict_type", "list_type"):
        return "type"
    if kind in _KEYWORDS:
        return _KEYWORDS[kind]
    if kind == "literal_error":
        return "enum" if " or " in message else "const"
    if kind in ("too_short", "too_long"):
        prefix = "min" if kind == "too_short" else "max"
        return prefix + ("Properties" if isinstance(value, dict) else "Items")
    for rx, keyword in _MESSAGE_KEYWORDS:
        found = rx.search(message)
        if found:
            return keyword or found.group(1)
    return None


def _json_path(instance: Any, loc: tuple[int | str, ...]) -> list[int | str]:
    """pydantic's ``loc`` without its union-member tags: the steps that exist in the instance."""
    path: list[int | str] = []
    here: Any = instance
    for i, step in enumerate(loc):
        if isinstance(here, dict) and isinstance(step, str) and step in here:
            here = cast("dict[str, Any]", here)[step]
            path.append(step)
        elif (
            isinstance(here, list)
            and isinstance(step, int)
            and 0 <= step < len(cast("list[Any]", here))
        ):
            here = cast("list[Any]", here)[step]
            path.append(step)
        elif isinstance(here, dict) and i == len(loc) - 1 and not _is_tag(str(step)):
            path.append(step)  # a missing key (``required``) is the last step of its loc
    return path


def _is_tag(step: str) -> bool:
    # union members appear in pydantic locs as type names: 'int', 'float', 'function-after[...]'
    return step in {"int", "float", "str", "bool", "list", "dict", "none"} or "[" in step


def _at(instance: Any, path: list[int | str]) -> Any:
    here = instance
    for step in path:
        try:
            here = here[step]
        except (KeyError, IndexError, TypeError):
            return None
    return here
