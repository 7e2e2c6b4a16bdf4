"""The public surfaces stay small and deliberate: a change here is an API change."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import ValidationError

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
        "AgentError",
        "AgentEvent",
        "AlreadyResolved",
        "BM25Selector",
        "CallContext",
        "CallRecord",
        "ComposableTool",
        "Composition",
        "Context",
        "ContextMessage",
        "DelegateRequest",
        "Delegates",
        "ExecutionFactory",
        "Executor",
        "ExportIssue",
        "GeminiExport",
        "InProcessExecutor",
        "InvalidReference",
        "LLMError",
        "ModelFeedback",
        "NotStrictable",
        "Pending",
        "PendingCall",
        "PendingError",
        "PendingExpired",
        "PendingSink",
        "PendingStore",
        "PendingToolCall",
        "Reference",
        "RegistrationError",
        "ResponseValidationError",
        "RoutedCall",
        "RunFailure",
        "RunResult",
        "Step",
        "StrictExport",
        "Tool",
        "ToolBinding",
        "ToolRegistry",
        "ToolResult",
        "ToolSelector",
        "ToolbindError",
        "UnknownPendingCall",
        "UnresolvedReference",
        "UsageError",
        "Variable",
        "anthropic_tools",
        "call_from_strict",
        "compose",
        "current_call",
        "gemini_tools",
        "load_bindings",
        "mcp_server",
        "mcp_tools",
        "nullable",
        "openai_strict_schema",
        "openai_strict_tools",
        "openai_tools",
        "parse_reference",
        "pending_app",
        "resolve_activity",
        "strict_violations",
        "tool_schema",
        "toolset",
    ]


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """name -> module of the ``if TYPE_CHECKING:`` imports of a package's ``__init__``."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        found[alias.asname or alias.name] = "." * stmt.level + (stmt.module or "")
    return found


@pytest.mark.parametrize("module", [toolbind.compiler, toolbind.runtime], ids=lambda m: m.__name__)
def test_a_lazy_package_names_each_export_once(module: ModuleType) -> None:
    """``_EXPORTS`` (module -> names) is the one list; ``__all__`` and the ``TYPE_CHECKING``
    imports repeat it for pyright, which reads only literals: all three must agree, and every
    name must resolve to what its module defines (as httpx's exported-members test checks)."""
    where: dict[str, str] = vars(module)["_WHERE"]
    assert module.__all__ == sorted(where)
    assert _type_checking_imports(module) == where
    for name, source in where.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(source, module.__name__), name)
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and not isinstance(v, ModuleType)  # submodules once imported
    } - {"TYPE_CHECKING", "Any", "annotations"}
    assert public <= set(module.__all__)


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
