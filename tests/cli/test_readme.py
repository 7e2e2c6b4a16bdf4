"""The README's first example runs as written, in a project of the user's own (not in specs/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Example") :]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start : section.index("```\n", start)]


def test_the_readme_example_runs_outside_the_repository(tmp_path: Path) -> None:
    script = _example()
    assert "TOOLBIND=$PWD/.venv/bin" in script and "/tmp/my_project" in script
    assert "specs/" not in script  # the repository's own specs/ is never the user's
    script = script.replace("TOOLBIND=$PWD/.venv/bin", f"TOOLBIND={Path(sys.executable).parent}")
    script = script.replace("/tmp/my_project", str(tmp_path / "my_project"))
    result = subprocess.run(
        ["bash", "-e", "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "GreetUserCall Ann"
    assert "userName='Bo'" in lines[1]
    assert lines[2].startswith("greetUser {'type': 'object'")
    assert (tmp_path / "my_project" / "tools_pkg" / "my_tools" / "__init__.py").is_file()
    assert not (REPO / "generated" / "my_tools").exists()
