"""Runtime layer: secrets — ``Secret`` values and the ``Redactor``s that scrub them. Standard library only.

A configured secret (a credential, a ``headers=`` value, an ``${env.NAME}`` value, an OAuth2 token)
is held in a ``Secret`` whose ``repr``/``str`` never show it, and registered with a ``Redactor``.
Scrubbing applies where secrets must never appear: the text the Agent sends the model
(``scrub_everywhere``), log records of the client libraries, exception messages and reprs
(``ToolResult``'s included). Never to the data an API returned, which the caller receives and the
Output model validates exactly as sent. Rules (SECURITY.md): a secret is replaced by ``***`` as a
whole value, never inside a longer word; ``Bearer <token>`` also registers the token; a value
shorter than ``MIN_SECRET_CHARS`` is not taken as a secret.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref


class Secret:
    """A configured secret; its ``repr``/``str`` never show the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret's value, for the one place that writes it on the wire."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


# A value shorter than this is not taken as a secret (it is not scrubbed anywhere): scrubbing
# ``json`` or ``Host`` would rewrite ordinary text, and no real credential is that short.
MIN_SECRET_CHARS = 8
# What may stand right before or after a scrubbed value: a secret is replaced as a whole value,
# never inside a longer word or token (``abc123xy`` is not scrubbed out of ``zabc123xyz``).
_WORD = "A-Za-z0-9"


class Redactor:
    """Scrubs known secret values out of text that reaches the model, a log, an exception or a repr.

    Never out of the data an API returned: a result's ``data`` is exactly what the API sent (an
    API may echo the account id a credential carries), and the Output model validates that. Each
    secret is scrubbed as a whole value (not inside a longer word), together with its URL
    encodings; values shorter than ``MIN_SECRET_CHARS`` are not taken as secrets.

    Every live Redactor also scrubs the records of the HTTP and LLM client libraries' own loggers
    (httpx logs each request URL at INFO, and an apiKey may travel in the query; instructor logs
    each failed LLM call with the server's error text, which may echo the key), and the text the
    Agent sends the model (``scrub_everywhere``).
    """

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    def add(self, value: str) -> bool:
        """Remember ``value`` (and its common encodings) as secret; a header value such as
        ``Bearer <token>`` also adds its token. False when ``value`` is too short to be one."""
        from urllib.parse import quote

        scheme, _, token = value.partition(" ")
        parts = [value, token] if token and scheme.isalpha() and " " not in token else [value]
        kept = [p for p in parts if len(p) >= MIN_SECRET_CHARS]
        if not kept:
            return False
        with self._lock:
            for part in kept:
                self._values.update({part, quote(part, safe=""), quote(part)})
            self._pattern = None
        _attach_log_filter()
        return True

    def scrub_logs(self) -> None:
        """Scrub the records of the client libraries' loggers made since (e.g. instructor makes
        its loggers when a client is first wrapped)."""
        if self._values:
            _attach_log_filter()

    def __call__(self, text: str) -> str:
        with self._lock:
            if not self._values:
                return text
            if self._pattern is None:
                alternatives = "|".join(
                    re.escape(v) for v in sorted(self._values, key=len, reverse=True)
                )
                self._pattern = re.compile(f"(?<![{_WORD}])(?:{alternatives})(?![{_WORD}])")
            pattern = self._pattern
        return pattern.sub("***", text)


def scrub_everywhere(text: str) -> str:
    """``text`` with every secret any live Redactor knows scrubbed (for text that leaves the
    process: what the model is sent, log records)."""
    for redactor in list(_LIVE):
        text = redactor(text)
    return text


_LIVE: weakref.WeakSet[Redactor] = weakref.WeakSet()


# httpcore logs each response's headers at DEBUG as a repr of (name, value) byte pairs: a
# session cookie an API sets (a login's token) would be there before anything could register it
# as a secret. Cookie and Set-Cookie values are scrubbed from those records whatever they hold.
_COOKIE_HEADER = re.compile(
    r"""(\(b(['"])(?i:set-cookie|cookie)\2,\s*b)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
)


class _LibraryLogFilter(logging.Filter):
    """Rewrites httpx/httpcore log records with every live Redactor applied, and cookie header
    values scrubbed (``_COOKIE_HEADER``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error handling
            return True
        scrubbed = _COOKIE_HEADER.sub(r"\1'***'", scrub_everywhere(message))
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


_FILTER = _LibraryLogFilter()
# The libraries whose log records may carry a request's URL, headers or a server's error text.
_FILTERED = ("httpx", "httpcore", "httpx2", "openai", "instructor", "toolbind")
_FILTERED_NAMES: set[str] = set()


def _attach_log_filter() -> None:
    """Put the scrubbing filter on every logger of ``_FILTERED`` that exists now.

    Filters are not inherited by child loggers (a record logged on ``instructor.v2.retry`` does
    not pass ``instructor``'s filters), so each one gets it; this runs whenever a secret is
    registered, i.e. after the client libraries in use were imported and made their loggers.
    """
    loggers = logging.Logger.manager.loggerDict
    for name, logger in list(loggers.items()):
        if (
            name not in _FILTERED_NAMES
            and isinstance(logger, logging.Logger)
            and name.split(".", 1)[0] in _FILTERED
        ):
            _FILTERED_NAMES.add(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)


for _name in ("httpx", "httpcore", "httpcore.http11", "httpcore.http2", "httpcore.connection"):
    logging.getLogger(_name)
_attach_log_filter()
