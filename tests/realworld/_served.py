"""Test support: a real server's spec, downloaded as it serves it, compiled and loaded."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import httpx

from toolbind.compiler import compile_to_directory, load_package


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
