"""Runtime layer (HTTP): ``HttpClient`` and ``GenericHttpTool``, the public HTTP clients. Imports
httpx, pydantic and the package's private modules (``_core``, ``_exchange``, ``_auth``, ``_body``,
``_params``, ``_gateway``); ``toolbind.runtime.http`` re-exports its public names.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import uuid
from collections.abc import Generator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

import httpx
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._executor import current_call
from .._result import ToolResult
from ..contract import (
    HttpApi,
    HttpOperation,
    HttpParameter,
    HttpServer,
    SecurityRequirement,
)
from ._auth import (
    Credential,
    HttpConfigurationError,
    Redactor,
    TokenCache,
    choose_requirement,
    expand_env,
    parse_credentials,
)
from ._body import encode_body
from ._core import (
    Action,
    Authenticator,
    Outgoing,
    RetryPolicy,
    base_of,
    is_under,
    shown,
    unsent,
)
from ._exchange import Exchange
from ._params import (
    IGNORED_HEADERS,
    ParameterError,
    check_header_value,
    cookie_pairs,
    has_dot_segment,
    header_value,
    query_pairs,
    render_path,
)

DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
_VARIABLE = re.compile(r"\{([^{}]+)\}")


def resolve_server(
    server: HttpServer, variables: Mapping[str, str], *, where: str = "server"
) -> str:
    """The server's URL with its variables substituted (configuration over defaults).

    Raises:
        HttpConfigurationError: a variable without a value, or a value outside its enum.
    """

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        value = variables.get(name, server.variables.get(name))
        if value is None:
            raise HttpConfigurationError(f"{where} {server.url!r}: no value for variable {name!r}")
        allowed = server.enums.get(name)
        if allowed and value not in allowed:
            raise HttpConfigurationError(
                f"{where} {server.url!r}: variable {name!r} = {value!r} is not one of "
                f"{', '.join(allowed)}"
            )
        return value

    return _VARIABLE.sub(sub, server.url)


def _absolute(url: str, where: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url.rstrip("/"))
    except httpx.InvalidURL as exc:
        raise HttpConfigurationError(f"{where}: invalid URL {url!r}: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise HttpConfigurationError(
            f"{where}: {url!r} is not an absolute http(s) URL (hint: pass base_url=...)"
        )
    return parsed


def _dumps(call: BaseModel | Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(JSON dump, Python dump) of a Call, both keyed by JSON names."""
    if isinstance(call, BaseModel):
        raw = call.model_dump(by_alias=True, exclude_unset=True)
        try:
            dump = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
        except (PydanticSerializationError, UnicodeDecodeError):  # non-UTF-8 bytes: base64 in JSON
            dump = cast("dict[str, Any]", to_jsonable_python(raw, bytes_mode="base64"))
        return dump, raw
    mapping = dict(call)
    return mapping, mapping


