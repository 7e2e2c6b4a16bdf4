"""Testing layer: the pytest plugin — one contract test per tool of your specs.

Registered through the ``pytest11`` entry point; it does nothing unless asked::

    pytest --toolbind-spec specs/ [--toolbind-activities app.activities] [--toolbind-examples 100]

or, in ``pyproject.toml``'s ``[tool.pytest.ini_options]``: ``toolbind_specs = ["specs"]`` and
``toolbind_activities = "app.activities"``. Each tool becomes a test item
(``specs/seeds.yaml::greetUser``) that checks, like ``toolbind test``: valid instances of the
Call and Output schemas round-trip through their models, mutated invalid ones are rejected, and
— when the Activity module has one for the tool — the Activity takes every Call and returns valid
Outputs. Without ``--toolbind-examples``, the active hypothesis profile's ``max_examples`` applies.

With ``--toolbind-base-url URL`` the items check the live server instead, as ``toolbind test
--base-url`` does (``toolbind.testing.live``): the first item of a spec runs the checks of all
its tools (``--toolbind-budget`` requests in all, ``--toolbind-method`` and ``--toolbind-check``
as the command's ``--method`` and ``--check``), and each item fails with its tool's findings —
check, Call, masked ``curl`` line, answer, spec pointer — or is skipped saying why. Heavy
imports (hypothesis, the compiler) happen only when an option is used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolbind.runtime import ToolBinding

    from ._runner import CompiledSpecs
    from .live import LiveReport


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolbind", "toolbind contract tests")
    group.addoption(
        "--toolbind-spec",
        action="append",
        default=[],
        metavar="PATH",
        help="Add a contract test per tool of this spec file or directory (repeatable).",
    )
    group.addoption(
        "--toolbind-activities",
        default=None,
        metavar="MODULE",
        help="Module (import path or .py file) whose Activities are checked against the tools.",
    )
    group.addoption(
        "--toolbind-examples",
        type=int,
        default=None,
        metavar="N",
        help="Examples per property (default: the hypothesis profile's max_examples).",
    )
    group.addoption(
        "--toolbind-base-url",
        default=None,
        metavar="URL",
        help="Check that the live server at URL keeps the specs' promises (see toolbind test "
        "--base-url) instead of the models and Activities.",
    )
    group.addoption(
        "--toolbind-budget",
        type=int,
        default=100,
        metavar="N",
        help="With --toolbind-base-url: requests sent at most per spec.",
    )
    group.addoption(
        "--toolbind-method",
        action="append",
        default=[],
        metavar="METHOD",
        help="With --toolbind-base-url: an HTTP method to send (repeatable; default GET, HEAD, "
        "OPTIONS; others only to this machine).",
    )
    group.addoption(
        "--toolbind-check",
        action="append",
        default=[],
        metavar="NAME",
        help="With --toolbind-base-url: also make this check (repeatable), e.g. "
        "negative_data_rejection.",
    )
    parser.addini("toolbind_specs", "Spec files or directories to contract-test.", type="paths")
    parser.addini("toolbind_activities", "Activity module for the contract tests.")


def _specs(config: pytest.Config) -> list[Path]:
    given: list[str] = config.getoption("toolbind_spec") or []
    if given:
        return [Path(p) for p in given]
    return [Path(p) for p in config.getini("toolbind_specs")]


class ContractSpecFile(pytest.File):
    """A spec file; its items are its tools."""

    tools: list[ToolBinding]

    package: ModuleType

    def collect(self) -> list[pytest.Item]:
        return [
            ToolContractItem.from_parent(self, name=t.name, tool=t)  # pyright: ignore[reportUnknownMemberType]
            for t in self.tools
        ]


class ToolContractItem(pytest.Item):
    """One tool's contract: Call and Output models, and its Activity if there is one."""

    def __init__(self, *, tool: ToolBinding, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportUnknownMemberType]
        self.tool = tool

    def runtest(self) -> None:
        from ._checks import RunSettings
        from ._runner import check_tool

        state = _state(self.config)
        if state.live is not None:
            self._run_live(state)
            return
        how = RunSettings(max_examples=state.examples, database=False)
        activity = state.activities.get(self.tool.name)
        report = check_tool(str(self.path), self.tool, how, activity)
        for part in report.parts:
            if part.failure is not None:
                raise part.failure
        # a part not checked is no pass: the item is skipped, saying which part and why
        unchecked = [p for p in report.parts if p.unchecked]
        if unchecked:
            pytest.skip("; ".join(f"{p.part} not checked: {p.skipped}" for p in unchecked))

    def _run_live(self, state: _State) -> None:
        """Fail with the tool's findings on the live server (the spec's run, made once)."""
        parent = self.parent
        assert isinstance(parent, ContractSpecFile)
        report = state.live_report(parent)
        outcome = next(t for t in report.tools if t.tool == self.tool.name)
        if outcome.failures:
            raise LiveFailure(
                f"{outcome.method} {outcome.path} ({outcome.tool}):\n"
                + "\n".join(f.render() for f in outcome.failures)
            )
        if outcome.skipped:
            pytest.skip(outcome.skipped)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        from ._errors import ContractViolation

        if isinstance(excinfo.value, ContractViolation):
            return excinfo.value.render()
        if isinstance(excinfo.value, LiveFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.tool.name} contract"


