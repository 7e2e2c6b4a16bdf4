"""Runtime layer: the context of data / state / input messages, variable references and output paths.

Standard library, the kernel's reference grammar (``toolbind._references``, which the compiler
also checks a prescribed ``_outputPath`` with) and ``errors`` only (no pydantic).

What the related documents specify, in Python:

* 005 Data: a context message holds a ``data`` value, an optional ``schema`` and ``description``,
  and a ``kind`` (``data`` by default; ``state`` and ``input`` are the specialised kinds of 009
  and 006). Messages of one identity (kind + ``_instance``) are merged: a message the caller
  gives is a patch of its kind (deep-merged over the ones before it), and the model sees one
  merged value per identity.
* 007 Variables: ``†<kind>.<path>`` names a value of the context (``†input.userName``,
  ``†data.user.name``, ``†state`` for the whole state); ``||`` (the first that resolves) and
  ``&&`` (all must resolve; the last one's value) combine references (011 Expressions).
* 008 Output: a Call's output is *appended* as a new message at its ``_outputPath`` with the
  hidden metadata ``_call``, ``_date`` and ``_outputMethod``; nothing is merged at write time.
  A read searches the messages newest first: a ``set`` (the default) that covers the path ends
  the search, ``merge`` (deep), ``assign`` (shallow), ``push`` and ``concat`` are collected and
  replayed oldest first. Any sequence of writes therefore reads exactly as applying them, in
  order, to a plain dict (``tests/runtime/test_context.py`` checks it with hypothesis).
* 013 Instancing: a message with ``_instance`` belongs to that instance, one without is global.
  An instance sees the global messages and then its own (its own override the global ones);
  a Call with ``_instance`` reads and writes in that instance only.

Paths address object keys (``user.name``); a digit segment also indexes an array when reading
(``†input.items.0``). A write goes through objects only: a value on the way that is no object
is replaced by one, as ``set`` does in lodash (and as the plain-dict model does).
"""

from __future__ import annotations

import copy
import datetime
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from toolbind._references import (
    MARK,
    Reference,
    is_reference,
    parse_expression,
    parse_reference,
)

from .errors import InvalidReference, UnresolvedReference

__all__ = [
    "CONTEXT_HEADER",
    "MISSING",
    "UPDATE_HEADER",
    "Context",
    "ContextMessage",
    "Reference",
    "Variable",
    "apply_write",
    "parse_expression",
    "parse_reference",
    "scoped_context",
]

CONTEXT_HEADER = "Context (refer to a value as †<kind>.<path>):"
"""The first line of the context as the model reads it (a user message the Agent writes)."""
UPDATE_HEADER = "Context updated by the calls' outputs:"
"""The first line of the identities a step's calls wrote, as the model reads them."""

OutputMethod = Literal["set", "merge", "assign", "push", "concat"]
METHODS: tuple[str, ...] = ("set", "merge", "assign", "push", "concat")
KIND_TITLES = {"data": "Data", "state": "State", "input": "Input"}
# keys of an RFC context item that are not its data (state/input messages may carry their data
# inline: ``{"type": "input", "_instance": "①", "comment": "..."}``, 013)
_ITEM_KEYS = frozenset({"type", "kind", "schema", "description"})


class _Missing:
    """The value of a path that holds nothing (distinct from JSON null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


# -- writes: the five methods of 008 -------------------------------------------------------------


def _combine(old: Any, method: str, new: Any) -> Any:
    if method == "merge":
        return _deep_merge(old, new)
    if method == "assign":
        if isinstance(old, dict) and isinstance(new, dict):
            return {**cast("dict[str, Any]", old), **cast("dict[str, Any]", new)}
        return new
    if method == "push":
        if old is MISSING:
            return [new]
        return [*cast("list[Any]", old), new] if isinstance(old, list) else [old, new]
    if method == "concat":
        items = list(cast("list[Any]", new)) if isinstance(new, list) else [new]
        if old is MISSING:
            return items
        return [*cast("list[Any]", old), *items] if isinstance(old, list) else [old, *items]
    return new  # set


def _deep_merge(old: Any, new: Any) -> Any:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    out = dict(cast("dict[str, Any]", old))
    for key, value in cast("dict[str, Any]", new).items():
        out[key] = _deep_merge(out[key], value) if key in out else value
    return out


def apply_write(root: Any, path: Sequence[str], method: str, value: Any) -> Any:
    """``root`` with ``value`` written at ``path`` by ``method`` (a new value; ``root`` and
    ``value`` are left as they are). ``MISSING`` stands for "nothing there"."""
    if not path:
        return _combine(root, method, copy.deepcopy(value))
    out: dict[str, Any] = dict(cast("dict[str, Any]", root)) if isinstance(root, dict) else {}
    out[path[0]] = apply_write(out.get(path[0], MISSING), path[1:], method, value)
    return out


def read_path(value: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` below ``value`` (keys of objects, digit indices of arrays), or
    ``MISSING``."""
    node = value
    for key in path:
        if isinstance(node, dict):
            node = cast("dict[str, Any]", node).get(key, MISSING)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(cast("list[Any]", node)):
            node = cast("list[Any]", node)[int(key)]
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


