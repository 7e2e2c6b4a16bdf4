"""Compiler layer: reading spec documents from disk. Imports ``ir``, ``diagnostics`` and
``normalise.yaml_keys`` (a parsed document's number keys are read as their text there) and
``_steps`` (a YAML file's parse is a step).

A spec file is JSON, YAML, or JSON Lines (one JSON document per line, as BFCL ships). Syntax
errors become diagnostics with line and column; nothing here raises to the caller.

Every document is checked to hold JSON values only (YAML can also produce dates, sets, binary
data, non-string keys and values that contain themselves; both can produce NaN and infinities)
and to be nested at most ``MAX_DEPTH`` levels deep, so later stages can walk it recursively.
``as_object`` and ``as_array`` give the untyped parsed values a static type.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import hashlib
import json
import math
import os
import re
import stat
import sys
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import yaml

from toolbind.yaml12 import TextDatesLoader as _TextDatesLoader
from toolbind.yaml12 import YamlLoader as _YamlLoader
from toolbind.yaml12 import noting_yaml11

from ._steps import DIRECT, Steps
from .diagnostics import Diagnostic, describe
from .ir import SourceLocation, escape_pointer_token
from .normalise import yaml_keys

SPEC_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
MAX_SPEC_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 256
"""Deepest nesting of arrays and objects a document may have (real specs stay below 30)."""
MAX_URL_BYTES = 16 * 1024 * 1024
"""Largest document a ``$ref`` to an allowed URL may download."""
URL_TIMEOUT = 10.0
"""Seconds a ``$ref`` to an allowed URL may take to download, in all."""
MAX_ALIAS_EXPANSION = 1_000_000
"""How many values YAML aliases may add when the document is expanded (a "billion laughs")."""
MAX_ALIAS_TEXT = 4 * 1024 * 1024
"""How many characters of text YAML aliases may add (one long string named many times)."""

# PyYAML's C composer recurses once per nesting level without a depth check and crashes the
# process at a few ten thousand levels. A document with fewer indicator characters than this
# cannot be nested that deeply; a larger one is measured with the (non-recursive) parser first.
_C_LOADER_SAFE_INDICATORS = 10_000


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` as a JSON object, or None when it is something else.

    Parsed documents are untyped (``Any``); this is the one place that says what a JSON object
    holds, so callers get ``dict[str, Any]`` instead of a dict of unknowns.
    """
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    return None


def as_array(value: object) -> list[Any] | None:
    """``value`` as a JSON array, or None when it is something else."""
    if isinstance(value, list):
        return cast("list[Any]", value)
    return None


@dataclass(frozen=True, slots=True)
class RefPolicy:
    """Where ``$ref``s may lead: files below ``dirs``, and URLs starting with one of ``urls``.

    A spec's own directory is added when it is read (``with_dir``); anything else must be
    allowed explicitly (``toolbind generate --allow-ref DIR_OR_URL``). Nothing else is read.
    """

    dirs: tuple[Path, ...] = ()
    urls: tuple[str, ...] = ()

    @classmethod
    def allowing(cls, allowed: Iterable[str | Path]) -> RefPolicy:
        """``allowed``: directories, and http(s) URL prefixes. Raises ValueError for others."""
        dirs: list[Path] = []
        urls: list[str] = []
        for item in allowed:
            text = str(item)
            if "://" in text:
                if urlsplit(text).scheme not in ("http", "https") or not urlsplit(text).netloc:
                    raise ValueError(f"{text}: expected a directory or an http(s) URL prefix")
                urls.append(text)
            elif Path(text).is_dir():
                dirs.append(Path(text).resolve())
            else:
                raise ValueError(f"{text}: no such directory — expected a directory or a URL")
        return cls(dirs=tuple(dirs), urls=tuple(urls))

    def with_dir(self, directory: Path) -> RefPolicy:
        return RefPolicy(dirs=(directory.resolve(), *self.dirs), urls=self.urls)

    def allows_file(self, path: Path) -> bool:
        """Whether ``path`` (symbolic links resolved) lies in an allowed directory."""
        real = path.resolve()
        return any(real == d or d in real.parents for d in self.dirs)

    def allows_url(self, url: str) -> bool:
        if urlsplit(url).scheme not in ("http", "https"):
            return False
        return any(
            url == prefix or url.startswith(prefix if prefix.endswith("/") else prefix + "/")
            for prefix in self.urls
        )


