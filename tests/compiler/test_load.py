"""The loader's quick checks agree with its thorough ones (compiler/_load.py).

``_nesting_bound`` lets a large YAML file skip a second (event) parse before the C loader, so it
must never be below the real nesting depth; ``plainly_json`` lets a document skip the located
walk, so it must accept only what ``_first_problem`` accepts.
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolbind.compiler import generate_tree
from toolbind.compiler._load import (
    MAX_DEPTH,
    Document,
    _first_problem,  # pyright: ignore[reportPrivateUsage]
    _nesting_bound,  # pyright: ignore[reportPrivateUsage]
    _shallow_json,  # pyright: ignore[reportPrivateUsage]
    parse_text,
    plainly_json,
    yaml_too_deep,
)
from toolbind.compiler.memo._parses import ParseCache


def _depth(text: str) -> int:
    """The deepest collection nesting of ``text`` by YAML's own parser events."""
    depth = deepest = 0
    parser: Any = yaml.SafeLoader(text)
    while parser.check_event():
        event = parser.get_event()
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


def _block_map_of_seqs(n: int) -> str:
    # a sequence as a mapping's value may share the key's column: two levels per two columns
    return "".join(
        f"{'  ' * i}k{i}:\n{'  ' * i}- " + ("\n" if i < n - 1 else "x\n") for i in range(n)
    )


