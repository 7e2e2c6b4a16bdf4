"""Runtime layer (HTTP): request bodies (JSON, form, multipart, text, binary) from a Call. Imports httpx.

File content (``BodyPart.is_file`` and ``binary`` bodies) is taken as:

- ``bytes`` (what a Call model holds in Python), sent as is;
- a string: base64 of the content (what ``bytes`` look like in JSON, so what an LLM writes);
- a data URL (RFC 2397, ``data:text/csv;name=ds.csv;base64,...``: how OpenAI's file inputs and
  react-jsonschema-form's ``data-url`` hand a model's file over): its content, named by its
  ``name`` parameter, else by the property with its media type's extension (``file.csv``) —
  a server that checks the extension (Evidently's dataset upload: "Extension not allowed")
  took no file the model could name otherwise;
- a local path — only when the client was configured with ``file_root``: then a string (or
  ``os.PathLike``) value is a path resolved inside ``file_root`` (symlinks resolved; ``..``,
  absolute paths and links leading outside are refused). Without ``file_root`` no value ever
  reads a local file: an LLM must not be able to upload ``/etc/passwd`` or ``~/.ssh/id_rsa``.

A file part's filename is the path's base name, else the data URL's, else the property name; its
content type is the part's ``encoding.contentType`` (first listed), else the data URL's media
type, else guessed from the filename, else ``application/octet-stream``.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import os
import secrets
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, cast
from urllib.parse import unquote, unquote_to_bytes, urlencode

import httpx

from ..contract import BodyPart, HttpBody, HttpParameter
from ._params import ParameterError, primitive, query_pairs

_MISSING = object()
_DELIMITERS = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}
"""The items of an array sent unexploded in one multipart part, by style."""


def body_value(body: HttpBody, dump: Mapping[str, Any]) -> Any:
    """The body's JSON value taken from the Call dump, or ``_MISSING`` when nothing is sent."""
    if body.wrapped is not None:
        if body.wrapped in dump:
            return dump[body.wrapped]
        return {} if body.required and body.kind in ("json", "form", "multipart") else _MISSING
    value = {prop: dump[name] for name, prop in body.fields if name in dump}
    if not value and not body.required:
        return _MISSING
    return value


def _file(value: Any, prop: str, file_root: Path | None) -> tuple[str, bytes, str | None]:
    """(filename, content, media type if the value says one) of a file value; see the module
    docstring for the accepted forms."""
    if isinstance(value, str) and value[:5].lower() == "data:":
        return _data_url(value, prop)
    named, content = _named_file(value, prop, file_root)
    return named, content, None


def _data_url(value: str, prop: str) -> tuple[str, bytes, str | None]:
    """A data URL's (filename, content, media type); see the module docstring."""
    header, comma, data = value[5:].partition(",")
    if not comma:
        raise ParameterError(f"{prop!r}: a data URL without ',' before its data")
    media, *params = (p.strip() for p in header.split(";"))
    flags = [p.lower() for p in params]
    name = next((unquote(p[5:]) for p in params if p.lower().startswith("name=")), None)
    try:
        content = (
            base64.b64decode(data, validate=True) if "base64" in flags else unquote_to_bytes(data)
        )
    except (binascii.Error, ValueError):
        raise ParameterError(f"{prop!r}: the data URL's data is not base64") from None
    media = media.lower() or None
    # the name's last segment only: a filename, never a path on the server's side
    filename = PurePosixPath(name.replace("\\", "/")).name if name else ""
    if not filename:
        filename = prop + ((mimetypes.guess_extension(media) or "") if media else "")
    return filename, content, media


def _named_file(value: Any, prop: str, file_root: Path | None) -> tuple[str, bytes]:
    if isinstance(value, bytes | bytearray):
        return prop, bytes(cast("bytes", value))
    if file_root is not None and isinstance(value, str | os.PathLike):
        raw = Path(cast("str", value))
        root = file_root.resolve()
        target = (root / raw).resolve()
        if not target.is_relative_to(root):
            raise ParameterError(f"{prop!r}: file path is outside the allowed directory")
        if not target.is_file():
            raise ParameterError(f"{prop!r}: no such file in the allowed directory: {raw}")
        return target.name, target.read_bytes()
    if isinstance(value, str):
        try:
            return prop, base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ParameterError(
                f"{prop!r}: expected base64-encoded file content (local paths are not accepted)"
            ) from None
    raise ParameterError(f"{prop!r}: expected file content (base64), got {type(value).__name__}")


def _content_type(
    part: BodyPart | None, filename: str | None, given: str | None = None
) -> str | None:
    if part is not None and part.content_type:
        return part.content_type.split(",")[0].strip()
    if given is not None:
        return given
    if filename is not None:
        return mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return None