# -- messages ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextMessage:
    """One data message (005): ``value`` written at ``path`` of its ``kind`` by ``method``.

    A message the caller gives holds its whole value (``path`` empty) and is a ``merge`` patch
    of its kind; an output message (008) is written by a Call at its ``_outputPath`` and keeps
    ``call`` (``_call``) and ``date`` (``_date``), metadata the model never sees.
    """

    kind: str = "data"
    value: Any = None
    path: tuple[str, ...] = ()
    method: OutputMethod = "merge"
    schema: Mapping[str, Any] | None = None
    description: str | None = None
    instance: str | None = None
    call: Mapping[str, Any] | None = None
    date: str | None = None

    @property
    def data(self) -> Any:
        """The message's ``data`` as 008 shows it: the value wrapped in its path."""
        out = self.value
        for key in reversed(self.path):
            out = {key: out}
        return out

    @property
    def reference(self) -> Reference:
        return Reference(self.kind, self.path)

    def to_item(self) -> dict[str, Any]:
        """The message as an RFC context item (JSON-ready), metadata included."""
        item: dict[str, Any] = {"type": "data"}
        if self.kind != "data":
            item["kind"] = self.kind
        item["data"] = self.data
        if self.schema is not None:
            item["schema"] = dict(self.schema)
        if self.description is not None:
            item["description"] = self.description
        if self.instance is not None:
            item["_instance"] = self.instance
        if self.call is not None:
            item["_call"] = dict(self.call)
            item["_outputPath"] = str(self.reference)
        if self.date is not None:
            item["_date"] = self.date
        if self.method != ("set" if self.call is not None else "merge"):
            item["_outputMethod"] = self.method
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any], where: str = "context") -> ContextMessage:
        """Read an RFC context item: ``{type: data, data, kind?, schema?, description?}``,
        ``{type: state, state | <fields>}``, ``{type: input, input | <fields>}`` (013 writes a
        state's or an input's fields inline), with ``_instance`` and the output metadata of 008
        (``_call``, ``_date``, ``_outputMethod``, ``_outputPath``).

        Raises:
            UsageError: the item is none of these (``where`` says which one).
        """
        from .errors import UsageError

        kind_type = item.get("type")
        if kind_type not in ("data", "state", "input"):
            raise UsageError(
                f"{where}: type {kind_type!r}: expected a data message "
                "{type: 'data' | 'state' | 'input', ...}"
            )
        kind: Any = item.get("kind") if kind_type == "data" else kind_type
        if kind is None:
            kind = "data"
        if not isinstance(kind, str) or not kind or "." in kind:
            raise UsageError(f"{where}: kind {kind!r}: expected a name without dots")
        payload_key = "data" if kind_type == "data" else str(kind_type)
        if payload_key in item:
            value = item[payload_key]
        else:
            value = {k: v for k, v in item.items() if k not in _ITEM_KEYS and k[:1] != "_"}
        schema = item.get("schema")
        if schema is not None and not isinstance(schema, Mapping):
            raise UsageError(f"{where}: schema is no JSON Schema object")
        description = item.get("description")
        instance = item.get("_instance")
        if instance is not None and not isinstance(instance, str):
            raise UsageError(f"{where}: _instance {instance!r}: expected a string id")
        call: Any = item.get("_call")
        method: Any = item.get("_outputMethod", "set" if call is not None else "merge")
        if method not in METHODS:
            raise UsageError(f"{where}: _outputMethod {method!r}: expected one of {METHODS}")
        path: tuple[str, ...] = ()
        written: Any = item.get("_outputPath")
        if isinstance(written, str):
            ref = parse_reference(written)
            path = ref.path
            value = read_path(value, path)  # data is wrapped in its path (008)
            kind = ref.kind
        date: Any = item.get("_date")
        return cls(
            kind=kind,
            value=value,
            path=path,
            method=cast("OutputMethod", method),
            schema=cast("Mapping[str, Any] | None", schema),
            description=description if isinstance(description, str) else None,
            instance=instance,
            call=cast("Mapping[str, Any] | None", call),
            date=date if isinstance(date, str) else None,
        )