NO_EXTRA_REFS = RefPolicy()
"""Only the spec's own directory (the default)."""


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed spec file. ``lines`` is set for JSON Lines files (one value per line)."""

    path: str
    value: Any
    lines: bool = False
    # what was read with an assumed meaning (unquoted integer keys of an OpenAPI document)
    warnings: tuple[Diagnostic, ...] = ()


def display_path(path: Path) -> str:
    """The path as diagnostics show it: relative to the working directory when below it.

    The last component is kept as named (a symbolic link is shown as the link, not its target).
    """
    try:
        named = Path(os.path.abspath(path))
        return named.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


_FILE_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_a_regular_file(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file or a directory (reading a named pipe or a
    device could block forever or never end), else None. Follows symbolic links."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        try:
            return f"a symbolic link to a missing file ({os.readlink(path)})"
        except OSError:
            return None  # no such file at all: the caller says so
    except OSError:
        return None  # e.g. no permission: reading it says why
    return next((what for test, what in _FILE_KINDS if test(mode)), None)


# What the documents read during ``recording_reads`` were: file → digest of its bytes (None for
# a URL, whose content can change without a trace). Incremental regeneration keys on it.
_READS: contextvars.ContextVar[dict[str, str | None] | None] = contextvars.ContextVar(
    "toolbind_reads", default=None
)


def digest(data: bytes) -> str:
    """The short content digest incremental regeneration compares (sha256, 16 hex digits)."""
    return hashlib.sha256(data).hexdigest()[:16]


@contextlib.contextmanager
def recording_reads() -> Generator[dict[str, str | None]]:
    """Collect every spec file and URL read in the block (shown path → digest of its bytes)."""
    reads: dict[str, str | None] = {}
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


# The warnings of the documents loaded while this is set (``collecting_warnings``).
_WARNINGS: contextvars.ContextVar[dict[str, Diagnostic] | None] = contextvars.ContextVar(
    "toolbind_load_warnings", default=None
)


@contextlib.contextmanager
def collecting_warnings() -> Generator[dict[str, Diagnostic]]:
    """Collect the warnings of every document parsed in the block (a document read with an
    assumed meaning), once each however often it is loaded."""
    found: dict[str, Diagnostic] = {}
    token = _WARNINGS.set(found)
    try:
        yield found
    finally:
        _WARNINGS.reset(token)


def _report(warnings: tuple[Diagnostic, ...]) -> None:
    found = _WARNINGS.get()
    if found is not None:
        for w in warnings:
            found.setdefault(w.render(), w)


def _record(name: str, raw: bytes | None) -> None:
    reads = _READS.get()
    if reads is not None:
        reads[name] = None if raw is None else digest(raw)


def record_live(name: str) -> None:
    """Record that the compilation read ``name``, something live whose content can change
    without a trace (an MCP configuration's servers, listed at build time): as for a URL, the
    package is never reused by the next run, which lists them again."""
    _record(name, None)


def load_document(
    path: Path, shown: str | None = None, *, dates_as_text: bool = False, steps: Steps = DIRECT
) -> Document | Diagnostic:
    """Read and parse one spec file, or say exactly why it cannot be read.

    ``dates_as_text`` reads unquoted YAML dates as strings instead of refusing them; a YAML
    file's parse is a step (``steps``: ``_steps.Steps.parse``).
    """
    shown = shown or display_path(path)
    loc = SourceLocation(file=shown)
    special = not_a_regular_file(path)
    if special is not None:
        return Diagnostic(loc=loc, severity="error", found=special, expected="a spec file")
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            return Diagnostic(
                loc=loc,
                severity="error",
                found=f"the file is {size} bytes",
                expected=f"a spec of at most {MAX_SPEC_BYTES} bytes",
            )
        raw = path.read_bytes()
        _record(display_path(path), raw)
    except FileNotFoundError:
        return Diagnostic(loc=loc, severity="error", found="no such file", expected="a spec file")
    except IsADirectoryError:
        return Diagnostic(loc=loc, severity="error", found="a directory", expected="a spec file")
    except OSError as exc:
        return Diagnostic(
            loc=loc,
            severity="error",
            found=f"the file cannot be read ({exc.strerror or exc})",
            expected="a readable spec file",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return _not_utf8(raw, exc, loc)
    yaml_allowed = path.suffix.lower() not in (".json", ".jsonl")
    if yaml_allowed and text.lstrip()[:1] not in ("", "[", "{"):
        return steps.parse(
            display_path(path),
            text,
            lambda: parse_text(text, shown, yaml_allowed=True, dates_as_text=dates_as_text),
            shown=shown,
            dates=dates_as_text,
            size=len(raw),
        )
    return parse_text(text, shown, yaml_allowed=yaml_allowed, dates_as_text=dates_as_text)


def load_url(url: str) -> Document | Diagnostic:
    """Download and parse the JSON or YAML document at an (allowed) http(s) URL.

    Bounded: ``URL_TIMEOUT`` seconds in all, ``MAX_URL_BYTES`` bytes, no redirects (a redirect
    could lead anywhere; the final URL must be allowed and named instead).
    """
    import httpx  # only specs that allow URL refs pay for the import

    _record(url, None)

    loc = SourceLocation(file=url)

    def failed(found: str, hint: str | None = None) -> Diagnostic:
        return Diagnostic(
            loc=loc, severity="error", found=found, expected="a JSON or YAML document", hint=hint
        )

    deadline = time.monotonic() + URL_TIMEOUT
    try:
        with (
            httpx.Client(timeout=URL_TIMEOUT, follow_redirects=False, trust_env=False) as client,
            client.stream("GET", url) as response,
        ):
            if response.is_redirect:
                return failed(
                    f"a redirect ({response.status_code}) to {response.headers.get('location')}",
                    "allow and name the final URL",
                )
            if response.status_code != 200:
                return failed(f"HTTP status {response.status_code}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_URL_BYTES:
                    return failed(f"more than {MAX_URL_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the download took too long")
                chunks.append(chunk)
    except httpx.TimeoutException:
        return failed(f"no complete answer within {URL_TIMEOUT:g} s")
    except httpx.HTTPError as exc:
        return failed(f"the URL cannot be fetched ({type(exc).__name__}: {exc})")
    raw = b"".join(chunks)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return _not_utf8(raw, exc, loc)
    return parse_text(text, url)


def _not_utf8(raw: bytes, exc: UnicodeDecodeError, loc: SourceLocation) -> Diagnostic:
    # ``exc.start`` counts from after a byte order mark; report the position an editor shows.
    offset = exc.start + (len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0)
    line_start = raw.rfind(b"\n", 0, offset) + 1
    if line_start == 0 and raw.startswith(codecs.BOM_UTF8):
        line_start = len(codecs.BOM_UTF8)  # editors don't show the mark as a column
    column = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    return Diagnostic(
        loc=loc,
        severity="error",
        found=f"byte 0x{raw[offset]:02x} is not valid UTF-8",
        expected="a UTF-8 encoded JSON or YAML file",
        hint="save the file as UTF-8",
        line=raw.count(b"\n", 0, offset) + 1,
        column=column,
    )


def parse_text(
    text: str, shown: str, *, yaml_allowed: bool = True, dates_as_text: bool = False
) -> Document | Diagnostic:
    """Parse JSON, JSON Lines or (when allowed) YAML text."""
    loc = SourceLocation(file=shown)
    stripped = text.lstrip()
    if not stripped:
        return Diagnostic(
            loc=loc, severity="error", found="the file is empty", expected="a JSON or YAML spec"
        )
    if stripped[0] in "[{":
        try:
            return _checked(Document(shown, _json_loads(text)))
        except RecursionError:
            return _too_deep(loc)
        except json.JSONDecodeError as exc:
            lines = _json_lines(text, loc)
            if isinstance(lines, list):
                return _checked(Document(shown, lines, lines=True))
            error = lines or _json_error(text, exc, loc)
            if not yaml_allowed:
                return error
            # JSON is a subset of YAML 1.2 but not of PyYAML's 1.1 for every document;
            # report the JSON error when YAML cannot read it either.
            result = parse_yaml(text, shown, dates_as_text=dates_as_text)
            return error if isinstance(result, Diagnostic) else result
    if not yaml_allowed:
        try:
            value = _json_loads(text)
        except json.JSONDecodeError as exc:
            return _json_error(text, exc, loc)
        return Diagnostic(
            loc=loc,
            severity="error",
            found=f"the document is {describe(value)}",
            expected="a JSON object or array holding tool definitions",
        )
    return parse_yaml(text, shown, dates_as_text=dates_as_text)


def _json_loads(text: str) -> Any:
    """``json.loads``, with a number of more digits than Python converts (4,300 by default) a
    ``JSONDecodeError`` at that number, as a syntax error is, instead of a bare ``ValueError``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        limit = sys.get_int_max_str_digits()
        long = re.search(f"[0-9]{{{limit + 1},}}", text)
        raise json.JSONDecodeError(
            f"a number of more than {limit} digits", text, long.start() if long else 0
        ) from None


def _too_deep(loc: SourceLocation) -> Diagnostic:
    return Diagnostic(
        loc=loc,
        severity="error",
        found=f"the document is nested more than {MAX_DEPTH} levels deep",
        expected=f"at most {MAX_DEPTH} levels of nested arrays and objects",
    )


def _json_error(text: str, exc: json.JSONDecodeError, loc: SourceLocation) -> Diagnostic:
    return Diagnostic(
        loc=loc,
        severity="error",
        found=f"invalid JSON: {exc.msg.removesuffix(' starting at')}",
        expected="a JSON document (or one JSON value per line)",
        hint=_json_hint(text, exc.pos),
        line=exc.lineno,
        column=exc.colno,
    )


def _json_hint(text: str, pos: int) -> str | None:
    """Name the usual non-JSON habit at ``pos``: trailing commas, single quotes, comments."""
    here = text[pos : pos + 2]
    before = text[:pos].rstrip()[-1:]
    if before == "," and here[:1] in ("]", "}"):
        return "JSON allows no comma after the last item"
    if here[:1] == "'":
        return "JSON strings and names are written in double quotes"
    if here in ("//", "/*") or here[:1] == "#":
        return "JSON has no comments"
    return None


def _json_lines(text: str, loc: SourceLocation) -> list[Any] | Diagnostic | None:
    """Parse JSON Lines; a Diagnostic for a bad line, None when the text is not JSON Lines.

    The text counts as JSON Lines when it has several non-blank lines and the first of them is
    a complete JSON value on its own (a pretty-printed document starts with a lone '{' or '[').
    """
    numbered = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    if len(numbered) < 2:
        return None
    values: list[Any] = []
    for n, line in numbered:
        try:
            values.append(_json_loads(line))
        except RecursionError:
            return _too_deep(loc)
        except json.JSONDecodeError as exc:
            if not values:
                return None
            return Diagnostic(
                loc=loc,
                severity="error",
                found=f"invalid JSON: {exc.msg.removesuffix(' starting at')}",
                expected="one complete JSON value per line (JSON Lines)",
                hint=_json_hint(line, exc.pos),
                line=n,
                column=exc.colno,
            )
    return values


def _char_at(text: str, line: int, column: int) -> str | None:
    """The character at a 0-based line and column of ``text``, if there is one."""
    lines = text.split("\n", line + 1)
    if line < len(lines) and column < len(lines[line]):
        return lines[line][column]
    return None


def parse_yaml(text: str, shown: str, *, dates_as_text: bool = False) -> Document | Diagnostic:
    loc = SourceLocation(file=shown)
    try:
        if yaml_too_deep(text):
            return _too_deep(loc)
        loader = _TextDatesLoader if dates_as_text else _YamlLoader
        with noting_yaml11() as read:
            value = yaml.load(text, Loader=loader)  # a safe loader: plain data only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        context = exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if "maximum nesting depth" in problem:  # PyYAML >= 6.0.4 has a depth limit of its own
            deep = _too_deep(loc)
            return Diagnostic(
                loc=loc,
                severity="error",
                found=deep.found,
                expected=deep.expected,
                hint=deep.hint,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            )
        hint = None
        if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
            # PyYAML says only "found character '\t' that cannot start any token"
            problem = "a tab character: YAML indents with spaces, never tabs"
            hint = "replace the tab with spaces"
        elif exc.context and exc.problem and not exc.context.startswith("while "):
            # e.g. "expected a single document in the stream" + "but found another document"
            problem = f"{exc.context}, {exc.problem}"
            if "single document" in exc.context:
                hint = "a spec file holds one YAML document; split the file at the '---' line"
        elif exc.context and context is not None and (mark is None or context.line != mark.line):
            hint = (
                f"{exc.context} that starts at line {context.line + 1}, column {context.column + 1}"
            )
        return Diagnostic(
            loc=loc,
            severity="error",
            found=f"invalid YAML: {problem}",
            expected="a well-formed YAML or JSON document",
            hint=hint,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        )
    except (yaml.YAMLError, RecursionError) as exc:
        return Diagnostic(
            loc=loc,
            severity="error",
            found=f"invalid YAML: {type(exc).__name__}",
            expected="a well-formed YAML or JSON document",
        )
    checked = _checked(Document(shown, value), yaml_source=True, int_keys=dates_as_text)
    if isinstance(checked, Document) and read:
        checked = Document(
            checked.path,
            checked.value,
            checked.lines,
            (*checked.warnings, _yaml11_warning(shown, read)),
        )
    if isinstance(checked, Document) and checked.warnings:
        _report(checked.warnings)
    return checked


def _yaml11_warning(shown: str, read: list[tuple[str, int, int]]) -> Diagnostic:
    """One warning for the plain values of a file that YAML 1.1 reads otherwise, at the first."""
    read = sorted(read, key=lambda r: (r[1], r[2]))
    shown_values: list[str] = []
    for text, line, column in read[:3]:
        now, was = _reading(text, _TextDatesLoader), _reading(text, yaml.SafeLoader)
        shown_values.append(f"{text} at line {line}, column {column} ({now}; YAML 1.1: {was})")
    more = f" and {len(read) - 3} more" if len(read) > 3 else ""
    return Diagnostic(
        loc=SourceLocation(file=shown),
        severity="warning",
        found=f"unquoted values that YAML 1.1 reads otherwise, read as YAML 1.2 does (as "
        f"OpenAPI recommends): {'; '.join(shown_values)}{more}",
        expected="values every YAML version reads alike",
        hint="quote text ('NO', '12:30'); write booleans as true/false and numbers without a "
        "leading zero",
        line=read[0][1],
        column=read[0][2],
    )


def _reading(text: str, loader: type[Any]) -> str:
    """What ``loader`` reads a plain scalar's ``text`` as, shown as JSON."""
    try:
        return json.dumps(yaml.load(text, Loader=loader))
    except (yaml.YAMLError, ValueError, TypeError):  # PyYAML 1.1's "=" has no constructor
        return "no value (an error)"


def yaml_too_deep(text: str) -> bool:
    """Whether the YAML text nests collections more than ``MAX_DEPTH`` levels deep.

    Every nesting level needs an indicator character of its own, so a small count proves the
    document shallow enough for the C loader; otherwise the parser's events are counted.
    """
    if sum(text.count(c) for c in "[{-:?") <= _C_LOADER_SAFE_INDICATORS:
        return False
    if _nesting_bound(text) <= _C_LOADER_SAFE_INDICATORS:
        return False
    parser: Any = _YamlLoader(text)  # what ``yaml.parse`` does, without the untyped signature
    try:
        depth = 0
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return False
    finally:
        parser.dispose()


def _nesting_bound(text: str) -> int:
    """An upper bound of how deeply the YAML text nests collections, read from the text alone.

    A flow collection opens with ``[`` or ``{`` (and ``[a: b]`` adds one single-pair mapping per
    ``[``). Block collections nest by indentation: a child starts at a larger column than its
    parent, except a sequence that is a mapping's value, which may share the key's column (so
    at most two levels per column). A block collection starts after nothing but indentation
    and indicators on its line (properties such as ``&a`` or ``!!seq`` put it on the next
    line), so the longest such lead bounds its column (``splitlines`` breaks lines wherever
    YAML does, and at a few more characters, which YAML does not allow in a lead). Characters inside scalars only raise the
    bound.
    """
    lead = max(len(line) - len(line.lstrip(" \t?:-")) for line in text.splitlines())
    return 2 * (lead + 1) + 2 * text.count("[") + text.count("{") + 1


@dataclass(frozen=True, slots=True)
class _Problem:
    pointer: str
    found: str
    expected: str
    hint: str | None = None


_JSON_VALUES = (
    "JSON values only (strings, numbers, booleans, null, arrays, objects with string keys)"
)


def _checked(
    doc: Document, *, yaml_source: bool = False, int_keys: bool = False
) -> Document | Diagnostic:
    """``doc``, or the first value JSON cannot hold. ``int_keys``: unquoted number map keys
    (``200:`` under ``responses``, common in real OpenAPI YAML; Matrix's ``1.18:`` under an
    extension) are read as their text, with one warning located at the first."""
    plain = plainly_json(doc.value) if yaml_source else _shallow_json(doc.value)
    if plain:
        return doc
    if int_keys:
        fixed = yaml_keys.NUMBER_KEYS.apply(doc.value, SourceLocation(file=doc.path), None)
        if fixed is not None:
            doc = Document(doc.path, fixed.value, doc.lines, warnings=fixed.diagnostics)
    problem = _first_problem(doc.value, yaml_source=yaml_source)
    if problem is None:
        return doc
    return Diagnostic(
        loc=SourceLocation(file=doc.path, pointer=problem.pointer),
        severity="error",
        found=problem.found,
        expected=problem.expected,
        hint=problem.hint,
    )


def plainly_json(value: Any, depth: int = 0) -> bool:
    """A quick check that ``_first_problem`` finds nothing: only dicts with ``str`` keys, lists,
    and JSON scalars, each container and each string longer than one character reached once
    (no YAML alias: an aliased string is what ``MAX_ALIAS_TEXT`` bounds), none too deep.

    Several times faster than ``_first_problem``, which builds a JSON pointer for every value
    so that it can say where a problem is; a False here only means "look closer". ``depth``:
    how deep ``value`` sits in its document.
    """
    seen: set[int] = set()
    texts: set[int] = set()  # ids of the strings met (the parsers make a new one per scalar)
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        node, depth = stack.pop()
        ident = id(node)
        if isinstance(node, dict):
            obj = cast("dict[object, Any]", node)
            if not all(isinstance(key, str) for key in obj):
                return False
            children: Iterable[Any] = obj.values()
        elif isinstance(node, list):
            children = cast("list[Any]", node)
        else:
            return _plain_scalar(node)
        if depth >= MAX_DEPTH or ident in seen:
            return False
        seen.add(ident)
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((cast("Any", child), depth + 1))
            elif isinstance(child, str):
                if len(child) > 1:
                    if id(child) in texts:
                        return False
                    texts.add(id(child))
            elif not _plain_scalar(child):
                return False
    return True


def _shallow_json(value: Any) -> bool:
    """``plainly_json`` for what ``json.loads`` made: it shares no value (no alias to bound) and
    its keys are strings, so only the nesting depth and the non-finite numbers it accepts
    (``NaN``, ``Infinity``, ``1e400``) are left to check — a few times faster on a 13 MB spec.
    Level by level, on exact types (``json.loads`` makes no subclass)."""
    if not isinstance(value, (dict, list)):
        return _plain_scalar(value)
    level: list[Any] = [value]
    depth = 0
    while level:
        if depth >= MAX_DEPTH:
            return False
        below: list[Any] = []
        for node in level:
            children: Iterable[Any] = (
                cast("dict[str, Any]", node).values()
                if type(node) is dict
                else cast("list[Any]", node)
            )
            for child in children:
                kind = type(cast("object", child))
                if kind is dict or kind is list:
                    below.append(child)
                elif kind is float and not math.isfinite(child):
                    return False
        level = below
        depth += 1
    return True


def _plain_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int))