class _Base:
    """Configuration shared by HttpClient and GenericHttpTool."""

    def __init__(
        self,
        api: HttpApi,
        *,
        base_url: str | None,
        server_variables: Mapping[str, str] | None,
        credentials: Mapping[str, Any] | None,
        timeout: float,
        retry: RetryPolicy | None,
        headers: Mapping[str, str] | None,
        file_root: str | os.PathLike[str] | None,
        max_response_bytes: int,
        max_redirects: int,
        env: Mapping[str, str] | None,
        transport: httpx.BaseTransport | None,
        async_transport: httpx.AsyncBaseTransport | None,
        keep_cookies: bool = True,
    ) -> None:
        self.api = api
        self._redact = Redactor()
        variables = dict(server_variables or {})
        # Each operation may reach its own servers (op-level ``servers``, else the API's); the
        # generic tool, the API's. Redirects are followed only within the same set.
        self._op_servers: dict[str, list[httpx.URL]] = {}
        if base_url is not None:
            self._default = _absolute(expand_env(base_url, where="base_url", env=env), "base_url")
            allowed = [self._default]
        else:
            if not api.servers:
                raise HttpConfigurationError(
                    f"{api.title!r} declares no servers; pass base_url=..."
                )
            allowed = [
                _absolute(resolve_server(s, variables), f"servers[{i}]")
                for i, s in enumerate(api.servers)
            ]
            self._default = allowed[0]
            for name, op in api.operations.items():
                if op.servers:
                    self._op_servers[name] = [
                        _absolute(resolve_server(s, variables), f"{name}: servers[{i}]")
                        for i, s in enumerate(op.servers)
                    ]
        self._credentials: dict[str, Credential] = parse_credentials(
            api.security_schemes, credentials or {}, env=env, redact=self._redact
        )
        for key, cred in list(self._credentials.items()):
            if cred.token_url is not None:  # a relative tokenUrl is relative to the server
                joined = str(self._default.join(cred.token_url))
                self._credentials[key] = dataclasses.replace(cred, token_url=joined)
        self._headers: list[tuple[str, str]] = []
        for name, value in (headers or {}).items():
            expanded = expand_env(value, where=f"headers[{name!r}]", env=env)
            self._redact.add(expanded)  # configured headers carry secrets (``Bearer x``, keys)
            try:
                self._headers.append((name, check_header_value(name, expanded)))
            except ParameterError as exc:
                raise HttpConfigurationError(f"headers: {exc}") from None
        self._tokens = TokenCache(self._redact)
        self._no_requirement: bool | None = None  # see _requires_none
        self._file_root = Path(file_root) if file_root is not None else None
        self._exchange = Exchange(
            bases=[base_of(u) for u in allowed],
            timeout=timeout,
            retry=retry or RetryPolicy(),
            max_response_bytes=max_response_bytes,
            max_redirects=max_redirects,
            redact=self._redact,
            transport=transport,
            async_transport=async_transport,
            keep_cookies=keep_cookies,
        )

    def _requires_none(self) -> bool:
        """Whether no operation (nor the API's default) has a security requirement; computed
        once, on the first call that has none, since a large package loads operations lazily."""
        if self._no_requirement is None:
            self._no_requirement = not self.api.security and not any(
                op.security for op in self.api.operations.values()
            )
        return self._no_requirement

    @property
    def token_fetches(self) -> int:
        """How many OAuth2 token responses were received (for diagnostics and tests)."""
        return self._tokens.fetches

    def _auth(
        self, alternatives: tuple[tuple[SecurityRequirement, ...], ...], tool: str
    ) -> Authenticator | None:
        if not alternatives and self._credentials and self._requires_none():
            # An API that declares schemes but requires none anywhere (Airflow 2's served spec
            # says ``security: []``, its auth backend wants basic auth on every call) does not
            # say which operations need them: a configured credential is sent on each, the
            # first of the API's schemes that has one. It was never sent: every call was a 401.
            alternatives = tuple(
                (SecurityRequirement(scheme=key),)
                for key in self.api.security_schemes
                if key in self._credentials
            )
        requirement = choose_requirement(alternatives, self._credentials, tool=tool)
        if not requirement:
            return None
        return Authenticator(requirement, self._credentials, self._tokens)

    def __repr__(self) -> str:
        schemes = ", ".join(sorted(self._credentials))
        return (
            f"{type(self).__name__}({self.api.title!r}, base_url={str(self._default)!r}, "
            f"credentials=[{schemes}])"
        )

    def close(self) -> None:
        """Close the sync connection pool."""
        self._exchange.close()

    async def aclose(self) -> None:
        """Close both connection pools."""
        await self._exchange.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class HttpClient(_Base):
    """Calls the operations of one ``HttpApi``.

    Args:
        api: the spec's operations, servers and security schemes (a generated package's ``API``).
        base_url: overrides the spec's servers (then the only URL requests may go to).
        server_variables: values for the servers' ``{variables}`` (checked against enums).
        credentials: per security-scheme key (see ``toolbind.runtime.http._auth`` for shapes);
            strings may hold ``${env.NAME}``; ``None`` for a scheme the deployment does not
            enforce (its requirement is met, nothing is sent).
        timeout: seconds for connecting, each read and each write (default 30).
        retry: when to retry (default: 3 attempts, idempotent methods, 429/502/503/504).
        headers: extra headers for every request (``${env.NAME}`` expanded, treated as secret).
        file_root: the only directory file parameters may name local files in; None (default)
            means file content must be given as bytes/base64.
        max_response_bytes: a larger response becomes a failed result, unread (default 10 MiB).
        max_redirects: redirects followed per call (within the servers only).
        env: the environment for ``${env.NAME}`` (default ``os.environ``).
        transport: an httpx transport for the sync client (tests, proxies). Proxy settings
            and ``.netrc`` from the environment are not used (they would add hosts or
            credentials the configuration did not name): pass a transport to use a proxy.
        async_transport: an httpx transport for the async client.
        keep_cookies: send a cookie the API set back to it on later calls and redirects (a
            session, as a browser keeps); False: every call starts without cookies.
        idempotency_keys: send an ``Idempotency-Key`` with every POST/PATCH/PUT/DELETE (and retry
            them like a GET), not only where the operation declares the header (the API honours
            keys everywhere). The key is the running call's stable id (``current_call().key``:
            the same on a Temporal retry on another worker), else a fresh UUID per call.

    Every request says ``User-Agent: toolbind/<version>`` (``headers=`` may say otherwise) and
    ``Accept-Encoding: gzip, deflate, br, zstd``, and responses are decoded. A response streamed
    as JSON lines (``application/x-ndjson``, or ``application/json`` holding one value per line) or
    as server-sent events is read whole (within ``max_response_bytes``) as the list of its values.

    Raises:
        HttpConfigurationError: no usable server, a bad server variable, bad credentials.
    """

    def __init__(
        self,
        api: HttpApi,
        *,
        base_url: str | None = None,
        server_variables: Mapping[str, str] | None = None,
        credentials: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        file_root: str | os.PathLike[str] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_redirects: int = 5,
        env: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        keep_cookies: bool = True,
        idempotency_keys: bool = False,
    ) -> None:
        super().__init__(
            api,
            base_url=base_url,
            server_variables=server_variables,
            credentials=credentials,
            timeout=timeout,
            retry=retry,
            headers=headers,
            file_root=file_root,
            max_response_bytes=max_response_bytes,
            max_redirects=max_redirects,
            env=env,
            transport=transport,
            async_transport=async_transport,
            keep_cookies=keep_cookies,
        )
        self._idempotency_keys = idempotency_keys

    def call(
        self,
        tool: str,
        call: BaseModel | Mapping[str, Any],
        output_model: type[BaseModel] | None = None,
    ) -> ToolResult[Any]:
        """Call operation ``tool`` with a validated Call (or its JSON-named mapping).

        Raises:
            HttpConfigurationError: unknown tool; no credentials for any security alternative.
        """
        return self._exchange.run(self._steps(tool, call, output_model))

    async def acall(
        self,
        tool: str,
        call: BaseModel | Mapping[str, Any],
        output_model: type[BaseModel] | None = None,
    ) -> ToolResult[Any]:
        """``call``, asynchronously."""
        return await self._exchange.arun(self._steps(tool, call, output_model))

    def _steps(
        self, tool: str, call: BaseModel | Mapping[str, Any], output_model: type[BaseModel] | None
    ) -> Generator[Action, Any, ToolResult[Any]]:
        op = self.api.operations.get(tool)
        if op is None:
            raise HttpConfigurationError(f"{self.api.title!r} has no operation {tool!r}")
        alternatives = op.security if op.security is not None else self.api.security
        auth = self._auth(alternatives, tool)
        try:
            out = self._prepare(op, call)
        except ParameterError as exc:
            return _invalid(tool, str(exc))
        servers = self._op_servers.get(tool)
        bases = [base_of(u) for u in servers] if servers else None
        return (yield from self._exchange.steps(out, auth, output_model, bases=bases))

    def _prepare(self, op: HttpOperation, call: BaseModel | Mapping[str, Any]) -> Outgoing:
        dump, raw = _dumps(call)
        path_params: list[tuple[HttpParameter, Any]] = []
        query: list[str] = []
        headers: list[tuple[str, str]] = list(self._headers)
        cookies: list[str] = []
        for param in op.parameters:
            present = param.field in dump
            if param.location == "path":
                if not present:
                    raise ParameterError(f"path parameter {param.name!r} is missing")
                path_params.append((param, dump[param.field]))
                continue
            if not present:
                continue
            value = dump[param.field]
            if param.location == "query":
                pairs = query_pairs(param, value)
                if (
                    param.required
                    and not param.allow_empty
                    and all(not p.partition("=")[2] for p in pairs)
                ):
                    # ``?code=`` is an empty-valued parameter, which OpenAPI sends only where
                    # ``allowEmptyValue`` says so: a server reads it as absent (Gotify's OIDC
                    # callback, listmonk's analytics, Intercom's: Prism's "must have required
                    # property")
                    shown = json.dumps(value, ensure_ascii=False)
                    raise ParameterError(
                        f"query parameter {param.name!r} is required and its value {shown} is "
                        "empty: a server reads an empty value as none (the operation does not "
                        "allowEmptyValue); give a value"
                    )
                query.extend(pairs)
            elif param.location == "header":
                if param.name.lower() in IGNORED_HEADERS or value is None:
                    continue
                headers.append((param.name, header_value(param, value)))
            elif value is not None:
                cookies.extend(cookie_pairs(param, value))
        path = render_path(op.path, path_params)
        if "{" in path:
            raise ParameterError(f"path {op.path!r} has a parameter the operation does not list")
        servers = self._op_servers.get(op.tool)
        base = servers[0] if servers else self._default
        text = str(base).rstrip("/") + path
        if query:
            text += ("&" if "?" in text else "?") + "&".join(query)
        content: bytes | None = None
        if op.body is not None:
            content, ctype = encode_body(op.body, dump, raw, file_root=self._file_root)
            if ctype is not None:
                headers.append(("Content-Type", ctype))
        accept = next((r.media_type for r in op.responses if r.is_output and r.media_type), None)
        if op.accept is not None or accept is not None:
            headers.append(("Accept", op.accept or accept or ""))
        # An operation that takes an Idempotency-Key (IETF draft-ietf-httpapi-idempotency-key-header)
        # says a repeat with the same key is safe: the call gets one (its stable id when an Agent
        # or a Temporal worker runs it, else a fresh UUID, unless it gave its own), every attempt
        # sends it, and a POST/PATCH is retried as a GET is. ``idempotency_keys=True`` opts in
        # for every unsafe method.
        keyed = any(
            p.location == "header" and p.name.lower() == IDEMPOTENCY_KEY for p in op.parameters
        ) or (self._idempotency_keys and op.method.upper() in ("POST", "PATCH", "PUT", "DELETE"))
        if keyed and not any(name.lower() == IDEMPOTENCY_KEY for name, _ in headers):
            running = current_call()
            headers.append(("Idempotency-Key", running.key if running else str(uuid.uuid4())))
        return Outgoing(
            method=op.method.upper(),
            url=httpx.URL(text),
            headers=headers,
            cookies=cookies,
            content=content,
            label=op.tool,
            idempotent=keyed,
            output_media=accept,
            output_binary=any(r.is_output and r.binary for r in op.responses),
            declared_headers=frozenset(h for r in op.responses for h in r.headers),
            declared_media=frozenset(r.media_type for r in op.responses if r.media_type),
        )


