"""Runtime layer: delegates and scopes (what part of its context a call sees) — a Call run as a
new, isolated request through the same Agent machinery.

Imports ``_context``, ``_state``, ``_binding``, ``_registry`` (``binding_from_schema``: a saved
Request's tools are compiled like ``Tool.register``'s), ``_result``, ``errors``, ``contract``,
``_capability`` and pyyaml; never the Agent (it hands itself in: ``Delegates`` is a
capability, bound to each Agent as a ``Delegation``).

What 014 and 015 specify, in Python:

* ``_delegate`` on a tool (a ``const``/``default`` in its schema, or the Call's own value) names a
  saved Request — a JSON/YAML file (or an entry of ``Delegates(requests=...)``) holding
  ``context`` (RFC context items: ``system``, ``text``, ``tool``, ``data``/``state``/``input``)
  and ``schema`` (its output) — or is ``'anonymous'``: a fresh, empty context for the call.
* The Delegate Activity (014 "Implementation as an Activity") is a catch-all Activity the Agent
  routes such a Call to: it assembles the sub-request's context — the delegate's own, then the
  parent context its ``_scopes`` allow (in the Call's ``_instance``, 013/015), then the Call's
  parameters as an input message with the delegate's expected input schema — and runs a child of
  the Agent (same client, the delegate's tools, the run's ``deps``) until its output, which is
  the Call's result. Execution-time resolution is the default; ``Delegates(resolution="upfront")``
  merges a prescribed delegate's input schema into the tool's parameters and its output schema
  into the tool's ``_output`` before the first request (the result is then checked against it).
* ``_scopes`` is the allow-list of the parent context a call sees: kinds (``state``) or paths
  (``state.user``). A delegate sees nothing of the parent without it; an explicit Activity that
  takes an ``ActivityContext`` sees only the scoped context when the call has ``_scopes``.
* Limits: nesting depth, the LLM requests and the tokens of one run's delegate tree; a delegate
  that would enter itself again is a loop. Each refusal is a typed error
  (``DelegateLimitExceeded``, ``DelegateLoop``, ``DelegateDefinitionError``), reported to the model
  as the Call's failed result.
"""

from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from ._binding import ToolBinding
from ._capability import Capability, Toolset, WrapperToolset
from ._context import Context, ContextMessage
from ._registry import RegisteredActivity
from ._result import ToolResult
from ._state import ActivityContext, call_meta, call_scopes, scoped_context
from .contract import META_FIELDS
from .errors import (
    DelegateDefinitionError,
    DelegateLimitExceeded,
    DelegateLoop,
    RegistrationError,
    RunFailure,
    UsageError,
)

if TYPE_CHECKING:
    from ._events import Step

__all__ = ["ANONYMOUS", "DelegateRequest", "Delegates", "scoped_context"]

ANONYMOUS = "anonymous"
Resolution = Literal["execution", "upfront"]
_Result = ToolResult[Any]
_SUFFIXES = (".json", ".yaml", ".yml")


