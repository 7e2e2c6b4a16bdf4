"""Runtime layer: the runtime's one way into ``toolbind.compiler`` (imported lazily, here only).

The runtime never needs the compiler to run a generated package. It needs it when a user hands it
a raw JSON Schema at run time: a tool registered as a schema dict (``Tool.register(name, {...})``)
or an output given as a schema dict (``compose(..., output={...})``). Both are compiled by the
same pipeline as ``toolbind generate``, so they get the same faithful models and the same
diagnostics. Every such use goes through the functions below; ``tests`` check by AST that no
other runtime module imports ``toolbind.compiler``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolbind.compiler import SpecError
    from toolbind.compiler.ir import ToolSpec


def spec_error() -> type[SpecError]:
    """The compiler's ``SpecError`` class, for an ``except`` clause (evaluated only on error)."""
    from toolbind.compiler import SpecError

    return SpecError


def model_from_schema(schema: Any, *, name: str) -> type[BaseModel]:
    """``toolbind.compiler.model_from_schema``. Raises ``SpecError`` for a bad schema."""
    from toolbind.compiler import model_from_schema as compile_model

    return compile_model(schema, name=name)


def read_tool_schema(name: str, schema: Any, *, source: str) -> ToolSpec:
    """``toolbind.compiler.read_tool_schema``: the seeds reader on one tool schema.

    Raises ``SpecError`` for a schema the seeds frontend would refuse in a spec file.
    """
    from toolbind.compiler import read_tool_schema as read

    return read(name, schema, source=source)
