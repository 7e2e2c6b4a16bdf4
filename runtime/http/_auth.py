"""Runtime layer (HTTP): credentials, ``${env.NAME}`` expansion and security requirements. Imports httpx.

Secrets come only from configuration (a mapping keyed by security-scheme key), never from a Call.
They are held in ``Secret`` objects whose ``repr``/``str`` never show the value, and every secret
(plus each OAuth2 access token fetched) is registered with a ``Redactor`` that scrubs error
messages before they leave the runtime.

Credential shapes, per scheme type (strings may contain ``${env.NAME}``):

- ``apiKey``: ``"the-key"`` or ``{"value": "the-key"}``
- ``http`` bearer, ``openIdConnect``: ``"token"`` or ``{"token": "token"}``
- ``http`` basic: ``{"username": "u", "password": "p"}`` or ``("u", "p")``
- ``oauth2`` (client credentials): ``{"client_id": ..., "client_secret": ..., "scopes": [...],
  "token_url": ..., "client_auth": "basic" | "post"}`` (``token_url`` defaults to the spec's,
  ``client_auth`` to HTTP Basic as RFC 6749 §2.3.1 requires servers to support), or
  ``{"access_token": "..."}`` for a token obtained elsewhere.
- any scheme: ``None`` (``null`` in a credentials file) — the deployment called enforces no
  auth: the scheme's requirement is met and nothing is sent for it (a spec that requires an API
  key on every operation, served by one that checks none).
"""

from __future__ import annotations

import base64
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx

from .._secrets import (
    MIN_SECRET_CHARS as MIN_SECRET_CHARS,
)
from .._secrets import Redactor as Redactor
from .._secrets import Secret as Secret
from .._secrets import scrub_everywhere as scrub_everywhere
from ..contract import SecurityRequirement, SecurityScheme
from ..errors import HttpConfigurationError, TokenError

_ENV = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")
# An OAuth2 token is refreshed this many seconds before it expires.
_EXPIRY_SKEW = 30.0


