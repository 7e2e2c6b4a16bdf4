"""Runtime layer (HTTP): the gateway's declarative HTTP ``execution`` config, run as an Activity.

Imports httpx and pydantic (through the shared exchange); never the compiler.

gateway-v3-tool-system.md's config::

    {"url": "https://api.example.com/data/{{input.city}}?units={{input.units}}",
     "method": "POST",
     "headers": {"Authorization": "Bearer ${env.API_KEY}"},
     "body": {"query": "{{input.query}}", "limit": "{{input.limit}}"},
     "timeout": 30000}

(``webhookUrl`` is read like ``url``, for ``external`` tools; an optional ``query`` object adds
query parameters.) Templates:

- ``${env.NAME}``: configuration — in the URL (scheme, host, path, query) and in header values.
  A missing variable is a configuration error; the values are treated as secrets (scrubbed from
  errors and logs).
- ``{{input.x}}`` (dotted paths ``{{input.a.b}}``, list indices ``{{input.items.0}}``, the whole
  input ``{{input}}``): the model's validated input — in the URL's path and query, in ``query``
  values, in the body, and in header values. Every value is encoded for where it lands: a path
  or query value is percent-encoded (it cannot add a segment, a ``..``, a parameter or a
  fragment), a header value with CR/LF is refused, a body string that is exactly one template
  keeps the value's JSON type (``"{{input.limit}}"`` → ``5``) and an absent optional input drops
  the key; inside a longer string the value is interpolated as text. Templates in the URL's
  scheme or host are refused when the config is read: the model never chooses the host.
- ``timeout`` in milliseconds (default 30000); ``method`` defaults to POST when there is a body
  (or a ``webhookUrl``), else GET.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Generator, Mapping
from typing import Any, cast
from urllib.parse import quote, urlencode

import httpx
from pydantic import BaseModel

from .._binding import ToolBinding
from .._result import ToolResult
from ._auth import HttpConfigurationError, Redactor, expand_env
from ._core import Action, Outgoing, RetryPolicy, base_of, unsent
from ._exchange import Exchange
from ._params import ParameterError, check_header_value, has_dot_segment, primitive

_TEMPLATE = re.compile(r"\{\{\s*input((?:\.[A-Za-z0-9_$@-]+)*)\s*\}\}")
_ENV = re.compile(r"\$\{env\.[A-Za-z_][A-Za-z0-9_]*\}")
_META = frozenset({"_tool", "_activity", "_reasoningForCall", "_output"})
_MISSING: Any = object()
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def _lookup(data: Any, path: str) -> Any:
    value = data
    for key in [k for k in path.split(".") if k]:
        if isinstance(value, dict) and key in value:
            value = cast("dict[str, Any]", value)[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(cast("list[Any]", value)):
            value = cast("list[Any]", value)[int(key)]
        else:
            return _MISSING
    return value


def _text(value: Any) -> str:
    return "" if value is _MISSING else primitive(value)


def _render_text(template: str, data: Any, encode: Callable[[str], str]) -> str:
    return _TEMPLATE.sub(lambda m: encode(_text(_lookup(data, m.group(1)))), template)


def _render_json(template: Any, data: Any) -> Any:
    if isinstance(template, str):
        whole = _TEMPLATE.fullmatch(template.strip())
        if whole is not None:
            return _lookup(data, whole.group(1))
        return _render_text(template, data, lambda s: s)
    if isinstance(template, dict):
        out: dict[str, Any] = {}
        for key, item in cast("dict[str, Any]", template).items():
            value = _render_json(item, data)
            if value is not _MISSING:
                out[key] = value
        return out
    if isinstance(template, list):
        values = [_render_json(item, data) for item in cast("list[Any]", template)]
        return [None if v is _MISSING else v for v in values]
    return template


class HttpExecution:
    """One tool's declarative HTTP execution config, ready to run (sync and async).

    Args:
        config: the ``execution`` mapping (see the module docstring).
        tool: the tool's name, for messages.
        env: the environment for ``${env.NAME}`` (default ``os.environ``).
        retry: retry policy (default: idempotent methods on 429/502/503/504).
        max_response_bytes: larger responses become failed results.
        transport: an httpx transport for the sync client (tests, proxies).
        async_transport: an httpx transport for the async client.

    Raises:
        HttpConfigurationError: the config is not an HTTP config, has templates in the host,
            a bad method/timeout/headers, or names an unset environment variable.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        tool: str = "tool",
        env: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        max_response_bytes: int = 10 * 1024 * 1024,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        where = f"tool {tool!r}: execution"
        self.tool = tool
        raw_url = config.get("url", config.get("webhookUrl"))
        if not isinstance(raw_url, str) or not raw_url:
            raise HttpConfigurationError(f"{where}: no 'url' (or 'webhookUrl'): not an HTTP config")
        self._redact = Redactor()
        url = self._secret_env(raw_url, f"{where}.url", env)
        match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)(.*)$", url, re.DOTALL)
        if match is None:
            raise HttpConfigurationError(f"{where}.url: not an absolute http(s) URL")
        authority, rest = match.group(1), match.group(2)
        if "{{" in authority:
            raise HttpConfigurationError(
                f"{where}.url: templates are not allowed in the scheme or host"
            )
        try:
            self._origin = httpx.URL(authority)
        except httpx.InvalidURL as exc:
            raise HttpConfigurationError(f"{where}.url: {exc}") from None
        if self._origin.scheme not in ("http", "https") or not self._origin.host:
            raise HttpConfigurationError(f"{where}.url: not an absolute http(s) URL")
        self._authority = authority
        rest = rest.split("#", 1)[0]
        self._path, _, self._query = rest.partition("?")
        body = config.get("body")
        if body is None and "webhookUrl" in config and "url" not in config:
            body = "{{input}}"  # a webhook receives the tool's input
        self._body = body
        method = config.get("method")
        if method is None:
            method = "POST" if body is not None or "webhookUrl" in config else "GET"
        if not isinstance(method, str) or method.upper() not in _METHODS:
            raise HttpConfigurationError(f"{where}.method: {method!r} is not an HTTP method")
        self.method = method.upper()
        headers: Any = config.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise HttpConfigurationError(f"{where}.headers: expected an object")
        self._headers: list[tuple[str, str]] = []
        for name, value in cast("Mapping[str, Any]", headers).items():
            if not isinstance(value, str):
                raise HttpConfigurationError(f"{where}.headers.{name}: expected a string")
            expanded = self._secret_env(value, f"{where}.headers.{name}", env)
            try:
                check_header_value(str(name), _TEMPLATE.sub("", expanded))
            except ParameterError as exc:
                raise HttpConfigurationError(f"{where}.headers: {exc}") from None
            self._headers.append((str(name), expanded))
        query: Any = config.get("query") or {}
        if not isinstance(query, Mapping):
            raise HttpConfigurationError(f"{where}.query: expected an object")
        self._query_map = dict(cast("Mapping[str, Any]", query))
        timeout = config.get("timeout", 30000)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise HttpConfigurationError(f"{where}.timeout: expected milliseconds > 0")
        self.timeout = float(timeout) / 1000.0
        self._exchange = Exchange(
            bases=[base_of(self._origin.copy_with(path="/"))],
            timeout=self.timeout,
            retry=retry or RetryPolicy(),
            max_response_bytes=max_response_bytes,
            max_redirects=5,
            redact=self._redact,
            transport=transport,
            async_transport=async_transport,
        )

    def _secret_env(self, text: str, where: str, env: Mapping[str, str] | None) -> str:
        source = os.environ if env is None else env
        for ref in _ENV.findall(text):
            self._redact.add(expand_env(ref, where=where, env=source))
        return expand_env(text, where=where, env=source)

    @classmethod
    def from_binding(cls, binding: ToolBinding, **options: Any) -> HttpExecution:
        """The execution of a gateway tool binding (``binding.execution``).

        Raises:
            HttpConfigurationError: the binding has no HTTP execution config.
        """
        if binding.execution is None:
            raise HttpConfigurationError(f"tool {binding.name!r} has no execution config")
        return cls(binding.execution, tool=binding.name, **options)

    def __repr__(self) -> str:
        return f"HttpExecution({self.tool!r}, {self.method} {self._origin}{self._path})"

    def call(
        self, input: BaseModel | Mapping[str, Any], output_model: type[BaseModel] | None = None
    ) -> ToolResult[Any]:
        """Run the request for a validated input; a failed result on any run-time failure."""
        return self._exchange.run(self._steps(input, output_model))

    async def acall(
        self, input: BaseModel | Mapping[str, Any], output_model: type[BaseModel] | None = None
    ) -> ToolResult[Any]:
        """``call``, asynchronously."""
        return await self._exchange.arun(self._steps(input, output_model))

    def close(self) -> None:
        """Close the sync connection pool."""
        self._exchange.close()

    async def aclose(self) -> None:
        """Close both connection pools."""
        await self._exchange.aclose()

    def _steps(
        self, input: BaseModel | Mapping[str, Any], output_model: type[BaseModel] | None
    ) -> Generator[Action, Any, ToolResult[Any]]:
        try:
            out = self._prepare(input)
        except ParameterError as exc:
            return unsent(f"{self.tool}: {exc}", "invalid_input")
        return (yield from self._exchange.steps(out, None, output_model))

    def _prepare(self, input: BaseModel | Mapping[str, Any]) -> Outgoing:
        if isinstance(input, BaseModel):
            data: Any = input.model_dump(mode="json", by_alias=True, exclude_unset=True)
        else:
            data = dict(input)
        data = {k: v for k, v in cast("dict[str, Any]", data).items() if k not in _META}
        path = _render_text(self._path, data, lambda s: quote(s, safe=""))
        if has_dot_segment(path):
            raise ParameterError("a value would form a '.' or '..' path segment; refused")
        query = _render_text(self._query, data, lambda s: quote(s, safe=""))
        extra: list[tuple[str, str]] = []
        for key, template in self._query_map.items():
            value = _render_json(template, data)
            if value is _MISSING or value is None:
                continue
            values = cast("list[Any]", value) if isinstance(value, list) else [value]
            extra.extend((str(key), primitive(v)) for v in values)
        if extra:
            query = f"{query}&{urlencode(extra)}" if query else urlencode(extra)
        text = self._authority + (path or "/") + (f"?{query}" if query else "")
        headers: list[tuple[str, str]] = []
        for name, template in self._headers:
            value = _render_text(template, data, lambda s: s)
            headers.append((name, check_header_value(name, value)))
        content: bytes | None = None
        if self._body is not None and self.method not in ("GET", "HEAD"):
            body = _render_json(self._body, data)
            body = None if body is _MISSING else body
            ctype = next((v for k, v in headers if k.lower() == "content-type"), None)
            if ctype is not None and "x-www-form-urlencoded" in ctype and isinstance(body, dict):
                pairs = [(k, primitive(v)) for k, v in cast("dict[str, Any]", body).items()]
                content = urlencode(pairs).encode("ascii")
            elif isinstance(body, str) and ctype is None:
                content = body.encode("utf-8")
                headers.append(("Content-Type", "text/plain; charset=utf-8"))
            else:
                content = json.dumps(body, ensure_ascii=False).encode("utf-8")
                if ctype is None:
                    headers.append(("Content-Type", "application/json"))
        url = httpx.URL(text)
        if (url.scheme, url.host, url.port) != (
            self._origin.scheme,
            self._origin.host,
            self._origin.port,
        ):  # cannot happen with encoded values; checked anyway
            raise ParameterError("the input would change the host; refused")
        return Outgoing(
            method=self.method, url=url, headers=headers, content=content, label=self.tool
        )
