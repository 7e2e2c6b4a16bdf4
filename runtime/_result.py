"""Runtime layer: the result envelope of every tool execution. Imports pydantic and ``_secrets``.

AgentB's ``IToolResult`` (agentb-tools.md): ``success``, ``data`` (what goes back to the LLM),
``error`` (a message when ``success`` is false) and ``metadata`` (e.g. an HTTP status and selected
headers). Explicit Activities, HTTP Activities and latent outputs all end up in this shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from ._secrets import scrub_everywhere

DataT = TypeVar("DataT")


class ToolResult(BaseModel, Generic[DataT]):
    """The outcome of one tool call.

    Attributes:
        success: True when the tool ran and produced ``data``.
        data: the tool's output (typed by its Output model when there is one), or None.
        error: what went wrong, for the LLM and the logs, when ``success`` is False. Never holds
            a secret.
        metadata: extra facts about the execution (HTTP status, selected headers, timing).
    """

    model_config = ConfigDict(frozen=True)

    success: bool
    data: DataT | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])

    @classmethod
    def ok(cls, data: DataT, **metadata: Any) -> ToolResult[DataT]:
        """A successful result."""
        return cls(success=True, data=data, metadata=metadata)

    @classmethod
    def fail(cls, error: str, *, data: DataT | None = None, **metadata: Any) -> ToolResult[DataT]:
        """A failed result; ``data`` may carry e.g. a non-2xx response body."""
        return cls(success=False, data=data, error=error, metadata=metadata)

    def typed_error(self, models: Mapping[str, type[BaseModel]]) -> ToolResult[DataT]:
        """This result, with an HTTP error body read into the model the operation declares for
        its status (``"404"``, then ``"4XX"``, then ``"default"``): ``data`` holds the model and
        ``metadata["error_model"]`` its name. Any other result is returned as it is. A body that
        does not fit the model, or an object that carries none of its fields (a model whose
        fields are all optional would take any object, and show it as empty fields: a proxy's
        or a framework's own error page is no such error), is kept as the API sent it, with
        ``metadata["error_model_unmatched"]`` naming the model. Generated HTTP Activities call
        this with the operation's declared error responses."""
        status = self.metadata.get("status")
        if self.success or self.metadata.get("error_type") != "http_status" or status is None:
            return self
        code = str(status)
        model = (
            models.get(code)
            or models.get(f"{code[:1]}XX")
            or models.get(f"{code[:1]}xx")
            or models.get("default")
        )
        if model is None:
            return self
        unmatched = {**self.metadata, "error_model_unmatched": model.__name__}
        if not _carries_a_field(model, self.data):
            return self.model_copy(update={"metadata": unmatched})
        try:
            typed = model.model_validate(self.data)
        except ValidationError:
            return self.model_copy(update={"metadata": unmatched})
        return self.model_copy(
            update={"data": typed, "metadata": {**self.metadata, "error_model": model.__name__}}
        )

    def __repr__(self) -> str:
        # ``data`` is what the API sent, secrets it echoes included; a repr reaches logs
        return scrub_everywhere(super().__repr__())

    def __str__(self) -> str:
        return scrub_everywhere(super().__str__())


def _carries_a_field(model: type[BaseModel], data: Any) -> bool:
    """Whether ``data`` holds at least one of ``model``'s fields (by JSON name) — always, for a
    model that is not an object of named fields (a ``RootModel``: a list, a string, a union)
    or a body that is not an object (the model's validation decides)."""
    fields = model.model_fields
    if not isinstance(data, Mapping) or not fields or issubclass(model, RootModel):
        return True
    keys = cast("Mapping[str, Any]", data).keys()
    return any((info.alias or name) in keys or name in keys for name, info in fields.items())
