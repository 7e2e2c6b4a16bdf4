"""The public surfaces stay small and deliberate: a change here is an API change."""

from __future__ import annotations

import ast
import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError

# (the faces are read through their modules: pyright does not count that as a use)
# pyright: reportUnusedImport=false
import toolbind.compiler
import toolbind.runtime
import toolbind.runtime.types


def test_compiler_surface() -> None:
    assert toolbind.compiler.__all__ == [
        "CompileError",
        "Diagnostic",
        "GeneratedTree",
        "OutputError",
        "SelectionError",
        "SpecError",
        "compile_to_directory",
        "composed_schema",
        "generate_tree",
        "load_package",
        "model_from_schema",
        "read_tool_schema",
    ]


def test_contract_surface() -> None:
    import toolbind.contract as contract
    import toolbind.runtime.contract as runtime_contract

    # generated packages read the kernel's contract through the runtime, which adds one name
    assert runtime_contract.__all__ == ["HttpCaller", *contract.__all__]
    assert contract.__all__ == sorted(contract.__all__, key=lambda n: (not n.isupper(), n))
    # (pytest may rewrite the module: its "@py_..." helpers are no names of it)
    public = {n for n in vars(contract) if not n.startswith(("_", "@")) and n != "annotations"}
    imported_helpers = {
        "TYPE_CHECKING",
        "Any",
        "Literal",
        "Mapping",
        "Protocol",
        "dataclass",
        "field",
    }
    assert public - imported_helpers == set(contract.__all__)


def test_runtime_surface() -> None:
    assert toolbind.runtime.__all__ == [
        "Activity",
        "ActivityContext",
        "ActivityRegistry",
        "Agent",
        "AgentEvent",
        "BM25Selector",
        "CallRecord",
        "Composition",
        "DelegateRequest",
        "Delegates",
        "LoopSettings",
        "ModelSettings",
        "RunResult",
        "Step",
        "Tool",
        "ToolBinding",
        "ToolRegistry",
        "ToolResult",
        "ToolSelector",
        "ToolbindError",
        "UsageError",
        "compose",
        "load_bindings",
        "mcp_server",
        "toolset",
    ]


def test_runtime_sub_namespaces() -> None:
    import toolbind.runtime.context
    import toolbind.runtime.execution
    import toolbind.runtime.exports
    import toolbind.runtime.pending

    assert toolbind.runtime.context.__all__ == [
        "Context",
        "ContextMessage",
        "Reference",
        "Variable",
        "parse_reference",
    ]
    assert toolbind.runtime.execution.__all__ == [
        "CallContext",
        "ExecutionFactory",
        "Executor",
        "InProcessExecutor",
        "RoutedCall",
        "current_call",
    ]
    assert toolbind.runtime.exports.__all__ == [
        "ExportIssue",
        "GeminiExport",
        "StrictExport",
        "anthropic_tools",
        "call_from_strict",
        "gemini_tools",
        "mcp_tools",
        "openai_strict_schema",
        "openai_strict_tools",
        "openai_tools",
        "strict_violations",
    ]
    assert toolbind.runtime.pending.__all__ == [
        "Pending",
        "PendingCall",
        "PendingSink",
        "PendingStore",
        "PendingToolCall",
        "pending_app",
    ]


def test_package_face() -> None:
    import toolbind

    assert toolbind.__all__ == [
        "Activity",
        "Agent",
        "Tool",
        "ToolBinding",
        "ToolbindError",
        "UsageError",
        "__version__",
        "compile_to_directory",
        "model_from_schema",
    ]
    assert toolbind.ToolbindError is toolbind.runtime.errors.ToolbindError


