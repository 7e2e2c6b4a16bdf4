"""A toolset lists its tools in the order its spec gives them: the order a model is shown them.

The defect: ``TOOLSETS[id]`` for a BFCL record ``[b, a]`` came out ``('a', 'b@r2')`` when
``b`` was disambiguated (a function defined differently in two records) — 53 of 200 records.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import unload
from toolbind.compiler import compile_to_directory, load_package


def _fn(name: str, description: str, prop: str) -> dict[str, object]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "dict", "properties": {prop: {"type": "string"}}},
    }


def test_toolsets_keep_each_records_function_order(tmp_path: Path) -> None:
    records = [
        {"id": "r1", "question": "q1", "function": [_fn("b", "b one", "x"), _fn("a", "a", "z")]},
        {"id": "r2", "question": "q2", "function": [_fn("a", "a", "z"), _fn("b", "b two", "y")]},
        {"id": "r3", "question": "q3", "function": [_fn("c", "c", "w"), _fn("a", "a", "z")]},
    ]
    spec = tmp_path / "records.jsonl"
    spec.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    compile_to_directory([spec], tmp_path / "out")
    try:
        pkg = load_package(tmp_path / "out", "records")
        assert pkg.TOOLSETS == {
            "r1": ("b@r1", "a"),
            "r2": ("a", "b@r2"),
            "r3": ("c", "a"),
        }
    finally:
        unload("records")
