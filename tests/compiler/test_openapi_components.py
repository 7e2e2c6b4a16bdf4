"""The component schemas of every corpus OpenAPI spec, as compiled models, honour their schemas
both ways (round-trip).

Each corpus spec (``tests/corpus/openapi``) is compiled on its own; its component schemas are
the package's ``tools.json`` ``$defs`` that the package exports under the same name (the
compiler keeps the components the operations reach; the other ``$defs`` are subschemas shared
to keep the file small). For each, with the contract ``{"$ref": "#/$defs/<name>"}`` plus the
definitions it reaches, ``toolbind.testing.check_roundtrip`` (hypothesis-generated valid
instances validate in ``model_validate`` and ``model_validate_json`` and dump back equal) and
``check_rejects_invalid`` (mutations that jsonschema rejects are rejected in both modes). A
component that is a type alias rather than a class is checked as ``RootModel[alias]``.

Budget: the ``deep`` profile (``make test-deep``) checks every component with its 1000
examples; the ``ci`` profile checks ``CI_PER_SPEC`` components per spec (all of a smaller
spec; otherwise a fixed spread: the names with the lowest CRC-32) with at least 100 examples
each. ``TOOLBIND_ALL_COMPONENTS=1`` checks every component under any profile.

A component whose contract jsonschema refuses as a schema (openai's ``$recursiveAnchor: true``,
a 2019-09 keyword, in a 2020-12 document) has no reference validator to hold the model to: it
is counted as skipped, never as passed; so is one hypothesis-jsonschema cannot generate
instances of (a required recursion); a spec with nothing checked is reported as skipped.
Known fidelity bugs are listed in ``XFAIL`` with their reason.
"""

from __future__ import annotations

import json
import os
import zlib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
from hypothesis import settings
from pydantic import BaseModel, RootModel

from tests.conftest import CORPUS, NO_CORPUS, session_dir
from toolbind.compiler import load_package
from toolbind.compiler._driver import build, write_tree
from toolbind.testing import (
    ContractError,
    ContractViolation,
    check_rejects_invalid,
    check_roundtrip,
)

OPENAPI = CORPUS / "openapi"
SPECS = sorted(p for p in OPENAPI.glob("*") if p.suffix in (".json", ".yaml"))
EXAMPLES = max(100, settings().max_examples)
CI_PER_SPEC = 3
EVERY_COMPONENT = settings().max_examples >= 1000 or os.environ.get("TOOLBIND_ALL_COMPONENTS")

# Known fidelity bugs, each with its reason: the test xfails (strictly: only these failed).
XFAIL: dict[tuple[str, str], str] = {}

corpus = pytest.mark.skipif(not OPENAPI.is_dir(), reason=NO_CORPUS)


@cache
def compiled(spec: Path) -> tuple[ModuleType, dict[str, Any]]:
    """The spec's package (compiled unformatted: ruff changes no meaning) and its ``$defs``."""
    out = session_dir("toolbind-components-")
    tree = build([spec], formatted=False)
    write_tree(tree, out)
    ((name, _),) = tree.packages.items()
    pkg = load_package(out, name)
    tools = json.loads((out / name / "tools.json").read_text(encoding="utf-8"))
    return pkg, tools.get("$defs", {})


def components(pkg: ModuleType, defs: dict[str, Any]) -> list[str]:
    exported = set(cast("list[str]", getattr(pkg, "__all__", [])))
    names = [k for k in defs if k in exported]
    if EVERY_COMPONENT or len(names) <= CI_PER_SPEC:
        return names
    return sorted(names, key=lambda k: zlib.crc32(k.encode()))[:CI_PER_SPEC]


def contract(name: str, defs: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": "#/$defs/<name>"}`` with the definitions it reaches (only those: a spec's
    unrelated definitions neither slow jsonschema down nor make the contract invalid)."""
    prefix = "#/$defs/"
    reached: dict[str, Any] = {}
    stack = [name]
    while stack:
        key = stack.pop()
        if key in reached or key not in defs:
            continue
        reached[key] = defs[key]
        stack.extend(
            ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
            for ref in _refs(defs[key])
            if ref.startswith(prefix)
        )
    escaped = name.replace("~", "~0").replace("/", "~1")
    return {"$ref": prefix + escaped, "$defs": reached}


def _refs(schema: Any) -> list[str]:
    out: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in cast("dict[str, Any]", node).items():
                if key == "$ref" and isinstance(value, str):
                    out.append(value)
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(cast("list[Any]", node))
    return out


def model_of(obj: object) -> type[BaseModel]:
    if isinstance(obj, type) and issubclass(obj, BaseModel):
        return obj
    return RootModel[obj]  # type: ignore[valid-type]  # a type alias of the package


@pytest.mark.slow  # deep property test: every component of every corpus spec
@corpus
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_component_models_accept_exactly_their_schemas(spec: Path) -> None:
    pkg, defs = compiled(spec)
    names = components(pkg, defs)
    failures: list[str] = []
    known: list[str] = []
    checked = skipped = 0
    for name in names:
        schema = contract(name, defs)
        model = model_of(getattr(pkg, name))
        try:
            valid = check_roundtrip(model, schema=schema, max_examples=EXAMPLES)
            check_rejects_invalid(model, schema=schema, max_examples=EXAMPLES)
        except ContractError:  # jsonschema refuses the contract: no reference to hold it to
            skipped += 1
            continue
        except ContractViolation as exc:
            reason = XFAIL.get((spec.name, name))
            if reason is not None:
                known.append(f"{name}: {reason}")
            else:
                failures.append(f"{name}: {exc}")
            continue
        if valid == 0:  # hypothesis-jsonschema can't generate it (e.g. required recursion)
            skipped += 1
            continue
        checked += 1
    assert not failures, "\n\n".join(failures)
    if known:
        pytest.xfail("; ".join(known))
    if not checked and names:
        pytest.skip(f"none of {len(names)} components could be checked (no instances/contract)")
