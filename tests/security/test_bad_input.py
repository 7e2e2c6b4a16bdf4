"""Bad input at every entry point of the ``toolbind`` command, beyond the spec corpus.

* Command-line arguments of ``generate``, ``schema``, ``scaffold`` and ``test``: missing files,
  directories, named pipes, broken links, binary files, unreadable files and directories, unknown
  flags and bad flag values, output paths that are files, inside files, hold the specs or hold
  files toolbind did not write. Each case checks the exact exit code (1 error, 2 usage), a located
  message, no traceback, and that the working directory (with a previous output in it) is
  byte-for-byte unchanged.
* Documents built to exhaust the parser or the compiler: YAML alias bombs (values and text),
  10^5 levels of nesting, multi-megabyte specs. These run in a subprocess under an address-space
  limit (RLIMIT_AS) and a timeout, so a regression that expands or recurses fails instead of
  hanging the suite.
* ``$ref`` cycles through files, and where ``$ref``s may lead: files outside the spec's directory
  and URLs are refused unless ``--allow-ref`` allows them; allowed URLs are downloaded from a real
  server on 127.0.0.1 with a timeout, a size bound and no redirects.

Unreadable files: the tests run as root, whom ``chmod 000`` does not stop. The CLI is run with
the capabilities that let root bypass file permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
dropped from its bounding set by ``setpriv``, so the kernel really refuses the read.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._servers import serve_asgi
from toolbind.compiler import SpecError, generate_tree

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from toolbind.cli import main; main()"]
SETPRIV = shutil.which("setpriv")
# Run as root without the capabilities that bypass file permissions: chmod 000 then holds.
UNPRIVILEGED = (
    [SETPRIV, "--bounding-set=-dac_override,-dac_read_search"]
    if os.geteuid() == 0 and SETPRIV
    else []
)
CAN_BE_REFUSED = os.geteuid() != 0 or bool(UNPRIVILEGED)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env.update({"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"})
    return env


def run_cli(
    *args: str, cwd: Path, prefix: list[str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), *CLI, *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Every entry below ``root``: files by content, links by target, the rest by kind."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_dir():
            out[rel] = b"<dir>"
        elif path.is_file():
            out[rel] = path.read_bytes()
        else:
            out[rel] = b"<special>"
    return out


# -- the command-line corpus ----------------------------------------------------------------


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A previous toolbind output of the seeds' spec (copied into each case's directory)."""
    work = tmp_path_factory.mktemp("previous")
    shutil.copy(ROOT / "specs" / "seeds.yaml", work / "seeds.yaml")
    result = run_cli("generate", "seeds.yaml", "-o", "out", cwd=work)
    assert result.returncode == 0, result.stderr
    return work / "out"


