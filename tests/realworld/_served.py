"""Test support: a real server's spec, downloaded as it serves it, compiled and loaded."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Generator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from toolbind.compiler import compile_to_directory, load_package
from toolbind.runtime.http import HttpApi

# LNbits run offline (its tests and the Schemathesis bench): no extension manifests, no price
# aggregator or exchange-rate providers
LNBITS_OFFLINE = {
    "LNBITS_EXTENSIONS_MANIFESTS": "[]",
    "LNBITS_WASM_EXTENSIONS_MANIFESTS": "[]",
    "LNBITS_PRICE_AGGREGATOR_ENABLED": "false",
    "LNBITS_EXCHANGE_RATE_PROVIDERS": "[]",
    "LNBITS_ADMIN_UI": "false",
    # invoices made and decoded locally (VoidWallet makes none)
    "LNBITS_BACKEND_WALLET_CLASS": "FakeWallet",
    # its auth cookies are Secure unless this is off; the server is plain HTTP on 127.0.0.1
    "AUTH_HTTPS_ONLY": "false",
    "ENABLE_LOG_TO_FILE": "false",
}


def compile_served(
    url: str,
    root: Path,
    package: str,
    suffix: str = ".json",
    headers: dict[str, str] | None = None,
) -> tuple[ModuleType, str, list[str]]:
    """The spec at ``url`` compiled (as served) under ``root`` into ``package`` and loaded; also
    the read → emitted note and the warnings. The caller unloads ``package``. ``suffix``: the
    spec file's (``.yaml`` for a YAML spec); ``headers``: sent with the download (a token)."""
    spec = root / f"{package}{suffix}"
    spec.write_bytes(httpx.get(url, timeout=30, headers=headers).raise_for_status().content)
    # named apart from the server's own module (generate warns about a clash otherwise)
    tree = compile_to_directory([spec], root / "out", package_names={str(spec): package})
    note = next(d.found for d in tree.diagnostics if "read → emitted" in d.found)
    warnings = [d.found for d in tree.diagnostics if d.severity == "warning"]
    return load_package(root / "out", package), note, warnings


def require_venv(venv: Path, requirements: Path, program: str, name: str) -> None:
    """Skip (fail under ``CI=true``) unless ``make install`` put ``name`` into ``venv`` with
    exactly ``requirements`` (it copies them there as the stamp) and ``venv/bin/program`` is
    there."""
    stamp = venv / "requirements.txt"
    if (
        (venv / "bin" / program).exists()
        and stamp.is_file()
        and stamp.read_bytes() == requirements.read_bytes()
    ):
        return
    missing = (
        f"{name} is not installed in {venv.name} (or not at {requirements.name}) — "
        "`make install` installs it"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: the {name} test must run, but {missing}")
    pytest.skip(missing)


@contextlib.contextmanager
def running(
    name: str,
    command: list[str],
    health: str,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    ok: tuple[int, ...] = (200,),
) -> Generator[None]:
    """``command`` running (its output in ``log``, the environment without this venv's
    ``PYTHONPATH``/``VIRTUAL_ENV``, plus ``env``) until ``health`` answers a status of ``ok``;
    stopped after."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment | dict(env or {}),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{tail}")
            try:
                if httpx.get(health, timeout=5).status_code in ok:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} did not answer in {timeout:g} s:\n{tail}")
            time.sleep(0.25)
        yield
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def placeholder_credentials(api: HttpApi) -> dict[str, Any]:
    """A made-up credential for every security scheme of ``api`` (for a mock that checks only
    that one is sent): a user and password, an OAuth2 token, or a key."""
    found: dict[str, Any] = {}
    for key, scheme in api.security_schemes.items():
        if scheme.type == "http" and (scheme.scheme or "").lower() == "basic":
            found[key] = ("user", "pass")
        elif scheme.type == "oauth2":
            found[key] = {"access_token": "token"}
        else:
            found[key] = "key-123"
    return found
