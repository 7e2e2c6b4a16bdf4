"""Compiler layer (backends): IR → the Python source of a bindings package.

Imports ``ir``, ``naming``, ``diagnostics``, ``passes``, ``backends.schemas``, the Jinja2 templates
beside it and ``toolbind.runtime.contract`` (composition, formats, the runtime's type names); never
a frontend. Templates only see the view objects built here (``ClassView``,
``FieldView``, ``ToolView``), never a spec dict.

Safety: every spec string reaches the source as a Python literal made by ``repr`` (which escapes
quotes, backslashes, newlines, NUL and every non-printable character, bidi controls included)
or as a docstring made by ``docstring``; identifiers come only from ``naming``. Nothing a spec
says is ever placed in a comment or evaluated.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast, get_args

import jinja2
from jinja2.utils import htmlsafe_json_dumps

from toolbind.contract import (
    API_FILE,
    FORMATS,
    META_FIELD_NAMES,
    TYPES_EXPORTS,
    ToolSchema,
    api_to_json,
    compose_schema,
    explicit_fields,
    never_latent,
    reachable_defs,
)

from .. import naming
from .._cachedir import cache_dir
from .._jsontext import Path as JsonPath
from .._jsontext import dumps_indented, dumps_indented_spans
from ..diagnostics import Diagnostic, Diagnostics, Severity
from ..ir import (
    AllOfNode,
    AnyNode,
    ArrayNode,
    BooleanNode,
    CheckedNode,
    ConditionalCheck,
    ContainsCheck,
    Definition,
    DependentRequiredCheck,
    DependentSchemasCheck,
    EvalPlan,
    IntegerNode,
    LiteralNode,
    NeverNode,
    NotCheck,
    NullNode,
    NumberNode,
    NumericBounds,
    ObjectNode,
    PatternPropertiesCheck,
    Property,
    PropertyNamesCheck,
    RefNode,
    SchemaNode,
    SourceLocation,
    SpecPackage,
    StringNode,
    ToolSpec,
    UnevaluatedCheck,
    UnionNode,
    freeze,
    thaw,
)
from ..passes.graph import order_by_bases, strongly_connected
from ..passes.unions import admits_null, is_class_node, mutually_exclusive, tag_property
from .schemas import SchemaEmitter, share_repeated

TEMPLATES = Path(__file__).parent / "templates"

HTTP_NAMES = ("API", "OPERATIONS", "HttpActivities")
"""What an OpenAPI package's ``http.py`` exports (and its ``__init__`` re-exports)."""
MCP_NAMES = ("SERVERS", "TOOL_SERVERS", "McpActivities")
"""What an MCP configuration's package's ``mcp.py`` exports (``__init__`` re-exports them)."""

TOOLS_NAMES = ("NAME_MAP", "TOOLS", "TOOLSETS", "Call", "CallAdapter", "Response")
"""What ``tools.py`` exports (and ``__init__`` re-exports); OpenAPI packages add ``TOOLSET_CALLS``
and one Call union per tag."""

LAZY_MODELS = 50
"""A package with more classes and aliases than this loads its models lazily (``_models/``).

Building a pydantic model costs about half a millisecond: above some fifty, an eager package's
``import`` is measurably slower than a lazy one's (which loads pydantic and
``toolbind.runtime.types`` only; bench/openapi.py measures every corpus package)."""

RENDER_MEMO_MIN = 200
"""A package with at least this many tools and definitions keeps its render memo (``memo``):
below, its whole-package passes cost less than reading and writing what they would keep."""


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates as compiled by an earlier run (jinja keys each on its source's checksum
    and the Python version): compiling one cost about 10 ms of every run that renders anything.
    A cache that cannot be read or written is no error: the template is compiled."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged entry: compiled again (and written again)
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            Path(self.directory).mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _compiled_templates() -> jinja2.BytecodeCache | None:
    where = cache_dir("templates", f"jinja2-{jinja2.__version__}")
    return None if where is None else CompiledTemplates(str(where))