REPO = Path(__file__).resolve().parents[2]
BEGIN = (
    "# -- written from _EXPORTS by tests/runtime/test_surface.py (TOOLBIND_REGEN=1): do not edit --"
)
END = "# -- end of the block written from _EXPORTS --"
# Every face that lists its exports once (``_EXPORTS``): its file, and whether its names load on
# first use (imported under ``TYPE_CHECKING`` only, for pyright) or when it is imported.
FACES = {
    "toolbind": ("toolbind/__init__.py", True),
    "toolbind.compiler": ("compiler/__init__.py", True),
    "toolbind.runtime": ("runtime/__init__.py", True),
    "toolbind.runtime.context": ("runtime/context.py", False),
    "toolbind.runtime.execution": ("runtime/execution.py", False),
    "toolbind.runtime.exports": ("runtime/exports/__init__.py", False),
    "toolbind.runtime.pending": ("runtime/pending.py", False),
}


def _exports_table(path: Path) -> dict[str, tuple[str, ...]]:
    """The literal ``_EXPORTS`` of a face, read from its source."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_EXPORTS":
            assert node.value is not None
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path}: no _EXPORTS")


def _member_key(name: str) -> tuple[int, str]:
    """isort's order of imported names (ruff's ``order-by-type``): constants, classes, the rest."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _render(exports: dict[str, tuple[str, ...]], lazy: bool) -> str:
    """The block a face holds for pyright: the imports of ``exports`` (under ``TYPE_CHECKING``
    when ``lazy``), as ruff sorts and formats them, and the literal ``__all__``."""
    indent = "    " if lazy else ""
    absolute = sorted((m for m in exports if not m.startswith(".")), key=str.lower)
    relative = sorted((m for m in exports if m.startswith(".")), key=str.lower)
    lines = [BEGIN, *(["if TYPE_CHECKING:"] if lazy else [])]
    for group in (absolute, relative):
        if group and lines[-1] not in (BEGIN, "if TYPE_CHECKING:"):
            lines.append("")
        for module in group:
            names = sorted(exports[module], key=_member_key)
            one = f"{indent}from {module} import {', '.join(names)}"
            if len(one) <= 100:
                lines.append(one)
            else:
                lines += [f"{indent}from {module} import (", *(f"{indent}    {n}," for n in names)]
                lines.append(f"{indent})")
    every = sorted(n for names in exports.values() for n in names)
    lines += ["", "__all__ = [", *(f'    "{n}",' for n in every), "]", END]
    return "\n".join(lines)


@pytest.mark.parametrize("face", sorted(FACES))
def test_each_face_lists_its_exports_once(face: str) -> None:
    """``_EXPORTS`` (module -> names) is the one list of a face's exports; the imports pyright
    reads and the literal ``__all__`` are written from it (``TOOLBIND_REGEN=1`` rewrites them),
    and every name resolves to what its module defines (as httpx's exported-members test checks)."""
    path = REPO / FACES[face][0]
    text = path.read_text(encoding="utf-8")
    exports = _exports_table(path)
    block = _render(exports, FACES[face][1])
    start, end = text.index(BEGIN), text.index(END) + len(END)
    if os.environ.get("TOOLBIND_REGEN") and text[start:end] != block:
        path.write_text(text[:start] + block + text[end:], encoding="utf-8")
        text = path.read_text(encoding="utf-8")
    assert text[start : start + len(block)] == block, (
        f"{path}: run TOOLBIND_REGEN=1 pytest {__file__}"
    )
    module = importlib.import_module(face)
    every = [n for names in exports.values() for n in names]
    assert len(every) == len(set(every)), "a name listed twice"
    assert module.__all__ == sorted(every)
    anchor = face if path.name == "__init__.py" else face.rsplit(".", 1)[0]
    for source, names in exports.items():
        for name in names:
            assert getattr(module, name) is getattr(importlib.import_module(source, anchor), name)
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and not isinstance(v, ModuleType)  # submodules once imported
    } - {"TYPE_CHECKING", "annotations", "lazy"}
    assert public <= set(module.__all__)


def test_no_name_is_exported_by_two_faces() -> None:
    """Each public name has one home: a face's sub-namespaces share no name with it."""
    homes: dict[str, list[str]] = {}
    for face, (file, _) in FACES.items():
        if face == "toolbind":  # the package's face lends a few names of the others
            continue
        for names in _exports_table(REPO / file).values():
            for name in names:
                homes.setdefault(name, []).append(face)
    assert {n: f for n, f in homes.items() if len(f) > 1} == {}


