"""Compiler layer: the pipeline (spec files → IR → rendered, formatted files) and output writing.

Imports every other compiler module; nothing imports it but the public API and the CLI.

Output is all-or-nothing: the whole tree is rendered and formatted in a temporary directory next
to the target, then swapped in with two renames; an interrupted run leaves the previous tree (a
crash between the two renames is repaired by the next run). A directory that toolbind did not
write (no manifest) is never replaced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import gc
import importlib.util
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbind._version import VERSION

from ._incremental import (
    Previous,
    Reused,
    Signatures,
    Texts,
    diagnostic_to_json,
    options_digest,
)
from ._load import (
    NO_EXTRA_REFS,
    SPEC_SUFFIXES,
    ParseCache,
    RefPolicy,
    as_object,
    digest,
    display_path,
    keeping_parses,
    recording_reads,
)
from .diagnostics import Diagnostic, Diagnostics
from .errors import OutputError as OutputError
from .errors import SelectionError as SelectionError
from .errors import SpecError
from .ir import SourceLocation, SpecPackage
from .naming import Scope, module_name

if TYPE_CHECKING:
    from .frontends.openapi import OperationFilter

# The frontends and the backend are imported where a spec is compiled: a ``generate`` that
# reuses every package (``_incremental``) needs neither, nor Jinja2, YAML's parsers or pydantic.

MANIFEST = "toolbind.json"
PARSES = ".toolbind-cache"
"""Where ``generate`` keeps, for the next run, the parses of large YAML specs (``ParseCache``),
their operations' lowering (``frontends._opmemo``) and large packages' render memos
(``Rendered.memo``): not generated code, ignored by git (its own ``.gitignore``) and by
``--check``."""
RUFF_ARGS = (
    "format",
    "--isolated",
    "--no-cache",
    "--line-length",
    "100",
    "--target-version",
    "py311",
    "--quiet",
)


@dataclass(frozen=True, slots=True)
class GeneratedTree:
    """Every file of an output directory (relative POSIX path → text) and what made it."""

    files: Texts  # (a file reused from the previous output is read when its text is asked for)
    packages: dict[str, str]  # package name → spec source
    diagnostics: list[Diagnostic]


def _as_url(item: Path) -> str | None:
    """``item`` as the http(s) URL it was written as, or None when it names no URL."""
    match = re.fullmatch(r"(https?):/+(.+)", str(item), flags=re.IGNORECASE)
    return f"{match[1]}://{match[2]}" if match else None


def find_specs(inputs: Iterable[Path], diags: Diagnostics) -> list[Path]:
    """Spec files named directly, or lying at the top of a named directory (sorted)."""
    found: list[Path] = []
    for item in inputs:
        try:
            is_dir = item.is_dir()
            files = sorted(
                p
                for p in (item.iterdir() if is_dir else ())
                if p.is_file() and p.suffix.lower() in SPEC_SUFFIXES and not p.name.startswith(".")
            )
            present = is_dir or item.exists() or item.is_symlink()  # a broken link: load says
        except OSError as exc:  # e.g. a directory without read or search permission
            diags.error(
                SourceLocation(file=display_path(item)),
                f"cannot be read ({exc.strerror or exc})",
                "a readable spec file or directory of specs",
            )
            continue
        if is_dir:
            if not files:
                diags.error(
                    SourceLocation(file=display_path(item)),
                    "the directory holds no spec files",
                    f"files ending in {', '.join(SPEC_SUFFIXES)}",
                )
            found.extend(files)
        elif present:
            found.append(item)
        elif (url := _as_url(item)) is not None:
            # (a Path has already folded ``http://`` into ``http:/``: named as it was given)
            diags.error(
                SourceLocation(file=url),
                "a URL, which generate does not download",
                "a spec file or a directory of specs",
                hint=f"save it first (curl -o spec.json {url}) and pass the file; "
                "$refs to URLs are followed with --allow-ref",
            )
        else:
            diags.error(
                SourceLocation(file=display_path(item)),
                "no such file or directory",
                "a spec file or a directory of specs",
            )
    seen: set[Path] = set()
    unique: list[Path] = []
    for p in found:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def read_specs(
    paths: list[Path],
    diags: Diagnostics,
    progress: Callable[[str], None] | None = None,
    select: OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
) -> list[SpecPackage]:
    from .frontends import read_spec

    packages: list[SpecPackage] = []
    for path in paths:
        if progress:
            progress(display_path(path))
        pkg = read_spec(path, display_path(path), diags, select, refs)
        if pkg is not None:
            packages.append(pkg)
    return packages


def _shadows(name: str) -> str | None:
    """What importable module ``name`` would shadow (or be shadowed by): the standard library's,
    or an installed distribution's top-level module; None when the name is free."""
    if name in sys.stdlib_module_names:
        return f"the standard library module {name!r}"
    # find_spec (a look at sys.path, nothing imported) first: reading every distribution's
    # metadata costs ~0.2 s, paid only when something of that name is there to be named
    dists = _installed_modules().get(name) if _findable(name) else None
    if dists:
        return f"the installed module {name!r} (from {', '.join(sorted(set(dists)))})"
    return None