# -- saved Requests (014) ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DelegateRequest:
    """A saved Request a ``_delegate`` names: the context a delegate starts from, its tools and
    its output schema.

    Attributes:
        source: where it was read from (a file path, or ``<delegates['name']>``).
        system: its system messages (``{type: system, message}``).
        texts: its text messages (``{type: text, text}``), sent as user messages.
        context: its data / state / input messages.
        tools: its tools (``{type: tool, tool: {name: schema}}``), compiled as
            ``Tool.register`` compiles a raw schema.
        schema: its output schema (``schema``), or None for free text.
        input_schema: the input it expects: the newest schema of its input messages, or None.
    """

    source: str
    system: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    context: tuple[ContextMessage, ...] = ()
    tools: tuple[ToolBinding, ...] = ()
    schema: Mapping[str, Any] | None = None
    input_schema: Mapping[str, Any] | None = None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> DelegateRequest:
        """Read a saved Request from a ``.json``, ``.yaml`` or ``.yml`` file.

        Raises:
            DelegateDefinitionError: no such file, not JSON/YAML, or not a Request (located).
        """
        where = str(path)
        file = Path(path)
        if file.suffix.lower() not in _SUFFIXES:
            raise DelegateDefinitionError(
                f"{where}: error: a delegate file named {file.suffix or 'without a suffix'} — "
                "expected a .json, .yaml or .yml saved Request"
            )
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise DelegateDefinitionError(
                f"{where}: error: cannot read the delegate ({exc.strerror or exc}) — expected a "
                "saved Request file (hint: a relative path is looked up beside the tool's spec "
                "file, then in the working directory)"
            ) from None
        try:
            if file.suffix.lower() == ".json":
                data: Any = json.loads(text)
            else:
                from toolbind.yaml12 import load_yaml

                data = load_yaml(text)
        except ValueError as exc:  # json.JSONDecodeError is one
            raise DelegateDefinitionError(
                f"{where}: error: not JSON ({exc}) — expected a saved Request"
            ) from None
        except Exception as exc:  # yaml.YAMLError
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DelegateDefinitionError(
                f"{where}: error: not YAML ({first}) — expected a saved Request"
            ) from None
        return cls.from_dict(data, source=where)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<delegate>") -> DelegateRequest:
        """Read a saved Request ``{context: [...], schema: {...}}``.

        Raises:
            DelegateDefinitionError: it is not one (the message names the file and pointer).
        """
        if not isinstance(data, Mapping):
            raise DelegateDefinitionError(
                f"{source}#: error: a saved Request is {type(data).__name__} — expected an "
                "object {context: [...], schema: {...}}"
            )
        request = cast("Mapping[str, Any]", data)
        unknown = sorted(set(request) - {"context", "schema", "description", "title"})
        if unknown:
            raise DelegateDefinitionError(
                f"{source}#/{unknown[0]}: error: unknown key {unknown[0]!r} — expected context, "
                "schema (and description, title)"
            )
        schema: Any = request.get("schema")
        if schema is not None and not isinstance(schema, Mapping):
            raise DelegateDefinitionError(
                f"{source}#/schema: error: schema is {type(schema).__name__} — expected the "
                "output's JSON Schema (an object)"
            )
        items: Any = request.get("context", [])
        if not isinstance(items, list):
            raise DelegateDefinitionError(
                f"{source}#/context: error: context is {type(items).__name__} — expected a list "
                "of context items"
            )
        system: list[str] = []
        texts: list[str] = []
        messages: list[ContextMessage] = []
        tools: list[ToolBinding] = []
        for index, raw in enumerate(cast("list[Any]", items)):
            where = f"{source}#/context/{index}"
            item: dict[str, Any] = (
                dict(cast("Mapping[str, Any]", raw)) if isinstance(raw, Mapping) else {}
            )
            kind = item.get("type")
            if kind == "system" and isinstance(item.get("message"), str):
                system.append(item["message"])
            elif kind == "text" and isinstance(item.get("text"), str):
                texts.append(item["text"])
            elif kind == "tool" and isinstance(item.get("tool"), Mapping):
                tools.extend(_tools(cast("Mapping[str, Any]", item["tool"]), where))
            elif kind in ("data", "state", "input"):
                try:
                    messages.append(ContextMessage.from_item(item, where))
                except UsageError as exc:
                    raise DelegateDefinitionError(
                        f"{str(exc).replace(where + ': ', where + ': error: ', 1)}"
                    ) from None
            else:
                raise DelegateDefinitionError(
                    f"{where}: error: context item {json.dumps(raw, default=str)[:80]} — "
                    "expected {type: system, message}, {type: text, text}, {type: tool, tool: "
                    "{name: schema}} or a data/state/input message"
                )
        input_schema = next(
            (m.schema for m in reversed(messages) if m.kind == "input" and m.schema), None
        )
        return cls(
            source=source,
            system=tuple(system),
            texts=tuple(texts),
            context=tuple(messages),
            tools=tuple(tools),
            schema=cast("Mapping[str, Any] | None", schema),
            input_schema=input_schema,
        )


