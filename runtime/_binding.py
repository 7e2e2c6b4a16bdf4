"""Runtime layer: what a generated package tells the runtime about each tool. Imports pydantic.

A ``ToolBinding`` is plain data: the tool's wire name, its Call and Output models, and the JSON
Schemas the runtime composes for the LLM. Generated packages build one per tool (``TOOLS``);
the registries (``Tool``, ``Activity``) are keyed by ``name``.

A large package's bindings load their models on first use: names, descriptions and JSON Schemas
come from ``tools.json``, so registering 1,000 tools and composing ten of them builds no class,
and the first validated call of one tool imports only the modules its models need.

``load_bindings`` is what registering a package costs, so it does little per tool: ``tools.json``
is read in one go through the package's loader (no ``importlib.resources`` machinery) and parsed
by pydantic-core's JSON parser (about twice as fast as ``json`` on a multi-megabyte file). A large
package also has ``tools_index.json`` (its entries, with each schema's byte span in ``tools.json``
in place of the schema): registering parses only that, and a tool's ``parameters`` and
``output_schema`` (and each shared definition in ``defs``) are parsed from their span on first
use — the same values the whole file gives. The index is used only while ``tools.json`` is the
file it was written with (its size and CRC-32); otherwise the file is read whole, and a file that
is not JSON is a ``RegistrationError`` naming it, where it breaks, and what to do.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel
from pydantic_core import from_json

from toolbind._package_json import package_data, refused

if TYPE_CHECKING:  # registering a package needs no contract at run time
    from .contract import ExecutionType

Models = tuple[type[BaseModel], type[BaseModel]]
"""A tool's (Call model, Output model)."""


RUNS_ELSEWHERE = frozenset({"gateway", "internal"})
"""Execution types whose tools run somewhere (an MCP server, the gateway): never latent."""


@dataclass(frozen=True, kw_only=True)
class ToolBinding:
    """One tool of a generated package.

    Attributes:
        name: the spec's name, the value of ``_tool`` on the wire.
        provider_name: ``name`` made safe for providers' function names (``^[a-zA-Z0-9_-]{1,64}$``).
        models: the (Call model, Output model), or a function that loads them on first use of
            ``call_model`` / ``output_model`` (a large generated package's ``TOOLS``).
        parameters: the parameters' JSON Schema (an object schema; ``$ref``s point into ``defs``).
        output_schema: the output's JSON Schema, or None when the spec declares none.
        defs: the package's shared ``$defs`` (a large package's: a read-only mapping that parses
            each definition from ``tools.json`` when first looked up).
        description: what the tool does, for the LLM.
        activity: the explicit ``_activity`` the spec names, or None (resolved at composition).
        execution_type: the gateway execution type, when the spec gives one.
        visible: whether calls and results are shown to users (gateway ``visible``).
        execution: the gateway's declarative execution config, verbatim.
        source: the spec file and JSON pointer the tool came from.
        deprecated: the spec marks the tool deprecated (OpenAPI ``deprecated: true``); its
            description says so too, for the LLM.
        extensions: the RFC's Call extensions the tool declares (``_outputPath``,
            ``_outputMethod``, ``_instance``, ``_delegate``: wire name → JSON Schema), or None.
        extensions_required: those of ``extensions`` the tool requires.
        requires_approval: the spec marks the tool ``x-requires-approval``: an Agent parks its
            explicit calls until a human decides (``RequireApproval``).
    """

    name: str
    provider_name: str
    models: Models | Callable[[], Models] = field(repr=False, compare=False)
    parameters: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    defs: Mapping[str, Any]
    description: str | None = None
    title: str | None = None
    activity: str | None = None
    execution_type: ExecutionType | None = None
    visible: bool | None = None
    execution: Mapping[str, Any] | None = None
    display: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    toolsets: tuple[str, ...] = ()
    original_name: str | None = None
    source: str = ""
    deprecated: bool = False
    extensions: Mapping[str, Any] | None = None
    extensions_required: tuple[str, ...] = ()
    requires_approval: bool = False

    if not TYPE_CHECKING:  # hidden from type checkers: a misspelt attribute stays an error there

        def __getattr__(self, name: str) -> Any:
            # Only for what normal lookup did not find: a large package's binding reads its
            # ``parameters`` and ``output_schema`` from ``tools.json`` on first use, then keeps them.
            # (``_schemas``: tools.json's bytes and the spans of the two, as ``_lazy_bindings``
            # leaves them)
            schemas = self.__dict__.get("_schemas")
            if schemas is None or name not in _LAZY:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            raw, parameters, output_schema = schemas
            span = parameters if name == "parameters" else output_schema
            value = None if span is None else from_json(raw[span[0] : span[1]])
            self.__dict__[name] = value
            return value

    @cached_property
    def _loaded(self) -> Models:
        return self.models() if callable(self.models) else self.models

    @property
    def call_model(self) -> type[BaseModel]:
        """The generated Call model (loaded on first use for a large package)."""
        return self._loaded[0]

    @property
    def output_model(self) -> type[BaseModel]:
        """The generated Output model (loaded on first use for a large package)."""
        return self._loaded[1]


