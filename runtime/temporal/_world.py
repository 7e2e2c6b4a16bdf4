"""toolbind.runtime.temporal, runtime layer (imports temporalio's workflow API, the runtime's Agent
and registries, and this package's ``_executor``): what a worker hosts.

A worker registers its ``World`` under its task queue; the workflow classes, which Temporal
instantiates itself, find theirs there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from temporalio import workflow

from .._agent import Agent, LoopSettings
from .._registry import ActivityRegistry, ToolRegistry
from ._executor import TemporalExecutor


@dataclass(slots=True)
class World:
    """What a worker hosts: the tools, their Activities, the executor's configuration."""

    tools: ToolRegistry
    activities: ActivityRegistry
    executor: TemporalExecutor
    llm_queue: str
    activity_timeout: float
    router: Agent
    deps: Any = None
    composer: dict[Any, Any] = field(default_factory=dict[Any, Any])


def router(tools: ToolRegistry, activities: ActivityRegistry, timeout: float) -> Agent:
    """An Agent that never calls a model: its routing (Activities by name, gateway HTTP
    executions) and composition are the same code the in-process loop runs."""
    return Agent(
        "http://127.0.0.1:9/v1",
        model="-",
        tools=tools,
        activities=activities,
        loop=LoopSettings(activity_timeout=timeout),
    )


WORLDS: dict[str, World] = {}
"""Task queue → what the worker polling it hosts (the workflow classes are module-level)."""


def current_world() -> World:
    """The World of the worker running the current workflow."""
    return WORLDS[workflow.info().task_queue]
