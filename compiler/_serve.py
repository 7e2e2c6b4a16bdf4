"""``toolbind serve``: compile specs in memory and serve their tools over MCP (stdio or HTTP).

The tools of every spec are offered through ``toolbind.runtime``'s MCP server; their Activities
are the generated HTTP Activities of OpenAPI specs (calling the API, at ``--base-url`` or the
spec's first server) and the functions of an ``--activities`` module (its ``ACTIVITIES`` dict,
else functions named like the tools), which win. A tool with no Activity is not served (said on
standard error). Standard output belongs to the protocol under stdio.
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolbind.runtime.errors import UsageError


def prepare(
    specs: Sequence[Path],
    *,
    activities: str | None = None,
    base_url: str | None = None,
    allow_refs: Sequence[str] = (),
) -> tuple[Any, list[str], list[str], Path]:
    """The MCP server for ``specs``, the names served, the names skipped (no Activity), and the
    temporary directory holding the compiled packages (the caller removes it).

    Raises:
        SpecError: a spec has errors.
        UsageError: the ``mcp`` extra is missing, the activities module can't be used, or no
            tool has an Activity.
    """
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        raise UsageError(
            "toolbind serve needs the mcp extra: pip install 'toolbind[mcp]'"
        ) from None
    from toolbind.runtime import mcp_server, resolve_activity

    tools, fns, root = collect(
        specs, activities=activities, base_url=base_url, allow_refs=allow_refs
    )
    try:
        served = [t.name for t in tools if (resolve_activity(t, fns.keys()) or t.name) in fns]
        skipped = [t.name for t in tools if t.name not in served]
        if not served:
            raise UsageError(
                "no tool has an Activity to run it: give --activities MODULE (or an OpenAPI spec, "
                "whose operations are called over HTTP)"
            )
        return mcp_server(tools, fns, name="toolbind"), sorted(served), skipped, root
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
) -> tuple[list[Any], dict[str, Callable[..., Any]], Path]:
    """The tools of ``specs`` compiled in a temporary directory (the caller removes it) and of the
    imported generated ``packages``, and their Activities: the generated HTTP Activities of OpenAPI
    specs, then the ``activities`` module's functions (which win).

    Raises:
        SpecError: a spec has errors.
        UsageError: the activities module can't be used.
    """
    from toolbind.runtime import ToolBinding
    from toolbind.runtime.http import HttpClient

    from ._api import compile_to_directory, load_package

    root = Path(tempfile.mkdtemp(prefix="toolbind-"))
    try:
        loaded = list(packages)
        if specs:
            tree = compile_to_directory(list(specs), root, allow_refs=allow_refs)
            loaded[:0] = [load_package(root, name) for name in tree.packages]
        tools: list[ToolBinding] = []
        fns: dict[str, Callable[..., Any]] = {}
        for pkg in loaded:
            tools.extend(pkg.TOOLS)
            if hasattr(pkg, "HttpActivities"):
                client = HttpClient(pkg.API, base_url=base_url) if base_url else HttpClient(pkg.API)
                fns.update(pkg.HttpActivities(client).async_activities())
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