def _invalid(tool: str, message: str) -> ToolResult[Any]:
    return unsent(f"{tool}: {message}", "invalid_input")


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
IDEMPOTENCY_KEY = "idempotency-key"
# Headers the model may not set through the generic tool: routing, framing, credentials.
_FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "authorization",
        "proxy-authorization",
        "cookie",
        "content-length",
        "transfer-encoding",
        "connection",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "forwarded",
        "x-forwarded-for",
        "x-forwarded-host",
        "x-forwarded-proto",
    }
)
# matched with fullmatch: ``$`` would also match before a final newline ("X-A\n")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class GenericHttpTool(_Base):
    """AgentB's ``GenericHttpApiTool``: an arbitrary request to the API — on its servers only.

    The model gives ``method``, ``path`` (relative to the default server, or an absolute URL
    under one of the servers), ``query``, ``headers`` and a JSON ``body``. Any URL outside the
    configured servers (another host, port or scheme, or ``..`` out of a server's base path) is
    refused; credentials come from configuration (the API's default security), and headers
    that carry routing, framing or credentials cannot be set by the model.

    Takes the same keyword arguments as ``HttpClient``.
    """

    name = "genericHttpRequest"

    def __init__(
        self,
        api: HttpApi,
        *,
        base_url: str | None = None,
        server_variables: Mapping[str, str] | None = None,
        credentials: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_redirects: int = 5,
        env: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        keep_cookies: bool = True,
    ) -> None:
        super().__init__(
            api,
            base_url=base_url,
            server_variables=server_variables,
            credentials=credentials,
            timeout=timeout,
            retry=retry,
            headers=headers,
            file_root=None,
            max_response_bytes=max_response_bytes,
            max_redirects=max_redirects,
            env=env,
            transport=transport,
            async_transport=async_transport,
            keep_cookies=keep_cookies,
        )

    @property
    def definition(self) -> dict[str, Any]:
        """The tool's name, description and parameters (JSON Schema) for the LLM."""
        return {
            "name": self.name,
            "description": (
                f"Send an HTTP request to the {self.api.title} API at {self._default}. "
                "Use a path relative to that URL."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "method": {"type": "string", "enum": list(_METHODS)},
                    "path": {"type": "string", "description": "e.g. /pets/1"},
                    "query": {
                        "type": "object",
                        "additionalProperties": {
                            "type": ["string", "number", "boolean", "array"],
                            "items": {"type": ["string", "number", "boolean"]},
                        },
                    },
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "body": {"description": "JSON request body"},
                },
                "required": ["method", "path"],
                "additionalProperties": False,
            },
        }

    def call(self, request: Mapping[str, Any]) -> ToolResult[Any]:
        """Send the request the model described; a failed result when it is refused."""
        return self._exchange.run(self._steps(request))

    async def acall(self, request: Mapping[str, Any]) -> ToolResult[Any]:
        """``call``, asynchronously."""
        return await self._exchange.arun(self._steps(request))

    def _steps(self, request: Mapping[str, Any]) -> Generator[Action, Any, ToolResult[Any]]:
        auth = self._auth(self.api.security, self.name)
        try:
            out = self._prepare(request)
        except ParameterError as exc:
            return _invalid(self.name, str(exc))
        if not is_under(out.url, self._exchange.bases):
            servers = ", ".join(
                f"{scheme}://{host}{f':{port}' if port is not None else ''}{prefix}"
                for scheme, host, port, prefix in self._exchange.bases
            )
            return unsent(
                f"{self.name}: {shown(out.url)} is outside the API's servers ({servers}); refused",
                "refused_url",
                method=out.method,
                url=shown(out.url),
            )
        return (yield from self._exchange.steps(out, auth, None))

    def _prepare(self, request: Mapping[str, Any]) -> Outgoing:
        import json
        from urllib.parse import quote

        method = str(request.get("method", "GET")).upper()
        if method not in _METHODS:
            raise ParameterError(f"method {method!r} is not one of {', '.join(_METHODS)}")
        path = request.get("path")
        if not isinstance(path, str) or not path:
            raise ParameterError("'path' must be a non-empty string")
        if any(c in path for c in "\r\n\0\\"):
            raise ParameterError("'path' contains a control character or backslash")
        if path.startswith(("http://", "https://")):
            text = path
        elif path.startswith("/") and not path.startswith("//"):
            text = str(self._default).rstrip("/") + path
        else:
            raise ParameterError("'path' must start with '/' (or be a URL under the API's servers)")
        try:
            url = httpx.URL(text)
        except httpx.InvalidURL as exc:
            raise ParameterError(f"invalid path: {exc}") from None
        if url.userinfo:
            raise ParameterError("URLs with user information are refused")
        if has_dot_segment(url.path):
            raise ParameterError("'path' has '.' or '..' segments (encoded or not); refused")
        query: Any = request.get("query") or {}
        if not isinstance(query, Mapping):
            raise ParameterError("'query' must be an object")
        pairs: list[str] = []
        for key, value in cast("Mapping[str, Any]", query).items():
            values = cast("list[Any]", value) if isinstance(value, list) else [value]
            for one in values:
                text_value = one if isinstance(one, str) else json.dumps(one)
                pairs.append(f"{quote(str(key), safe='')}={quote(text_value, safe='')}")
        if pairs:
            existing = url.query.decode("ascii")
            joined = "&".join(pairs)
            url = url.copy_with(
                query=(f"{existing}&{joined}" if existing else joined).encode("ascii")
            )
        headers = list(self._headers)
        given: Any = request.get("headers") or {}
        if not isinstance(given, Mapping):
            raise ParameterError("'headers' must be an object")
        for name, value in cast("Mapping[str, Any]", given).items():
            if not _TOKEN.fullmatch(str(name)):
                raise ParameterError(f"header name {name!r} is not a valid token")
            if str(name).lower() in _FORBIDDEN_HEADERS or str(name).lower().startswith("proxy-"):
                raise ParameterError(f"header {name!r} cannot be set by the model")
            headers.append((str(name), check_header_value(str(name), str(value))))
        content: bytes | None = None
        if "body" in request and request["body"] is not None:
            content = json.dumps(request["body"], ensure_ascii=False).encode("utf-8")
            headers.append(("Content-Type", "application/json"))
        return Outgoing(method=method, url=url, headers=headers, content=content, label=self.name)
