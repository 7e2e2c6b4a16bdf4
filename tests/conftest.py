"""Shared fixtures: compile an inline spec to a temporary package and import it.

Hypothesis profiles: ``ci`` (the default, also used locally) and ``deep`` (``make test-deep``);
choose with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar, cast

import pytest
import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from toolbind.compiler import compile_to_directory, load_package
from toolbind.testing import strategies_for

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")
CORPUS = REPO / "tests" / "corpus"
"""The third-party specs and tool files the tests read: copies kept in the repository (their
sources and licenses in its README), so a fresh clone runs the same tests as CI."""
NO_CORPUS = f"the third-party corpus is missing from {CORPUS} (it is part of the repository)"
"""The one skip reason of every test that needs the corpus (``make test`` counts them once)."""

settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
    derandomize=True,
)
settings.register_profile(
    "deep",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# incremental generate keeps its file signatures here, not in the user's cache directory
_CACHE_DIR = tempfile.mkdtemp(prefix="toolbind-cache-")
os.environ.setdefault("TOOLBIND_CACHE_DIR", _CACHE_DIR)
atexit.register(shutil.rmtree, _CACHE_DIR, True)

_counter = itertools.count()

CompileSpec = Callable[..., ModuleType]


@pytest.fixture
def compile_spec(tmp_path: Path) -> CompileSpec:
    """Write ``spec`` (a JSON value, or YAML/JSON text) to a file, compile it, import the package."""

    def run(
        spec: Any, *, suffix: str = ".json", extra_files: dict[str, Any] | None = None
    ) -> ModuleType:
        name = f"pkg_{os.getpid()}_{next(_counter)}"
        spec_dir = tmp_path / "specs"
        spec_dir.mkdir(exist_ok=True)
        path = spec_dir / f"{name}{suffix}"
        path.write_text(spec if isinstance(spec, str) else json.dumps(spec), encoding="utf-8")
        for rel, value in (extra_files or {}).items():
            target = spec_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                value if isinstance(value, str) else json.dumps(value), encoding="utf-8"
            )
        out = tmp_path / "out"
        compile_to_directory([path], out)
        return load_package(out, name)

    return run


def sampled(
    items: Sequence[T], every: int, keep: Callable[[T], bool] = lambda _: False
) -> list[Any]:
    """``items`` as pytest params: every ``every``-th one (and those ``keep`` names) in the fast
    suite, the others marked ``slow`` — ``make test`` keeps within its budget on a sample that is
    the same on every run, ``make test-slow`` (CI runs both) covers the rest."""
    return [
        item if i % every == 0 or keep(item) else pytest.param(item, marks=pytest.mark.slow)
        for i, item in enumerate(items)
    ]


SWEEP_EXAMPLES = 10


def sweep_settings(request: pytest.FixtureRequest) -> settings:
    """Hypothesis settings for one item of a slow sweep over many (``sampled``'s ``slow``
    items: 1,793 corpus tools): ``SWEEP_EXAMPLES`` instead of the ``ci`` profile's 25, so the
    sweep is 10 instances of every tool (18,000 in all) within CI's budget; the fast suite's
    sample keeps 25, and ``HYPOTHESIS_PROFILE=deep`` is not reduced."""
    if request.node.get_closest_marker("slow") and settings.get_current_profile_name() == "ci":
        return settings(max_examples=SWEEP_EXAMPLES)
    return settings()


def session_dir(prefix: str) -> Path:
    """A temporary directory for what a cached (session-long) compile writes: its modules stay
    imported until the process ends, so it is removed then, not left in the temp dir."""
    out = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, out, True)
    return out


def load_spec_file(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def unload(prefix: str) -> None:
    for key in [k for k in sys.modules if k == prefix or k.startswith(prefix + ".")]:
        del sys.modules[key]


def instances_of(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid instances of a JSON Schema: ``toolbind.testing.strategies_for`` (2020-12 spellings
    are rewritten for hypothesis-jsonschema there)."""
    return strategies_for(schema)


# -- the HTTP test app and a foreign host, served by uvicorn (tests/http/, tests/security/) ---------------


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    """``(base URL of tests/http_app.app, base URL of http_app.foreign)`` on 127.0.0.1."""
    from tests import http_app  # FastAPI: imported only by the tests that serve it
    from tests._servers import serve_asgi

    with serve_asgi(http_app.app) as url, serve_asgi(http_app.foreign) as foreign:
        yield url, foreign


@pytest.fixture
def base(servers: tuple[str, str]) -> str:
    """The app's base URL, its counters reset."""
    from tests import http_app

    http_app.reset()
    http_app.FOREIGN_HITS.clear()
    return servers[0]


@pytest.fixture
def foreign(servers: tuple[str, str]) -> str:
    return servers[1]


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- the corpus suite: the corpus checks over a corpus outside the repository ---------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--corpus",
        metavar="PATH",
        default=None,
        help="run the corpus suite (tests marked corpus) over PATH, laid out as tests/corpus "
        "(make test-corpus CORPUS=PATH; spell it --corpus=PATH, as pytest reads a lone path as "
        "a test path); without it those tests are left out",
    )


def external_corpus(config: pytest.Config) -> Path | None:
    """The corpus ``--corpus`` names (absolute), or None when none is given."""
    given = cast("str | None", config.getoption("corpus"))
    return None if given is None else Path(given).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "corpus: the corpus suite, over a corpus outside the repository (--corpus=PATH, "
        "make test-corpus CORPUS=PATH); left out without it, as the run's last lines say",
    )
    given = external_corpus(config)
    # a corpus asked for and absent fails the run: a suite that skipped would pass unseen
    if given is not None and not given.is_dir():
        raise pytest.UsageError(f"--corpus {given}: no such directory")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if external_corpus(config) is not None:
        return
    left_out = [item for item in items if item.get_closest_marker("corpus")]
    if left_out:
        items[:] = [item for item in items if not item.get_closest_marker("corpus")]
        config.hook.pytest_deselected(items=left_out)


def _corpus_summary(terminalreporter: Any) -> None:
    """One line on the corpus suite: where it ran and its counts, or that it was left out."""
    config: pytest.Config = terminalreporter.config
    given = external_corpus(config)
    if config.getoption("collectonly"):
        return
    if given is None:
        terminalreporter.write_line(
            "corpus suite: not run (it needs a corpus outside the repository: "
            "make test-corpus CORPUS=path)"
        )
        return
    counts: Counter[str] = Counter()
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if "corpus" in getattr(report, "keywords", {}):
                counts[outcome] += 1
    figures = ", ".join(f"{n} {outcome}" for outcome, n in counts.items()) or "no tests"
    terminalreporter.write_line(f"corpus suite over {given}: {figures}")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many tests were skipped and why, once per reason, at the end of the run; what the
    corpus suite ran."""
    _corpus_summary(terminalreporter)
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr: object = report.longrepr
        reason = str(
            cast("tuple[object, ...]", longrepr)[2] if isinstance(longrepr, tuple) else longrepr
        )
        reasons[reason.removeprefix("Skipped: ")] += 1
    if reasons:
        terminalreporter.section("skipped tests, by reason", sep="-")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count:5d} skipped: {reason}")
