"""The ``toolbind`` command: generate, --check, schema, exit codes, all-or-nothing output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import REPO
from toolbind.cli._generate import GENERATE, plain_arguments, say

SEEDS = REPO / "specs" / "seeds.yaml"


def toolbind(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolbind.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_version() -> None:
    result = toolbind("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("toolbind ")


def test_committed_generated_tree_is_up_to_date() -> None:
    result = toolbind("generate", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stderr


def test_generate_is_byte_identical_across_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert toolbind("generate", "specs", "-o", str(first)).returncode == 0
    assert toolbind("generate", "specs", "-o", str(second)).returncode == 0
    assert snapshot(first) == snapshot(second)
    assert snapshot(first) == {
        k: v for k, v in snapshot(REPO / "generated").items() if "__pycache__" not in k
    }
    for rel, data in snapshot(first).items():
        text = data.decode("utf-8")
        assert str(REPO) not in text, f"{rel} holds an absolute path"


def test_check_reports_a_stale_tree_with_a_diff(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert toolbind("generate", "specs", "-o", str(out)).returncode == 0
    models = out / "seeds" / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    result = toolbind("generate", "specs", "-o", str(out), "--check")
    assert result.returncode == 1
    assert "-# edited by hand" in result.stdout
    assert "stale" in result.stderr


def test_removed_tools_leave_no_files_behind(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(SEEDS, specs / "one.yaml")
    shutil.copy(SEEDS, specs / "two.yaml")
    out = tmp_path / "out"
    assert toolbind("generate", str(specs), "-o", str(out), cwd=tmp_path).returncode == 0
    assert (out / "two" / "models.py").exists()
    (specs / "two.yaml").unlink()
    assert toolbind("generate", str(specs), "-o", str(out), cwd=tmp_path).returncode == 0
    assert not (out / "two").exists()
    assert json.loads((out / "toolbind.json").read_text(encoding="utf-8"))["packages"] == {
        "one": "specs/one.yaml"
    }
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--no-such-flag"], "No such option"),
        (["schema"], "Missing argument"),
        (["frobnicate"], "No such command"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = toolbind(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_output_path_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("keep me", encoding="utf-8")
    result = toolbind("generate", str(SEEDS), "-o", str(target))
    assert result.returncode == 2
    assert "the output path is a file" in result.stderr
    assert target.read_text(encoding="utf-8") == "keep me"


def test_never_replaces_a_directory_toolbind_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.py").write_text("user code", encoding="utf-8")
    result = toolbind("generate", str(SEEDS), "-o", str(out))
    assert result.returncode == 2
    assert "holds files toolbind did not write" in result.stderr
    assert (out / "notes.py").read_text(encoding="utf-8") == "user code"


def test_missing_spec_is_a_located_error(tmp_path: Path) -> None:
    result = toolbind("generate", "nope.yaml", "-o", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 1
    assert (
        "nope.yaml#: error: no such file or directory — a spec file or a directory of specs"
        in result.stderr
    )
    assert not (tmp_path / "o").exists()


def test_a_url_given_as_a_spec_is_named_as_written_with_a_hint(tmp_path: Path) -> None:
    # It read "http:/127.0.0.1:18082/schema/openapi.json#: error: no such file or directory":
    # the URL folded into a path, and no word of how to compile a spec an API serves.
    url = "http://127.0.0.1:9/schema/openapi.json"
    result = toolbind("generate", url, "-o", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{url}#: error: a URL, which generate does not download" in result.stderr
    assert f"(hint: save it first (curl -o spec.json {url}) and pass the file" in result.stderr
    assert not (tmp_path / "o").exists()


def test_a_package_a_previous_run_made_from_another_spec_is_said_to_be_removed(
    tmp_path: Path,
) -> None:
    # One run per spec into one directory (Label Studio's, then Evidently's): the first
    # package was gone without a word, and its imports failed later.
    out = tmp_path / "out"
    assert toolbind("generate", str(SEEDS), "-o", str(out)).returncode == 0
    petstore = REPO / "specs" / "petstore.yaml"
    result = toolbind("generate", str(petstore), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["petstore", "toolbind.json"]
    assert f"{out}/seeds/: removed — its spec, " in result.stderr
    assert "seeds.yaml, is not among this run's (hint: pass every spec" in result.stderr
    again = toolbind("generate", str(petstore), "-o", str(out))
    assert "removed" not in again.stderr


def test_interrupted_swap_is_repaired(tmp_path: Path) -> None:
    """A run killed between its two renames leaves `.out.old-*`; the next run restores it first."""
    out = tmp_path / "out"
    assert toolbind("generate", str(SEEDS), "-o", str(out)).returncode == 0
    before = snapshot(out)
    out.rename(tmp_path / ".out.old-12345")
    assert toolbind("generate", str(SEEDS), "-o", str(out), "--check").returncode == 1
    assert toolbind("generate", str(SEEDS), "-o", str(out)).returncode == 0
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_schema_command_prints_json() -> None:
    result = toolbind("schema", "specs/seeds.yaml", "--tool", "weatherCheck")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["properties"]["calls"]["items"]["properties"]["_tool"] == {
        "const": "weatherCheck"
    }


def test_schema_for_an_unknown_tool_names_the_choices() -> None:
    result = toolbind("schema", "specs/seeds.yaml", "--tool", "nope")
    assert result.returncode == 1
    assert (
        "no tool named 'nope' — one of 'sentimentAnalysis', 'weatherCheck', 'sendEmail', 'greetUser'"
        in result.stderr
    )


def test_schema_of_a_directory_is_a_clear_error() -> None:
    result = toolbind("schema", "specs")
    assert result.returncode == 1
    assert "specs#: error: a directory — one spec file" in result.stderr


def test_every_generated_file_says_do_not_edit() -> None:
    for path in sorted((REPO / "generated").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            head = path.read_text(encoding="utf-8")[:200]
            assert "DO NOT EDIT" in head, path


def test_package_option_names_a_specs_package(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    for stem in ("a", "b"):
        shutil.copy(REPO / "specs" / "seeds.yaml", specs / f"{stem}.yaml")
    out = toolbind("generate", "specs", "-o", "gen", "--package", "specs/b.yaml=beta", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "gen").iterdir()) == ["a", "beta", "toolbind.json"]
    bare = toolbind("generate", "specs", "-o", "gen", "--package", "beta", cwd=tmp_path)
    assert bare.returncode == 2
    assert "say which spec: --package SPEC=NAME" in bare.stderr
    one = toolbind("generate", "specs/a.yaml", "-o", "one", "--package", "alpha", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert (tmp_path / "one" / "alpha" / "__init__.py").is_file()
    bad = toolbind("generate", "specs/a.yaml", "-o", "one", "--package", "a-b", cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "'a-b' (for specs/a.yaml) is not a usable Python package name" in bad.stderr


def test_a_diagnostic_repeated_at_one_place_is_printed_once_with_its_count(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "api.yaml"
    ops = "".join(
        f"  /r{n}:\n    get:\n      operationId: get{n}\n"
        "      parameters: [{$ref: '#/components/parameters/ctype'}]\n"
        "      responses: {'204': {description: none}}\n"
        for n in range(3)
    )
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n"
        + ops
        + "components:\n  parameters:\n    ctype: {name: Content-Type, in: header, "
        "schema: {type: string}}\n",
        encoding="utf-8",
    )
    result = toolbind("generate", str(spec), "-o", str(tmp_path / "out"), "-v")
    assert result.returncode == 0, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if "'Content-Type' is not a Call field" in ln]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{spec}#/components/parameters/ctype: note:")
    assert lines[0].endswith("[3 times: once per use]")


def test_diagnostics_and_test_reports_print_the_specs_text_verbatim(tmp_path: Path) -> None:
    """Found on a path like Google's ``/v1/a:x:b``: the console turned ``:x:`` into an emoji in
    a warning, and ``toolbind test`` dropped a ``[v2]`` from a file name as markup."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "[v2]api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /v1/a:x:b:\n    get:\n"
        "      operationId: getIt\n      parameters:\n"
        "        - {name: zz, in: path, required: true, schema: {enum: [':ok:']}}\n"
        "      responses: {'204': {description: none}}\n",
        encoding="utf-8",
    )
    result = toolbind("generate", "specs", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "specs/[v2]api.yaml#/paths/~1v1~1a:x:b/get/parameters/0: warning: path parameter 'zz' "
        "is not named in the path '/v1/a:x:b'"
    ) in result.stderr
    tested = toolbind("test", "specs", "--examples", "2", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.splitlines()[0].strip() == "specs/[v2]api.yaml"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["specs"],
        ["specs", "-o", "gen"],
        ["-o", "gen", "a.yaml", "b.yaml", "--check"],
        ["--tag", "x", "--tag", "y", "--path", "/p/*", "--operation", "op", "--strict", "--full"],
        [
            "--allow-ref",
            "http://x/",
            "--package",
            "a=b",
            "--mcp-config",
            "m.json",
            "-v",
            "--out",
            "o",
        ],
    ],
)
def test_generate_fast_path_parses_as_typer_does(argv: list[str]) -> None:
    """``toolbind generate`` skips typer's parsing (pydantic adapters) for plain command lines:
    the arguments must be the ones typer gives the command."""
    import typer.main
    from typer.core import TyperGroup

    from toolbind.cli import _app as cli

    direct = plain_arguments(argv)
    assert direct is not None
    command = typer.main.get_command(cli.app)
    assert isinstance(command, TyperGroup)
    context = command.commands["generate"].make_context("generate", argv)
    parsed = cast("dict[str, object]", context.params)

    def same(value: object) -> object:  # typer gives () or [] for a list option not given
        return None if value in ((), []) else value

    assert {k: same(v) for k, v in direct.items()} == {k: same(v) for k, v in parsed.items()}


