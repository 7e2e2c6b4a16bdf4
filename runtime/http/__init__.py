"""Runtime layer, public: call OpenAPI operations over HTTP (httpx, sync and async). Imports httpx,
pydantic and this package's private modules.

The package: ``_client`` (``HttpClient``, ``GenericHttpTool``), ``_exchange`` (the sans-IO request /
redirect / retry logic both clients share), ``_reading`` (a response into the ToolResult),
``_core`` (what an exchange is made of), ``_auth`` (credentials, secrets, OAuth2),
``_params`` (parameter serialisation by ``style``/``explode``), ``_body`` (request bodies),
``_gateway`` (the gateway's declarative ``execution`` configs). The HTTP spec types are the
public ``toolbind.runtime.contract``'s, re-exported here.

A generated OpenAPI package holds ``API = HttpApi(...)`` (see ``contract``); its Activities
call ``HttpClient(API, ...).call(tool, call, OutputModel)``, which returns a ``ToolResult``:
``data`` is the response validated by the Output model (JSON; text otherwise), ``metadata``
holds the status, selected headers, attempts and retries; a non-2xx response, a timeout or a
connection failure is a failed result, never an exception.

Security, by construction:

- The LLM fills parameters, never the host: the URL is one of the configured servers plus the
  operation's path; every value is percent-encoded for where it lands (a path value cannot add
  ``/``, ``?``, ``#`` or form a ``..`` segment), header values with CR/LF are refused, redirects
  are followed only within the configured servers, and any URL outside them is refused.
- Secrets come from ``credentials`` (keyed by security-scheme key, ``${env.NAME}`` expanded),
  never from a Call; they are scrubbed from errors, metadata and log lines, and ``repr`` never
  shows them.
- File uploads take bytes/base64; local paths only inside a configured ``file_root``.

Errors by audience: ``HttpConfigurationError`` (raised) for the developer's mistakes (unknown
tool, credentials missing for every security alternative, a bad server variable); a failed
``ToolResult`` for run-time failures and for input the API cannot be sent (``metadata
["error_type"]``: ``invalid_input``, ``http_status``, ``timeout``, ``connection``,
``redirect_refused``, ``refused_url``, ``response_too_large``, ``invalid_output``,
``invalid_response``, ``auth``).
"""

from ..contract import (
    BodyPart,
    HttpApi,
    HttpBody,
    HttpOperation,
    HttpParameter,
    HttpResponse,
    HttpServer,
    SecurityRequirement,
    SecurityScheme,
)
from ..errors import HttpConfigurationError
from ._client import GenericHttpTool, HttpClient
from ._core import RetryPolicy
from ._gateway import HttpExecution

__all__ = [
    "BodyPart",
    "GenericHttpTool",
    "HttpApi",
    "HttpBody",
    "HttpClient",
    "HttpConfigurationError",
    "HttpExecution",
    "HttpOperation",
    "HttpParameter",
    "HttpResponse",
    "HttpServer",
    "RetryPolicy",
    "SecurityRequirement",
    "SecurityScheme",
]
