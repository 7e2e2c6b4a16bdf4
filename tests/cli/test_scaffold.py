"""`toolbind scaffold`: a starting Activity module, written once, checked against the protocols."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import toolbind
from tests.conftest import REPO

PYRIGHT = Path(sys.executable).parent / "pyright"


def pyright(project: Path) -> list[str]:
    (project / "pyrightconfig.json").write_text(
        json.dumps(
            {"typeCheckingMode": "strict", "pythonVersion": "3.11", "reportMissingTypeStubs": False}
        ),
        encoding="utf-8",
    )
    result = subprocess.run(
        [str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(result.stdout)
    return [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "error"]


@pytest.mark.slow  # the fast suite's 10-minute budget; `make test-slow` (CI) runs it
def test_scaffold_matches_the_activity_protocols(tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "generated" / "seeds",
        tmp_path / "seeds",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    target = tmp_path / "activities.py"
    result = toolbind("scaffold", "specs/seeds.yaml", "-o", str(target), "--package", "seeds")
    assert result.returncode == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert "async def weather_check(call: WeatherCheckCall) -> WeatherCheckOutput:" in text
    assert pyright(tmp_path) == []
    # an Activity that returns the wrong type no longer satisfies its protocol
    target.write_text(
        text.replace(
            "async def greet_user(call: GreetUserCall) -> GreetUserOutput:",
            "async def greet_user(call: GreetUserCall) -> WeatherCheckOutput:",
        ),
        encoding="utf-8",
    )
    errors = pyright(tmp_path)
    assert any("GreetUserActivity" in e for e in errors), errors


def test_scaffold_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "mine.py"
    target.write_text("my code", encoding="utf-8")
    result = toolbind("scaffold", "specs/seeds.yaml", "-o", str(target))
    assert result.returncode == 2
    assert "already exists" in result.stderr
    assert target.read_text(encoding="utf-8") == "my code"


def test_scaffold_without_package_imports_in_the_readme_layout(tmp_path: Path) -> None:
    # the README's project: generate -o tools_pkg, PYTHONPATH=tools_pkg:., scaffold beside it
    spec = tmp_path / "my_tools.yaml"
    shutil.copyfile(REPO / "specs" / "seeds.yaml", spec)
    assert toolbind("generate", str(spec), "-o", str(tmp_path / "tools_pkg")).returncode == 0
    target = tmp_path / "my_activities.py"
    result = toolbind("scaffold", str(spec), "-o", str(target))
    assert result.returncode == 0, result.stderr
    imported = subprocess.run(
        [sys.executable, "-c", "import my_activities; print(len(my_activities.ACTIVITIES))"],
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path / 'tools_pkg'}:{tmp_path}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert int(imported.stdout) > 0
