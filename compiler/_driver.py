"""Compiler layer: the pipeline — spec files → IR → rendered, formatted files → an output.

Imports every other compiler module; nothing imports it but the public API and the CLI (which
also take the write stage's names from here: ``check_output_dir``, ``diff_tree``...).

``build`` runs the stages one after another, each a function of what the one before gave:

    find_specs     inputs → spec paths
    _read_stage    paths → one ``_Unit`` per spec: its ``SpecPackage`` (load, normalise and
                   lower: ``frontends.read_spec``), the files it read and their digests
    _render_stage  units → the tree's files (``backends.python``), the manifest's packages
    _format_stage  files → ruff-formatted files and the manifest, in the staging directory
                   (``_format``)
    write_into     the staged tree swapped into place (``_write``)

The driver is the one module that knows both the stages and the memo layer (``memo``): it
builds one ``Memo`` per run and passes each read and render through it, and that layer alone
decides what of the previous output is reused (a whole package, a kept parse, an operation's
lowering, a model module, a formatted file). Without a previous output the same calls run
every stage in full, and either way the tree is the same bytes.

Output is all-or-nothing (``_write``): the whole tree is formatted in a directory next to the
target, then swapped in; a failed run leaves the previous tree as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib.util
import json
import keyword
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbind._version import VERSION

from ._format import format_in, format_source
from ._load import (
    NO_EXTRA_REFS,
    SPEC_SUFFIXES,
    RefPolicy,
    as_object,
    display_path,
    recording_reads,
)
from ._steps import DIRECT, Steps
from ._tree import GeneratedTree as GeneratedTree
from ._tree import Texts
from ._write import MANIFEST as MANIFEST
from ._write import PARSES, kept_file, recover, shadowing_in_project, staging, swap, write_files
from ._write import check_output_dir as check_output_dir
from ._write import diff_tree as diff_tree
from ._write import file_ancestor as file_ancestor
from ._write import manifest_sources as manifest_sources
from ._write import write_tree as write_tree
from .diagnostics import Diagnostic, Diagnostics
from .errors import OutputError as OutputError
from .errors import SelectionError as SelectionError
from .errors import SpecError
from .ir import SourceLocation, SpecPackage
from .memo import KeptReads, Memo, Package, Reused, record_signatures
from .naming import Scope, module_name, module_name_reason

if TYPE_CHECKING:
    from .frontends.openapi import OperationFilter

# The frontends and the backend are imported where a spec is compiled: a ``generate`` that
# reuses every package (``memo``) needs neither, nor Jinja2, YAML's parsers or pydantic.


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
    packages: list[SpecPackage] = []
    for path in paths:
        if progress:
            progress(display_path(path))
        pkg = read_spec(path, display_path(path), diags, select, refs)
        if pkg is not None:
            packages.append(pkg)
    return packages


def read_spec(
    path: Path,
    shown: str,
    diags: Diagnostics,
    select: OperationFilter | None = None,
    refs: RefPolicy = NO_EXTRA_REFS,
    steps: Steps = DIRECT,
) -> SpecPackage | None:
    """The frontends' ``read_spec`` (its costly parts run through ``steps``), then the passes
    that change what the model reads (tools told apart where their descriptions are the
    same)."""
    from .frontends import read_spec as lowered
    from .passes.descriptions import told_apart

    pkg = lowered(path, shown, diags, select, refs, steps)
    return told_apart(pkg) if pkg is not None else None


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
        stem = Path(source).stem
        if source not in chosen and name != module_name(stem):
            diags.note(
                SourceLocation(file=source),
                f"generated as package {name!r} (its name was taken)",
            )
        elif source not in chosen and (reason := module_name_reason(stem)):
            diags.warning(
                SourceLocation(file=source),
                f"generated as package {name!r}: {reason}",
                hint="name it with --package SPEC=NAME (package_names= in the API), or rename "
                "the spec file (the package is named after it)",
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
    return _render_files(pkg, name, True, diags, DIRECT)


def _render_files(
    pkg: SpecPackage, name: str, format_checks: bool, diags: Diagnostics, steps: Steps
) -> dict[str, str]:
    """The package's files (paths below ``name``), but those ``steps`` say are not made."""
    from .backends.python import PythonBackend

    prefix = f"{name}/"
    rendered = PythonBackend(
        pkg, name, diags, version=VERSION, format_checks=format_checks, steps=steps
    ).render()
    return {prefix + rel: text for rel, text in rendered.files.items()}


