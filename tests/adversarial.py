"""Test helper: hostile tool specs in every input format, and the checks each one must pass.

Used by ``tests/security/test_adversarial.py`` (a few hundred specs in CI) and ``make fuzz``
(``python -m tests.adversarial``, ≥ 10,000 specs with a counts table).

``cases()`` is a hypothesis strategy of ``Case``: one or two spec files (seeds Tool schemas,
OpenAI function lists, MCP tool lists, OpenAPI 3.0/3.1, Swagger 2.0) whose every string
position — tool, operation, parameter and property names, titles, descriptions, defaults,
examples, enums, consts, patterns, formats, ``$ref`` targets (hostile, dangling, ``../`` and
absolute files, URLs), paths, server URLs, tags, security scheme and component names, and the
spec *file names* — is drawn from hostile alphabets.

``Fuzzer`` checks every case:

* compile (in-process) either succeeds or raises ``SpecError`` whose errors are all located
  (a file of the run, and a JSON pointer or a line); any other exception is a *crash*;
* nothing is written outside the output directory (the run's tree is snapshotted before and
  after), and the output's relative paths stay inside it;
* every generated module parses, and its AST holds no call to ``__import__``/``open``/``exec``/
  ``eval``/``system`` — a string that closed its quotes would show up here (*injection*);
* in batches, a fresh interpreter (cwd: an empty directory) imports each package, builds every
  model, and reports names; a canary file appearing anywhere is an *injection*;
* distinct JSON names map to distinct Python fields in every model, distinct spec tool names to
  distinct provider and class names, distinct spec files to distinct packages (*collisions*);
* every JSON property name and description the spec gave a tool is kept in ``tools.json``;
* pyright (strict) on batches of packages reports no error.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import keyword
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import quote

import yaml
from hypothesis import strategies as st

from toolbind.compiler import SpecError, compile_to_directory
from toolbind.yaml12 import load_yaml

REPO = Path(__file__).resolve().parent.parent
CANARY = "toolbind-canary"
CANARY_ABS = Path(tempfile.gettempdir()) / "toolbind-fuzz-canary"

PAYLOADS = [
    f"__import__('os').system('touch {CANARY}')",
    f"open('{CANARY}', 'w')",
    f"open('{CANARY_ABS}', 'w')",
    f'"""\n__import__("os").system("touch {CANARY}")\n"""',
    f"'''\nopen('{CANARY}', 'w')\n#",
    f'")\nopen("{CANARY}", "w")\nx = ("',
    f"'])\nexec(\"open('{CANARY}','w')\")\n#",
    f"\\\"\nopen('{CANARY}','w')#",
    f"{{{{ open('{CANARY}','w') }}}}",
    f"{{% import os %}}{{{{ os.system('touch {CANARY}') }}}}",
]

FRAGMENTS = [
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\n",
    '\\"',
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "\x1b[31m",
    "\t",
    "\u202e",
    "\u2066",
    "\u200b",
    "\u2028",
    "\ufeff",
    "#",
    "# type: ignore",
    "{{ 7*7 }}",
    "{% raw %}",
    "{#",
    "${x}",
    "%s",
    "{0}",
    "class",
    "def",
    "None",
    "True",
    "import",
    "lambda",
    "match",
    "type",
    "__init__",
    "__class__",
    "__dict__",
    "model_config",
    "model_dump",
    "json",
    "schema",
    "tool",
    "output",
    "_tool",
    "_output",
    "_activity",
    "Field",
    "BaseModel",
    "str",
    "list",
    "os",
    "sys",
    "../",
    "../../etc/passwd",
    "/tmp/x",
    "C:\\x",
    "~",
    "%2e%2e%2f",
    "ünï",
    "İ",
    "ı",
    "ß",
    "ﬁ",
    "Ａ",
    "а",  # Cyrillic a, a confusable
    "a-b",
    "a_b",
    "aB",
    "A B",
    "1",
    "-",
    ".",
    "/",
    "{",
    "}",
    "~0",
    "~1",
    "%",
    "x" * 300,
    *PAYLOADS,
]

# Names that fold, sanitise or case-fold to the same thing, and reserved words.
NAMES = [
    "name",
    "Name",
    "NAME",
    "na-me",
    "na_me",
    "na me",
    "naMe",
    "ńame",
    "ｎａｍｅ",
    "name_",
    "name_2",
    "class",
    "class_",
    "Class",
    "def",
    "None",
    "self",
    "cls",
    "__init__",
    "__class__",
    "__dict__",
    "__import__",
    "__builtins__",
    "_",
    "",
    " ",
    "1",
    "1abc",
    "tool",
    "_tool",
    "output",
    "_output",
    "activity",
    "_activity",
    "reasoning_for_call",
    "_reasoningForCall",
    "model_config",
    "model_dump",
    "model_fields",
    "schema",
    "json",
    "dict",
    "copy",
    "validate",
    "Call",
    "CallAdapter",
    "Response",
    "TOOLS",
    "NAME_MAP",
    "API",
    "HttpActivities",
    "ToolCall",
    "ToolModel",
    "Annotated",
    "Literal",
    "Field",
    "print",
    "id",
    "type",
    "match",
    "str",
    "int",
    "list",
    "x" * 80,
    "x" * 79 + "y",
    *keyword.kwlist[:12],
    *PAYLOADS[:4],
]


class Chooser(Protocol):
    """The random decisions the generator makes: hypothesis's (``HypothesisChooser``, in tests,
    shrinkable) or a seeded ``random.Random``'s (``RandomChooser``, for ``make fuzz``: drawing
    through hypothesis costs more than compiling)."""

    def integer(self, lo: int, hi: int) -> int: ...
    def pick(self, options: Sequence[Any]) -> Any: ...
    def text(self, max_size: int) -> str: ...


class HypothesisChooser:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def text(self, max_size: int) -> str:
        return self.draw(st.text(max_size=max_size))


class RandomChooser:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.random.randint(lo, hi)

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.random.randrange(len(options))]

    def text(self, max_size: int) -> str:
        out: list[str] = []
        for _ in range(self.random.randint(0, max_size)):
            r = self.random.random()
            code = (
                self.random.randint(0x20, 0x7E)
                if r < 0.5
                else self.random.randint(0, 0x1F)
                if r < 0.6
                else self.random.randint(0x80, 0xFFFF)
                if r < 0.9
                else self.random.randint(0x10000, 0x10FFFF)
            )
            if 0xD800 <= code <= 0xDFFF:  # no lone surrogates: JSON/YAML files can't hold them
                code = 0xFFFD
            out.append(chr(code))
        return "".join(out)


def boolean(c: Chooser) -> bool:
    return c.integer(0, 1) == 1


def hostile(c: Chooser) -> str:
    return "".join(c.pick(FRAGMENTS) if boolean(c) else c.text(5) for _ in range(c.integer(1, 4)))


def name(c: Chooser) -> str:
    return c.pick(NAMES) if boolean(c) else hostile(c)


def unique(c: Chooser, make: Callable[[Chooser], str], lo: int, hi: int) -> list[str]:
    out: list[str] = []
    for _ in range(c.integer(lo, hi)):
        value = make(c)
        if value not in out:
            out.append(value)
    return out


def subset(c: Chooser, items: Sequence[str]) -> list[str]:
    return [i for i in items if boolean(c)]


def _pointer_token(text: str) -> str:
    return text.replace("~", "~0").replace("/", "~1")


# ---------------------------------------------------------------------------------------------
# Schemas

REF_HAZARDS = [
    "#/nowhere/at/all",
    "#",
    "#anchor",
    "other.json#/x",
    "sub/defs.json#/Thing",
    "../outside.json",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/etc/hostname#/x",
    "file:///etc/passwd",
    "http://127.0.0.1:9/schema.json",
    "//127.0.0.1:9/x",
    "urn:x:y",
    "\x00",
    "#/%00",
    "%00.json",
    "x" * 300 + ".json",
]


def ref_target(c: Chooser, defs_key: str, defs: list[str]) -> str:
    """A ``$ref``: to a (hostile) definition, escaped or not, dangling, a file outside, a URL."""
    if defs and c.integer(0, 5) != 0:
        token = _pointer_token(c.pick(defs))
        if boolean(c):
            token = quote(token, safe="")
        return f"#/{defs_key}/{token}"
    return c.pick([f"#/{defs_key}/missing", *REF_HAZARDS])


def schema(c: Chooser, defs_key: str, defs: list[str], depth: int = 0) -> dict[str, Any]:
    kind = c.pick(["string", "string", "integer", "number", "boolean", "array", "object", "ref"])
    if (kind == "ref" and c.integer(0, 2) == 0) or (kind == "object" and depth >= 2):
        return {"$ref": ref_target(c, defs_key, defs)}
    if kind == "ref":
        kind = "string"
    out: dict[str, Any] = {"type": kind}
    if boolean(c):
        out["description"] = hostile(c)
    if c.integer(0, 3) == 0:
        out["title"] = hostile(c)
    if kind == "string":
        choice = c.integer(0, 6)
        if choice == 1:
            out["enum"] = unique(c, name, 1, 4)
        elif choice == 2:
            out["const"] = hostile(c)
        elif choice == 3:
            out["pattern"] = re.escape(hostile(c))
        elif choice == 4:
            out["pattern"] = hostile(c)  # often not a valid regex
        elif choice == 5:
            out["default"] = hostile(c)
        elif choice == 6:
            out["examples"] = [hostile(c) for _ in range(c.integer(0, 2))]
        if boolean(c):
            out["format"] = hostile(c) if boolean(c) else c.pick(["date-time", "uri", "email"])
    elif kind in ("integer", "number"):
        if boolean(c):
            out["enum"] = sorted({c.integer(-(2**70), 2**70) for _ in range(c.integer(1, 3))})
        if boolean(c):
            out["default"] = c.integer(-(2**70), 2**70) if boolean(c) else hostile(c)
    elif kind == "array":
        out["items"] = schema(c, defs_key, defs, depth + 1)
    elif kind == "object":
        props = {k: schema(c, defs_key, defs, depth + 1) for k in unique(c, name, 0, 3)}
        out["properties"] = props
        if props:
            out["required"] = subset(c, list(props))
        if c.integer(0, 3) == 0:
            out["additionalProperties"] = boolean(c)
    return out


def definitions(c: Chooser, defs_key: str) -> dict[str, Any]:
    keys = unique(c, name, 0, 3)
    return {k: schema(c, defs_key, keys, 1) for k in keys}


@dataclass
class Tool:
    """A format-neutral tool: what every renderer writes, and what the checks expect back."""

    name: str
    description: str | None
    params: dict[str, Any]
    required: list[str]
    output: dict[str, Any] | None


def tool(c: Chooser, defs_key: str, defs: list[str]) -> Tool:
    params = {k: schema(c, defs_key, defs) for k in unique(c, name, 0, 4)}
    return Tool(
        name=name(c),
        description=hostile(c) if boolean(c) else None,
        params=params,
        required=subset(c, list(params)),
        output=schema(c, defs_key, defs, 1) if boolean(c) else None,
    )


def _object(t: Tool, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": {**t.params, **(extra or {})}}
    if t.required:
        out["required"] = t.required
    return out


# ---------------------------------------------------------------------------------------------
# Formats


def tool_list_doc(c: Chooser) -> tuple[str, Any, list[Tool]]:
    fmt = c.pick(["seeds", "seeds-list", "openai", "openai-bare", "mcp"])
    defs = definitions(c, "$defs")
    tools = [tool(c, "$defs", sorted(defs)) for _ in range(c.integer(1, 3))]
    if fmt == "seeds":  # a map name → schema holds one tool per name: the last one written
        tools = list({t.name: t for t in tools}.values())
    doc: Any
    if fmt.startswith("seeds"):
        entries: list[tuple[str, dict[str, Any]]] = []
        for t in tools:
            extra: dict[str, Any] = {"_tool": {"type": "string", "const": t.name}}
            if t.output is not None:
                extra["_output"] = t.output
            entry = _object(t, extra)
            if t.description is not None:
                entry["description"] = t.description
            entries.append((t.name, entry))
        if fmt == "seeds":
            doc = dict(entries)
            if defs:
                doc["$defs"] = defs
        else:
            listed = [e for _, e in entries]
            for e in listed if defs else []:
                e["$defs"] = defs
            doc = listed
    elif fmt.startswith("openai"):
        fns: list[dict[str, Any]] = []
        for t in tools:
            params = _object(t)
            if defs:
                params["$defs"] = defs
            fn: dict[str, Any] = {"name": t.name, "parameters": params}
            if t.description is not None:
                fn["description"] = t.description
            fns.append({"type": "function", "function": fn} if fmt == "openai" else fn)
        doc = fns
    else:
        items: list[dict[str, Any]] = []
        for t in tools:
            input_schema = _object(t)
            if defs:
                input_schema["$defs"] = defs
            item: dict[str, Any] = {"name": t.name, "inputSchema": input_schema}
            if t.description is not None:
                item["description"] = t.description
            if t.output is not None:
                item["outputSchema"] = t.output
            items.append(item)
        doc = {"tools": items}
    return fmt, doc, tools


def _path(c: Chooser) -> str:
    if c.integer(0, 4) == 0:
        return hostile(c)  # not even a path
    segments = [hostile(c) if boolean(c) else "{" + name(c) + "}" for _ in range(c.integer(1, 3))]
    return "/" + "/".join(segments)


def _operation(c: Chooser, t: Tool, swagger: bool, schemes: list[str]) -> dict[str, Any]:
    op: dict[str, Any] = {}
    if c.integer(0, 4) != 0:
        op["operationId"] = t.name
    if t.description is not None:
        op["summary" if boolean(c) else "description"] = t.description
    if boolean(c):
        op["tags"] = [hostile(c) for _ in range(c.integer(0, 2))]
    params: list[dict[str, Any]] = []
    body_props: dict[str, Any] = {}
    for pname, pschema in t.params.items():
        where = c.pick(["path", "query", "header", "cookie", "body"])
        if where == "body":
            body_props[pname] = pschema
            continue
        if swagger and where == "cookie":
            where = "query"
        param: dict[str, Any] = {"name": pname, "in": where}
        if where == "path" or pname in t.required:
            param["required"] = True
        if swagger:
            kind = pschema.get("type", "string")
            param["type"] = "string" if kind == "object" else kind
            if kind == "array":
                param["items"] = {"type": "string"}
            if "description" in pschema:
                param["description"] = pschema["description"]
        else:
            param["schema"] = pschema
        params.append(param)
    if body_props:
        body: dict[str, Any] = {"type": "object", "properties": body_props}
        required = [r for r in t.required if r in body_props]
        if required:
            body["required"] = required
        if swagger:
            params.append({"name": name(c), "in": "body", "required": True, "schema": body})
        else:
            media = c.pick(
                [
                    "application/json",
                    "application/x-www-form-urlencoded",
                    "multipart/form-data",
                    "text/plain",
                    hostile(c),
                ]
            )
            op["requestBody"] = {"required": True, "content": {media: {"schema": body}}}
    if params:
        op["parameters"] = params
    response: dict[str, Any] = {"description": hostile(c)}
    if t.output is not None:
        if swagger:
            response["schema"] = t.output
        else:
            response["content"] = {"application/json": {"schema": t.output}}
    op["responses"] = {c.pick(["200", "201", "default", "2XX"]): response}
    if schemes and boolean(c):
        op["security"] = [{c.pick(schemes): []}]
    return op


def openapi_doc(c: Chooser) -> tuple[str, dict[str, Any], list[Tool]]:
    version = c.pick(["3.0.3", "3.1.0", "2.0"])
    swagger = version == "2.0"
    defs_key = "definitions" if swagger else "components/schemas"
    defs = definitions(c, defs_key)
    schemes = unique(c, name, 0, 2)
    paths: dict[str, Any] = {}
    ops: list[Tool] = []
    for _ in range(c.integer(1, 3)):
        item: dict[str, Any] = paths.setdefault(_path(c), {})
        for method in unique(c, lambda c: c.pick(["get", "post", "put", "delete"]), 1, 2):
            t = tool(c, defs_key, sorted(defs))
            item[method] = _operation(c, t, swagger, schemes)
            ops.append(t)
    doc: dict[str, Any] = {"info": {"title": hostile(c), "version": hostile(c)}, "paths": paths}
    kinds: list[dict[str, Any]] = [
        {"type": "apiKey", "in": "header", "name": "X-Key"},
        {"type": "apiKey", "in": "query", "name": "key"},
        {"type": "http", "scheme": "bearer"},
        {"type": "http", "scheme": "basic"},
    ]
    security_schemes = {s: dict(c.pick(kinds)) for s in schemes}
    if swagger:
        doc["swagger"] = "2.0"
        doc["host"] = hostile(c) if boolean(c) else "127.0.0.1:9"
        doc["basePath"] = hostile(c)
        if defs:
            doc["definitions"] = defs
        if security_schemes:
            doc["securityDefinitions"] = {
                k: v if v["type"] != "http" else {"type": "basic"}
                for k, v in security_schemes.items()
            }
    else:
        doc["openapi"] = version
        server: dict[str, Any] = {"url": hostile(c) if boolean(c) else "http://127.0.0.1:9/{v}"}
        if boolean(c):
            server["variables"] = {"v": {"default": hostile(c)}}
        doc["servers"] = [server]
        components: dict[str, Any] = {}
        if defs:
            components["schemas"] = defs
        if security_schemes:
            components["securitySchemes"] = security_schemes
        if components:
            doc["components"] = components
    if boolean(c):
        doc["tags"] = [{"name": hostile(c), "description": hostile(c)}]
    return "openapi-" + version, doc, ops


# File stems: the package name comes from them (no "/" or NUL: the file system refuses those).
FILE_STEMS = [
    "evil",
    "__init__",
    "toolbind",
    "os",
    "sys",
    "generated",
    "pydantic",
    "class",
    "a-b",
    "a_b",
    "A B",
    "..",
    "...x",
    "-rf",
    "--help",
    "x" * 200,
    'x""";__import__("os").system("touch toolbind-canary");"""y',
    "x''';open('toolbind-canary','w');'''y",
    "x\\",
    "ﬁle",
    "file",
    "\u202eexe.txt",
    "1abc",
    "models",
    "tools",
]


def file_stem(c: Chooser) -> str:
    if boolean(c):
        return c.pick(FILE_STEMS)
    stem = hostile(c).replace("/", "_").replace("\x00", "_")[:120]
    return stem if stem not in ("", ".", "..") and not stem.startswith(".") else "spec"


@dataclass
class Case:
    """Spec files (name → text) compiled together; the tools each file declares."""

    files: dict[str, str]
    formats: dict[str, str]
    tools: dict[str, list[Tool]]
    side_files: dict[str, str] = field(default_factory=lambda: {})
    label: str = ""  # how to make it again ("seed 42")


def make_case(c: Chooser) -> Case:
    files: dict[str, str] = {}
    formats: dict[str, str] = {}
    tools: dict[str, list[Tool]] = {}
    for _ in range(c.integer(1, 2)):
        fmt, doc, ts = openapi_doc(c) if c.integer(0, 2) == 0 else tool_list_doc(c)
        suffix = c.pick([".json", ".json", ".yaml", ".yml", ".JSON"])
        file_name = f"{file_stem(c)}{suffix}"
        if file_name in files or len(file_name.encode("utf-8")) > 250:
            continue
        if suffix.lower() == ".json":
            text = json.dumps(doc, ensure_ascii=boolean(c))
        else:
            text = yaml.safe_dump(doc, allow_unicode=boolean(c))
            if load_yaml(text) != doc:
                # PyYAML emits YAML 1.1: it writes NEL, LS and PS as line breaks, which a YAML reader
                # folds to a space. JSON is YAML 1.2 too and says the same document exactly.
                text = json.dumps(doc, ensure_ascii=False)  # no draw: the case stays reproducible
        files[file_name] = text
        formats[file_name] = fmt
        tools[file_name] = ts
    side = {
        "other.json": json.dumps({"x": {"type": "string", "description": hostile(c)}}),
        "sub/defs.json": json.dumps(
            {"Thing": {"type": "object", "properties": {name(c): {"type": "string"}}}}
        ),
    }
    return Case(files=files, formats=formats, tools=tools, side_files=side)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Hypothesis strategy of cases (shrinkable)."""
    return make_case(HypothesisChooser(draw))


