"""Runtime layer (HTTP): OpenAPI 3 parameter serialisation (style/explode) — pure functions. Stdlib only.

Every value an LLM filled is percent-encoded for the place it lands, so it can only ever be data:
a path value cannot add a segment (``/``), start a query (``?``) or fragment (``#``), or be a dot
segment; a query value cannot add a parameter (``&``, ``=``); a cookie value cannot add a cookie
(``;``); a header value with CR/LF (or another control character) is refused.

Values are JSON values (the Call's ``model_dump(mode="json")``): primitives are written as JSON
writes them (``true``, ``1.5``), arrays and objects per the style table of OpenAPI 3
(https://spec.openapis.org/oas/v3.1.0#style-examples).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote, unquote

from ..contract import IGNORED_HEADERS as IGNORED_HEADERS
from ..contract import HttpParameter
from ..errors import ParameterError

# ``{name}`` in a path template (RFC 6570 level 1, as OpenAPI uses it)
_TEMPLATE = re.compile(r"\{([^{}/]+)\}")
# RFC 3986 reserved characters a query value may keep raw with ``allowReserved``.
_RESERVED = ":/?#[]@!$&'()*+,;="


def primitive(value: Any) -> str:
    """A JSON primitive as text: ``true``/``false``, ``null`` as empty, numbers as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _enc_path(text: str) -> str:
    return quote(text, safe="")


def _enc_query(text: str, allow_reserved: bool) -> str:
    return quote(text, safe=_RESERVED if allow_reserved else "")


def _as_items(value: Any) -> tuple[str, list[Any] | dict[str, Any] | None]:
    if isinstance(value, list):
        return "array", cast("list[Any]", value)
    if isinstance(value, dict):
        return "object", cast("dict[str, Any]", value)
    return "primitive", None


def _content_value(value: Any) -> str:
    # ``content``-typed parameters: serialised with their media type; JSON for every JSON type.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def path_value(param: HttpParameter, value: Any) -> str:
    """The text that replaces ``{name}`` in the path template (already percent-encoded)."""
    if param.content_type is not None:
        return _enc_path(_content_value(value))
    kind, items = _as_items(value)
    name = _enc_path(param.name)
    style = param.style if param.style in ("simple", "label", "matrix") else "simple"
    if kind == "primitive":
        text = _enc_path(primitive(value))
        if style == "label":
            return "." + text
        if style == "matrix":
            return f";{name}" if value is None or text == "" else f";{name}={text}"
        return text
    if kind == "array":
        values = [_enc_path(primitive(v)) for v in cast("list[Any]", items)]
        if style == "label":
            return "." + ("." if param.explode else ",").join(values)
        if style == "matrix":
            if param.explode:
                return "".join(f";{name}={v}" for v in values)
            return f";{name}=" + ",".join(values)
        return ",".join(values)
    obj = cast("dict[str, Any]", items)
    pairs = [(_enc_path(k), _enc_path(primitive(v))) for k, v in obj.items()]
    if param.explode:
        joined = [f"{k}={v}" for k, v in pairs]
        if style == "label":
            return "." + ".".join(joined)
        if style == "matrix":
            return "".join(f";{p}" for p in joined)
        return ",".join(joined)
    flat = ",".join(f"{k},{v}" for k, v in pairs)
    if style == "label":
        return "." + flat
    if style == "matrix":
        return f";{name}={flat}"
    return flat


def has_dot_segment(path: str) -> bool:
    """Whether ``path`` holds a ``.``/``..`` segment — also once or twice percent-decoded, with
    ``\\`` read as ``/``, with a ``;parameter`` after the dots (``..;`` is ``..`` to Tomcat and
    Jetty) and with compatibility characters folded (``．．``, ``‥`` are ``..`` after NFKC, which
    some servers apply) — i.e. whether some server or proxy on the way could read it as a step
    out of the intended path."""
    text = path
    for _ in range(3):
        if any(_is_dots(part) for part in re.split(r"[/\\]", text)):
            return True
        decoded = unquote(text)
        if decoded == text:
            return False
        text = decoded
    return True  # still encoded after three rounds: refuse rather than guess


def _is_dots(segment: str) -> bool:
    for form in (segment, unicodedata.normalize("NFKC", segment)):
        if form.split(";", 1)[0] in (".", ".."):
            return True
    return False


