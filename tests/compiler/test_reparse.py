"""Parsing an edited YAML spec again from its previous parse (compiler/memo/_reparse.py).

``splice`` must give exactly what a full parse of the new text gives, or None (then the whole
text is parsed): random edits of real YAML specs — a value changed, lines added, removed or
re-indented, anchors, aliases, quotes, duplicated keys, document markers — are spliced and
compared with a full parse; plain description edits must actually be spliced (else the cache
would do nothing and this test would not notice).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolbind.compiler._load import Document
from toolbind.compiler.memo._parses import (
    ParseCache,
    _accept,  # pyright: ignore[reportPrivateUsage]
    _spliced_json,  # pyright: ignore[reportPrivateUsage]
)
from toolbind.compiler.memo._reparse import Lines, splice
from toolbind.yaml12 import TextDatesLoader as _TextDatesLoader

CORPUS = Path(__file__).parent.parent / "corpus" / "openapi"
SPECS = ["redocly__museum.yaml", "oai-examples__uspto.yaml", "oai-examples__link-example.yaml"]

_LOADER: Any = _TextDatesLoader


def parse(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def full(text: str) -> str | None:
    """The full parse of ``text`` as JSON text, or None when it is not a plain JSON document."""
    try:
        value = parse(text)
    except yaml.YAMLError:
        return None
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return None


_INSERTS = [
    "x-added: 1",
    "x-anchor: &shared {a: 1}",
    "x-alias: *shared",
    'x-quote: "unterminated',
    "---",
    "- item",
    "? complex",
    "x-flow: [a,",
    "# a comment",
    "",
    "x-tab:\tvalue",
    "x-multi: |",
    "  block text",
]


def edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    line = lines[at]
    indent = len(line) - len(line.lstrip(" "))
    kind = rng.randrange(7)
    if kind == 0 and line.strip():
        lines[at] = line + rng.choice([" (edited)", "'", '"', ": x", " #c", " &a", " *a"])
    elif kind == 1:
        lines.insert(at, " " * indent + rng.choice(_INSERTS))
    elif kind == 2:
        del lines[at]
    elif kind == 3 and line.strip():
        lines[at] = " " * rng.choice([0, 1, 2, indent + 2, max(indent - 2, 0)]) + line.lstrip()
    elif kind == 4 and line.strip():
        lines.insert(at, line)  # a key written twice
    elif kind == 5:
        start = rng.randrange(len(lines))
        del lines[start : start + rng.randrange(1, 6)]
    else:
        other = rng.randrange(len(lines))
        lines[at], lines[other] = lines[other], lines[at]
    return "\n".join(lines)


@pytest.mark.parametrize("spec", SPECS)
def test_a_spliced_parse_is_the_full_parse_of_the_edited_text(spec: str) -> None:
    old = (CORPUS / spec).read_text(encoding="utf-8")
    rng = random.Random(spec)
    spliced = 0
    before = json.dumps(parse(old))
    for _ in range(150):
        new = edit(old, rng)
        want = full(new)
        got = splice(old, json.loads(before), new, _LOADER, _accept)
        if got is not None:
            spliced += 1
            assert want is not None, f"spliced a text a full parse refuses:\n{new}"
            assert json.dumps(got) == want
    assert spliced > 20, "most edits stay inside one entry: splice should take them"


@pytest.mark.parametrize("spec", SPECS)
def test_kept_lines_splice_as_the_texts_own_and_describe_the_new_text(spec: str) -> None:
    """Given the old text's ``Lines`` (kept beside its parse, so a large text is not scanned
    again), ``splice`` gives what it gives without them, and leaves them describing the new
    text (each line's indentation, as read from that text); it declines a text whose lines
    they do not fit."""
    old = (CORPUS / spec).read_text(encoding="utf-8")
    rng = random.Random(f"lines {spec}")
    before = json.dumps(parse(old))
    kept = Lines.of(old)
    assert kept is not None
    back = Lines.loads(kept.dumps(), old)
    assert back is not None and back.indents == kept.indents
    assert Lines.loads(kept.dumps(), old + "\nx: 1") is None
    assert Lines.loads("not base64!", old) is None
    spliced = 0
    for _ in range(150):
        new = edit(old, rng)
        lines = Lines(list(kept.indents))
        without = splice(old, json.loads(before), new, _LOADER, _accept)
        got = splice(old, json.loads(before), new, _LOADER, _accept, None, lines)
        assert json.dumps(got) == json.dumps(without)
        if got is None:
            assert lines.indents == kept.indents  # untouched when nothing was spliced
            continue
        spliced += 1
        made = Lines.of(new)
        assert made is not None and lines.indents == made.indents
    assert spliced > 20
    for marked in (old.replace("\n", "\r\n", 1), old + "\n---\n", "%YAML 1.2\n" + old):
        assert splice(old, json.loads(before), marked, _LOADER, _accept, None, kept) is None
    short = Lines(kept.indents[:-1])
    assert splice(old, json.loads(before), old + " ", _LOADER, _accept, None, short) is None


@pytest.mark.parametrize("spec", SPECS)
def test_every_description_edit_is_spliced(spec: str) -> None:
    old = (CORPUS / spec).read_text(encoding="utf-8")
    lines = old.split("\n")
    before = json.dumps(parse(old))
    edited = 0
    for i, line in enumerate(lines):
        body = line.strip()
        if not body.startswith(("description: ", "summary: ")) or body.endswith(("|", ">", "-")):
            continue
        new = "\n".join([*lines[:i], line + " (edited)", *lines[i + 1 :]])
        got = splice(old, json.loads(before), new, _LOADER, _accept)
        want = full(new)
        if want is None or "'" in body or '"' in body:
            continue
        assert got is not None, f"line {i + 1}: {body[:60]}"
        assert json.dumps(got) == want
        edited += 1
    assert edited > 0


def test_splice_declines_what_it_cannot_vouch_for() -> None:
    base = "a:\n  b: 1\n  c: &x 2\nd:\n  g: *x\ne:\n  f: text\n"
    value = parse(base)
    # the anchored value changes, and the alias elsewhere with it: a full parse only
    assert splice(base, parse(base), base.replace("&x 2", "&x 3"), _LOADER, _accept) is None
    # a key written twice (PyYAML keeps the last): the first one's edit changes nothing
    twice = "a:\n  b: 1\na:\n  b: 1\n"
    assert splice(twice, parse(twice), twice.replace("b: 1", "b: 2", 1), _LOADER, _accept) is None
    # document markers and directives
    marked = "---\n" + base
    assert splice(marked, parse(marked), marked + "g: 1\n", _LOADER, _accept) is None
    # an edit in one entry is spliced into the previous value
    edited = base.replace("f: text", "f: other")
    assert splice(base, value, edited, _LOADER, _accept) == parse(edited)


def test_the_shared_start_and_end_are_found_a_chunk_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``splice`` counts the lines two texts share from the characters they share, compared a
    chunk at a time: the same counts as comparing every character, at every chunk boundary."""
    import toolbind.compiler.memo._reparse as reparse

    monkeypatch.setattr(reparse, "_CHUNK", 4)
    rng = random.Random(1822)
    for _ in range(3000):
        a = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 24)))
        b = list(a)
        for _ in range(rng.randrange(0, 3)):
            at = rng.randrange(len(b) + 1)
            if rng.random() < 0.5:
                b.insert(at, rng.choice("ab\n"))
            elif b:
                b[min(at, len(b) - 1)] = rng.choice("ab\n")
        other = "".join(b)
        prefix = 0
        while prefix < min(len(a), len(other)) and a[prefix] == other[prefix]:
            prefix += 1
        suffix = 0
        while suffix < min(len(a), len(other)) and a[-1 - suffix] == other[-1 - suffix]:
            suffix += 1
        assert reparse._common_prefix(a, other) == prefix  # pyright: ignore[reportPrivateUsage]
        assert reparse._common_suffix(a, other) == suffix  # pyright: ignore[reportPrivateUsage]
    # and a splice at chunk size 4 is still the full parse
    old = (CORPUS / SPECS[0]).read_text(encoding="utf-8")
    lines = old.split("\n")
    i = next(n for n, line in enumerate(lines) if line.strip().startswith("description: "))
    new = "\n".join([*lines[:i], lines[i] + " (edited)", *lines[i + 1 :]])
    got = splice(old, parse(old), new, _LOADER, _accept)
    assert got is not None and json.dumps(got) == full(new)