# ---------------------------------------------------------------------------------------------
# Checks

FORBIDDEN_NAMES = frozenset(
    {"__import__", "open", "exec", "eval", "compile", "breakpoint", "input"}
)
FORBIDDEN_ATTRS = frozenset({"system", "popen", "remove", "unlink", "rmtree"})
RESERVED_ALIASES = ("_tool", "_activity", "_reasoningForCall", "_output")


@dataclass
class Outcome:
    tried: int = 0
    compiled: int = 0
    rejected: int = 0
    injections: int = 0
    escapes: int = 0
    crashes: int = 0
    collisions: int = 0
    lost_names: int = 0
    import_failures: int = 0
    pyright_checked: int = 0
    pyright_errors: int = 0
    formats: Counter[str] = field(default_factory=lambda: Counter())
    failures: list[str] = field(default_factory=lambda: [])
    cases: list[dict[str, Any]] = field(default_factory=lambda: [])
    seconds: dict[str, float] = field(default_factory=lambda: {})

    def add_time(self, phase: str, started: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started

    def fail(self, kind: str, case: Case, detail: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.failures) < 200:
            self.failures.append(f"[{kind}] {detail[:1500]}")
            self.cases.append(
                {
                    "kind": kind,
                    "label": case.label,
                    "detail": detail,
                    "files": case.files,
                    "side_files": case.side_files,
                }
            )

    def table(self) -> str:
        rows = [
            ("specs tried", self.tried),
            ("compiled", self.compiled),
            ("rejected with a located diagnostic", self.rejected),
            ("injections", self.injections),
            ("escapes (writes outside the output)", self.escapes),
            ("crashes", self.crashes),
            ("identifier collisions", self.collisions),
            ("names or descriptions lost", self.lost_names),
            ("import failures", self.import_failures),
            ("packages type-checked (pyright strict)", self.pyright_checked),
            ("pyright errors", self.pyright_errors),
        ]
        lines = [f"  {label:<40} {value:>7}" for label, value in rows]
        lines.append(
            "  seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(self.seconds.items()))
        )
        lines.append("  formats: " + ", ".join(f"{k} {v}" for k, v in sorted(self.formats.items())))
        return "\n".join(lines)

    @property
    def bad(self) -> int:
        return (
            self.injections
            + self.escapes
            + self.crashes
            + self.collisions
            + self.lost_names
            + self.import_failures
            + self.pyright_errors
        )


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            st_ = p.lstat()
            out[str(p.relative_to(root))] = (st_.st_size, int(st_.st_mtime_ns))
    return out


def _ast_injection(text: str) -> str | None:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            return f"name {node.id!r} at line {node.lineno}"
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRS:
            return f"attribute {node.attr!r} at line {node.lineno}"
        # the generator writes no bare expression but docstrings and `...`, and ASCII names only
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            return f"a bare expression at line {node.lineno}"
        if isinstance(node, ast.Name) and not node.id.isascii():
            return f"a non-ASCII name {node.id!r} at line {node.lineno}"
    return None


IMPORT_SCRIPT = r"""
import importlib, json, sys, traceback
jobs = json.loads(sys.stdin.read())
results = []
for out, package in jobs:
    sys.path.insert(0, out)
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(package)
        sub = {}
        for name in ("models", "tools", "activities", "http"):
            try:
                sub[name] = importlib.import_module(package + "." + name)
            except ModuleNotFoundError as exc:
                if exc.name != package + "." + name:
                    raise
        models = []
        from pydantic import BaseModel
        for cls_name in dir(sub["models"]):
            cls = getattr(sub["models"], cls_name)
            if isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__module__ == sub["models"].__name__:
                cls.model_rebuild()  # builds deferred models; raises on a dangling name
                fields = cls.model_fields
                models.append([cls_name, [[n, f.alias] for n, f in fields.items()]])
        module.CallAdapter.json_schema(by_alias=True)
        tools = [[t.name, t.provider_name, t.call_model.__name__] for t in module.TOOLS]
        http = None
        if "http" in sub:
            http = {
                tool: [[p.name, p.location, p.field] for p in op.parameters]
                # (HttpBody.fields: (Call field, body property) pairs)
                + [[prop, "body", f] for f, prop in (op.body.fields if op.body is not None else ())]
                for tool, op in sub["http"].API.operations.items()
            }
        results.append({"ok": True, "models": models, "tools": tools, "http": http,
                        "name_map": module.NAME_MAP})
    except BaseException:
        results.append({"ok": False, "error": traceback.format_exc()[-3000:]})
    sys.path.remove(out)
    for key in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
        del sys.modules[key]
print(json.dumps(results))
"""

# pyright installed beside this interpreter (a virtualenv, CI, the wheel test), else on PATH.
PYRIGHT = str(
    next(
        (p for p in [Path(sys.executable).parent / "pyright"] if p.is_file()),
        shutil.which("pyright") or "pyright",
    )
)
PYRIGHT_CONFIG = {
    "typeCheckingMode": "strict",
    "pythonVersion": "3.11",
    "reportMissingTypeStubs": False,
}


@dataclass
class Compiled:
    case: Case
    out: Path
    packages: dict[str, str]  # package → spec file name


class Fuzzer:
    """Runs cases through the compiler and the checks; counts outcomes."""

    def __init__(
        self,
        workdir: Path,
        *,
        import_batch: int = 40,
        pyright_every: int = 1,
        pyright_batch: int = 300,
    ) -> None:
        self.workdir = workdir
        self.outcome = Outcome()
        self.pending: list[Compiled] = []
        self.import_batch = import_batch
        self.pyright_every = pyright_every  # type-check every n-th compiled package
        self.pyright_queue: list[tuple[str, Case]] = []
        self.pyright_batch = pyright_batch
        self._pyright_dir: Path | None = None
        self._queued = 0
        self._n = 0

    # -- per case, in process ------------------------------------------------------------------
    def run(self, case: Case) -> None:
        if not case.files:
            return
        self._n += 1
        o = self.outcome
        o.tried += 1
        for fmt in case.formats.values():
            o.formats[fmt] += 1
        root = self.workdir / f"c{self._n}"
        specs = root / "specs"
        (specs / "sub").mkdir(parents=True)
        for name, text in {**case.side_files, **case.files}.items():
            (specs / name).write_text(text, encoding="utf-8")
        out = root / "deep" / "out"
        before = _snapshot(root)
        inputs = [specs / n for n in case.files]
        started = time.perf_counter()
        try:
            tree = compile_to_directory(inputs, out)
        except SpecError as exc:
            self._check_rejection(case, exc, root, before)
            shutil.rmtree(root)
            return
        except Exception:  # any other exception is a compiler crash
            o.fail("crashes", case, traceback.format_exc()[-3000:])
            shutil.rmtree(root, ignore_errors=True)
            return
        o.add_time("compile", started)
        o.compiled += 1
        after = _snapshot(root)
        changed = {k for k in set(after) | set(before) if before.get(k) != after.get(k)} - {
            "deep",
            "deep/out",
        }
        outside = sorted(k for k in changed if not k.startswith("deep/out/"))
        bad_keys = [
            k
            for k in tree.files
            if k.startswith("/") or ".." in Path(k).parts or "\\" in k or "\x00" in k
        ]
        if outside or bad_keys:
            o.fail("escapes", case, f"written outside the output: {outside} {bad_keys}")
        for rel, text in tree.files.items():
            if rel.endswith(".py"):
                try:
                    found = _ast_injection(text)
                except SyntaxError as exc:
                    o.fail("crashes", case, f"{rel} does not parse: {exc}")
                    continue
                if found:
                    o.fail("injections", case, f"{rel}: {found}")
        if len(set(tree.packages)) != len(case.files):
            o.fail(
                "collisions", case, f"{len(case.files)} specs → packages {sorted(tree.packages)}"
            )
        self._check_tools_json(case, tree.files, tree.packages)
        self.pending.append(Compiled(case=case, out=out, packages=dict(tree.packages)))
        if len(self.pending) >= self.import_batch:
            self.flush()

    def _check_rejection(
        self, case: Case, exc: SpecError, root: Path, before: dict[str, tuple[int, int]]
    ) -> None:
        o = self.outcome
        errors = [d for d in exc.diagnostics if d.severity == "error"]
        known = {*case.files, *case.side_files}
        unlocated = [
            d.render()
            for d in errors
            if not d.loc.file
            or not (
                d.loc.file.startswith(str(root))
                or _under(d.loc.file, root)
                or d.loc.file.rsplit("/", 1)[-1] in known
            )
            or not d.render().startswith(d.loc.file)
            or "Traceback" in d.render()
        ]
        if not errors or unlocated:
            o.fail("crashes", case, f"rejected without a located error: {unlocated or exc}")
            return
        after = _snapshot(root)
        if after != before:
            o.fail("escapes", case, f"a rejected spec wrote {sorted(set(after) - set(before))}")
            return
        o.rejected += 1

    def _check_tools_json(
        self, case: Case, files: Mapping[str, str], packages: dict[str, str]
    ) -> None:
        o = self.outcome
        for package, source in packages.items():
            spec_name = source.rsplit("/", 1)[-1]
            ts = case.tools.get(spec_name)
            if ts is None:
                continue
            data = json.loads(files[f"{package}/tools.json"])
            entries: list[dict[str, Any]] = data["tools"]
            provider = [e["provider_name"] for e in entries]
            if len(set(provider)) != len(provider):
                o.fail("collisions", case, f"provider names {provider}")
            if not all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", p) for p in provider):
                o.fail("collisions", case, f"provider names not provider-safe: {provider}")
            if case.formats[spec_name].startswith("openapi"):
                continue  # parameters are checked against the HTTP description after import
            names_ = [e["name"] for e in entries]
            if sorted(names_) != sorted(t.name for t in ts):
                o.fail("lost_names", case, f"tools {names_} != {[t.name for t in ts]}")
                continue
            by_name = {e["name"]: e for e in entries}
            for t in ts:
                e = by_name[t.name]
                parameters: dict[str, Any] = e["parameters"] or {}
                properties: dict[str, Any] = parameters.get("properties", {})
                props = set(properties)
                want = set(t.params) - set(RESERVED_ALIASES)  # meta fields aren't parameters
                if not want <= props:
                    o.fail(
                        "lost_names",
                        case,
                        f"{t.name}: parameters {sorted(props)} lack {sorted(want - props)}",
                    )
                if t.description is not None and e.get("description") != t.description:
                    o.fail(
                        "lost_names",
                        case,
                        f"{t.name}: description {e.get('description')!r} != {t.description!r}",
                    )
                for pname, pschema in t.params.items():
                    kept = _deref(properties.get(pname), data)
                    if (
                        "description" in pschema
                        and kept is not None
                        and pname in want
                        and kept.get("description") != pschema["description"]
                    ):
                        o.fail("lost_names", case, f"{t.name}.{pname}: description changed")

    # -- batched: import and pyright -----------------------------------------------------------
    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        jobs: list[tuple[str, str, Compiled]] = [
            (str(c.out), package, c) for c in batch for package in c.packages
        ]
        cwd = self.workdir / "cwd"
        cwd.mkdir(exist_ok=True)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-I", "-c", IMPORT_SCRIPT],
            input=json.dumps([[j[0], j[1]] for j in jobs]),
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        o = self.outcome
        o.add_time("import", started)
        canaries = list(cwd.iterdir()) + ([CANARY_ABS] if CANARY_ABS.exists() else [])
        canaries += [p for p in self.workdir.rglob(CANARY) if p.is_file()]
        if canaries:
            o.fail("injections", batch[0].case, f"canary files appeared: {canaries}")
            for c in canaries:
                if c.is_file():
                    c.unlink()
        if result.returncode != 0:
            for c in batch:
                o.fail("import_failures", c.case, f"importer died: {result.stderr[-3000:]}")
            return
        reports: list[dict[str, Any]] = json.loads(result.stdout)
        for (_, package, c), report in zip(jobs, reports, strict=True):
            self._check_import(c, package, report)
        for c in batch:
            for package in c.packages:
                self._queued += 1
                if self._queued % self.pyright_every == 0:
                    self._queue_pyright(c.out / package, c.case)
            shutil.rmtree(c.out.parent.parent, ignore_errors=True)
        if len(self.pyright_queue) >= self.pyright_batch:
            self.pyright()

    def _check_import(self, c: Compiled, package: str, report: dict[str, Any]) -> None:
        o = self.outcome
        if not report["ok"]:
            o.fail("import_failures", c.case, f"{package}: {report['error']}")
            return
        for cls_name, pairs in report["models"]:
            aliases = [a if a is not None else n for n, a in pairs]
            if len(set(aliases)) != len(aliases):
                o.fail("collisions", c.case, f"{package}.{cls_name}: JSON names {aliases}")
        tools = report["tools"]
        classes = [t[2] for t in tools]
        if len(set(classes)) != len(classes):
            o.fail("collisions", c.case, f"{package}: Call classes {classes}")
        spec_name = c.packages[package].rsplit("/", 1)[-1]
        expected = c.case.tools.get(spec_name, [])
        fmt = c.case.formats.get(spec_name, "")
        models = {
            name: dict((a if a is not None else n, n) for n, a in pairs)
            for name, pairs in report["models"]
        }
        if report["http"] is not None:
            for tool_name, params in report["http"].items():
                call_cls = next(t[2] for t in tools if t[0] == tool_name)
                fields = [f for _, _, f in params]
                if len(set(fields)) != len(fields):
                    o.fail("collisions", c.case, f"{package}.{tool_name}: fields {fields}")
                missing = [f for f in fields if f not in models.get(call_cls, {})]
                if missing:
                    o.fail(
                        "lost_names", c.case, f"{package}.{tool_name}: no Call field for {missing}"
                    )
            return
        by_name = {t.name: t for t in expected}
        for tool_name, _provider, call_cls in tools:
            t = by_name.get(tool_name)
            if t is None:
                o.fail(
                    "lost_names", c.case, f"{package}: tool {tool_name!r} not in the spec ({fmt})"
                )
                continue
            aliases = set(models.get(call_cls, {}))
            want = set(t.params) | set(RESERVED_ALIASES)
            if aliases != want:
                o.fail(
                    "lost_names",
                    c.case,
                    f"{package}.{call_cls}: JSON names {sorted(aliases)} != {sorted(want)}",
                )

    def _queue_pyright(self, pkg_dir: Path, case: Case) -> None:
        if self._pyright_dir is None:
            self._pyright_dir = Path(tempfile.mkdtemp(prefix="pyright-", dir=self.workdir))
        name = f"p{len(self.pyright_queue)}"
        shutil.copytree(pkg_dir, self._pyright_dir / name)
        self.pyright_queue.append((name, case))

    def pyright(self) -> None:
        batch, queue = self._pyright_dir, self.pyright_queue
        if batch is None or not queue:
            return
        self._pyright_dir, self.pyright_queue = None, []
        where = dict(queue)
        (batch / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG))
        started = time.perf_counter()
        result = subprocess.run(
            # the pyright and the interpreter of the environment running this, wherever it is
            [PYRIGHT, "--pythonpath", sys.executable, "--outputjson", "-p", str(batch)],
            capture_output=True,
            text=True,
            check=False,
            cwd=batch,
        )
        o = self.outcome
        o.add_time("pyright", started)
        o.pyright_checked += len(where)
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError:
            o.fail("pyright_errors", queue[0][1], f"pyright failed: {result.stderr[-2000:]}")
            return
        for diag in report.get("generalDiagnostics", []):
            if diag.get("severity") != "error":
                continue
            rel = Path(diag["file"]).relative_to(batch).parts[0]
            where_case = where.get(rel, queue[0][1])
            o.fail(
                "pyright_errors",
                where_case,
                f"{diag['file']}:{diag['range']['start']['line'] + 1}: {diag['message']}",
            )
        shutil.rmtree(batch, ignore_errors=True)

    def finish(self) -> Outcome:
        self.flush()
        self.pyright()
        return self.outcome


