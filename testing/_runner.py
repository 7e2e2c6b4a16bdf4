"""Testing layer: compile specs and run every tool's contract. Imports ``toolbind.compiler``.

Shared by ``toolbind test`` and the pytest plugin. The specs are compiled into a fresh temporary
directory and imported under a unique parent package (``toolbind_contract_<n>.<package>``), so
they never collide with a package of the same name the user has on ``sys.path``.
"""

from __future__ import annotations

import importlib
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toolbind.compiler import compile_to_directory
from toolbind.compiler.diagnostics import Diagnostic
from toolbind.runtime import ToolBinding

from ._checks import PartResult, RunSettings, run_activity, run_tool_models

_counter = itertools.count()


@dataclass(slots=True)
class CompiledSpecs:
    """The packages compiled from the specs, in spec order, and where they live."""

    packages: list[tuple[str, ModuleType]]  # (spec source, package)
    diagnostics: list[Diagnostic]
    root: Path
    parent: str

    @property
    def tools(self) -> list[tuple[str, ToolBinding]]:
        """(spec source, tool) for every tool of every package."""
        return [(source, t) for source, pkg in self.packages for t in pkg.TOOLS]

    def close(self) -> None:
        """Forget the imported packages and remove the temporary directory."""
        for name in [m for m in sys.modules if m == self.parent or m.startswith(self.parent + ".")]:
            del sys.modules[name]
        if str(self.root) in sys.path:
            sys.path.remove(str(self.root))
        shutil.rmtree(self.root, ignore_errors=True)


def compile_specs(
    inputs: Sequence[Path | str], allow_refs: Sequence[Path | str] = ()
) -> CompiledSpecs:
    """Compile spec files or directories and import the packages.

    Raises:
        SpecError: a spec has errors (``.diagnostics`` locates each).
    """
    root = Path(tempfile.mkdtemp(prefix="toolbind-test-"))
    parent = f"toolbind_contract_{os.getpid()}_{next(_counter)}"
    try:
        tree = compile_to_directory(inputs, root / parent, allow_refs=allow_refs)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    (root / parent / "__init__.py").write_text("", encoding="utf-8")
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    packages = [
        (source, importlib.import_module(f"{parent}.{name}"))
        for name, source in sorted(tree.packages.items(), key=lambda kv: kv[1])
    ]
    return CompiledSpecs(packages, tree.diagnostics, root, parent)


@dataclass(slots=True)
class ToolReport:
    """The contract checks of one tool."""

    source: str
    tool: ToolBinding
    call: PartResult
    output: PartResult
    activity: PartResult | None = None
    activity_name: str | None = None

    @property
    def parts(self) -> list[PartResult]:
        return [p for p in (self.call, self.output, self.activity) if p is not None]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.parts)


def check_tool(
    source: str,
    tool: ToolBinding,
    how: RunSettings,
    activity: Callable[..., Any] | None = None,
) -> ToolReport:
    """Round-trip and invalid-rejection for the Call and Output models, then the Activity."""
    report = ToolReport(source, tool, *run_tool_models(tool, how))
    if activity is not None:
        report.activity = run_activity(tool, activity, how)
        report.activity_name = getattr(activity, "__name__", None) or type(activity).__name__
    return report
