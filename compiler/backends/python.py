"""Compiler layer (backends): IR → the Python source of a bindings package (``PythonBackend``).

Imports ``ir``, ``diagnostics``, ``passes.graph`` and the backends' modules, one per thing
written: ``_modelviews`` (the model classes as views, through ``_types``), ``_models``
(``models.py``, ``_models/``), ``_index`` (``tools.py``, ``__init__.py``, ``activities.py``,
the scaffold), ``_activities`` (``http.py``, ``mcp.py``) and ``_json_files`` (``tools.json``,
``schema.json``); ``_context`` holds what they share. Never a frontend. Templates only see the
view objects built here (``ClassView``, ``FieldView``, ``ToolView``), never a spec dict.

Safety: every spec string reaches the source as a Python literal made by ``repr`` (which escapes
quotes, backslashes, newlines, NUL and every non-printable character, bidi controls included)
or as a docstring made by ``docstring``; identifiers come only from ``naming``. Nothing a spec
says is ever placed in a comment or evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostics
from ..ir import SchemaNode, SpecPackage
from ..passes.graph import order_by_bases
from ._activities import ServiceActivities
from ._context import Namer, RenderState
from ._index import IMPORT_MARK, PackageIndex
from ._json_files import ToolsJson
from ._models import LazyModels, models_module
from ._modelviews import ModelViews
from ._source import in_docstring, py_str

LAZY_MODELS = 50
"""A package with more classes and aliases than this loads its models lazily (``_models/``).

Building a pydantic model costs about half a millisecond: above some fifty, an eager package's
``import`` is measurably slower than a lazy one's (which loads pydantic and
``toolbind.runtime.types`` only; bench/openapi.py measures every corpus package)."""

RENDER_MEMO_MIN = 200
"""A package with at least this many tools and definitions keeps its render memo (``memo``):
below, its whole-package passes cost less than reading and writing what they would keep."""


def scaffold_for(rendered: Rendered, import_path: str) -> str:
    """The Activity scaffold of ``rendered``, importing the package as ``import_path``."""
    return rendered.scaffold.replace(IMPORT_MARK, import_path)


@dataclass
class Rendered:
    """The files of one generated package, keyed by relative path, and its Activity scaffold."""

    package: str
    files: dict[str, str]
    render_scaffold: Callable[[], str]
    """A starting module for the user's Activities, rendered on request (``toolbind scaffold``:
    a ``generate`` never writes it, and rendering it costs a pass over every tool)."""
    keys: dict[str, str] = field(default_factory=lambda: {})
    """Files keyed by a digest of what they are rendered from (``PythonBackend``'s ``known``)."""
    skipped: list[str] = field(default_factory=lambda: [])
    """Files not rendered (not in ``files``): ``known`` gave them their key already."""
    memo: dict[str, Any] = field(default_factory=lambda: {})
    """What the next render may take instead of making it again (``PythonBackend``'s
    ``memo``): JSON values, kept by the caller beside the output."""

    @property
    def scaffold(self) -> str:
        """The Activity scaffold, rendered now (``scaffold_for`` names the package's import)."""
        return self.render_scaffold()


class PythonBackend:
    """Renders one ``SpecPackage`` to the files of its package."""

    def __init__(
        self,
        pkg: SpecPackage,
        package: str,
        diags: Diagnostics,
        *,
        version: str,
        format_assertion: bool = False,
        format_checks: bool = True,
        known: Mapping[str, str] | None = None,
        memo: Mapping[str, Any] | None = None,
        previous: Callable[[str], str | None] | None = None,
    ) -> None:
        """``known``: file → the key it was rendered from last time; a file whose key is the
        same is not rendered again but listed in ``Rendered.skipped`` (the caller has its text).
        Keys are digests of everything the file's text is made from, ``version`` included.

        ``memo``: the previous render's ``Rendered.memo`` (JSON values): results of a large
        package's whole-package passes, each with the key of what it was made from, taken
        instead of made again when this render's key is the same.

        ``previous``: the text of a file of the previous output (its path in the package), as
        written (the caller checks), or None; the memo says what of it may be reused."""
        self.state = RenderState(
            pkg=pkg,
            package=package,
            diags=diags,
            version=version,
            format_assertion=format_assertion,
            format_checks=format_checks,
            known=known or {},
            previous_memo=memo or {},
            previous=previous,
            memoize=len(pkg.tools) + len(pkg.definitions) >= RENDER_MEMO_MIN,
            names=Namer(pkg, diags),
        )
        self.views = ModelViews(self.state)
        self.index = PackageIndex(self.state)
        self.json = ToolsJson(self.state)
        self.services = ServiceActivities(self.state)

    def render(self) -> Rendered:
        """Every file of the package (but those ``known`` gave their key already)."""
        state = self.state
        tools = self.views.build()
        aliases = self.views.aliases
        classes = order_by_bases(
            self.views.classes, lambda c: c.name, lambda c: c.bases.split(", ")
        )
        ctx = self.index.context(tools, classes, aliases)
        tool_data = self.json.tool_data(tools)
        files: dict[str, str] = {
            "tools.json": "",  # (made below: a large package's with its index, in one pass)
            "schema.json": self.json.schema_json(tool_data),
        }
        self.index.activities(files, ctx)
        large = len(classes) + len(aliases) > LAZY_MODELS
        if large:
            # (the eager modules are not rendered at all: on a large spec, rendering every
            # model into one module only to drop it cost a fifth of the package's render)
            models = LazyModels(state, classes, aliases)
            files.update(models.write(ctx))
            self.index.lazy(files, ctx, models.model_modules)
            files.update(self.json.indexed_tools_json(tool_data))
        else:
            files["__init__.py"] = self.index.init_module(ctx)
            files["models.py"] = models_module(ctx)
            files["tools.py"] = self.index.tools_module(ctx)
            files["tools.json"] = self.json.json_file(tool_data)
        if state.pkg.http is not None:
            self.services.http_module(files, ctx, tools, large)
        if state.pkg.mcp is not None:
            self.services.mcp_module(files, ctx, tools)
        return Rendered(
            package=state.package,
            files=files,
            render_scaffold=lambda: self.index.scaffold(ctx),
            keys=state.keys,
            skipped=state.skipped,
            memo=state.memo,
        )

    def render_model(self, root: SchemaNode, name: str) -> tuple[str, str]:
        """The source of a module holding the model of one schema, and that model's class name.

        Used by ``model_from_schema``: the same definitions, classes and types as a package's
        ``models.py``, for one schema instead of a list of tools. A root that is not an object
        becomes a ``RootModel``.
        """
        cls = self.views.model(root, name)
        classes, aliases = self.views.classes, self.views.aliases
        ctx: dict[str, Any] = {
            "exported": sorted([c.name for c in classes] + [a.name for a in aliases]),
            "header": f"# Generated by toolbind {self.state.version} from a schema given at run time.",
            "source_literal": in_docstring(py_str(self.state.pkg.source)),
            "classes": classes,
            "aliases": aliases,
        }
        return models_module(ctx), cls
