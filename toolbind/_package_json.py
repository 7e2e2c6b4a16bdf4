"""Kernel layer: a generated package's JSON data files, and the contract's frozen dataclasses
(``HttpApi`` and what it holds) as JSON.

Imports the standard library and ``errors``; ``contract`` (``api_from_json``, ``load_api``) and
``_binding`` (``tools.json``) use it.

A large generated package keeps its ``HttpApi`` in ``http.json`` rather than as one Python
expression in ``http.py``: a type checker infers the type of every call and tuple of such an
expression, which for GitHub's 1,223 operations was four fifths of pyright's time over the whole
package (90 of 112 CPU-s on ``http.py``), while ``json.loads`` reads the same data in
milliseconds. The encoding (``contract.api_to_json``) is plain JSON: a dataclass is an object of
the fields not at their default, a tuple is an array, a mapping an object. Decoding is driven by
the fields' annotations (``typing.get_type_hints``), so nothing in the data says which class it is, and every value is
checked against its annotation: a file that is not what ``toolbind generate`` wrote is an error
that names the file and the JSON pointer, never a value of the wrong type.
"""

from __future__ import annotations

import dataclasses
import json
import pkgutil
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from .errors import RegistrationError

_T = TypeVar("_T")


def package_data(package: str, name: str) -> bytes:
    """The bytes of the file ``name`` beside ``package``'s ``__init__``, through the package's
    loader (``pkgutil.get_data``: a zipped package works too); ``importlib.resources`` where the
    loader reads no data (a namespace package, an unusual loader)."""
    data = pkgutil.get_data(package, name)
    if data is None:
        from importlib import resources

        return resources.files(package).joinpath(name).read_bytes()
    return data


def refused(where: str, found: str, expected: str) -> RegistrationError:
    """The error for a data file of a generated package that is not what ``toolbind generate``
    wrote (``where``: the file, and the JSON pointer when there is one)."""
    return RegistrationError(
        f"{where}: error: {found} — expected {expected} (hint: regenerate the package with "
        "`toolbind generate`; never edit its files)"
    )


def decode(cls: type[_T], data: Any, where: str, at: str = "") -> _T:
    """The ``cls`` instance ``data`` encodes (``contract.api_to_json``); ``RegistrationError``
    naming ``where`` (a file) and the JSON pointer (below ``at``, the pointer of ``data``) of
    the first value that does not fit its annotation."""
    try:
        return cast("_T", _decoder(cls)(data))
    except _Misfit as misfit:
        pointer = at + "".join(f"/{_escape(str(k))}" for k in reversed(misfit.path)) or "/"
        found = misfit.data
        shown = repr(found)[:60] if isinstance(found, (str, int, float)) else type(found).__name__
        raise refused(f"{where}#{pointer}", shown, misfit.expected) from None


_V = TypeVar("_V")


class LazyMapping(Mapping[str, _V]):
    """A JSON object of encoded ``cls`` values, each decoded on first access (``decode``): a
    large package's ``http.json`` holds a thousand operations, and a process calls a few."""

    __slots__ = ("_at", "_cls", "_done", "_raw", "_where")

    def __init__(self, cls: type[_V], raw: Any, where: str, at: str) -> None:
        if not isinstance(raw, dict):
            raise refused(f"{where}#{at or '/'}", type(raw).__name__, "an object")
        self._raw = cast("dict[str, Any]", raw)
        self._cls, self._where, self._at = cls, where, at
        self._done: dict[str, _V] = {}

    def __getitem__(self, key: str) -> _V:
        done = self._done.get(key)
        if done is None:
            raw = self._raw[key]  # (KeyError for a name it does not hold)
            done = self._done[key] = decode(
                self._cls, raw, self._where, f"{self._at}/{_escape(key)}"
            )
        return done

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"LazyMapping({len(self._raw)} {self._cls.__name__} values from {self._where})"


class _Misfit(Exception):
    """A value that does not fit its annotation; ``path`` is filled in (innermost key first)
    as the decoders unwind, so decoding builds no pointer until one is needed.

    An internal signal, caught in this module and turned into a ``RegistrationError``: a plain
    ``Exception``, outside the public tree, so no ``except ToolbindError`` can swallow one."""

    def __init__(self, expected: str, data: Any) -> None:
        super().__init__(expected)
        self.expected, self.data = expected, data
        self.path: list[str | int] = []


_Decoder = typing.Callable[[Any], Any]
_DECODERS: dict[Any, _Decoder] = {}


