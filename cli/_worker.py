"""CLI layer: ``toolbind worker``, a Temporal worker for specs (compiled in memory) or generated packages.

The worker hosts the durable agent loop (workflow ``toolbind.run``), the LLM activity and every
tool Activity: the generated HTTP Activities of OpenAPI specs/packages and the functions of an
``--activities`` module (which win). The ``x-toolbind-retry`` extensions of the specs set the
per-tool retry policies. Generated packages know nothing of Temporal: all of it is here and in
``toolbind.runtime.temporal``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import shutil
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from toolbind.errors import UsageError


def load(
    sources: Sequence[str],
    *,
    activities: str | None = None,
    base_url: str | None = None,
    allow_refs: Sequence[str] = (),
) -> tuple[list[Any], dict[str, Callable[..., Any]], dict[str, Any], Path]:
    """Tools, Activities, ``x-toolbind-retry`` policies, and the temporary directory of the
    compiled specs (the caller removes it).

    Raises:
        SpecError: a spec has errors.
        UsageError: the temporal extra is missing, a package can't be imported, the activities
            module can't be used, or a policy is malformed.
    """
    try:
        from toolbind.runtime.temporal import policies_from_spec
    except ImportError:
        raise UsageError(
            "toolbind worker needs the temporal extra: pip install 'toolbind[temporal]'"
        ) from None
    from ._serve import collect

    specs = [Path(s) for s in sources if Path(s).exists()]
    packages: list[Any] = []
    for name in (s for s in sources if not Path(s).exists()):
        try:
            pkg = importlib.import_module(name)
        except ImportError as exc:
            raise UsageError(
                f"{name}: neither a spec file nor an importable package ({exc})"
            ) from None
        if not hasattr(pkg, "TOOLS"):
            raise UsageError(f"{name}: not a generated toolbind package (no TOOLS)")
        packages.append(pkg)
    tools, fns, root = collect(
        specs, packages=packages, activities=activities, base_url=base_url, allow_refs=allow_refs
    )
    try:
        policies: dict[str, Any] = {}
        for spec in (p for p in specs if p.is_file()):
            policies.update(policies_from_spec(spec, [t for t in tools if _from(t, spec)]))
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return tools, fns, policies, root


def _from(tool: Any, spec: Path) -> bool:
    source = str(getattr(tool, "source", "") or "").partition("#")[0]
    return not source or Path(source).name == spec.name


def run(
    sources: Sequence[str],
    *,
    task_queue: str,
    address: str,
    namespace: str,
    activities: str | None,
    base_url: str | None,
    queues: str,
    workflows: bool,
    llm: bool,
    max_concurrent: int,
    allow_refs: Sequence[str] = (),
    announce: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True),
) -> None:
    """Run a worker until SIGINT/SIGTERM.

    Raises:
        SpecError, UsageError: as ``load``; UsageError also when the server can't be reached.
    """
    if queues not in ("one", "toolset", "tool"):
        raise UsageError(f"--queues {queues!r}: expected one, toolset or tool")
    tools, fns, policies, root = load(
        sources, activities=activities, base_url=base_url, allow_refs=allow_refs
    )
    try:
        asyncio.run(
            _serve(
                tools,
                fns,
                policies,
                task_queue=task_queue,
                address=address,
                namespace=namespace,
                queues=queues,
                workflows=workflows,
                llm=llm,
                max_concurrent=max_concurrent,
                announce=announce,
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _serve(
    tools: list[Any],
    fns: dict[str, Callable[..., Any]],
    policies: dict[str, Any],
    *,
    task_queue: str,
    address: str,
    namespace: str,
    queues: Literal["one", "toolset", "tool"],
    workflows: bool,
    llm: bool,
    max_concurrent: int,
    announce: Callable[[str], None],
) -> None:
    from temporalio.client import Client

    from toolbind.runtime.temporal import TemporalExecutor, worker

    try:
        client = await Client.connect(address, namespace=namespace)
    except Exception as exc:
        raise UsageError(f"--address {address}: cannot reach the Temporal server ({exc})") from None
    executor = TemporalExecutor(task_queue=task_queue, queues=queues, policies=policies)
    running = worker(
        client,
        task_queue=task_queue,
        tools=tools,
        activities=fns,
        executor=executor,
        workflows=workflows,
        llm=llm,
        max_concurrent_activities=max_concurrent,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with running:
        announce(
            f"worker on task queue {task_queue!r} at {address}: {len(tools)} tool(s), "
            f"{len(fns)} Activit{'y' if len(fns) == 1 else 'ies'}"
            f"{', the agent loop' if workflows else ''}{', the LLM activity' if llm else ''}"
            f"{f', {len(policies)} x-toolbind-retry policies' if policies else ''}"
        )
        await stop.wait()
