"""Compiler layer (backends): the Jinja2 templates beside this module, compiled once and kept,
and what each template rendered by key reads.

Imports ``_cachedir`` and Jinja2 only. Templates see only the view objects the backend builds,
never a spec dict.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
from jinja2.utils import htmlsafe_json_dumps

from .._cachedir import cache_dir

TEMPLATES = Path(__file__).parent / "templates"


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates as compiled by an earlier run (jinja keys each on its source's checksum
    and the Python version): compiling one cost about 10 ms of every run that renders anything.
    A cache that cannot be read or written is no error: the template is compiled."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """The kept bytecode of ``bucket``'s template, if it can be read."""
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged entry: compiled again (and written again)
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Keep ``bucket``'s bytecode, if the cache can be written."""
        try:
            Path(self.directory).mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _compiled_templates() -> jinja2.BytecodeCache | None:
    where = cache_dir("templates", f"jinja2-{jinja2.__version__}")
    return None if where is None else CompiledTemplates(str(where))


ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(TEMPLATES)),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    bytecode_cache=_compiled_templates(),
)


def _tojson(value: object) -> str:
    """Jinja's ``tojson`` (``json.dumps`` with ``sort_keys``, HTML-safe), the same text: for a
    string, without ``sort_keys`` (which changes nothing for one), so ``json`` uses its cached
    encoder instead of building one per call — the lazy package of a large spec lists thousands
    of names this way."""
    if type(value) is str:
        return str(htmlsafe_json_dumps(value, dumps=json.dumps))
    return str(htmlsafe_json_dumps(value, dumps=json.dumps, sort_keys=True))


ENV.filters["tojson"] = _tojson

HTTP_TEMPLATE_SOURCES = {
    "api": "api",
    "header": "header",
    "http_imports": "api",
    "operations": "api",
    "source_literal": "source_literal",
    "tools": "tools",
}
"""``http.py.jinja``'s context variables, and what ``http.py``'s key holds that each is made
from (``api``: the package's ``HttpApi``; ``tools``: the tools' views)."""

TEMPLATE_INPUTS: dict[str, tuple[str, ...]] = {
    "activities.py.jinja": ("header", "source_literal", "tools"),
    "calls.py.jinja": (
        "header",
        "http",
        "imports",
        "source_literal",
        "tools",
        "tools_extra",
        "toolset_unions",
        "union",
    ),
    "lazy_init.py.jinja": ("all_names", "by_module", "header", "origin", "source_literal"),
    "lazy_models.py.jinja": ("exported", "header", "source_literal", "where", "where_names"),
    "lazy_tools.py.jinja": (
        "calls_names",
        "header",
        "refs",
        "source_literal",
        "tools",
        "tools_extra",
        "toolsets",
    ),
    "mcp.py.jinja": ("header", "servers", "source_literal", "tool_servers", "tools"),
}
"""Every context variable each template rendered by key reads (its includes' too): a file's key
is a digest of these values (tests/compiler/test_incremental.py holds the lists to the
templates' text), so a file whose key is unchanged is not rendered, nor its template compiled."""

TOOL_FIELDS: dict[str, tuple[str, ...]] = {
    "activities.py.jinja": (
        "activity_class",
        "call_class",
        "context_activity_class",
        "function_name",
        "name_literal",
        "output_class",
    ),
    "calls.py.jinja": ("call_class",),
    "lazy_tools.py.jinja": ("name_literal", "provider_literal"),
}
"""The fields of each ``ToolView`` these templates are given (and keyed on): only these, so a
template reading another fails to render (``StrictUndefined``) instead of being keyed on less
than it reads — an edited description changes none of these files."""

TEMPLATES_DIGEST = hashlib.sha256(
    b"".join(
        p.name.encode() + b"\0" + p.read_bytes() + b"\0"
        for p in sorted(TEMPLATES.iterdir())
        if p.is_file()
    )
).hexdigest()[:16]