_ENV = jinja2.Environment(
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


_ENV.filters["tojson"] = _tojson

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

_TEMPLATES_DIGEST = hashlib.sha256(
    b"".join(
        p.name.encode() + b"\0" + p.read_bytes() + b"\0"
        for p in sorted(TEMPLATES.iterdir())
        if p.is_file()
    )
).hexdigest()[:16]
"""The templates' text, in every key: an edited template (an editable install keeps its
version) renders every file again."""


_IMPORTS_MARK = "# <toolbind:imports>"
_IMPORT_MARK = "__toolbind_package__"  # where the scaffold imports the generated package from


def scaffold_for(rendered: Rendered, import_path: str) -> str:
    """The Activity scaffold of ``rendered``, importing the package as ``import_path``."""
    return rendered.scaffold.replace(_IMPORT_MARK, import_path)


# Where every name a generated module may use comes from.
_IMPORT_SOURCES: dict[str, str] = {
    **dict.fromkeys(("Annotated", "Any", "Generic", "Literal", "TypeVar", "Union"), "typing"),
    **dict.fromkeys(("ConfigDict", "Field", "JsonValue", "RootModel", "TypeAdapter"), "pydantic"),
    **dict.fromkeys(("ToolBinding", "load_bindings"), "toolbind.runtime"),
    "TypeAliasType": "typing_extensions",
    **dict.fromkeys(TYPES_EXPORTS, "toolbind.runtime.types"),
}


# A generated class must never shadow a name its module imports (a tool called "tool" would
# otherwise become `class ToolCall(ToolCall)`); naming reserves every one of them.
assert {n for n in _IMPORT_SOURCES if n[:1].isupper()} <= naming.RESERVED_CLASS_NAMES


def import_block(*sources: str) -> str:
    """The import lines for the names ``sources`` use (names in string literals don't count)."""
    used: set[str] = set()
    for source in sources:
        used.update(names_in(source))
    return imports_for(used)


def imports_for(used: set[str]) -> str:
    """The import lines for the names in ``used`` that a generated module imports."""
    by_module: dict[str, list[str]] = {}
    for name in sorted(used & _IMPORT_SOURCES.keys()):
        by_module.setdefault(_IMPORT_SOURCES[name], []).append(name)
    order = [
        "typing",
        "pydantic",
        "typing_extensions",
        "toolbind.runtime",
        "toolbind.runtime.types",
    ]
    return "\n".join(f"from {m} import {', '.join(by_module[m])}" for m in order if m in by_module)


# One pass over Python source, in the order Python's tokenizer decides: a comment runs to the end
# of its line, a string literal (any prefix, single or triple quoted) to its closing quote, and a
# number swallows its letters (`1e5` holds no name). `tokenize` gives the same names on generated
# code (tests/security/test_adversarial.py checks it on hostile text and every module of generated/), but
# being pure Python it took a third of the compile time of a large spec. The most common token,
# a name, is tried first (unless it is a string's prefix: ``rb"…"``; possessive, so that a name
# is never cut short to let a prefix through), and a string's body is matched in runs of plain
# characters (``[^"\\]*``) rather than one character per repetition: half the time of the
# obvious pattern on a large package.
_TOKEN = re.compile(
    r"""
    (?![rRbBuUfF]{1,2}[\"'])([A-Za-z_][A-Za-z0-9_]*+)
    | \#[^\r\n]*
    | (?:[rRbBuUfF]{1,2})?(?:
        \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
      | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''
      | "[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"
      | '[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'
    )
    | [0-9][0-9A-Za-z_]*(?:\.[0-9A-Za-z_]*)?
    """,
    re.VERBOSE | re.DOTALL,
)


def names_in(source: str) -> set[str]:
    """The identifiers generated ``source`` uses outside string literals and comments.

    A comment quoting a spec's file name (which may hold quotes and line breaks) must not
    swallow the code after it, as a regex that knew only strings did.
    """
    names = set(_TOKEN.findall(source))  # the one group: "" for a comment, string or number
    names.discard("")
    return names


def py_str(value: str) -> str:
    """A Python string literal for ``value`` that can never break out of its quotes."""
    return repr(value)


def in_docstring(text: str) -> str:
    """``text`` escaped to sit inside a triple-quoted docstring: a spec file may be named
    ``x\"\"\";__import__('os').system('…');\"\"\".json``, and its ``repr`` keeps those quotes."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


_DOC_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\t": "    "})


def docstring(text: str) -> str:
    """A triple-quoted docstring for ``text``: quotes, backslashes, controls all escaped."""
    # str.translate first (a large spec has thousands of descriptions: a loop over characters
    # took a tenth of its compile time); only a text with something unprintable is walked
    escaped = text.strip().translate(_DOC_ESCAPES)
    if not escaped.replace("\n", "").isprintable():
        escaped = "".join(
            ch if ch == "\n" or ch.isprintable() else _code_escape(ch) for ch in escaped
        )
    body = "\n".join(line.rstrip() for line in escaped.split("\n"))
    return f'"""{body}"""'


def _code_escape(ch: str) -> str:
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def py_literal(value: Any) -> str:
    """A Python expression for a JSON value (only str/int/float/bool/None, lists and dicts)."""
    return repr(value)


@dataclass
class FieldView:
    name: str
    annotation: str
    default: str | None  # the right-hand side, or None for a required field without metadata
    override: bool = False  # narrows a field of a parent class (allOf)


@dataclass
class ClassView:
    name: str
    bases: str
    doc: str | None = None
    config: str | None = None  # e.g. 'extra="forbid"'
    extra_type: str | None = None  # annotation for typed additional properties
    fields: list[FieldView] = field(default_factory=lambda: [])
    root: str | None = None  # for RootModel classes: the root type


@dataclass
class AliasView:
    name: str
    value: str  # a string literal holding ``expr`` (aliases are resolved lazily)
    expr: str


@dataclass
class ToolView:
    name: str  # wire name
    name_literal: str
    provider_name: str  # raw
    provider_literal: str
    call_class: str
    output_class: str
    activity_class: str
    function_name: str
    context_activity_class: str
    doc: str | None
    description_literal: str
    index: int
    # OpenAPI: (status literal, model class) of each declared error response
    errors: tuple[tuple[str, str], ...] = ()


@dataclass
class Rendered:
    """The files of one generated package, keyed by relative path, and its Activity scaffold."""

    package: str
    files: dict[str, str]
    render_scaffold: Callable[[], str]
    """A starting module for the user's Activities, rendered on request (``toolbind scaffold``:
    a ``generate`` never writes it, and rendering it costs a pass over every tool)."""
    keys: dict[str, str] = field(default_factory=lambda: {})
    """Files keyed by a digest of what they are rendered from (``PythonBackend``'s ``known``)."""
    skipped: list[str] = field(default_factory=lambda: [])
    """Files not rendered (not in ``files``): ``known`` gave them their key already."""
    memo: dict[str, Any] = field(default_factory=lambda: {})
    """What the next render may take instead of making it again (``PythonBackend``'s
    ``memo``): JSON values, kept by the caller beside the output."""

    @property
    def scaffold(self) -> str:
        return self.render_scaffold()


class _Namer:
    """Allocates every name one package needs, through ``naming`` only."""

    def __init__(self, pkg: SpecPackage, diags: Diagnostics) -> None:
        self.pkg = pkg
        self.diags = diags
        self.classes = naming.Scope(taken=set(naming.RESERVED_CLASS_NAMES))
        self.functions = naming.Scope(taken=set(naming.RESERVED_IDENTIFIERS))
        self.def_names: dict[str, str] = {}
        self.tool_names: dict[str, tuple[str, str, str, str]] = {}
        # each tool's Protocol of an Activity that takes the ActivityContext too (``fn(call, ctx)``)
        self.context_activity_names: dict[str, str] = {}
        self.provider_names: dict[str, str] = {}
        for d in pkg.definitions:
            self.def_names[d.key] = self.classes.claim(
                naming.class_name(d.name_hint), original=d.name_hint
            )
        # Two tools whose names meet after sanitising are an error when an LLM could be offered
        # both (same toolset, or no toolsets at all); otherwise (e.g. different BFCL records) the
        # later one gets a suffixed name and a note.
        by_base: dict[str, ToolSpec] = {}
        by_provider: dict[str, ToolSpec] = {}
        for tool in pkg.tools:
            base = naming.class_name(tool.name)
            provider = naming.provider_tool_name(tool.name)
            clash = by_base.get(base) or by_provider.get(provider)
            if clash is not None and _offered_together(clash, tool):
                diags.error(
                    tool.loc,
                    f"tool name {tool.name!r} collides with {clash.name!r} ({clash.loc}) once "
                    f"made safe for Python and providers ({base!r}, {provider!r})",
                    "tool names that stay distinct after sanitising",
                    hint="rename one of the tools",
                )
            by_base.setdefault(base, tool)
            provider_unique = provider
            n = 2
            while provider_unique in self.provider_names.values():
                suffix = f"_{n}"
                provider_unique = provider[: 64 - len(suffix)] + suffix
                n += 1
            by_provider.setdefault(provider, tool)
            if provider_unique != tool.name:
                diags.note(
                    tool.loc, f"tool {tool.name!r} is offered to providers as {provider_unique!r}"
                )
            self.provider_names[tool.name] = provider_unique
            self.tool_names[tool.name] = (
                self.classes.claim(base + "Call", original=tool.name),
                self.classes.claim(base + "Output", original=tool.name),
                self.classes.claim(base + "Activity", original=tool.name),
                self.functions.claim(naming.function_name(tool.name), original=tool.name),
            )
            self.context_activity_names[tool.name] = self.classes.claim(
                base + "ActivityWithContext", original=tool.name
            )
        # OpenAPI tags: one Call union per tag besides the whole (BFCL records, which can number
        # thousands of one-tool sets, keep only their TOOLSETS entry).
        self.toolset_unions: dict[str, str] = {}
        if pkg.http is not None:
            for s in sorted({s for tool in pkg.tools for s in tool.toolsets}):
                self.toolset_unions[s] = self.classes.claim(
                    naming.toolset_union_name(s), original=s
                )

    def inline_class(self, hint: str) -> str:
        return self.classes.claim(hint)


class PythonBackend:
    """Renders one ``SpecPackage`` to the files of its package."""

    def __init__(
        self,
        pkg: SpecPackage,
        package: str,
        diags: Diagnostics,
        *,
        version: str,
        format_assertion: bool = False,
        known: Mapping[str, str] | None = None,
        memo: Mapping[str, Any] | None = None,
        previous: Callable[[str], str | None] | None = None,
    ) -> None:
        """``known``: file → the key it was rendered from last time; a file whose key is the
        same is not rendered again but listed in ``Rendered.skipped`` (the caller has its text).
        Keys are digests of everything the file's text is made from, ``version`` included.

        ``memo``: the previous render's ``Rendered.memo`` (JSON values): results of a large
        package's whole-package passes, each with the key of what it was made from, taken
        instead of made again when this render's key is the same.

        ``previous``: the text of a file of the previous output (its path in the package), as
        written (the caller checks), or None; the memo says what of it may be reused."""
        self.pkg = pkg
        self.previous = previous
        self.known = known or {}
        self.previous_memo: Mapping[str, Any] = memo or {}
        self.memo: dict[str, Any] = {}
        # a digest of what the definitions' views and schemas are made from (``_definitions``)
        self.definitions_key: str | None = None
        self.memoize = len(pkg.tools) + len(pkg.definitions) >= RENDER_MEMO_MIN
        self.keys: dict[str, str] = {}
        self.skipped: list[str] = []
        self.format_assertion = format_assertion
        self.package = package
        self.diags = diags
        self.version = version
        self.names = _Namer(pkg, diags)
        self.defs: dict[str, Definition] = {d.key: d for d in pkg.definitions}
        self.classes: list[ClassView] = []
        self.aliases: list[AliasView] = []
        self.class_defs: set[str] = set()  # definition keys rendered as classes
        self.emitter = SchemaEmitter(self.names.def_names)
        # a large package's model → its module under ``_models/`` (set by ``_lazy_models``)
        self.model_modules: dict[str, str] = {}
        # above LAZY_MODELS classes and aliases: models under ``_models/``, an index beside
        # ``tools.json``, the HTTP API in ``http.json`` (set by ``render``)
        self.large = False
        for d in pkg.definitions:
            if is_class_node(d.node, self.defs):
                self.class_defs.add(d.key)

    # -- entry point -------------------------------------------------------------------------

    def render(self) -> Rendered:
        self._definitions()
        tools: list[ToolView] = []
        for i, tool in enumerate(self.pkg.tools):
            tools.append(self._tool(tool, i))
        header = f"# DO NOT EDIT: generated by toolbind {self.version} from {self.pkg.source!r}.\n# Regenerate with `toolbind generate`; write your code in your own modules."
        self.classes = order_by_bases(self.classes, lambda c: c.name, lambda c: c.bases.split(", "))
        exported = sorted([c.name for c in self.classes] + [a.name for a in self.aliases])
        # Union[...] rather than an `A | B | ...` chain: pyright gives up on chains of a few
        # hundred operands ("maximum parse depth exceeded"), and large specs have that many tools.
        union = (
            tools[0].call_class
            if len(tools) == 1
            else f"Union[{', '.join(t.call_class for t in tools)}]"
        )
        toolset_unions = self._toolset_unions(tools)
        tools_extra = (
            ["TOOLSET_CALLS", *(alias for alias, _, _ in toolset_unions)]
            if self.pkg.http is not None
            else []
        )
        ctx: dict[str, Any] = {
            "exported": exported,
            "union": union,
            "toolset_unions": toolset_unions,
            "tools_extra": tools_extra,
            "tools_names": [*TOOLS_NAMES, *tools_extra],
            "all_names": sorted(
                {*exported, "ACTIVITY_PROTOCOLS", *TOOLS_NAMES, *tools_extra}
                | {t.activity_class for t in tools}
                | set(HTTP_NAMES if self.pkg.http is not None else ())
                | set(MCP_NAMES if self.pkg.mcp is not None else ())
            ),
            "http": self.pkg.http is not None,
            "mcp": self.pkg.mcp is not None,
            "header": header,
            "source_literal": in_docstring(py_str(self.pkg.source)),
            "package": self.package,
            "classes": self.classes,
            "aliases": self.aliases,
            "tools": tools,
            "toolsets": self._toolsets(),
        }
        tool_data = self._tool_data(tools)
        files: dict[str, str] = {
            "tools.json": "",  # (made below: a large package's with its index, in one pass)
            "schema.json": self._schema_json(tool_data),
        }
        self._render_file(files, "activities.py", "activities.py.jinja", ctx)
        self.large = len(self.classes) + len(self.aliases) > LAZY_MODELS
        if self.large:
            # (the eager modules are not rendered at all: on a large spec, rendering every
            # model into one module only to drop it cost a fifth of the package's render)
            files.update(self._lazy_models(ctx))
            self._lazy_init(files, ctx)
            files.update(self._lazy_tools(ctx))
            files.update(self._indexed_tools_json(tool_data))
        else:
            models_body = _ENV.get_template("models.py.jinja").render(
                {**ctx, "imports": _IMPORTS_MARK}
            )
            alias_code = "\n".join(a.expr for a in self.aliases)
            tools_body = _ENV.get_template("tools.py.jinja").render(
                {**ctx, "imports": _IMPORTS_MARK}
            )
            files["__init__.py"] = _ENV.get_template("init.py.jinja").render(ctx)
            files["models.py"] = models_body.replace(
                _IMPORTS_MARK, import_block(models_body, alias_code)
            )
            files["tools.py"] = tools_body.replace(_IMPORTS_MARK, import_block(tools_body))
            files["tools.json"] = self._json_file(tool_data)
        if self.pkg.http is not None:
            self._http_module(files, ctx, tools)
        if self.pkg.mcp is not None:
            self._mcp_module(files, ctx, tools)
        return Rendered(
            package=self.package,
            files=files,
            render_scaffold=lambda: _ENV.get_template("scaffold.py.jinja").render(
                {**ctx, "import_path": _IMPORT_MARK}
            ),
            keys=self.keys,
            skipped=self.skipped,
            memo=self.memo,
        )

    def render_model(self, root: SchemaNode, name: str) -> tuple[str, str]:
        """The source of a module holding the model of one schema, and that model's class name.

        Used by ``model_from_schema``: the same definitions, classes and types as a package's
        ``models.py``, for one schema instead of a list of tools. A root that is not an object
        becomes a ``RootModel``.
        """
        for d in self.pkg.definitions:
            self._definition(d)
        if isinstance(root, RefNode) and root.target in self.class_defs:
            cls = self.names.def_names[root.target]
        else:
            cls = self.names.inline_class(naming.class_name(name))
            if is_class_node(root, self.defs):
                self._class(cls, root, base="ToolModel")
            else:
                expr, _ = self._type(root, cls + "Value")
                doc = root.meta.description
                self.classes.append(
                    ClassView(
                        name=cls,
                        bases=f"RootModel[{expr}]",
                        root=expr,
                        doc=docstring(doc) if doc and doc.strip() else None,
                    )
                )
        exported = sorted([c.name for c in self.classes] + [a.name for a in self.aliases])
        ctx: dict[str, Any] = {
            "exported": exported,
            "header": f"# Generated by toolbind {self.version} from a schema given at run time.",
            "source_literal": in_docstring(py_str(self.pkg.source)),
            "classes": self.classes,
            "aliases": self.aliases,
        }
        body = _ENV.get_template("models.py.jinja").render({**ctx, "imports": _IMPORTS_MARK})
        alias_code = "\n".join(a.expr for a in self.aliases)
        return body.replace(_IMPORTS_MARK, import_block(body, alias_code)), cls

    def _lazy_models(self, ctx: dict[str, Any]) -> dict[str, str]:
        """A large package's models, split so that a tool loads only the models it reaches.

        Every class and alias is a node of the graph of the names it uses; each strongly
        connected component becomes one module under ``_models/`` that imports the components it
        depends on (so the modules import each other without cycles), and ``models.py`` loads
        them on first access through a module ``__getattr__``.
        """
        units: dict[str, ClassView | AliasView] = {}
        for unit in [*self.aliases, *self.classes]:
            units[unit.name] = unit
        texts: dict[str, str] = {}
        for name, unit in units.items():
            texts[name] = (
                unit.expr
                if isinstance(unit, AliasView)
                else " ".join(
                    [unit.bases, unit.extra_type or "", unit.root or ""]
                    + [f"{f.annotation} {f.default or ''}" for f in unit.fields]
                )
            )
        tool_views: list[ToolView] = ctx["tools"]
        if not self.memoize:
            uses, inherited, components, chunk_names = self._split_modules(units, texts, tool_views)
        else:
            # the split is a function of exactly these: each unit's name, text and bases (in
            # order) and the models each tool starts from; kept in ``memo`` (``modules``)
            key = self._key(
                "modules",
                _digest(
                    repr(
                        (
                            [
                                (n, texts[n], u.bases if isinstance(u, ClassView) else None)
                                for n, u in units.items()
                            ],
                            [(t.call_class, t.output_class) for t in tool_views],
                        )
                    )
                ),
            )
            was = self.previous_memo.get("modules")
            split = _split_from_json(was, key, units)
            if split is None:
                split = self._split_modules(units, texts, tool_views)
            uses, inherited, components, chunk_names = split
            entry: dict[str, Any] = {
                "key": key,
                "uses": uses,
                "inherited": inherited,
                "components": components,
                "modules": chunk_names,
            }
            # the kept entry itself when it is the same: the driver then keeps the memo's
            # file as it is instead of writing it again (every entry taken as it was)
            self.memo["modules"] = was if entry == was else entry
        module_of = {
            m: module
            for members, module in zip(components, chunk_names, strict=True)
            for m in members
        }
        files: dict[str, str] = {}
        header = ctx["header"]
        classes_in: dict[str, list[ClassView]] = {}
        for c in self.classes:
            classes_in.setdefault(module_of[c.name], []).append(c)
        aliases_in: dict[str, list[AliasView]] = {}
        for a in self.aliases:
            aliases_in.setdefault(module_of[a.name], []).append(a)
        for members, module in zip(components, chunk_names, strict=True):
            member_set = set(members)
            classes = classes_in.get(module, [])
            aliases = aliases_in.get(module, [])
            imports: dict[str, list[str]] = {}
            for m in members:
                for used in uses[m]:
                    if used not in member_set:
                        imports.setdefault(module_of[used], []).append(used)
            cross = "\n".join(
                f"from .{mod} import {', '.join(f'{n} as {n}' for n in sorted(set(names)))}"
                for mod, names in sorted(imports.items())
            )
            rel = f"_models/{module}.py"
            # the module's text is a function of exactly these (the template's inputs, and
            # what its import lines are computed from); a large spec has hundreds of modules,
            # and an edit changes a few
            key = self._key(
                "models.py.jinja",
                header,
                ctx["source_literal"],
                [(a.name, a.value, a.expr) for a in aliases],
                [_class_key(c) for c in classes],
                sorted(member_set),
                [inherited.get(m, "") for m in members],
                cross,
            )
            self.keys[rel] = key
            if self.known.get(rel) == key:
                self.skipped.append(rel)
                continue
            body = _ENV.get_template("models.py.jinja").render(
                {
                    **ctx,
                    "classes": classes,
                    "aliases": aliases,
                    "exported": sorted(member_set),
                    "imports": _IMPORTS_MARK,
                }
            )
            alias_code = "\n".join(a.expr for a in aliases)
            direct = names_in(body) | names_in(alias_code)
            block = imports_for(direct)
            # names only inherited annotations use (re-exported form: pyright sees them used)
            only_inherited = sorted(
                (names_in(" ".join(inherited.get(m, "") for m in members)) - direct)
                & _IMPORT_SOURCES.keys()
            )
            if only_inherited:
                block += "\n" + "\n".join(
                    f"from {_IMPORT_SOURCES[n]} import {n} as {n}" for n in only_inherited
                )
            files[rel] = body.replace(_IMPORTS_MARK, f"{block}\n\n{cross}" if cross else block)
        files["_models/__init__.py"] = (
            f'{header}\n"""The model modules of {self.package}; import them through ``models``."""\n'
        )
        self.model_modules = module_of
        where = sorted(module_of.items())
        self._render_file(
            files,
            "models.py",
            "lazy_models.py.jinja",
            {**ctx, "where": [(py_str(n), py_str(m)) for n, m in where], "where_names": where},
        )
        return files

    def _split_modules(
        self,
        units: dict[str, ClassView | AliasView],
        texts: dict[str, str],
        tool_views: list[ToolView],
    ) -> _Split:
        """What each unit uses, the text it inherits, the units of each module and the
        modules' names (``_lazy_models``)."""
        uses: dict[str, list[str]] = {}
        for name, text in texts.items():
            found = names_in(text)
            uses[name] = sorted(n for n in found if n in units and n != name)
        # pydantic evaluates inherited annotations in the subclass's module: a class also uses
        # what its base classes use.
        inherited: dict[str, str] = {}
        for c in self.classes:
            extra: set[str] = set()
            stack = [b for b in c.bases.split(", ") if b in units]
            seen_bases: set[str] = set()
            while stack:
                base = stack.pop()
                if base in seen_bases:
                    continue
                seen_bases.add(base)
                extra.update(uses[base])
                unit = units[base]
                if isinstance(unit, ClassView):
                    stack.extend(b for b in unit.bases.split(", ") if b in units)
            inherited[c.name] = " ".join(texts[b] for b in sorted(seen_bases))
            if extra:
                uses[c.name] = sorted((set(uses[c.name]) | extra) - {c.name})
        # Units reached by the same set of tools share a module: a tool then loads exactly the
        # models it reaches, and modules import each other without cycles (a unit's
        # dependencies are reached by at least the tools that reach it).
        order = [m for c in strongly_connected(list(units), uses) for m in c]
        reach: dict[str, list[int]] = {n: [] for n in units}
        for i, t in enumerate(tool_views):
            seen: set[str] = set()
            stack = [n for n in (t.call_class, t.output_class) if n in units]
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                reach[n].append(i)
                stack.extend(uses[n])
        groups: dict[tuple[int, ...], list[str]] = {}
        for n in order:
            groups.setdefault(tuple(reach[n]), []).append(n)
        first = {n: i for i, n in enumerate(units)}
        components = sorted(groups.values(), key=lambda members: min(first[m] for m in members))
        modules = naming.Scope(taken={"__init__"})
        chunk_names = [
            modules.claim("m_" + naming.snake_case(members[0])[:40]) for members in components
        ]
        return uses, inherited, components, chunk_names

    def _key(self, *parts: object) -> str:
        """A digest of ``parts`` and of what every file depends on (toolbind's version, the
        templates' text and the backend's options)."""
        text = repr((self.version, _TEMPLATES_DIGEST, self.format_assertion, self.package, parts))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def _keyed(self, rel: str, *parts: object) -> bool:
        """Record ``rel``'s key (a digest of ``parts``: everything its text is made from);
        False when ``known`` has that key — ``rel`` is then skipped, not made again."""
        key = self._key(rel, parts)
        self.keys[rel] = key
        if self.known.get(rel) == key:
            self.skipped.append(rel)
            return False
        return True

    def _render_file(
        self, files: dict[str, str], rel: str, template: str, context: Mapping[str, Any]
    ) -> str | None:
        """``files[rel]``: ``template`` rendered with ``context``, keyed on the values of the
        context variables it reads (``TEMPLATE_INPUTS``); None (and not in ``files``) when
        skipped."""
        fields = TOOL_FIELDS.get(template)
        if fields is not None:
            tools: list[ToolView] = context["tools"]
            views = [{f: getattr(t, f) for f in fields} for t in tools]
            context = {**context, "tools": views}
        inputs = [(n, context[n]) for n in TEMPLATE_INPUTS[template]]
        if not self._keyed(rel, template, inputs):
            return None
        text = files[rel] = _ENV.get_template(template).render(context)
        return text

    def _lazy_tools(self, ctx: dict[str, Any]) -> dict[str, str]:
        """A large package's ``tools.py``, whose ``TOOLS`` load each tool's models on first use,
        and ``_calls.py`` with the Call union and Response model (every tool's models)."""
        calls_names = sorted({"Call", "CallAdapter", "OutputT", "Response", *ctx["tools_extra"]})

        def where(model: str) -> str:  # a tool's first call imports that module, not ``models``
            module = self.model_modules.get(model)
            return f"_models.{module}:{model}" if module else model

        tools: list[ToolView] = ctx["tools"]
        refs = [(where(t.call_class), where(t.output_class)) for t in tools]
        files: dict[str, str] = {}
        self._render_file(
            files,
            "tools.py",
            "lazy_tools.py.jinja",
            {**ctx, "calls_names": calls_names, "refs": refs},
        )
        calls = self._render_file(
            files, "_calls.py", "calls.py.jinja", {**ctx, "imports": _IMPORTS_MARK}
        )
        if calls is not None:
            files["_calls.py"] = calls.replace(_IMPORTS_MARK, import_block(calls))
        return files

    def _lazy_init(self, files: dict[str, str], ctx: dict[str, Any]) -> None:
        exported: list[str] = ctx["exported"]
        tools: list[ToolView] = ctx["tools"]
        origin = {n: "models" for n in exported}
        origin.update({t.activity_class: "activities" for t in tools})
        origin.update(dict.fromkeys(ctx["tools_names"], "tools"))
        origin["ACTIVITY_PROTOCOLS"] = "activities"
        if self.pkg.http is not None:
            origin.update(dict.fromkeys(HTTP_NAMES, "http"))
        if self.pkg.mcp is not None:
            origin.update(dict.fromkeys(MCP_NAMES, "mcp"))
        by_module: dict[str, list[str]] = {}
        for n, m in sorted(origin.items()):
            by_module.setdefault(m, []).append(n)
        self._render_file(
            files,
            "__init__.py",
            "lazy_init.py.jinja",
            {
                **ctx,
                "by_module": sorted(by_module.items()),
                "origin": [(py_str(n), py_str(m)) for n, m in sorted(origin.items())],
            },
        )

    def _http_module(
        self, files: dict[str, str], ctx: dict[str, Any], tools: list[ToolView]
    ) -> None:
        """``http.py``: the ``HttpApi`` value and a typed sync + async Activity per tool."""
        api = self.pkg.http
        assert api is not None
        # keyed on what the template's inputs are made from (HTTP_TEMPLATE_SOURCES): the API
        # (its generated repr names every field) and the fields of the tools' views read below
        made_from = [(n, ctx[n]) for n in ("header", "source_literal")]
        tool_fields = [
            (t.name, t.name_literal, t.call_class, t.output_class, t.errors, t.provider_name)
            for t in tools
        ]
        api_repr = repr(api)
        if self.large and self._keyed(API_FILE, api_repr):
            # a large package's API is data in http.json: as one Python expression it was most
            # of a type checker's time over the package (``runtime._package_json``)
            files[API_FILE] = api_to_json(api)
        if not self._keyed(
            "http.py", "http.py.jinja", made_from, api_repr, tool_fields, self.large
        ):
            return
        used: set[str] = {"HttpCaller"}
        if self.large:
            used |= {"HttpApi", "load_api"}
            api_expr = None
        else:
            api_expr = _py_value(api, used)
        methods = naming.Scope(
            taken=set(naming.RESERVED_IDENTIFIERS) | {"client", "activities", "async_activities"}
        )
        views: list[dict[str, Any]] = []
        for t in tools:
            op = api.operations[t.name]
            method = methods.claim(naming.function_name(t.name), original=t.name)
            amethod = methods.claim("a" + method.rstrip("_"), original=t.name)
            doc = f"{op.method} {op.path}" + (" (deprecated)" if op.deprecated else "")
            views.append(
                {
                    "name_literal": t.name_literal,
                    "call_class": t.call_class,
                    "output_class": t.output_class,
                    "errors": t.errors,
                    "method": method,
                    "amethod": amethod,
                    "doc": docstring(f"{doc}: {t.provider_name}, sync."),
                    "adoc": docstring(f"{doc}: {t.provider_name}, async."),
                }
            )
        operations = [
            (
                py_str(name),
                py_str(op.method),
                py_str(op.path),
                py_str(op.operation_id) if op.operation_id is not None else "None",
            )
            for name, op in api.operations.items()
        ]
        files["http.py"] = _ENV.get_template("http.py.jinja").render(
            {
                **ctx,
                "tools": views,
                "api": api_expr,
                "http_imports": ", ".join(sorted(used)),
                "operations": operations,
            }
        )

    def _mcp_module(
        self, files: dict[str, str], ctx: dict[str, Any], tools: list[ToolView]
    ) -> None:
        """``mcp.py``: the servers, and a typed async Activity per tool calling its server."""
        source = self.pkg.mcp
        assert source is not None
        owner = dict(source.tool_servers)
        methods = naming.Scope(
            taken=set(naming.RESERVED_IDENTIFIERS) | {"connections", "async_activities", "aclose"}
        )
        views: list[dict[str, Any]] = []
        for spec, t in zip(self.pkg.tools, tools, strict=True):
            method = methods.claim(naming.function_name(t.name), original=t.name)
            views.append(
                {
                    "name_literal": t.name_literal,
                    "call_class": t.call_class,
                    "output_class": t.output_class,
                    "structured": spec.output is not None,
                    "server": py_str(owner[spec.name]),
                    "method": method,
                    "doc": docstring(f"{t.provider_name} on MCP server {owner[spec.name]!r}."),
                }
            )
        servers = [thaw(s) for s in source.servers]
        self._render_file(
            files,
            "mcp.py",
            "mcp.py.jinja",
            {
                **ctx,
                "tools": views,
                "servers": repr(servers),
                "tool_servers": [(py_str(n), py_str(s)) for n, s in source.tool_servers],
            },
        )

    def _toolset_unions(self, tools: list[ToolView]) -> list[tuple[str, str, str]]:
        """(alias, union expression, toolset literal) of each toolset with its own Call union."""
        members: dict[str, list[str]] = {}
        for tool, view in zip(self.pkg.tools, tools, strict=True):
            for s in tool.toolsets:
                if s in self.names.toolset_unions:
                    members.setdefault(s, []).append(view.call_class)
        out: list[tuple[str, str, str]] = []
        for s, classes in sorted(members.items()):
            expr = (
                classes[0]
                if len(classes) == 1
                else f'Annotated[Union[{", ".join(classes)}], Field(discriminator="tool"), ToolTag]'
            )
            out.append((self.names.toolset_unions[s], expr, py_str(s)))
        return out

    def _toolsets(self) -> list[tuple[str, list[str]]]:
        """Each toolset's tools in the order its spec gives them (a BFCL record's function list),
        else in the package's order."""
        sets: dict[str, list[tuple[int, int, str]]] = {}
        for order, tool in enumerate(self.pkg.tools):
            for k, s in enumerate(tool.toolsets):
                pos = tool.toolset_positions[k] if k < len(tool.toolset_positions) else order
                sets.setdefault(s, []).append((pos, order, tool.name))
        return [(py_str(k), [py_str(n) for *_, n in sorted(v)]) for k, v in sorted(sets.items())]

    def _tool_data(self, tools: list[ToolView]) -> dict[str, Any]:
        """``tools.json``'s content: each tool's schemas and metadata, and the shared ``$defs``."""
        entries: list[dict[str, Any]] = []
        for tool, view in zip(self.pkg.tools, tools, strict=True):
            entry: dict[str, Any] = {
                "name": tool.name,
                "provider_name": view.provider_name,
                "source": str(tool.loc),
                "parameters": self.emitter.emit(tool.params),
                "output_schema": self.emitter.emit(tool.output)
                if tool.output is not None
                else None,
            }
            for key, value in (
                ("description", tool.description),
                ("title", tool.title),
                ("activity", tool.activity or (tool.name if tool.execution else None)),
                ("execution_type", tool.execution_type),
                ("visible", tool.visible),
                ("execution", thaw(tool.execution) if tool.execution else None),
                ("display", thaw(tool.display) if tool.display else None),
                ("annotations", thaw(tool.annotations) if tool.annotations else None),
                ("original_name", tool.original_name),
            ):
                if value is not None:
                    entry[key] = value
            if tool.extensions:
                entry["extensions"] = {
                    wire: self.emitter.emit(node) for wire, node in tool.extensions
                }
                if tool.extensions_required:
                    entry["extensions_required"] = list(tool.extensions_required)
            if tool.requires_approval:
                entry["requires_approval"] = True
            if tool.toolsets:
                entry["toolsets"] = list(tool.toolsets)
            if tool.deprecated:
                entry["deprecated"] = True
            entries.append(entry)
        # Subschemas repeated across tools (OpenAPI's pagination parameters, inline bodies)
        # are written once, like the spec's own components.
        roots: list[Any] = [e["parameters"] for e in entries] + [
            e["output_schema"] for e in entries if e["output_schema"] is not None
        ]
        defs, roots = self._shared(roots)
        outputs = iter(roots[len(entries) :])
        for entry, parameters in zip(entries, roots, strict=False):
            entry["parameters"] = parameters
            if entry["output_schema"] is not None:
                entry["output_schema"] = next(outputs)
        return {"$defs": defs, "tools": entries}

    def _shared(self, roots: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """The definitions' schemas, and ``share_repeated`` over them and the tools' schemas
        (``roots``); then only the definitions the tools' schemas reach (one only an error
        response uses is a model in models.py, never a schema the LLM or the registry reads).

        A large package's result is kept in ``memo`` (``shared``) with its key: what the
        definitions' schemas are made from (the definitions' key, ``_definitions``; else the
        schemas as emitted), the tools' schemas as emitted (JSON, in order) and the class names
        taken before (the shared definitions are named in that scope). With the same key, the
        kept result is taken (the definitions are not emitted) and its names are claimed again
        in order (the same names, the same scope after; the scope is left as it was if they
        are not)."""
        hints: list[str] = []

        def claim(hint: str) -> str:
            hints.append(hint)
            return self.names.inline_class(naming.class_name(hint))

        defs: dict[str, Any] | None = None
        key: str | None = None
        if self.memoize:
            made_from = emitted = None
            try:
                if self.definitions_key is None:
                    defs = self._emit_definitions()
                    made_from = json.dumps(defs, ensure_ascii=False, allow_nan=False)
                else:  # (the schemas are a function of the definitions and their names)
                    made_from = self.definitions_key
                emitted = json.dumps(roots, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError):  # (the emitter writes JSON values only)
                pass
            if made_from is not None and emitted is not None:
                key = self._key(
                    "shared", _digest(made_from), _digest(emitted), sorted(self.names.classes.taken)
                )
                kept = self._kept_shared(key, len(roots))
                if kept is not None:
                    return kept
        if defs is None:
            defs = self._emit_definitions()
        defs, roots = share_repeated(defs, roots, claim)
        reached = reachable_defs(roots, defs)
        defs = {name: schema for name, schema in defs.items() if name in reached}
        if key is not None:
            self.memo["shared"] = {
                "key": key,
                "hints": hints,
                "claimed": sorted(self.names.classes.taken),
                "defs": defs,
                "roots": roots,
            }
        return defs, roots

    def _emit_definitions(self) -> dict[str, Any]:
        return {
            self.names.def_names[d.key]: self.emitter.emit(d.node) for d in self.pkg.definitions
        }

    def _kept_shared(self, key: str, n_roots: int) -> tuple[dict[str, Any], list[Any]] | None:
        """The previous ``_shared`` result if it was made from ``key`` (its names claimed)."""
        kept = self.previous_memo.get("shared")
        if not isinstance(kept, dict):
            return None
        entry = cast("dict[str, Any]", kept)
        defs, roots, hints = entry.get("defs"), entry.get("roots"), entry.get("hints")
        if (
            entry.get("key") != key
            or not isinstance(defs, dict)
            or not isinstance(roots, list)
            or len(cast("list[Any]", roots)) != n_roots
            or not isinstance(hints, list)
            or not all(isinstance(h, str) for h in cast("list[Any]", hints))
        ):
            return None
        scope = self.names.classes
        taken, renames = set(scope.taken), list(scope.renames)
        for hint in cast("list[str]", hints):
            self.names.inline_class(naming.class_name(hint))
        if sorted(scope.taken) != entry.get("claimed"):
            scope.taken, scope.renames = taken, renames  # (not the scope it was made in)
            return None
        self.memo["shared"] = entry
        return cast("dict[str, Any]", defs), cast("list[Any]", roots)

    def _json_file(self, data: dict[str, Any]) -> str:
        header = f"DO NOT EDIT: generated by toolbind {self.version} from {self.pkg.source}."
        return dumps_indented({"$comment": header, **data}, 1) + "\n"

    def _indexed_tools_json(self, data: dict[str, Any]) -> dict[str, str]:
        """A large package's ``tools.json`` (the same text) and ``tools_index.json``: each tool's
        entry with its ``parameters`` and ``output_schema`` replaced by their byte spans in
        ``tools.json``, and each shared definition's span. Registering the package reads the
        index alone; a tool's schemas (and the definitions they reach) are parsed from their
        spans when first used. The index names ``tools.json``'s size and CRC-32: a
        ``tools.json`` changed since is read whole, as if there were no index."""
        header = f"DO NOT EDIT: generated by toolbind {self.version} from {self.pkg.source}."
        doc = {"$comment": header, **data}

        def wanted(path: tuple[str | int, ...]) -> bool:
            return (len(path) == 2 and path[0] == "$defs") or (
                len(path) == 3 and path[2] in ("parameters", "output_schema")
            )

        text, spans = dumps_indented_spans(doc, 1, 3, wanted, self._previous_schema_texts(data))
        text += "\n"
        if not spans:  # a value only json.dumps writes: no index, the file is read whole
            return {"tools.json": text}
        raw = text.encode("utf-8")
        entries: list[str] = []
        for n, entry in enumerate(cast("list[dict[str, Any]]", data["tools"])):
            indexed = dict(entry)
            for key in ("parameters", "output_schema"):
                span = spans.get(("tools", n, key))
                indexed[key] = list(span) if span is not None else None
            entries.append(json.dumps(indexed, ensure_ascii=False))
        defs: list[str | int] = []  # flat: [name, start, end, ...], one list for the reader
        for name in data["$defs"]:
            defs.extend((name, *spans[("$defs", name)]))
        head = {
            "$comment": f"{header} Where each schema of tools.json is: UTF-8 byte spans [start, end).",
            "tools.json": {"bytes": len(raw), "crc32": zlib.crc32(raw)},
            "$defs": defs,
        }
        index = (
            json.dumps(head, ensure_ascii=False)[:-1]
            + ', "tools": [\n'
            + ",\n".join(entries)
            + "\n]}\n"
        )
        return {"tools.json": text, "tools_index.json": index}

    def _previous_schema_texts(self, data: dict[str, Any]) -> dict[JsonPath, str]:
        """The texts of ``tools.json``'s schemas (each definition, each tool's parameters and
        output) as the previous ``tools.json`` holds them, when they are the same values: the
        shared-subschema pass was taken from the memo (``_shared``), and the previous
        ``tools.json`` and its index are as that pass's run wrote them (the index names the
        file's size and CRC-32). Each tool's schemas are found by their place in that pass's
        list (every tool's parameters, then the outputs there are); empty when unsure."""
        shared = self.memo.get("shared")
        if (
            self.previous is None
            or shared is None
            or shared is not self.previous_memo.get("shared")
        ):
            return {}
        old_text, old_index = self.previous("tools.json"), self.previous("tools_index.json")
        if old_text is None or old_index is None:
            return {}
        raw = old_text.encode("utf-8")
        try:
            index = json.loads(old_index)
            if index["tools.json"] != {"bytes": len(raw), "crc32": zlib.crc32(raw)}:
                return {}
            flat = cast("list[Any]", index["$defs"])
            old_defs = {
                _text(flat[i]): (_span(flat[i + 1]), _span(flat[i + 2]))
                for i in range(0, len(flat), 3)
            }
            old_entries = cast("list[dict[str, Any]]", index["tools"])
            old_roots = [_pair(e["parameters"]) for e in old_entries] + [
                _pair(e["output_schema"]) for e in old_entries if e["output_schema"] is not None
            ]
        except (KeyError, TypeError, ValueError, IndexError):
            return {}
        entries = cast("list[dict[str, Any]]", data["tools"])
        paths: list[JsonPath] = [("tools", n, "parameters") for n in range(len(entries))] + [
            ("tools", n, "output_schema")
            for n, e in enumerate(entries)
            if e["output_schema"] is not None
        ]
        if len(paths) != len(old_roots) or len(old_roots) != len(shared["roots"]):
            return {}
        given: dict[JsonPath, str] = {}
        for path, (start, end) in zip(paths, old_roots, strict=True):
            given[path] = raw[start:end].decode("utf-8")
        for name in cast("dict[str, Any]", data["$defs"]):
            span = old_defs.get(name)
            if span is None:
                return {}
            given[("$defs", name)] = raw[span[0] : span[1]].decode("utf-8")
        return given

    def _schema_json(self, tool_data: dict[str, Any]) -> str:
        """The composed LLM-facing schema of every tool (tool-system.md "Schema Composition").

        Composed with no registered Activities: a tool is explicit when its spec names an
        Activity, carries an execution config or runs elsewhere (``never_latent``: an MCP tool runs
        on its server), latent otherwise; output is free text.
        """
        tools = [ToolSchema.from_entry(t, tool_data["$defs"]) for t in tool_data["tools"]]
        explicit = {t["name"] for t in tool_data["tools"] if never_latent(t)}
        return self._json_file(compose_schema(tools, activities=explicit))

    # -- definitions and tools ---------------------------------------------------------------

    def _definitions(self) -> None:
        """The views of every definition, in order (classes, aliases, the class names they
        claim and what they report).

        A large package's (``RENDER_MEMO_MIN``) are kept in ``memo`` (``definitions``) with
        their key: the definitions (their generated reprs name every field), their class names
        and the names taken before them — all that ``_definition`` reads (the views of a definition depend
        on the definitions it references). With the same key the kept views are taken, their
        names claimed and their diagnostics reported again, as making them would."""
        if not self.memoize:
            for d in self.pkg.definitions:
                self._definition(d)
            return
        scope = self.names.classes
        key = self.definitions_key = self._key(
            "definitions",
            _digest(repr(self.pkg.definitions)),
            sorted(self.names.def_names.items()),
            sorted(scope.taken),
        )
        kept = _views_from_json(self.previous_memo.get("definitions"), key)
        if kept is not None:
            classes, aliases, taken, renames, diagnostics = kept
            self.classes.extend(classes)
            self.aliases.extend(aliases)
            scope.taken.update(taken)
            scope.renames.extend(renames)
            self.diags.items.extend(diagnostics)
            self.memo["definitions"] = self.previous_memo["definitions"]
            return
        before = set(scope.taken)
        n_renames, n_diags = len(scope.renames), len(self.diags.items)
        for d in self.pkg.definitions:
            self._definition(d)
        self.memo["definitions"] = {
            "key": key,
            "classes": [
                [
                    c.name,
                    c.bases,
                    c.doc,
                    c.config,
                    c.extra_type,
                    c.root,
                    [[f.name, f.annotation, f.default, f.override] for f in c.fields],
                ]
                for c in self.classes
            ],
            "aliases": [[a.name, a.value, a.expr] for a in self.aliases],
            "taken": sorted(scope.taken - before),
            "renames": [[r.original, r.chosen, r.reason] for r in scope.renames[n_renames:]],
            "diagnostics": [_diagnostic_row(d) for d in self.diags.items[n_diags:]],
        }

    def _definition(self, d: Definition) -> None:
        name = self.names.def_names[d.key]
        if d.key in self.class_defs:
            self._class(name, d.node, base="ToolModel")
            return
        expr, _ = self._type(d.node, name)
        self.aliases.append(AliasView(name=name, value=py_str(expr), expr=expr))

    def _tool(self, tool: ToolSpec, index: int) -> ToolView:
        call_cls, out_cls, act_cls, fn = self.names.tool_names[tool.name]
        self._output(out_cls, tool.output)
        meta_fields: list[FieldView] = [
            FieldView(
                "tool",
                f"Literal[{py_str(tool.name)}]",
                f"Field(default={py_str(tool.name)}, alias='_tool')",
            ),
            FieldView(
                "activity",
                "Annotated[JsonStr | None, NotNull]",
                "Field(default=None, alias='_activity')",
            ),
            *self._extension_fields(call_cls, tool),
            FieldView(
                "reasoning_for_call",
                "Annotated[JsonStr | None, NotNull]",
                "Field(default=None, alias='_reasoningForCall', description='Why the model made this call.')",
            ),
            FieldView(
                "output",
                # NotNull: None means absent, so dumps leave it out whatever `model_fields_set`
                # says (an extra key `output` beside open parameters marks it). An Output that
                # admits null (or any JSON: no schema) takes a given `_output: null` itself,
                # as `Output(None)`; any other Output refuses it.
                f"Annotated[{out_cls} | None, NotNull]",
                "Field(default=None, alias='_output')",
            ),
        ]
        doc = tool.description or tool.title
        self._class(call_cls, tool.params, base="ToolCall", meta_fields=meta_fields, doc=doc)
        provider = self.names.provider_names[tool.name]
        return ToolView(
            name=tool.name,
            name_literal=py_str(tool.name),
            provider_name=provider,
            provider_literal=py_str(provider),
            call_class=call_cls,
            output_class=out_cls,
            activity_class=act_cls,
            function_name=fn,
            context_activity_class=self.names.context_activity_names[tool.name],
            doc=docstring(doc) if doc and doc.strip() else None,
            description_literal=py_str(doc or ""),
            index=index,
            errors=tuple(
                (py_str(status), self._error(call_cls, status, node))
                for status, node in tool.errors
            ),
        )

    def _extension_fields(self, call_cls: str, tool: ToolSpec) -> list[FieldView]:
        """The Call fields of the RFC's extensions the tool declares (``_outputPath`` → a field
        ``output_path`` typed by its schema); absent stays absent (None, left out of dumps)."""
        names = dict((wire, py) for py, wire in META_FIELD_NAMES)
        out: list[FieldView] = []
        for wire, node in tool.extensions:
            annotation, _ = self._type(node, call_cls + naming.class_name(wire.lstrip("_")))
            out.append(
                FieldView(
                    names[wire],
                    f"Annotated[{annotation} | None, NotNull]",
                    f"Field(default=None, alias={py_str(wire)})",
                )
            )
        return out

    def _error(self, call_cls: str, status: str, node: SchemaNode) -> str:
        """The model a failed call's body is read into: the schema's own class when it names
        one (most specs share one ``Error``), else a new ``<Tool>Error<status>`` model."""
        if isinstance(node, RefNode) and node.target in self.class_defs:
            return self.names.def_names[node.target]
        suffix = "" if status == "default" else status.upper().replace("XX", "xx")
        name = self.names.inline_class(call_cls.removesuffix("Call") + "Error" + suffix)
        self._output(name, node)
        return name

    def _output(self, name: str, node: SchemaNode | None) -> None:
        if node is None:
            self.classes.append(
                ClassView(
                    name=name,
                    bases="RootModel[JsonValue]",
                    root="JsonValue",
                    doc=docstring("Any JSON value: the spec declares no output schema."),
                    config="defer_build=True",
                )
            )
            return
        if isinstance(node, ObjectNode):
            self._class(name, node, base="ToolModel")
            return
        if isinstance(node, RefNode) and node.target in self.class_defs:
            # A subclass, not an alias: the Output model is a class like every other tool's.
            target = self.names.def_names[node.target]
            self.classes.append(ClassView(name=name, bases=target))
            return
        expr, _ = self._type(node, name)
        doc = node.meta.description
        self.classes.append(
            ClassView(
                name=name,
                bases=f"RootModel[{expr}]",
                root=expr,
                doc=docstring(doc) if doc and doc.strip() else None,
                config="defer_build=True",
            )
        )

    def _class(
        self,
        name: str,
        node: SchemaNode,
        *,
        base: str,
        meta_fields: list[FieldView] | None = None,
        doc: str | None = None,
    ) -> None:
        bases = [base]
        obj: ObjectNode
        if isinstance(node, AllOfNode):
            parents, inline = self._all_of_parts(node)
            bases = parents + ([] if parents and base == "ToolModel" else [base])
            obj = inline
        elif isinstance(node, ObjectNode):
            obj = node
        else:  # pragma: no cover - guarded by is_class_node
            raise AssertionError(node.kind)
        doc = doc or obj.meta.description or node.meta.description
        view = ClassView(
            name=name, bases=", ".join(bases), doc=docstring(doc) if doc and doc.strip() else None
        )
        self.classes.append(view)  # before fields: nested classes follow their parent
        # Meta fields first, with fixed names (the Call union discriminates on ``tool``); a
        # parameter that wants one of those names gets a suffix. Data is read by JSON name only
        # and Python construction by Python name only, so the two never mix fields up.
        scope = naming.Scope(taken=set())
        for f in meta_fields or []:
            scope.claim(f.name)
            view.fields.append(f)
        apart = False  # see KeepExtrasApart
        inherited = self._inherited(node) if isinstance(node, AllOfNode) else {}
        shared = self._shared_by_parents(node, obj) if isinstance(node, AllOfNode) else ()
        for prop in (*obj.properties, *shared):
            # allOf restates a parent's property: pydantic validates the subclass's field only,
            # so the parents' schemas of it are checked on the value too (allOf: all hold).
            parents = [
                s
                for s in inherited.get(prop.name, ())
                if s != prop.schema and not isinstance(s, AnyNode)
            ]
            f, renamed_optional = self._field(name, prop, scope, parents)
            if prop.name in inherited:
                # pyright reports the narrowed field as an incompatible override
                f.override = True
            view.fields.append(f)
            apart = apart or renamed_optional
        for r in scope.renames:
            self.diags.note(
                obj.meta.loc,
                f"property {r.original!r} of {name} is the Python field {r.chosen!r} ({r.reason})",
            )
        if isinstance(obj.additional, NeverNode):
            view.config = 'extra="forbid"'
        elif apart:
            view.bases += ", KeepExtrasApart"
        if obj.additional is not None and not isinstance(obj.additional, NeverNode):
            extra_type, _ = self._type(obj.additional, name + "Extra")
            view.extra_type = f"dict[str, {extra_type}]"

    def _inherited(self, node: AllOfNode) -> dict[str, list[SchemaNode]]:
        """JSON name → schemas, of the properties the parent classes of ``node`` declare
        (transitively, each parent's own schema of the property)."""
        schemas: dict[str, list[SchemaNode]] = {}
        stack = [p.target for p in node.parts if isinstance(p, RefNode)]
        seen: set[str] = set()
        while stack:
            key = stack.pop()
            if key in seen or key not in self.class_defs:
                continue
            seen.add(key)
            target = self.defs[key].node
            declared: list[Property] = []
            if isinstance(target, ObjectNode):
                declared.extend(target.properties)
            elif isinstance(target, AllOfNode):
                for part in target.parts:
                    if isinstance(part, RefNode):
                        stack.append(part.target)
                    elif isinstance(part, ObjectNode):
                        declared.extend(part.properties)
            for p in declared:
                found = schemas.setdefault(p.name, [])
                if p.schema not in found:
                    found.append(p.schema)
        return schemas

    def _shared_by_parents(self, node: AllOfNode, inline: ObjectNode) -> list[Property]:
        """Properties two parent classes declare differently (and ``node`` does not restate):
        restated here, required if any parent requires it, every parent's schema checked.
        Left to the bases, pydantic took the first parent's alone (a real email API's
        ``FullSegment``: ``name`` optional in one parent, required in the other, was optional)
        and pyright refused the class ("Base classes ... define variable in incompatible way")."""
        own = {p.name for p in inline.properties}
        found: dict[str, list[Property]] = {}
        keys = [
            p.target for p in node.parts if isinstance(p, RefNode) and p.target in self.class_defs
        ]
        for key in dict.fromkeys(keys):
            lineage: dict[str, Property] = {}
            for k in (key, *sorted(self._ancestors(key))):
                target = self.defs[k].node
                parts = target.parts if isinstance(target, AllOfNode) else (target,)
                for part in parts:
                    if isinstance(part, ObjectNode):
                        for prop in part.properties:
                            lineage.setdefault(prop.name, prop)
            for name, prop in lineage.items():
                if name not in own and prop not in found.setdefault(name, []):
                    found[name].append(prop)
        return [
            Property(name=name, schema=props[0].schema, required=any(p.required for p in props))
            for name, props in found.items()
            if len(props) > 1
        ]

    def _ancestors(self, key: str) -> set[str]:
        """The class definitions ``key``'s class inherits from, transitively (its allOf refs)."""
        found: set[str] = set()
        stack = [key]
        while stack:
            target = self.defs[stack.pop()].node
            if isinstance(target, AllOfNode):
                for part in target.parts:
                    if (
                        isinstance(part, RefNode)
                        and part.target in self.class_defs
                        and part.target not in found
                    ):
                        found.add(part.target)
                        stack.append(part.target)
        return found

    def _all_of_parts(self, node: AllOfNode) -> tuple[list[str], ObjectNode]:
        keys = [
            p.target for p in node.parts if isinstance(p, RefNode) and p.target in self.class_defs
        ]
        # A parent that another parent already extends adds nothing, and beside it gives no
        # consistent MRO: a real email API's ``allOf: [Base, Common]`` with ``Common: allOf:
        # [Base, ...]`` was ``class C(Base, Common)`` — a TypeError when the model loaded.
        lineage = {k: self._ancestors(k) for k in dict.fromkeys(keys)}
        parents: list[str] = []
        for key in lineage:
            if not any(key in up and other not in lineage[key] for other, up in lineage.items()):
                parents.append(self.names.def_names[key])
        props: list[Property] = []
        additional: SchemaNode | None = None
        for part in node.parts:
            if isinstance(part, ObjectNode):
                props.extend(part.properties)
                additional = part.additional if part.additional is not None else additional
        return parents, ObjectNode(meta=node.meta, properties=tuple(props), additional=additional)

    def _field(
        self,
        owner: str,
        prop: Property,
        scope: naming.Scope,
        parents: Sequence[SchemaNode] = (),
    ) -> tuple[FieldView, bool]:
        """The field, and whether it is renamed and optional with a value that doesn't tell
        absence (nullable or defaulted): such a class needs ``KeepExtrasApart``.

        ``parents``: the schemas parent classes give the same property, checked on the value.
        """
        fname = scope.claim(naming.field_name(prop.name), original=prop.name)
        hint = owner + naming.pascal_case(prop.name)
        expr, nullable = self._type(prop.schema, hint)
        if parents:
            checks = [self._sub_schema(p, f"{hint}Inherited{i + 1}") for i, p in enumerate(parents)]
            expr = f"Annotated[{expr}, AllOf({', '.join(checks)})]"
            nullable = nullable and all(admits_null(p, self.defs, set()) for p in parents)
        args: list[str] = []
        default = self._default(prop) if not prop.required else None
        ambiguous = False
        if not prop.required:
            if default is not None:
                args.append(f"default={default}")
                ambiguous = True
            else:
                args.append("default=None")
                if not nullable:
                    expr = f"Annotated[{expr} | None, NotNull]"
                ambiguous = nullable
        if fname != prop.name:
            args.append(f"alias={py_str(prop.name)}")
        desc = prop.schema.meta.description
        if desc:
            args.append(f"description={py_str(desc)}")
        rhs = f"Field({', '.join(args)})" if args else None
        return FieldView(fname, expr, rhs), ambiguous and fname != prop.name

    def _default(self, prop: Property) -> str | None:
        """A Python default for a scalar JSON default that already fits the field's type."""
        raw = prop.schema.meta.default
        if raw is None:
            return None
        value = thaw(raw)
        node = prop.schema
        fits = _scalar_default_fits(node, value)
        return py_literal(value) if fits else None

    # -- types -------------------------------------------------------------------------------

    def _type(self, node: SchemaNode, hint: str) -> tuple[str, bool]:
        """The annotation for ``node`` and whether it admits null."""
        match node:
            case AnyNode():
                return "JsonValue", True
            case NeverNode():
                return "Nothing", False
            case NullNode():
                return "None", True
            case BooleanNode():
                return "JsonBool", False
            case IntegerNode():
                return self._integer_type(node)
            case NumberNode():
                return self._number_type(node)
            case StringNode():
                return self._string_type(node)
            case ArrayNode():
                return self._array_type(node, hint)
            case ObjectNode():
                return self._object_type(node, hint)
            case LiteralNode():
                return self._literal_type(node)
            case UnionNode():
                return self._union_type(node, hint)
            case AllOfNode():
                return self._all_of_type(node, hint)
            case RefNode():
                return self._ref_type(node)
            case CheckedNode():
                return self._checked_type(node, hint)

    def _integer_type(self, node: IntegerNode) -> tuple[str, bool]:
        b = node.bounds
        args = _bound_args(b)
        extra: list[str] = []
        if b.multiple_of is not None:
            if isinstance(b.multiple_of, int):
                args.append(f"multiple_of={b.multiple_of!r}")
            else:
                extra.append(f"MultipleOf({b.multiple_of!r})")
        meta = ([f"Field({', '.join(args)})"] if args else []) + extra
        return (f"Annotated[JsonInt, {', '.join(meta)}]" if meta else "JsonInt"), False

    def _number_type(self, node: NumberNode) -> tuple[str, bool]:
        b = node.bounds
        args = _bound_args(b)
        meta = [f"Bounds({', '.join(args)})"] if args else []
        if b.multiple_of is not None:
            meta.append(f"MultipleOf({b.multiple_of!r})")
        return (f"Annotated[JsonNumber, {', '.join(meta)}]" if meta else "JsonNumber"), False

    def _string_type(self, node: StringNode) -> tuple[str, bool]:
        args = [
            f"{k}={v!r}"
            for k, v in (("min_length", node.min_length), ("max_length", node.max_length))
            if v is not None
        ]
        meta = [f"Field({', '.join(args)})"] if args else []
        if node.pattern is not None:
            meta.append(f"Pattern({py_str(node.pattern)})")
        if self.format_assertion and node.format in FORMATS:
            meta.append(f"Format({py_str(node.format)})")
        elif self.format_assertion and node.format is not None:
            self.diags.warning(  # the spec says an unknown format is ignored: never in silence
                node.meta.loc.child("format"),
                f"format {node.format!r} is not one toolbind asserts; it is not checked",
                "one of " + ", ".join(sorted(FORMATS)),
            )
        return (f"Annotated[JsonStr, {', '.join(meta)}]" if meta else "JsonStr"), False

    def _array_type(self, node: ArrayNode, hint: str) -> tuple[str, bool]:
        if node.prefix_items or node.items is None:
            item = "JsonValue"
        else:
            item, _ = self._type(node.items, hint + "Item")
        args = [
            f"{k}={v!r}"
            for k, v in (("min_length", node.min_items), ("max_length", node.max_items))
            if v is not None
        ]
        meta = [f"Field({', '.join(args)})"] if args else []
        if node.unique_items:
            meta.append("UniqueItems()")
        if node.prefix_items:
            # Positions are optional in JSON Schema (a shorter array is valid), so a
            # tuple type can't say it: each position is checked against its schema.
            positions = [
                self._sub_schema(p, f"{hint}Item{i + 1}") for i, p in enumerate(node.prefix_items)
            ]
            rest = self._sub_schema(node.items, f"{hint}Rest") if node.items is not None else "None"
            meta.append(f"PrefixItems(({''.join(p + ', ' for p in positions)}), rest={rest})")
        expr = f"list[{item}]"
        return (f"Annotated[{expr}, {', '.join(meta)}]" if meta else expr), False

    def _object_type(self, node: ObjectNode, hint: str) -> tuple[str, bool]:
        if node.properties or isinstance(node.additional, NeverNode):
            name = self.names.inline_class(hint)
            self._class(name, node, base="ToolModel")
            return name, False
        value = "JsonValue"
        if node.additional is not None:
            value, _ = self._type(node.additional, hint + "Value")
        args = [
            f"{k}={v!r}"
            for k, v in (
                ("min_length", node.min_properties),
                ("max_length", node.max_properties),
            )
            if v is not None
        ]
        expr = f"dict[str, {value}]"
        return (f"Annotated[{expr}, Field({', '.join(args)})]" if args else expr), False

    def _literal_type(self, node: LiteralNode) -> tuple[str, bool]:
        values = [thaw(v) for v in node.values]
        if _literal_ok(node):
            non_null = [v for v in values if v is not None]
            parts: list[str] = []
            if non_null:
                literal = f"Literal[{', '.join(py_literal(v) for v in non_null)}]"
                if any(type(v) is int for v in non_null):
                    literal = f"Annotated[{literal}, IntLiteral]"
                elif any(isinstance(v, bool) for v in non_null):
                    literal = f"Annotated[{literal}, BoolLiteral]"
                parts.append(literal)
            if None in values:
                parts.append("None")
            return " | ".join(parts), None in values
        texts = ", ".join(py_str(v) for v in node.values)
        return f"Annotated[JsonValue, OneOf({texts})]", None in values

    def _union_type(self, node: UnionNode, hint: str) -> tuple[str, bool]:
        exprs: list[str] = []
        per_variant: list[str] = []
        nullable = False
        for i, v in enumerate(node.variants):
            e, n = self._type(v, f"{hint}{_variant_suffix(v, i)}")
            per_variant.append(e)
            nullable = nullable or n
            if e not in exprs:
                exprs.append(e)
        if "JsonValue" in exprs:
            union, nullable = "JsonValue", True
        else:
            if "None" in exprs:  # keep None last, where readers look for it
                exprs.remove("None")
                exprs.append("None")
            union = " | ".join(exprs)
        classes = [
            (v, e)
            for v, e in zip(node.variants, per_variant, strict=True)
            if not isinstance(v, NullNode)
        ]
        tag = tag_property(tuple(v for v, _ in classes), self.defs, self.class_defs)
        if tag is not None and len({e for _, e in classes}) == len(classes):
            # Every variant (but null) is a class requiring ``tag`` with its own string
            # values: at most one can match, whatever the form, and pydantic's tagged
            # union picks it by one key lookup instead of trying every class in turn.
            members = " | ".join(e for _, e in classes)
            tagged = f"Annotated[{members}, Field(discriminator={py_str(tag)})]"
            return (tagged + " | None" if nullable else tagged), nullable
        if (
            node.form == "oneOf"
            and len(node.variants) > 1
            and not mutually_exclusive(node.variants, self.defs)
        ):
            # pydantic takes the best-matching member; oneOf wants exactly one to match.
            # (Variants told apart by a required const/enum property, e.g. a
            # discriminator, can't both match: the union alone is exactly one.)
            names = [self._alias(e, f"{hint}OneOf{i + 1}") for i, e in enumerate(per_variant)]
            return f"Annotated[{union}, ExactlyOne({', '.join(names)})]", nullable
        return union, nullable

    def _all_of_type(self, node: AllOfNode, hint: str) -> tuple[str, bool]:
        if is_class_node(node, self.defs):
            name = self.names.inline_class(hint)
            self._class(name, node, base="ToolModel")
            return name, False
        informative = [p for p in node.parts if not isinstance(p, AnyNode)]
        if not informative:
            return "JsonValue", True
        # The first part gives the Python type; every other part is checked on the value.
        first, nullable = self._type(informative[0], hint)
        if len(informative) == 1:
            return first, nullable
        others = [self._sub_schema(p, f"{hint}AllOf{i + 2}") for i, p in enumerate(informative[1:])]
        return f"Annotated[{first}, AllOf({', '.join(others)})]", nullable

    def _ref_type(self, node: RefNode) -> tuple[str, bool]:
        target = self.defs[node.target]
        name = self.names.def_names[node.target]
        return name, admits_null(target.node, self.defs, set())

    def _checked_type(self, node: CheckedNode, hint: str) -> tuple[str, bool]:
        base, nullable = self._type(node.base, hint)
        return (
            f"Annotated[{base}, {', '.join(self._check(c, hint) for c in node.checks)}]",
            nullable,
        )

    def _alias(self, expr: str, hint: str) -> str:
        """A named alias for a type expression already made (checks resolve it lazily).

        An imported building block (``JsonStr``, ``JsonInt``…) is used as it is; a generated
        class gets an alias, as a check may name a class defined further down the module.
        """
        if expr in _IMPORT_SOURCES:
            return expr
        name = self.names.inline_class(hint)
        self.aliases.append(AliasView(name=name, value=py_str(expr), expr=expr))
        return name

    def _sub_schema(self, node: SchemaNode, hint: str) -> str:
        """The type a check validates a sub-schema against, named through ``_alias``."""
        return self._alias(self._type(node, hint + "Value")[0], hint)

    def _plan(self, plan: EvalPlan, hint: str) -> str:
        """``EvalPlan`` as a ``Plan(...)`` expression, sub-schemas named through ``_alias``."""
        args: list[str] = []
        if plan.properties:
            args.append(f"properties=({''.join(py_str(p) + ', ' for p in plan.properties)})")
        if plan.patterns:
            args.append(f"patterns=({''.join(py_str(p) + ', ' for p in plan.patterns)})")
        if plan.all_properties:
            args.append("all_properties=True")
        if plan.prefix:
            args.append(f"prefix={plan.prefix!r}")
        if plan.all_items:
            args.append("all_items=True")
        if plan.contains is not None:
            args.append(f"contains={self._sub_schema(plan.contains, hint + 'Contains')}")
        if plan.always:
            args.append(f"always=({''.join(self._plan(p, hint) + ', ' for p in plan.always)})")
        if plan.branches:
            pairs = "".join(
                f"({self._sub_schema(node, hint + 'Branch')}, {self._plan(p, hint)}), "
                for node, p in plan.branches
            )
            args.append(f"branches=({pairs})")
        if plan.if_ is not None:
            node, p = plan.if_
            args.append(f"if_=({self._sub_schema(node, hint + 'If')}, {self._plan(p, hint)})")
        if plan.then is not None:
            args.append(f"then={self._plan(plan.then, hint)}")
        if plan.else_ is not None:
            args.append(f"else_={self._plan(plan.else_, hint)}")
        if plan.dependent:
            pairs = "".join(f"({py_str(k)}, {self._plan(p, hint)}), " for k, p in plan.dependent)
            args.append(f"dependent=({pairs})")
        return f"Plan({', '.join(args)})"

    def _check(self, check: Any, hint: str) -> str:
        match check:
            case NotCheck():
                return f"Not({self._sub_schema(check.schema, hint + 'Not')})"
            case ConditionalCheck():
                args = [self._sub_schema(check.if_, hint + "If")]
                if check.then is not None:
                    args.append(f"then={self._sub_schema(check.then, hint + 'Then')}")
                if check.else_ is not None:
                    args.append(f"else_={self._sub_schema(check.else_, hint + 'Else')}")
                return f"IfThenElse({', '.join(args)})"
            case ContainsCheck():
                sub = self._sub_schema(check.schema, hint + "Contains")
                return f"Contains({sub}, min_contains={check.min_contains!r}, max_contains={check.max_contains!r})"
            case DependentRequiredCheck():
                table = ", ".join(
                    f"{py_str(k)}: ({''.join(py_str(n) + ', ' for n in v)})"
                    for k, v in check.requires
                )
                return f"DependentRequired({{{table}}})"
            case DependentSchemasCheck():
                table = ", ".join(
                    f"{py_str(k)}: {self._sub_schema(v, hint + 'If' + naming.pascal_case(k))}"
                    for k, v in check.schemas
                )
                return f"DependentSchemas({{{table}}})"
            case PatternPropertiesCheck():
                table = ", ".join(
                    f"{py_str(k)}: {self._sub_schema(v, hint + 'Pattern')}"
                    for k, v in check.patterns
                )
                additional = (
                    self._sub_schema(check.additional, hint + "Additional")
                    if check.additional is not None
                    else "None"
                )
                declared = "".join(py_str(d) + ", " for d in check.declared)
                return f"PatternProperties({{{table}}}, declared=({declared}), additional={additional})"
            case PropertyNamesCheck():
                return f"PropertyNames({self._sub_schema(check.schema, hint + 'Names')})"
            case UnevaluatedCheck():
                what = "Unevaluated" + check.kind.capitalize()
                sub = self._sub_schema(check.schema, hint + what)
                return f"Unevaluated({check.kind!r}, {sub}, {self._plan(check.plan, hint)})"
            case _:  # pragma: no cover - the Check union is closed
                raise AssertionError(check)


_Split = tuple[dict[str, list[str]], dict[str, str], list[list[str]], list[str]]
"""``PythonBackend._split_modules``: what each unit uses, the text each class inherits, the
units of each module and its name."""


def _kept_for(value: object, key: str) -> dict[str, Any] | None:
    """A memo entry read back from JSON, if it is an object made from ``key``."""
    if not isinstance(value, dict):
        return None
    kept = cast("dict[str, Any]", value)
    return kept if kept.get("key") == key else None


def _split_from_json(
    value: object, key: str, units: Mapping[str, ClassView | AliasView]
) -> _Split | None:
    """The split ``_lazy_models`` kept (``memo``), if made from ``key`` and whole."""
    kept = _kept_for(value, key)
    if kept is None:
        return None
    try:
        uses = {_text(n): [_text(u) for u in used] for n, used in kept["uses"].items()}
        inherited = {_text(n): _text(t) for n, t in kept["inherited"].items()}
        components = [[_text(m) for m in members] for members in kept["components"]]
        names = [_text(m) for m in kept["modules"]]
    except (AttributeError, KeyError, TypeError):
        return None
    members = [m for ms in components for m in ms]
    if (
        len(names) != len(components)
        or sorted(members) != sorted(units)
        or set(uses) != set(units)
        or not all(u in units for used in uses.values() for u in used)
        or not all(isinstance(u, ClassView) for u in (units.get(n) for n in inherited))
    ):
        return None
    return uses, inherited, components, names


_KeptViews = tuple[
    list[ClassView], list[AliasView], list[str], list[naming.Rename], list[Diagnostic]
]


def _views_from_json(value: object, key: str) -> _KeptViews | None:
    """The views ``PythonBackend._definitions`` kept (``memo``), if made from ``key`` and
    whole; else None."""
    kept = _kept_for(value, key)
    if kept is None:
        return None
    try:
        classes = [
            ClassView(
                name=_text(name),
                bases=_text(bases),
                doc=_maybe_text(doc),
                config=_maybe_text(config),
                extra_type=_maybe_text(extra_type),
                root=_maybe_text(root),
                fields=[
                    FieldView(_text(n), _text(a), _maybe_text(v), _flag(o)) for n, a, v, o in fields
                ],
            )
            for name, bases, doc, config, extra_type, root, fields in kept["classes"]
        ]
        aliases = [
            AliasView(name=_text(n), value=_text(v), expr=_text(e)) for n, v, e in kept["aliases"]
        ]
        taken = [_text(n) for n in kept["taken"]]
        renames = [
            naming.Rename(original=_text(o), chosen=_text(c), reason=_text(r))
            for o, c, r in kept["renames"]
        ]
        diagnostics = [
            Diagnostic(
                loc=SourceLocation(file=_text(file), pointer=_text(pointer)),
                severity=_severity(severity),
                found=_text(found),
                expected=_maybe_text(expected),
                hint=_maybe_text(hint),
                line=_maybe_int(line),
                column=_maybe_int(column),
            )
            for file, pointer, severity, found, expected, hint, line, column in kept["diagnostics"]
        ]
    except (KeyError, TypeError, ValueError):  # (a shape not as written: made again)
        return None
    return classes, aliases, taken, renames, diagnostics


def _span(value: object) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(value)
    return value


def _pair(value: object) -> tuple[int, int]:
    if not isinstance(value, list):
        raise TypeError("a span is a list")
    items = cast("list[object]", value)
    if len(items) != 2 or _span(items[0]) > _span(items[1]):
        raise ValueError("a span is [start, end]")
    return _span(items[0]), _span(items[1])


def _digest(text: str) -> str:
    """A digest of a large text, for a key (``repr`` of the text itself would copy it)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _diagnostic_row(d: Diagnostic) -> list[object]:
    return [d.loc.file, d.loc.pointer, d.severity, d.found, d.expected, d.hint, d.line, d.column]


def _text(value: object) -> str:
    if type(value) is not str:
        raise TypeError(value)
    return value


def _maybe_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _flag(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError(value)
    return value


def _maybe_int(value: object) -> int | None:
    if value is not None and type(value) is not int:
        raise TypeError(value)
    return value


def _severity(value: object) -> Severity:
    for severity in get_args(Severity):
        if value == severity:
            return cast("Severity", severity)
    raise ValueError(value)


def _class_key(c: ClassView) -> tuple[object, ...]:
    """Every field of ``c`` (and of its fields), as a tuple of strings: what a module key needs
    of it, at a fraction of the cost of the dataclasses' generated ``repr``."""
    fields = tuple((f.name, f.annotation, f.default, f.override) for f in c.fields)
    return (c.name, c.bases, c.doc, c.config, c.extra_type, c.root, fields)


def _py_value(value: Any, used: set[str]) -> str:
    """A Python expression for a frozen dataclass value of ``toolbind.runtime.contract``
    (fields left at their defaults are left out); ``used`` collects the class names."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        used.add(cls.__name__)
        args = [f"{name}={_py_value(v, used)}" for name, v in explicit_fields(value)]
        return f"{cls.__name__}({', '.join(args)})"
    if isinstance(value, tuple):
        items = cast("tuple[Any, ...]", value)
        return "(" + "".join(_py_value(v, used) + ", " for v in items) + ")"
    if isinstance(value, Mapping):
        table = cast("Mapping[Any, Any]", value)
        return (
            "{"
            + ", ".join(f"{_py_value(k, used)}: {_py_value(v, used)}" for k, v in table.items())
            + "}"
        )
    if value is None or isinstance(value, (str, bool, int, float)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} into generated code")  # pragma: no cover


def _bound_args(b: NumericBounds) -> list[str]:
    """pydantic's ``Field`` arguments for a number's inclusive and exclusive bounds."""
    pairs = (
        ("ge", b.minimum),
        ("le", b.maximum),
        ("gt", b.exclusive_minimum),
        ("lt", b.exclusive_maximum),
    )
    return [f"{k}={v!r}" for k, v in pairs if v is not None]


def _within(bounds: NumericBounds, value: float) -> bool:
    b = bounds
    return (
        (b.minimum is None or value >= b.minimum)
        and (b.maximum is None or value <= b.maximum)
        and (b.exclusive_minimum is None or value > b.exclusive_minimum)
        and (b.exclusive_maximum is None or value < b.exclusive_maximum)
        and (b.multiple_of is None or (value / b.multiple_of).is_integer())
    )


def _scalar_default_fits(node: SchemaNode, value: Any) -> bool:
    """Whether a JSON default is a scalar the field's type accepts (else no Python default)."""
    match node:
        case StringNode():
            return (
                isinstance(value, str)
                and node.pattern is None
                and (node.min_length is None or len(value) >= node.min_length)
                and (node.max_length is None or len(value) <= node.max_length)
            )
        case BooleanNode():
            return isinstance(value, bool)
        case IntegerNode():
            return type(value) is int and _within(node.bounds, value)
        case NumberNode():
            return (
                type(value) in (int, float) and math.isfinite(value) and _within(node.bounds, value)
            )
        case LiteralNode():
            return (
                freeze(value) in node.values
                and isinstance(value, (str, int, bool))
                and _literal_ok(node)
            )
        case _:
            return False


def _offered_together(a: ToolSpec, b: ToolSpec) -> bool:
    return not a.toolsets or not b.toolsets or bool(set(a.toolsets) & set(b.toolsets))


def _variant_suffix(node: SchemaNode, index: int) -> str:
    title = node.meta.title
    if title and naming.has_identifier_chars(title):
        return naming.pascal_case(title)
    return f"Option{index + 1}"


def _literal_ok(node: LiteralNode) -> bool:
    """Whether ``Literal[...]`` spells exactly this enum (strings, ints, bools and null)."""
    values = [thaw(v) for v in node.values]
    has_bool = any(isinstance(v, bool) for v in values)
    has_int = any(type(v) is int for v in values)
    # Literal[1] would also accept True (1 == True in Python): keep bool and int apart.
    if has_bool and has_int:
        return False
    return all(v is None or isinstance(v, (str, bool)) or type(v) is int for v in values)