def _first_problem(value: Any, *, yaml_source: bool) -> _Problem | None:
    """The first value (in document order) that JSON cannot hold, or a nesting too deep.

    Iterative, so no input can exhaust the stack. A YAML alias may share one value between
    several places; it is checked once, and the size of the expanded document is bounded.
    """
    # (value, pointer, depth, leaving): ``leaving`` marks the end of a container's children.
    stack: list[tuple[Any, str, int, bool]] = [(value, "", 0, False)]
    open_containers: dict[int, str] = {}  # id → pointer of the containers being walked
    # id → (values, characters of text) in the expanded container
    sizes: dict[int, tuple[int, int]] = {}
    unique = 0  # values walked, each shared container once
    unique_text = 0  # characters of text walked, each shared string once
    texts: set[int] = set()  # ids of the strings walked (an alias shares one string object)
    while stack:
        node, pointer, depth, leaving = stack.pop()
        obj = as_object(node)
        array = as_array(node)
        if leaving:
            del open_containers[id(node)]
            children: list[Any] = list(obj.values()) if obj is not None else (array or [])
            values, text = 1, sum(len(k) for k in obj) if obj is not None else 0
            for c in children:
                v, t = sizes.get(id(c), (1, len(c) if isinstance(c, str) else 0))
                values, text = values + v, text + t
            sizes[id(node)] = (values, text)
            continue
        if obj is None and array is None:
            unique += 1
            if isinstance(node, str) and id(node) not in texts:
                texts.add(id(node))
                unique_text += len(node)
            problem = _scalar_problem(node, pointer)
            if problem is not None:
                return problem
            continue
        if id(node) in open_containers:
            return _Problem(
                pointer,
                "a YAML alias that contains itself "
                f"(the value at #{open_containers[id(node)]} repeats inside itself)",
                _JSON_VALUES,
                "JSON cannot hold a value that contains itself; write the nested value out",
            )
        if id(node) in sizes:  # shared through an alias and already checked
            continue
        if depth >= MAX_DEPTH:
            # a pointer hundreds of tokens long helps no one: say where the deep part starts
            tokens = pointer.split("/")[1:]
            start = "/".join(["#", *tokens[:8]]) + ("/…" if len(tokens) > 8 else "")
            return _Problem(
                "",
                f"the document is nested more than {MAX_DEPTH} levels deep (under {start})",
                f"at most {MAX_DEPTH} levels of nested arrays and objects",
            )
        unique += 1
        open_containers[id(node)] = pointer
        stack.append((node, pointer, depth, True))
        entries: list[tuple[str, Any]] = []
        if obj is not None:
            # YAML maps may have keys of any type, so the keys are not ``str`` yet
            for k, v in cast("dict[object, Any]", obj).items():
                if not isinstance(k, str):
                    return _key_problem(k, pointer)
                unique_text += len(k)
                entries.append((f"{pointer}/{escape_pointer_token(k)}", v))
        else:
            entries = [(f"{pointer}/{i}", v) for i, v in enumerate(array or [])]
        stack.extend((v, p, depth + 1, False) for p, v in reversed(entries))
    return _alias_problem(value, sizes, unique, unique_text) if yaml_source else None