def encode_body(
    body: HttpBody,
    dump: Mapping[str, Any],
    raw: Mapping[str, Any],
    *,
    file_root: Path | None,
) -> tuple[bytes | None, str | None]:
    """(content, Content-Type) for the body; ``(None, None)`` when no body is sent.

    Args:
        body: the operation's body description.
        dump: the Call's JSON dump (JSON names).
        raw: the Call's Python dump (same keys; ``bytes`` stay bytes).
        file_root: the directory file paths may be read from, or None (no paths).
    """
    value = body_value(body, dump)
    if value is _MISSING:
        return None, None
    raw_value = body_value(body, raw)
    if body.kind == "json":
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8"), body.media_type
    if body.kind == "text":
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return text.encode("utf-8"), body.media_type
    if body.kind == "binary":
        _, content, _ = _file(raw_value, body.wrapped or "body", file_root)
        return content, body.media_type
    if not isinstance(value, dict):
        raise ParameterError(f"a {body.media_type} body must be an object")
    obj = cast("dict[str, Any]", value)
    raw_obj = cast("dict[str, Any]", raw_value) if isinstance(raw_value, dict) else obj
    parts = {p.property: p for p in body.parts}
    _refuse_empty_required(obj, parts, body.media_type)
    if body.kind == "form":
        return _form(obj, parts), body.media_type
    return _multipart(obj, raw_obj, parts, file_root)


def _refuse_empty_required(
    obj: Mapping[str, Any], parts: Mapping[str, BodyPart], media_type: str
) -> None:
    """A required array given ``[]``: a form or multipart body has no way to send it (no pair,
    no part: a server reads it as absent), so it is refused, as a required query parameter's
    empty value is — not left out in silence. (A JSON part can say ``[]``.)"""
    for prop, item in obj.items():
        part = parts.get(prop)
        if part is None or not part.required or item != []:
            continue
        if "json" in (part.content_type or ""):
            continue
        raise ParameterError(
            f"body property {prop!r} is required and its value [] is empty: a {media_type} "
            "body cannot send an empty array (a server reads it as absent); give at least one item"
        )


def _form(obj: Mapping[str, Any], parts: Mapping[str, BodyPart]) -> bytes:
    """An ``application/x-www-form-urlencoded`` body: each property as its encoding says."""
    pairs: list[tuple[str, str]] = []
    for prop, item in obj.items():
        part = parts.get(prop)
        if part is not None and part.content_type and "json" in part.content_type:
            pairs.append((prop, json.dumps(item, separators=(",", ":"))))
        elif part is not None and (part.style is not None or part.explode is not None):
            # the encoding's style, as a query parameter's (deepObject: metadata[k]=v)
            style = part.style or "form"
            explode = part.explode if part.explode is not None else style == "form"
            as_param = HttpParameter(
                name=prop, field=prop, location="query", style=style, explode=explode
            )
            for encoded in query_pairs(as_param, item):
                name, _, text = encoded.partition("=")
                pairs.append((unquote(name), unquote(text)))
        elif isinstance(item, list):
            pairs.extend((prop, primitive(v)) for v in cast("list[Any]", item))
        elif isinstance(item, dict):  # style form, explode: the object's own properties
            pairs.extend((k, primitive(v)) for k, v in cast("dict[str, Any]", item).items())
        else:
            pairs.append((prop, primitive(item)))
    return urlencode(pairs).encode("ascii")


def _multipart(
    obj: Mapping[str, Any],
    raw_obj: Mapping[str, Any],
    parts: Mapping[str, BodyPart],
    file_root: Path | None,
) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body and its Content-Type (with the boundary): files from
    ``raw_obj`` (bytes stay bytes), objects as JSON parts, the rest as text parts."""
    files: list[tuple[str, tuple[str | None, bytes, str | None]]] = []
    for prop, item in obj.items():
        part = parts.get(prop)
        raw_item = raw_obj.get(prop, item)
        if part is not None and part.is_file:
            items = (
                cast("list[Any]", raw_item) if isinstance(raw_item, list | tuple) else [raw_item]
            )
            for one in items:
                filename, content, given = _file(one, prop, file_root)
                files.append((prop, (filename, content, _content_type(part, filename, given))))
        elif isinstance(item, dict) or (
            isinstance(item, list) and part is not None and part.content_type
        ):
            ctype = _content_type(part, None) or "application/json"
            files.append((prop, (None, json.dumps(item).encode("utf-8"), ctype)))
        elif isinstance(item, list) and part is not None and part.explode is False:
            # one part holding the items, delimited as the style says (Swagger 2.0's
            # collectionFormat csv, its default, ssv or pipes)
            joined = _DELIMITERS.get(part.style or "form", ",").join(
                primitive(one) for one in cast("list[Any]", item)
            )
            files.append((prop, (None, joined.encode("utf-8"), None)))
        elif isinstance(item, list):
            for one in cast("list[Any]", item):
                files.append((prop, (None, primitive(one).encode("utf-8"), None)))
        else:
            files.append((prop, (None, primitive(item).encode("utf-8"), _content_type(part, None))))
    if not files:
        # every part optional and none given: an empty multipart body (httpx writes none, and
        # names no Content-Type, for no files)
        boundary = secrets.token_hex(16)
        return f"--{boundary}--\r\n".encode("ascii"), f"multipart/form-data; boundary={boundary}"
    # httpx writes the multipart framing (boundary, quoting of names and filenames).
    request = httpx.Request("POST", "http://multipart.invalid/", files=files)
    content = request.read()
    return content, request.headers["content-type"]
