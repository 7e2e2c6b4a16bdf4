"""Bench helper: read the JSON-Schema-Test-Suite (test files and remote documents) from disk.

Used by ``bench/conformance.py``; imports only the standard library. The suite is only read.

Layout of the suite (``<corpus>/jsonschema-test-suite``)::

    tests/<draft>/*.json                  one file per keyword, each a list of groups
                                          (drafts a corpus lacks: tests/corpus/ in the repo)
    tests/<draft>/optional/format/*.json  format assertion suites
    remotes/**/*.json                     documents tests reference as http://localhost:1234/<path>
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

#: The drafts the benchmark knows, in report order.
DRAFTS: tuple[str, ...] = ("draft2020-12", "draft2019-09", "draft7", "draft6", "draft4")

#: The suite as the repository holds it (every draft), read for a draft another corpus lacks.
BUNDLED = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "jsonschema-test-suite"

#: The base URI under which the suite's ``remotes/`` directory is served.
REMOTE_BASE = "http://localhost:1234/"

#: ``main``: the top-level keyword files; ``format``: ``optional/format/*.json``.
Suite = Literal["main", "format"]


@dataclass(frozen=True, slots=True)
class Case:
    """One test: an instance and whether the group's schema accepts it."""

    description: str
    data: Any
    valid: bool


@dataclass(frozen=True, slots=True)
class Group:
    """One schema with its tests (``{description, schema, tests}`` in a suite file)."""

    draft: str
    suite: Suite
    #: The file's path relative to ``tests/<draft>/``, e.g. ``ref.json`` or
    #: ``optional/format/email.json``.
    file: str
    index: int
    description: str
    schema: Any
    tests: tuple[Case, ...]


def suite_root(corpus: Path) -> Path:
    """The test suite's directory inside a corpus."""
    return corpus / "jsonschema-test-suite"


def tests_dir(root: Path, draft: str) -> Path:
    """``tests/<draft>`` of the corpus' suite, else of the repository's copy."""
    base = root / "tests" / draft
    return base if base.is_dir() else BUNDLED / "tests" / draft


def suite_files(root: Path, draft: str, suite: Suite) -> list[Path]:
    """The suite files of one draft, sorted by name."""
    base = tests_dir(root, draft)
    directory = base if suite == "main" else base / "optional" / "format"
    return sorted(directory.glob("*.json"))


def load_groups(root: Path, draft: str, suite: Suite, path: Path) -> list[Group]:
    """Read one suite file into groups."""
    raw = cast("list[dict[str, Any]]", json.loads(path.read_text(encoding="utf-8")))
    rel = path.relative_to(tests_dir(root, draft)).as_posix()
    groups: list[Group] = []
    for index, group in enumerate(raw):
        tests = tuple(
            Case(description=str(t["description"]), data=t["data"], valid=bool(t["valid"]))
            for t in cast("list[dict[str, Any]]", group["tests"])
        )
        groups.append(
            Group(
                draft=draft,
                suite=suite,
                file=rel,
                index=index,
                description=str(group["description"]),
                schema=group["schema"],
                tests=tests,
            )
        )
    return groups


def load_remotes(root: Path) -> dict[str, Any]:
    """Every document under ``remotes/``, keyed by the URL the suite serves it at."""
    remotes_dir = root / "remotes"
    remotes: dict[str, Any] = {}
    for path in sorted(remotes_dir.rglob("*.json")):
        url = REMOTE_BASE + path.relative_to(remotes_dir).as_posix()
        remotes[url] = json.loads(path.read_text(encoding="utf-8"))
    return remotes
