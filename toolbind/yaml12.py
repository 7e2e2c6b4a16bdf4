"""Kernel layer: reading YAML as YAML 1.2's core schema, for every YAML file toolbind reads (specs, credentials,
MCP configurations, saved Requests).

PyYAML implements YAML 1.1 only, whose plain scalars silently change real data: Norway's country
code NO and the word "on" become booleans, "010" the octal 8, a time "18:00" the sexagesimal
1080, while "1e3" stays text. OpenAPI recommends YAML 1.2. ruamel.yaml reads 1.2 but only in pure
Python, many times slower on a 3 MB spec; so PyYAML's (libyaml) parser is kept and only its tag
resolution replaced. ``YAML11_READ`` collects, while set, the plain values a YAML 1.1 reader would
read otherwise, for the compiler's located warning.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
import sys
from collections.abc import Generator
from typing import Any, cast

import yaml

try:  # the C loader is much faster on large specs; fall back when libyaml is missing
    _BaseLoader: type[Any] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader

# https://yaml.org/spec/1.2.2/#1032-tag-resolution
_YAML11_RESOLVERS: dict[str | None, list[tuple[str, re.Pattern[str]]]] = dict(
    yaml.resolver.Resolver.yaml_implicit_resolvers
)
_CORE_RESOLVERS: tuple[tuple[str, str, list[str]], ...] = (  # tag, pattern, first characters
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
)
YAML11_READ: contextvars.ContextVar[list[tuple[str, int, int]] | None] = contextvars.ContextVar(
    "toolbind_yaml11_read", default=None
)
"""Plain scalars whose YAML 1.1 reading differs from the 1.2 one read: (text, line, column)."""


@contextlib.contextmanager
def noting_yaml11() -> Generator[list[tuple[str, int, int]]]:
    """The plain values YAML 1.1 reads otherwise, of what is loaded in the block: (text, line,
    column), in the list yielded."""
    read: list[tuple[str, int, int]] = []
    token = YAML11_READ.set(read)
    try:
        yield read
    finally:
        YAML11_READ.reset(token)


def _yaml11_tag(text: str) -> str:
    for tag, pattern in _YAML11_RESOLVERS.get(text[:1] or "", []):
        if pattern.match(text):
            return tag
    return "tag:yaml.org,2002:str"


def _noted(node: Any, tag: str) -> None:
    """Note ``node`` when it is a plain scalar YAML 1.1 reads as another type (or, for an
    integer written with a leading zero, another number) than YAML 1.2's ``tag``."""
    if node.style not in (None, "") or (read := YAML11_READ.get()) is None:  # "": libyaml plain
        return
    text = str(node.value)
    old = _yaml11_tag(text)
    if old == "tag:yaml.org,2002:timestamp":  # dates: read as text or refused, as before
        return
    leading_zero = (
        tag.endswith(":int") and len(text.lstrip("+-")) > 1 and text.lstrip("+-")[0] == "0"
    )
    if old != tag or (leading_zero and not text.startswith("0o") and not text.startswith("0x")):
        read.append((text, node.start_mark.line + 1, node.start_mark.column + 1))


class YamlLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """PyYAML's safe loader (libyaml's parser when present) reading plain scalars as YAML 1.2's
    core schema does."""

    def construct_core_str(self, node: Any) -> str:
        value = str(self.construct_scalar(node))  # (refuses a tagged !!str mapping)
        # what YAML 1.1 reads as another type and starts with a letter is a boolean or null of
        # at most five letters: the many longer words (keys, names, prose) skip the check
        if len(value) <= 5 or not value[:1].isalpha():
            _noted(node, "tag:yaml.org,2002:str")
        return value

    def construct_core_int(self, node: Any) -> int:
        _noted(node, "tag:yaml.org,2002:int")
        text = str(self.construct_scalar(node))
        try:
            if text.startswith("0o"):
                return int(text[2:], 8)
            if text.startswith("0x"):
                return int(text[2:], 16)
            return int(text, 10)  # a leading zero is decimal in YAML 1.2 ("010" is ten)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"an integer of {len(text)} digits, more than {sys.get_int_max_str_digits()}",
                node.start_mark,
            ) from None

    def construct_core_float(self, node: Any) -> float:
        _noted(node, "tag:yaml.org,2002:float")
        text = str(self.construct_scalar(node)).lower()
        if text.endswith(".inf"):
            return -math.inf if text.startswith("-") else math.inf
        if text == ".nan":
            return math.nan
        return float(text)


YamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in _CORE_RESOLVERS:
    YamlLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)
for _first_char, _resolvers in _YAML11_RESOLVERS.items():  # kept from PyYAML: merge keys, dates
    for _tag, _rx in _resolvers:
        if _tag in ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:timestamp"):
            YamlLoader.yaml_implicit_resolvers.setdefault(_first_char, []).append((_tag, _rx))
YamlLoader.add_constructor("tag:yaml.org,2002:str", YamlLoader.construct_core_str)
YamlLoader.add_constructor("tag:yaml.org,2002:int", YamlLoader.construct_core_int)
YamlLoader.add_constructor("tag:yaml.org,2002:float", YamlLoader.construct_core_float)


class FloatKey(float):
    """A plain map key YAML reads as a float (Matrix's ``x-changedInMatrixVersion: {1.18: ...}``),
    with the text written (``1.10`` stays ``1.10``, where ``str(1.10)`` is ``1.1``): the compiler
    reads it as that text, with a warning, as it does an unquoted integer key."""

    __slots__ = ("text",)
    text: str


class TextDatesLoader(YamlLoader):  # type: ignore[misc,valid-type]
    """The same loader, reading unquoted dates and timestamps as the text written (YAML 1.2),
    and a plain map key YAML reads as a float as a ``FloatKey`` that keeps its text."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        for key_node, _ in node.value:
            if (
                isinstance(key_node, yaml.ScalarNode)
                and key_node.tag == "tag:yaml.org,2002:float"
                and key_node.style in (None, "")  # "": libyaml's plain
            ):
                key_node.tag = _FLOAT_KEY_TAG
        base: Any = super()
        return cast("dict[Any, Any]", base.construct_mapping(node, deep=deep))

    def construct_float_key(self, node: Any) -> float:
        value = self.construct_core_float(node)
        if not math.isfinite(value):  # .inf or .nan: no number a key means; refused as before
            return value
        key = FloatKey(value)
        key.text = str(node.value)
        return key


_FLOAT_KEY_TAG = "tag:toolbind,2026:float-key"
TextDatesLoader.add_constructor(_FLOAT_KEY_TAG, TextDatesLoader.construct_float_key)

TextDatesLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in YamlLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """``text`` parsed as YAML 1.2 (plain data only: a safe loader).

    Raises:
        yaml.YAMLError: the text is no well-formed YAML.
    """
    return yaml.load(text, Loader=YamlLoader)