def _alias_problem(
    value: Any, sizes: dict[int, tuple[int, int]], unique: int, unique_text: int
) -> _Problem | None:
    """Whether YAML aliases expand the document (``sizes``: each container's values and
    characters of text, expanded) too far beyond what was written (``unique`` values and
    ``unique_text`` characters, each shared one once)."""
    expanded, expanded_text = sizes.get(id(value), (1, len(value) if isinstance(value, str) else 0))
    if expanded - unique > MAX_ALIAS_EXPANSION:
        return _Problem(
            "",
            f"YAML aliases expand the document from {unique} to {expanded} values",
            f"at most {MAX_ALIAS_EXPANSION} values added by aliases",
            "aliases of aliases multiply; write the repeated values out or share fewer",
        )
    if expanded_text - unique_text > MAX_ALIAS_TEXT:
        return _Problem(
            "",
            f"YAML aliases expand the document's text from {unique_text} to {expanded_text} "
            "characters",
            f"at most {MAX_ALIAS_TEXT} characters added by aliases",
            "an alias repeats all the text it names; write the repeated values out or share fewer",
        )
    return None


def _scalar_problem(value: Any, pointer: str) -> _Problem | None:
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        spelled = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return _Problem(
            pointer,
            f"the number {spelled}",
            "a finite number",
            "JSON has no NaN or Infinity, and numbers beyond ±1.8e308 overflow to Infinity",
        )
    kind = type(value).__name__
    if kind in ("date", "datetime"):
        return _Problem(
            pointer,
            f"a YAML {'timestamp' if kind == 'datetime' else 'date'} ({value})",
            _JSON_VALUES,
            f"quote dates and timestamps: '{value}'",
        )
    return _Problem(pointer, f"a YAML value of type {kind}", _JSON_VALUES)


def _key_problem(key: object, pointer: str) -> _Problem:
    if key is None or isinstance(key, (bool, int, float)):
        found = f"a YAML map key that is {describe(key)}"
    else:
        found = f"a YAML map key of type {type(key).__name__} ({key})"
    hint = f"quote the key: '{key}'"
    if isinstance(key, bool):
        hint = "YAML reads unquoted true/false as booleans; quote the key"
    elif key is None:
        hint = "YAML reads an unquoted ~ or null as null; quote the key"
    return _Problem(pointer, found, "string keys (JSON object names are always strings)", hint)