# -- the context ---------------------------------------------------------------------------------


class _Kinds:
    """``.data``, ``.state``, ``.input``: the Pythonic accessors of the three specified kinds."""

    __slots__ = ()

    def var(self, kind: str) -> Variable:
        raise NotImplementedError

    @property
    def data(self) -> Variable:
        """``†data``: ``context.data.user.name.value``; ``str(...)`` is the reference."""
        return self.var("data")

    @property
    def state(self) -> Variable:
        """``†state``."""
        return self.var("state")

    @property
    def input(self) -> Variable:
        """``†input``."""
        return self.var("input")


@dataclass(slots=True)
class Context(_Kinds):
    """The data / state / input messages of a run, in the order they were added.

    Give one to ``Agent.run(..., context=...)`` (or a list of RFC context items, which becomes
    one): the model sees each identity's merged value with its schema; a Call with an
    ``_outputPath`` appends its output here; ``RunResult.context`` is the context after the run.

    Read it by reference (``context["†state.user.name"]``, ``context.get("†input.x")``) or
    through the Pythonic accessor (``context.state.user.name.value``, ``context.var("user")``);
    ``context.instance("①")`` reads one instance of a multi-instance context.
    """

    messages: list[ContextMessage] = field(default_factory=list[ContextMessage])

    @classmethod
    def of(cls, items: Context | Iterable[ContextMessage | Mapping[str, Any]] | None) -> Context:
        """A Context from a Context (the same object), RFC context items or messages."""
        if isinstance(items, Context):
            return items
        out = cls()
        for index, item in enumerate(items or ()):
            if isinstance(item, ContextMessage):
                out.messages.append(item)
            else:
                out.messages.append(ContextMessage.from_item(item, f"context[{index}]"))
        return out

    # -- adding

    def add(
        self,
        kind: str = "data",
        value: Any = None,
        *,
        schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        instance: str | None = None,
        method: OutputMethod = "merge",
    ) -> ContextMessage:
        """Append a message of ``kind`` (a patch of that kind: ``merge`` unless ``method``)."""
        message = ContextMessage(
            kind=kind,
            value=value,
            method=method,
            schema=schema,
            description=description,
            instance=instance,
        )
        self.messages.append(message)
        return message

    def write(
        self,
        path: str | Reference,
        value: Any,
        *,
        method: OutputMethod = "set",
        call: Mapping[str, Any] | None = None,
        instance: str | None = None,
        date: str | None = None,
        success: bool = True,
    ) -> list[ContextMessage]:
        """Append ``value`` as output message(s) at ``path`` (008): a reference, or an expression
        — ``a && b`` writes to each, ``a || b`` to ``a`` on ``success`` and ``b`` otherwise.

        Raises:
            InvalidReference: ``path`` is no reference or expression; ``method`` unknown.
        """
        if method not in METHODS:
            raise InvalidReference(
                f"_outputMethod {method!r}: expected one of {', '.join(METHODS)}"
            )
        if isinstance(path, Reference):
            targets: tuple[Reference, ...] = (path,)
        else:
            op, refs = parse_expression(path)
            targets = refs if op != "||" else (refs[0] if success else refs[-1],)
        stamp = date or datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
        written: list[ContextMessage] = []
        for ref in targets:
            message = ContextMessage(
                kind=ref.kind,
                value=copy.deepcopy(value),
                path=ref.path,
                method=method,
                instance=instance,
                call=copy.deepcopy(dict(call)) if call is not None else None,
                date=stamp,
            )
            self.messages.append(message)
            written.append(message)
        return written

    # -- reading

    @property
    def instances(self) -> tuple[str, ...]:
        """The instance ids, in the order they first appear."""
        return tuple(dict.fromkeys(m.instance for m in self.messages if m.instance is not None))

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.kind for m in self.messages))

    def _visible(self, kind: str, instance: str | None) -> list[ContextMessage]:
        """``kind``'s messages as ``instance`` sees them: the global ones, then its own."""
        own = [m for m in self.messages if m.kind == kind and m.instance is None]
        if instance is not None:
            own += [m for m in self.messages if m.kind == kind and m.instance == instance]
        return own

    def lookup(self, ref: str | Reference, instance: str | None = None) -> Any:
        """The value ``ref`` names as ``instance`` sees it (None: the global context), or
        ``MISSING``; an expression resolves by 011's rules (``||``: the first found; ``&&``: the
        last, when all are found)."""
        if isinstance(ref, str):
            op, refs = parse_expression(ref)
        else:
            op, refs = "", (ref,)
        found: Any = MISSING
        for one in refs:
            found = self._lookup_one(one, instance)
            if op == "||" and found is not MISSING:
                return found
            if op == "&&" and found is MISSING:
                return MISSING
        return found

    def _lookup_one(self, ref: Reference, instance: str | None) -> Any:
        # newest first: collect the writes that touch the path until a `set` covers it (008)
        touching: list[ContextMessage] = []
        for message in reversed(self._visible(ref.kind, instance)):
            written = message.reference
            if written.covers(ref) or ref.covers(written):
                touching.append(message)
                if message.method == "set" and written.covers(ref):
                    break
        if not touching:
            return MISSING
        root: Any = MISSING
        for message in reversed(touching):  # replayed oldest first
            root = apply_write(root, message.path, message.method, message.value)
        return read_path(root, ref.path)

    def resolve(self, ref: str | Reference, instance: str | None = None) -> Any:
        """``lookup``, raising when nothing is there.

        Raises:
            UnresolvedReference: the reference names nothing (in ``instance``, if given).
            InvalidReference: ``ref`` is no reference.
        """
        value = self.lookup(ref, instance)
        if value is MISSING:
            where = f" in instance {instance!r}" if instance is not None else ""
            raise UnresolvedReference(f"{ref} resolves to nothing{where}")
        return value

    def get(self, ref: str | Reference, default: Any = None, instance: str | None = None) -> Any:
        """``lookup``, ``default`` when nothing is there."""
        value = self.lookup(ref, instance)
        return default if value is MISSING else value

    def __getitem__(self, ref: str) -> Any:
        return self.resolve(ref if ref.startswith(MARK) else MARK + ref)

    def view(self, kind: str, instance: str | None = None) -> Any:
        """The whole merged value of ``kind`` (as ``instance`` sees it), or None."""
        return self.get(Reference(kind), None, instance)

    def var(self, kind: str, instance: str | None = None) -> Variable:
        """The Pythonic accessor of ``kind``: ``context.var("user").name.value``."""
        return Variable(self, Reference(kind), instance)

    def instance(self, instance: str) -> InstanceView:
        """One instance's view (013): ``context.instance("①").state.value``."""
        return InstanceView(self, instance)

    def schema_of(self, kind: str, instance: str | None = None) -> Mapping[str, Any] | None:
        """The newest schema given for ``kind`` (as ``instance`` sees it)."""
        for message in reversed(self._visible(kind, instance)):
            if message.schema is not None:
                return message.schema
        return None

    def description_of(self, kind: str, instance: str | None = None) -> str | None:
        for message in reversed(self._visible(kind, instance)):
            if message.description is not None:
                return message.description
        return None

    def identities(self) -> list[tuple[str, str | None]]:
        """Each (kind, instance) that holds messages, in order of appearance."""
        return list(dict.fromkeys((m.kind, m.instance) for m in self.messages))

    # -- references inside values

    def resolve_refs(self, value: Any, instance: str | None = None) -> Any:
        """``value`` with every string that is a reference replaced by what it names.

        Raises:
            UnresolvedReference: a reference names nothing.
        """
        if isinstance(value, str):
            return self.resolve(value, instance) if is_reference(value) else value
        if isinstance(value, list):
            return [self.resolve_refs(v, instance) for v in cast("list[Any]", value)]
        if isinstance(value, dict):
            return {
                k: self.resolve_refs(v, instance) for k, v in cast("dict[str, Any]", value).items()
            }
        return value

    # -- what the model sees

    def render(
        self,
        identities: Iterable[tuple[str, str | None]] | None = None,
        *,
        header: str = CONTEXT_HEADER,
    ) -> str:
        """The context as the model reads it (005): one section per identity with its merged
        value, description and schema; the output metadata (``_call``, ``_date``) never shows."""
        chosen = self.identities() if identities is None else list(identities)
        sections = [header]
        for kind, instance in chosen:
            title = KIND_TITLES.get(kind, "Data")
            label = f"¶{kind}" + (f" (_instance {instance})" if instance is not None else "")
            value = (
                self.lookup(Reference(kind), instance)
                if instance is None
                else (self._own_view(kind, instance))
            )
            lines = [f"## {title}: {label}", _json(None if value is MISSING else value)]
            description = self.description_of(kind, instance)
            if description:
                lines.append(description)
            schema = self.schema_of(kind, instance)
            if schema is not None and (instance is None or _own_schema(self, kind, instance)):
                lines.append(f"Schema for ¶{kind}:")
                lines.append(_json(schema))
            sections.append("\n".join(lines))
        return "\n\n".join(sections)

    def _own_view(self, kind: str, instance: str) -> Any:
        """An instance's own messages only (the global ones are shown once, in their section)."""
        root: Any = MISSING
        for message in self.messages:
            if message.kind == kind and message.instance == instance:
                root = apply_write(root, message.path, message.method, message.value)
        return root

    def to_items(self) -> list[dict[str, Any]]:
        """Every message as an RFC context item (JSON-ready; ``Context.of`` reads them back)."""
        return [m.to_item() for m in self.messages]

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[ContextMessage]:
        return iter(self.messages)

    def copy(self) -> Context:
        return Context([replace(m) for m in self.messages])


