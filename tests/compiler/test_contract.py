"""The one contract between compiler, runtime and generated code, and the layers, checked by
reading the source.

- The layers: the kernel (``toolbind/``) imports nothing of toolbind; the compiler imports the
  kernel, never the runtime (but for one lazy entry: listing a live MCP server's tools), the CLI
  or the contract tester; the runtime and the contract tester never import the CLI.
- No import cycle of any kind among toolbind's modules: ``TYPE_CHECKING`` and function-level
  imports count as much as module-level ones.
- No compiler module and no generated module imports a private runtime module
  (``toolbind.runtime._x``): they use the public ``toolbind.runtime.contract`` and the runtime's
  public API.
- The runtime reaches the compiler from one module only (``runtime/_compiler.py``).
- The names the three share (meta fields, execution types) are defined once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbind.compiler import compile_to_directory
from toolbind.compiler.passes.graph import strongly_connected

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs"


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Each module an import statement in ``path`` names, fully qualified where it is absolute
    (``from toolbind.runtime import _x`` names ``toolbind.runtime._x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


# Where each package of the distribution lives (pyproject's package-dir).
PACKAGES = {
    "toolbind": "toolbind",
    "toolbind.cli": "cli",
    "toolbind.compiler": "compiler",
    "toolbind.runtime": "runtime",
    "toolbind.testing": "testing",
}


def _modules() -> dict[str, Path]:
    """Every module of the distribution by its dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted names an import statement of module ``name`` (at ``path``) may name: the
    module it imports from, and each imported name as a submodule of it."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def _import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported toolbind module: line}, from every import statement anywhere in the
    module (top level, ``if TYPE_CHECKING:``, inside functions). A package's face importing its
    own sub-modules is no edge: a face re-exports its children by design, and importing a child
    runs its package's face first anyway."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(name, path, node):
                while target and target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                face_of_child = path.name == "__init__.py" and target.startswith(name + ".")
                if target in modules and target != name and not face_of_child:
                    graph[name].setdefault(target, node.lineno)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    nodes = sorted(graph)
    components = strongly_connected(nodes, {v: sorted(graph[v]) for v in nodes})
    return sorted(sorted(c) for c in components if len(c) > 1)


def test_no_import_cycle_of_any_kind() -> None:
    assert _cycles(_import_graph()) == []


def test_the_cycle_check_sees_type_checking_and_function_level_imports() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _cycles(graph) == [["a", "b", "c"]]
    graph = _import_graph()
    assert "toolbind.cli._app" in graph["toolbind.cli._main"]  # inside ``main``
    assert "toolbind.runtime._result" in graph["toolbind.runtime.contract"]  # TYPE_CHECKING


def _layer(module: str) -> str:
    """``kernel``, ``cli``, ``compiler``, ``runtime`` or ``testing``."""
    parts = module.split(".")
    return (
        parts[1]
        if len(parts) > 1 and parts[1] in ("cli", "compiler", "runtime", "testing")
        else "kernel"
    )


# What each layer must not import; the one exception is the compiler's MCP frontend, which
# lists a live MCP server's tools through the runtime's MCP client, inside the function that
# needs it (only an MCP configuration given as a spec gets there).
FORBIDDEN = {
    "kernel": {"cli", "compiler", "runtime", "testing"},
    "compiler": {"cli", "runtime", "testing"},
    "runtime": {"cli", "testing"},
    "testing": {"cli"},
    "cli": set[str](),
}
ALLOWED = {("toolbind.compiler.frontends.mcp", "toolbind.runtime.mcp")}


def test_each_layer_imports_only_the_layers_below_it() -> None:
    found: list[str] = []
    for module, imports in _import_graph().items():
        if module == "toolbind":  # the face: its entry points load lazily, from any layer
            continue
        for target, line in imports.items():
            if _layer(target) in FORBIDDEN[_layer(module)] and (module, target) not in ALLOWED:
                found.append(f"{module}:{line}: imports {target}")
    assert found == []


def test_the_compilers_one_runtime_import_is_inside_a_function() -> None:
    path = REPO / "compiler" / "frontends" / "mcp.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = [
        n
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom)) and "runtime" in ast.dump(n)
    ]
    assert top_level == []


def _private_runtime_imports(root: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[:2] == ["toolbind", "runtime"] and any(p.startswith("_") for p in parts[2:]):
                found.append(f"{path.relative_to(root)}:{line}: {name}")
    return found


def test_no_compiler_module_imports_a_private_runtime_module() -> None:
    assert _private_runtime_imports(REPO / "compiler") == []


def test_no_committed_generated_module_imports_a_private_runtime_module() -> None:
    assert list((REPO / "generated").rglob("*.py")), "generated/ holds no modules"
    assert _private_runtime_imports(REPO / "generated") == []


SECURED_OPENAPI = """\
openapi: 3.0.3
info: {title: Secured, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
    basic: {type: http, scheme: basic}
security: [{key: []}]
paths:
  /items/{id}:
    get:
      operationId: getItem
      security: [{basic: []}]
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object, properties: {id: {type: integer}}}}}
    post:
      operationId: putItem
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      requestBody:
        content: {multipart/form-data: {schema: {type: object, properties: {f: {type: string}}}}}
      responses: {"204": {description: done}}
"""


def test_freshly_compiled_packages_of_every_kind_import_no_private_runtime_module(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "secured.yaml"
    spec.write_text(SECURED_OPENAPI, encoding="utf-8")
    inputs = [*sorted(p for p in SPECS.iterdir() if p.is_file() and p.suffix != ".md"), spec]
    out = tmp_path / "out"
    compile_to_directory(inputs, out)
    assert (out / "secured" / "http.py").is_file()
    assert _private_runtime_imports(out) == []


def test_the_runtime_reaches_the_compiler_from_one_module() -> None:
    importers: list[str] = []
    for path in sorted((REPO / "runtime").rglob("*.py")):
        if any(name.split(".")[:2] == ["toolbind", "compiler"] for _, name in _imports(path)):
            importers.append(path.relative_to(REPO / "runtime").as_posix())
    assert importers == ["_compiler.py"]


@pytest.mark.parametrize(
    ("name", "home"),
    [
        # beside the Call extensions, so that reading a model's answer loads no contract
        ("META_FIELDS", "toolbind/_compose.py"),
        ("META_FIELD_NAMES", "toolbind/contract.py"),
        ("ExecutionType", "toolbind/contract.py"),
    ],
)
def test_shared_names_are_defined_once(name: str, home: str) -> None:
    definitions: list[str] = []
    for root in ("toolbind", "compiler", "runtime", "testing"):
        for path in sorted((REPO / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                targets: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets = list(node.targets)
                elif isinstance(node, ast.AnnAssign):
                    targets = [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    definitions.append(f"{root}/{path.relative_to(REPO / root)}")
    assert definitions == [home]


def test_the_contract_is_importable_without_pydantic() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolbind.runtime.contract as c; "
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'; "
        "assert c.META_FIELDS[0] == '_tool'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