@pytest.mark.parametrize(
    "argv",
    [
        *(["--out=gen"], ["-ogen"], ["--help"], ["--", "x"], ["-o", "a", "-o", "b"], ["--nope"]),
        *(["-o"], ["-o", ""], ["-"], [""], ["--check", "--check"], ["-o", "-x"]),
    ],
)
def test_generate_fast_path_leaves_the_rest_to_typer(argv: list[str]) -> None:
    assert plain_arguments(argv) is None


def test_generate_fast_path_knows_generates_parameters_as_typer_reads_them() -> None:
    """``toolbind generate`` runs without typer for plain command lines: the parameters it
    knows are those typer reads from ``cli.generate``'s declaration (names, options, flags,
    lists, types, defaults), so a new or changed option cannot be parsed otherwise."""
    from toolbind.cli import _app as cli

    assert cli.plain_parameters() == GENERATE


@pytest.mark.parametrize(
    "text",
    [
        "specs/a.yaml → out/a/",
        "specs/a.yaml#/paths/~1x/get: warning: 漢字 é — expected [red]x[/red] :ok: ",
        "x" * 500,
        "  spaces kept  ",
        "tab\there",
        "bell\x07 cr\r ff\x0c vt\x0b bs\x08 esc\x1b[31m",
        "nbsp\xa0 zwj\u200d ls\u2028",
    ],
)
def test_generate_says_off_a_terminal_exactly_what_rich_prints(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``generate`` prints without importing rich when stderr is no terminal: what it writes is
    byte for byte what rich writes there (text rich would change goes through rich)."""
    import io

    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    Console(file=buffer, highlight=False, soft_wrap=True, emoji=False).print(
        Text("\n").join([Text(text, style="red"), Text(text)])
    )
    say([(text, "red"), (text, None)])
    assert capsys.readouterr().err == buffer.getvalue()