def _decoder(tp: Any) -> _Decoder:
    """The function that decodes a value annotated ``tp`` (made once per annotation: the
    annotations are read when the decoder is made, not for every value)."""
    made = _DECODERS.get(tp)
    if made is None:
        made = _DECODERS[tp] = _make(tp)
    return made


def _make(tp: Any) -> _Decoder:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [o for o in typing.get_args(tp) if o is not type(None)]
        if len(inner) != 1:  # pragma: no cover (no such field in the contract)
            raise TypeError(f"no JSON decoding for {tp!r}")
        some = _decoder(inner[0])
        return lambda data: None if data is None else some(data)
    if origin is Literal:
        allowed = frozenset(typing.get_args(tp))
        expected = "one of " + ", ".join(map(repr, typing.get_args(tp)))

        def literal(data: Any) -> Any:
            if isinstance(data, str) and data in allowed:
                return data
            raise _Misfit(expected, data)

        return literal
    if origin is tuple:
        return _tuple(typing.get_args(tp))
    if origin in (Mapping, dict):
        return _mapping(_decoder(typing.get_args(tp)[1]))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp)
    for kind, expected in ((bool, "a boolean"), (str, "a string"), (int, "an integer")):
        if tp is kind:
            return _scalar(kind, expected)
    if tp is Any:
        return lambda data: data
    raise TypeError(f"no JSON decoding for {tp!r}")  # pragma: no cover (the contract's types)


def _scalar(kind: type, expected: str) -> _Decoder:
    def scalar(data: Any) -> Any:
        if type(data) is kind:  # (an int is no bool, a bool no int)
            return data
        raise _Misfit(expected, data)

    return scalar


def _located(key: str | int, decode: _Decoder, data: Any) -> Any:
    try:
        return decode(data)
    except _Misfit as misfit:
        misfit.path.append(key)
        raise


def _tuple(args: tuple[Any, ...]) -> _Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])

        def homogeneous(data: Any) -> Any:
            if not isinstance(data, list):
                raise _Misfit("an array", data)
            return tuple(_located(i, item, v) for i, v in enumerate(cast("list[Any]", data)))

        return homogeneous
    items = [_decoder(a) for a in args]

    def fixed(data: Any) -> Any:
        if not isinstance(data, list) or len(cast("list[Any]", data)) != len(items):
            raise _Misfit(f"an array of {len(items)} items", data)
        return tuple(
            _located(i, d, v)
            for i, (d, v) in enumerate(zip(items, cast("list[Any]", data), strict=True))
        )

    return fixed


def _mapping(value: _Decoder) -> _Decoder:
    def mapping(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _Misfit("an object", data)
        return {k: _located(k, value, v) for k, v in cast("dict[str, Any]", data).items()}

    return mapping


def _dataclass(cls: type) -> _Decoder:
    hints = typing.get_type_hints(cls)
    required = frozenset(
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    fields: dict[str, _Decoder] = {}

    def decode_fields(data: Any) -> Any:
        if not fields:  # (made on first use: a field's class may refer back to this one)
            fields.update({name: _decoder(hint) for name, hint in hints.items()})
        if not isinstance(data, dict):
            raise _Misfit(f"an object ({cls.__name__})", data)
        table = cast("dict[str, Any]", data)
        kwargs: dict[str, Any] = {}
        for key, value in table.items():
            field = fields.get(key)
            if field is None:
                misfit = _Misfit(f"a field of {cls.__name__}", key)
                misfit.path.append(key)
                raise misfit
            kwargs[key] = _located(key, field, value)
        if not required <= kwargs.keys():
            missing = ", ".join(sorted(required - kwargs.keys()))
            raise _Misfit(f"{cls.__name__} with {missing}", data)
        return cls(**kwargs)

    return decode_fields


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def dumps_lines(data: dict[str, Any], spread: str) -> str:
    """``data`` as JSON text, deterministic: the object under ``spread`` (last) one entry per
    line (a regenerated operation then shows as one changed line in a diff), the rest compact."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    items = [f"{compact(k)}:{compact(v)}" for k, v in data.items() if k != spread]
    body = cast("dict[str, Any]", data.get(spread, {}))
    entries = ",\n".join(f"{compact(k)}:{compact(v)}" for k, v in body.items())
    items.append(f"{compact(spread)}:{{\n{entries}\n}}" if entries else f"{compact(spread)}:{{}}")
    return "{" + ",".join(items) + "}\n"
