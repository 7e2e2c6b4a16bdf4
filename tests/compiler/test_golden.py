"""Golden files: the generated package of each spec under tests/golden/ is kept verbatim.

``make regen`` (``TOOLBIND_REGEN=1``) rewrites ``tests/golden/expected/`` after a deliberate
change; review the diff like any other code change. The expected packages are also imported
and exercised here, and type-checked by pyright with the rest of ``tests/``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import REPO
from toolbind.compiler import generate_tree, load_package

GOLDEN = REPO / "tests" / "golden"
EXPECTED = GOLDEN / "expected"
CASES = sorted(
    p for p in GOLDEN.iterdir() if p.is_file() and p.suffix in (".json", ".yaml", ".jsonl")
)
REGEN = os.environ.get("TOOLBIND_REGEN") == "1"


def render(case: Path) -> dict[str, str]:
    cwd = Path.cwd()
    os.chdir(REPO)  # sources are named relative to the repository, as `make generate` names them
    try:
        tree = generate_tree([case.relative_to(REPO)])
    finally:
        os.chdir(cwd)
    return {rel: text for rel, text in tree.files.items() if "/" in rel}


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_generated_package_matches_golden(case: Path) -> None:
    files = render(case)
    if REGEN:
        for rel in {rel.split("/")[0] for rel in files}:
            shutil.rmtree(EXPECTED / rel, ignore_errors=True)
        for rel, text in files.items():
            target = EXPECTED / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
    package = next(iter(files)).split("/")[0]
    on_disk = {
        p.relative_to(EXPECTED).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted((EXPECTED / package).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(on_disk) == sorted(files), "files differ: run `make regen` and review the diff"
    for rel, text in files.items():
        assert on_disk[rel] == text, (
            f"{rel} differs from the golden file: run `make regen` and review the diff"
        )


def golden(package: str) -> Any:
    return load_package(EXPECTED, package)


def test_features_package_behaves() -> None:
    m = golden("features")
    order: dict[str, Any] = {
        "_tool": "createOrder",
        "customerId": 7,
        "items": [{"sku": "ABC-12", "options": {"size": "L"}}, {"sku": "XYZ-1", "quantity": 2}],
        "shipTo": {"street": "1 Rue", "city": "Paris"},
        "priority": 2,
        "note": None,
        "ratio": 0.75,
        "category": {"name": "a", "children": [{"name": "b", "children": []}]},
        "choice": {"code": "x"},
        "magic": 1.5,
        "code": "bob",
        "pair": [1, "a"],
        "either": 3,
        "labels": ["urgent", "b"],
    }
    call = m.CreateOrderCall.model_validate(order)
    assert call.model_dump(mode="json", by_alias=True, exclude_unset=True) == order
    assert call.items[0].quantity == 1  # the schema's default, for Python readers
    assert call.shipTo is not None and call.shipTo.country == "FR"
    bad_values: list[tuple[str, Any]] = [
        ("customerId", 0),
        ("items", []),
        ("items", [{"sku": "abc"}]),
        ("shipTo", {"street": "", "city": "P"}),
        ("shipTo", {"street": "s", "city": "P", "zip": "1"}),
        ("priority", 4),
        ("ratio", 0.3),
        ("ratio", 0),
        ("tags", ["a", "a"]),
        ("magic", 1),
        ("nothing", 1),
        ("note", "x" * 501),
        ("code", "admin"),
        ("pair", [1, 2]),
        ("pair", [1, "a", None]),
        ("either", 12),
        ("labels", ["a"]),
        ("labels", ["urgent", "urgent"]),
    ]
    for key, value in bad_values:
        with pytest.raises(ValidationError):
            m.CreateOrderCall.model_validate({**order, key: value})
    (tool,) = m.TOOLS
    assert tool.activity == "orders.create"
    out = m.CreateOrderOutput.model_validate({"orderId": "x", "status": None})
    assert out.status is None


def test_hostile_spec_imports_without_running_anything(tmp_path: Path) -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import hostile; "
        "c = hostile.CallAdapter.validate_python({'_tool': 'evil\"\"\"tool', 'class': 'x', 'def': '{{ 7*7 }}'}); "
        "print(c.model_dump_json(by_alias=True, exclude_unset=True))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(EXPECTED)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["def"] == "{{ 7*7 }}"
    assert list(tmp_path.iterdir()) == []  # no canary, nothing written
    m = golden("hostile")
    first, second = m.TOOLS
    assert first.name == 'evil"""tool' and first.provider_name == "evil___tool"
    assert second.name == "Evil_Tool2"
    fields = m.EvilToolCall.model_fields
    aliases = {f.alias for f in fields.values()}
    assert {
        "class",
        "__init__",
        "__class__",
        "def",
        "None",
        "Field",
        "str",
        "ünïcödé",
        "a-b",
        "a_b",
        "A B",
        "",
        "123",
    } <= aliases
    assert len({name for name in fields}) == len(fields)
    with pytest.raises(ValidationError):
        m.EvilToolCall.model_validate({"_tool": 'evil"""tool', "class": "x", "def": "nope"})


def test_formats_package_carries_everything() -> None:
    m = golden("formats")
    names = [t.name for t in m.TOOLS]
    assert names == ["get_weather", "fetchWeather", "confirmAction", "searchProducts", "list_prs"]
    weather, fetch, confirm, search, prs = m.TOOLS
    assert weather.parameters["additionalProperties"] is False
    assert fetch.execution is not None and fetch.execution["headers"] == {
        "Authorization": "Bearer ${env.API_KEY}"
    }
    assert confirm.execution_type == "space" and confirm.visible is True
    assert search.parameters["required"] == ["searchQuery"]
    assert prs.output_schema == {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    }
    assert prs.annotations == {"readOnlyHint": True}
    assert prs.title == "List PRs"
    with pytest.raises(ValidationError):
        m.GetWeatherCall.model_validate(
            {"_tool": "get_weather", "city": "x", "unit": "c", "extra": 1}
        )
