"""Compiler layer (backends): IR → the Python source of a bindings package (``PythonBackend``).

Imports ``ir``, ``diagnostics``, ``_steps``, ``passes.graph`` and the backends' modules, one per thing
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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._steps import DIRECT, Steps
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

STEPS_MIN = 200
"""A package with at least this many tools and definitions runs its whole-package passes (the
definitions' views, the models' split, the shared subschemas) as named steps (``Steps.run``):
below, they cost less than keying them and writing their results as JSON."""


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
        steps: Steps = DIRECT,
    ) -> None:
        """``steps``: how the costly parts of the render are run (``_steps``): each file is
        keyed (``Steps.file``: a digest of everything its text is made from, ``version``
        included) and not in ``Rendered.files`` when the steps say it is not to be made; a
        large package's whole-package passes are named steps (``STEPS_MIN``)."""
        self.state = RenderState(
            pkg=pkg,
            package=package,
            diags=diags,
            version=version,
            format_assertion=format_assertion,
            format_checks=format_checks,
            steps=steps,
            named_steps=len(pkg.tools) + len(pkg.definitions) >= STEPS_MIN,
            names=Namer(pkg, diags),
        )
        self.views = ModelViews(self.state)
        self.index = PackageIndex(self.state)
        self.json = ToolsJson(self.state)
        self.services = ServiceActivities(self.state)

    def render(self) -> Rendered:
        """Every file of the package (but those its steps say are not to be made)."""
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
