"""The one contract between compiler, runtime and generated code, checked by reading the source.

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


@pytest.mark.parametrize("name", ["META_FIELDS", "META_FIELD_NAMES", "ExecutionType"])
def test_shared_names_are_defined_once(name: str) -> None:
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
    assert definitions == ["toolbind/contract.py"]


def test_the_contract_is_importable_without_pydantic() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolbind.runtime.contract as c; "
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'; "
        "assert c.META_FIELDS[0] == '_tool'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
