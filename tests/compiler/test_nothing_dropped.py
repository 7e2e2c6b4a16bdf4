"""Nothing an OpenAPI spec says is dropped in silence: per spec, every operation, parameter (by
location), request body and response read is emitted, reported with a located warning or note,
filtered by the user's selection, or overridden as OpenAPI says (``toolbind generate -v`` prints
the counts). Checked on every corpus spec and on the real-world deviation specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._fates import FATES, read_counts
from tests.conftest import CORPUS
from toolbind.compiler._driver import build

REALWORLD = Path(__file__).resolve().parents[1] / "realworld" / "specs"
SPECS = sorted(
    [
        *(p for p in (CORPUS / "openapi").glob("*") if p.suffix in (".json", ".yaml")),
        *REALWORLD.glob("*.yaml"),
    ]
)


@pytest.mark.parametrize("spec", SPECS, ids=[p.name for p in SPECS])
def test_everything_read_is_emitted_or_reported(spec: Path) -> None:
    tree = build([spec], formatted=False)
    notes = [d for d in tree.diagnostics if "read → emitted: " in d.found]
    assert len(notes) == 1, [d.render() for d in tree.diagnostics]
    counts = read_counts(notes[0].found)
    assert counts["operations"]["read"] > 0 or spec.name.startswith("oai-examples__webhook")
    reported = sum(c.get("reported", 0) for c in counts.values())
    said = [d for d in tree.diagnostics if d.severity in ("warning", "note") and d is not notes[0]]
    assert len(said) >= reported, "every item reported has its own located diagnostic"
    for kind, c in counts.items():
        assert c["read"] == sum(c.get(fate, 0) for fate in FATES), (kind, c)


def test_the_counts_are_printed_with_verbose(tmp_path: Path) -> None:
    import subprocess
    import sys

    spec = REALWORLD / "split_api.yaml"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolbind.cli",
            "generate",
            "-v",
            "-o",
            str(tmp_path / "o"),
            str(spec),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        "read → emitted: operations 2 → 2 emitted; parameters in path 1 → 1 emitted" in out.stderr
    )


def test_fields_toolbind_ignores_are_each_reported(tmp_path: Path) -> None:
    """A field no OpenAPI version defines, a field of the wrong shape, callbacks and ``x-``
    extensions are read and not used: each says so, located."""
    spec = tmp_path / "odd.yaml"
    spec.write_text(
        "openapi: 3.0.3\n"
        "info: {title: odd, version: '1'}\n"
        "servers: 3\n"
        "x-tagGroups: []\n"
        "paths:\n"
        "  /a:\n"
        "    frob: {}\n"
        "    x-internal: true\n"
        "    post:\n"
        "      operationId: a\n"
        "      respones: {'200': {description: typo}}\n"
        "      callbacks: {done: {'{$request.body#/url}': {post: {responses: {'200': {description: ok}}}}}}\n"
        "      responses: 7\n"
    )
    tree = build([spec], formatted=False)
    said = {(d.loc.pointer, d.severity): d.found for d in tree.diagnostics}
    assert "servers is an integer 3" in said["/servers", "warning"]
    assert "'frob' is not a field of OpenAPI 3.x path items" in said["/paths/~1a/frob", "warning"]
    typo = said["/paths/~1a/post/respones", "warning"]
    assert "'respones' is not a field of OpenAPI 3.x operations" in typo
    assert "responses is an integer 7" in said["/paths/~1a/post/responses", "warning"]
    assert "1 callback(s) skipped" in said["/paths/~1a/post/callbacks", "note"]
    assert "2 extension field(s) ignored (x-internal, x-tagGroups)" in said["/x-tagGroups", "note"]
