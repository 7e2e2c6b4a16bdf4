"""Runtime layer (HTTP; imports httpx, the runtime's ``_result``, ``contract`` and ``errors``, and the
package's ``_auth``): what an exchange is made of — the retry policy, the outgoing request, the
authenticator, the I/O actions, URL and header helpers and the request as built for httpx.

Shared by ``HttpClient`` (OpenAPI operations), ``GenericHttpTool`` and ``HttpExecution`` (gateway
configs), through ``Exchange`` (``_exchange``), which sends one prepared request, and
``_reading``, which reads its response into the ToolResult.

Invariants: only URLs under the configured servers are requested (redirects included); secrets
are scrubbed from every error, metadata value, log line and JSON/text response body (an API that
echoes a credential does not hand it to the model); every wait is bounded (timeouts,
``Retry-After`` capped, a bounded number of attempts and redirects); a response body is read
up to ``max_response_bytes`` and no further.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from httpx._decoders import SUPPORTED_DECODERS

from .._result import ToolResult
from ..contract import SecurityRequirement
from ..errors import ResponseTooLarge
from ._auth import (
    AuthParts,
    Credential,
    Redactor,
    TokenCache,
    TokenError,
    static_parts,
    token_key,
)

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """When and how long to retry.

    Attributes:
        max_attempts: total attempts including the first (1 = never retry).
        backoff: the first delay in seconds; doubled on each further retry.
        max_backoff: the longest computed backoff delay.
        max_retry_after: the longest a server's ``Retry-After`` is honoured (longer values wait
            this long).
        statuses: response statuses that are retried.
        retry_non_idempotent: also retry POST/PATCH after a retryable status or a failure after
            the request was sent — a timeout, a connection that broke before the answer, an
            answer cut mid-body (sent again once) — (connection failures before sending are
            always retried; those after it, for idempotent methods and operations that take an
            ``Idempotency-Key``).
    """

    max_attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0
    statuses: frozenset[int] = frozenset({429, 502, 503, 504})
    retry_non_idempotent: bool = False

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(
                f"RetryPolicy.max_attempts must be at least 1, got {self.max_attempts}"
            )
        for name in ("backoff", "max_backoff", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"RetryPolicy.{name} must not be negative")


@dataclass(slots=True)
class Outgoing:
    """One request before authentication: the URL holds no secret."""

    method: str
    url: httpx.URL
    headers: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    cookies: list[str] = field(default_factory=list[str])
    content: bytes | None = None
    label: str = ""  # the tool's name, for messages
    # the operation says a repeat is safe (it takes an ``Idempotency-Key``, which this request
    # carries): a POST/PATCH is retried like a GET
    idempotent: bool = False
    # the content type the Output model describes (None: unknown, the model applies to any)
    output_media: str | None = None
    # the Output is the content itself (a ``format: binary`` string): JSON is not parsed
    output_binary: bool = False
    # the response headers the operation declares (lower-case): reported in the metadata
    declared_headers: frozenset[str] = frozenset()
    # the media types its responses declare (an answer of another one is read as output_media)
    declared_media: frozenset[str] = frozenset()


class Authenticator:
    """Applies one chosen security requirement; fetches OAuth2 tokens through the exchange."""

    def __init__(
        self,
        requirement: Sequence[SecurityRequirement],
        credentials: Mapping[str, Credential],
        tokens: TokenCache,
    ) -> None:
        self._requirement = tuple(requirement)
        self._credentials = credentials
        self._tokens = tokens
        self._oauth = [
            (req, credentials[req.scheme])
            for req in self._requirement
            if credentials[req.scheme].scheme.type == "oauth2"
            and credentials[req.scheme].secret is None
            and not credentials[req.scheme].none
        ]

    @property
    def refreshable(self) -> bool:
        """Whether a 401 may be cured by fetching new tokens."""
        return bool(self._oauth)

    def invalidate(self) -> None:
        self._tokens.invalidate([token_key(cred, req) for req, cred in self._oauth])

    def parts(self) -> Generator[Action, Any, AuthParts]:
        tokens: dict[str, str] = {}
        for req, cred in self._oauth:
            key = token_key(cred, req)
            value = self._tokens.get(key)
            if value is None:
                try:
                    response = yield Action("token", self._tokens.token_request(cred, key[1]))
                except httpx.HTTPError as exc:
                    raise TokenError(
                        f"oauth2 token request for scheme {req.scheme!r} failed: "
                        f"{type(exc).__name__}"
                    ) from None
                except ResponseTooLarge:
                    raise TokenError(
                        f"oauth2 token response for scheme {req.scheme!r} is too large; not read"
                    ) from None
                value = self._tokens.store(key, cast("httpx.Response", response), scheme=req.scheme)
            tokens[req.scheme] = value
        return static_parts(self._requirement, self._credentials, tokens)


@dataclass(frozen=True, slots=True)
class Action:
    """One I/O step the drivers perform: ``send``/``token`` a request, ``read``/``close`` a
    response, ``sleep`` seconds."""

    kind: str
    arg: Any


def base_of(url: httpx.URL) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path prefix) of a server URL; what 'under this server' means."""
    return (url.scheme, url.host, url.port, url.path.rstrip("/"))


