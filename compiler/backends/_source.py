"""Compiler layer (backends): the text of generated Python source — literals, docstrings, and
the import lines a rendered body needs (collected from the names it uses).

Imports ``naming`` and ``toolbind.runtime.contract`` (the runtime's type names) only.

Safety: every spec string reaches the source as a Python literal made by ``repr`` (which escapes
quotes, backslashes, newlines, NUL and every non-printable character, bidi controls included)
or as a docstring made by ``docstring``; nothing a spec says is placed in a comment.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, cast

from toolbind.contract import TYPES_EXPORTS, explicit_fields

from .. import naming

IMPORTS_MARK = "# <toolbind:imports>"
"""Where a template's body gets its import lines, made once the body is rendered."""


# Where every name a generated module may use comes from.
IMPORT_SOURCES: dict[str, str] = {
    **dict.fromkeys(("Annotated", "Any", "Generic", "Literal", "TypeVar", "Union"), "typing"),
    **dict.fromkeys(("ConfigDict", "Field", "JsonValue", "RootModel", "TypeAdapter"), "pydantic"),
    **dict.fromkeys(("ToolBinding", "load_bindings"), "toolbind.runtime"),
    "TypeAliasType": "typing_extensions",
    **dict.fromkeys(TYPES_EXPORTS, "toolbind.runtime.types"),
}


# A generated class must never shadow a name its module imports (a tool called "tool" would
# otherwise become `class ToolCall(ToolCall)`); naming reserves every one of them.
assert {n for n in IMPORT_SOURCES if n[:1].isupper()} <= naming.RESERVED_CLASS_NAMES


def import_block(*sources: str) -> str:
    """The import lines for the names ``sources`` use (names in string literals don't count)."""
    used: set[str] = set()
    for source in sources:
        used.update(names_in(source))
    return imports_for(used)


def imports_for(used: set[str]) -> str:
    """The import lines for the names in ``used`` that a generated module imports."""
    by_module: dict[str, list[str]] = {}
    for name in sorted(used & IMPORT_SOURCES.keys()):
        by_module.setdefault(IMPORT_SOURCES[name], []).append(name)
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


def py_value(value: Any, used: set[str]) -> str:
    """A Python expression for a frozen dataclass value of ``toolbind.runtime.contract``
    (fields left at their defaults are left out); ``used`` collects the class names."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        used.add(cls.__name__)
        args = [f"{name}={py_value(v, used)}" for name, v in explicit_fields(value)]
        return f"{cls.__name__}({', '.join(args)})"
    if isinstance(value, tuple):
        items = cast("tuple[Any, ...]", value)
        return "(" + "".join(py_value(v, used) + ", " for v in items) + ")"
    if isinstance(value, Mapping):
        table = cast("Mapping[Any, Any]", value)
        return (
            "{"
            + ", ".join(f"{py_value(k, used)}: {py_value(v, used)}" for k, v in table.items())
            + "}"
        )
    if value is None or isinstance(value, (str, bool, int, float)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} into generated code")  # pragma: no cover


def with_imports(body: str, *more: str) -> str:
    """``body`` with the import lines for the names it and ``more`` use at ``IMPORTS_MARK``."""
    return body.replace(IMPORTS_MARK, import_block(body, *more))
