"""toolbind.runtime.exports, runtime layer (imports the runtime's ``_compose``, and ``_common``,
``_openai_strict``, ``_strict_rules``): Gemini function declarations (its OpenAPI-subset
``Schema``).

Part of ``toolbind.runtime.exports``; see the package docstring for the whole picture.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, cast

from toolbind._compose import def_name

from ._common import ExportableTool, ExportIssue, GeminiExport, call_schema, escape_token
from ._openai_strict import ANNOTATIONS
from ._strict_rules import types_of

# -- Gemini -------------------------------------------------------------------------------------

_GEMINI_KEEP = frozenset(
    {
        "format",
        "title",
        "description",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)


# The keywords converted into Gemini's own (or inlined, or merged), never reported as dropped.
_GEMINI_CONVERTED = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "additionalProperties",
        "$ref",
        "$defs",
    }
)

# Gemini's Schema.format: float/double for NUMBER, int32/int64 for INTEGER, enum/date-time for STRING.
_GEMINI_FORMATS = frozenset({"float", "double", "int32", "int64", "enum", "date-time"})


class _Gemini:
    """One tool's conversion: its definitions (inlined where referenced) and the notes on what
    Gemini's schema cannot say."""

    def __init__(self, tool: str, defs: Mapping[str, Any], recursion: int) -> None:
        self.tool = tool
        self.defs = defs
        self.recursion = recursion
        self.notes: list[ExportIssue] = []

    def note(self, pointer: str, kind: str, message: str) -> None:
        self.notes.append(ExportIssue(tool=self.tool, pointer=pointer, kind=kind, message=message))

    def convert(self, node: Any, pointer: str, stack: tuple[str, ...]) -> dict[str, Any]:
        """``node`` in Gemini's schema; ``stack``: the definitions being inlined on this path."""
        if node is True or node == {}:
            return {}
        if not isinstance(node, dict):
            self.note(pointer, "boolean schema", "a `false` schema: Gemini cannot say 'nothing'")
            return {}
        n = cast("dict[str, Any]", node)
        ref = n.get("$ref")
        if isinstance(ref, str):
            return self._inlined(n, ref, pointer, stack)
        types = types_of(n)
        nullable = "null" in types
        types = [t for t in types if t != "null"]
        out, dropped = self._kept(n, types)
        nullable = self._values(n, out, dropped) or nullable
        nullable = self._branches(n, out, pointer, stack) or nullable
        self._all_of(n, out, pointer, stack)
        self._members(n, out, pointer, stack)
        if nullable:
            out["nullable"] = True
        if dropped:
            self.note(
                pointer,
                "dropped keywords",
                f"not in Gemini's schema, dropped: {', '.join(sorted(set(dropped)))}",
            )
        return out

    def _inlined(
        self, n: dict[str, Any], ref: str, pointer: str, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        """The definition ``ref`` names, inlined (Gemini has no ``$ref``); a recursive one cut
        after ``recursion`` levels."""
        name = def_name(ref)
        if name is None or name not in self.defs:
            self.note(pointer, "$ref", f"$ref {ref!r} is not a local definition: left open")
            return {}
        if stack.count(name) >= self.recursion:
            self.note(
                pointer,
                "recursion",
                f"recursive definition {name!r} cut after {self.recursion} level(s)",
            )
            target = cast("dict[str, Any]", self.defs[name])
            cut: dict[str, Any] = {}
            if isinstance(target.get("type"), str):
                cut["type"] = str(target["type"]).upper()
            cut["description"] = f"(recursive {name}: structure not expanded further)"
            return cut
        inlined = self.convert(self.defs[name], pointer, (*stack, name))
        if "description" in n:
            inlined["description"] = n["description"]
        return inlined

    @staticmethod
    def _kept(n: dict[str, Any], types: list[str]) -> tuple[dict[str, Any], list[str]]:
        """The keywords Gemini's schema has (and the type, upper-case), and those dropped."""
        out: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in n.items():
            if key in _GEMINI_KEEP:
                out[key] = value
            elif key in _GEMINI_CONVERTED or key in ANNOTATIONS or key.startswith("x-"):
                continue
            else:
                dropped.append(key)
        if "format" in out and out["format"] not in _GEMINI_FORMATS:
            dropped.append("format")
            del out["format"]
        if len(types) == 1:
            out["type"] = types[0].upper()
        elif len(types) > 1:
            out["anyOf"] = [{"type": t.upper()} for t in types]
        return out, dropped

    @staticmethod
    def _values(n: dict[str, Any], out: dict[str, Any], dropped: list[str]) -> bool:
        """``const`` and ``enum`` as Gemini's string enum; whether they admit null."""
        nullable = False
        if "const" in n:
            if isinstance(n["const"], str):
                out["type"] = "STRING"
                out["enum"] = [n["const"]]
            elif n["const"] is None:
                nullable = True
            else:
                dropped.append("const")
        if "enum" in n:
            values = cast("list[Any]", n["enum"])
            if None in values:
                nullable = True
            strings = [v for v in values if v is not None]
            if strings and all(isinstance(v, str) for v in strings):
                out["enum"] = strings
                out.setdefault("type", "STRING")
            elif strings:
                dropped.append("enum")
        return nullable

    def _branches(
        self, n: dict[str, Any], out: dict[str, Any], pointer: str, stack: tuple[str, ...]
    ) -> bool:
        """``anyOf``/``oneOf`` as ``anyOf`` (a null branch as ``nullable``, a lone branch merged);
        whether a branch is null."""
        nullable = False
        branches = n.get("anyOf", n.get("oneOf"))
        if "oneOf" in n:
            self.note(
                pointer, "oneOf", "oneOf sent as anyOf (exactly-one is checked on the way back)"
            )
        if isinstance(branches, list):
            converted: list[dict[str, Any]] = []
            for i, b in enumerate(cast("list[Any]", branches)):
                if isinstance(b, dict) and cast("dict[str, Any]", b).get("type") == "null":
                    nullable = True
                    continue
                key = "anyOf" if "anyOf" in n else "oneOf"
                converted.append(self.convert(b, f"{pointer}/{key}/{i}", stack))
            if len(converted) == 1 and "type" not in out:
                out.update(converted[0])
            elif converted:
                out["anyOf"] = converted
        return nullable

    def _all_of(
        self, n: dict[str, Any], out: dict[str, Any], pointer: str, stack: tuple[str, ...]
    ) -> None:
        """``allOf`` merged key by key into ``out`` (the first part to set a key wins)."""
        all_of = n.get("allOf")
        if not isinstance(all_of, list):
            return
        parts = cast("list[Any]", all_of)
        if len(parts) > 1:
            self.note(pointer, "allOf", "allOf merged key by key (the faithful model checks all)")
        for i, part in enumerate(parts):
            for key, value in self.convert(part, f"{pointer}/allOf/{i}", stack).items():
                out.setdefault(key, value)

    def _members(
        self, n: dict[str, Any], out: dict[str, Any], pointer: str, stack: tuple[str, ...]
    ) -> None:
        """An object's properties (and which are required) and an array's items, converted."""
        props = n.get("properties")
        if isinstance(props, dict):
            out.setdefault("type", "OBJECT")
            out["properties"] = {
                name: self.convert(sub, f"{pointer}/properties/{escape_token(name)}", stack)
                for name, sub in cast("dict[str, Any]", props).items()
            }
            required = [
                r for r in cast("list[Any]", n.get("required", [])) if r in out["properties"]
            ]
            if required:
                out["required"] = required
        extra = n.get("additionalProperties")
        if extra is not None and extra is not False:
            self.note(
                pointer,
                "additionalProperties",
                "extra properties cannot be described to Gemini (no additionalProperties)",
            )
        items = n.get("items")
        if isinstance(items, dict):
            out["items"] = self.convert(items, f"{pointer}/items", stack)
        elif items is not None:
            self.note(pointer, "items", "tuple-form items cannot be described to Gemini")


def gemini_tools(
    tools: Iterable[ExportableTool], activities: Collection[str] = (), *, recursion: int = 2
) -> GeminiExport:
    """Gemini function declarations (``{name, description, parameters}``), no ``$ref``.

    Args:
        recursion: how many times one recursive definition is expanded on a path before it is cut
            (and a note says so).
    """
    export = GeminiExport()
    for tool in tools:
        composed = call_schema(tool, activities)
        defs = cast("dict[str, Any]", composed.pop("$defs", {}))
        converter = _Gemini(tool.name, defs, recursion)
        declaration: dict[str, Any] = {"name": tool.provider_name}
        if tool.description:
            declaration["description"] = tool.description
        declaration["parameters"] = converter.convert(composed, "", ())
        export.declarations.append(declaration)
        export.notes.extend(converter.notes)
    return export
