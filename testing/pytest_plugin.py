"""Testing layer: the pytest plugin — one contract test per tool of your specs.

Registered through the ``pytest11`` entry point; it does nothing unless asked::

    pytest --toolbind-spec specs/ [--toolbind-activities app.activities] [--toolbind-examples 100]

or, in ``pyproject.toml``'s ``[tool.pytest.ini_options]``: ``toolbind_specs = ["specs"]`` and
``toolbind_activities = "app.activities"``. Each tool becomes a test item
(``specs/seeds.yaml::greetUser``) that checks, like ``toolbind test``: valid instances of the
Call and Output schemas round-trip through their models, mutated invalid ones are rejected, and
— when the Activity module has one for the tool — the Activity takes every Call and returns valid
Outputs. Without ``--toolbind-examples``, the active hypothesis profile's ``max_examples`` applies.
Heavy imports (hypothesis, the compiler) happen only when the option is used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolbind.runtime import ToolBinding

    from ._runner import CompiledSpecs


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

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        from ._errors import ContractViolation

        if isinstance(excinfo.value, ContractViolation):
            return excinfo.value.render()
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.tool.name} contract"


class _State:
    def __init__(
        self,
        compiled: CompiledSpecs,
        activities: dict[str, Callable[..., Any]],
        examples: int | None,
    ) -> None:
        self.compiled = compiled
        self.activities = activities
        self.examples = examples


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
    config.stash[_STATE] = _State(compiled, activities, config.getoption("toolbind_examples"))
    for source, package in compiled.packages:
        node = ContractSpecFile.from_parent(session, path=Path(source).absolute())  # pyright: ignore[reportUnknownMemberType]
        node.tools = list(package.TOOLS)
        items.extend(node.collect())
