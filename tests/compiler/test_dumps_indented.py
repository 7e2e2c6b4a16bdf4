"""``dumps_indented`` writes ``tools.json`` and ``schema.json`` (issue 13, must-show 4: the
standard library's indented encoder took a twentieth of a large spec's compile): its text must
be exactly ``json.dumps(value, indent=1, ensure_ascii=False)``, for every JSON value."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbind.compiler.backends.schemas import dumps_indented

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(_JSON)
def test_the_text_is_json_dumps_with_indent_1(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=1, ensure_ascii=False)


def test_what_it_does_not_handle_is_left_to_json_dumps() -> None:
    # a non-string key, converted by json.dumps; a value JSON has no form for, refused by it
    assert dumps_indented({1: [math.inf]}) == json.dumps({1: [math.inf]}, indent=1)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented({"x": {1, 2}})
