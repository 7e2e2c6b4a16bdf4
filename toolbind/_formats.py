"""Kernel layer: JSON Schema ``format`` assertions (opt-in). Standard library, ``_ecma`` and
``idna`` (IDNA 2008, imported on first use).

Draft 2020-12 makes ``format`` an annotation by default; models compiled with format assertion
on (``model_from_schema(..., format_assertion=True)``) check the formats below, each by its RFC
grammar: dates and times (RFC 3339), duration (ISO 8601 / RFC 3339 appendix A), email and
idn-email (RFC 5321 / 6531, quoted local parts too), hostname (RFC 1123; an ``xn--`` label must
be an A-label) and idn-hostname (RFC 5890-5893 through ``idna``: code points, context rules,
bidi), ipv4/ipv6, uuid, uri/uri-reference and iri/iri-reference (RFC 3986 / 3987 appendix A,
transcribed; an IP literal is an address), uri-template (RFC 6570, every level), json-pointer
and relative-json-pointer, regex (ECMA-262, the reading ``pattern`` uses). An unknown format is
never asserted (the spec says it must be ignored).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
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
_QUOTED_LOCAL = re.compile(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"\Z')


class _Lazy:
    """A pattern compiled on its first match: the wide Unicode classes below cost tens of
    milliseconds to compile, paid by every import of the runtime (the CLI's included)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self.compiled: re.Pattern[str] | None = None

    def match(self, value: str) -> re.Match[str] | None:
        if self.compiled is None:
            self.compiled = re.compile(self.source, self.flags)
        return self.compiled.match(value)


_IDN_QUOTED_LOCAL = _Lazy(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e\x80-\U0010ffff]|\\[\x20-\x7e])*"\Z')
_IDN_LOCAL = _Lazy(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x80-\U0010ffff-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x80-\U0010ffff-]+)*\Z"
)
_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*\Z")
_RELATIVE_POINTER = re.compile(r"(0|[1-9][0-9]*)(#|(/([^~/]|~[01])*)*)\Z", re.ASCII)


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


_SEPARATORS = re.compile("[.\u3002\uff0e\uff61]")


def _a_label(label: str) -> bool:
    """An ``xn--`` label decodes to a valid U-label (IDNA 2008: code points, context, bidi)."""
    import idna

    try:
        return idna.alabel(idna.ulabel(label)).decode("ascii") == label.lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


def _ldh(label: str, *, idn: bool = False) -> bool:
    """An RFC 1123 label; an ``xn--`` label must be an A-label; in an IDN (``idn``) "--" in the
    third and fourth positions is reserved for A-labels (RFC 5891 4.2.3.1)."""
    if not _LABEL.match(label):
        return False
    if label[:4].lower() == "xn--":
        return _a_label(label)
    return not (idn and label[2:4] == "--")


def _hostname(value: str) -> bool:
    return 0 < len(value) <= 253 and all(_ldh(label) for label in value.split("."))


def _idn_hostname(value: str) -> bool:
    import idna

    if not value:
        return False
    labels = _SEPARATORS.split(value)
    ascii_labels: list[str] = []
    for label in labels:
        if label.isascii():
            if not _ldh(label, idn=True):
                return False
            ascii_labels.append(label)
            continue
        try:
            ascii_labels.append(idna.alabel(label).decode("ascii"))
        except (idna.IDNAError, UnicodeError, ValueError):
            return False
    if any(_rtl(label) for label in labels):  # a bidi domain name: every label obeys RFC 5893
        try:
            for label in labels:
                idna.check_bidi(label, check_ltr=True)
        except idna.IDNAError:
            return False
    return len(".".join(ascii_labels)) <= 253


def _rtl(label: str) -> bool:
    return any(unicodedata.bidirectional(c) in ("R", "AL", "AN") for c in label)


def _email(value: str, *, idn: bool = False) -> bool:
    """RFC 5321's Mailbox (``idn``: RFC 6531's, UTF-8 in the local part and an IDN domain)."""
    local, at, domain = value.rpartition("@")
    if not at or not local or len(local) > 64:
        return False
    if not (_QUOTED_LOCAL if not idn else _IDN_QUOTED_LOCAL).match(local) and not (
        _IDN_LOCAL if idn else _LOCAL
    ).match(local):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        inner = domain[1:-1]
        return _ipv6(inner[5:]) if inner.lower().startswith("ipv6:") else _ipv4(inner)
    return _idn_hostname(unicodedata.normalize("NFC", domain)) if idn else _hostname(domain)


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


