"""``pattern`` checked in pydantic-core where Rust's regex crate reads it as ECMA-262 does: the
same matches as the ``regex`` package's ECMA-262 reading, for every pattern of the subset and every
string (hypothesis), the same error, and the ECMA reading kept for everything outside it."""

from __future__ import annotations

from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from toolbind._ecma import compile_pattern, native_pattern
from toolbind.runtime.types import NativePattern, Pattern

NATIVE = [
    r"^(0|[1-9][0-9]*)$",  # Discord's snowflake ids
    r"^\d{3}-\d{4}$",
    r"^[A-Za-z0-9_-]{1,64}$",
    r"^(?:[a-z]+\.)*[a-z]+$",
    r"ab|cd",
    r"^[^/]+/[^/]+$",
    r"^\w+$",
    r"\$\{[A-Z_]+\}",
    r"^a+?b*?c??$",
    r"[\]\\\-^]",
]
NOT_NATIVE = [
    r"^.+$",  # ``.`` excludes \r, U+2028 and U+2029 in ECMA-262, only \n in Rust
    r"^\s+$",
    r"\bword\b",
    r"^(?=a)a$",
    r"^(a)\1$",
    r"^(?<y>\d+)$",
    r"^é+$",
    r"[a&&b]",  # an intersection in Rust, three literals in ECMA-262
    r"[+--]",  # a range in ECMA-262, a set difference in Rust
    r"[[a]]",
    r"^[\w-.]+$",  # Annex B: the "-" beside a class escape is a literal
    r"^a{,3}$",  # Annex B: a literal brace
    r"^a{1000}$",
    r"^[\D]$",
    r"^\p{L}+$",
]


@pytest.mark.parametrize("pattern", NATIVE)
def test_the_subset_is_checked_natively(pattern: str) -> None:
    assert native_pattern(pattern) is not None
    assert isinstance(Pattern(pattern), NativePattern)


@pytest.mark.parametrize("pattern", NOT_NATIVE)
def test_the_rest_keeps_the_ecma_reading(pattern: str) -> None:
    assert native_pattern(pattern) is None
    assert not isinstance(Pattern(pattern), NativePattern)


def test_the_error_is_the_python_checks() -> None:
    native = TypeAdapter(Annotated[str, Pattern(r"^(0|[1-9][0-9]*)$")])
    python = TypeAdapter(Annotated[str, Pattern(r"^(0|[1-9].*)$")])  # ``.``: not native
    errors: list[tuple[str, str]] = []
    for adapter in (native, python):
        with pytest.raises(ValidationError) as caught:
            adapter.validate_python("0123")
        (error,) = caught.value.errors()
        errors.append((error["type"], error["msg"].replace(".*", "[0-9]*")))
    assert errors[0] == errors[1]
    assert errors[0] == (
        "value_error",
        "Value error, string does not match pattern '^(0|[1-9][0-9]*)$'",
    )


def test_the_type_check_comes_first() -> None:
    class M(BaseModel):
        a: Annotated[str, Pattern(r"^\d+$")]

    with pytest.raises(ValidationError) as caught:
        M.model_validate({"a": 5})
    assert caught.value.errors()[0]["type"] == "string_type"
    assert M.model_validate_json('{"a": "12"}').a == "12"


# -- every pattern of the subset, every string: both readings agree -----------------------------

_LITERALS = st.sampled_from([*"ab0-9_/ ", r"\.", r"\-", r"\$", r"\(", r"\\", r"\/"])


def _class(negated: bool, members: list[str]) -> str:
    return "[" + ("^" if negated else "") + "".join(members) + "]"


def _quantified(atom: str, quantifier: str) -> str:
    return atom + quantifier


def _group(inner: str, quantifier: str, capturing: bool) -> str:
    return ("(" if capturing else "(?:") + inner + ")" + quantifier


def _anchored(start: bool, body: str, end: bool) -> str:
    return ("^" if start else "") + body + ("$" if end else "")


_CLASS = st.builds(
    _class,
    st.booleans(),
    st.lists(
        st.sampled_from(["a", "b", "0-9", "a-c", r"\d", r"\w", "_", r"\]", r"\\", r"\^"]),
        min_size=1,
        max_size=3,
    ),
)
_ATOM = st.one_of(_LITERALS, _CLASS, st.sampled_from([r"\d", r"\w", r"\D", r"\W"]))
_QUANT = st.sampled_from(["", "", "*", "+", "?", "*?", "{2}", "{1,3}", "{0,}"])


def _patterns() -> st.SearchStrategy[str]:
    piece = st.builds(_quantified, _ATOM, _QUANT)
    seq = st.lists(piece, min_size=1, max_size=4).map("".join)
    group = st.builds(_group, seq, _QUANT, st.booleans())
    body = st.lists(st.one_of(piece, group), min_size=1, max_size=4).map("".join)
    alts = st.lists(body, min_size=1, max_size=2).map("|".join)
    return st.builds(_anchored, st.booleans(), alts, st.booleans())


_TEXT = st.text(st.sampled_from(list("ab09_/-.$()\\ \n\u0663é\u2028]^")), max_size=8)


@settings(max_examples=400, deadline=None)
@given(_patterns(), st.lists(_TEXT, min_size=1, max_size=6))
def test_both_readings_agree(pattern: str, texts: list[str]) -> None:
    native = Pattern(pattern)
    assert isinstance(native, NativePattern), pattern
    adapter = TypeAdapter(Annotated[str, native])
    ecma = compile_pattern(pattern)
    for text in texts:
        try:
            adapter.validate_python(text)
            natively = True
        except ValidationError:
            natively = False
        assert natively == (ecma.search(text) is not None), (pattern, text)


def test_the_json_schema_is_the_python_checks() -> None:
    class Native(BaseModel):
        a: Annotated[str, Pattern(r"^\d+$")]

    class Python(BaseModel):
        a: Annotated[str, Pattern(r"^\s+$")]

    for mode in ("validation", "serialization"):
        native, python = Native.model_json_schema(mode=mode), Python.model_json_schema(mode=mode)
        assert native["properties"] == python["properties"], mode