def _tools(declared: Mapping[str, Any], where: str) -> list[ToolBinding]:
    from ._registry import binding_from_schema

    out: list[ToolBinding] = []
    for name, schema in declared.items():
        at = f"{where}/tool/{name}"
        if not isinstance(schema, Mapping):
            raise DelegateDefinitionError(
                f"{at}: error: tool {name!r} is {type(schema).__name__} — expected its JSON Schema"
            )
        try:
            out.append(binding_from_schema(name, cast("Mapping[str, Any]", schema), source=at))
        except RegistrationError as exc:
            raise DelegateDefinitionError(str(exc)) from None
    return out


# -- the configuration ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Delegates(Capability):
    """How an Agent runs delegated calls (``Agent(capabilities=[Delegates(...)])``): each call of
    a tool that declares ``_delegate`` is a new, isolated sub-request of the Agent (same client,
    the saved Request's tools, the run's ``deps``), given the parent context its ``_scopes``
    allow and its parameters as the input; its output is the call's result.

    Attributes:
        requests: saved Requests by the name a ``_delegate`` gives (a name, a URL, a path):
            a ``DelegateRequest``, a path to a JSON/YAML file, or the Request itself as a dict.
            Any other ``_delegate`` value is a file path (relative: beside the tool's spec file,
            then in the working directory); a URL is never fetched — map it here.
        resolution: ``execution`` (default: the delegate is read when a call runs, so it may
            change between calls) or ``upfront`` (a tool whose ``_delegate`` is prescribed is
            offered with the delegate's input schema merged into its parameters and its output
            schema as its ``_output``; the sub-request's output is checked against it).
        max_depth: the most delegates nested in one another (the top-level run is depth 0).
        max_llm_requests: the most LLM requests one run's delegate tree makes (retries count).
        max_tokens: the most tokens (``total_tokens`` as servers report it) the tree spends;
            None: no token limit.
        max_steps: the most steps of one delegate's sub-request.
        timeout: seconds one delegated call may take (its whole sub-request).
    """

    requests: Mapping[str, DelegateRequest | str | os.PathLike[str] | Mapping[str, Any]] = field(
        default_factory=dict[str, Any]
    )
    resolution: Resolution = "execution"
    max_depth: int = 3
    max_llm_requests: int = 50
    max_tokens: int | None = None
    max_steps: int = 8
    timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.resolution not in ("execution", "upfront"):
            raise UsageError(
                f"Delegates(resolution={self.resolution!r}): expected 'execution' or 'upfront'"
            )
        if self.max_depth < 1 or self.max_llm_requests < 1 or self.max_steps < 1:
            raise UsageError("Delegates(max_depth, max_llm_requests, max_steps) must be >= 1")

    order: ClassVar[int] = 80  # wraps the MCP servers' tools too

    def bind(self, agent: Any) -> Capability:
        return Delegation(agent, self)


@dataclass(slots=True)
class _Budget:
    """What one run's delegate tree has spent (shared by every delegate in it)."""

    llm_requests: int = 0
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class _Frame:
    chain: tuple[str, ...]
    budget: _Budget


_FRAME: contextvars.ContextVar[_Frame | None] = contextvars.ContextVar(
    "toolbind_delegate_frame", default=None
)


class _Counted:
    """A ``ModelCall`` that charges each request to the delegate tree's budget, refusing one
    that the budget no longer allows (before it is sent)."""

    def __init__(self, inner: Any, config: Delegates, budget: _Budget, chain: Sequence[str]):
        self._inner = inner
        self._config = config
        self._budget = budget
        self._chain = tuple(chain)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _check(self) -> None:
        spent = self._budget
        if spent.llm_requests >= self._config.max_llm_requests:
            raise DelegateLimitExceeded(
                f"{' → '.join(self._chain)}: error: the delegate tree made {spent.llm_requests} "
                f"LLM requests — expected at most {self._config.max_llm_requests} "
                "(hint: Delegates(max_llm_requests=...))",
                self._chain,
            )
        if self._config.max_tokens is not None and spent.tokens >= self._config.max_tokens:
            raise DelegateLimitExceeded(
                f"{' → '.join(self._chain)}: error: the delegate tree spent {spent.tokens} "
                f"tokens — expected at most {self._config.max_tokens} "
                "(hint: Delegates(max_tokens=...))",
                self._chain,
            )

    async def _counted(self, ask: Callable[..., Any], step: Step, *args: Any, **kw: Any) -> Any:
        self._check()
        before, tokens = step.llm_requests, step.usage.get("total_tokens", 0)
        try:
            return await ask(*args, step, **kw)
        finally:
            self._budget.llm_requests += max(step.llm_requests - before, 1)
            self._budget.tokens += step.usage.get("total_tokens", 0) - tokens

    async def ask(self, messages: Any, response_model: Any, step: Step, **kw: Any) -> Any:
        return await self._counted(self._inner.ask, step, messages, response_model, **kw)

    async def ask_native(self, messages: Any, composition: Any, step: Step, **kw: Any) -> Any:
        return await self._counted(self._inner.ask_native, step, messages, composition, **kw)


