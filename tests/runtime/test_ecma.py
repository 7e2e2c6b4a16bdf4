"""``pattern`` keeps its ECMA-262 meaning where Python's would differ or refuse the pattern (real
specs use these: a spec whose pattern Python refuses used to fail to compile as a whole)."""

from __future__ import annotations

import pytest
import regex

from toolbind._ecma import compile_pattern
from toolbind.compiler import SpecError, model_from_schema

CASES: list[tuple[str, list[str], list[str]]] = [
    # Annex B: a class escape at an end of a range makes the "-" a literal (seen in AWS, Azure specs)
    (r"^[\w-.+]+@[\w-.+]+$", ["a-b.c@x.y", "a+b@c"], ["a b@x", "a@"]),
    (r"^[A-Za-z0-9][\w-\.]*[A-Za-z0-9]$", ["a-b.c", "ab"], ["a b", "-a"]),
    (r"^[-\w]+$", ["a-b"], ["a b"]),
    (r"^[\d-]+$", ["1-2"], ["a"]),
    (r"^[^\s-]+$", ["ab"], ["a b", "a-b"]),
    (r"^[a-z-\d]+$", ["a-1"], ["A"]),
    # the empty class matches nothing; [^] matches any character, a newline included
    (r"^[]$", [], ["", "a"]),
    (r"^a[^]b$", ["a\nb", "axb"], ["ab"]),
    # ASCII \d and \w, and $ only at the very end
    (r"^\d+$", ["123"], ["١٢٣", "12\n"]),
    (r"^\w+$", ["a_1"], ["é"]),
    # a plain range is still a range
    (r"^[a-c]+$", ["abc"], ["-", "d"]),
    # ES2025's modifier groups (pydantic writes Python's, which are the same: LiteLLM's spec)
    (r"^(?i:data:image/png|https?://\S+)$", ["DATA:Image/PNG", "HTTPS://x"], ["ftp://x"]),
    (r"^(?i:a(?-i:b)c)$", ["AbC", "abc"], ["ABC"]),
    (r"^(?i-:a)b$", ["Ab"], ["AB"]),
    (r"^(a)(?i:(b))\2$", ["aBB", "abb"], ["aBb"]),  # (a backreference: its own flags)
    (r"(?m:^b$)", ["a\nb\nc", "a\rb\u2028c", "b"], ["ab\nc", "a\nbc"]),
    (r"^(?s:a.b)$", ["a\nb", "a\u2028b"], ["ab"]),
    (r"^(?m-s:a.$)", ["ab"], ["a\n"]),
    (r"^a.b$", ["axb"], ["a\nb"]),  # no s outside the group
]


@pytest.mark.parametrize(("pattern", "matching", "other"), CASES)
def test_patterns_mean_what_ecma_262_says(
    pattern: str, matching: list[str], other: list[str]
) -> None:
    compiled = compile_pattern(pattern)
    assert [bool(compiled.search(s)) for s in matching] == [True] * len(matching)
    assert [bool(compiled.search(s)) for s in other] == [False] * len(other)


def test_a_spec_pattern_python_would_refuse_compiles_and_validates() -> None:
    Email = model_from_schema({"type": "string", "pattern": r"^[\w-.+]+@[\w-.+]+$"})
    assert Email.model_validate("a-b.c@x.y").model_dump() == "a-b.c@x.y"
    with pytest.raises(ValueError, match="pattern"):
        Email.model_validate("not an address")


# Python's syntax is no ECMA-262 (the format 'regex' and `pattern` agree)
NOT_ECMA = [
    *(r"\a", r"\Z", "(?P<n>x)", "(?P<n>a)(?P=n)", "(?#comment)a", "(?i)abc", "(?ims)abc"),
    # modifier groups ECMA-262 refuses: a flag it has none of, twice, on and off, none at all
    *("(?x:a)", "(?ii:a)", "(?i-i:a)", "(?-:a)", "(?I:a)", "(?u:a)"),
]


@pytest.mark.parametrize("pattern", NOT_ECMA)
def test_python_only_syntax_is_refused(pattern: str) -> None:
    with pytest.raises(regex.error, match="not ECMA-262 syntax"):
        compile_pattern(pattern)
    with pytest.raises(SpecError, match="is not a valid regular expression"):
        model_from_schema({"type": "string", "pattern": pattern})
    Regex = model_from_schema({"type": "string", "format": "regex"}, format_assertion=True)
    with pytest.raises(ValueError):
        Regex.model_validate(pattern)


def test_ecma_only_syntax_compiles() -> None:
    assert compile_pattern(r"(?<n>a)\k<n>").search("aa")
    assert not compile_pattern(r"^(?<n>a)\k<n>$").search("ab")
    assert compile_pattern(r"^\cA$").search("\x01")
    EmptyClass = model_from_schema({"type": "string", "pattern": "^[]$"})  # valid ECMA-262
    with pytest.raises(ValueError):
        EmptyClass.model_validate("")


@pytest.mark.parametrize(
    ("schema", "value", "said"),
    [
        ({"type": "string", "pattern": r"^97[89]\d{10}$"}, "978", r"pattern '^97[89]\d{10}$'"),
        ({"type": "string", "pattern": r"^'\w+'$"}, "x", "pattern \"^'\\w+'$\""),
        (
            {"type": "object", "patternProperties": {r"^x\d$": {"type": "integer"}}},
            {"x1": "a"},
            r"pattern '^x\d$'",
        ),
    ],
)
def test_a_refused_pattern_is_quoted_as_the_schema_writes_it(
    schema: dict[str, object], value: object, said: str
) -> None:
    # the message goes back to the model: a repr's doubled backslashes would be copied
    from pydantic import ValidationError

    model = model_from_schema(schema)
    with pytest.raises(ValidationError) as caught:
        model.model_validate(value)
    assert said in str(caught.value)
