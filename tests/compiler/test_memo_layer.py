"""The memo layer wraps the stages: no stage imports it (compiler/memo/).

Reuse of a previous run is decided in one place, ``compiler/memo``; the stages (loading,
the frontends, the passes, the backends) offer hooks it fills and never import it, at module
level or in a function. Only the driver, which runs the stages through it, does.
"""

from __future__ import annotations

import ast
from pathlib import Path

COMPILER = Path(__file__).parent.parent.parent / "compiler"
ALLOWED = {"_driver.py"}  # (and the layer's own modules)
MEMO = "toolbind.compiler.memo"


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
