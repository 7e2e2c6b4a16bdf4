"""Testing layer, live checks: what the spec itself declares where the compiled contract keeps
less — the spec document a tool came from (``ToolBinding.source``) read again, its ``$ref``s
followed. Imports PyYAML, ``toolbind.yaml12`` and ``toolbind.runtime``.

The contract keeps one media type per response (the one its Output model reads); an answer is
in a declared type when it is any of the response's: every key of an OpenAPI 3 ``content``, and
in a Swagger 2.0 document every type the operation ``produces`` (the document's when the
operation names none), for a response with a schema or without one — Swagger says what an
operation answers in ``produces``, whether or not it describes the body.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote

import yaml

from toolbind.runtime import ToolBinding


@functools.lru_cache(maxsize=8)
def _cached(file: str, stamp: tuple[int, int]) -> Any:
    from toolbind.yaml12 import load_yaml

    del stamp  # (part of the key only: an edited file is read again)
    try:
        return load_yaml(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return None


def document(file: str) -> Any:
    """The parsed spec at ``file`` (read once while it is unchanged), or None when it cannot be
    read again (then the compiled contract is all there is)."""
    try:
        found = os.stat(file)
    except OSError:
        return None
    return _cached(file, (found.st_mtime_ns, found.st_size))


def at(node: Any, pointer: str) -> Any:
    """The value at JSON pointer ``pointer`` (percent- and ``~``-escaped) in ``node``, or None."""
    for token in pointer.lstrip("/").split("/") if pointer.strip("/") else []:
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = cast("dict[str, Any]", node).get(token)
        elif isinstance(node, list) and token.isdigit():
            items = cast("list[Any]", node)
            node = items[int(token)] if int(token) < len(items) else None
        else:
            return None
    return node


def resolved(doc: Any, node: object) -> Any:
    """``node``, or what its local ``$ref`` names."""
    if not isinstance(node, dict):
        return node
    entry = cast("dict[str, Any]", node)
    ref = entry.get("$ref")
    return at(doc, ref[1:]) if isinstance(ref, str) and ref.startswith("#") else entry


@dataclass(frozen=True, slots=True)
class Declared:
    """The media types a response declares and where the spec says so."""

    types: tuple[str, ...]
    pointer: str


def _strings(value: Any) -> tuple[str, ...]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return tuple(v for v in items if isinstance(v, str))


@functools.lru_cache(maxsize=4096)
def _declared(source: str, status: str, stamp: tuple[int, int]) -> Declared | None:
    file, _, pointer = source.partition("#")
    doc = document(file)
    operation = at(doc, pointer)
    if not isinstance(operation, dict):
        return None
    op = cast("dict[str, Any]", operation)
    responses = op.get("responses")
    if not isinstance(responses, dict):
        return None
    # (a YAML spec's status keys may be numbers)
    table = {str(k): v for k, v in cast("dict[Any, Any]", responses).items()}
    response = resolved(doc, table.get(status))
    if not isinstance(response, dict) or "$ref" in response:
        return None  # (in another file: the compiled contract says what it declares)
    answer = cast("dict[str, Any]", response)
    if isinstance(doc, dict) and "swagger" in doc:
        top = cast("dict[str, Any]", doc)
        if "produces" in op:
            produced, where = _strings(op["produces"]), f"{source}/produces"
        else:
            produced, where = _strings(top.get("produces")), f"{file}#/produces"
        if not produced and "schema" in answer:
            produced = ("application/json",)  # (as the compiler reads a schema without them)
        return Declared(produced, where)
    content = answer.get("content")
    if not isinstance(content, dict):
        return Declared((), "")
    escaped = status.replace("~", "~0").replace("/", "~1")
    return Declared(
        tuple(str(k) for k in cast("dict[Any, Any]", content)),
        f"{source}/responses/{escaped}/content",
    )


def declared_types(tool: ToolBinding, status: str) -> Declared | None:
    """Every media type the spec declares for ``tool``'s response ``status`` (a key of its
    ``responses``: ``200``, ``4XX``, ``default``), with the pointer that says so; None when
    the spec cannot be read again."""
    if "#" not in tool.source:
        return None
    try:
        found = os.stat(tool.source.partition("#")[0])
    except OSError:
        return None
    return _declared(tool.source, status, (found.st_mtime_ns, found.st_size))
