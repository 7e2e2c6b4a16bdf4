"""Compiler layer: the version stamped into generated headers."""

from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    try:
        return version("toolbind")
    except PackageNotFoundError:  # pragma: no cover - a source tree without an install
        return "0.0.0+source"


VERSION = _version()
