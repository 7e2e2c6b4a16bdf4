"""Hostile specs in every input format compile safely or are refused with located diagnostics.

The generator and the checks live in ``tests/adversarial.py`` (``make fuzz`` runs 10,000 specs);
here CI runs a few hundred: hypothesis-drawn ones (a failing in-process check shrinks), then
seeded ones, imported in batches in fresh interpreters and a sample type-checked by pyright.

Below them, one regression test per bug the fuzzer found, named after what it was.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.adversarial import CANARY, Case, Fuzzer, Outcome, RandomChooser, cases, make_case
from toolbind.compiler import SpecError, compile_to_directory
from toolbind.compiler.backends._source import docstring, names_in, py_str
from toolbind.compiler.naming import provider_tool_name


def _assert_clean(outcome: Outcome) -> None:
    assert outcome.bad == 0, "\n".join(outcome.failures[:10]) + "\n" + outcome.table()


@pytest.mark.slow  # fuzz: hostile specs through compile, import and pyright
def test_hypothesis_drawn_hostile_specs(tmp_path: Path) -> None:
    fuzzer = Fuzzer(tmp_path, pyright_every=1_000_000)

    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(cases())
    def check(case: Case) -> None:
        before = fuzzer.outcome.bad
        fuzzer.run(case)
        # in-process checks (crash, located diagnostics, escapes, AST, tools.json) shrink here
        assert fuzzer.outcome.bad == before, fuzzer.outcome.failures[-1]

    check()
    outcome = fuzzer.finish()
    _assert_clean(outcome)
    assert outcome.compiled > 0 and outcome.rejected > 0, outcome.table()


@pytest.mark.slow  # fuzz
def test_seeded_hostile_specs_import_and_type_check(tmp_path: Path) -> None:
    fuzzer = Fuzzer(tmp_path, pyright_every=10)
    for seed in range(200):
        fuzzer.run(make_case(RandomChooser(10_000_000 + seed)))
    outcome = fuzzer.finish()
    print(outcome.table())
    _assert_clean(outcome)
    assert outcome.compiled >= 60 and outcome.rejected >= 30, outcome.table()
    assert outcome.pyright_checked >= 5, outcome.table()
    assert sum(outcome.formats.values()) >= 200
    assert {k.split("-")[0] for k in outcome.formats} == {"seeds", "openai", "mcp", "openapi"}


# --------------------------------------------------------------------------------------------
# Regression tests: one per bug the fuzzer found.

TOOL: dict[str, Any] = {
    "tools": [{"name": "ping", "inputSchema": {"type": "object", "properties": {}}}]
}


def _import(out: Path, package: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = (
        "import sys, importlib; sys.path.insert(0, sys.argv[1]); "
        "m = importlib.import_module(sys.argv[2]); print(m.__doc__); "
        "print(importlib.import_module(sys.argv[2] + '.models').__doc__)"
    )
    return subprocess.run(
        [sys.executable, "-I", "-c", script, str(out), package],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _compile_named(tmp_path: Path, file_name: str, spec: object = TOOL) -> tuple[Path, str]:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / file_name).write_text(json.dumps(spec), encoding="utf-8")
    out = tmp_path / "out"
    tree = compile_to_directory([specs / file_name], out)
    (package,) = tree.packages
    return out, package


def test_quote_in_a_comment_or_docstring_does_not_hide_names_from_the_import_scanner() -> None:
    """The import scanner found names with a regex that took a ``"`` in a comment (or an
    unescaped one in a docstring, from a spec file name) for the start of a string running to
    the next quote: the names it hid were not imported (NameError on import)."""
    source = '# from "x\nA = Annotated[int, 1]\ny = "z"\n'
    assert {"Annotated", "A", "y"} <= names_in(source)
    docstring_source = '"""f "a" b""" \nB = Union[int, str]\nc = "d"\n'
    assert "Union" in names_in(docstring_source)


def _tokenizer_names(source: str) -> set[str]:
    return {
        t.string
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.NAME
    }


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.lists(st.text(), min_size=1, max_size=4), st.sampled_from(["", "r", "b", "f", "rb"]))
def test_the_import_scanner_sees_the_names_pythons_tokenizer_sees(
    texts: list[str], prefix: str
) -> None:
    """``names_in`` is a one-pass regex (``tokenize`` cost a third of a large compile); on code
    shaped like the generator's — hostile text in a header comment, string literals,
    docstrings, defaults — it finds exactly the names Python's tokenizer finds."""
    header = f"# DO NOT EDIT: generated from {texts[0]!r}."
    lines = [header, docstring(texts[-1]), "from typing import Annotated"]
    for i, text in enumerate(texts):
        literal = py_str(text)
        plain = "\\" not in literal and "{" not in literal and "}" not in literal
        if plain and literal.isascii():
            literal = prefix + literal
        lines.append(f"A_{i} = Annotated[int, Field(description={literal}, ge=1e5, le=0x1F)]")
        lines.append(f"class C{i}(Base):\n    {docstring(text)}\n    x: Literal[{literal}] = 1.5j")
    source = "\n".join(lines) + "\n"
    assert names_in(source) == _tokenizer_names(source)


