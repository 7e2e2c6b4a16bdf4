"""Compiler layer: the version stamped into generated headers."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("toolbind")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    VERSION = "0.0.0+source"