# -- the Delegate Activity --------------------------------------------------------------------------


class Delegation(Capability):
    """``Delegates`` bound to one Agent: which tools are delegated, the Delegate Activity of each,
    and the upfront merge. Its toolset routes a tool that declares ``_delegate`` to its Delegate
    Activity and offers each tool through ``offered``."""

    order: ClassVar[int] = Delegates.order

    def __init__(self, agent: Any, config: Delegates) -> None:
        self.agent = agent
        self.config = config
        self._activities: dict[int, tuple[ToolBinding, RegisteredActivity]] = {}
        self._bound: dict[int, tuple[ToolBinding, ToolBinding]] = {}
        self._loaded: dict[str, tuple[float, DelegateRequest]] = {}

    def for_child(self) -> Capability:
        return self.config  # bound again to the child: the same delegates, its own caches

    def wrap_toolset(self, toolset: Toolset) -> Toolset:
        return _DelegatedToolset(toolset, self)

    # -- routing

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        """The Delegate Activity of a tool that declares ``_delegate`` (None for any other)."""
        if not tool.extensions or "_delegate" not in tool.extensions:
            return None
        made = self._activities.get(id(tool))
        if made is None or made[0] is not tool:
            made = (tool, RegisteredActivity(self._runner(tool), self.config.timeout))
            self._activities[id(tool)] = made
        return made[1]

    def _runner(self, tool: ToolBinding) -> Callable[..., Any]:
        async def delegate(call: Any, ctx: ActivityContext[Any]) -> ToolResult[Any]:
            return await self.run(tool, call, ctx)

        return delegate

    # -- resolving a _delegate value

    def resolve(self, target: str, tool: ToolBinding | None) -> DelegateRequest | None:
        """The saved Request ``target`` names (None for ``'anonymous'``).

        Raises:
            DelegateDefinitionError: it names nothing readable, or what it names is no Request.
        """
        if target == ANONYMOUS:
            return None
        given = self.config.requests.get(target)
        if isinstance(given, DelegateRequest):
            return given
        if given is not None and not isinstance(given, str | os.PathLike):
            return DelegateRequest.from_dict(given, source=f"<delegates[{target!r}]>")
        if "://" in str(given if given is not None else target):
            raise DelegateDefinitionError(
                f"{target}: error: a delegate URL — expected a saved Request file "
                f"(hint: URLs are never fetched; map it: Delegates(requests={{{target!r}: ...}}))"
            )
        path = Path(os.fspath(given)) if given is not None else self._path(target, tool)
        key = str(path.resolve()) if path.exists() else str(path)
        try:
            stamp = path.stat().st_mtime
        except OSError:
            stamp = -1.0
        cached = self._loaded.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        request = DelegateRequest.load(path)
        self._loaded[key] = (stamp, request)
        return request

    def _path(self, target: str, tool: ToolBinding | None) -> Path:
        path = Path(target)
        if path.is_absolute():
            return path
        spec = (tool.source if tool is not None else "").partition("#")[0]
        if spec and not spec.startswith("<"):
            beside = Path(spec).parent / path
            if beside.exists():
                return beside
        return path

    # -- upfront resolution

    def offered(self, tool: ToolBinding) -> ToolBinding:
        """``tool`` as offered: with ``resolution="upfront"`` and a prescribed ``_delegate``, the
        delegate's input schema merged into its parameters and its output schema as ``_output``.

        Raises:
            DelegateDefinitionError: the prescribed delegate cannot be read.
        """
        if self.config.resolution != "upfront" or not tool.extensions:
            return tool
        declared: Any = tool.extensions.get("_delegate")
        target: Any = (
            cast("Mapping[str, Any]", declared).get("const")
            if isinstance(declared, Mapping)
            else None
        )
        if not isinstance(target, str) or target == ANONYMOUS:
            return tool
        found = self._bound.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        request = self.resolve(target, tool)
        assert request is not None
        merged = _merged(tool, request)
        self._bound[id(tool)] = (tool, merged)
        return merged

    # -- running one delegated call

    async def run(self, tool: ToolBinding, call: Any, ctx: ActivityContext[Any]) -> ToolResult[Any]:
        """The Delegate Activity: the call's sub-request, its output the call's result."""
        dumped: dict[str, Any] = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        target = call_meta(dumped, tool, "_delegate")
        target = target if isinstance(target, str) else ANONYMOUS
        frame = _FRAME.get()
        chain = frame.chain if frame is not None else ()
        budget = frame.budget if frame is not None else _Budget()
        label = f"{tool.name}({target})"
        try:
            if len(chain) >= self.config.max_depth:
                raise DelegateLimitExceeded(
                    f"{' → '.join((*chain, label))}: error: delegate depth {len(chain) + 1} — "
                    f"expected at most {self.config.max_depth} nested delegates "
                    "(hint: Delegates(max_depth=...))",
                    (*chain, label),
                )
            request = self.resolve(target, tool)
            key = request.source if request is not None else f"anonymous:{tool.name}"
            if request is not None and key in chain:
                raise DelegateLoop(
                    f"{' → '.join((*chain, key))}: error: delegate {key} enters itself again — "
                    "expected a delegate tree without loops",
                    (*chain, key),
                )
        except (DelegateDefinitionError, DelegateLimitExceeded) as exc:
            return _refused(exc)
        scopes = call_scopes(dumped, tool)
        parent = ctx.context if scopes else None  # nothing of the parent unless scoped (015)
        params = {k: v for k, v in dumped.items() if k not in META_FIELDS}
        context = self.sub_context(request, tool, parent, scopes or (), params, ctx.instance)
        messages = _messages(request, tool)
        output: Any = request.schema if request is not None else tool.output_schema
        child = self._child(request, (*chain, key), budget)
        token = _FRAME.set(_Frame((*chain, key), budget))
        try:
            result = await child.arun(
                messages,
                output,
                max_steps=self.config.max_steps,
                run_id=f"{ctx.run_id}/{ctx.call_id}",
                # a delegate without tools is asked for its output, nothing else
                tool_choice="auto" if child.tools else "none",
                context=context,
                deps=ctx.deps,
            )
        except DelegateLimitExceeded as exc:
            return _refused(exc)
        except RunFailure as exc:  # the sub-request's model failed: this call failed
            steps: list[Step] = getattr(exc, "steps", [])
            return _Result.fail(
                f"delegate {key}: {type(exc).__name__}: {exc}",
                execution="delegate",
                delegate=key,
                steps=len(steps),
                llm_requests=sum(s.llm_requests for s in steps),
            )
        finally:
            _FRAME.reset(token)
        facts = {
            "delegate": key,
            "run_id": result.run_id,
            "steps": len(result.steps),
            "llm_requests": sum(s.llm_requests for s in result.steps),
        }
        if not result.finished:
            return _Result.fail(
                f"delegate {key} gave no output in {len(result.steps)} steps",
                execution="delegate",
                **facts,
            )
        value: Any = result.output
        if hasattr(value, "model_dump"):
            value = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return _Result.ok(value, execution="delegate", **facts)

    def sub_context(
        self,
        request: DelegateRequest | None,
        tool: ToolBinding,
        parent: Context | None,
        scopes: Sequence[Any],
        params: Mapping[str, Any],
        instance: str | None = None,
    ) -> Context:
        """The sub-request's context (014 "Context Assembly" and "Input Mapping"): the delegate's
        own messages, the scoped parent context appended, then the call's parameters as an input
        message with the input schema the delegate expects (its own, else the tool's)."""
        out = Context(list(request.context) if request is not None else [])
        out.messages.extend(scoped_context(parent, scopes, instance).messages)
        expected = request.input_schema if request is not None else None
        if expected is None and request is None:
            expected = dict(tool.parameters) or None
        if params or expected is not None:  # a call without parameters adds no input (015)
            out.messages.append(
                ContextMessage(kind="input", value=dict(params), method="merge", schema=expected)
            )
        return out

    def _child(self, request: DelegateRequest | None, chain: Sequence[str], budget: _Budget) -> Any:
        """A child of the Agent for one sub-request: the same client (its requests charged to
        the tree's budget), Activities and capabilities as each keeps them for a child
        (``for_child``: no MCP servers, no pending store, no selection); the delegate's tools
        only; no instructions of the parent's."""
        parent = self.agent
        tools = list(request.tools) if request is not None else []
        return parent.spawn(tools, _Counted(parent.model_call, self.config, budget, chain))


