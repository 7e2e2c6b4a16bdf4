"""Testing layer: hypothesis strategies for a contract's valid and invalid JSON instances.

Imports hypothesis, hypothesis-jsonschema, jsonschema and ``_contract``.

Valid instances come from hypothesis-jsonschema, which reads draft 7: draft 2020-12 spellings
(``prefixItems``, ``dependentRequired``/``dependentSchemas``) are rewritten to their draft 7
equivalents first, or it would silently ignore them. Invalid instances are *mutations* of valid
ones — a required key dropped, a value of another JSON type, a bound, length, enum or const
missed by one, a duplicate item, an extra or explicit-null property — kept only when the
reference validator (jsonschema, the schema's own dialect) rejects them. Mutations are listed
cheaply as (path, edit) pairs and tried from a drawn position on, so hypothesis shrinks a
failure to a small instance and an early, simple edit.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterator, Mapping
from typing import Any, cast

import jsonschema.protocols
from hypothesis import assume
from hypothesis import strategies as st

from toolbind._ecma import translate
from toolbind.contract import json_type

from ._contract import Contract
from ._unroll import recursive_defs, unrolled

_DIALECTS_2019_ON = ("2019-09", "2020-12")
_INT_FORMATS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_FLOAT_FORMATS = {"float": 3.4028234663852886e38, "double": 1.7976931348623157e308}
_NUMERIC_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_LENGTH_KEYWORDS = ("minLength", "maxLength")
_SIZE_KEYWORDS = ("minItems", "maxItems", "minProperties", "maxProperties")
# Values of every JSON type: replacing a node with one of another type breaks ``type``.
_TYPE_SWAPS: tuple[Any, ...] = (None, True, 0, 0.5, "", [], {})
_MAX_NODES = 256  # mutation sites considered per instance (breadth-first from the root)
_MAX_TRIES = 64  # candidate mutations validated per drawn instance before giving up on it
_MAX_LENGTH = 4096  # longest string a length mutation builds
_STRIDES = (37, 41, 43, 47)

Path = tuple[str | int, ...]
Edit = tuple[Path, str, Any]


def to_draft7(schema: Any) -> Any:
    """``prefixItems``/``items`` → ``items``/``additionalItems``; ``dependent*`` → ``dependencies``;
    an ``int32``/``int64`` integer's (a ``float``/``double`` number's) range as
    ``minimum``/``maximum``."""
    if isinstance(schema, list):
        return [to_draft7(v) for v in cast("list[Any]", schema)]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {k: to_draft7(v) for k, v in cast("dict[str, Any]", schema).items()}
    if "prefixItems" in out:
        prefix = out.pop("prefixItems")
        if "items" in out:
            out["additionalItems"] = out.pop("items")
        out["items"] = prefix
    # OpenAPI's integer formats are ranges (a Call checks them); hypothesis-jsonschema ignores them
    fmt = out.get("format")
    bounds = (
        _INT_FORMATS.get(fmt) if out.get("type") == "integer" and isinstance(fmt, str) else None
    )
    if out.get("type") == "number" and isinstance(fmt, str) and fmt in _FLOAT_FORMATS:
        bounds = (-_FLOAT_FORMATS[fmt], _FLOAT_FORMATS[fmt])  # (and finite: a Call checks both)
    if bounds is not None:
        out["minimum"] = max(out.get("minimum", bounds[0]), bounds[0])
        out["maximum"] = min(out.get("maximum", bounds[1]), bounds[1])
    # Patterns are ECMA-262 (``\d`` is ASCII, ``$`` is the very end); hypothesis reads them
    # with Python's ``re``, so they are handed over in toolbind's translation.
    if isinstance(out.get("pattern"), str):
        out["pattern"] = translate(out["pattern"])
    if isinstance(out.get("patternProperties"), dict):
        patterns = cast("dict[str, Any]", out["patternProperties"])
        out["patternProperties"] = {translate(k): v for k, v in patterns.items()}
    dependencies: dict[str, Any] = {}
    dependencies.update(out.pop("dependentRequired", {}))
    dependencies.update(out.pop("dependentSchemas", {}))
    if dependencies:
        out["dependencies"] = dependencies
    return out


_STRATEGY_CACHE_SIZE = 4096


def _memoize_subschema_strategies() -> None:
    """Make hypothesis-jsonschema build the strategy of a subschema once, not at every draw.

    Its object strategy turns each property's schema into a strategy while drawing — resolving
    ``$ref``s and canonicalising the schema again for every property of every instance drawn
    (``_from_schema.__from_schema``, a private function of the pinned 0.23.1). Strategies are
    immutable, so the one built for the same schema text, alphabet and formats is reused:
    the same instances, a third less time over a spec (``toolbind test`` on Redocly's museum
    spec: 8.4 CPU-s before, 5.9 after). Left as it is where the function is not there."""
    import hypothesis_jsonschema._from_schema as module

    build: Any = module.__dict__.get("__from_schema")
    if build is None or getattr(build, "toolbind_memoized", False):
        return
    cache: dict[tuple[str, int, int], tuple[Any, Any, Any]] = {}

    def memoized(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        try:
            text = json.dumps(schema, allow_nan=False)
        except (TypeError, ValueError):  # (not plain JSON: built each time, as before)
            return build(schema, alphabet=alphabet, custom_formats=custom_formats)
        # the entry holds the alphabet and formats it was built with: their ids are not reused
        # while it is kept
        key = (text, id(alphabet), id(custom_formats))
        found = cache.get(key)
        if found is not None:
            return found[2]
        strategy = build(schema, alphabet=alphabet, custom_formats=custom_formats)
        if len(cache) >= _STRATEGY_CACHE_SIZE:
            cache.clear()
        cache[key] = (alphabet, custom_formats, strategy)
        return strategy

    memoized.toolbind_memoized = True  # type: ignore[attr-defined]
    module.__dict__["__from_schema"] = memoized


def json_instances(schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """Valid instances of ``schema`` (any dialect hypothesis-jsonschema can read after rewriting)."""
    from hypothesis_jsonschema import from_schema  # pyright: ignore[reportUnknownVariableType]

    _memoize_subschema_strategies()
    value: Any = dict(schema) if isinstance(schema, Mapping) else schema
    reference: jsonschema.protocols.Validator | None = None
    if isinstance(value, dict) and recursive_defs(cast("dict[str, Any]", value)):
        # hypothesis-jsonschema gives up on a recursive $ref: generate from a bounded unrolling
        # (a subset of the schema's instances, nearly always), and keep what the schema accepts
        found = unrolled(cast("dict[str, Any]", value))
        if found is not None:
            reference = _reference_validator(cast("dict[str, Any]", value))
            value = found
    if isinstance(value, dict):
        dialect = str(cast("dict[str, Any]", value).get("$schema", "2020-12"))
        if any(d in dialect for d in _DIALECTS_2019_ON):
            value = to_draft7(value)
        cast("dict[str, Any]", value).pop("$schema", None)
    # (hypothesis-jsonschema knows no ``uuid``: drawn as any text, which an OpenAPI Call refuses)
    formats = {"uuid": st.uuids().map(str)}
    strategy = cast("st.SearchStrategy[Any]", from_schema(value, custom_formats=formats))
    if reference is not None:
        strategy = strategy.filter(reference.is_valid)
    return strategy


def _reference_validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    return Contract("Model", None, schema).validator()


class Mutator:
    """Mutations of valid instances of one contract that its reference validator rejects."""

    def __init__(self, contract: Contract) -> None:
        self.validator: jsonschema.protocols.Validator = contract.validator()
        self.filled_in = frozenset(contract.filled_in)
        numbers: set[float] = set()
        lengths: set[int] = set()
        names: set[str] = set()
        constants: list[Any] = []
        _collect(contract.schema, numbers, lengths, names, constants)
        if contract.model is not None:
            # a field's Python name is never its JSON name: an extra key, not that field
            for field_name, info in contract.model.model_fields.items():
                if info.alias is not None and info.alias != field_name:
                    names.add(field_name)
        self.numbers = _near(numbers)
        self.strings = ["a" * n for n in sorted(_near_lengths(lengths))]
        self.names = sorted(names)
        self.constants = constants[:32]

    def candidates(self, instance: Any) -> list[Edit]:
        """Every mutation considered for ``instance``, cheapest to describe first."""
        edits: list[Edit] = []
        for path, node in _nodes(instance):
            edits.extend((path, "set", v) for v in _TYPE_SWAPS if not _same_kind(v, node))
            if isinstance(node, bool):
                edits.append((path, "set", not node))
            elif isinstance(node, (int, float)):
                edits.extend(
                    (path, "set", v)
                    for v in (node + 1, node - 1, -node, node + 0.5, *self.numbers)
                    if math.isfinite(v) and v != node
                )
            elif isinstance(node, str):
                edits.extend(
                    (path, "set", v)
                    for v in (node + "!", node[1:], node + "é", " " + node, *self.strings)
                    if v != node
                )
            elif isinstance(node, list):
                items = cast("list[Any]", node)
                edits.extend([(path, "append", None), (path, "append", "")])
                if items:
                    edits.extend([(path, "pop", None), (path, "append", items[0])])
            elif isinstance(node, dict):
                keys = cast("dict[str, Any]", node).keys()
                edits.extend(
                    (path, "drop", k) for k in sorted(keys) if path or k not in self.filled_in
                )
                fresh = "unexpected"
                while fresh in keys:
                    fresh += "_"
                edits.append((path, "add", (fresh, None)))
                for name in self.names:
                    if name not in keys:
                        edits.extend([(path, "add", (name, None)), (path, "add", (name, 0.5))])
            edits.extend((path, "set", c) for c in self.constants if not _json_identical(c, node))
        return edits

    def rejects(self, value: Any) -> bool:
        """Whether the reference validator rejects ``value``."""
        return not self.validator.is_valid(value)

    def mutate(self, data: st.DataObject, instance: Any) -> tuple[Any, Edit] | None:
        """An invalid mutation of ``instance`` (and the edit made), or None when none was found."""
        edits = self.candidates(instance)
        if not edits:
            return None
        n = len(edits)
        # hypothesis favours small draws (the root's edits, nearly every time): mixing in a
        # checksum of the instance spreads the start over all edits, deterministically
        drawn = data.draw(st.integers(0, 2**32 - 1), label="mutation")
        start = (drawn ^ zlib.crc32(json.dumps(instance, sort_keys=True).encode())) % n
        # a stride coprime with n visits every edit once, spread over the instance's nodes, so
        # an unconstrained subtree (an open object's extra values) can't use up every try
        stride = next((p for p in _STRIDES if n % p), 1)
        for i in range(min(_MAX_TRIES, n)):
            edit = edits[(start + i * stride) % n]
            mutated = apply(instance, edit)
            if self.rejects(mutated):
                return mutated, edit
        return None


def apply(instance: Any, edit: Edit) -> Any:
    """``instance`` with one edit made (copies only the nodes along the path)."""
    path, kind, arg = edit
    if not path:
        return _edit_node(instance, kind, arg)
    head, rest = path[0], path[1:]
    if isinstance(instance, dict):
        out = dict(cast("dict[str, Any]", instance))
        out[cast("str", head)] = apply(out[cast("str", head)], (rest, kind, arg))
        return out
    items = list(cast("list[Any]", instance))
    items[cast("int", head)] = apply(items[cast("int", head)], (rest, kind, arg))
    return items


def describe(edit: Edit) -> str:
    """``/a/0: replaced with null``-style text for an edit."""
    from ._contract import pointer
    from ._errors import show

    path, kind, arg = edit
    where = pointer(path) or "/"
    if kind == "set":
        return f"{where}: replaced with {show(arg, 80)}"
    if kind == "drop":
        return f"{where}: dropped key {arg!r}"
    if kind == "add":
        return f"{where}: added key {arg[0]!r} = {show(arg[1], 80)}"
    if kind == "pop":
        return f"{where}: removed the last item"
    return f"{where}: appended {show(arg, 80)}"


def invalid_instances(contract: Contract) -> st.SearchStrategy[Any]:
    """Invalid instances: valid ones mutated until the reference validator rejects them."""
    mutator = Mutator(contract)
    valid = json_instances(contract.schema)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        data = draw(st.data())
        found = mutator.mutate(data, data.draw(valid, label="valid instance"))
        assume(found is not None)
        assert found is not None
        return found[0]

    return build()


def _edit_node(node: Any, kind: str, arg: Any) -> Any:
    if kind == "set":
        return arg
    if kind == "drop":
        return {k: v for k, v in cast("dict[str, Any]", node).items() if k != arg}
    if kind == "add":
        key, value = cast("tuple[str, Any]", arg)
        return {**cast("dict[str, Any]", node), key: value}
    items = list(cast("list[Any]", node))
    if kind == "pop":
        items.pop()
    else:
        items.append(arg)
    return items


def _nodes(instance: Any) -> Iterator[tuple[Path, Any]]:
    queue: list[tuple[Path, Any]] = [((), instance)]
    seen = 0
    while queue and seen < _MAX_NODES:
        path, node = queue.pop(0)
        seen += 1
        yield path, node
        if isinstance(node, dict):
            queue.extend(((*path, k), v) for k, v in sorted(cast("dict[str, Any]", node).items()))
        elif isinstance(node, list):
            queue.extend(((*path, i), v) for i, v in enumerate(cast("list[Any]", node)))


def _same_kind(a: Any, b: Any) -> bool:
    return json_type(a) == json_type(b)


def _json_identical(a: Any, b: Any) -> bool:
    return json_type(a) == json_type(b) and a == b


def _collect(
    schema: Any, numbers: set[float], lengths: set[int], names: set[str], constants: list[Any]
) -> None:
    if isinstance(schema, list):
        for item in cast("list[Any]", schema):
            _collect(item, numbers, lengths, names, constants)
        return
    if not isinstance(schema, dict):
        return
    node = cast("dict[str, Any]", schema)
    for key, value in node.items():
        if key in _NUMERIC_KEYWORDS and _is_number(value):
            numbers.add(value)
        elif key in (*_LENGTH_KEYWORDS, *_SIZE_KEYWORDS) and isinstance(value, int):
            lengths.add(value)
        elif key == "const" and len(constants) < 64:
            constants.append(value)
        elif key == "enum" and isinstance(value, list):
            constants.extend(cast("list[Any]", value)[: 64 - len(constants)])
        elif key in ("properties", "patternProperties", "dependentRequired", "dependentSchemas"):
            if key == "properties" and isinstance(value, dict):
                names.update(cast("dict[str, Any]", value).keys())
            _collect(
                list(cast("dict[str, Any]", value).values()) if isinstance(value, dict) else value,
                numbers,
                lengths,
                names,
                constants,
            )
        elif key == "required" and isinstance(value, list):
            names.update(str(v) for v in cast("list[Any]", value))
        elif isinstance(value, (dict, list)) and key not in ("examples", "default"):
            _collect(value, numbers, lengths, names, constants)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _near(numbers: set[float]) -> list[float]:
    out: set[float] = set()
    for n in numbers:
        if math.isfinite(n):
            out.update((n, n - 1, n + 1, n - 0.5, n + 0.5, n * 2 + 1))
    return sorted(out)[:64]


def _near_lengths(lengths: set[int]) -> set[int]:
    out: set[int] = set()
    for n in lengths:
        out.update(m for m in (n - 1, n, n + 1) if 0 <= m <= _MAX_LENGTH)
    return out
