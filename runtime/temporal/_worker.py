"""toolbind.runtime.temporal, runtime layer (imports temporalio's worker, the runtime's registries
and bindings, and this package's activities, workflows and ``_world``): ``worker``, a Temporal
worker hosting the durable loop, the LLM activity and the tools' Activities.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from .._binding import ToolBinding
from .._registry import ActivityFn, ActivityRegistry, ToolRegistry
from ._executor import TemporalExecutor
from ._llm_activity import llm_activity
from ._tool_activity import tool_activity
from ._workflow import CallWorkflow, RunWorkflow
from ._world import WORLDS, World, router


def worker(
    client: Client,
    *,
    task_queue: str,
    tools: ToolRegistry | ModuleType | Sequence[ToolBinding],
    activities: ActivityRegistry | Mapping[str, ActivityFn] | None = None,
    executor: TemporalExecutor | None = None,
    workflows: bool = True,
    llm: bool = True,
    tool_activities: bool = True,
    activity_timeout: float = 30.0,
    max_concurrent_activities: int = 100,
    deps: Any = None,
) -> Worker:
    """A Temporal worker on ``task_queue`` hosting the durable loop (``workflows``), the LLM
    activity (``llm``) and the tools' Activities (``tool_activities``): ``activities`` (user
    functions) and the generated HTTP Activities given in it. Run it with ``await w.run()``
    (or ``async with w:``). Every worker of a deployment is given the same tools. ``deps``: what
    the Activities that take an ``ActivityContext`` get as ``ctx.deps`` (this process's
    database handle, client, ...: a durable run's own cannot cross the wire)."""
    if isinstance(tools, ToolRegistry):
        registry = tools
    elif isinstance(tools, ModuleType):
        registry = ToolRegistry()
        registry.register_package(tools)
    else:
        registry = ToolRegistry(list(tools))
    fns = (
        activities
        if isinstance(activities, ActivityRegistry)
        else ActivityRegistry(dict(activities or {}))
    )
    chosen = executor or TemporalExecutor(task_queue=task_queue)
    world = World(
        tools=registry,
        activities=fns,
        executor=chosen,
        llm_queue=task_queue,
        activity_timeout=activity_timeout,
        router=router(registry, fns, activity_timeout),
        deps=deps,
    )
    WORLDS[task_queue] = world
    acts: list[Callable[..., Any]] = []
    if tool_activities:
        acts.append(tool_activity(world))
    if llm:
        acts.append(llm_activity(world))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[RunWorkflow, CallWorkflow] if workflows else [],
        activities=acts,
        max_concurrent_activities=max_concurrent_activities,
    )