def _manifest_text(packages: Mapping[str, str], cache: Mapping[str, Any]) -> str:
    """The manifest: the packages generated here (name → spec) and, per package, what
    incremental regeneration needs to reuse it (``memo``)."""
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

    ``import_path`` is where the user's code imports the generated package from (default: the
    package's name, as ``generate`` names it — importable with its output folder on
    ``sys.path``). Raises ``SpecError`` like ``build``.
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
    text = scaffold_for(rendered, import_path or name)
    return format_source(text), name


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
    format_checks: bool = True,
) -> GeneratedTree:
    """Compile ``inputs`` to a (formatted) tree in memory; raise ``SpecError`` on any error.

    ``names``: spec file → package name, for the specs whose package is not to be named after
    the file (``SelectionError`` for a bad name or a spec not among ``inputs``).

    ``strict``: every warning (what was read with an assumed meaning: ``type: int`` taken as
    ``integer``, an undeclared path parameter, a ``$ref`` to nothing...) is an error instead.

    ``format_checks``: the Calls of OpenAPI operations check the formats the API validates
    (``int32``/``int64``/``float``/``double`` ranges, ``uuid``, ``date``, ``date-time``); False leaves them
    annotations, as JSON Schema does.

    ``select`` keeps only some operations of OpenAPI specs (by tag, path or operation);
    ``refs`` allows ``$ref``s to files and URLs beyond each spec's directory.
    ``stage`` (an empty directory): the formatted files are left there too, for ``write_into``
    to move into place — ruff formats files on disk, and writing them a second time and
    deleting a scratch copy costs more than compiling a mid-size spec (ruff rewrites every
    file, and unlinking a just-rewritten file waits for its write-back on ext4).
    ``previous``: a previous output directory whose packages are reused where nothing they
    depend on changed (``memo``); the tree is the same as without it.
    """
    diags = Diagnostics()
    run = _Run(
        diags=diags,
        memo=Memo(previous if formatted and not select else None, keep=stage is not None),
        progress=progress,
        select=select,
        refs=refs,
        strict=strict,
        names=names,
        format_checks=format_checks,
    )
    with _no_cycle_collection():
        paths = find_specs(inputs, diags)
        units = _read_stage(run, paths)
        files, manifest, origin = _render_stage(run, units)
    if diags.has_errors:
        raise SpecError(diags.items)
    if not formatted:
        files[MANIFEST] = _manifest_text(manifest, {})
        return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)
    return _format_stage(run, units, files, manifest, origin, stage)


@dataclasses.dataclass(frozen=True, slots=True)
class _Run:
    """What every stage of one ``build`` is given: its options, where its diagnostics go, and
    the memo layer that reuses the previous output."""

    diags: Diagnostics
    memo: Memo
    progress: Callable[[str], None] | None
    select: OperationFilter | None
    refs: RefPolicy
    strict: bool
    names: Mapping[str, str] | None
    format_checks: bool = True


@dataclasses.dataclass(slots=True)
class _Unit:
    """One spec on its way through ``build``: read and rendered, or reused."""

    source: str
    options: str
    pkg: SpecPackage | None = None
    reused: Reused | None = None
    reads: dict[str, str | None] = dataclasses.field(default_factory=dict[str, "str | None"])
    read: list[Diagnostic] = dataclasses.field(default_factory=list[Diagnostic])
    kept: KeptReads = dataclasses.field(default_factory=KeptReads)
    name: str = ""
    made: Package | None = None

    def entry(self, tree: Texts) -> dict[str, Any] | None:
        """What the manifest records for reusing this package next time (None: not reusable)."""
        assert self.made is not None
        return Memo.entry(self.made, self.source, self.options, self.reads, self.read, tree)


def _read_stage(run: _Run, paths: list[Path]) -> list[_Unit]:
    """Each spec read (or, by the memo layer, reused), in order; raise ``SpecError`` when one
    could not be read."""
    diags = run.diags
    sources = [display_path(p) for p in paths]
    try:  # (the names the previous run's files are kept under)
        tentative = claim_names(sources, package_names(run.names, sources))
    except SelectionError:  # reported below, in its turn
        tentative = {}
    units: list[_Unit] = []
    # specs that could not be read: (where their diagnostics go, source, diagnostics)
    failed: list[tuple[int, str, list[Diagnostic]]] = []
    for path, source in zip(paths, sources, strict=True):
        name = tentative.get(source, ("", []))[0]
        options = run.memo.options(name, run.refs, run.strict, run.format_checks)
        reused = run.memo.reused(source, name, options) if name else None
        if reused is not None:
            diags.items.extend(reused.read)
            units.append(_Unit(source=source, options=options, reused=reused))
            continue
        if run.progress:
            run.progress(source)
        own = Diagnostics()
        with (
            recording_reads() as reads,
            run.memo.reading(source, name, options, every=not run.select) as (steps, kept),
        ):
            pkg = read_spec(path, source, own, run.select, run.refs, steps)
        if pkg is None or own.has_errors:  # (said below unless another spec $refs it)
            failed.append((len(diags.items), source, own.items))
            continue
        diags.items.extend(own.items)
        units.append(
            _Unit(source=source, options=options, pkg=pkg, reads=reads, read=own.items, kept=kept)
        )
    _parts(diags, failed, units)
    if run.strict:
        _warnings_as_errors(diags)
    if diags.has_errors:
        raise SpecError(diags.items)
    if run.select:
        _check_selection(run.select, [u.pkg for u in units if u.pkg is not None])
    return units