def expand_env(text: str, *, where: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every ``${env.NAME}`` replaced by the environment variable's value.

    Raises:
        HttpConfigurationError: a variable is not set (the message names it, not a value).
    """
    source = os.environ if env is None else env

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in source:
            raise HttpConfigurationError(f"{where}: environment variable {name} is not set")
        return source[name]

    return _ENV.sub(sub, text)


@dataclass(frozen=True, slots=True)
class Credential:
    """One scheme's configured credential (values already env-expanded)."""

    scheme: SecurityScheme
    secret: Secret | None = None
    username: Secret | None = None
    password: Secret | None = None
    client_id: Secret | None = None
    client_secret: Secret | None = None
    token_url: str | None = None
    scopes: tuple[str, ...] | None = None
    client_auth: str = "basic"
    none: bool = False  # configured as None: met, and nothing is sent


def _secret(value: Any, *, where: str, env: Mapping[str, str] | None, redact: Redactor) -> Secret:
    if not isinstance(value, str):
        raise HttpConfigurationError(f"{where}: expected a string, got {type(value).__name__}")
    text = expand_env(value, where=where, env=env)
    redact.add(text)
    return Secret(text)


def parse_credentials(
    schemes: Mapping[str, SecurityScheme],
    credentials: Mapping[str, Any],
    *,
    env: Mapping[str, str] | None,
    redact: Redactor,
) -> dict[str, Credential]:
    """Validate ``credentials`` against the spec's schemes; expand ``${env.NAME}``.

    Raises:
        HttpConfigurationError: an unknown scheme key or a credential of the wrong shape.
    """
    out: dict[str, Credential] = {}
    for key, raw in credentials.items():
        where = f"credentials[{key!r}]"
        scheme = schemes.get(key)
        if scheme is None:
            known = ", ".join(sorted(schemes)) or "none"
            raise HttpConfigurationError(f"{where}: no security scheme {key!r} (known: {known})")
        if raw is None:  # the deployment needs none: met, nothing sent
            out[key] = Credential(scheme=scheme, none=True)
        elif scheme.type == "http" and (scheme.scheme or "").lower() == "basic":
            out[key] = _basic(scheme, raw, where=where, env=env, redact=redact)
        elif scheme.type == "oauth2":
            out[key] = _oauth2(key, scheme, raw, where=where, env=env, redact=redact)
        else:
            if isinstance(raw, Mapping):
                data = cast("Mapping[str, Any]", raw)
                value = data.get("value", data.get("token"))
            else:
                value = raw
            secret = _secret(value, where=f"{where}.value", env=env, redact=redact)
            out[key] = Credential(scheme=scheme, secret=secret)
    return out


def _basic(
    scheme: SecurityScheme,
    raw: Any,
    *,
    where: str,
    env: Mapping[str, str] | None,
    redact: Redactor,
) -> Credential:
    """An HTTP basic credential: a ``{username, password}`` object or a pair."""
    if isinstance(raw, Mapping):
        data = cast("Mapping[str, Any]", raw)
        user, password = data.get("username"), data.get("password")
    elif (
        isinstance(raw, Sequence)
        and not isinstance(raw, str)
        and len(pair := cast("Sequence[Any]", raw)) == 2
    ):
        user, password = pair[0], pair[1]
    else:
        raise HttpConfigurationError(
            f"{where}: basic auth needs {{'username': ..., 'password': ...}}"
        )
    # the user name identifies the account (an API may echo it): only the password, and the
    # header value made of both, are secret
    if not isinstance(user, str):
        raise HttpConfigurationError(
            f"{where}.username: expected a string, got {type(user).__name__}"
        )
    u = Secret(expand_env(user, where=f"{where}.username", env=env))
    p = _secret(password, where=f"{where}.password", env=env, redact=redact)
    redact.add(base64.b64encode(f"{u.reveal()}:{p.reveal()}".encode()).decode())
    return Credential(scheme=scheme, username=u, password=p)


def _oauth2(
    key: str,
    scheme: SecurityScheme,
    raw: Any,
    *,
    where: str,
    env: Mapping[str, str] | None,
    redact: Redactor,
) -> Credential:
    """An OAuth2 credential: an ``access_token``, or client credentials (and where to get a
    token with them)."""

    def sec(value: Any, sub: str) -> Secret:
        return _secret(value, where=f"{where}.{sub}", env=env, redact=redact)

    if not isinstance(raw, Mapping):
        raise HttpConfigurationError(
            f"{where}: oauth2 needs {{'client_id', 'client_secret'}} or {{'access_token'}}"
        )
    data = cast("Mapping[str, Any]", raw)
    if "access_token" in data:
        return Credential(scheme=scheme, secret=sec(data["access_token"], "access_token"))
    token_url = data.get("token_url", scheme.token_url)
    if not isinstance(token_url, str) or not token_url:
        raise HttpConfigurationError(
            f"{where}: scheme {key!r} has no client-credentials token URL; give token_url"
        )
    scopes_raw = data.get("scopes")
    scopes = (
        tuple(str(s) for s in cast("Sequence[Any]", scopes_raw))
        if isinstance(scopes_raw, list | tuple)
        else None
    )
    client_auth = data.get("client_auth", "basic")
    if client_auth not in ("basic", "post"):
        raise HttpConfigurationError(f"{where}.client_auth: expected 'basic' or 'post'")
    return Credential(
        scheme=scheme,
        client_id=sec(data.get("client_id"), "client_id"),
        client_secret=sec(data.get("client_secret"), "client_secret"),
        token_url=expand_env(token_url, where=f"{where}.token_url", env=env),
        scopes=scopes,
        client_auth=str(client_auth),
    )


def choose_requirement(
    alternatives: Sequence[Sequence[SecurityRequirement]],
    credentials: Mapping[str, Credential],
    *,
    tool: str,
) -> Sequence[SecurityRequirement]:
    """The first alternative whose schemes all have credentials (OR of ANDs).

    Raises:
        HttpConfigurationError: none can be satisfied; the message names what is missing.
    """
    if not alternatives:
        return ()
    # An empty alternative (``{}``) makes auth optional: credentials are still used when some
    # other alternative is configured.
    for alternative in alternatives:
        if alternative and all(req.scheme in credentials for req in alternative):
            return alternative
    if any(not alternative for alternative in alternatives):
        return ()
    options = " or ".join(
        "[" + " and ".join(req.scheme for req in alt) + "]" for alt in alternatives
    )
    missing = sorted(
        {req.scheme for alt in alternatives for req in alt if req.scheme not in credentials}
    )
    raise HttpConfigurationError(
        f"tool {tool!r} needs credentials for {options}; missing: {', '.join(missing)}"
    )


@dataclass(slots=True)
class AuthParts:
    """What authentication adds to one request."""

    headers: dict[str, str] = field(default_factory=dict[str, str])
    query: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    cookies: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


@dataclass(slots=True)
class _Token:
    value: str
    expires_at: float
    skew: float


class TokenCache:
    """OAuth2 client-credentials tokens by (scheme, scopes): fetched once, reused until expiry."""

    def __init__(self, redact: Redactor) -> None:
        self._tokens: dict[tuple[str, tuple[str, ...]], _Token] = {}
        self._lock = threading.Lock()
        self._redact = redact
        self.fetches = 0

    def get(self, key: tuple[str, tuple[str, ...]]) -> str | None:
        with self._lock:
            token = self._tokens.get(key)
        if token is None or time.monotonic() >= token.expires_at - token.skew:
            return None
        return token.value

    def invalidate(self, keys: Sequence[tuple[str, tuple[str, ...]]]) -> None:
        with self._lock:
            for key in keys:
                self._tokens.pop(key, None)

    def token_request(self, cred: Credential, scopes: tuple[str, ...]) -> httpx.Request:
        assert cred.client_id is not None and cred.client_secret is not None
        assert cred.token_url is not None
        form: dict[str, str] = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        headers = {"Accept": "application/json"}
        if cred.client_auth == "post":
            form["client_id"] = cred.client_id.reveal()
            form["client_secret"] = cred.client_secret.reveal()
        else:
            # RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
            from urllib.parse import quote_plus

            pair = (
                f"{quote_plus(cred.client_id.reveal())}:{quote_plus(cred.client_secret.reveal())}"
            )
            encoded = base64.b64encode(pair.encode()).decode()
            self._redact.add(encoded)
            headers["Authorization"] = f"Basic {encoded}"
        return httpx.Request("POST", cred.token_url, data=form, headers=headers)

    def store(
        self, key: tuple[str, tuple[str, ...]], response: httpx.Response, *, scheme: str
    ) -> str:
        """Read a token response; raise HttpTokenError (no secrets in it) when it is unusable."""
        with self._lock:
            self.fetches += 1
        if response.status_code != 200:
            raise TokenError(
                f"oauth2 token request for scheme {scheme!r} failed: HTTP {response.status_code}"
            )
        try:
            data: Any = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(
            cast("dict[str, Any]", data).get("access_token"), str
        ):
            raise TokenError(f"oauth2 token response for scheme {scheme!r} has no access_token")
        body = cast("dict[str, Any]", data)
        value: str = body["access_token"]
        self._redact.add(value)
        expires_in = body.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float) else 3600.0
        with self._lock:
            # Refresh a little early (30 s, or a tenth of a short lifetime).
            skew = min(_EXPIRY_SKEW, lifetime / 10)
            self._tokens[key] = _Token(value, time.monotonic() + lifetime, skew)
        return value