@pytest.fixture
def work(tmp_path: Path, previous: Path) -> Iterator[Path]:
    """A working directory holding every kind of bad input, and a previous output ``out/``."""
    shutil.copy(ROOT / "specs" / "seeds.yaml", tmp_path / "seeds.yaml")
    shutil.copy(ROOT / "specs" / "petstore.yaml", tmp_path / "petstore.yaml")
    shutil.copytree(previous, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    (tmp_path / "nospecs").mkdir()
    (tmp_path / "nospecs" / "notes.txt").write_text("not a spec", encoding="utf-8")
    (tmp_path / "dir.json").mkdir()
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "broken.json").symlink_to("nowhere.json")
    (tmp_path / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (tmp_path / "afile").write_text("keep me", encoding="utf-8")
    (tmp_path / "mine.py").write_text("# your code\n", encoding="utf-8")
    locked = tmp_path / "locked.json"
    locked.write_text('{"tools": []}', encoding="utf-8")
    locked.chmod(0)
    lockeddir = tmp_path / "lockeddir"
    lockeddir.mkdir()
    shutil.copy(ROOT / "specs" / "seeds.yaml", lockeddir / "seeds.yaml")
    lockeddir.chmod(0)
    # a previous output that also holds a spec, and one with a file toolbind did not write
    shutil.copytree(previous, tmp_path / "outspec")
    shutil.copy(ROOT / "specs" / "seeds.yaml", tmp_path / "outspec" / "inside.yaml")
    shutil.copytree(previous, tmp_path / "outnotes")
    (tmp_path / "outnotes" / "notes.md").write_text("mine", encoding="utf-8")
    shutil.copytree(previous, tmp_path / "outbad")
    (tmp_path / "outbad" / "toolbind.json").write_text("not json", encoding="utf-8")
    yield tmp_path
    lockeddir.chmod(0o755)


NO_OPENAPI = (
    "toolbind: error: --tag nomatch: selects OpenAPI operations, and no spec given is an "
    "OpenAPI document — expected an OpenAPI spec, or no --tag/--path/--operation"
)
NO_SPECS = "the directory holds no spec files — files ending in .json, .jsonl, .yaml, .yml"
NOT_WRITTEN = "the directory holds files toolbind did not write"

# (arguments, exit code, a line of stderr or a part of one, needs an unreadable file)
CASES: list[tuple[list[str], int, str]] = [
    # generate: inputs
    (["generate", "missing.yaml"], 1, "missing.yaml#: error: no such file or directory"),
    (["generate", "empty"], 1, f"empty#: error: {NO_SPECS}"),
    (["generate", "nospecs"], 1, f"nospecs#: error: {NO_SPECS}"),
    (["generate", "dir.json"], 1, f"dir.json#: error: {NO_SPECS}"),
    (["generate", "pipe.json"], 1, "pipe.json#: error: a named pipe — a spec file"),
    (
        ["generate", "broken.json"],
        1,
        "broken.json#: error: a symbolic link to a missing file (nowhere.json) — a spec file",
    ),
    (["generate", "/dev/zero"], 1, "/dev/zero#: error: a character device — a spec file"),
    (
        ["generate", "binary.json"],
        1,
        "binary.json:1:1: error: byte 0x89 is not valid UTF-8 — a UTF-8 encoded JSON or YAML "
        "file (hint: save the file as UTF-8)",
    ),
    (
        ["generate", "locked.json"],
        1,
        "locked.json#: error: the file cannot be read (Permission denied) — a readable spec file",
    ),
    (
        ["generate", "lockeddir"],
        1,
        "lockeddir#: error: cannot be read (Permission denied) — a readable spec file or "
        "directory of specs",
    ),
    (
        ["generate", "lockeddir/seeds.yaml"],
        1,
        "lockeddir/seeds.yaml#: error: cannot be read (Permission denied)",
    ),
    (["generate", "seeds.yaml", "missing.yaml"], 1, "missing.yaml#: error: no such file"),
    # generate: flags
    (["generate", "--no-such-flag"], 2, "No such option: --no-such-flag"),
    (["generate", "seeds.yaml", "-o"], 2, "Option '-o' requires an argument."),
    (["generate", "seeds.yaml", "--tag", "nomatch"], 2, NO_OPENAPI),
    (
        ["generate", "petstore.yaml", "--operation", "nope"],
        2,
        "toolbind: error: --operation nope: matches no operation of petstore.yaml — expected a "
        "tag, path glob or operationId the spec has",
    ),
    (
        ["generate", "petstore.yaml", "--path", "/nothing*"],
        2,
        "toolbind: error: --path /nothing*: matches no operation of petstore.yaml",
    ),
    (
        ["generate", "seeds.yaml", "--allow-ref", "nodir"],
        2,
        "toolbind: error: --allow-ref nodir: no such directory — expected a directory or a URL",
    ),
    (
        ["generate", "seeds.yaml", "--allow-ref", "ftp://host/x"],
        2,
        "toolbind: error: --allow-ref ftp://host/x: expected a directory or an http(s) URL prefix",
    ),
    # generate: the output directory
    (
        ["generate", "seeds.yaml", "-o", "afile"],
        2,
        "toolbind: error: afile: the output path is a file — expected a directory",
    ),
    (
        ["generate", "seeds.yaml", "-o", "afile/sub"],
        2,
        "toolbind: error: afile/sub: afile is a file — expected -o to name a directory",
    ),
    (
        ["generate", "seeds.yaml", "--check", "-o", "afile/sub"],
        2,
        "toolbind: error: afile/sub: afile is a file — expected -o to name a directory",
    ),
    (
        ["generate", "seeds.yaml", "-o", "."],
        2,
        "toolbind: error: .: the output directory holds the spec seeds.yaml",
    ),
    (
        ["generate", "missing.yaml", "-o", "nospecs"],
        2,
        f"toolbind: error: nospecs: {NOT_WRITTEN} (no ",
    ),
    (["generate", "seeds.yaml", "-o", "nospecs"], 2, f"toolbind: error: nospecs: {NOT_WRITTEN}"),
    (
        ["generate", "outspec/inside.yaml", "-o", "outspec"],
        2,
        "toolbind: error: outspec: the output directory holds the spec outspec/inside.yaml",
    ),
    (
        ["generate", "seeds.yaml", "-o", "outnotes"],
        2,
        f"toolbind: error: outnotes: {NOT_WRITTEN} (notes.md) — expected only the packages its "
        "toolbind.json lists",
    ),
    (
        ["generate", "seeds.yaml", "-o", "outbad"],
        2,
        "toolbind: error: outbad: toolbind.json is not a manifest toolbind wrote",
    ),
    # schema
    (["schema", "missing.yaml"], 1, "missing.yaml#: error: no such file or directory"),
    (["schema", "empty"], 1, "empty#: error: a directory — one spec file"),
    (["schema", "pipe.json"], 1, "pipe.json#: error: a named pipe — a spec file"),
    (["schema", "broken.json"], 1, "broken.json#: error: a symbolic link to a missing file"),
    (["schema", "binary.json"], 1, "binary.json:1:1: error: byte 0x89 is not valid UTF-8"),
    (["schema", "locked.json"], 1, "locked.json#: error: the file cannot be read"),
    (["schema"], 2, "Missing argument"),
    (["schema", "seeds.yaml", "--format", "bogus"], 2, "toolbind: error: --format 'bogus':"),
    (["schema", "seeds.yaml", "--format"], 2, "Option '--format' requires an argument."),
    (["schema", "seeds.yaml", "--explicit"], 2, "--explicit goes with a provider --format"),
    (["schema", "seeds.yaml", "--tool", "nope"], 1, "seeds.yaml#: error: no tool named 'nope'"),
    (
        ["schema", "seeds.yaml", "--output-schema", "pipe.json"],
        1,
        "pipe.json#: error: a named pipe — a spec file",
    ),
    (
        ["schema", "seeds.yaml", "--output-schema", "missing.json"],
        1,
        "missing.json#: error: no such file",
    ),
    (
        ["schema", "seeds.yaml", "--output-schema", "locked.json"],
        1,
        "locked.json#: error: the file cannot be read (Permission denied)",
    ),
    (
        ["schema", "seeds.yaml", "--format", "mcp", "--output-schema", "x.json"],
        2,
        "--output-schema goes with --format composed only",
    ),
    # scaffold
    (["scaffold", "missing.yaml", "-o", "new.py"], 1, "missing.yaml#: error: no such file"),
    (["scaffold", "pipe.json", "-o", "new.py"], 1, "pipe.json#: error: a named pipe"),
    (["scaffold", "locked.json", "-o", "new.py"], 1, "locked.json#: error: the file cannot be"),
    (["scaffold", "seeds.yaml"], 2, "Missing option '--out'"),
    (
        ["scaffold", "seeds.yaml", "-o", "mine.py"],
        2,
        "toolbind: error: mine.py: already exists — scaffold writes a new file only",
    ),
    (
        ["scaffold", "seeds.yaml", "-o", "broken.json"],
        2,
        "toolbind: error: broken.json: already exists",
    ),
    (
        ["scaffold", "seeds.yaml", "-o", "afile/x.py"],
        2,
        "toolbind: error: afile/x.py: afile is a file — expected -o to name a file in a directory",
    ),
    # test
    (["test", "missing.yaml"], 1, "missing.yaml#: error: no such file or directory"),
    (["test", "empty"], 1, f"empty#: error: {NO_SPECS}"),
    (["test", "pipe.json"], 1, "pipe.json#: error: a named pipe — a spec file"),
    (["test", "locked.json"], 1, "locked.json#: error: the file cannot be read"),
    (["test", "lockeddir"], 1, "lockeddir#: error: cannot be read (Permission denied)"),
    (["test", "seeds.yaml", "--examples", "0"], 2, "Invalid value for '--examples'"),
    (["test", "seeds.yaml", "--examples", "many"], 2, "Invalid value for '--examples'"),
    (["test", "seeds.yaml", "--tool", "nope"], 2, "toolbind: error: --tool nope: no such tool"),
    (
        ["test", "seeds.yaml", "--activities", "no_such_module_x"],
        2,
        "toolbind: error: --activities cannot import no_such_module_x",
    ),
    (["test", "seeds.yaml", "--activities", "afile"], 2, "--activities afile: not a Python"),
    (["frobnicate"], 2, "No such command 'frobnicate'"),
]


def _case_id(case: tuple[list[str], int, str]) -> str:
    return " ".join(case[0])[:60]


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_bad_command_line(case: tuple[list[str], int, str], work: Path) -> None:
    args, code, message = case
    needs_refusal = any("locked" in a for a in args)
    if needs_refusal and not CAN_BE_REFUSED:
        pytest.skip("running as root without setpriv: file permissions cannot be enforced")
    before = snapshot(work)
    result = run_cli(*args, cwd=work, prefix=UNPRIVILEGED if needs_refusal else None)
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == code, f"exit {result.returncode}\n{result.stderr}"
    assert message in result.stderr, result.stderr
    if code == 1 and args[0] != "frobnicate":
        # spec errors: every diagnostic line is located, then the count
        *lines, count = result.stderr.strip().splitlines()
        assert count.endswith(("1 error", "errors")), result.stderr
        for line in lines:
            assert ": error: " in line or ": warning: " in line, line
    assert result.stdout == ""
    assert snapshot(work) == before, "the working directory was touched"


def test_compiling_leaves_no_cache_in_the_working_directory(work: Path) -> None:
    """Regression: formatting the generated code left ruff's `.ruff_cache/` in the directory
    toolbind was run from (and every failed run touched it)."""
    before = set(os.listdir(work))
    assert run_cli("generate", "seeds.yaml", "-o", "fresh", cwd=work).returncode == 0
    assert run_cli("scaffold", "seeds.yaml", "-o", "acts.py", cwd=work).returncode == 0
    assert set(os.listdir(work)) - before == {"fresh", "acts.py"}


def test_output_inside_the_spec_directory_is_allowed(work: Path) -> None:
    """Specs are the files at the top of a directory: an output below it never mixes with them."""
    specs = work / "specs"
    specs.mkdir()
    shutil.copy(work / "seeds.yaml", specs / "seeds.yaml")
    for _ in range(2):  # the second run finds the first one's output beside the spec
        result = run_cli("generate", "specs", "-o", "specs/out", cwd=work)
        assert result.returncode == 0, result.stderr
    assert (specs / "out" / "seeds" / "models.py").is_file()
    assert sorted(p.name for p in specs.iterdir()) == ["out", "seeds.yaml"]


def test_spec_inside_previous_output_is_never_deleted(work: Path) -> None:
    """Regression: `generate out/x.yaml -o out` replaced `out`, deleting the spec it compiled."""
    before = (work / "outspec" / "inside.yaml").read_bytes()
    result = run_cli("generate", "outspec/inside.yaml", "-o", "outspec", cwd=work)
    assert result.returncode == 2
    assert (work / "outspec" / "inside.yaml").read_bytes() == before


def test_files_beside_previous_packages_are_never_deleted(work: Path) -> None:
    """Regression: a file the user put into a previous output was deleted by the next run."""
    result = run_cli("generate", "seeds.yaml", "-o", "outnotes", cwd=work)
    assert result.returncode == 2
    assert (work / "outnotes" / "notes.md").read_text(encoding="utf-8") == "mine"
    (work / "outnotes" / "notes.md").unlink()
    assert run_cli("generate", "seeds.yaml", "-o", "outnotes", cwd=work).returncode == 0


def test_named_pipe_does_not_hang(work: Path) -> None:
    """Regression: reading a FIFO named as a spec blocked forever (no writer ever comes)."""
    result = run_cli("generate", "pipe.json", "-o", "o", cwd=work, timeout=60)
    assert result.returncode == 1
    assert not (work / "o").exists()


# -- documents built to exhaust the parser and the compiler ---------------------------------

MEMORY_LIMIT = 2 * 1024**3  # address space for one CLI run: generous for a spec, fatal for a bomb


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_bounded(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """The CLI under an address-space limit and a timeout: an explosion fails, not hangs."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
        preexec_fn=_limited,
    )


def _refused(result: subprocess.CompletedProcess[str], located: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "MemoryError" not in result.stderr, result.stderr[-3000:]
    assert result.returncode == 1, f"exit {result.returncode}: {result.stderr[-3000:]}"
    assert result.stderr.startswith(located), result.stderr[:3000]


BOMBS = {
    # 9 levels of 9 aliases: 9^9 = 387 million values once expanded
    "values": "\n".join(
        ["a: &a [x, x, x, x, x, x, x, x, x]"]
        + [
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ]
    ),
    # one 1 MB string named 2000 times: 2 GB of text once expanded
    "text": "\n".join(
        [
            "greetUser:",
            "  type: object",
            "  properties:",
            "    _tool: {type: string, const: greetUser}",
            "    a: {type: string, description: &s " + "y" * 1_000_000 + "}",
        ]
        + [f"    p{i}: {{type: string, description: *s}}" for i in range(2000)]
    ),
    # aliases nested in maps: each level names the previous one 10 times (10^8 values)
    "maps": "\n".join(
        ["l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10}"]
        + [
            f"l{n}: &l{n} {{{', '.join(f'k{k}: *l{n - 1}' for k in range(10))}}}"
            for n in range(1, 9)
        ]
    ),
}


@pytest.mark.parametrize("kind", ["values", "maps"])
def test_yaml_alias_bombs_are_refused_in_bounded_time_and_memory(kind: str, tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMBS[kind] + "\n", encoding="utf-8")
    result = run_bounded("generate", "bomb.yaml", "-o", "out", cwd=tmp_path)
    _refused(result, "bomb.yaml#: error: YAML aliases expand the document")
    assert not (tmp_path / "out").exists()


def test_yaml_string_alias_bomb_is_refused(tmp_path: Path) -> None:
    """Regression: a long string named by many aliases passed the values bound and compiled
    into output hundreds of times larger than the spec (221 kB → 97 MB in 68 s)."""
    (tmp_path / "bomb.yaml").write_text(BOMBS["text"] + "\n", encoding="utf-8")
    result = run_bounded("generate", "bomb.yaml", "-o", "out", cwd=tmp_path)
    _refused(result, "bomb.yaml#: error: YAML aliases expand the document's text from")


def test_shared_text_below_the_bound_compiles(tmp_path: Path) -> None:
    """An alias of a short description, as specs use them, is not a bomb."""
    lines = [
        "greetUser:",
        "  type: object",
        "  properties:",
        "    _tool: {type: string, const: greetUser}",
        "    a: {type: string, description: &d The user's name}",
        *[f"    p{i}: {{type: string, description: *d}}" for i in range(50)],
    ]
    (tmp_path / "ok.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_bounded("generate", "ok.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


DEEP = 100_000
NESTINGS = {
    "json_arrays.json": "[" * DEEP + "]" * DEEP,
    "json_objects.json": '{"a":' * DEEP + "1" + "}" * DEEP,
    "json_unclosed.json": "[" * DEEP,
    "yaml_flow.yaml": "a: " + "[" * DEEP + "]" * DEEP,
    "yaml_flow_maps.yaml": "a: " + "{b: " * DEEP + "1" + "}" * DEEP,
    "yaml_block.yaml": "".join(f"{' ' * (2 * i)}k:\n" for i in range(3000)) + " " * 6000 + "v\n",
    "yaml_dashes.yaml": "- " * DEEP + "x\n",
}


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_deep_nesting_is_a_located_error(name: str, tmp_path: Path) -> None:
    """10^5 levels (3000 for indented YAML) are refused with the file named: no RecursionError,
    no crash of the C parser, bounded memory."""
    (tmp_path / name).write_text(NESTINGS[name], encoding="utf-8")
    result = run_bounded("generate", name, "-o", "out", cwd=tmp_path)
    assert "RecursionError" not in result.stderr
    assert result.returncode == 1, result.stderr[-2000:]
    first = result.stderr.splitlines()[0]
    assert first.startswith(name), first
    assert "nested more than 256 levels" in first or "invalid JSON" in first, first


def _big_mcp_spec(target_bytes: int) -> dict[str, Any]:
    """An MCP tool list of about ``target_bytes``: a few tools, long descriptions and enums."""
    tools: list[dict[str, Any]] = []
    size = 0
    i = 0
    while size < target_bytes:
        description = f"Tool {i}. " + "Lorem ipsum dolor sit amet. " * 4000  # ~110 kB
        tool = {
            "name": f"tool_{i}",
            "description": description,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "choice": {"type": "string", "enum": [f"v{i}_{k}" for k in range(2000)]},
                    "text": {"type": "string", "description": description[:5000]},
                },
                "required": ["choice"],
            },
        }
        tools.append(tool)
        size += len(json.dumps(tool))
        i += 1
    return {"tools": tools}


def test_multi_megabyte_spec_compiles_in_bounded_memory(tmp_path: Path) -> None:
    spec = _big_mcp_spec(6 * 1024 * 1024)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert path.stat().st_size > 6 * 1024 * 1024
    result = run_bounded("generate", "big.json", "-o", "out", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((tmp_path / "out" / "toolbind.json").read_text(encoding="utf-8"))
    assert manifest["packages"] == {"big": "big.json"}
    tools = json.loads((tmp_path / "out" / "big" / "tools.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in tools["tools"]] == [t["name"] for t in spec["tools"]]


def test_spec_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: 65 MiB that take no disk and are never read
        handle.truncate(65 * 1024 * 1024)
    result = run_bounded("generate", "huge.json", "-o", "out", cwd=tmp_path)
    _refused(result, "huge.json#: error: the file is 68157440 bytes — a spec of at most")


# -- $ref cycles and where $refs may lead ---------------------------------------------------


def _tool_spec(ref: str) -> str:
    return json.dumps(
        {
            "tools": [
                {
                    "name": "create_user",
                    "inputSchema": {"type": "object", "properties": {"address": {"$ref": ref}}},
                }
            ]
        }
    )


def test_ref_cycle_through_files_terminates_located(tmp_path: Path) -> None:
    (tmp_path / "_refs").mkdir()
    (tmp_path / "spec.json").write_text(_tool_spec("_refs/a.json"), encoding="utf-8")
    (tmp_path / "_refs" / "a.json").write_text('{"$ref": "b.json"}', encoding="utf-8")
    (tmp_path / "_refs" / "b.json").write_text('{"allOf": [{"$ref": "a.json"}]}', encoding="utf-8")
    result = run_bounded("generate", "spec.json", "-o", "out", cwd=tmp_path, timeout=120)
    _refused(result, "_refs/a.json#/$ref: error: $ref cycle")
    assert "_refs/b.json#" in result.stderr


def test_recursive_refs_through_files_compile(tmp_path: Path) -> None:
    """A schema that refers to itself across files through a property is fine: it terminates."""
    (tmp_path / "_refs").mkdir()
    (tmp_path / "spec.json").write_text(_tool_spec("_refs/node.json"), encoding="utf-8")
    node = {
        "type": "object",
        "properties": {"next": {"$ref": "other.json"}, "self": {"$ref": "#"}},
    }
    (tmp_path / "_refs" / "node.json").write_text(json.dumps(node), encoding="utf-8")
    (tmp_path / "_refs" / "other.json").write_text('{"$ref": "node.json"}', encoding="utf-8")
    result = run_bounded("generate", "spec.json", "-o", "out", cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr


def test_ref_through_a_link_to_its_own_directory_terminates(tmp_path: Path) -> None:
    """Regression: `sub -> .` made `sub/node.json`, `sub/sub/node.json`, … new documents, and a
    schema referring to itself through the link was lowered forever."""
    (tmp_path / "sub").symlink_to(".")
    (tmp_path / "spec.json").write_text(_tool_spec("node.json"), encoding="utf-8")
    node = {"type": "object", "properties": {"next": {"$ref": "sub/node.json"}}}
    (tmp_path / "node.json").write_text(json.dumps(node), encoding="utf-8")
    result = run_bounded("generate", "spec.json", "-o", "out", cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    models = (tmp_path / "out" / "spec" / "models.py").read_text(encoding="utf-8")
    assert "next: Annotated[Node | None, NotNull]" in models


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """``project/specs/spec.json`` referring to ``project/common/address.json``."""
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    (project / "common").mkdir()
    address = {"type": "object", "properties": {"street": {"type": "string"}}}
    (project / "common" / "address.json").write_text(json.dumps(address), encoding="utf-8")
    (project / "specs" / "spec.json").write_text(
        _tool_spec("../common/address.json"), encoding="utf-8"
    )
    return project


OUTSIDE = (
    "specs/spec.json#/tools/0/inputSchema/properties/address/$ref: error: $ref "
    "'../common/address.json' leads outside the spec's directory (common/address.json) — a "
    "file in the spec's directory or below it (hint: allow the directory with --allow-ref DIR)"
)


@pytest.mark.parametrize("command", ["generate", "schema", "scaffold", "test"])
def test_ref_outside_the_spec_directory_is_refused(command: str, outside: Path) -> None:
    extra = {"generate": ["-o", "out"], "scaffold": ["-o", "acts.py"]}.get(command, [])
    result = run_cli(command, "specs/spec.json", *extra, cwd=outside)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [OUTSIDE, "1 error"]
    assert sorted(p.name for p in outside.iterdir()) == ["common", "specs"]


def test_many_refs_into_one_refused_file_are_one_error(outside: Path) -> None:
    """A split spec refers into a refused directory from a hundred places: one fix, so one
    error (at the first $ref), and a note at each other $ref that ``-v`` shows."""
    address = {"$ref": "../common/address.json"}
    props = {"home": address, "work": address, "other": {"$ref": "../common/address.json"}}
    tool = {"name": "create_user", "inputSchema": {"type": "object", "properties": props}}
    (outside / "specs" / "spec.json").write_text(json.dumps({"tools": [tool]}), encoding="utf-8")
    result = run_cli("generate", "specs/spec.json", "-o", "out", "-v", cwd=outside)
    assert result.returncode == 1, result.stderr
    said = result.stderr.splitlines()
    assert [x for x in said if ": error: " in x] == [OUTSIDE.replace("/address/$ref", "/home/$ref")]
    refused = "leads outside the spec's directory (common/address.json): refused as at the first"
    assert [x.split(": note: ")[0] for x in said if refused in x] == [
        "specs/spec.json#/tools/0/inputSchema/properties/work/$ref",
        "specs/spec.json#/tools/0/inputSchema/properties/other/$ref",
    ]
    assert said[-1] == "1 error"


@pytest.mark.parametrize("command", ["generate", "schema", "scaffold", "test"])
def test_ref_outside_is_read_with_allow_ref(command: str, outside: Path) -> None:
    extra = {
        "generate": ["-o", "out"],
        "scaffold": ["-o", "acts.py"],
        "test": ["--examples", "3"],
    }.get(command, [])
    result = run_cli(command, "specs/spec.json", *extra, "--allow-ref", "common", cwd=outside)
    assert result.returncode == 0, result.stderr
    if command == "schema":
        assert "street" in result.stdout


def test_symlink_out_of_the_spec_directory_is_refused(outside: Path) -> None:
    """A link inside the spec's directory is judged by where it leads."""
    (outside / "specs" / "_refs").symlink_to(outside / "common")
    (outside / "specs" / "spec.json").write_text(_tool_spec("_refs/address.json"), encoding="utf-8")
    result = run_cli("generate", "specs/spec.json", "-o", "out", cwd=outside)
    assert result.returncode == 1
    assert "leads outside the spec's directory (common/address.json)" in result.stderr


def test_a_refused_ref_looked_at_ahead_of_lowering_is_still_an_error(tmp_path: Path) -> None:
    """The compiler looks through an allOf's, a oneOf's and a discriminator's $refs before it
    lowers them (is a part an object? does a branch require nothing?); that look is silent, and
    must not count a refused file as said: the error comes when the $ref is lowered."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "common.yaml").write_text("Base: {type: object}\n", encoding="utf-8")
    (tmp_path / "specs" / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    post:\n"
        "      operationId: makePet\n      requestBody:\n        content:\n"
        "          application/json:\n            schema:\n              allOf:\n"
        "                - {$ref: '../common.yaml#/Base'}\n"
        "                - {properties: {name: {type: string}}}\n"
        "      responses: {'204': {description: ok}}\n",
        encoding="utf-8",
    )
    result = run_cli("generate", "specs/api.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (
        "specs/api.yaml#/paths/~1pets/post/requestBody/content/application~1json/schema/allOf/0"
        "/$ref: error: $ref '../common.yaml#/Base' leads outside the spec's directory "
        "(common.yaml)"
    ) in result.stderr
    assert not (tmp_path / "out").exists()


def test_openapi_parameter_ref_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "params.yaml").write_text(
        "limit: {name: limit, in: query, schema: {type: integer}}\n", encoding="utf-8"
    )
    (tmp_path / "specs" / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    get:\n"
        "      operationId: listPets\n      parameters: [{$ref: '../params.yaml#/limit'}]\n"
        "      responses: {'200': {description: ok}}\n",
        encoding="utf-8",
    )
    result = run_cli("generate", "specs/api.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert (
        "specs/api.yaml#/paths/~1pets/get/parameters/0/$ref: error: parameter $ref "
        "'../params.yaml#/limit' leads outside the spec's directory (params.yaml)"
    ) in result.stderr
    result = run_cli("generate", "specs/api.yaml", "-o", "out", "--allow-ref", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "limit" in (tmp_path / "out" / "api" / "models.py").read_text(encoding="utf-8")


# -- $refs to URLs: refused, or downloaded from a real local server when allowed ------------

ADDRESS = {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}
PERSON = {"type": "object", "properties": {"home": {"$ref": "address.json"}}}


class RefServer:
    """An ASGI app serving schemas, a redirect, an endless body and a slow body; counts hits."""

    def __init__(self) -> None:
        self.hits: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path: str = scope["path"]
        self.hits.append(path)
        if path in ("/schemas/address.json", "/schemas/person.json"):
            body = json.dumps(ADDRESS if "address" in path else PERSON).encode()
            await self._start(send, 200, [(b"content-type", b"application/json")])
            await send({"type": "http.response.body", "body": body})
        elif path.startswith("/chain/"):  # every document names the next one, forever
            n = int(path.removeprefix("/chain/").removesuffix(".json"))
            body = {"type": "object", "properties": {"next": {"$ref": f"{n + 1}.json"}}}
            await self._start(send, 200, [])
            await send({"type": "http.response.body", "body": json.dumps(body).encode()})
        elif path == "/schemas/moved.json":
            await self._start(send, 302, [(b"location", b"/schemas/address.json")])
            await send({"type": "http.response.body", "body": b""})
        elif path == "/schemas/endless.json":
            await self._start(send, 200, [])
            chunk = b" " * (1024 * 1024)
            for _ in range(40):  # 40 MiB: more than the client ever reads
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"{}"})
        elif path == "/schemas/slow.json":
            import asyncio

            await self._start(send, 200, [])
            for _ in range(30):  # 6 s of a byte every 0.2 s
                await send({"type": "http.response.body", "body": b" ", "more_body": True})
                await asyncio.sleep(0.2)
            await send({"type": "http.response.body", "body": b"{}"})
        else:
            await self._start(send, 404, [])
            await send({"type": "http.response.body", "body": b"not found"})

    @staticmethod
    async def _start(send: Any, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})


@pytest.fixture
def ref_server() -> Iterator[tuple[str, RefServer]]:
    app = RefServer()
    with serve_asgi(app) as base:
        yield base, app


def _url_spec(tmp_path: Path, url: str) -> Path:
    (tmp_path / "specs").mkdir(exist_ok=True)
    spec = tmp_path / "specs" / "spec.json"
    spec.write_text(_tool_spec(url), encoding="utf-8")
    return spec


def test_ref_to_url_is_refused_without_network_access(
    tmp_path: Path, ref_server: tuple[str, RefServer]
) -> None:
    base, app = ref_server
    _url_spec(tmp_path, f"{base}/schemas/address.json")
    result = run_cli("generate", "specs/spec.json", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "points to a URL — a local pointer ('#/...') or a relative file" in result.stderr
    assert "--allow-ref" in result.stderr
    # a prefix that does not cover the URL allows nothing either
    for prefix in (f"{base}/other", f"{base}/schemas/address"):
        result = run_cli(
            "generate", "specs/spec.json", "-o", "out", "--allow-ref", prefix, cwd=tmp_path
        )
        assert result.returncode == 1, prefix
    assert app.hits == []
    assert not (tmp_path / "out").exists()


def test_ref_to_allowed_url_is_downloaded(
    tmp_path: Path, ref_server: tuple[str, RefServer]
) -> None:
    """The referenced document and the relative $ref inside it come from the server."""
    base, app = ref_server
    _url_spec(tmp_path, f"{base}/schemas/person.json")
    result = run_cli(
        "generate", "specs/spec.json", "-o", "out", "--allow-ref", f"{base}/schemas/", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert sorted(app.hits) == ["/schemas/address.json", "/schemas/person.json"]
    tools = json.loads((tmp_path / "out" / "spec" / "tools.json").read_text(encoding="utf-8"))
    assert tools["$defs"]["Address"]["properties"] == {"street": {"type": "string"}}


def test_endless_chain_of_allowed_urls_stops(
    tmp_path: Path, ref_server: tuple[str, RefServer]
) -> None:
    base, app = ref_server
    _url_spec(tmp_path, f"{base}/chain/0.json")
    result = run_cli(
        "generate", "specs/spec.json", "-o", "out", "--allow-ref", f"{base}/chain/", cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    assert "$ref '100.json' would download document number 101" in result.stderr
    assert result.stderr.startswith(f"{base}/chain/99.json#/properties/next/$ref: error:")
    assert len(app.hits) == 100


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/schemas/moved.json", "a redirect (302) to /schemas/address.json"),
        ("/schemas/missing.json", "HTTP status 404"),
        ("/schemas/endless.json", f"more than {16 * 1024 * 1024} bytes"),
        ("/schemas/slow.json", "no complete answer within 1 s"),
    ],
)
def test_allowed_url_download_is_bounded(
    path: str,
    found: str,
    tmp_path: Path,
    ref_server: tuple[str, RefServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolbind.compiler import _load

    # Only the slow body is decided by the deadline; the others by status and bytes, with a
    # deadline far beyond what reading 16 MiB takes on a loaded machine.
    monkeypatch.setattr(_load, "URL_TIMEOUT", 1.0 if "slow" in path else 120.0)
    base, _ = ref_server
    spec = _url_spec(tmp_path, f"{base}{path}")
    start = time.monotonic()
    with pytest.raises(SpecError) as caught:
        generate_tree([spec], allow_refs=[base])
    assert time.monotonic() - start < 120  # not a timing claim: the slow body lasts 6 s
    (error,) = [d for d in caught.value.diagnostics if d.severity == "error"]
    rendered = error.render()
    assert str(error.loc).endswith("spec.json#/tools/0/inputSchema/properties/address/$ref")
    assert f"names a URL that cannot be read ({base}{path}#: {found})" in rendered
