"""The IR's ``repr`` (compiler/ir.py ``_plain_repr``): what dataclasses write, without their
recursion guard — incremental generation keys a large spec's definitions on it, so the text
must stay the dataclasses' one, field for field."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from toolbind.compiler import ir
from toolbind.compiler.diagnostics import Diagnostics
from toolbind.compiler.frontends import read_spec

CORPUS = Path(__file__).parent.parent / "corpus" / "openapi"


def _twin(kind: type[Any]) -> type[Any]:
    """A dataclass of ``kind``'s name and fields, with the ``repr`` dataclasses generate."""
    spec = [(f.name, Any, dataclasses.field(repr=f.repr)) for f in dataclasses.fields(kind)]
    twin = dataclasses.make_dataclass(kind.__name__, spec, frozen=True)
    twin.__qualname__ = kind.__qualname__
    return twin


def _values(root: object) -> list[object]:
    """Every IR dataclass value reachable from ``root`` (through fields, tuples, lists, dicts)."""
    found: list[object] = []
    stack = [root]
    while stack:
        item = stack.pop()
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            if type(item).__module__ == ir.__name__:
                found.append(item)
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
        elif isinstance(item, (tuple, list)):
            stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, dict):
            stack.extend(item.values())  # pyright: ignore[reportUnknownArgumentType]
    return found


@pytest.mark.parametrize("spec", ["readme-examples__schema-types-3.1.json", "redocly__museum.yaml"])
def test_every_ir_value_reprs_as_dataclasses_write_it(spec: str) -> None:
    pkg = read_spec(CORPUS / spec, spec, Diagnostics())
    assert pkg is not None
    values = _values(pkg)
    kinds = {type(v) for v in values}
    assert len(kinds) >= 10
    twins = {kind: _twin(kind) for kind in kinds}
    for value in values:
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}  # type: ignore[arg-type]
        assert repr(value) == repr(twins[type(value)](**fields))
