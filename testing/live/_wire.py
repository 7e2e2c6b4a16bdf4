"""Testing layer, live checks: what went over the wire, recorded and shown. Imports httpx only.

``Recorder`` wraps the transport the generated HTTP Activity's client sends through: every
exchange (the request as sent, the raw answer) is kept for the checks and the report, and each
is bounded — a server that drips bytes past the deadline or sends more than the cap is cut
off, so a check fails at a known time instead of hanging.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import httpx

MASK = "***"
# Headers that carry credentials whatever the spec calls its schemes.
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One request as sent and the answer as received (body decoded, at most the cap)."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    status: int
    headers: httpx.Headers
    body: bytes
    truncated: bool = False

    @property
    def media_type(self) -> str:
        """The answer's content type without parameters, lower-case ('' when absent)."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def excerpt(self, limit: int = 200) -> str:
        """The start of the answer's body as text (bytes shown escaped)."""
        text = self.body[:limit].decode("utf-8", "backslashreplace")
        return text + ("…" if len(self.body) > limit or self.truncated else "")


def _decoded(status: int, headers: httpx.Headers, raw: bytes) -> bytes:
    try:
        return httpx.Response(status, headers=headers, content=raw).read()
    except httpx.DecodingError:  # (the raw bytes are still what a developer wants to see)
        return raw


class Recorder(httpx.BaseTransport):
    """An httpx transport that records every exchange and bounds each one.

    Args:
        inner: the transport that does the I/O.
        deadline: seconds one exchange may take in all (headers and the whole body).
        max_bytes: the most of a body read; the rest is dropped and the exchange marked.
    """

    def __init__(self, inner: httpx.BaseTransport, *, deadline: float, max_bytes: int) -> None:
        self._inner = inner
        self._deadline = deadline
        self._max_bytes = max_bytes
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``, read the answer within the bounds, record both."""
        started = time.monotonic()
        body = request.read()
        response = self._inner.handle_request(request)
        chunks: list[bytes] = []
        size, truncated = 0, False
        try:
            stream = cast("Iterable[bytes]", response.stream)
            for chunk in stream:
                if time.monotonic() - started > self._deadline:
                    raise httpx.ReadTimeout(
                        f"the answer took over {self._deadline:g}s", request=request
                    )
                chunks.append(chunk)
                size += len(chunk)
                if size > self._max_bytes:
                    truncated = True
                    break
        finally:
            response.close()
        raw = b"".join(chunks)
        self.exchanges.append(
            Exchange(
                method=request.method,
                url=str(request.url),
                request_headers=tuple(request.headers.items()),
                request_body=body,
                status=response.status_code,
                headers=response.headers,
                body=_decoded(response.status_code, response.headers, raw),
                truncated=truncated,
            )
        )
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=httpx.ByteStream(raw),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        """Close the inner transport."""
        self._inner.close()


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for secret in sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def curl(
    exchange: Exchange, *, secrets: Iterable[str] = (), secret_headers: Iterable[str] = ()
) -> str:
    """The request of ``exchange`` as a ``curl`` command line, credentials shown as ``***``."""
    hidden = _SECRET_HEADERS | {h.lower() for h in secret_headers}
    values = list(secrets)
    parts = ["curl", "-X", exchange.method]
    for name, value in exchange.request_headers:
        lowered = name.lower()
        if lowered in ("host", "content-length", "accept-encoding", "connection"):
            continue  # curl writes these itself
        shown = MASK if lowered in hidden else value
        parts += ["-H", f"{name}: {shown}"]
    if exchange.request_body:
        parts += ["--data-binary", exchange.request_body.decode("utf-8", "backslashreplace")]
    parts.append(exchange.url)
    return mask(" ".join(shlex.quote(p) for p in parts), values)