class _DelegatedToolset(WrapperToolset):
    """The tools as offered with delegates: each bound (upfront merge), a delegated tool routed to
    its Delegate Activity before any registered one."""

    def __init__(self, inner: Toolset, delegation: Delegation) -> None:
        super().__init__(inner)
        self.delegation = delegation

    def __iter__(self) -> Iterator[ToolBinding]:
        return (self.delegation.offered(t) for t in self.inner)

    def get(self, name: str) -> ToolBinding | None:
        found = self.inner.get(name)
        return self.delegation.offered(found) if found is not None else None

    def activity(self, tool: ToolBinding) -> RegisteredActivity | None:
        delegated = self.delegation.activity(tool)
        return delegated if delegated is not None else self.inner.activity(tool)


def _refused(exc: Exception) -> ToolResult[Any]:
    return _Result.fail(str(exc), execution="delegate", error_type=type(exc).__name__)


def _messages(request: DelegateRequest | None, tool: ToolBinding) -> list[dict[str, Any]]:
    """The sub-request's chat messages: the delegate's system and text messages (an anonymous
    delegate is told which tool it carries out)."""
    if request is None:
        what = f": {tool.description}" if tool.description else ""
        system = [
            f"You carry out the tool {tool.name!r}{what}, in isolation. Its input is ¶input; "
            "give its output."
        ]
        texts: Sequence[str] = ()
    else:
        system, texts = list(request.system), request.texts
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": "\n\n".join(system)})
    out.extend({"role": "user", "content": t} for t in texts)
    if not texts:
        out.append(
            {"role": "user", "content": "Do the task for the input in the context (¶input)."}
        )
    return out