def _render_stage(run: _Run, units: list[_Unit]) -> tuple[Texts, dict[str, str], dict[str, str]]:
    """Every package named and rendered (or, by the memo layer, taken from the previous
    output): the tree's files, the manifest's packages (name → spec) and the files the
    previous output holds as they are now (path in the tree → path on disk)."""
    sources = [u.source for u in units]
    claimed = claim_names(sources, package_names(run.names, sources))
    files = Texts()
    manifest: dict[str, str] = {}
    origin: dict[str, str] = {}
    for u in units:
        u.name, naming = claimed[u.source]
        run.diags.items.extend(naming)
        if u.reused is not None:
            u.made = run.memo.take(u.reused)
        else:
            assert u.pkg is not None
            u.made = run.memo.render(
                u.source,
                u.name,
                u.options,
                functools.partial(_render_files, u.pkg, u.name, run.format_checks),
                u.kept,
            )
        run.diags.items.extend(u.made.rendered)
        files.merge(u.made.files)
        origin.update(u.made.origin)
        manifest[u.name] = u.source
    return files, manifest, origin


def _format_stage(
    run: _Run,
    units: list[_Unit],
    files: Texts,
    manifest: dict[str, str],
    origin: dict[str, str],
    stage: Path | None,
) -> GeneratedTree:
    """The tree formatted (in ``stage`` when given, else in a scratch directory), its manifest
    recording what the next run may reuse."""
    diags = run.diags
    if any(kept_file(rel) for rel in files):
        files[f"{PARSES}/.gitignore"] = "*\n"
    if stage is not None and all(u.reused for u in units):
        text = _manifest_text(manifest, _entries(units, files))
        if run.memo.holds(files, text):
            # the previous output is this tree already (each file's digest was checked):
            # nothing is staged, and ``write_into`` leaves it as it is
            files[MANIFEST] = text
            return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)
    done = {rel for u in units if u.made is not None for rel in u.made.formatted}
    todo = set(files) - done
    if stage is not None:
        files = format_in(stage, files, todo, origin)
    else:
        with tempfile.TemporaryDirectory(prefix="toolbind-") as tmp:
            files = format_in(Path(tmp), files, todo)
    files[MANIFEST] = _manifest_text(manifest, _entries(units, files))
    if stage is not None:
        write_files(stage, {MANIFEST: files[MANIFEST]})
    return GeneratedTree(files=files, packages=manifest, diagnostics=diags.items)


def _entries(units: list[_Unit], files: Texts) -> dict[str, Any]:
    """The manifest's ``incremental`` section: each reusable package's entry."""
    cache = {u.name: u.entry(files) for u in units}
    return {k: v for k, v in cache.items() if v}


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
    format_checks: bool = True,
) -> GeneratedTree:
    """``build`` then ``write_tree``, formatting in the staging directory beside ``out`` (the
    files are written once, no scratch copy is deleted). The same errors, in the same order:
    ``SpecError`` before ``OutputError``; on either, ``out`` is untouched.

    ``reuse``: take from the previous output what nothing changed for (incremental); False
    compiles everything (reuse is keyed on toolbind's version, which an editable install
    changes without)."""
    out = out.absolute()
    if not out.parent.is_dir():  # nowhere to stage without creating directories first
        tree = build(
            inputs,
            progress,
            select=select,
            refs=refs,
            strict=strict,
            names=names,
            format_checks=format_checks,
        )
        write_tree(tree, out, inputs)
        tree.diagnostics.extend(shadowing_in_project(tree, out))
        return tree
    recover(out)
    new = staging(out)
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
            format_checks=format_checks,
        )
        check_output_dir(out, inputs)
        if any(new.iterdir()):  # an empty stage: ``out`` holds the tree already (``build``)
            swap(new, out)
        # (after the swap: removing the previous tree changed its linked files' ctimes)
        record_signatures(out, tree.files[MANIFEST], started)
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
