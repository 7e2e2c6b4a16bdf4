"""Runtime layer: JSON Schema ``format`` assertions (opt-in). Standard library + ``_ecma``.

Draft 2020-12 makes ``format`` an annotation by default; models compiled with format assertion
on (``model_from_schema(..., format_assertion=True)``) check the formats below, each by its RFC
grammar. An unknown format is never asserted (the spec says it must be ignored).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import date

from ._ecma import compile_pattern

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))\Z", re.ASCII)
_DURATION = re.compile(
    r"P(?:(?:\d+Y(?:\d+M(?:\d+D)?)?|\d+M(?:\d+D)?|\d+D)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S))?"
    r"|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)|\d+W)\Z",
    re.ASCII,
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z", re.ASCII)
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*\Z")
_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*\Z")
_RELATIVE_POINTER = re.compile(r"(0|[1-9][0-9]*)(#|(/([^~/]|~[01])*)*)\Z", re.ASCII)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`\x00-\x1f\x7f]*\Z")
_URI_REFERENCE = re.compile(r"[^\s<>\"{}|\\^`\x00-\x1f\x7f]*\Z")


def _date(value: str) -> bool:
    m = _DATE.match(value)
    if m is None:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _time(value: str) -> bool:
    m = _TIME.match(value)
    if m is None:
        return False
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if m[6] is not None and (int(m[7]) > 23 or int(m[8]) > 59):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if second == 60:  # a leap second exists only at 23:59:60 UTC
        offset = 0 if m[6] is None else (int(m[7]) * 60 + int(m[8])) * (1 if m[6] == "+" else -1)
        utc = (hour * 60 + minute - offset) % (24 * 60)
        return utc == 23 * 60 + 59
    return True


def _date_time(value: str) -> bool:
    head, sep, tail = value.partition("T") if "T" in value else value.partition("t")
    return bool(sep) and _date(head) and _time(tail)


def _hostname(value: str) -> bool:
    name = value[:-1] if value.endswith(".") else value
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def _email(value: str) -> bool:
    local, at, domain = value.rpartition("@")
    if not at or not local or len(local) > 64 or not _LOCAL.match(local):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        inner = domain[1:-1]
        return _ipv6(inner[5:]) if inner.lower().startswith("ipv6:") else _ipv4(inner)
    return _hostname(domain)


def _ipv4(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return value.isascii()


def _ipv6(value: str) -> bool:
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return value.isascii() and "%" not in value


def _regex(value: str) -> bool:
    import regex  # imported by compile_pattern already

    try:
        compile_pattern(value)
    except regex.error:
        return False
    return True


def _matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda value: pattern.match(value) is not None


FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _date,
    "time": _time,
    "date-time": _date_time,
    "duration": _matches(_DURATION),
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "uuid": _matches(_UUID),
    "regex": _regex,
    "json-pointer": _matches(_JSON_POINTER),
    "relative-json-pointer": _matches(_RELATIVE_POINTER),
    "uri": lambda v: v.isascii() and _URI.match(v) is not None,
    "uri-reference": lambda v: v.isascii() and _URI_REFERENCE.match(v) is not None,
}
"""The formats asserted in assertion mode, by name."""