def render_path(template: str, params: Sequence[tuple[HttpParameter, Any]]) -> str:
    """``template`` with every ``{name}`` replaced (percent-encoded), in one pass: a parameter
    replaces only the template expression of its own name; refuses a value that any decoding
    would turn into a ``.``/``..`` segment."""
    values: dict[str, str] = {}
    for param, value in params:
        if value is None:
            raise ParameterError(f"path parameter {param.name!r} is required and cannot be null")
        rendered = path_value(param, value)
        if not rendered or value in ("", [], {}):
            # ``/users/{id}/keys`` with an empty id is ``/users//keys``, which servers read as
            # ``/users/keys``; ``/conversations/{sid}`` with an empty sid is the collection's
            # URL, another operation's (an update sent as a create). The Call model refuses an
            # empty value already; this holds for a Call made without validation.
            shown = json.dumps(value, ensure_ascii=False)
            raise ParameterError(
                f"path parameter {param.name!r} is empty ({shown}): the URL would name another "
                "resource; give a value"
            )
        if has_dot_segment(rendered):
            raise ParameterError(
                f"path parameter {param.name!r}: a value with '.' or '..' segments would change "
                "the path; refused"
            )
        values[param.name] = rendered
    return _TEMPLATE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def query_pairs(param: HttpParameter, value: Any) -> list[str]:
    """``name=value`` strings (already percent-encoded) for one query parameter."""
    allow = param.allow_reserved
    name = _enc_query(param.name, False)
    if param.content_type is not None:
        return [f"{name}={_enc_query(_content_value(value), allow)}"]
    kind, items = _as_items(value)
    if kind == "primitive":
        return [f"{name}={_enc_query(primitive(value), allow)}"]
    style = param.style
    if kind == "array":
        values = [_enc_query(primitive(v), allow) for v in cast("list[Any]", items)]
        if not values:
            return []
        if style == "spaceDelimited" and not param.explode:
            return [f"{name}=" + "%20".join(values)]
        if style == "pipeDelimited" and not param.explode:
            return [f"{name}=" + "|".join(values)]
        if style == "deepObject":
            return [f"{name}%5B%5D={v}" for v in values]
        if param.explode:
            return [f"{name}={v}" for v in values]
        return [f"{name}=" + ",".join(values)]
    obj = cast("dict[str, Any]", items)
    if style == "deepObject":
        return _deep_object(name, obj, allow)
    pairs = [(_enc_query(k, False), _enc_query(primitive(v), allow)) for k, v in obj.items()]
    if style == "spaceDelimited" and not param.explode:
        return [f"{name}=" + "%20".join(f"{k}%20{v}" for k, v in pairs)]
    if style == "pipeDelimited" and not param.explode:
        return [f"{name}=" + "|".join(f"{k}|{v}" for k, v in pairs)]
    if param.explode:
        return [f"{k}={v}" for k, v in pairs]
    return [f"{name}=" + ",".join(f"{k},{v}" for k, v in pairs)]


def _deep_object(prefix: str, obj: Mapping[str, Any], allow: bool) -> list[str]:
    # OpenAPI defines one level (``id[role]=admin``); nested objects extend it the way qs/Rails
    # read it (``id[a][b]=1``), arrays repeat the key.
    out: list[str] = []
    for key, value in obj.items():
        name = f"{prefix}%5B{_enc_query(key, False)}%5D"
        if isinstance(value, dict):
            out.extend(_deep_object(name, cast("dict[str, Any]", value), allow))
        elif isinstance(value, list):
            out.extend(
                f"{name}={_enc_query(primitive(v), allow)}" for v in cast("list[Any]", value)
            )
        else:
            out.append(f"{name}={_enc_query(primitive(value), allow)}")
    return out


def check_header_value(name: str, text: str) -> str:
    """``text`` if it is a safe header value; a ParameterError for CR, LF, NUL or other controls."""
    for char in text:
        if char in "\r\n\0" or (ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F:
            raise ParameterError(
                f"header {name!r}: value contains a control character (CR/LF/NUL); refused"
            )
    return text


def header_value(param: HttpParameter, value: Any) -> str:
    """One header parameter's value (``simple`` style), refused if it holds CR/LF."""
    if param.content_type is not None:
        text = json.dumps(value, separators=(",", ":"))
    else:
        kind, items = _as_items(value)
        if kind == "primitive":
            text = primitive(value)
        elif kind == "array":
            text = ",".join(primitive(v) for v in cast("list[Any]", items))
        else:
            obj = cast("dict[str, Any]", items)
            sep = "=" if param.explode else ","
            text = ",".join(f"{k}{sep}{primitive(v)}" for k, v in obj.items())
    return check_header_value(param.name, text)


def _enc_cookie(text: str) -> str:
    return quote(text, safe="")


def cookie_pairs(param: HttpParameter, value: Any) -> list[str]:
    """``name=value`` cookie strings (values percent-encoded: no ``;``, ``,`` or CR/LF escape)."""
    name = _enc_cookie(param.name)
    if param.content_type is not None:
        return [f"{name}={_enc_cookie(_content_value(value))}"]
    kind, items = _as_items(value)
    if kind == "primitive":
        return [f"{name}={_enc_cookie(primitive(value))}"]
    if kind == "array":
        values = [_enc_cookie(primitive(v)) for v in cast("list[Any]", items)]
        if param.explode:
            return [f"{name}={v}" for v in values]
        return [f"{name}=" + ",".join(values)]
    obj = cast("dict[str, Any]", items)
    pairs = [(_enc_cookie(k), _enc_cookie(primitive(v))) for k, v in obj.items()]
    if param.explode:
        return [f"{k}={v}" for k, v in pairs]
    return [f"{name}=" + ",".join(f"{k},{v}" for k, v in pairs)]
