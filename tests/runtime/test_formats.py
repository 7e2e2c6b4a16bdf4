"""Formats in assertion mode by their RFC grammars: each case is one the old
checks got wrong, or a format they did not assert at all. The suite's optional/format files
measure the rest (``bench/conformance.py``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from toolbind.compiler import model_from_schema

CASES: list[tuple[str, list[str], list[str]]] = [
    # RFC 1123 labels; an xn-- label must be a valid A-label (IDNA 2008)
    (
        "hostname",
        ["example.com", "xn--ihqwcrb4cv8a8dqg056pqjye", "ab--cd.example"],
        ["example.com.", "xn--X", "-a.com"],
    ),
    (
        "idn-hostname",
        ["実例.テスト", "xn--5ckr0h", "例\u3002テスト"],
        ["a\u302ez", "0a.\u05d0", "ab--c", "\u0300a"],
    ),
    # RFC 3986: percent-encoding, a numeric port, the characters a path may hold
    (
        "uri",
        ["http://a.b/c?d#e", "urn:isbn:0451450523", "http://[::1]:80/", "http://[v1.x]/"],
        ["http://a.b/%zz", "http://a.b:port/", "http://a.b/c d", "//a.b/c", "http://[::g]/"],
    ),
    ("uri-reference", ["../a?b#c", "//a.b/c", "#f", ""], ["\\\\a\\b", "a b", "#%x"]),
    ("iri", ["http://ƒøø.ßår/?∂éœ=πîx#πîüx", "http://[V1.fe]"], ["/relative", "http://a.b/c d"]),
    ("iri-reference", ["ƒøø/ßår", "#ƒrägmênt"], ["\\\\WINDOWS\\filëßåré", "#ƒräg\\mênt"]),
    (
        "uri-template",
        ["http://e.com/{term:1}/{term}", "{+path}/here{?q,lang}", "a'b"],
        ["http://e.com/{term:1}/{term", "{x:0}", "{a b}"],
    ),
    ("email", ['"joe bloggs"@example.com', "a.b@c.d"], ["a..b@c.d", '"a"b"@c.d']),
    ("idn-email", ["실례@실례.테스트", "user@cafe\u0301.com"], ["2962", "a@b@c"]),
    ("regex", ["(?<n>a)\\k<n>", "[]", "[^]", "\\cA"], ["(?P<n>x)", "(?i)a", "\\a"]),
]


@pytest.mark.parametrize(("fmt", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_formats_are_asserted_by_their_rfcs(fmt: str, good: list[str], bad: list[str]) -> None:
    model = model_from_schema({"type": "string", "format": fmt}, format_assertion=True)
    assert [model.model_validate(v).model_dump() for v in good] == good
    for value in bad:
        with pytest.raises(ValidationError):
            model.model_validate(value)
    annotation = model_from_schema({"type": "string", "format": fmt})
    assert [annotation.model_validate(v).model_dump() for v in bad] == bad
