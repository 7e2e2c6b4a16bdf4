"""CLI layer: ``toolbind serve``, compile specs in memory and serve their tools over MCP (stdio
or HTTP).

The tools of every spec are offered through ``toolbind.runtime``'s MCP server; their Activities
are the generated HTTP Activities of OpenAPI specs (calling the API, at ``--base-url`` or the
spec's first server, with the credentials of ``--credentials FILE``/``--credential
SCHEME=VALUE``: the shapes ``HttpClient(credentials=...)`` takes, keyed by the specs'
``securitySchemes``, ``${env.NAME}`` read at startup), the generated MCP Activities of an MCP
configuration (calling each tool on the server that listed it) and the functions of an
``--activities`` module (its ``ACTIVITIES`` dict, else functions named like the tools), which win. A tool with no
Activity is not served (said on standard error) unless ``--latent``. Standard output belongs to
the protocol under stdio.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from toolbind.errors import UsageError

_counter = itertools.count()


def prepare(
    specs: Sequence[Path],
    *,
    activities: str | None = None,
    base_url: str | None = None,
    allow_refs: Sequence[str] = (),
    credentials: Mapping[str, Any] | None = None,
    latent: bool = False,
) -> tuple[Any, list[str], list[str], Path]:
    """The MCP server for ``specs``, the names served, the names skipped (no Activity; with
    ``latent``, none that may run latently), and the temporary directory holding the compiled
    packages (the caller removes it).

    Raises:
        SpecError: a spec has errors.
        UsageError: the ``mcp`` extra is missing, the activities module can't be used, a
            credential does not fit the specs' security schemes (or its ``${env.X}`` is not
            set), or no tool is served.
    """
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        raise UsageError(
            "toolbind serve needs the mcp extra: pip install 'toolbind[mcp]'"
        ) from None
    from toolbind.runtime import mcp_server
    from toolbind.runtime.mcp import servable

    tools, fns, root = collect(
        specs,
        activities=activities,
        base_url=base_url,
        allow_refs=allow_refs,
        credentials=credentials,
    )
    try:
        served, skipped = servable(tools, fns, latent=latent)
        if not served:
            raise UsageError(
                "no tool has an Activity to run it: give --activities MODULE (or an OpenAPI spec, "
                "whose operations are called over HTTP, an MCP configuration, whose tools are "
                "called on their servers, or --latent)"
            )
        server = mcp_server(tools, fns, name="toolbind", latent=latent)
        return server, sorted(served), skipped, root
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def collect(
    specs: Sequence[Path],
    *,
    packages: Sequence[Any] = (),
    activities: str | None = None,
    base_url: str | None = None,
    allow_refs: Sequence[str] = (),
    credentials: Mapping[str, Any] | None = None,
) -> tuple[list[Any], dict[str, Callable[..., Any]], Path]:
    """The tools of ``specs`` compiled in a temporary directory (the caller removes it) and of the
    imported generated ``packages``, and their Activities: the generated HTTP Activities of OpenAPI
    specs (each package's client given the ``credentials`` of its own security schemes) and MCP
    Activities of MCP configurations, then the ``activities`` module's functions (which win).

    Raises:
        SpecError: a spec has errors.
        UsageError: the activities module can't be used; a credential names no security scheme
            of these specs, does not fit its scheme, or needs an ``${env.X}`` that is not set.
    """
    from toolbind.compiler._api import compile_to_directory, load_package
    from toolbind.runtime import ToolBinding
    from toolbind.runtime.http import HttpClient

    root = Path(tempfile.mkdtemp(prefix="toolbind-"))
    try:
        loaded = list(packages)
        if specs:
            # under a parent package of its own: a package is named after its spec file, and
            # `mcp.json` (or `json.yaml`, `test.yaml`) would otherwise import the module of that name
            parent = f"toolbind_serve_{os.getpid()}_{next(_counter)}"
            tree = compile_to_directory(list(specs), root / parent, allow_refs=allow_refs)
            (root / parent / "__init__.py").write_text("", encoding="utf-8")
            loaded[:0] = [load_package(root, f"{parent}.{name}") for name in tree.packages]
        tools: list[ToolBinding] = []
        fns: dict[str, Callable[..., Any]] = {}
        given = dict(credentials or {})
        used: set[str] = set()
        for pkg in loaded:
            tools.extend(pkg.TOOLS)
            if hasattr(pkg, "HttpActivities"):
                schemes: Mapping[str, Any] = pkg.API.security_schemes or {}
                mine = {k: v for k, v in given.items() if k in schemes}
                used.update(mine)
                client = HttpClient(pkg.API, base_url=base_url, credentials=mine)
                fns.update(pkg.HttpActivities(client).async_activities())
            if hasattr(pkg, "McpActivities"):  # an MCP configuration's: called on their servers
                fns.update(pkg.McpActivities().async_activities())
        if unknown := sorted(set(given) - used):
            raise UsageError(
                f"credentials for {', '.join(unknown)}: no security scheme of these specs has "
                "that name (credentials are keyed by the specs' securitySchemes)"
            )
        if activities:
            from toolbind.testing._activities import activities_in, load_activities
            from toolbind.testing._contract import ContractError

            try:
                found, unknown = activities_in(load_activities(activities), tools)
            except ContractError as exc:
                raise UsageError(str(exc)) from None
            if unknown:
                raise UsageError(
                    f"{activities}: ACTIVITIES names no tool of these specs: {', '.join(unknown)}"
                )
            fns.update(found)
        return tools, fns, root
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def read_credentials(file: Path | None, pairs: Sequence[str]) -> dict[str, Any]:
    """The credentials of ``--credentials FILE`` (JSON or YAML: security scheme → credential, in
    the shapes ``HttpClient(credentials=...)`` takes) and ``--credential SCHEME=VALUE`` (a string
    credential: an API key, a bearer token; these win). Values are kept as written:
    ``${env.NAME}`` is read when the clients are made, and no value is ever printed.

    Raises:
        UsageError: the file can't be read or is not such a mapping; a pair is not SCHEME=VALUE.
    """
    out: dict[str, Any] = {}
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"--credentials {file}: cannot read it ({type(exc).__name__})"
            ) from None
        import yaml

        from toolbind.yaml12 import load_yaml

        try:  # JSON is YAML; the error names the place, never the text (it holds secrets)
            data: Any = load_yaml(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise UsageError(f"--credentials {file}: not JSON or YAML{where}") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):  # pyright: ignore[reportUnknownVariableType]
            raise UsageError(
                f"--credentials {file}: expected a mapping of security scheme name → credential"
            )
        out.update(cast("dict[str, Any]", data))
    for number, pair in enumerate(pairs, 1):
        scheme, sep, value = pair.partition("=")
        if not sep or not scheme:  # the text itself is not shown: it may be the secret
            raise UsageError(
                f"--credential (the {number}. one): expected SCHEME=VALUE, e.g. "
                "ApiKeyAuth='${env.PETS_KEY}'"
            )
        out[scheme] = value
    return out


def parse_address(text: str, token: str | None) -> tuple[str, int]:
    """``HOST:PORT`` for ``--http``; a non-loopback host needs a token.

    Raises:
        UsageError: not HOST:PORT, or a non-loopback host without ``--token-env``.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise UsageError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    host = host.strip("[]")
    loopback = host == "localhost"
    with contextlib.suppress(ValueError):  # a name, not an address
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    if not loopback and token is None:
        raise UsageError(
            f"--http {text}: serving beyond this machine needs a bearer token "
            "(--token-env NAME, the variable holding it)"
        )
    return host, int(port_text)


def bearer_guard(app: Any, token: str) -> Any:
    """An ASGI app that answers 401 unless ``Authorization: Bearer <token>`` is sent."""
    import hmac

    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"a bearer token is required"})
                return
        await app(scope, receive, send)

    return guarded


def run(server: Any, address: tuple[str, int] | None, token: str | None) -> None:
    """Serve until interrupted: stdio when ``address`` is None, else streamable HTTP at ``/mcp``."""
    import anyio

    if address is None:
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)
        return
    import uvicorn

    app = server.streamable_http_app()
    if token is not None:
        app = bearer_guard(app, token)
    uvicorn.run(app, host=address[0], port=address[1], log_level="warning")