# a field the dataclass defaults is a class attribute, which ``__getattr__`` would never be asked
# for: ``output_schema`` is kept in each instance (every way of making one sets it) instead
delattr(ToolBinding, "output_schema")

_LAZY = frozenset({"parameters", "output_schema"})
"""The fields a large package's bindings read from ``tools.json`` on first use."""


def load_bindings(
    package: str, models: Sequence[Models] | Sequence[tuple[str, str]]
) -> tuple[ToolBinding, ...]:
    """The ToolBindings of a generated package, from its ``tools.json`` and its model classes.

    Args:
        package: the generated package's import name (``tools.json`` is read from it).
        models: the (Call model, Output model) of each tool, in ``tools.json`` order; or their
            class names in the package's ``models`` module (or ``module:Name``, a module of the
            package: ``_models.m_x:Name``), imported on first use (a large package: registering
            and composing its tools builds no model; one tool's first call imports the modules
            that define its models, not ``models``).

    Raises:
        RegistrationError: ``tools.json`` is not JSON (the message locates where it breaks).
    """
    raw = package_data(package, "tools.json")
    index = _index(package, raw)
    if index is not None:
        lazy = _lazy_bindings(package, raw, index, models)
        if lazy is not None:
            return lazy
    try:
        data: dict[str, Any] = from_json(raw)
    except ValueError as exc:
        raise refused(
            f"{package}/tools.json", str(exc), "the JSON `toolbind generate` wrote"
        ) from None
    entries: list[dict[str, Any]] = data["tools"]
    if len(entries) != len(models):  # a hand-edited package: say so rather than mis-pair
        raise ValueError(
            f"{package}: tools.json lists {len(entries)} tools, the models {len(models)}"
        )
    defs: dict[str, Any] = data["$defs"]
    bindings: list[ToolBinding] = []
    for entry, pair in zip(entries, models, strict=True):
        values: dict[str, Any] = dict(entry)
        values["toolsets"] = tuple(values.get("toolsets", ()))
        values["extensions_required"] = tuple(values.get("extensions_required", ()))
        values["models"] = (
            _loader(package, pair[0], pair[1])
            if isinstance(pair[0], str) and isinstance(pair[1], str)
            else (_as_model(pair[0]), _as_model(pair[1]))
        )
        values["defs"] = defs
        bindings.append(_new_binding(values))
    return tuple(bindings)


def _index(package: str, raw: bytes) -> dict[str, Any] | None:
    """``tools_index.json`` beside ``tools.json``, when there is one written for exactly ``raw``."""
    try:
        index: Any = from_json(package_data(package, "tools_index.json"))
    except (OSError, ValueError):  # none (a small package, an older one), or not JSON
        return None
    if not isinstance(index, dict):
        return None
    found = cast("dict[str, Any]", index)
    if found.get("tools.json") != {"bytes": len(raw), "crc32": zlib.crc32(raw)}:
        return None  # tools.json changed since: its spans no longer hold
    return found


