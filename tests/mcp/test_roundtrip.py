"""Round trip: a package served by ``toolbind serve`` and imported back by
the MCP client at build time (``toolbind generate`` on an MCP configuration naming the server)
yields the same tools — names, titles, descriptions, input and output schemas, annotations —
for every tool of specs/ and of the MCP corpus files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.exports import mcp_tools

pytest.importorskip("mcp", reason="the mcp extra is in the test extra (make install)")

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus" / "tools" / "github-mcp-server"

GROUPS = {  # served together (one server each; tool names are unique within a group)
    "specs": [REPO / "specs" / "seeds.yaml", REPO / "specs" / "petstore.yaml"],
    "specs-github-mcp": [REPO / "specs" / "github_mcp.json"],
    "corpus-github-mcp-server": [CORPUS],
}


def _listing(tools: Any) -> list[dict[str, Any]]:
    """The ``tools/list`` toolbind serves for ``tools``, local ``$ref``s inlined: one package
    of many tools shares repeated subschemas through ``$defs`` where one tool per package does
    not, and that is representation, not meaning."""
    exported = mcp_tools(tools, [t.name for t in tools])["tools"]
    out: list[dict[str, Any]] = []
    for entry in exported:
        entry = dict(entry)
        for key in ("inputSchema", "outputSchema"):
            if key in entry:
                entry[key] = _inline(entry[key], entry[key].get("$defs", {}), ())
        out.append(entry)
    return sorted(out, key=lambda t: t["name"])


def _inline(value: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        ref = obj.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in seen:
            target = _inline(defs[ref.rpartition("/")[2]], defs, (*seen, ref))
            rest = {k: _inline(v, defs, seen) for k, v in obj.items() if k != "$ref"}
            return {**target, **rest} if rest else target
        return {k: _inline(v, defs, seen) for k, v in obj.items() if k != "$defs"}
    if isinstance(value, list):
        return [_inline(v, defs, seen) for v in cast("list[Any]", value)]
    return value


@pytest.mark.slow
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_served_then_imported_back_yields_the_same_tools(group: str, tmp_path: Path) -> None:
    specs = GROUPS[group]
    if not all(p.exists() for p in specs):
        pytest.skip(f"{group}: not present")
    original_tree = compile_to_directory(specs, tmp_path / "original")
    originals = [
        tool
        for name in sorted(original_tree.packages)
        for tool in load_package(tmp_path / "original", name).TOOLS
    ]
    names = [t.name for t in originals]
    # every tool gets an Activity (a no-op), so every tool is served
    acts = tmp_path / "noop_acts.py"
    acts.write_text(
        "def _noop(call):\n    return None\n\n"
        f"ACTIVITIES = {{name: _noop for name in {json.dumps(names)}}}\n",
        encoding="utf-8",
    )
    config = tmp_path / "served.json"
    config.write_text(
        json.dumps(
            {
                "mcp": {
                    "servers": [
                        {
                            "name": "toolbind",
                            "command": sys.executable,
                            "args": [
                                "-m",
                                "toolbind.cli",
                                "serve",
                                *map(str, specs),
                                "--activities",
                                str(acts),
                            ],
                            "cwd": str(REPO),
                        }
                    ]
                }
            }
        ),
        encoding="utf-8",
    )
    package = "back_" + group.replace("-", "_")  # load_package keeps modules by name
    compile_to_directory([config], tmp_path / "back", package_names={str(config): package})
    back = load_package(tmp_path / "back", package)
    assert sorted(t.name for t in back.TOOLS) == sorted(names)
    got, want = _listing(back.TOOLS), _listing(originals)
    assert got == want, _first_difference(got, want)
    for tool in back.TOOLS:  # imported MCP tools run on their server
        assert (tool.execution_type, tool.visible) == ("gateway", False)


def _first_difference(a: Any, b: Any, at: str = "") -> str | None:
    """Where two JSON values first differ (for the assertion message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        left, right = cast("dict[str, Any]", a), cast("dict[str, Any]", b)
        for k in sorted(set(left) | set(right)):
            if k not in left or k not in right:
                return f"{at}/{k}: present on one side only"
            found = _first_difference(left[k], right[k], f"{at}/{k}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        left_items, right_items = cast("list[Any]", a), cast("list[Any]", b)
        if len(left_items) == len(right_items):
            for i, (x, y) in enumerate(zip(left_items, right_items, strict=True)):
                found = _first_difference(x, y, f"{at}/{i}")
                if found:
                    return found
            return None
    shown_a, shown_b = json.dumps(a)[:200], json.dumps(b)[:200]
    return None if a == b else f"{at}: {shown_a} vs {shown_b}"