@pytest.mark.parametrize(
    "spec", ["oai-examples__uspto.yaml", "oai-examples__link-example.yaml", "netlify__api.yaml"]
)
def test_a_kept_parse_after_an_edit_is_the_one_a_full_parse_keeps(spec: str) -> None:
    """What ``ParseCache`` keeps after splicing an edit (the value's JSON written again by
    replacing the part that changed, the lines spliced) is byte for byte what it keeps after
    parsing the edited text whole: random edits and every description edit of real specs."""
    old = (CORPUS / spec).read_text(encoding="utf-8")
    first = ParseCache()
    assert isinstance(first.load(spec, old, spec, dates_as_text=True), Document)
    kept = first.text()
    assert kept is not None
    rng = random.Random(f"kept {spec}")
    lines = old.split("\n")
    described = [
        i
        for i, line in enumerate(lines)
        if line.strip().startswith(("description: ", "summary: "))
        and not line.rstrip().endswith(("|", ">", "-", "'", '"'))
    ]
    edits = [edit(old, rng) for _ in range(40)] + [
        "\n".join([*lines[:i], lines[i] + " (edited)", *lines[i + 1 :]])
        for i in rng.sample(described, min(len(described), 25))
    ]
    previous = ParseCache.read(kept)
    assert previous is not None
    spliced = rewritten = 0
    for new in [old, *edits]:
        again = ParseCache(ParseCache.read(kept))
        got = again.load(spec, new, spec, dates_as_text=True)
        fresh = ParseCache()
        want = fresh.load(spec, new, spec, dates_as_text=True)
        assert isinstance(got, Document) == isinstance(want, Document)
        assert again.text() == fresh.text()
        entries = again.changes[spec].entries if spec in again.changes else None
        if entries and isinstance(got, Document):
            spliced += 1
            # the value's JSON was written again from the old one, not dumped whole
            rewritten += _spliced_json(previous[spec]["json"], got.value, entries) is not None
    assert spliced > 20 and rewritten > spliced // 2
