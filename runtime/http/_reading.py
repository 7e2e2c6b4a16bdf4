"""Runtime layer (HTTP; imports httpx, pydantic and the package's ``_auth`` and ``_core``): a
response read into the ToolResult.

A failed status is a failed result with the API's answer as its data; a body is read as its
media type (JSON, text, a stream of values, binary content) or as the one the operation declares,
then typed by the Output model — leniently where an API's answer went through but does not fit
it to the letter (undeclared nulls and members: a success that says so).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
from typing import Any, cast

import httpx
from pydantic import BaseModel, ValidationError

from .._result import ToolResult
from ._auth import Redactor
from ._core import Outgoing, where

log = logging.getLogger("toolbind.runtime.http")

# How much of a failed response's body is kept (in ``data`` and, shorter, in ``error``).
_ERROR_BODY_CHARS = 4000
_ERROR_SNIPPET_CHARS = 300


def _media(headers: httpx.Headers) -> str:
    return _base_media(headers.get("content-type", ""))


def _base_media(media: str) -> str:
    """A media type without its parameters, lower-case (``text/plain; charset=utf-8`` →
    ``text/plain``)."""
    return media.split(";")[0].strip().lower()


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _is_text(media: str) -> bool:
    return (
        media.startswith("text/")
        or media.endswith("+xml")
        or media
        in ("application/xml", "application/javascript", "application/x-www-form-urlencoded")
    )


def _utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _reads_as(declared: str, media: str, body: bytes) -> bool:
    """Whether a body sent as ``media`` is read as the ``declared`` media type (the one the
    Output model describes): JSON as declared text (JSON is text), text that parses as JSON as
    declared JSON; never a stream (read as its values), binary content or a wildcard. A JSON
    string is read as it arrived: declared as text, its text is the string (``"1.0.0"`` is
    ``1.0.0``, never the quotes with it)."""
    if "*" in declared or media in _STREAM_MEDIA or declared in _STREAM_MEDIA or not _utf8(body):
        return False
    if _is_text(declared):
        return _is_json(media) and not _is_json_string(body)
    if not (_is_json(declared) and _is_text(media)):
        return False
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _is_json_string(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), str)
    except ValueError:
        return False


def _text(response: httpx.Response, body: bytes) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def read_result(
    out: Outgoing,
    url: httpx.URL,
    response: httpx.Response,
    body: bytes,
    output_model: type[BaseModel] | None,
    meta: dict[str, Any],
    redact: Redactor,
) -> ToolResult[Any]:
    """A response (its ``body`` read) as the ToolResult: a failed status, or the body read as
    its media type (or the one the operation declares) and typed by the Output model."""
    status = response.status_code
    prefix = f"{out.label}: " if out.label else ""
    # ``data`` is what the API sent, unscrubbed (the Agent scrubs what it sends the model);
    # messages, which reach logs and exceptions, are scrubbed
    # 304 Not Modified answers the caller's own conditional request (If-None-Match,
    # If-Modified-Since): a success with no data, as 204 is
    if not 200 <= status < 300 and status != 304:
        return _failed_status(out, url, response, body, meta, redact)
    media = _media_read_as(out, url, response, body, meta)
    if not body:
        value: Any = None
    elif media in _STREAM_MEDIA:
        value = _stream_values(media, _text(response, body))
        meta["stream"] = "event-stream" if media == "text/event-stream" else "json-lines"
        if out.output_media is not None and out.output_media not in _STREAM_MEDIA:
            # the Output model describes the operation's single answer (its JSON content),
            # not a stream of values (an API streams when the call asks it to): the values
            # as the API sent them, never a failed output check
            return ToolResult[Any].ok(value, **meta)
    elif _is_json(media) and not out.output_binary:
        text = _text(response, body)
        try:
            value = json.loads(text)
        except ValueError:
            # an API that streams JSON lines under application/json: the values, in order
            lines = _json_lines(text)
            if lines is not None:
                value = lines
                meta["stream"] = "json-lines"
                return typed(out, url, value, output_model, meta, prefix)
            meta["error_type"] = "invalid_response"
            return ToolResult[Any].fail(
                f"{prefix}{redact(where(out, url))} returned invalid JSON",
                data=_text(response, body)[:_ERROR_BODY_CHARS],
                **meta,
            )
    elif _is_text(media) or not media:
        value = _text(response, body)
    else:
        # binary: its media type goes with it, so an MCP server answers an image as an image
        # (toolbind serve), not as the base64 text of one
        meta["media_type"] = media
        if output_model is None:
            return ToolResult[Any].ok(body, **meta)  # bytes
        with contextlib.suppress(ValidationError):
            return ToolResult[Any].ok(output_model.model_validate(body), **meta)
        # A generated Output holds binary content as JSON does: a base64 string.
        value = base64.b64encode(body).decode("ascii")
    return typed(out, url, value, output_model, meta, prefix)


def _failed_status(
    out: Outgoing,
    url: httpx.URL,
    response: httpx.Response,
    body: bytes,
    meta: dict[str, Any],
    redact: Redactor,
) -> ToolResult[Any]:
    """A response of a failed status: its body (JSON when it is, within a bound) as the data, a
    scrubbed snippet of it in the message."""
    media = _media(response.headers)
    status = response.status_code
    prefix = f"{out.label}: " if out.label else ""
    text = _text(response, body)
    data: Any = text[:_ERROR_BODY_CHARS]
    if _is_json(media) and len(text) <= _ERROR_BODY_CHARS:
        with contextlib.suppress(ValueError):
            data = json.loads(text)
    snippet = redact(" ".join(text[:_ERROR_SNIPPET_CHARS].split()))
    reason = response.reason_phrase
    message = f"{prefix}HTTP {status} {reason} from {where(out, url)}"
    if snippet:
        message += f": {snippet}"
    meta["error_type"] = "http_status"
    log.info("%s", message)
    return ToolResult[Any].fail(message, data=data, **meta)


def _media_read_as(
    out: Outgoing, url: httpx.URL, response: httpx.Response, body: bytes, meta: dict[str, Any]
) -> str:
    """The media type a successful response's body is read as: its own, or the operation's."""
    media = _media(response.headers)
    prefix = f"{out.label}: " if out.label else ""
    if body and not media:
        # no Content-Type (a store that keeps none, a bare ``send_file``): the media type
        # the operation declares; else text when the bytes are UTF-8, else binary (base64)
        # — never a lossy decode, which turned every image into U+FFFDs and said success
        declared = out.output_media
        if declared and "*" not in declared:
            media = declared
        elif not _utf8(body):
            media = "application/octet-stream"
    described = _base_media(out.output_media or "")
    declared = {_base_media(m) for m in out.declared_media}
    if body and described and media not in declared and _reads_as(described, media, body):
        # an answer labelled otherwise than the operation declares it (Phoenix's experiment
        # download, declared text/plain, comes as application/json): read as declared, which
        # is what the Output model describes — the JSON text as a string, or text that is
        # JSON as JSON — and said, never a failed output check on the API's own answer
        log.warning(
            "%s%s: the response is %s where the operation declares %s: read as %s",
            *(prefix, where(out, url), media, described, described),
        )
        meta["read_as"] = described
        media = described
    return media


def typed(
    out: Outgoing,
    url: httpx.URL,
    value: Any,
    output_model: type[BaseModel] | None,
    meta: dict[str, Any],
    prefix: str,
) -> ToolResult[Any]:
    """``value`` validated by the Output model (a failed result naming what does not fit)."""
    if output_model is not None and value is None:
        # No content: typed when the Output says so (``null``), else plain None.
        with contextlib.suppress(ValidationError):
            value = output_model.model_validate(None)
    elif output_model is not None:
        try:
            value = output_model.model_validate(value)
        except ValidationError as exc:
            lenient = _without_undeclared_nulls(value, exc)
            if lenient is not None:
                kept, dropped = lenient
                log.warning(
                    "%s%s: the response has null where %s does not allow it: %s",
                    prefix,
                    where(out, url),
                    output_model.__name__,
                    ", ".join(dropped),
                )
                meta["nulls"] = dropped
                try:  # read as absent, typed
                    return ToolResult[Any].ok(output_model.model_validate(kept), **meta)
                except ValidationError:  # (a required member: the data as the API sent it)
                    return ToolResult[Any].ok(value, **meta)
            undeclared = _undeclared_members(value, exc)
            if undeclared is not None:
                extras, nulls = undeclared
                log.warning(
                    "%s%s: the response has members %s does not declare: %s; the data is as "
                    "the API sent it",
                    prefix,
                    where(out, url),
                    output_model.__name__,
                    ", ".join(extras),
                )
                meta["extras"] = extras
                if nulls:
                    meta["nulls"] = nulls
                return ToolResult[Any].ok(value, **meta)
            meta["error_type"] = "invalid_output"
            problems = "; ".join(
                f"{'/'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            # (said first: the call went through, and whoever reads this must not repeat it)
            status = meta.get("status")
            return ToolResult[Any].fail(
                f"{prefix}{where(out, url)} answered HTTP {status} (the call went "
                f"through), but its response does not match {output_model.__name__}: "
                f"{problems}; the data is as the API sent it",
                data=value,
                **meta,
            )
    return ToolResult[Any].ok(value, **meta)


def _without_undeclared_nulls(value: Any, exc: ValidationError) -> tuple[Any, list[str]] | None:
    """``value`` without the object members whose ``null`` the Output model refused, and their
    paths; None when some refusal is of anything else (or of a null that is no member).

    Servers send ``null`` for members that their spec types as a plain string, as pydantic 1
    (older FastAPI) writes ``Optional[str]`` and as Swagger 2.0 has no ``nullable``: LNbits and
    Jupyter Server answer so on most calls (Jupyter's spec requires ``content`` and says in
    words that it may be null). Such a call went through, and saying it failed invites a model
    to repeat it: ``_typed`` reads the optional members as absent (the typed Output), or, where
    a required member is null, gives the data as the API sent it — either way a success whose
    ``metadata["nulls"]`` lists the paths, with a warning logged. Any other mismatch is still a
    failed output check. The raw value is left as it is (a copy is made).
    """
    copy = json.loads(json.dumps(value))  # (JSON values: from a JSON body)
    targets: dict[str, tuple[dict[str, Any], str]] = {}  # path → (object, member)
    for err in exc.errors():
        if err.get("input", ...) is not None:
            return None
        # the loc names union branches beside keys and indexes: follow what the value has
        node: Any = copy
        owner: dict[str, Any] | None = None
        member = ""
        path: list[str] = []
        for part in err["loc"]:
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                owner, member = cast("dict[str, Any]", node), part
                node = owner[part]
            elif isinstance(node, list) and isinstance(part, int):
                items = cast("list[Any]", node)
                if not 0 <= part < len(items):
                    return None
                owner, node = None, items[part]
            else:
                continue
            path.append(str(part))
        if owner is None or node is not None:
            return None  # (a null that is no object member: an item, the whole value)
        targets["/".join(path)] = (owner, member)
    for owner, member in targets.values():
        del owner[member]
    return (copy, sorted(targets)) if targets else None


def _undeclared_members(value: Any, exc: ValidationError) -> tuple[list[str], list[str]] | None:
    """The paths of the members a closed object of the Output model does not declare, and of
    the nulls it refused; None when any refusal is of something else.

    A server adds members to what it sends where its spec closed the object
    (``additionalProperties: false``; Superset's Flask-AppBuilder writes one component for a
    request body and the answer, which carries more): the call went through, and its answer
    holds everything the Output describes — so a success, with the data as the API sent it
    (no member dropped), ``metadata["extras"]`` listing the paths and a warning logged, as a
    required ``null`` is. Any other mismatch is still a failed output check.
    """
    extras: list[str] = []
    nulls: list[str] = []
    for err in exc.errors():
        if err["type"] == "extra_forbidden":
            where = extras
        elif err.get("input", ...) is None:
            where = nulls
        else:
            return None
        node: Any = value
        path: list[str] = []
        for part in err["loc"]:  # (the loc names union branches too: follow what the value has)
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                node = cast("dict[str, Any]", node)[part]
            elif isinstance(node, list) and isinstance(part, int):
                node = cast("list[Any]", node)[part]
            else:
                continue
            path.append(str(part))
        where.append("/".join(path))
    return (sorted(set(extras)), sorted(set(nulls))) if extras else None


_STREAM_MEDIA = frozenset(
    {"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
     "application/json-seq", "text/event-stream"}
)  # fmt: skip


def _json_lines(text: str) -> list[Any] | None:
    """The values of ``text`` read as JSON lines (NDJSON, RFC 7464's record separators too);
    None unless every non-empty line is one JSON value and there are at least two."""
    values: list[Any] = []
    for line in text.replace("\x1e", "\n").splitlines():
        if line.strip():
            try:
                values.append(json.loads(line))
            except ValueError:
                return None
    return values if len(values) > 1 else None


def _stream_values(media: str, text: str) -> list[Any]:
    """A streamed response (read whole, within the size bound) as the list of its values: JSON
    lines, or a server-sent event stream's ``data`` (JSON where it parses, else the text)."""
    if media != "text/event-stream":
        return _json_lines(text) or [json.loads(line) for line in text.splitlines() if line.strip()]
    values: list[Any] = []
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line:  # an event ends at a blank line
            if data:
                joined = "\n".join(data)
                try:
                    values.append(json.loads(joined))
                except ValueError:
                    values.append(joined)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return values