@functools.cache  # compiled on first use: the IRI classes cost ~0.1 s, paid by every import
def _uri_grammar(iri: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(absolute, reference) patterns of RFC 3986's ``URI`` / ``URI-reference``, or with ``iri``
    RFC 3987's ``IRI`` / ``IRI-reference`` (``ucschar`` in every component, ``iprivate`` in the
    query). An IP literal is checked again by ``ipaddress`` (``_authority_ok``)."""
    ucschar = (
        "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0001fffd\U00020000-\U0002fffd"
        "\U00030000-\U0003fffd\U00040000-\U0004fffd\U00050000-\U0005fffd\U00060000-\U0006fffd"
        "\U00070000-\U0007fffd\U00080000-\U0008fffd\U00090000-\U0009fffd\U000a0000-\U000afffd"
        "\U000b0000-\U000bfffd\U000c0000-\U000cfffd\U000d0000-\U000dfffd\U000e1000-\U000efffd"
    )
    iprivate = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
    unreserved = "A-Za-z0-9\\-._~" + (ucschar if iri else "")
    sub_delims = "!$&'()*+,;="
    pct = "%[0-9A-Fa-f]{2}"
    pchar = f"(?:[{unreserved}{sub_delims}:@]|{pct})"
    segment = f"{pchar}*"
    segment_nz = f"{pchar}+"
    segment_nz_nc = f"(?:[{unreserved}{sub_delims}@]|{pct})+"
    userinfo = f"(?:[{unreserved}{sub_delims}:]|{pct})*"
    ip_literal = f"\\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\\.[{unreserved}{sub_delims}:]+)\\]"
    reg_name = f"(?:[{unreserved}{sub_delims}]|{pct})*"
    authority = f"(?:{userinfo}@)?(?:{ip_literal}|{reg_name})(?::[0-9]*)?"
    path_abempty = f"(?:/{segment})*"
    path_absolute = f"/(?:{segment_nz}(?:/{segment})*)?"
    path_rootless = f"{segment_nz}(?:/{segment})*"
    path_noscheme = f"{segment_nz_nc}(?:/{segment})*"
    query_chars = f"(?:[{unreserved}{sub_delims}:@/?{iprivate if iri else ''}]|{pct})*"
    fragment = f"(?:[{unreserved}{sub_delims}:@/?]|{pct})*"
    tail = f"(?:\\?{query_chars})?(?:#{fragment})?"
    scheme = "[A-Za-z][A-Za-z0-9+\\-.]*"
    hier = f"(?://{authority}{path_abempty}|{path_absolute}|{path_rootless}|)"
    relative = f"(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme}|)"
    absolute = re.compile(f"{scheme}:{hier}{tail}\\Z")
    reference = re.compile(f"(?:{scheme}:{hier}|{relative}){tail}\\Z")
    return absolute, reference


_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+\-.]*:)?//([^/?#]*)")


def _authority_ok(value: str) -> bool:
    """An IP literal in the authority (``[...]``) is an IPv6 address or an IPvFuture."""
    m = _AUTHORITY.match(value)
    host = m[1].rpartition("@")[2] if m is not None else ""
    if not host.startswith("["):
        return True
    inner = host[1 : host.find("]")]
    return inner[:1] in ("v", "V") or _ipv6(inner)


def _grammar(*, iri: bool, reference: bool) -> Callable[[str], bool]:
    return lambda value: (
        _uri_grammar(iri)[reference].match(value) is not None and _authority_ok(value)
    )


# --- URI templates: RFC 6570 section 2, every level ----------------------------------------------

_VARNAME = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
_VARSPEC = f"{_VARNAME}(?::[1-9][0-9]{{0,3}}|\\*)?"
_URI_TEMPLATE = _Lazy(
    "(?:[\\x21\\x23-\\x24\\x26-\\x27\\x28-\\x3b\\x3d\\x3f-\\x5b\\x5d\\x5f\\x61-\\x7a\\x7e"
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0010fffd]|%[0-9A-Fa-f]{2}"
    f"|\\{{[+#./;?&=,!@|]?{_VARSPEC}(?:,{_VARSPEC})*\\}})*\\Z"
)


def _matches(pattern: re.Pattern[str] | _Lazy) -> Callable[[str], bool]:
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
    "uri": _grammar(iri=False, reference=False),
    "uri-reference": _grammar(iri=False, reference=True),
    "iri": _grammar(iri=True, reference=False),
    "iri-reference": _grammar(iri=True, reference=True),
    "idn-hostname": _idn_hostname,
    "idn-email": lambda v: _email(v, idn=True),
    "uri-template": _matches(_URI_TEMPLATE),
}
"""The formats asserted in assertion mode, by name."""