# -- scopes (015) -------------------------------------------------------------------------------


def _scope_reference(scope: Any) -> Reference | None:
    if not isinstance(scope, str):
        return None
    parts = scope.strip().removeprefix("†").split(".")
    if any(not p for p in parts):
        return None
    return Reference(parts[0], tuple(parts[1:]))


def scoped_context(
    context: Context | None, scopes: Iterable[Any], instance: str | None = None
) -> Context:
    """The part of ``context`` that ``scopes`` allow, as ``instance`` sees it (015): one message
    per scope (a kind, or a path in one), global (an instance's view is that call's own), with
    the kind's schema and description when the whole kind is scoped."""
    out = Context()
    if context is None:
        return out
    for scope in scopes:
        ref = _scope_reference(scope)
        if ref is None:
            continue
        value = context.lookup(ref, instance)
        if value is MISSING:
            continue
        whole = not ref.path
        out.messages.append(
            ContextMessage(
                kind=ref.kind,
                value=copy.deepcopy(value),
                path=ref.path,
                method="set",
                schema=context.schema_of(ref.kind, instance) if whole else None,
                description=context.description_of(ref.kind, instance) if whole else None,
            )
        )
    return out


def _own_schema(context: Context, kind: str, instance: str) -> bool:
    return any(
        m.schema is not None for m in context.messages if m.kind == kind and m.instance == instance
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@dataclass(frozen=True, slots=True)
class Variable:
    """A reference with attribute and item access: ``context.state.user.name`` is
    ``†state.user.name``; ``.value`` resolves it (raising when nothing is there), ``.get()``
    gives a default instead, ``str()`` is the reference to put in a Call."""

    context: Context
    ref: Reference
    instance: str | None = None

    def __getattr__(self, key: str) -> Variable:
        if key.startswith("__"):
            raise AttributeError(key)
        return Variable(
            self.context, Reference(self.ref.kind, (*self.ref.path, key)), self.instance
        )

    def __getitem__(self, key: str | int) -> Variable:
        return Variable(
            self.context, Reference(self.ref.kind, (*self.ref.path, str(key))), self.instance
        )

    @property
    def value(self) -> Any:
        return self.context.resolve(self.ref, self.instance)

    def get(self, default: Any = None) -> Any:
        return self.context.get(self.ref, default, self.instance)

    def __str__(self) -> str:
        return str(self.ref)


@dataclass(frozen=True, slots=True)
class InstanceView(_Kinds):
    """One instance of a context (013): its references resolve in that instance."""

    context: Context
    id: str

    def var(self, kind: str) -> Variable:
        return Variable(self.context, Reference(kind), self.id)

    def get(self, ref: str | Reference, default: Any = None) -> Any:
        return self.context.get(ref, default, self.id)

    def view(self, kind: str) -> Any:
        return self.context.view(kind, self.id)