def _deref(value: Any, data: dict[str, Any]) -> dict[str, Any] | None:
    """A ``tools.json`` schema, or the shared definition it became (``{"$ref": "#/$defs/X"}``)."""
    for _ in range(10):
        if not isinstance(value, dict):
            return None
        obj = cast(dict[str, Any], value)
        ref = obj.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")) or "description" in obj:
            return obj
        value = data["$defs"].get(
            ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~")
        )
    return None


def _under(shown: str, root: Path) -> bool:
    try:
        return Path(shown).absolute().is_relative_to(root)
    except (OSError, ValueError):
        return False


def fuzz(
    count: int, workdir: Path, *, seed: int = 0, pyright_every: int = 1, progress: bool = False
) -> Outcome:
    """Run ``count`` cases (case ``i`` from ``random.Random(seed + i)``) through ``Fuzzer``."""
    fuzzer = Fuzzer(workdir, pyright_every=pyright_every)
    for i in range(count):
        case = make_case(RandomChooser(seed + i))
        case.label = f"seed {seed + i}"
        fuzzer.run(case)
        if progress and (i + 1) % 500 == 0:
            o = fuzzer.outcome
            print(
                f"  {i + 1} specs: {o.compiled} compiled, {o.rejected} rejected, {o.bad} bad",
                flush=True,
            )
    return fuzzer.finish()


