"""The generated ``<Tool>ActivityWithContext`` protocols type a two-argument Activity: pyright (strict, the project's config) accepts one that takes ``ActivityContext[Deps]``
and refuses one whose second parameter is anything else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
from dataclasses import dataclass

from generated.seeds.activities import WeatherCheckActivityWithContext
from generated.seeds.models import WeatherCheckCall, WeatherCheckOutput
from toolbind.runtime import ActivityContext


@dataclass
class Deps:
    unit: str


def weather(call: WeatherCheckCall, ctx: ActivityContext[Deps]) -> WeatherCheckOutput:
    return WeatherCheckOutput(temperature=20.0, conditions=f"{call.location} in {ctx.deps.unit}")


def wrong(call: WeatherCheckCall, ctx: int) -> WeatherCheckOutput:
    return WeatherCheckOutput(temperature=20.0, conditions=str(ctx))


ok: WeatherCheckActivityWithContext = weather
bad: WeatherCheckActivityWithContext = wrong
"""


def test_pyright_checks_an_activity_that_takes_the_context(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "pyright"), "--outputjson", str(probe)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    lines = [d["range"]["start"]["line"] + 1 for d in errors]
    assert lines == [PROBE.count("\n", 0, PROBE.index("bad: ")) + 1], errors
    assert "ActivityContext[Any]" in errors[0]["message"]
