"""Runtime layer: the seeds' two registries, ``Tool`` (schemas) and ``Activity`` (implementations).

Imports ``_binding``, ``contract`` and pydantic; a tool registered from a raw JSON Schema dict
(``Tool.register(name, {...})``) is read and compiled through ``_compiler`` (the runtime's one lazy
way into ``toolbind.compiler``) into the same faithful models a generated package has.

Duplicate rule (tool-system.md: ``_tool`` is a unique identifier): registering a name again
replaces the earlier entry — last one wins, so an environment can swap an Activity or a test can
redefine a tool. The one exception is two *toolsets* (generated packages registered with
``register_package``/``register_bindings``) that both bring a tool of the same name: that is almost
certainly a mistake, so it raises ``RegistrationError`` naming both sources; pass
``replace=True`` to let the later toolset win.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, Literal, cast, overload

from pydantic import BaseModel, Field, JsonValue, create_model

from . import _compiler
from ._binding import ToolBinding
from .errors import RegistrationError

__all__ = [
    "Activity",
    "ActivityFn",
    "ActivityRegistry",
    "RegisteredActivity",
    "RegistrationError",
    "Tool",
    "ToolRegistry",
]


ActivityFn = Callable[..., Any]
"""An Activity: ``fn(call)`` returning the output (a model, a dict, any JSON value, a ``ToolResult``
or ``Pending``); it may be ``async``, or an async generator whose yields are progress events and
whose last yield is the output."""


def _as_dict(value: object) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _pascal(name: str) -> str:
    parts = [p for p in "".join(c if c.isalnum() else " " for c in name).split() if p]
    text = "".join(p[:1].upper() + p[1:] for p in parts) or "Tool"
    return text if text[0].isalpha() else f"Tool{text}"


def _registration_message(name: str, exc: Exception) -> str:
    # the compiler's rendering of each error (``file#/pointer: error: found — expected``)
    return f"tool {name!r}: " + "; ".join(str(exc).splitlines())


def binding_from_schema(name: str, schema: Mapping[str, Any], *, source: str = "") -> ToolBinding:
    """Compile a seeds-format tool schema (parameters + ``_tool``/``_output``/``_activity``).

    The schema is read by the compiler's seeds reader (through ``_compiler``, the runtime's one
    way into ``toolbind.compiler``), so it is checked as a spec file's tool would be.

    Raises:
        RegistrationError: the schema is not a usable tool schema; the message names the tool and
            carries the compiler's located diagnostics (``<Tool.register('x')>#/pointer: …``).
    """
    # here, not at import: registering a generated package needs no contract (its HTTP and
    # reference grammar parts), and this path goes through the compiler anyway
    from .contract import APPROVAL_KEY, CALL_EXTENSIONS

    where = source or f"<Tool.register({name!r})>"
    try:
        # the seeds frontend's reader: meta fields are checked as in a spec file
        spec = _compiler.read_tool_schema(name, schema, source=where)
    except _compiler.spec_error() as exc:
        raise RegistrationError(_registration_message(name, exc)) from None
    activity = spec.activity or None
    props: dict[str, Any] = _as_dict(schema.get("properties", {})) or {}
    output_raw: Any = props.get("_output")
    params: dict[str, Any] = {
        k: v for k, v in schema.items() if k not in ("description", "title", APPROVAL_KEY)
    }
    params["properties"] = {k: v for k, v in props.items() if not k.startswith("_")}
    required_raw: Any = schema.get("required", [])
    required: list[Any] = (
        list(cast("list[Any]", required_raw)) if isinstance(required_raw, list) else []
    )
    params["required"] = [r for r in required if not (isinstance(r, str) and r.startswith("_"))]
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = _as_dict(params.get(key))
        if found is not None:
            defs.update(found)
    # the RFC's Call extensions the tool declares (the reader checked them): typed Call fields
    extensions = {k: props[k] for k in CALL_EXTENSIONS if k in props}
    call_schema: dict[str, Any] = dict(params)
    call_schema["properties"] = {
        "_tool": {"const": name},
        "_activity": {"type": "string"},
        "_reasoningForCall": {"type": "string", "description": "Why the model made this call."},
        **({"_output": output_raw} if output_raw is not None else {"_output": {}}),
        **extensions,
        **params["properties"],
    }
    call_schema["required"] = ["_tool", *params["required"]]
    call_schema.pop("title", None)
    output_schema: Any = output_raw if output_raw is not None else {}
    if isinstance(output_schema, dict) and defs:
        output_schema = {
            **{k: schema[k] for k in ("$defs", "definitions") if k in schema},
            **cast("dict[str, Any]", output_schema),
        }
    # ``#/$defs/...`` references resolve at the composed schema's root, where compose hoists defs
    hoisted = _as_dict(params.pop("$defs", None)) or {}
    base = _pascal(name)
    try:
        call_model = _compiler.model_from_schema(call_schema, name=f"{base}Call")
        output_model = _compiler.model_from_schema(output_schema, name=f"{base}Output")
    except _compiler.spec_error() as exc:
        raise RegistrationError(_registration_message(name, exc)) from None
    description = schema.get("description")
    title = schema.get("title")
    return ToolBinding(
        name=name,
        provider_name=name,
        models=(call_model, output_model),
        parameters=params,
        output_schema=cast("Mapping[str, Any]", output_raw)
        if isinstance(output_raw, dict)
        else None,
        defs=hoisted,
        description=description if isinstance(description, str) else None,
        title=title if isinstance(title, str) else None,
        activity=activity,
        source=where,
        extensions=extensions or None,
        extensions_required=tuple(r for r in required if isinstance(r, str) and r in extensions),
        requires_approval=spec.requires_approval,
    )


def binding_from_model(name: str, model: type[BaseModel]) -> ToolBinding:
    """A tool from a pydantic model of its parameters (a Call model, generated or hand-written).

    The model's JSON Schema (by alias) is the tool's parameters; meta fields (``_tool``, ...) in
    it are dropped from the parameters. Its ``_output`` field's type, when it has one, is the
    Output model; otherwise any JSON value. A model without the meta fields gets a subclass that
    has them (``tool``: ``Literal[name]`` by alias ``_tool``, ``activity``, ``reasoning_for_call``,
    ``output``), so it joins the Response union like a generated Call model.

    Raises:
        RegistrationError: the model uses a meta field's Python name for something else.
    """
    schema = model.model_json_schema(by_alias=True)
    props = _as_dict(schema.get("properties")) or {}
    params: dict[str, Any] = {k: v for k, v in schema.items() if k not in ("title", "description")}
    defs = _as_dict(params.pop("$defs", None)) or {}
    params["properties"] = {k: v for k, v in props.items() if not k.startswith("_")}
    params["required"] = [r for r in schema.get("required", []) if not str(r).startswith("_")]
    output_model: type[BaseModel] = _AnyOutput
    output_schema: Mapping[str, Any] | None = None
    by_alias = {f.alias or key: key for key, f in model.model_fields.items()}
    if "_output" in by_alias:
        annotation = model.model_fields[by_alias["_output"]].annotation
        for candidate in _model_types(annotation):
            output_model = candidate
            out = dict(candidate.model_json_schema(by_alias=True))
            defs.update(_as_dict(out.pop("$defs", None)) or {})
            output_schema = out
            break
    description = schema.get("description") or model.__doc__
    return ToolBinding(
        name=name,
        provider_name=name,
        models=(_with_meta_fields(name, model, by_alias), output_model),
        parameters=params,
        output_schema=output_schema,
        defs=defs,
        description=description.strip() if isinstance(description, str) else None,
        source=f"{model.__module__}.{model.__qualname__}",
    )


def _with_meta_fields(
    name: str, model: type[BaseModel], by_alias: Mapping[str, str]
) -> type[BaseModel]:
    wanted: dict[str, tuple[str, Any]] = {
        "_tool": ("tool", (Literal[name], Field(default=name, alias="_tool"))),
        "_activity": ("activity", (str | None, Field(default=None, alias="_activity"))),
        "_reasoningForCall": (
            "reasoning_for_call",
            (str | None, Field(default=None, alias="_reasoningForCall")),
        ),
        "_output": ("output", (JsonValue | None, Field(default=None, alias="_output"))),
    }
    fields: dict[str, Any] = {}
    for alias, (attr, spec) in wanted.items():
        if alias in by_alias:
            continue
        if attr in model.model_fields:
            raise RegistrationError(
                f"Tool.register({name!r}, {model.__name__}): field {attr!r} is reserved for the "
                f"meta field {alias!r} (rename it, or give it alias {alias!r})"
            )
        fields[attr] = spec
    if not fields:
        return model
    return create_model(model.__name__, __base__=model, __module__=model.__module__, **fields)


def _model_types(annotation: Any) -> Iterator[type[BaseModel]]:
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _model_types(arg)


class _AnyOutput(BaseModel):
    """Placeholder Output for tools that declare none (any JSON object)."""

    # built when first used: importing the registry (registering a package) builds no model
    model_config = {"extra": "allow", "defer_build": True}


class ToolRegistry:
    """Tool schemas by name (the seeds' ``Tool`` registry).

    ``register(name, schema_or_model_or_binding)`` accepts a seeds-format JSON Schema dict
    (compiled to faithful models; needs ``toolbind.compiler``), a pydantic Call model, or a
    ``ToolBinding``. ``register_package(pkg)`` / ``register_bindings(pkg.TOOLS)`` register a
    generated toolset in one call. Iteration yields the bindings in registration order.
    """

    def __init__(self, tools: Iterable[ToolBinding] = ()) -> None:
        self._tools: dict[str, ToolBinding] = {}
        self._origin: dict[str, str] = {}
        self.register_bindings(tools)

    @overload
    def register(
        self, name: str, spec: Mapping[str, Any] | type[BaseModel] | ToolBinding, /
    ) -> ToolBinding: ...
    @overload
    def register(self, name: str, /) -> Callable[[type[BaseModel]], type[BaseModel]]: ...
    def register(
        self, name: str, spec: Mapping[str, Any] | type[BaseModel] | ToolBinding | None = None, /
    ) -> ToolBinding | Callable[[type[BaseModel]], type[BaseModel]]:
        """Register (or replace: last one wins) the tool ``name``.

        Without ``spec`` it returns a class decorator: ``@Tool.register("greetUser")`` on a
        pydantic model of the parameters.

        Raises:
            RegistrationError: the spec is not a usable tool (the message locates the problem).
        """
        if spec is None:

            def decorate(model: type[BaseModel]) -> type[BaseModel]:
                self.register(name, model)
                return model

            return decorate
        if isinstance(spec, ToolBinding):
            binding = spec if spec.name == name else replace(spec, name=name, provider_name=name)
        elif isinstance(spec, type):
            if not issubclass(spec, BaseModel):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise RegistrationError(
                    f"Tool.register({name!r}, {spec.__name__}): a class must be a pydantic model"
                )
            binding = binding_from_model(name, spec)
        elif isinstance(spec, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            binding = binding_from_schema(name, spec)
        else:  # a caller without a type checker
            raise RegistrationError(
                f"Tool.register({name!r}, ...): expected a JSON Schema dict, a pydantic model or a "
                f"ToolBinding, found {type(spec).__name__}"
            )
        self._tools[name] = binding
        self._origin.pop(name, None)  # a single registration is no toolset: anything may replace it
        return binding

    def register_bindings(
        self, bindings: Iterable[ToolBinding], *, toolset: str | None = None, replace: bool = False
    ) -> None:
        """Register a generated toolset's ``TOOLS``.

        Raises:
            RegistrationError: a tool of the same name came from another toolset (both sources are
                named); ``replace=True`` lets this one win instead.
        """
        items = list(bindings)
        for binding in items:
            source = toolset or binding.source or binding.name
            previous = self._origin.get(binding.name)
            if (
                not replace
                and binding.name in self._tools
                and previous is not None
                and _toolset_of(previous) != _toolset_of(source)
            ):
                raise RegistrationError(
                    f"tool {binding.name!r} is defined by two toolsets: {previous} and {source} "
                    "(rename one, register only one, or pass replace=True to let the later win)"
                )
        for binding in items:
            self._tools[binding.name] = binding
            self._origin[binding.name] = toolset or binding.source or binding.name

    def register_package(self, package: ModuleType, *, replace: bool = False) -> None:
        """Register every tool of a generated package (its ``TOOLS``)."""
        tools = cast("Iterable[ToolBinding] | None", getattr(package, "TOOLS", None))
        if tools is None:
            raise RegistrationError(f"{package.__name__} has no TOOLS: not a toolbind package")
        self.register_bindings(tools, replace=replace)

    def unregister(self, name: str) -> None:
        """Forget the tool ``name`` (no error when it is unknown)."""
        self._tools.pop(name, None)
        self._origin.pop(name, None)

    def get(self, name: str) -> ToolBinding | None:
        """The tool registered under ``name``, or None."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> ToolBinding:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolBinding]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """The registered tool names, in registration order."""
        return list(self._tools)

    def clear(self) -> None:
        """Forget every tool."""
        self._tools.clear()
        self._origin.clear()


def _toolset_of(source: str) -> str:
    # "specs/seeds.yaml#/sentimentAnalysis" → "specs/seeds.yaml": tools of one file are one toolset
    return source.partition("#")[0]


@dataclass(frozen=True, slots=True)
class RegisteredActivity:
    """An Activity and how it runs.

    Attributes:
        fn: the function (sync, async, or async generator).
        timeout: seconds one call may take; None uses the Agent's default.
        concurrent: False runs this Activity's calls one at a time, never beside another call.
    """

    fn: ActivityFn
    timeout: float | None = None
    concurrent: bool = True


class ActivityRegistry:
    """Activity implementations by name (the seeds' ``Activity`` registry).

    ``register(name, fn)`` or ``@register(name)``; last one wins (swap implementations per
    environment). Name an Activity like its tool for zero-config matching.
    """

    def __init__(self, activities: Mapping[str, ActivityFn] | None = None) -> None:
        self._items: dict[str, RegisteredActivity] = {}
        for name, fn in (activities or {}).items():
            self.register(name, fn)

    @overload
    def register(
        self,
        name: str,
        fn: ActivityFn,
        /,
        *,
        timeout: float | None = None,
        concurrent: bool = True,
    ) -> ActivityFn: ...
    @overload
    def register(
        self, name: str, /, *, timeout: float | None = None, concurrent: bool = True
    ) -> Callable[[ActivityFn], ActivityFn]: ...
    def register(
        self,
        name: str,
        fn: ActivityFn | None = None,
        /,
        *,
        timeout: float | None = None,
        concurrent: bool = True,
    ) -> ActivityFn | Callable[[ActivityFn], ActivityFn]:
        """Register (or replace) the Activity ``name``; returns ``fn`` (usable as a decorator).

        Args:
            name: the Activity's name (the tool's name for zero-config matching).
            fn: the implementation; omitted, a decorator is returned.
            timeout: per-call timeout in seconds (default: the Agent's ``LoopSettings.activity_timeout``). An
                async Activity is cancelled when it overruns; a sync one (run in a worker thread)
                is abandoned — its result is ignored, the thread finishes in the background.
            concurrent: False to opt this Activity out of running beside other calls.

        Raises:
            RegistrationError: ``fn`` is not callable or ``timeout`` is not positive.
        """
        if fn is None:

            def decorate(f: ActivityFn) -> ActivityFn:
                self.register(name, f, timeout=timeout, concurrent=concurrent)
                return f

            return decorate
        if not callable(fn):
            raise RegistrationError(f"Activity.register({name!r}, ...): {fn!r} is not callable")
        if timeout is not None and not timeout > 0:
            raise RegistrationError(f"Activity.register({name!r}, ...): timeout must be > 0")
        self._items[name] = RegisteredActivity(fn, timeout, concurrent)
        return fn

    def unregister(self, name: str) -> None:
        """Forget the Activity ``name`` (no error when it is unknown)."""
        self._items.pop(name, None)

    def get(self, name: str) -> RegisteredActivity | None:
        """The Activity registered under ``name``, or None."""
        return self._items.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    @property
    def names(self) -> frozenset[str]:
        """The registered Activity names (the seeds' ``Activity.Names``)."""
        return frozenset(self._items)

    def clear(self) -> None:
        """Forget every Activity."""
        self._items.clear()


Tool = ToolRegistry()
"""The default, process-wide Tool registry."""
Activity = ActivityRegistry()
"""The default, process-wide Activity registry."""
