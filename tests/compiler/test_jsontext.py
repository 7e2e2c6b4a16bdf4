"""``dumps_indented`` writes exactly what ``json.dumps(value, indent=N, ensure_ascii=False)``
writes (compiler/_jsontext.py): the JSON files of every generated package go through it.
``dumps_indented_spans`` writes the same text and where its values are in it (a large package's
``tools_index.json``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbind.compiler._jsontext import dumps_indented, dumps_indented_spans

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=3))
def test_the_text_is_json_dumps_text(value: Any, indent: int) -> None:
    assert dumps_indented(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)


def test_values_it_does_not_encode_itself_are_left_to_json() -> None:
    others: list[Any] = [{1: "a"}, (1, 2), {"a": (True, None)}, {"k": {2.5: []}}]
    for value in others:
        assert dumps_indented(value, 1) == json.dumps(value, indent=1, ensure_ascii=False)


@settings(max_examples=60, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3))
def test_spans_hold_the_values_they_name(value: Any, indent: int, depth: int) -> None:
    text, spans = dumps_indented_spans(value, indent, depth, lambda path: True)
    assert text == json.dumps(value, indent=indent, ensure_ascii=False)
    raw = text.encode("utf-8")  # byte spans: non-ASCII text before a value moves it
    assert spans[()] == (0, len(raw))
    for path, (start, end) in spans.items():
        node = value
        for step in path:
            node = node[step]
        assert len(path) <= depth
        assert json.loads(raw[start:end]) == json.loads(json.dumps(node))


def test_spans_are_the_wanted_values_and_none_when_json_writes_the_text() -> None:
    doc: dict[str, Any] = {
        "$defs": {"Ä": {"type": "string"}},
        "tools": [{"name": "é", "parameters": {}}],
    }
    text, spans = dumps_indented_spans(
        doc, 1, 3, lambda path: path[-1:] in (("parameters",), ("Ä",))
    )
    assert text == json.dumps(doc, indent=1, ensure_ascii=False)
    assert sorted(spans) == [("$defs", "Ä"), ("tools", 0, "parameters")]
    assert text.encode()[slice(*spans[("tools", 0, "parameters")])] == b"{}"
    assert dumps_indented_spans({1: "a"}, 1, 2, lambda path: True) == (
        json.dumps({1: "a"}, indent=1),
        {},
    )


@settings(max_examples=150, deadline=None)
@given(_VALUES)
def test_canonical_texts_are_json_dumps_text(value: Any) -> None:
    """``share_repeated`` counts subschemas by their canonical text, made once per dict from its
    values' texts (backends/schemas.py): it is ``json.dumps``'s, sorted and compact."""
    from toolbind.compiler.backends.schemas import (
        _canonical,  # pyright: ignore[reportPrivateUsage]
        _CanonicalTexts,  # pyright: ignore[reportPrivateUsage]
    )

    texts = _CanonicalTexts()
    assert texts(value) == _canonical(value)
    assert texts(value) == _canonical(value)  # asked again: the text kept
    for other in [{1: "a"}, {"a": (1, 2)}, {"k": [{"x": 1.5, "y": float("nan")}]}]:
        assert texts(other) == _canonical(other)