class LiveFailure(AssertionError):
    """A tool broke a promise of its spec on the live server (the message is the report)."""


class _State:
    def __init__(
        self,
        compiled: CompiledSpecs,
        activities: dict[str, Callable[..., Any]],
        examples: int | None,
        live: dict[str, Any] | None = None,
    ) -> None:
        self.compiled = compiled
        self.activities = activities
        self.examples = examples
        self.live = live
        self.reports: dict[str, LiveReport] = {}

    def live_report(self, spec: ContractSpecFile) -> LiveReport:
        """The live checks of ``spec``'s tools, run on first use."""
        from .live import check_live

        assert self.live is not None
        key = str(spec.path)
        if key not in self.reports:
            self.reports[key] = check_live(spec.package, **self.live)
        return self.reports[key]


def _live_options(config: pytest.Config) -> dict[str, Any] | None:
    """``check_live``'s arguments from the options; None without ``--toolbind-base-url``."""
    base_url: str | None = config.getoption("toolbind_base_url")
    if base_url is None:
        return None
    from toolbind.runtime.errors import UsageError

    from .live import DEFAULT_CHECKS, SAFE_METHODS
    from .live._engine import settings_from

    budget: int = config.getoption("toolbind_budget") or 0
    methods = [m.upper() for m in config.getoption("toolbind_method") or SAFE_METHODS]
    added: list[str] = config.getoption("toolbind_check") or []
    checks = [*DEFAULT_CHECKS, *(c for c in added if c not in DEFAULT_CHECKS)]
    try:  # (a wrong option is said once, before any item runs)
        settings_from(
            base_url,
            credentials=None,
            headers=None,
            budget=budget,
            rate=None,
            methods=methods,
            allow_unsafe=False,
            tools=None,
            seed=0,
            timeout=10.0,
            max_response_bytes=1,
            checks=checks,
        )
    except UsageError as exc:
        raise pytest.UsageError(f"--toolbind-{exc}") from None
    return {"base_url": base_url, "budget": budget, "methods": methods, "checks": checks}


_STATE = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    specs = _specs(config)
    if not specs:
        return
    from toolbind.compiler import SpecError

    from ._activities import activities_in, load_activities
    from ._contract import ContractError
    from ._runner import compile_specs

    try:
        compiled = compile_specs(specs)
    except SpecError as exc:
        raise pytest.UsageError(
            "toolbind: the specs have errors:\n" + "\n".join(d.render() for d in exc.diagnostics)
        ) from None
    config.add_cleanup(compiled.close)
    activities: dict[str, Callable[..., Any]] = {}
    module_name: str | None = config.getoption("toolbind_activities") or (
        config.getini("toolbind_activities") or None
    )
    if module_name:
        try:
            activities, unknown = activities_in(
                load_activities(module_name), [t for _, t in compiled.tools]
            )
        except ContractError as exc:
            raise pytest.UsageError(f"--toolbind-activities {exc}") from None
        if unknown:
            raise pytest.UsageError(
                f"--toolbind-activities {module_name}: ACTIVITIES names no tool: {', '.join(unknown)}"
            )
    live = _live_options(config)
    config.stash[_STATE] = _State(compiled, activities, config.getoption("toolbind_examples"), live)
    for source, package in compiled.packages:
        node = ContractSpecFile.from_parent(session, path=Path(source).absolute())  # pyright: ignore[reportUnknownMemberType]
        node.package = package
        node.tools = list(package.TOOLS)
        if live is not None:  # (only the operations: a live server has nothing else to call)
            api = getattr(package, "API", None)
            node.tools = [t for t in node.tools if api is not None and t.name in api.operations]
        items.extend(node.collect())
