"""``dumps_indented`` writes exactly what ``json.dumps(value, indent=N, ensure_ascii=False)``
writes (compiler/_jsontext.py): the JSON files of every generated package go through it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbind.compiler._jsontext import dumps_indented

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
