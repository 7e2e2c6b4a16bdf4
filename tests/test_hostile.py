"""Hostile strings anywhere in a spec never yield code that fails to import or runs anything.

Hypothesis builds MCP tool lists whose names, property names, descriptions, titles, defaults,
enums, consts, patterns and formats are drawn from quotes, triple quotes, backslashes, line
breaks, NUL, bidi controls, Python keywords and dunders, ``__import__`` payloads and template
syntax. Each spec either compiles, or is refused with located diagnostics; compiled packages
import in a fresh interpreter without writing anything (a canary file never appears), keep
every JSON name, and map distinct names to distinct Python fields.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from toolbind.compiler import SpecError, compile_to_directory

FRAGMENTS = [
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\n",
    "\n",
    "\r",
    "\x00",
    "\u202e",
    "\u2028",
    "\ufeff",
    "#",
    "{{ 7*7 }}",
    "{% raw %}",
    "{#",
    "__import__('os').system('touch canary')",
    "open('canary', 'w')",
    "class",
    "def",
    "None",
    "True",
    "__init__",
    "__class__",
    "model_config",
    "model_dump",
    "json",
    "schema",
    "tool",
    "output",
    "_tool",
    "Field",
    "str",
    "../../etc/passwd",
    "/tmp/x",
    "ünï",
    "İ",
    "ﬁ",
    "a-b",
    "a_b",
    "A B",
    "x" * 300,
]

hostile = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), min_size=1, max_size=4
).map("".join)


@st.composite
def property_schema(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = draw(
        st.sampled_from(
            [
                {"type": "string"},
                {"type": "integer"},
                {"type": "array", "items": {"type": "string"}},
                {"type": "object", "properties": {}},
            ]
        )
    )
    schema = dict(schema)
    if draw(st.booleans()):
        schema["description"] = draw(hostile)
    if draw(st.booleans()):
        schema["title"] = draw(hostile)
    if schema["type"] == "string":
        choice = draw(st.integers(0, 4))
        if choice == 1:
            schema["enum"] = draw(st.lists(hostile, min_size=1, max_size=3, unique=True))
        elif choice == 2:
            schema["const"] = draw(hostile)
        elif choice == 3:
            schema["pattern"] = re.escape(draw(hostile))
        elif choice == 4:
            schema["default"] = draw(hostile)
        if draw(st.booleans()):
            schema["format"] = draw(hostile)
    if schema["type"] == "object":
        schema["properties"] = {draw(hostile): {"type": "string", "description": draw(hostile)}}
    return schema


@st.composite
def hostile_spec(draw: st.DrawFn) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        props = draw(st.dictionaries(hostile, property_schema(), min_size=1, max_size=4))
        tool: dict[str, Any] = {
            "name": draw(hostile),
            "description": draw(hostile),
            "inputSchema": {
                "type": "object",
                "properties": props,
                "required": draw(st.lists(st.sampled_from(sorted(props)), unique=True)),
            },
        }
        tools.append(tool)
    return {"tools": tools}


IMPORT_CHECK = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib
module = importlib.import_module(sys.argv[2])
report = []
for tool in module.TOOLS:
    fields = tool.call_model.model_fields
    aliases = [name if f.alias is None else f.alias for name, f in fields.items()]
    tool.call_model.model_rebuild(force=True)
    report.append({"name": tool.name, "aliases": aliases, "fields": list(fields)})
print(json.dumps(report))
"""


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile_spec())
def test_hostile_specs_compile_safely_or_are_refused(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "specs").mkdir()
        source = root / "specs" / "evil.json"
        source.write_text(json.dumps(spec), encoding="utf-8")
        out = root / "out"
        try:
            compile_to_directory([source], out)
        except SpecError as exc:
            event("refused with diagnostics")
            errors = [d for d in exc.diagnostics if d.severity == "error"]
            assert errors
            for d in errors:
                assert d.render().startswith(str(d.loc.file)), d.render()
            assert not out.exists()
            return
        event("compiled")
        canary_dir = root / "cwd"
        canary_dir.mkdir()
        result = subprocess.run(
            [sys.executable, "-c", IMPORT_CHECK, str(out), "evil"],
            cwd=canary_dir,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert list(canary_dir.iterdir()) == []
        written = {p.relative_to(root).parts[0] for p in root.rglob("*")}
        assert written <= {"specs", "out", "cwd"}
        report = json.loads(result.stdout)
        assert [t["name"] for t in report] == [t["name"] for t in spec["tools"]]
        for tool, entry in zip(spec["tools"], report, strict=True):
            expected = {
                "_tool",
                "_activity",
                "_reasoningForCall",
                "_output",
                *tool["inputSchema"]["properties"],
            }
            assert sorted(entry["aliases"]) == sorted(expected)
            assert len(set(entry["fields"])) == len(entry["fields"])
