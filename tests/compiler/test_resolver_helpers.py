"""Pure helpers of the ``$ref`` resolver (compiler/frontends/_resolver.py)."""

from __future__ import annotations

from urllib.parse import urldefrag

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbind.compiler.frontends._resolver import _defrag  # pyright: ignore[reportPrivateUsage]


@settings(max_examples=300, deadline=None)
@given(st.text(), st.sampled_from(["", "#", "#/", "a.json#", " #", "http://h/p#"]))
def test_defrag_is_urldefrag(text: str, prefix: str) -> None:
    """Local pointers are split without ``urllib``'s parse: the same parts whatever they hold."""
    url = prefix + text
    assert _defrag(url) == tuple(urldefrag(url))