def _findable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken finder on sys.path: look at the metadata
        return True


@functools.cache
def _installed_modules() -> Mapping[str, list[str]]:
    """Top-level module -> the installed distributions that provide it (read once per run)."""
    import importlib.metadata

    return importlib.metadata.packages_distributions()


def package_names(
    names: Mapping[str, str] | None, packages: list[SpecPackage] | list[str]
) -> dict[str, str]:
    """``names`` (spec file → package name, as the user gave them) keyed by each package's
    ``source``; raise ``SelectionError`` for a name that is no identifier, a spec that was not
    compiled, or one name given twice."""
    if not names:
        return {}
    sources = [p if isinstance(p, str) else p.source for p in packages]
    by_file = {Path(source).resolve(): source for source in sources}
    out: dict[str, str] = {}
    for spec, name in names.items():
        if not name.isidentifier() or keyword.iskeyword(name) or name == "toolbind":
            raise SelectionError(
                f"package name {name!r} (for {spec}) is not a usable Python package name — "
                "letters, digits and _, not starting with a digit, not a keyword"
            )
        source = by_file.get(Path(spec).resolve())
        if source is None:
            raise SelectionError(
                f"--package names {spec}, which is not one of the specs compiled "
                f"({', '.join(sorted(sources)) or 'none'})"
            )
        if name in out.values():
            raise SelectionError(f"package name {name!r} is given to two specs")
        out[source] = name
    return out


