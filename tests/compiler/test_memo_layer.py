"""The memo layer wraps the stages: no stage imports it or names its classes (compiler/memo/).

Reuse of a previous run is decided in one place, ``compiler/memo``; the stages (loading,
the frontends, the passes, the backends) name their costly steps through the neutral seam
``compiler/_steps.py``, which the layer implements, and never import the layer, at module
level or in a function, nor name any class it defines. Only the driver, which runs the stages
through it, does.
"""

from __future__ import annotations

import ast
from pathlib import Path

COMPILER = Path(__file__).parent.parent.parent / "compiler"
ALLOWED = {"_driver.py"}  # (and the layer's own modules)
MEMO = "toolbind.compiler.memo"
STAGES = ("frontends", "normalise", "passes", "backends")
"""The packages of the pure stages: besides not importing the layer, they name none of its
classes (a hook for the layer would have to)."""


def _imports_memo(source: str, package: tuple[str, ...]) -> list[int]:
    """The lines of ``source`` (a module of ``toolbind.compiler.<package>``) that import the
    memo package or one of its modules."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # (relative to the package the module is in)
                base = ["toolbind", "compiler", *package][: 3 + len(package) - node.level]
                module = ".".join([*base, *([module] if module else [])])
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(n == MEMO or n.startswith(MEMO + ".") for n in names):
            found.append(node.lineno)
    return found


def _package(path: Path) -> tuple[str, ...]:
    return path.relative_to(COMPILER).parent.parts


def test_no_stage_imports_the_memo_layer() -> None:
    offenders = {
        str(path.relative_to(COMPILER)): lines
        for path in sorted(COMPILER.rglob("*.py"))
        if path.relative_to(COMPILER).parts[0] != "memo"
        and str(path.relative_to(COMPILER)) not in ALLOWED
        and (lines := _imports_memo(path.read_text(encoding="utf-8"), _package(path)))
    }
    assert offenders == {}


def test_the_guard_sees_every_form_of_import() -> None:
    """``_imports_memo`` finds each form an import of the layer can take, in a function too
    (else the test above would pass for nothing), and nothing else."""
    driver = COMPILER / "_driver.py"
    assert _imports_memo(driver.read_text(encoding="utf-8"), _package(driver))
    for source, package in [
        ("from .memo import Memo", ()),
        ("from . import memo", ()),
        ("from ..memo._parses import ParseCache", ("frontends",)),
        ("def f():\n    from ...memo import Memo", ("normalise", "rules")),
        ("import toolbind.compiler.memo._layer", ("backends",)),
        ("from toolbind.compiler import memo", ()),
    ]:
        assert _imports_memo(source, package) == [source.count("\n") + 1], source
    for source, package in [
        ("from ._memo_free import x", ()),
        ("from .frontends import _opmemo", ()),
        ("from ..memory import x", ("frontends",)),
    ]:
        assert _imports_memo(source, package) == [], source


def _classes_of_the_layer() -> set[str]:
    """Every class the memo package defines (at any depth of its modules)."""
    return {
        node.name
        for path in sorted((COMPILER / "memo").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    }


def _names_in(source: str) -> set[str]:
    """Every name ``source`` uses or defines: names, attributes, imported names, definitions,
    and strings that are one identifier (a ``cast("T", ...)`` or a quoted annotation)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update([node.name.rsplit(".", 1)[-1], node.asname or ""])
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.isidentifier()
        ):
            found.add(node.value)
    return found


def _stage_modules() -> list[Path]:
    return [path for stage in STAGES for path in sorted((COMPILER / stage).rglob("*.py"))]


def _naming_the_layer(paths: list[Path], classes: set[str]) -> dict[str, list[str]]:
    return {
        str(path.relative_to(COMPILER)): sorted(found)
        for path in paths
        if (found := _names_in(path.read_text(encoding="utf-8")) & classes)
    }


def test_no_stage_names_a_class_of_the_memo_layer() -> None:
    classes = _classes_of_the_layer()
    assert {"Memo", "RenderSteps", "ReadSteps", "Replay", "Record"} <= classes
    paths = _stage_modules()
    assert {p.relative_to(COMPILER).parts[0] for p in paths} == set(STAGES)
    assert _naming_the_layer(paths, classes) == {}


def test_the_name_guard_sees_a_hook_for_the_layer() -> None:
    """A stage module that builds, types or casts to a class of the layer is found (else the
    test above would pass for nothing); one that only runs its steps through ``_steps`` is not."""
    classes = _classes_of_the_layer()
    hooked = [
        "from .. import _hook\nreplay: _hook.Replay | None = None",
        "def read(ctx):\n    return Replay(ctx)",
        'def f(s):\n    return cast("LoggedSet", s)',
        "from ...memo._records import Record as R",
    ]
    for source in hooked:
        assert _names_in(source) & classes, source
    neutral = (
        "from .._steps import Steps\ndef f(steps: Steps):\n    return steps.part(1, '', None, f)"
    )
    assert not _names_in(neutral) & classes