def _merged(tool: ToolBinding, request: DelegateRequest) -> ToolBinding:
    """A tool with its delegate resolved upfront: parameters = the tool's and the delegate's
    input schema's (properties of both, required of both), ``_output`` = the delegate's schema."""
    from ._registry import binding_from_schema

    params = dict(tool.parameters)
    properties: dict[str, Any] = dict(params.get("properties") or {})
    required: list[Any] = list(params.get("required") or [])
    expected: Mapping[str, Any] = request.input_schema or {}
    for name, schema in cast("Mapping[str, Any]", expected.get("properties") or {}).items():
        properties.setdefault(name, schema)
    required += [r for r in cast("list[Any]", expected.get("required") or []) if r not in required]
    schema: dict[str, Any] = {
        **{k: v for k, v in params.items() if k not in ("properties", "required")},
        "type": "object",
        "properties": {
            "_tool": {"const": tool.name},
            **dict(tool.extensions or {}),
            **({"_output": dict(request.schema)} if request.schema is not None else {}),
            **properties,
        },
        "required": [*tool.extensions_required, *required],
    }
    if tool.description:
        schema["description"] = tool.description
    if tool.defs and "$defs" not in schema:
        schema["$defs"] = dict(tool.defs)
    merged = binding_from_schema(tool.name, schema, source=tool.source or f"<{tool.name}>")
    return merged