def merge(outcomes: list[Outcome]) -> Outcome:
    """The counts of several runs added up."""
    total = Outcome()
    for o in outcomes:
        for f in dataclasses.fields(Outcome):
            value = getattr(o, f.name)
            if isinstance(value, int):
                setattr(total, f.name, getattr(total, f.name) + value)
        total.formats.update(o.formats)
        for k, v in o.seconds.items():
            total.seconds[k] = total.seconds.get(k, 0.0) + v
        total.failures.extend(o.failures)
        total.cases.extend(o.cases)
    return total


def _worker(args: tuple[int, int, int]) -> Outcome:
    count, seed, pyright_every = args
    with tempfile.TemporaryDirectory(prefix="toolbind-fuzz-") as tmp:
        return fuzz(count, Path(tmp), seed=seed, pyright_every=pyright_every, progress=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="toolbind's adversarial spec fuzzer")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument(
        "--pyright-every", type=int, default=1, help="type-check every n-th package"
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--failures",
        default=str(Path(tempfile.gettempdir()) / "toolbind-fuzz-failures.json"),
        help="where failing cases go (JSON)",
    )
    parser.add_argument("--seed", type=int, default=0, help="case i uses seed + i")
    parser.add_argument(
        "--rerun", metavar="FAILURES", help="re-run only the seeds of a failures file"
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    if args.rerun:
        records = json.loads(Path(args.rerun).read_text(encoding="utf-8"))
        seeds = sorted({int(r["label"].split()[1]) for r in records if r.get("label")})
        with tempfile.TemporaryDirectory(prefix="toolbind-fuzz-") as tmp:
            fuzzer = Fuzzer(Path(tmp), pyright_every=args.pyright_every)
            for seed in seeds:
                case = make_case(RandomChooser(seed))
                case.label = f"seed {seed}"
                fuzzer.run(case)
            outcome = fuzzer.finish()
        print(f"toolbind fuzz: re-ran {len(seeds)} seeds from {args.rerun}")
        print(outcome.table())
        print("\n".join(outcome.failures[:20]), file=sys.stderr)
        return 1 if outcome.bad else 0
    share = -(-args.count // args.jobs)
    jobs = [
        (min(share, args.count - i * share), args.seed + i * share, args.pyright_every)
        for i in range(args.jobs)
    ]
    if args.jobs == 1:
        outcome = _worker(jobs[0])
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            outcome = merge(list(pool.map(_worker, jobs)))
    for failure in outcome.failures[:20]:
        print(failure, file=sys.stderr)
    if outcome.cases:
        Path(args.failures).write_text(json.dumps(outcome.cases, indent=1), encoding="utf-8")
        print(f"{len(outcome.cases)} failing cases written to {args.failures}", file=sys.stderr)
    print(f"toolbind fuzz: {outcome.tried} specs in {time.monotonic() - start:.0f} s")
    print(outcome.table())
    return 1 if outcome.bad else 0


if __name__ == "__main__":
    sys.exit(main())