def is_under(url: httpx.URL, bases: Iterable[tuple[str, str, int | None, str]]) -> bool:
    """Whether ``url`` lies under one of ``bases`` (same scheme, host and port; path prefix)."""
    for scheme, host, port, prefix in bases:
        if (url.scheme, url.host, url.port) != (scheme, host, port):
            continue
        if not prefix or url.path == prefix or url.path.startswith(prefix + "/"):
            return True
    return False


def origin(url: httpx.URL) -> str:
    """``scheme://host[:port]`` — how a URL is named in messages (no path, query or userinfo)."""
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}"


def shown(url: httpx.URL) -> str:
    """``scheme://host[:port]/path`` as sent — how a request is named in messages and metadata.

    The path stays percent-encoded: decoded, a path parameter ``a b/c?d`` read as two segments
    and a query (``/search/a b/c?d``) where ``/search/a%20b%2Fc%3Fd`` went out. Never the query,
    which may carry an API key.
    """
    return origin(url) + url.raw_path.split(b"?", 1)[0].decode("ascii")


def where(out: Outgoing, url: httpx.URL) -> str:
    """``METHOD scheme://host[:port]/path``: how a request is named in messages."""
    return f"{out.method} {shown(url)}"


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header (delta-seconds or HTTP-date) as seconds from now, or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_SELECTED = ("content-type", "etag", "location", "retry-after", "traceparent")
_SELECTED_PARTS = ("request-id", "requestid", "correlation-id", "trace-id", "ratelimit")


def selected_headers(
    headers: httpx.Headers, redact: Redactor, declared: Collection[str] = ()
) -> dict[str, str]:
    """The response headers worth reporting: content type, request ids, rate limits, retry,
    and those the operation's spec declares (``declared``, lower-case; never ``Set-Cookie``)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if (
            lower in _SELECTED
            or any(part in lower for part in _SELECTED_PARTS)
            or (lower in declared and lower != "set-cookie")
        ):
            out[lower] = redact(value)
    return out


def unsent(
    message: str, kind: str, *, method: str | None = None, url: str | None = None
) -> ToolResult[Any]:
    """A failure before anything was sent (invalid input, a refused URL): the same metadata keys
    as every other result — ``status`` None, no headers, no attempt — and its ``error_type``."""
    return ToolResult[Any].fail(
        message,
        status=None,
        method=method,
        url=url,
        headers={},
        attempts=0,
        retries=[],
        redirects=0,
        error_type=kind,
    )


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"toolbind/{version('toolbind')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "toolbind"


USER_AGENT = _user_agent()
"""Sent on every request unless the configuration's ``headers=`` names another."""
ACCEPT_ENCODING = ", ".join(k for k in SUPPORTED_DECODERS if k != "identity")
"""Every content coding httpx decodes here: gzip, deflate, br (brotli), zstd (zstandard)."""


def with_defaults(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` with the default ``User-Agent`` and ``Accept-Encoding`` where not given."""
    names = {k.lower() for k, _ in headers}
    out = list(headers)
    if "user-agent" not in names:
        out.append(("User-Agent", USER_AGENT))
    if "accept-encoding" not in names:
        out.append(("Accept-Encoding", ACCEPT_ENCODING))
    return out


def build(
    method: str,
    url: httpx.URL,
    headers: Sequence[tuple[str, str]],
    cookies: Sequence[str],
    content: bytes | None,
    parts: AuthParts,
) -> httpx.Request:
    """The request as sent: the auth parts' query, headers and cookies merged in."""
    from urllib.parse import quote

    final = url
    if parts.query:
        extra = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in parts.query)
        query = url.query.decode("ascii")
        final = url.copy_with(query=(f"{query}&{extra}" if query else extra).encode("ascii"))
    merged: list[tuple[str, str]] = [
        (k, v) for k, v in headers if k.lower() not in {n.lower() for n in parts.headers}
    ]
    merged.extend(parts.headers.items())
    cookie_list = list(cookies) + [
        f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in parts.cookies
    ]
    if cookie_list:
        # a configured ``Cookie`` header (HttpClient(headers=...): a session the spec's
        # ``Cookie`` header parameter asks for) is kept, but for the names the Call or a scheme
        # sends itself
        named = {c.split("=", 1)[0].strip() for c in cookie_list}
        configured = [
            pair.strip()
            for k, v in merged
            if k.lower() == "cookie"
            for pair in v.split(";")
            if pair.strip() and pair.split("=", 1)[0].strip() not in named
        ]
        merged = [(k, v) for k, v in merged if k.lower() != "cookie"]
        merged.append(("Cookie", "; ".join([*configured, *cookie_list])))
    encoded = [(k.encode("ascii"), v.encode("utf-8")) for k, v in merged]
    return httpx.Request(method, final, headers=encoded, content=content)
