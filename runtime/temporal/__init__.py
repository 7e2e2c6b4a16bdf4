"""toolbind.runtime.temporal, runtime layer (imports temporalio and the runtime): durable runs.

Durable, scaled-out agent runs on Temporal (extra ``toolbind[temporal]``). Nothing imports this
package but its users (and ``toolbind worker``): ``import toolbind.runtime`` stays free of Temporal.

The package, one concern a module: ``_names`` (the names on the wire), ``_policy`` (``ToolPolicy``,
``policies_from_spec``), ``_executor`` (``TemporalExecutor``), ``_world`` (what a worker hosts),
``_tool_activity`` and ``_llm_activity`` (the activities), ``_model`` (the durable loop's model
call), ``_loop`` (the Agent's loop as workflow code, its parked calls), ``_workflow`` (the
workflows), ``_transcript`` (a RunResult as JSON), ``_agent`` (``DurableAgent``), ``_pending``
(``temporal_pending``) and ``_worker`` (``worker``).

* ``TemporalExecutor`` — the ``Executor`` that runs each explicit Call as a Temporal activity
  (activity type ``tool:<name>``) on a task queue (one for all, one per toolset or one per tool),
  with a retry policy and timeouts per tool (``ToolPolicy``: defaults below, overridden in code or
  by an ``x-toolbind-retry`` object in the spec). Inside a workflow it schedules the activity;
  outside one (``Agent(executor=TemporalExecutor(client=...))``) it runs a one-call workflow.
* The durable loop — ``Agent.run`` as the workflow ``toolbind.run``: the LLM request is an activity
  (``toolbind.llm``); the loop, routing and feedback are the Agent's own code, run as deterministic
  workflow code; a pending tool (``external``/``space``) is a workflow wait resolved by the update
  or signal ``tool_result`` (``DurableAgent.submit``, or ``temporal_pending`` behind the usual
  ``pending_app`` endpoint ``POST /runs/{run_id}/tool-results``).
  ``DurableAgent`` takes the run options that are data (``tools`` by name, ``tool_choice``,
  ``context`` as workflow data, ``mode``, ``ToolSelection(k)``, ``RequireApproval``) and refuses
  with a ``UsageError`` what cannot cross (``deps``: ``worker(deps=...)`` gives the workers theirs;
  a ``ToolSelector`` object; an ``instructor.Mode``).
* Live events — each workflow (the run, a one-call workflow) hosts a Workflow Stream
  (``temporalio.contrib.workflow_streams``): the run publishes its events (topic ``events``) and an
  Activity that reports progress publishes each item there while it runs (a signal, flushed before
  the activity completes, so before its result); ``DurableAgent.astream``/``events`` and
  ``TemporalExecutor`` (outside a workflow) follow it.
* ``worker(...)`` / ``toolbind worker`` — a worker registering the workflow, the LLM activity and
  every tool Activity (generated HTTP Activities and user functions).

Each Activity runs with ``current_call()`` set: ``.key`` (``run_id:call_id``, where the call id is
``call-<invocation>-<step>-<index>``, deterministic in a workflow) is the same on every retry and
every worker — the ``Idempotency-Key`` the HTTP client sends, and what a user Activity passes on to
make its side effect happen once. Without one, a retried Activity's side effect happens at least
once (a worker lost after the effect, before its completion was recorded, runs it again).

Default ``ToolPolicy``: start-to-close = the Activity's own timeout, else the Agent's
``activity_timeout`` (30 s); heartbeat timeout 10 s (the worker heartbeats every third of it while
the Activity runs, so a lost worker is noticed in 10 s and the call retried elsewhere); 3 attempts,
1 s first interval, backoff 2, at most 30 s between attempts. The LLM activity heartbeats too
(``DurableAgent(heartbeat=10)``): a worker lost while the model answers is noticed in seconds and
the model request is sent again from another worker; nothing else is.
"""

from __future__ import annotations

# the ``X as X`` imports: names not in ``__all__`` still importable from here, as when this package
# was one module
from ._agent import DurableAgent, RunOptions
from ._executor import FOLLOW_TIMEOUT as FOLLOW_TIMEOUT
from ._executor import TemporalExecutor
from ._names import CALL_WORKFLOW as CALL_WORKFLOW
from ._names import DEFAULT_PENDING_TTL as DEFAULT_PENDING_TTL
from ._names import EVENTS as EVENTS
from ._names import EXTENSION as EXTENSION
from ._names import LLM_ACTIVITY as LLM_ACTIVITY
from ._names import SUBMIT as SUBMIT
from ._names import TOOL_PREFIX as TOOL_PREFIX
from ._names import WORKFLOW as WORKFLOW
from ._names import Queues as Queues
from ._pending import temporal_pending
from ._policy import DEFAULT_POLICY, ToolPolicy, policies_from_spec
from ._transcript import dump_result as dump_result
from ._transcript import load_result as load_result
from ._worker import worker
from ._workflow import CallWorkflow as CallWorkflow
from ._workflow import RunWorkflow as RunWorkflow

__all__ = [
    "DEFAULT_POLICY",
    "DurableAgent",
    "RunOptions",
    "TemporalExecutor",
    "ToolPolicy",
    "policies_from_spec",
    "temporal_pending",
    "worker",
]
