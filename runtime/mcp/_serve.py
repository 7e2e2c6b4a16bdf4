"""toolbind.runtime.mcp, runtime layer (imports the ``mcp`` SDK lazily, pydantic, the runtime's
binding, composition and exports, and this package's ``_replies``): compiled tools served as an
MCP server (``toolbind serve``).

Each tool with a way to run (an Activity: a user function, a generated HTTP Activity) is an MCP
tool: ``inputSchema`` is exactly what ``toolbind schema --format mcp`` exports (``mcp_tools``), and
``outputSchema``, ``title``, ``annotations`` and the description come along. A call is validated
by the tool's generated Call model, and its meta fields by the ``inputSchema`` listed (the rule of
the runtime's ``_meta``: ``_tool`` and ``_activity`` may be left out, and are the listed ``const``
when given; a meta field the schema does not list is refused where it refuses extra keys) — a
validation error is an MCP tool error naming the tool and each field — then routed to the
Activity; the result comes back as ``structuredContent`` (the Output's JSON) plus the same JSON as text (a string: as the text itself), and a failed ``ToolResult`` as
``isError``; the content blocks another MCP server answered (a generated ``McpActivities``
method's image, audio, resource...) come back as those blocks. Every configured secret
(credentials, ``${env.X}`` values) is scrubbed from what goes back, as from an Agent's tool
messages. A tool with no Activity is not served — unless ``latent=True``: then it is offered
with its ``_output`` field (as ``toolbind schema --format mcp`` exports it), nothing runs, and a
call's result is the ``_output`` its caller wrote, checked against the Output model and marked
``_meta["toolbind/execution"] = "latent"`` (a call without one is a tool error). Tools that run
elsewhere (``gateway``/``internal`` execution, a named ``_activity``) are never latent.

The per-call path does once what can be done once: each tool's kind of Activity (sync, async,
async generator, latent) is known when the server is built; sync Activities run in a worker
thread, async ones on the loop; the SDK's OpenTelemetry middleware is dropped unless a tracer
provider is installed (it would only make no-op spans). ``bench/mcp.py`` measures the path.

Uses the official ``mcp`` SDK's low-level ``Server``; the protocol is the SDK's, not ours.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from toolbind._compose import resolve_activity

from .._binding import RUNS_ELSEWHERE, ToolBinding
from .._meta import refused_meta
from .._result import ToolResult
from ..exports import mcp_tools
from ._replies import invalid, quiet_telemetry, reply, report_progress, tool_error

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server


Kind = Literal["sync", "async", "generator", "latent"]


@dataclass(frozen=True, slots=True)
class Served:
    """A served tool: its binding, its Activity (None: latent) and how that Activity is called."""

    binding: ToolBinding
    fn: Callable[..., Any] | None
    kind: Kind


def _kind(fn: Callable[..., Any]) -> Kind:
    if inspect.isasyncgenfunction(fn):
        return "generator"
    if inspect.iscoroutinefunction(fn):
        return "async"
    return "sync"


def may_be_latent(tool: ToolBinding) -> bool:
    """Whether ``tool`` may run latently (its caller's ``_output`` the result): it names no
    Activity of its own and runs nowhere else (``gateway``/``internal``, an ``execution`` config,
    a pending ``space``/``external`` tool) — the Agent's rule."""
    pending = tool.execution_type in ("space", "external")
    return not (tool.activity or tool.execution or pending or tool.execution_type in RUNS_ELSEWHERE)


def servable(
    tools: Iterable[ToolBinding],
    activities: Mapping[str, Callable[..., Any]],
    *,
    latent: bool = False,
) -> tuple[dict[str, Served], list[str]]:
    """The tools served (by name), and the names of those that are not: no Activity (and, with
    ``latent``, not one that may run latently)."""
    served: dict[str, Served] = {}
    skipped: list[str] = []
    for tool in tools:
        name = resolve_activity(tool, activities.keys()) or tool.name
        fn = activities.get(name)
        if fn is not None:
            served[tool.name] = Served(tool, fn, _kind(fn))
        elif latent and may_be_latent(tool):
            served[tool.name] = Served(tool, None, "latent")
        else:
            skipped.append(tool.name)
    return served, skipped


def mcp_server(
    tools: Iterable[ToolBinding],
    activities: Mapping[str, Callable[..., Any]],
    *,
    name: str = "toolbind",
    version: str | None = None,
    latent: bool = False,
) -> Server[Any]:
    """An MCP server (the ``mcp`` SDK's low-level ``Server``) for the ``tools`` that have an
    Activity in ``activities`` (tool name → function; a generated package's
    ``HttpActivities(client).async_activities()`` for an OpenAPI spec); with ``latent``, also
    the tools that have none and may run latently (their result: the caller's ``_output``).
    Run it with the SDK: ``mcp.server.stdio.stdio_server()`` + ``server.run(...)``, or
    ``server.streamable_http_app()``. ``name`` and ``version`` are the ``serverInfo`` a client
    reads (default: toolbind and its version — the server is toolbind's, whatever it serves).
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from toolbind._version import VERSION

    served, _ = servable(tools, activities, latent=latent)
    listed = mcp_tools([s.binding for s in served.values()], activities.keys())["tools"]
    tool_list = [
        types.Tool.model_validate(
            {
                "name": entry["name"],
                "title": entry.get("title"),
                "description": entry.get("description"),
                "inputSchema": entry["inputSchema"],
                "outputSchema": entry.get("outputSchema"),
                "annotations": entry.get("annotations"),
            }
        )
        for entry in listed
    ]
    listing = types.ListToolsResult(tools=tool_list)
    # a client checks these tools' structuredContent against the outputSchema listed (the SDK's
    # client raises on a result that does not fit, or that has none: the result is lost)
    typed = {entry["name"] for entry in listed if "outputSchema" in entry}
    schemas: dict[str, dict[str, Any]] = {entry["name"]: entry["inputSchema"] for entry in listed}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = served.get(params.name)
        if found is None:
            return tool_error(f"no tool named {params.name!r} is served here")
        binding = found.binding
        given: dict[str, Any] = dict(params.arguments or {})
        # the listed schema's meta fields (the Call model takes any ``_activity``, any
        # ``_output``): a wrong const or an undeclared one is refused, as the schema says
        errors = _meta_errors(schemas[binding.name], given)
        # MCP names the tool (``_tool`` may be left out; a wrong one is in ``errors``)
        arguments = {**given, "_tool": binding.name}
        try:
            call = binding.call_model.model_validate(arguments)
        except ValidationError as exc:
            return tool_error(invalid(binding.name, [*errors, *exc.errors()], given))
        if errors:
            return tool_error(invalid(binding.name, errors, given))
        if found.fn is None and "_output" not in arguments:
            return tool_error(
                f"{binding.name} is latent (no Activity runs it): its result is the "
                "_output the call gives, and this call gave none"
            )
        try:
            value = await _run(found, call, ctx)
        except Exception as exc:  # the Activity's own failure: a tool error the model can read
            return tool_error(f"{binding.name} failed: {type(exc).__name__}: {exc}")
        return reply(binding, value, typed=binding.name in typed, latent=found.fn is None)

    server = Server(
        name,
        version=VERSION if version is None else version,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    quiet_telemetry(server)
    return server


def _meta_errors(schema: dict[str, Any], given: dict[str, Any]) -> list[ErrorDetails]:
    """The meta fields of ``given`` its listed ``inputSchema`` refuses, as pydantic's errors."""
    return [
        {
            "type": "extra_forbidden" if keyword == "additionalProperties" else "literal_error",
            "loc": (key,),
            "msg": message,
            "input": given[key],
        }
        for key, message, keyword in refused_meta(schema, given)
    ]


async def _run(found: Served, call: Any, ctx: Any) -> Any:
    """Run a served tool's Activity on a validated call: a sync one in a worker thread, an async
    one on the loop; each item an async generator yields is progress, its last the result. A
    latent tool's result is the caller's ``_output``."""
    fn = found.fn
    if fn is None:  # latent: the caller's _output is the result
        return ToolResult[Any].ok(
            call.model_dump(mode="json", by_alias=True, include={"output"})["_output"]
        )
    if found.kind == "async":
        return await fn(call)
    if found.kind == "sync":
        value = await asyncio.to_thread(fn, call)
        if inspect.isawaitable(value):  # a callable object whose __call__ is async
            value = await value
        return value
    last: Any = None
    done = 0
    async for item in fn(call):
        last = item
        if isinstance(item, ToolResult):  # the result, not progress (as an Agent)
            continue
        done += 1
        await report_progress(ctx, done, item)
    return last
