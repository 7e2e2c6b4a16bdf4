"""toolbind.compiler: tool specs in, typed bindings packages out.

Data flows one way: ``frontends`` (spec → IR) → ``backends`` (IR → text); IR → IR passes go in
``passes/`` when one is needed.
The public surface is small; everything else is private.
"""

from ._api import compile_to_directory, composed_schema, generate_tree, load_package
from ._driver import GeneratedTree, OutputError
from ._model import model_from_schema
from .diagnostics import Diagnostic, SpecError

__all__ = [
    "Diagnostic",
    "GeneratedTree",
    "OutputError",
    "SpecError",
    "compile_to_directory",
    "composed_schema",
    "generate_tree",
    "load_package",
    "model_from_schema",
]