def test_the_runtimes_top_level_is_small() -> None:
    assert len(toolbind.runtime.__all__) <= 30


def test_a_name_moved_to_a_sub_namespace_still_resolves_with_a_warning() -> None:
    import toolbind.runtime.pending

    with pytest.warns(DeprecationWarning, match=r"toolbind\.runtime\.pending\.PendingStore"):
        store = toolbind.runtime.PendingStore  # pyright: ignore[reportAttributeAccessIssue]
    assert store is toolbind.runtime.pending.PendingStore
    assert "PendingStore" not in dir(toolbind.runtime)
    with pytest.raises(AttributeError):
        _ = toolbind.runtime.NoSuchName  # pyright: ignore[reportAttributeAccessIssue]


def test_runtime_types_surface_is_sorted_and_complete() -> None:
    names = toolbind.runtime.types.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(toolbind.runtime.types, name)


def _fresh_interpreter(code: str) -> str:
    """What ``code`` prints in a new interpreter (what an import loads, unaffected by this one)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return result.stdout


def test_the_compilers_copy_of_the_runtime_types_names_is_the_same_list() -> None:
    """The compiler reads the names from ``_type_names`` (no pydantic import) to reserve them."""
    from toolbind.runtime.contract import TYPES_EXPORTS

    assert list(TYPES_EXPORTS) == toolbind.runtime.types.__all__


def test_importing_the_compiler_loads_neither_pydantic_nor_the_exporters() -> None:
    """``toolbind generate`` starts once per spec in users' builds: the compiler's import chain
    stays free of pydantic (≈110 ms), which only runtime models and ``toolbind schema`` need."""
    code = (
        "import sys, toolbind.cli._app, toolbind.compiler._api, toolbind.cli._export;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'"
        " or m == 'toolbind.runtime._exports'))"
    )
    assert _fresh_interpreter(code).strip() == "[]"


def test_runtime_never_imports_the_compiler() -> None:
    code = "import sys, toolbind.runtime, toolbind.runtime.types; print(any(m.startswith('toolbind.compiler') for m in sys.modules))"
    assert _fresh_interpreter(code).strip() == "False"


def test_each_model_validates_with_its_own_validator_once_built() -> None:
    """``ToolModel`` puts the built validator's own method in place of the Python wrapper
    (a third faster on small calls); a subclass never sees its parent's, before or after it is
    built, and a forced rebuild installs the new one."""
    from toolbind.runtime.types import JsonInt, JsonStr, ToolModel

    class Parent(ToolModel):
        a: JsonInt

    class Child(Parent):
        b: JsonStr = "x"

    assert type(Parent.model_validate_json('{"a": 1}')) is Parent
    assert Parent.model_validate_json.__self__ is Parent.__pydantic_validator__
    assert type(Child.model_validate_json('{"a": 1, "b": "y"}')) is Child  # not Parent's
    assert type(Child.model_validate({"a": 2})) is Child
    assert Child.model_validate_json.__self__ is Child.__pydantic_validator__
    assert Child.model_validate_json('{"a": 1}', strict=True).a == 1  # options pass through
    with pytest.raises(ValidationError):
        Child.model_validate_json('{"a": "1"}')
    old = Child.__pydantic_validator__
    Child.model_rebuild(force=True)
    assert Child.__pydantic_validator__ is not old
    assert Child.model_validate_json.__self__ is Child.__pydantic_validator__


def test_importing_the_runtime_types_builds_no_validator() -> None:
    """Every generated package imports ``toolbind.runtime.types``: building a validator there
    (KeepExtrasApart was built on import) also loads pydantic's plugin scan, ~30 ms."""
    code = (
        "import sys, toolbind.runtime.types as t;"
        "print(t.KeepExtrasApart.__pydantic_complete__, t.ToolModel.__pydantic_complete__,"
        " 'pydantic.plugin._loader' in sys.modules)"
    )
    assert _fresh_interpreter(code).split() == ["False", "False", "False"]
