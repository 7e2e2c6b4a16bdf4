"""Compiler layer (backends): a package's JSON files — ``tools.json`` (each tool's schemas and
metadata, and the shared ``$defs``), a large package's ``tools_index.json`` (where each schema
of ``tools.json`` is) and ``schema.json`` (the composed LLM-facing schema of every tool).

Imports ``naming``, ``_jsontext``, ``ir``, ``toolbind.runtime.contract`` (composition) and the
backends' ``schemas`` and ``_context``.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, cast

from toolbind.contract import ToolSchema, compose_schema, never_latent, reachable_defs

from .. import naming
from .._jsontext import Path as JsonPath
from .._jsontext import dumps_indented, dumps_indented_spans
from ..ir import thaw
from ._context import RenderState, Writer, as_text, digest
from ._views import ToolView
from .schemas import SchemaEmitter, share_repeated


class ToolsJson(Writer):
    """Writes the JSON files of one package from its tools' schemas, emitted once."""

    def __init__(self, state: RenderState) -> None:
        super().__init__(state)
        self.emitter = SchemaEmitter(state.names.def_names)

    def tool_data(self, tools: list[ToolView]) -> dict[str, Any]:
        """``tools.json``'s content: each tool's schemas and metadata, and the shared ``$defs``."""
        entries: list[dict[str, Any]] = []
        for tool, view in zip(self.state.pkg.tools, tools, strict=True):
            entry: dict[str, Any] = {
                "name": tool.name,
                "provider_name": view.provider_name,
                "source": str(tool.loc),
                "parameters": self.emitter.emit(tool.params),
                "output_schema": self.emitter.emit(tool.output)
                if tool.output is not None
                else None,
            }
            for key, value in (
                ("description", tool.description),
                ("title", tool.title),
                ("activity", tool.activity or (tool.name if tool.execution else None)),
                ("execution_type", tool.execution_type),
                ("visible", tool.visible),
                ("execution", thaw(tool.execution) if tool.execution else None),
                ("display", thaw(tool.display) if tool.display else None),
                ("annotations", thaw(tool.annotations) if tool.annotations else None),
                ("original_name", tool.original_name),
            ):
                if value is not None:
                    entry[key] = value
            if tool.extensions:
                entry["extensions"] = {
                    wire: self.emitter.emit(node) for wire, node in tool.extensions
                }
                if tool.extensions_required:
                    entry["extensions_required"] = list(tool.extensions_required)
            if tool.requires_approval:
                entry["requires_approval"] = True
            if tool.toolsets:
                entry["toolsets"] = list(tool.toolsets)
            if tool.deprecated:
                entry["deprecated"] = True
            entries.append(entry)
        # Subschemas repeated across tools (OpenAPI's pagination parameters, inline bodies)
        # are written once, like the spec's own components.
        roots: list[Any] = [e["parameters"] for e in entries] + [
            e["output_schema"] for e in entries if e["output_schema"] is not None
        ]
        defs, roots = self._shared(roots)
        outputs = iter(roots[len(entries) :])
        for entry, parameters in zip(entries, roots, strict=False):
            entry["parameters"] = parameters
            if entry["output_schema"] is not None:
                entry["output_schema"] = next(outputs)
        return {"$defs": defs, "tools": entries}

    def _shared(self, roots: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """The definitions' schemas, and ``share_repeated`` over them and the tools' schemas
        (``roots``); then only the definitions the tools' schemas reach (one only an error
        response uses is a model in models.py, never a schema the LLM or the registry reads).

        A large package's is a named step (``shared``) keyed on what the definitions' schemas
        are made from (the definitions' key, ``_definitions``; else the schemas as emitted),
        the tools' schemas as emitted (JSON, in order) and the class names taken before (the
        shared definitions are named in that scope). A result read back has its names claimed
        again in order (the same names, the same scope after; the scope is left as it was, and
        the step made, if they are not)."""
        defs: dict[str, Any] | None = None
        if self.state.named_steps:
            made_from = emitted = None
            try:
                if self.state.definitions_key is None:
                    defs = self._emit_definitions()
                    made_from = json.dumps(defs, ensure_ascii=False, allow_nan=False)
                else:  # (the schemas are a function of the definitions and their names)
                    made_from = self.state.definitions_key
                emitted = json.dumps(roots, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError):  # (the emitter writes JSON values only)
                pass
            if made_from is not None and emitted is not None:
                scope = self.state.names.classes
                key = self._key("shared", digest(made_from), digest(emitted), sorted(scope.taken))
                found = defs
                shared = self.state.steps.run(
                    "shared",
                    key,
                    lambda: self._made_shared(found, roots),
                    lambda made: _shared_to_json(made, sorted(scope.taken)),
                    lambda kept: self._read_shared(kept, len(roots)),
                )
                return shared[0], shared[1]
        shared = self._made_shared(defs, roots)
        return shared[0], shared[1]

    def _made_shared(self, defs: dict[str, Any] | None, roots: list[Any]) -> _Shared:
        hints: list[str] = []

        def claim(hint: str) -> str:
            hints.append(hint)
            return self.state.names.inline_class(naming.class_name(hint))

        if defs is None:
            defs = self._emit_definitions()
        defs, roots = share_repeated(defs, roots, claim)
        reached = reachable_defs(roots, defs)
        defs = {name: schema for name, schema in defs.items() if name in reached}
        return defs, roots, hints

    def _emit_definitions(self) -> dict[str, Any]:
        return {
            self.state.names.def_names[d.key]: self.emitter.emit(d.node)
            for d in self.state.pkg.definitions
        }

    def _read_shared(self, kept: dict[str, Any], n_roots: int) -> _Shared | None:
        """The ``_shared`` result ``_shared_to_json`` wrote, its names claimed (None: not
        whole, or not made in this scope)."""
        defs, roots, hints = kept.get("defs"), kept.get("roots"), kept.get("hints")
        if (
            not isinstance(defs, dict)
            or not isinstance(roots, list)
            or len(cast("list[Any]", roots)) != n_roots
            or not isinstance(hints, list)
            or not all(isinstance(h, str) for h in cast("list[Any]", hints))
        ):
            return None
        scope = self.state.names.classes
        taken, renames = set(scope.taken), list(scope.renames)
        for hint in cast("list[str]", hints):
            self.state.names.inline_class(naming.class_name(hint))
        if sorted(scope.taken) != kept.get("claimed"):
            scope.taken, scope.renames = taken, renames  # (not the scope it was made in)
            return None
        return cast("dict[str, Any]", defs), cast("list[Any]", roots), cast("list[str]", hints)

    def json_file(self, data: dict[str, Any]) -> str:
        """``data`` as a JSON file of the package, with its ``DO NOT EDIT`` comment."""
        header = (
            f"DO NOT EDIT: generated by toolbind {self.state.version} from {self.state.pkg.source}."
        )
        return dumps_indented({"$comment": header, **data}, 1) + "\n"

    def indexed_tools_json(self, data: dict[str, Any]) -> dict[str, str]:
        """A large package's ``tools.json`` (the same text) and ``tools_index.json``: each tool's
        entry with its ``parameters`` and ``output_schema`` replaced by their byte spans in
        ``tools.json``, and each shared definition's span. Registering the package reads the
        index alone; a tool's schemas (and the definitions they reach) are parsed from their
        spans when first used. The index names ``tools.json``'s size and CRC-32: a
        ``tools.json`` changed since is read whole, as if there were no index."""
        header = (
            f"DO NOT EDIT: generated by toolbind {self.state.version} from {self.state.pkg.source}."
        )
        doc = {"$comment": header, **data}

        def wanted(path: tuple[str | int, ...]) -> bool:
            return (len(path) == 2 and path[0] == "$defs") or (
                len(path) == 3 and path[2] in ("parameters", "output_schema")
            )

        text, spans = dumps_indented_spans(doc, 1, 3, wanted, self._written_schema_texts(data))
        text += "\n"
        if not spans:  # a value only json.dumps writes: no index, the file is read whole
            return {"tools.json": text}
        raw = text.encode("utf-8")
        entries: list[str] = []
        for n, entry in enumerate(cast("list[dict[str, Any]]", data["tools"])):
            indexed = dict(entry)
            for key in ("parameters", "output_schema"):
                span = spans.get(("tools", n, key))
                indexed[key] = list(span) if span is not None else None
            entries.append(json.dumps(indexed, ensure_ascii=False))
        defs: list[str | int] = []  # flat: [name, start, end, ...], one list for the reader
        for name in data["$defs"]:
            defs.extend((name, *spans[("$defs", name)]))
        head = {
            "$comment": f"{header} Where each schema of tools.json is: UTF-8 byte spans [start, end).",
            "tools.json": {"bytes": len(raw), "crc32": zlib.crc32(raw)},
            "$defs": defs,
        }
        index = (
            json.dumps(head, ensure_ascii=False)[:-1]
            + ', "tools": [\n'
            + ",\n".join(entries)
            + "\n]}\n"
        )
        return {"tools.json": text, "tools_index.json": index}

    def _written_schema_texts(self, data: dict[str, Any]) -> dict[JsonPath, str]:
        """The texts of ``tools.json``'s schemas (each definition, each tool's parameters and
        output) as a ``tools.json`` written beside the ``shared`` step's result holds them,
        when that result was read back rather than made (``Steps.output``): the same values.
        That file and its index must be as that step's run wrote them (the index names the
        file's size and CRC-32). Each tool's schemas are found by their place in that step's
        list (every tool's parameters, then the outputs there are); empty when unsure."""
        old_text = self.state.steps.output("tools.json", "shared")
        old_index = self.state.steps.output("tools_index.json", "shared")
        if old_text is None or old_index is None:
            return {}
        raw = old_text.encode("utf-8")
        try:
            index = json.loads(old_index)
            if index["tools.json"] != {"bytes": len(raw), "crc32": zlib.crc32(raw)}:
                return {}
            flat = cast("list[Any]", index["$defs"])
            old_defs = {
                as_text(flat[i]): (_span(flat[i + 1]), _span(flat[i + 2]))
                for i in range(0, len(flat), 3)
            }
            old_entries = cast("list[dict[str, Any]]", index["tools"])
            old_roots = [_pair(e["parameters"]) for e in old_entries] + [
                _pair(e["output_schema"]) for e in old_entries if e["output_schema"] is not None
            ]
        except (KeyError, TypeError, ValueError, IndexError):
            return {}
        entries = cast("list[dict[str, Any]]", data["tools"])
        paths: list[JsonPath] = [("tools", n, "parameters") for n in range(len(entries))] + [
            ("tools", n, "output_schema")
            for n, e in enumerate(entries)
            if e["output_schema"] is not None
        ]
        if len(paths) != len(old_roots):
            return {}
        given: dict[JsonPath, str] = {}
        for path, (start, end) in zip(paths, old_roots, strict=True):
            given[path] = raw[start:end].decode("utf-8")
        for name in cast("dict[str, Any]", data["$defs"]):
            span = old_defs.get(name)
            if span is None:
                return {}
            given[("$defs", name)] = raw[span[0] : span[1]].decode("utf-8")
        return given

    def schema_json(self, tool_data: dict[str, Any]) -> str:
        """The composed LLM-facing schema of every tool (tool-system.md "Schema Composition").

        Composed with no registered Activities: a tool is explicit when its spec names an
        Activity, carries an execution config or runs elsewhere (``never_latent``: an MCP tool runs
        on its server), latent otherwise; output is free text.
        """
        tools = [ToolSchema.from_entry(t, tool_data["$defs"]) for t in tool_data["tools"]]
        explicit = {t["name"] for t in tool_data["tools"] if never_latent(t)}
        return self.json_file(compose_schema(tools, activities=explicit))


_Shared = tuple[dict[str, Any], list[Any], list[str]]
"""``ToolsJson._shared``'s result: the definitions kept, the roots, the class-name hints claimed."""


def _shared_to_json(shared: _Shared, claimed: list[str]) -> dict[str, Any]:
    defs, roots, hints = shared
    return {"hints": hints, "claimed": claimed, "defs": defs, "roots": roots}


def _span(value: object) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(value)
    return value


def _pair(value: object) -> tuple[int, int]:
    if not isinstance(value, list):
        raise TypeError("a span is a list")
    items = cast("list[object]", value)
    if len(items) != 2 or _span(items[0]) > _span(items[1]):
        raise ValueError("a span is [start, end]")
    return _span(items[0]), _span(items[1])