def render_tree(
    packages: list[SpecPackage], diags: Diagnostics, names: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Render every package; a package is named after its spec file's stem, or as ``names``
    (package ``source`` → name, from ``package_names``) says."""
    claimed = claim_names([pkg.source for pkg in packages], names)
    files: dict[str, str] = {}
    manifest: dict[str, str] = {}
    for pkg in packages:
        name, naming = claimed[pkg.source]
        diags.items.extend(naming)
        files.update(_render_package(pkg, name, diags))
        manifest[name] = pkg.source
    files[MANIFEST] = _manifest_text(manifest, {})
    return files


def claim_names(
    sources: list[str], names: Mapping[str, str] | None = None
) -> dict[str, tuple[str, list[Diagnostic]]]:
    """Each spec's package name (in order: a later spec whose stem is taken gets another) and
    the notes and warnings about it."""
    chosen = dict(names or {})
    scope = Scope(taken={"toolbind", *chosen.values()})
    out: dict[str, tuple[str, list[Diagnostic]]] = {}
    for source in sources:
        diags = Diagnostics()
        if source in chosen:
            name = chosen[source]
        else:
            name = scope.claim(module_name(Path(source).stem), original=source)
        if source not in chosen and name != module_name(Path(source).stem):
            diags.note(
                SourceLocation(file=source),
                f"generated as package {name!r} (its name was taken)",
            )
        shadowed = _shadows(name)
        if shadowed:
            diags.warning(
                SourceLocation(file=source),
                f"the generated package {name!r} has the name of {shadowed}: whichever comes "
                "first on sys.path hides the other",
                "a package name nothing else uses",
                hint="name it with --package SPEC=NAME (package_names= in the API), or rename "
                "the spec file (the package is named after it)",
            )
        out[source] = (name, diags.items)
    return out


def _render_package(pkg: SpecPackage, name: str, diags: Diagnostics) -> dict[str, str]:
    return _render_keyed(pkg, name, diags, {})[0]


def _render_keyed(
    pkg: SpecPackage,
    name: str,
    diags: Diagnostics,
    known: Mapping[str, str],
    memo: Mapping[str, Any] | None = None,
    previous: Callable[[str], str | None] | None = None,
) -> tuple[dict[str, str], dict[str, str], list[str], dict[str, Any]]:
    """The package's files, the keys of those rendered from a key, the files not rendered
    because ``known`` (path → key of the previous run) has their key (paths below ``name``),
    and what the next render may reuse (``memo``: the previous run's; ``previous``: a file of
    the previous output, by path, as written)."""
    from .backends.python import PythonBackend

    prefix = f"{name}/"
    rendered = PythonBackend(
        pkg,
        name,
        diags,
        version=VERSION,
        known={rel.removeprefix(prefix): key for rel, key in known.items()},
        memo=memo,
        previous=None if previous is None else lambda rel: previous(prefix + rel),
    ).render()
    return (
        {prefix + rel: text for rel, text in rendered.files.items()},
        {prefix + rel: key for rel, key in rendered.keys.items()},
        [prefix + rel for rel in rendered.skipped],
        rendered.memo,
    )


def _manifest_text(packages: Mapping[str, str], cache: Mapping[str, Any]) -> str:
    """The manifest: the packages generated here (name → spec) and, per package, what
    incremental regeneration needs to reuse it (``_incremental``)."""
    data: dict[str, Any] = {
        "$comment": "DO NOT EDIT: written by toolbind; lists the packages it generated here.",
        "generator": f"toolbind {VERSION}",
        "packages": dict(packages),
    }
    if cache:
        data["incremental"] = dict(cache)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def scaffold(
    spec: Path, import_path: str | None = None, refs: RefPolicy = NO_EXTRA_REFS
) -> tuple[str, str]:
    """The Activity scaffold module for ``spec`` and the package name it is generated as.

    ``import_path`` is where the user's code imports the generated package from (default
    ``generated.<package>``). Raises ``SpecError`` like ``build``.
    """
    from .backends.python import PythonBackend, scaffold_for

    diags = Diagnostics()
    packages = read_specs(find_specs([spec], diags), diags, refs=refs)
    if diags.has_errors or not packages:
        raise SpecError(diags.items)
    (pkg,) = packages
    name = module_name(Path(pkg.source).stem)
    rendered = PythonBackend(pkg, name, diags, version=VERSION).render()
    if diags.has_errors:
        raise SpecError(diags.items)
    text = scaffold_for(rendered, import_path or f"generated.{name}")
    return format_source(text), name


def format_source(text: str) -> str:
    """ruff-format one module held in memory."""
    result = subprocess.run(
        [ruff_binary(), *RUFF_ARGS, "--stdin-filename", "module.py", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"toolbind generated code that ruff cannot format:\n{result.stderr}")
    return result.stdout


def ruff_binary() -> str:
    from ruff.__main__ import find_ruff_bin  # pyright: ignore[reportMissingTypeStubs]

    return str(find_ruff_bin())


def format_dir(directory: Path) -> None:
    """ruff-format every Python file below ``directory`` in one process (pinned ruff)."""
    format_paths(directory, ["."])


def format_paths(root: Path, rels: list[str]) -> None:
    """ruff-format some files below ``root`` (in batches, to keep command lines short)."""
    _finish_format(_start_format(root, rels))


def _start_format(root: Path, rels: list[str]) -> tuple[Path, list[list[str]], Any]:
    """ruff formatting ``rels`` below ``root``: the first batch started, the others to run
    one after another (``_finish_format`` runs them and waits)."""
    batches = [rels[start : start + 500] for start in range(0, len(rels), 500)]
    return root, batches[1:], _ruff(root, batches[0]) if batches else None


def _ruff(root: Path, rels: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ruff_binary(), *RUFF_ARGS, *rels],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish_format(running: tuple[Path, list[list[str]], Any]) -> None:
    """Run ``_start_format``'s other batches, waiting for each; generated code that ruff
    cannot format is a toolbind bug, not a user error."""
    root, rest, process = running
    while process is not None:
        _, err = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"toolbind generated code that ruff cannot format:\n{err}")
        process = _ruff(root, rest.pop(0)) if rest else None


def build(
    inputs: list[Path],
    progress: Callable[[str], None] | None = None,
    *,
    formatted: bool = True,
    select: OperationFilter | None = None,
    stage: Path | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    strict: bool = False,
    names: Mapping[str, str] | None = None,
    previous: Path | None = None,
) -> GeneratedTree:
    """Compile ``inputs`` to a (formatted) tree in memory; raise ``SpecError`` on any error.

    ``names``: spec file → package name, for the specs whose package is not to be named after
    the file (``SelectionError`` for a bad name or a spec not among ``inputs``).

    ``strict``: every warning (what was read with an assumed meaning: ``type: int`` taken as
    ``integer``, an undeclared path parameter, a ``$ref`` to nothing...) is an error instead.

    ``select`` keeps only some operations of OpenAPI specs (by tag, path or operation);
    ``refs`` allows ``$ref``s to files and URLs beyond each spec's directory.
    ``stage`` (an empty directory): the formatted files are left there too, for ``write_into``
    to move into place — ruff formats files on disk, and writing them a second time and
    deleting a scratch copy costs more than compiling a mid-size spec (ruff rewrites every
    file, and unlinking a just-rewritten file waits for its write-back on ext4).
    ``previous``: a previous output directory whose packages are reused where nothing they
    depend on changed (``_incremental``); the tree is the same as without it.
    """
    diags = Diagnostics()
    with _no_cycle_collection():
        paths = find_specs(inputs, diags)
        sources = [display_path(p) for p in paths]
        prev = Previous(previous if formatted and not select else None)
        try:
            tentative = claim_names(sources, package_names(names, sources))
        except SelectionError:  # reported below, in its turn
            tentative = {}
        units: list[_Unit] = []
        # specs that could not be read: (where their diagnostics go, source, diagnostics)
        failed: list[tuple[int, str, list[Diagnostic]]] = []
        for path, source in zip(paths, sources, strict=True):
            name = tentative.get(source, ("", []))[0]
            options = options_digest(VERSION, name, refs, strict)
            reused = prev.reuse(source, name, options) if name else None
            if reused is not None:
                diags.items.extend(reused.read)
                units.append(_Unit(source=source, options=options, reused=reused))
                continue
            if progress:
                progress(source)
            own = Diagnostics()
            parses = ParseCache(
                ParseCache.read(prev.kept_text(source, _parses_file(name))) if name else None
            )
            from .frontends import read_spec
            from .frontends._opmemo import OperationMemo, keeping_operations

            operations = OperationMemo(
                prev.parses(source, _operations_file(name)) if name else None,
                parses.changes,
                options,
            )
            with recording_reads() as reads, keeping_parses(parses), keeping_operations(operations):
                pkg = read_spec(path, source, own, select, refs)
            if pkg is None or own.has_errors:  # (said below unless another spec $refs it)
                failed.append((len(diags.items), source, own.items))
                continue
            diags.items.extend(own.items)
            units.append(
                _Unit(
                    source=source,
                    options=options,
                    pkg=pkg,
                    reads=reads,
                    read=own.items,
                    parses=parses.text() if stage is not None else None,
                    operations=operations.text() if stage is not None else None,
                )
            )
        _parts(diags, failed, units)
        if strict:
            _warnings_as_errors(diags)
        if diags.has_errors:
            raise SpecError(diags.items)
        packages = [u.pkg for u in units if u.pkg is not None]
        if select:
            _check_selection(select, packages)
        claimed = claim_names([u.source for u in units], package_names(names, sources))
        files = Texts()
        manifest: dict[str, str] = {}
        origin: dict[str, str] = {}  # files the previous output holds as they are now
        for u in units:
            u.name, naming = claimed[u.source]
            diags.items.extend(naming)
            if u.reused is not None:
                diags.items.extend(u.reused.rendered)
                files.merge(u.reused.files)
                u.formatted = set(u.reused.files)
                origin.update({rel: prev.path(rel) for rel in u.reused.files})
            elif u.pkg is not None:
                known = prev.keys(u.source, u.options) if formatted else {}
                # (kept only where the parses are: beside a staged output)
                was = prev.parses(u.source, _memo_file(u.name)) if known and stage else None
                own = Diagnostics()
                rendered, keys, skipped, memo = _render_keyed(
                    u.pkg,
                    u.name,
                    own,
                    known,
                    was,
                    lambda rel, source=u.source: prev.text(rel, prev.digests(source, rel)),
                )
                # a module not rendered again is the previous output's file, bytes confirmed;
                # one that is not as written makes the package render whole
                kept = {rel: prev.kept(rel, prev.digests(u.source, rel)) for rel in skipped}
                if any(k is None for k in kept.values()):
                    own = Diagnostics()
                    rendered, keys, _, memo = _render_keyed(u.pkg, u.name, own, {})
                    kept = {}
                u.files = Texts(rendered)
                if u.parses is not None:
                    u.files[_parses_file(u.name)] = u.parses
                if u.operations is not None:
                    u.files[_operations_file(u.name)] = u.operations
                if memo and stage is not None:
                    rel = _memo_file(u.name)
                    # every entry taken as it was: the previous file is the same text
                    same = was is not None and memo.keys() == was.keys()
                    same = same and all(memo[k] is (was or {})[k] for k in memo)
                    text = prev.text(rel, prev.digests(u.source, rel)) if same else None
                    u.files[rel] = text or (
                        json.dumps(
                            memo, ensure_ascii=False, separators=(",", ":"), check_circular=False
                        )
                        + "\n"
                    )
                u.rendered = own.items
                diags.items.extend(own.items)
                u.raw = {
                    rel: keys.get(rel) or digest(text.encode()) for rel, text in u.files.items()
                }
                for rel, k in kept.items():
                    assert k is not None
                    u.files.keep(rel, k)
                    u.raw[rel] = keys[rel]
                    u.formatted.add(rel)
                    origin[rel] = prev.path(rel)
                for rel in list(u.files):
                    if rel in kept:
                        continue
                    done = prev.formatted(u.source, rel, u.raw[rel]) if formatted else None
                    if done is not None:
                        u.files.keep(rel, done)
                        u.formatted.add(rel)
                        origin[rel] = prev.path(rel)
                files.merge(u.files)
            manifest[u.name] = u.source
    if diags.has_errors:
        raise SpecError(diags.items)
    if not formatted:
        files[MANIFEST] = _manifest_text(manifest, {})
        return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)
    if any(rel.startswith(f"{PARSES}/") for rel in files):
        files[f"{PARSES}/.gitignore"] = "*\n"
    if stage is not None and prev.out is not None and all(u.reused for u in units):
        cache = {u.name: u.entry(files) for u in units}
        text = _manifest_text(manifest, {k: v for k, v in cache.items() if v})
        if _holds(prev.out, files, text):
            # the previous output is this tree already (each file's digest was checked):
            # nothing is staged, and ``write_into`` leaves it as it is
            files[MANIFEST] = text
            return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)
    todo = {rel for rel in files} - {rel for u in units for rel in u.formatted}
    if stage is not None:
        files = _format_in(stage, files, todo, origin)
    else:
        with tempfile.TemporaryDirectory(prefix="toolbind-") as tmp:
            files = _format_in(Path(tmp), files, todo)
    cache = {u.name: u.entry(files) for u in units}
    files[MANIFEST] = _manifest_text(manifest, {k: v for k, v in cache.items() if v})
    if stage is not None:
        _write_files(stage, {MANIFEST: files[MANIFEST]})
    return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)


def _parts(
    diags: Diagnostics, failed: list[tuple[int, str, list[Diagnostic]]], units: list[_Unit]
) -> None:
    """The diagnostics of the specs that could not be read, in their places — but a file that
    is no spec (``NOT_A_SPEC``) and that another spec of the run ``$ref``s is a part of a split
    spec (``components.yaml`` beside ``openapi.yaml`` in ``specs/``): a note says so instead of
    its errors (what the referring spec uses of it is read, and reported, there)."""
    read_by: dict[str, str] = {}
    for u in units:
        inputs = u.reads if u.reused is None else (as_object(u.reused.entry.get("inputs")) or {})
        for shown in inputs:
            if shown != u.source:
                read_by.setdefault(shown, u.source)
    from .frontends import NOT_A_SPEC

    for at, source, items in reversed(failed):
        user = read_by.get(source)
        errors = [d for d in items if d.severity == "error"]
        if user is None or not all(d.found.startswith(NOT_A_SPEC) for d in errors):
            diags.items[at:at] = items
            continue
        note = Diagnostics()
        note.note(
            SourceLocation(file=source),
            f"not compiled on its own: {user} $refs it (a part of a split spec)",
        )
        diags.items[at:at] = note.items


@dataclasses.dataclass(slots=True)
class _Unit:
    """One spec on its way through ``build``: read and rendered, or reused."""

    source: str
    options: str
    pkg: SpecPackage | None = None
    reused: Reused | None = None
    reads: dict[str, str | None] = dataclasses.field(default_factory=dict[str, "str | None"])
    read: list[Diagnostic] = dataclasses.field(default_factory=list[Diagnostic])
    rendered: list[Diagnostic] = dataclasses.field(default_factory=list[Diagnostic])
    name: str = ""
    files: Texts = dataclasses.field(default_factory=Texts)
    raw: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    formatted: set[str] = dataclasses.field(default_factory=set[str])
    parses: str | None = None  # the ParseCache's text, kept in PARSES
    operations: str | None = None  # the OperationMemo's text, kept in PARSES

    def entry(self, tree: Texts) -> dict[str, Any] | None:
        """What the manifest records for reusing this package next time (None: not reusable)."""
        if self.reused is not None:
            return self.reused.entry
        if not self.reads or any(d is None for d in self.reads.values()):
            return None
        return {
            "source": self.source,
            "options": self.options,
            "inputs": dict(sorted(self.reads.items())),
            "read_diagnostics": [diagnostic_to_json(d) for d in self.read],
            "render_diagnostics": [diagnostic_to_json(d) for d in self.rendered],
            "files": {rel: [self.raw[rel], tree.digest(rel)] for rel in sorted(self.files)},
        }


def _holds(out: Path, files: Texts, manifest: str) -> bool:
    """Whether ``out`` holds exactly ``files`` (those of reused packages, whose digests were
    checked, and the parses' ``.gitignore``) and ``manifest``."""
    try:
        if (out / MANIFEST).read_text(encoding="utf-8") != manifest:
            return False
        there: set[str] = set()
        for top, dirs, names in os.walk(out):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = Path(top).relative_to(out).as_posix()
            there.update(name if rel == "." else f"{rel}/{name}" for name in names)
        ignore = f"{PARSES}/.gitignore"
        if ignore in files and (out / ignore).read_text(encoding="utf-8") != files[ignore]:
            return False
    except (OSError, UnicodeDecodeError):
        return False
    return there == {*files, MANIFEST}


def _kept(rel: str) -> bool:
    """Whether ``rel`` is kept for the next run rather than generated."""
    return rel.split("/", 1)[0] == PARSES


def _generated_part(manifest: str | None) -> object:
    """A manifest without its ``incremental`` section (None when it is not one)."""
    try:
        data = as_object(json.loads(manifest or ""))
    except ValueError:
        return None
    if data is None:
        return None
    return {k: v for k, v in data.items() if k != "incremental"}


def _parses_file(name: str) -> str:
    return f"{PARSES}/{name}.json"


def _operations_file(name: str) -> str:
    """Where a package's operations' lowering is kept (``frontends._opmemo``)."""
    return f"{PARSES}/{name}.operations.json"


def _memo_file(name: str) -> str:
    """Where a package's render memo is kept (``Rendered.memo``), beside its parses."""
    return f"{PARSES}/{name}.render.json"


def _warnings_as_errors(diags: Diagnostics) -> None:
    """``--strict``: what was read with an assumed meaning is refused instead."""
    diags.items[:] = [
        dataclasses.replace(
            d,
            severity="error",
            hint=f"{d.hint}; --strict makes this an error"
            if d.hint
            else "--strict makes this an error",
        )
        if d.severity == "warning"
        else d
        for d in diags.items
    ]


@contextlib.contextmanager
def _no_cycle_collection() -> Generator[None]:
    """Pause the cyclic garbage collector while compiling.

    Reading and rendering a large spec allocates millions of objects that live until the end
    (the parsed document, the IR, the rendered text) and frees almost none of them as cycles, so
    every collection walks an ever larger heap for nothing: about a third of the CPU time on
    the openai spec, with the same peak memory either way. Reference counting still frees
    everything else; the collector's previous state is restored afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _format_in(
    root: Path,
    files: Texts,
    todo: set[str] | None = None,
    origin: Mapping[str, str] | None = None,
) -> Texts:
    """Write ``files`` below ``root``, ruff-format them there (only ``todo`` when given: the
    others are formatted already) and read the formatted ones back.

    ``origin``: files a previous output holds with the same text, hard-linked instead of written
    (writing a large tree, and deleting the one it replaces, costs more than compiling it).
    With ``todo``, ruff formats those files while the rest are linked and written (on a large
    tree regenerated after an edit, linking its thousands of kept files took as long as
    ruff).
    """
    made = set[str]()  # directories made (str paths: thousands of files, one mkdir each)
    if todo is None:
        changed = {rel for rel in files if rel.endswith(".py")}  # ruff formats Python only
        _write_files(root, files)
        format_dir(root)
    else:
        changed = {rel for rel in todo if rel.endswith(".py") and rel in files}
        _write_files(root, {rel: files[rel] for rel in sorted(changed)}, made)
        running = _start_format(root, sorted(changed))
        try:
            linked = _link(root, origin or {}, made)
            # (a file kept from the previous output is read only if it could not be linked)
            rest = {rel: files[rel] for rel in files if rel not in linked and rel not in changed}
            _write_files(root, rest, made)
        except BaseException:
            if running[2] is not None:  # (the stage is removed: ruff is not waited for)
                running[2].kill()
                running[2].wait()
            raise
        _finish_format(running)
    formatted = Texts()
    formatted.merge(files)
    for rel in changed:
        formatted[rel] = (root / rel).read_text(encoding="utf-8")
    return formatted


def _link(root: Path, origin: Mapping[str, str], made: set[str]) -> set[str]:
    """Hard-link each previous file of ``origin`` into ``root``; the ones linked."""
    linked = set[str]()
    for rel, source in origin.items():
        target = os.path.join(root, rel)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        try:
            os.link(source, target)
        except OSError:
            continue
        linked.add(rel)
    return linked


def _check_selection(select: OperationFilter, packages: list[SpecPackage]) -> None:
    flags = " ".join(
        [f"--tag {t}" for t in select.tags]
        + [f"--path {p}" for p in select.paths]
        + [f"--operation {o}" for o in select.operations]
    )
    apis = [p for p in packages if p.http is not None]
    if not apis:
        raise SelectionError(
            f"{flags}: selects OpenAPI operations, and no spec given is an OpenAPI document "
            "— expected an OpenAPI spec, or no --tag/--path/--operation"
        )
    if not any(p.tools for p in apis):
        raise SelectionError(
            f"{flags}: matches no operation of {', '.join(p.source for p in apis)} "
            "— expected a tag, path glob or operationId the spec has"
        )


def file_ancestor(path: Path) -> Path | None:
    """The closest existing ancestor of ``path`` when it is a file (``path`` can't be made)."""
    for parent in Path(os.path.abspath(path)).parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def _write_files(root: Path, files: Mapping[str, str], made: set[str] | None = None) -> None:
    made = set() if made is None else made  # (1,500 files of a large package, a few directories)
    for rel, text in sorted(files.items()):
        target = root / rel
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        target.write_text(text, encoding="utf-8", newline="\n")


def _recover(out: Path) -> None:
    """Finish a swap that a killed run left half-done."""
    for old in sorted(out.parent.glob(f".{out.name}.old-*")):
        if not out.exists():
            old.rename(out)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for tmp in out.parent.glob(f".{out.name}.new-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def check_output_dir(out: Path, inputs: Iterable[Path] = ()) -> None:
    """Refuse an output path that toolbind must not replace: a file, a path inside a file, a
    directory holding files toolbind did not write, or one holding the specs being compiled."""
    out = Path(os.path.abspath(out))
    shown = display_path(out)
    inside = file_ancestor(out)
    if inside is not None:
        raise OutputError(
            f"{shown}: {display_path(inside)} is a file — expected -o to name a directory "
            "(hint: choose another -o)"
        )
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise OutputError(f"{shown}: the output path is a file — expected a directory")
    target = out.resolve()
    for spec in inputs:
        where = spec.resolve()
        if where == target or target in where.parents:
            raise OutputError(
                f"{shown}: the output directory holds the spec {display_path(spec)}, which "
                "replacing it would delete — expected an output directory apart from the specs "
                "(hint: choose another -o)"
            )
    if not out.is_dir():
        return
    entries = {p.name for p in out.iterdir()}
    if not entries:
        return
    if MANIFEST not in entries:
        raise OutputError(
            f"{shown}: the directory holds files toolbind did not write (no {MANIFEST}) "
            "— expected an empty directory or a previous toolbind output (hint: choose another -o)"
        )
    written = _manifest_packages(out / MANIFEST)
    if written is None:
        raise OutputError(
            f"{shown}: {MANIFEST} is not a manifest toolbind wrote — expected an empty directory "
            "or a previous toolbind output (hint: choose another -o)"
        )
    foreign = sorted(entries - set(written) - {MANIFEST, PARSES, "__pycache__"})
    if foreign:
        listed = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
        raise OutputError(
            f"{shown}: the directory holds files toolbind did not write ({listed}) — expected "
            "only the packages its toolbind.json lists (hint: move them, or choose another -o)"
        )


def _staging(out: Path) -> Path:
    return out.parent / f".{out.name}.new-{os.getpid()}"


def _swap(new: Path, out: Path) -> None:
    """Move the complete tree ``new`` to ``out``, replacing what was there."""
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
        new.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(out)


def _manifest_packages(manifest: Path) -> list[str] | None:
    """The package names a toolbind manifest lists, or None when the file is not one."""
    sources = manifest_sources(manifest)
    return None if sources is None else list(sources)


def manifest_sources(manifest: Path) -> dict[str, str] | None:
    """A toolbind manifest's packages (name → the spec it was made from), or None when the
    file is missing or is not one."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    top = as_object(data)
    packages = as_object(top.get("packages")) if top is not None else None
    return None if packages is None else {k: str(v) for k, v in packages.items()}


def write_tree(tree: GeneratedTree, out: Path, inputs: Iterable[Path] = ()) -> None:
    """Replace ``out`` with ``tree`` all-or-nothing (``inputs``: the specs, never replaced)."""
    out = out.absolute()
    if out.parent.is_dir():
        _recover(out)
    check_output_dir(out, inputs)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = _staging(out)
    try:
        _write_files(new, tree.files)
        _swap(new, out)
    finally:
        if new.exists():
            shutil.rmtree(new, ignore_errors=True)


def shadowing_in_project(tree: GeneratedTree, out: Path) -> list[Diagnostic]:
    """Warnings for packages named like a top-level module or package of the project ``out``
    is in (its parent directory, where ``python`` and pytest run): importing either may get
    the other."""
    found: list[Diagnostic] = []
    parent = out.absolute().parent
    for name, source in sorted(tree.packages.items()):
        for candidate in (parent / name, parent / f"{name}.py"):
            if candidate != out.absolute() and candidate.exists():
                found.append(
                    Diagnostic(
                        loc=SourceLocation(file=source),
                        severity="warning",
                        found=f"the generated package {name!r} has the name of "
                        f"{display_path(candidate)}, beside the output directory: whichever "
                        "comes first on sys.path hides the other",
                        expected="a package name nothing else uses",
                        hint=f"name it with --package {source}=OTHER, or write it elsewhere (-o)",
                    )
                )
                break
    return found


def write_into(
    inputs: list[Path],
    out: Path,
    progress: Callable[[str], None] | None = None,
    *,
    select: OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    strict: bool = False,
    names: Mapping[str, str] | None = None,
    reuse: bool = True,
) -> GeneratedTree:
    """``build`` then ``write_tree``, formatting in the staging directory beside ``out`` (the
    files are written once, no scratch copy is deleted). The same errors, in the same order:
    ``SpecError`` before ``OutputError``; on either, ``out`` is untouched.

    ``reuse``: take from the previous output what nothing changed for (incremental); False
    compiles everything (reuse is keyed on toolbind's version, which an editable install
    changes without)."""
    out = out.absolute()
    if not out.parent.is_dir():  # nowhere to stage without creating directories first
        tree = build(inputs, progress, select=select, refs=refs, strict=strict, names=names)
        write_tree(tree, out, inputs)
        tree.diagnostics.extend(shadowing_in_project(tree, out))
        return tree
    _recover(out)
    new = _staging(out)
    new.mkdir()
    started = time.time_ns()
    try:
        tree = build(
            inputs,
            progress,
            select=select,
            stage=new,
            refs=refs,
            strict=strict,
            names=names,
            previous=out if reuse and _reusable(out) else None,
        )
        check_output_dir(out, inputs)
        if any(new.iterdir()):  # an empty stage: ``out`` holds the tree already (``build``)
            _swap(new, out)
        # (after the swap: removing the previous tree changed its linked files' ctimes)
        Signatures.record(out, tree.files[MANIFEST], started)
        tree.diagnostics.extend(shadowing_in_project(tree, out))
        return tree
    finally:
        if new.exists():
            shutil.rmtree(new, ignore_errors=True)


def _reusable(out: Path) -> bool:
    """Whether ``out`` is a previous toolbind output (whose packages may be reused)."""
    try:
        check_output_dir(out)
    except OutputError:
        return False
    return (out / MANIFEST).is_file()


def diff_tree(tree: GeneratedTree, out: Path) -> list[str]:
    """Unified diffs between ``tree`` and what ``out`` holds (empty when up to date).

    The generated output is compared, not what was kept for the next run: the kept parses
    (``PARSES``) and the manifest's ``incremental`` section, whose digests of the spec bytes
    change with an edit that changes no output (whitespace, a comment)."""
    current: dict[str, str] = {}
    if out.is_dir():
        for path in sorted(out.rglob("*")):
            rel = path.relative_to(out).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and not _kept(rel):
                try:
                    current[rel] = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    current[rel] = "<binary>"
    diffs: list[str] = []
    for rel in sorted(set(current) | {rel for rel in tree.files if not _kept(rel)}):
        old = current.get(rel)
        new = tree.files.get(rel)
        if old == new or (rel == MANIFEST and _generated_part(old) == _generated_part(new)):
            continue
        diffs.append(
            "".join(
                difflib.unified_diff(
                    (old or "").splitlines(keepends=True),
                    (new or "").splitlines(keepends=True),
                    fromfile=f"a/{rel}" if old is not None else "/dev/null",
                    tofile=f"b/{rel}" if new is not None else "/dev/null",
                )
            )
        )
    return diffs
