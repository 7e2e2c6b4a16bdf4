"""Nothing an OpenAPI spec says is dropped in silence: per spec, every operation, parameter (by
location), request body and response read is emitted, reported with a located warning or note,
filtered by the user's selection, or overridden as OpenAPI says (``toolbind generate -v`` prints
the counts). Checked on every corpus spec and on the real-world deviation specs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from toolbind.compiler._driver import build

REALWORLD = Path(__file__).resolve().parents[1] / "realworld" / "specs"
SPECS = sorted(
    [
        *(p for p in (CORPUS / "openapi").glob("*") if p.suffix in (".json", ".yaml")),
        *REALWORLD.glob("*.yaml"),
    ]
)
FATES = ("emitted", "reported", "filtered", "overridden")


def _counts(note: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for part in note.split("read → emitted: ", 1)[1].split("; "):
        kind, read, fates = re.fullmatch(r"(.+?) (\d+) → (.*)", part).groups()  # type: ignore[union-attr]
        out[kind] = {"read": int(read)} | {
            fate: int(n) for n, fate in (f.split(" ", 1) for f in fates.split(", "))
        }
    return out


@pytest.mark.parametrize("spec", SPECS, ids=[p.name for p in SPECS])
def test_everything_read_is_emitted_or_reported(spec: Path) -> None:
    tree = build([spec], formatted=False)
    notes = [d for d in tree.diagnostics if "read → emitted: " in d.found]
    assert len(notes) == 1, [d.render() for d in tree.diagnostics]
    counts = _counts(notes[0].found)
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
            "toolbind.compiler.cli",
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