def token_key(cred: Credential, req: SecurityRequirement) -> tuple[str, tuple[str, ...]]:
    scopes = cred.scopes if cred.scopes is not None else tuple(sorted(req.scopes))
    return (cred.scheme.key, scopes)


def static_parts(
    requirement: Sequence[SecurityRequirement],
    credentials: Mapping[str, Credential],
    tokens: Mapping[str, str],
) -> AuthParts:
    """The headers/query/cookies for ``requirement``; OAuth2 tokens come from ``tokens``."""
    parts = AuthParts()
    for req in requirement:
        cred = credentials[req.scheme]
        scheme = cred.scheme
        if cred.none:
            continue
        if scheme.type == "apiKey":
            assert cred.secret is not None
            name = scheme.name or req.scheme
            if scheme.location == "query":
                parts.query.append((name, cred.secret.reveal()))
            elif scheme.location == "cookie":
                parts.cookies.append((name, cred.secret.reveal()))
            else:
                parts.headers[name] = cred.secret.reveal()
        elif scheme.type == "http" and (scheme.scheme or "").lower() == "basic":
            assert cred.username is not None and cred.password is not None
            pair = f"{cred.username.reveal()}:{cred.password.reveal()}"
            parts.headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif scheme.type == "oauth2" and cred.secret is None:
            parts.headers["Authorization"] = f"Bearer {tokens[req.scheme]}"
        else:  # http bearer (or another http scheme taking a token), openIdConnect, static oauth2
            assert cred.secret is not None
            prefix = "Bearer" if scheme.type != "http" else (scheme.scheme or "bearer").title()
            parts.headers["Authorization"] = f"{prefix} {cred.secret.reveal()}"
    return parts