def test_the_import_scanner_agrees_with_the_tokenizer_on_every_generated_module() -> None:
    modules = sorted(Path(__file__).resolve().parents[2].joinpath("generated").rglob("*.py"))
    assert len(modules) > 20
    for module in modules:
        source = module.read_text(encoding="utf-8")
        assert names_in(source) == _tokenizer_names(source), module


def test_quote_in_spec_file_name_does_not_hide_imports(tmp_path: Path) -> None:
    """End to end: the file name that found the bug (a backslash, a quote, a line break)."""
    out, package = _compile_named(tmp_path, "_.\\\"\nopen('x','w')##.json")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = _import(out, package, cwd)
    assert result.returncode == 0, result.stderr


def test_triple_quote_in_spec_file_name_cannot_close_the_module_docstring(tmp_path: Path) -> None:
    """The file name went into module docstrings as a ``repr``, which keeps ``\"\"\"``: a file
    named ``x\"\"\";__import__("os").system(...);\"\"\".json`` ran code on import."""
    name = f'x""";__import__("os").system("touch {CANARY}");"""y.json'
    out, package = _compile_named(tmp_path, name)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = _import(out, package, cwd)
    assert result.returncode == 0, result.stderr
    assert list(cwd.iterdir()) == []
    assert name in result.stdout  # the docstrings name the file, quotes and all


@pytest.mark.parametrize("where", ["parent", "absolute", "symlink"])
def test_ref_to_a_file_outside_the_spec_directory_is_refused(tmp_path: Path, where: str) -> None:
    """``$ref: ../../etc/passwd`` was read, and its text quoted in the error message."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"type": "string", "description": "TOP-SECRET"}))
    specs = tmp_path / "specs"
    specs.mkdir()
    target = {"parent": "../secret.json", "absolute": str(secret), "symlink": "link.json"}[where]
    if where == "symlink":
        (specs / "link.json").symlink_to(secret)
    spec = {
        "tools": [
            {
                "name": "t",
                "inputSchema": {"type": "object", "properties": {"a": {"$ref": target}}},
            }
        ]
    }
    (specs / "s.json").write_text(json.dumps(spec))
    with pytest.raises(SpecError) as info:
        compile_to_directory([specs / "s.json"], tmp_path / "out")
    (error,) = [d for d in info.value.diagnostics if d.severity == "error"]
    assert error.loc.pointer == "/tools/0/inputSchema/properties/a/$ref"
    assert "outside the spec's directory" in error.found
    assert "TOP-SECRET" not in str(info.value)
    assert not (tmp_path / "out").exists()


def test_ref_to_a_file_below_the_spec_directory_still_works(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    (specs / "shared").mkdir(parents=True)
    (specs / "shared" / "defs.json").write_text(json.dumps({"Name": {"type": "string"}}))
    spec = {
        "tools": [
            {
                "name": "t",
                "inputSchema": {
                    "type": "object",
                    "properties": {"a": {"$ref": "shared/defs.json#/Name"}},
                },
            }
        ]
    }
    (specs / "s.json").write_text(json.dumps(spec))
    compile_to_directory([specs / "s.json"], tmp_path / "out")


def test_nul_in_a_ref_file_name_is_a_located_error(tmp_path: Path) -> None:
    """``{"$ref": "\\u0000"}`` raised ValueError (embedded null byte) from ``Path.resolve``."""
    spec = {
        "tools": [
            {
                "name": "t",
                "inputSchema": {"type": "object", "properties": {"a": {"$ref": "\x00.json"}}},
            }
        ]
    }
    with pytest.raises(SpecError) as info:
        _compile_named(tmp_path, "s.json", spec)
    (error,) = [d for d in info.value.diagnostics if d.severity == "error"]
    assert error.loc.pointer == "/tools/0/inputSchema/properties/a/$ref"


def test_tool_name_ending_in_a_newline_gets_a_provider_safe_name(tmp_path: Path) -> None:
    """``^[a-zA-Z0-9_-]{1,64}$`` with ``re.match`` accepts ``"y\\n"`` (``$`` matches before a
    final newline), so a tool named ``"y\\n"`` was offered to providers under that name."""
    assert provider_tool_name("y\n") == "y"
    spec: dict[str, Any] = {
        "tools": [{"name": "y\n", "inputSchema": {"type": "object", "properties": {}}}]
    }
    out, package = _compile_named(tmp_path, "s.json", spec)
    data = json.loads((out / package / "tools.json").read_text(encoding="utf-8"))
    assert [t["provider_name"] for t in data["tools"]] == ["y"]