def _lazy_bindings(
    package: str,
    raw: bytes,
    index: dict[str, Any],
    models: Sequence[Models] | Sequence[tuple[str, str]],
) -> tuple[ToolBinding, ...] | None:
    """The bindings from ``tools_index.json``: no schema parsed yet. None when the index is not
    one ``toolbind generate`` writes (the caller then reads ``tools.json`` whole)."""
    entries: Any = index.get("tools")
    spans: Any = index.get("$defs")
    if not isinstance(entries, list) or not isinstance(spans, list):
        return None
    if len(cast("list[Any]", entries)) != len(models):
        raise ValueError(
            f"{package}: tools.json lists {len(cast('list[Any]', entries))} tools, the models "
            f"{len(models)}"
        )
    defs = _Defs(raw, cast("list[Any]", spans))
    bindings: list[ToolBinding] = []
    new = object.__new__
    setattr_ = object.__setattr__  # the frozen dataclass's own refuses
    # per tool as little as possible, and no Python call (this loop is most of registering a
    # large package): the entry, toolbind's own output written with tools.json, becomes the
    # binding's ``__dict__``
    for entry, (call, output) in zip(cast("list[dict[str, Any]]", entries), models, strict=True):
        if type(entry) is not dict or "name" not in entry or "provider_name" not in entry:
            return None
        values = _LAZY_DEFAULTS.copy()
        values.update(entry)
        params_at: Any = values.pop("parameters", None)
        output_at: Any = values.pop("output_schema", None)
        if type(params_at) is not list or not (output_at is None or type(output_at) is list):
            return None
        if output_at is None:
            values["output_schema"] = None
        if "toolsets" in entry:
            values["toolsets"] = tuple(values["toolsets"])
        if "extensions_required" in entry:
            values["extensions_required"] = tuple(values["extensions_required"])
        values["models"] = (
            partial(_load, package, call, output)
            if isinstance(call, str) and isinstance(output, str)
            else (_as_model(call), _as_model(output))
        )
        values["defs"] = defs
        values["_schemas"] = (raw, params_at, output_at)
        binding = new(ToolBinding)
        setattr_(binding, "__dict__", values)
        bindings.append(binding)
    return tuple(bindings)


class _Defs(Mapping[str, Any]):
    """A large package's shared ``$defs``: each definition parsed from ``tools.json`` when first
    looked up (a composition of ten tools reads the few they reach, not thousands). ``spans`` is
    the index's flat list ``[name, start, end, name, start, end, ...]`` (one list: registering
    makes no object per definition)."""

    __slots__ = ("_at", "_parsed", "_raw", "_spans")

    def __init__(self, raw: bytes, spans: list[Any]) -> None:
        self._raw = raw
        self._spans = spans
        self._at: dict[str, int] | None = None
        self._parsed: dict[str, Any] = {}

    def _where(self) -> dict[str, int]:
        if self._at is None:
            names: list[str] = self._spans[0::3]
            self._at = {name: 3 * n for n, name in enumerate(names)}
        return self._at

    def __getitem__(self, name: str) -> Any:
        try:
            return self._parsed[name]
        except KeyError:
            at = self._where()[name]
            start, end = self._spans[at + 1], self._spans[at + 2]
            value = self._parsed[name] = from_json(self._raw[start:end])
            return value

    def __contains__(self, name: object) -> bool:
        return name in self._where()

    def __iter__(self) -> Iterator[str]:
        return iter(self._where())

    def __len__(self) -> int:
        return len(self._where())

    def __repr__(self) -> str:
        return repr(dict(self))


_FIELDS = frozenset(f.name for f in fields(ToolBinding))
_REQUIRED = frozenset(f.name for f in fields(ToolBinding) if f.default is MISSING)
_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(ToolBinding) if f.default is not MISSING
}
_LAZY_DEFAULTS = {k: v for k, v in _DEFAULTS.items() if k not in _LAZY}


def _new_binding(values: dict[str, Any]) -> ToolBinding:
    """``ToolBinding(**values)``, without running the frozen dataclass's ``__init__`` (which sets
    each of its 21 fields through ``object.__setattr__``: 8 µs a tool, a tenth of registering a
    1,000-tool package). The object is the same: every field given or defaulted, none unknown —
    else the constructor runs, and raises its ``TypeError``."""
    if not _REQUIRED <= values.keys() <= _FIELDS:
        return ToolBinding(**values)
    binding = object.__new__(ToolBinding)
    binding.__dict__.update(_DEFAULTS)
    binding.__dict__.update(values)
    return binding


def _as_model(value: object) -> type[BaseModel]:
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    raise TypeError(f"load_bindings: {value!r} is not a pydantic model class")


def _load(package: str, call: str, output: str) -> Models:
    return _as_model(_model(package, call)), _as_model(_model(package, output))


def _model(package: str, where: str) -> object:
    """``Name`` of the package's ``models`` module, or ``module:Name`` (``_models.m_x:Name``: the
    module under the package that defines it, what a large package's ``tools.py`` names)."""
    module, _, name = where.rpartition(":")
    return getattr(importlib.import_module(f"{package}.{module or 'models'}"), name)


def _loader(package: str, call: str, output: str) -> Callable[[], Models]:
    return partial(_load, package, call, output)
