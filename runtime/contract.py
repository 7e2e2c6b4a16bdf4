"""Runtime layer, public: the contract as generated packages import it. Imports the kernel's
contract (``toolbind.contract``), and pydantic and ``_result`` for annotations only.

Everything of ``toolbind.contract`` (the meta fields, ``ToolSchema``, the frozen HTTP description a
generated ``http.py`` holds, ``load_api``...) plus ``HttpCaller``, the one name typed by the
runtime: what a generated package's HTTP Activities need of a client, whose calls return the
runtime's ``ToolResult``. The compiler imports ``toolbind.contract`` itself, never this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from toolbind import contract as _kernel
from toolbind.contract import *  # noqa: F403  (the kernel's names, listed once there)

if TYPE_CHECKING:  # annotations only: a generated package imports this module without pydantic
    from pydantic import BaseModel

    from ._result import ToolResult

__all__: list[str] = ["HttpCaller"]
__all__ += _kernel.__all__


class HttpCaller(Protocol):
    """What a generated package's HTTP Activities need of a client (``toolbind.runtime.http``'s
    ``HttpClient`` has it): call the operation bound to ``tool`` with a validated Call, and
    return the result typed by ``output_model``."""

    def call(
        self, tool: str, call: BaseModel, output_model: type[BaseModel] | None = None
    ) -> ToolResult[Any]: ...

    async def acall(
        self, tool: str, call: BaseModel, output_model: type[BaseModel] | None = None
    ) -> ToolResult[Any]: ...