SHAPES = {
    "compact sequences": "- " * 40 + "x\n",
    "block mappings": "".join(f"{' ' * i}k:\n" for i in range(40)) + " " * 40 + "x\n",
    "maps of sequences": _block_map_of_seqs(30),
    "flow": "[" * 50 + "]" * 50 + "\n",
    "single-pair flow maps": "[a: " * 30 + "x" + "]" * 30 + "\n",
    "flow in block": "a:\n  - b: [{c: [[d]]}]\n  - ? - - e\n    : f\n",
    "explicit keys": "? " * 20 + "x\n",
    "carriage returns": "a:\r  - b:\r      - c:\r          - d\r",
    "compact in compact": "- - k:\n      - - v\n",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_nesting_bound_is_never_below_the_real_depth(name: str) -> None:
    text = SHAPES[name]
    assert _nesting_bound(text) >= _depth(text) > 1


def test_deep_yaml_is_still_measured_before_the_c_loader() -> None:
    deep = "- " * 20_000 + "x\n"
    assert _nesting_bound(deep) > 10_000
    assert yaml_too_deep(deep)
    result = parse_text(deep, "deep.yaml")
    assert not hasattr(result, "value")  # a Diagnostic, no crash


def _shared() -> Any:
    item = {"a": [1, 2]}
    return {"x": item, "y": item}


def _self_containing() -> Any:
    value: list[Any] = []
    value.append(value)
    return {"v": value}


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


VALUES: dict[str, Any] = {
    "plain": {"a": [1, 2.5, True, None, "s", {"b": {}}], "c": []},
    "scalar root": "text",
    "nan": {"a": [math.nan]},
    "infinity root": math.inf,
    "date": {"d": datetime.date(2024, 10, 1)},
    "int key": {1: "one"},
    "null key": {"a": {None: 1}},
    "shared through an alias": _shared(),
    "containing itself": _self_containing(),
    "just deep enough": _nested(MAX_DEPTH - 1),
    "too deep": _nested(MAX_DEPTH + 1),
    "bytes": {"b": [b"raw"]},
    "set": {"s": {1, 2}},
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_quick_json_check_accepts_only_what_the_located_check_accepts(name: str) -> None:
    value = VALUES[name]
    quick = plainly_json(value)
    thorough = _first_problem(value, yaml_source=True) is None
    if quick:
        assert thorough
    # JSON-parsed documents share nothing, so there the two agree exactly
    if name in ("plain", "scalar root", "nan", "infinity root", "just deep enough", "too deep"):
        assert quick == thorough
        # ... and the check made for json.loads output (no aliases to look for) agrees too
        assert (
            _shallow_json(value) == thorough == (_first_problem(value, yaml_source=False) is None)
        )


def test_quick_check_on_parsed_json() -> None:
    value = json.loads('{"a": [1, {"b": NaN}]}')
    assert not plainly_json(value)
    assert not _shallow_json(value)
    assert _first_problem(value, yaml_source=False) is not None


def test_unquoted_integer_keys_of_openapi_yaml_are_their_text_and_never_kept_silently() -> None:
    before = "paths:\n  /a:\n    get:\n      responses:\n        '200': {description: ok}\n"
    after = before.replace("'200'", "200")
    cache = ParseCache()
    first = cache.load("api.yaml", before, "api.yaml", dates_as_text=True)
    assert isinstance(first, Document) and not first.warnings
    kept = cache.text()
    assert kept is not None and "api.yaml" in kept
    # the edit's entry holds the integer key: no splice (it would lose the warning) and no keep
    again = ParseCache(ParseCache.read(kept))
    second = again.load("api.yaml", after, "api.yaml", dates_as_text=True)
    assert isinstance(second, Document)
    assert list(second.value["paths"]["/a"]["get"]["responses"]) == ["200"]
    assert [w.render() for w in second.warnings] == [
        "api.yaml#/paths/~1a/get/responses/200: warning: an unquoted integer map key, read as "
        "its text '200' (the first of 1 in this file) — string keys (JSON object names are "
        "always strings) (hint: quote the key: '200': (OpenAPI asks for response codes in quotes))"
    ]
    assert again.text() is None or "api.yaml" not in again.text()  # type: ignore[operator]
    # the same key both ways has no one meaning: still refused
    both = parse_text("r:\n  200: a\n  '200': b\n", "x.yaml", dates_as_text=True)
    assert not isinstance(both, Document) and "integer 200" in both.found
    # outside OpenAPI (no dates_as_text) an integer key is refused as before
    plain = parse_text("r:\n  200: a\n", "x.yaml")
    assert not isinstance(plain, Document) and "integer 200" in plain.found


def test_unquoted_float_keys_of_openapi_yaml_are_the_text_written(tmp_path: Path) -> None:
    """The defect: Matrix's client-server ``report_content.yaml`` (matrix-org/matrix-spec,
    Apache-2.0) writes ``x-changedInMatrixVersion: {1.8: ..., 1.18: ...}`` on an operation; YAML
    reads those keys as floats, and the whole spec was refused (exit 1: "a YAML map key that is a
    number 1.18") although the key sits in an extension toolbind ignores. Such a key is now read
    as the text written (``1.10`` stays ``1.10``), with the warning an integer key gets."""
    text = (
        "openapi: 3.1.0\n"
        "info: {title: Matrix Reporting, version: 1.0.0}\n"
        "paths:\n"
        "  /rooms/{roomId}/report:\n"
        "    post:\n"
        "      operationId: reportRoom\n"
        "      x-changedInMatrixVersion:\n"
        "        1.8: This endpoint now requires the user to be joined to the room.\n"
        "        1.10: Servers MAY prevent room ID enumeration.\n"
        "      parameters:\n"
        "        - {in: path, name: roomId, required: true, schema: {type: string}}\n"
        "      responses:\n"
        "        '200': {description: ok}\n"
    )
    doc = parse_text(text, "report.yaml", dates_as_text=True)
    assert isinstance(doc, Document), doc
    extension = doc.value["paths"]["/rooms/{roomId}/report"]["post"]["x-changedInMatrixVersion"]
    assert list(extension) == ["1.8", "1.10"]
    assert all(type(k) is str for k in extension)
    assert [w.render() for w in doc.warnings] == [
        "report.yaml#/paths/~1rooms~1{roomId}~1report/post/x-changedInMatrixVersion/1.8: warning: "
        "an unquoted number map key, read as its text '1.8' (the first of 2 in this file) — "
        "string keys (JSON object names are always strings) (hint: quote the key: '1.8':)"
    ]
    # the whole spec compiles to its one tool
    spec = tmp_path / "report.yaml"
    spec.write_text(text, encoding="utf-8")
    tree = generate_tree([spec])
    tools = json.loads(tree.files["report/tools.json"])["tools"]
    assert [t["name"] for t in tools] == ["reportRoom"]
    # outside OpenAPI a float key is refused as before, and so is one written both ways
    plain = parse_text("r:\n  1.5: a\n", "x.yaml")
    assert not isinstance(plain, Document) and "number 1.5" in plain.found
    both = parse_text("r:\n  1.5: a\n  '1.5': b\n", "x.yaml", dates_as_text=True)
    assert not isinstance(both, Document)


# (YAML text, the value YAML 1.2's core schema reads, whether YAML 1.1 reads it otherwise)
_CORE_SCALARS: list[tuple[str, Any, bool]] = [
    ("NO", "NO", True),  # Norway's country code: false in YAML 1.1
    ("yes", "yes", True),
    ("on", "on", True),
    ("Off", "Off", True),
    ("y", "y", False),
    ("12:30", "12:30", True),  # sexagesimal 750 in YAML 1.1
    ("010", 10, True),  # octal 8 in YAML 1.1
    ("0o17", 15, True),  # text in YAML 1.1
    ("0x1F", 31, False),
    ("1_000", "1_000", True),
    ("0b101", "0b101", True),
    ("1e3", 1000.0, True),  # text in YAML 1.1
    ("1.5e3", 1500.0, True),  # YAML 1.1's exponent needs a sign
    ("1.5e+3", 1500.0, False),
    (".5", 0.5, False),
    ("true", True, False),
    ("FALSE", False, False),
    ("~", None, False),
    ("", None, False),
    ("Null", None, False),
    ("0", 0, False),
    ("-7", -7, False),
    ("'NO'", "NO", False),
    ('"010"', "010", False),
    ("=", "=", True),  # PyYAML's 1.1 "value" tag, which its safe loader cannot even construct
]


@pytest.mark.parametrize(("text", "value", "differs"), _CORE_SCALARS)
def test_plain_scalars_are_read_as_yaml_1_2_and_a_1_1_difference_is_warned(
    text: str, value: Any, differs: bool
) -> None:
    """The defect: PyYAML reads YAML 1.1, so an enum of country codes with Norway's NO, or a time
    12:30, reached the models as false and 750 without a word. OpenAPI recommends YAML 1.2."""
    doc = parse_text(f"a:\n  - {text}\n", "api.yaml")
    assert isinstance(doc, Document)
    assert doc.value == {"a": [value]}
    assert type(doc.value["a"][0]) is type(value)
    if not differs:
        assert doc.warnings == ()
        return
    (warning,) = doc.warnings
    assert warning.severity == "warning"
    assert (warning.line, warning.column) == (2, 5)
    assert warning.render().startswith(
        f"api.yaml:2:5: warning: unquoted values that YAML 1.1 reads otherwise, read as YAML 1.2 "
        f"does (as OpenAPI recommends): {text} at line 2, column 5 ({json.dumps(value)}; YAML 1.1: "
    )


def test_a_yaml_1_1_reading_is_one_warning_for_the_file_naming_the_first_three() -> None:
    text = "c: [SE, NO, DK, on]\nt: 12:30\nk:\n  yes: 1\n"
    doc = parse_text(text, "api.yaml", dates_as_text=True)
    assert isinstance(doc, Document)
    assert doc.value == {"c": ["SE", "NO", "DK", "on"], "t": "12:30", "k": {"yes": 1}}
    (warning,) = doc.warnings
    assert 'NO at line 1, column 9 ("NO"; YAML 1.1: false); on at line 1, column 17' in (
        warning.found
    )
    assert warning.found.endswith("and 1 more")  # the key yes


def test_kept_parses_read_back_as_written_and_a_damaged_file_is_not_read() -> None:
    """The kept parses hold each document's text as it is (after a JSON first line): texts
    with newlines, CRLF, quotes and non-ASCII read back the same; any damage reads as none."""
    cache = ParseCache()
    texts = {
        "b.yaml": 'a: "x"\r\nb: |\n  multi\n  line \u00e9\u6f22\n',
        "a.yaml": "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n",
    }
    for name, text in texts.items():
        assert isinstance(cache.load(name, text, name, dates_as_text=True), Document)
    kept = cache.text()
    assert kept is not None
    back = ParseCache.read(kept)
    assert back is not None
    assert {name: entry["text"] for name, entry in back.items()} == texts
    assert back["a.yaml"]["value"]["openapi"] == "3.1.0"
    for damaged in [
        kept[:-1],
        kept + "x",
        kept.replace("\n", " ", 1),
        "[]\n",
        "{",
        "",
        kept.replace('"format": 2', '"format": 1', 1),
    ]:
        assert ParseCache.read(damaged) is None, damaged[:40]


def test_an_edit_adding_a_yaml_1_1_value_is_parsed_whole_with_its_warning() -> None:
    """The parse cache splices an edited entry; one that YAML 1.1 reads otherwise is parsed
    again in full, so the warning is never lost to the cache."""
    before = "paths:\n  /a:\n    get:\n      summary: A\n  /b:\n    get:\n      summary: B\n"
    cache = ParseCache()
    first = cache.load("api.yaml", before, "api.yaml", dates_as_text=True)
    assert isinstance(first, Document) and not first.warnings
    kept = cache.text()
    assert kept is not None
    after = before.replace("summary: B", "summary: B\n      x-country: NO")
    second = ParseCache(ParseCache.read(kept)).load(
        "api.yaml", after, "api.yaml", dates_as_text=True
    )
    assert isinstance(second, Document)
    assert second.value["paths"]["/b"]["get"]["x-country"] == "NO"
    assert len(second.warnings) == 1 and "NO at line 8" in second.warnings[0].found
