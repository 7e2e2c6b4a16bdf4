"""toolbind.runtime.temporal, runtime layer (imports temporalio's ``RetryPolicy``, the runtime's
``yaml12``, ``errors`` and ``_binding``, and this package's ``_names``): per-tool retry policies.

``ToolPolicy`` is how one tool's activity is scheduled; ``policies_from_spec`` reads the
``x-toolbind-retry`` extensions of a spec file into policies by tool name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

from temporalio.common import RetryPolicy

from .._binding import ToolBinding
from ..errors import UsageError
from ._names import EXTENSION


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """How one tool's activity is scheduled (None: the default; see the module docstring).

    ``x-toolbind-retry`` in a spec holds the same fields in camelCase (``maxAttempts``,
    ``initialInterval``, ``backoff``, ``maxInterval``, ``startToClose``, ``heartbeat``,
    ``taskQueue``, ``nonRetryable``; seconds as numbers), at the document's root (every tool) or
    in a tool / OpenAPI operation (that tool)."""

    task_queue: str | None = None
    start_to_close: float | None = None
    heartbeat: float | None = None
    max_attempts: int | None = None
    initial_interval: float | None = None
    backoff: float | None = None
    max_interval: float | None = None
    non_retryable: tuple[str, ...] | None = None

    def over(self, base: ToolPolicy) -> ToolPolicy:
        """This policy's fields where set, ``base``'s elsewhere."""
        return ToolPolicy(
            **{
                name: getattr(self, name)
                if getattr(self, name) is not None
                else getattr(base, name)
                for name in _POLICY_FIELDS
            }
        )

    @classmethod
    def from_extension(cls, value: Any, where: str) -> ToolPolicy:
        """Read an ``x-toolbind-retry`` object.

        Raises:
            UsageError: not an object, an unknown field or a value of the wrong type (located).
        """
        if not isinstance(value, Mapping):
            raise UsageError(f"{where}: error: {EXTENSION} must be an object")
        fields: dict[str, Any] = {}
        for key, raw in cast("Mapping[str, Any]", value).items():
            item: Any = raw
            name = _CAMEL.get(key)
            if name is None:
                raise UsageError(
                    f"{where}/{key}: error: unknown {EXTENSION} field — expected one of "
                    f"{', '.join(sorted(_CAMEL))}"
                )
            if name == "task_queue":
                ok = isinstance(item, str) and bool(item)
            elif name == "non_retryable":
                ok = isinstance(item, list) and all(
                    isinstance(x, str) for x in cast("list[Any]", item)
                )
                if ok:
                    item = tuple(cast("list[str]", raw))
            elif name == "max_attempts":
                ok = isinstance(item, int) and not isinstance(item, bool) and item >= 0
            else:
                ok = isinstance(item, int | float) and not isinstance(item, bool) and item > 0
            if not ok:
                raise UsageError(f"{where}/{key}: error: {item!r} is not a valid {key}")
            fields[name] = item
        return cls(**fields)

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            initial_interval=timedelta(seconds=self.initial_interval or 1.0),
            backoff_coefficient=self.backoff or 2.0,
            maximum_interval=timedelta(seconds=self.max_interval or 30.0),
            maximum_attempts=self.max_attempts if self.max_attempts is not None else 3,
            non_retryable_error_types=list(self.non_retryable or ()),
        )


_POLICY_FIELDS = (
    "task_queue",
    "start_to_close",
    "heartbeat",
    "max_attempts",
    "initial_interval",
    "backoff",
    "max_interval",
    "non_retryable",
)
_CAMEL = {
    "taskQueue": "task_queue",
    "startToClose": "start_to_close",
    "heartbeat": "heartbeat",
    "maxAttempts": "max_attempts",
    "initialInterval": "initial_interval",
    "backoff": "backoff",
    "maxInterval": "max_interval",
    "nonRetryable": "non_retryable",
}
DEFAULT_POLICY = ToolPolicy(
    heartbeat=10.0, max_attempts=3, initial_interval=1.0, backoff=2.0, max_interval=30.0
)


def policies_from_spec(
    path: str | os.PathLike[str], tools: Sequence[ToolBinding]
) -> dict[str, ToolPolicy]:
    """The ``x-toolbind-retry`` policies of a spec file (JSON or YAML), tool name → policy: the
    document's root one for every tool of the spec, a tool's (seeds format: in the tool's schema;
    OpenAPI: in the operation, matched by ``operationId``) over it.

    Raises:
        UsageError: a malformed extension (located by file and JSON pointer).
    """
    from toolbind.yaml12 import load_yaml

    text = Path(path).read_text(encoding="utf-8")
    document: Any = load_yaml(text)
    if not isinstance(document, Mapping):
        return {}
    doc = cast("Mapping[str, Any]", document)
    root = ToolPolicy()
    if EXTENSION in doc:
        root = ToolPolicy.from_extension(doc[EXTENSION], f"{path}#")
    own: dict[str, ToolPolicy] = {}
    # the seeds' format: a map name → tool schema (or those under ``tools``)
    tools_section: Any = doc.get("tools", doc if "paths" not in doc else None)
    section = "/tools" if "tools" in doc else ""
    if isinstance(tools_section, Mapping):
        for name, schema in cast("Mapping[str, Any]", tools_section).items():
            if isinstance(schema, Mapping) and EXTENSION in schema:
                own[str(name)] = ToolPolicy.from_extension(
                    cast("Mapping[str, Any]", schema)[EXTENSION], f"{path}#{section}/{name}"
                )
    paths: Any = doc.get("paths")
    if isinstance(paths, Mapping):
        for route, item in cast("Mapping[str, Any]", paths).items():
            if not isinstance(item, Mapping):
                continue
            for method, op in cast("Mapping[str, Any]", item).items():
                if isinstance(op, Mapping) and EXTENSION in op:
                    operation = cast("Mapping[str, Any]", op)
                    pointer = (
                        f"{path}#/paths/{str(route).replace('~', '~0').replace('/', '~1')}/{method}"
                    )
                    own[str(operation.get("operationId", pointer))] = ToolPolicy.from_extension(
                        operation[EXTENSION], pointer
                    )
    found: dict[str, ToolPolicy] = {}
    for tool in tools:
        names = (tool.name, tool.original_name, tool.provider_name)
        mine = next((own[n] for n in names if n is not None and n in own), ToolPolicy())
        policy = mine.over(root)
        if policy != ToolPolicy():
            found[tool.name] = policy
    return found


def policy_dict(policy: ToolPolicy) -> dict[str, Any]:
    """A policy as workflow data (the one-call workflow's input)."""
    return {name: getattr(policy, name) for name in _POLICY_FIELDS}
