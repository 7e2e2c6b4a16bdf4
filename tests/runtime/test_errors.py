"""One error tree: every exception class toolbind defines is a ``ToolbindError``, and the tree drawn
in ``toolbind.runtime.errors``'s docstring is the real class hierarchy."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

# (imported for what they define: the test walks every module loaded)
# pyright: reportUnusedImport=false
import toolbind
import toolbind.cli
import toolbind.compiler
import toolbind.compiler.errors
import toolbind.runtime
import toolbind.runtime.errors
import toolbind.testing
from toolbind.runtime import Tool, ToolbindError
from toolbind.runtime.errors import ModelFeedback, RegistrationError, RunFailure, UsageError


def _all_modules() -> list[str]:
    names: list[str] = []
    for package in (toolbind, toolbind.cli, toolbind.compiler, toolbind.runtime, toolbind.testing):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return names


def _defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _all_modules():
        if name.endswith(("pytest_plugin", "__main__")):  # (importing __main__ runs the CLI)
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    return found


# Signals, not errors: a private ``BaseException`` that is no ``Exception`` (as
# ``KeyboardInterrupt``), raised and caught inside one module and never leaving toolbind
CONTROL_FLOW = {
    # a contract part's time budget spent (``toolbind test --timeout``): were it an Exception,
    # hypothesis would take it for a failure and shrink it
    "toolbind.testing._checks._OutOfTime",
}


# Internal signals: a private plain ``Exception``, raised and caught inside one module, outside
# the public tree, so that an ``except ToolbindError`` could never swallow one that leaked
INTERNAL_SIGNALS = {
    "toolbind._package_json._Misfit",
    "toolbind.compiler._jsontext._Other",
    "toolbind.compiler.passes.subset._NoSample",
    "toolbind.runtime._pending._HTTPError",
    "toolbind.testing._unroll._TooBig",
    "toolbind.testing.live._probe._Unconfigured",
}


def test_every_exception_class_toolbind_defines_is_a_toolbind_error() -> None:
    classes = _defined_exceptions()
    assert len(classes) >= 20, sorted(classes)
    strays = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, ToolbindError) and name not in CONTROL_FLOW | INTERNAL_SIGNALS
    )
    assert strays == []
    for name in CONTROL_FLOW:
        cls = classes[name]
        assert name.rsplit(".", 1)[1].startswith("_"), name
        assert not issubclass(cls, Exception), name
    for name in INTERNAL_SIGNALS:
        cls = classes[name]
        assert name.rsplit(".", 1)[1].startswith("_"), name
        assert issubclass(cls, Exception) and not issubclass(cls, ToolbindError), name


def test_no_private_exception_class_is_in_the_public_tree() -> None:
    private = sorted(
        name
        for name, cls in _defined_exceptions().items()
        if name.rsplit(".", 1)[1].startswith("_") and issubclass(cls, ToolbindError)
    )
    assert private == []


def _drawn_tree(doc: str, root: str) -> dict[str, str]:
    """child -> parent, read from the box-drawing tree that starts at ``root`` in a docstring."""
    lines = doc[doc.index(f"    {root}\n") :].splitlines()
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in lines:
        if not line.strip():
            break
        match = re.match(r"^ {4}((?:[│ ]   )*)(?:[├└]── )?([A-Za-z]+)", line)
        assert match is not None, line
        depth = len(match.group(1)) // 4 + (1 if "── " in line else 0)
        name = match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


def test_the_drawn_tree_is_the_class_hierarchy() -> None:
    doc = toolbind.runtime.errors.__doc__ or ""
    drawn = _drawn_tree(doc, "ToolbindError")
    by_name = {cls.__name__: cls for cls in _defined_exceptions().values()}
    assert "ToolbindError" not in drawn and drawn, drawn
    for child, parent in drawn.items():
        assert by_name[parent] in by_name[child].__bases__, f"{child} is drawn under {parent}"
    public = {
        cls.__name__
        for cls in by_name.values()
        if not cls.__name__.startswith("_") and cls is not ToolbindError
    }
    assert public == set(drawn), "every public exception class is drawn once"


def test_the_compilers_part_of_the_tree_is_drawn_the_same() -> None:
    doc = toolbind.compiler.errors.__doc__ or ""
    drawn = _drawn_tree(doc, "CompileError")
    assert drawn == {
        "SpecError": "CompileError",
        "OutputError": "CompileError",
        "SelectionError": "CompileError",
    }


# -- one typical failure per audience raises the documented class --------------------------------


def test_a_developers_bad_registration_is_a_usage_error() -> None:
    with pytest.raises(RegistrationError) as info:
        Tool.register("greet", {"type": "object", "properties": {"_oops": {}}})
    assert isinstance(info.value, UsageError) and isinstance(info.value, ValueError)
    assert "<Tool.register('greet')>#/properties/_oops" in str(info.value)


def test_a_bad_spec_is_a_usage_error(tmp_path: Path) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text('{"type": "object", "properties": {"_tool": {"const": 3}}}', encoding="utf-8")
    with pytest.raises(toolbind.compiler.SpecError) as info:
        toolbind.compiler.generate_tree([spec])
    assert isinstance(info.value, toolbind.compiler.CompileError)
    assert isinstance(info.value, UsageError)


def test_a_pending_store_refusal_is_a_run_failure(tmp_path: Path) -> None:
    from toolbind.runtime.errors import UnknownPendingCall
    from toolbind.runtime.pending import PendingStore

    with PendingStore(tmp_path / "p.sqlite3") as store, pytest.raises(UnknownPendingCall) as info:
        store.submit("run", "call", {"x": 1})
    assert isinstance(info.value, RunFailure) and isinstance(info.value, LookupError)


def test_feedback_for_the_model_is_a_typed_value_whose_text_is_what_the_model_reads() -> None:
    feedback = ModelFeedback([f"- field x{i}: wrong (keyword: type)" for i in range(25)])
    assert feedback.total == 25 and len(feedback.lines) == 20
    text = str(feedback)
    assert text.startswith("Invalid response (fix each and answer again):\n- field x0: wrong")
    assert text.endswith("- … and 5 more errors of the same answer")
    assert isinstance(feedback, ValueError)  # what pydantic turns into a validation error
