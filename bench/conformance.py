"""Conformance benchmark: toolbind vs datamodel-code-generator vs jsonschema on the JSON-Schema-Test-Suite.

Faithful models: a generated model must accept exactly the instances its JSON Schema
accepts. This script measures how far each implementation is from that, in one run, on the same
suite, and lists every instance on which toolbind disagrees with the suite.

Inputs:
    The corpus (``--corpus``, default ``tests/corpus`` in the repository, or
    ``$TOOLBIND_CORPUS``), directory ``jsonschema-test-suite``; it is only read.

    * ``tests/<draft>/*.json`` for ``draft2020-12``, ``draft2019-09``, ``draft7``, ``draft6``
      and ``draft4`` (the non-optional keyword files): each is a list of groups
      ``{description, schema, tests: [{description, data, valid}]}``. The repository's copy holds
      every draft; a draft another ``--corpus`` lacks is read from that copy
      (``tests/corpus/jsonschema-test-suite``, with its LICENSE).
    * ``tests/<draft>/optional/format/*.json``: the format assertion suites, run in assertion
      mode only (their expected values assume that formats are asserted).
    * ``remotes/**/*.json``: every document, keyed by the URL the suite serves it at,
      ``http://localhost:1234/<path below remotes/>``. No server is started; each
      implementation gets the documents through its own offline mechanism (below).

What is measured, per group (schema) and per implementation:
    The schema is compiled once (per mode, where the implementation distinguishes modes), then
    every test instance is checked once. A group **compiles** when compilation returns a
    validator/model without raising. A test **agrees** when the implementation's accept/reject
    decision equals the suite's ``valid``. All tests of a group that does not compile count as
    disagreements (and appear in the miss list as ``not compiled``). A test whose check raises
    anything other than the implementation's "invalid" signal is a **crash**: it counts as a
    reject (so it agrees only if ``valid`` is false) and is also counted and reported on its
    own. Every compilation and every check runs under a deadline (``--timeout`` seconds,
    SIGALRM); running out of time is a failed compilation or a crash. No failure in one group
    stops the run.

    toolbind:
        ``toolbind.compiler.model_from_schema(schema, remotes=<remotes>)`` — the public entry
        point, with ``draft=<the test directory's draft>`` as a user would pass it; a non-object
        root becomes a ``RootModel``. ``SpecError`` means "does not
        compile"; any other exception also means "does not compile" and is counted as a compile
        crash. Accept = ``model.model_validate(data)`` returns; ``pydantic.ValidationError`` =
        reject; any other exception = crash (reject). JSON mode: each test is also run through
        ``model.model_validate_json(json.dumps(data))``; the figure reported is the number of
        tests where the JSON-mode outcome (valid / invalid / crash) differs from the
        Python-mode one. It does not enter the agreement figures.

    datamodel-code-generator (the peer, in-process):
        ``generate(schema, input_file_type=JsonSchema, output_model_type=PydanticV2BaseModel,
        class_name="Model", formatters=[], disable_timestamp=True, allow_remote_refs=False,
        http_local_ref_path=<scratch>)``. ``http_local_ref_path`` makes it read
        ``http://localhost:1234/<path>`` from ``<scratch>/localhost:1234/<path>`` (a copy of
        ``remotes/`` in a temporary directory), so nothing is fetched; any other network
        reference (e.g. to a meta-schema) fails, and the group does not compile. Generation runs
        with the working directory set to an empty temporary directory, because the peer
        resolves non-URL references (``urn:…``) as paths relative to it. The generated source
        is executed as a fresh module with a unique name (a multi-module output is written to a
        temporary package and imported); the root class is the one named ``Model`` (a
        ``BaseModel``, or a plain ``Enum`` for an ``enum`` root, validated through
        ``pydantic.TypeAdapter(Model).validate_python``). A boolean
        root schema cannot be passed to ``generate()`` (it takes a mapping), so such a group
        does not compile. Any exception in generation, execution or ``model_rebuild()`` means
        "does not compile". Accept = ``Model.model_validate(data)`` returns (a ``RootModel``
        validates the data directly); ``ValidationError`` = reject; anything else = crash. The
        peer has no format mode: the same model is used in both modes (it maps some formats to
        Pydantic types, e.g. ``uuid`` → ``UUID``, whatever the mode).

    jsonschema (the reference):
        ``validator_for(schema, default=<Draft<N>Validator by the test directory>)(schema,
        registry=<referencing.Registry of the remotes>)``; each remote
        becomes a ``Resource`` of the draft its ``$schema`` names, or of the test directory's
        draft when it names none or one ``referencing`` does not know. Annotation mode: no
        format checker. Assertion mode: ``format_checker=<validator class>.FORMAT_CHECKER``;
        formats whose checker needs an optional package that is not installed are not checked
        (the report lists the formats checked). Accept = ``is_valid(data)``; an exception from
        ``is_valid`` = crash.

    jsonschema-rs (a second reference): see ``JsonschemaRs``; ``--no-rs`` leaves it out.

Modes:
    ``annotation``: ``format`` is an annotation (the draft 2020-12 default) — all three.
    ``assertion``: ``format`` is asserted. jsonschema: as above; datamodel-codegen: the same
    model as in annotation mode; toolbind: only when ``model_from_schema`` has a parameter that
    switches format assertion on (``format_assertion``, ``assert_formats`` or
    ``assert_format``, passed ``True``) — otherwise its column reads "n/a". In assertion mode
    the tests of the main suite that say a format is "only an annotation by default" are
    skipped (their expected value holds in annotation mode only); the table counts them
    under "skip". The optional/format suites run in assertion mode only.

Output:
    Per draft and mode, one row per file: groups, tests, then for each implementation
    ``compiled groups/groups agreeing tests/tests``; totals with percentages. Then toolbind's
    crashes, its JSON-mode disagreements, its disagreements (the first 50, all with
    ``--misses``) and their count per file, why the peer did not compile, and the run's
    timing. ``--json FILE`` writes every number and every miss of every implementation.

Usage:
    python bench/conformance.py [--draft all|draft2020-12|draft2019-09|draft7|draft6|draft4]...
        [--only SUBSTRING] [--no-peer] [--no-rs] [--misses] [--json FILE] [--corpus DIR]
        [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import importlib.metadata
import importlib.util
import inspect
import io
import itertools
import json
import shutil
import signal
import sys
import tempfile
import time
import types
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal, Protocol, cast

from _corpus import corpus_root
from _progress import steps
from _suite import DRAFTS, Case, Group, Suite, load_groups, load_remotes, suite_files, suite_root
from pydantic import BaseModel, TypeAdapter, ValidationError

Mode = Literal["annotation", "assertion"]
Outcome = Literal["valid", "invalid", "crash"]

TOOLBIND = "toolbind"
PEER = "datamodel-codegen"
REFERENCE = "jsonschema"
RUST = "jsonschema-rs"

#: Names of a ``model_from_schema`` keyword that switches format assertion on (passed ``True``).
ASSERTION_PARAMETERS = ("format_assertion", "assert_formats", "assert_format")

#: Every main-suite test toolbind is known to get wrong, with the reason: (draft, file, group,
#: test) → why. ``tests/compiler/test_conformance.py`` fails on a miss that is not listed here and on an
#: entry that no longer misses, so this table is always the exact list.
XFAIL: dict[tuple[str, str, str, str], str] = {}

#: Tests of the main suite whose expected value holds only when formats are annotations.
ANNOTATION_ONLY_MARK = "only an annotation by default"

MISSES_SHOWN = 50
CRASHES_SHOWN = 10


# --- failures ---------------------------------------------------------------------------------


class NotCompiledError(Exception):
    """An implementation could not turn a group's schema into a validator."""

    def __init__(self, reason: str, *, crash: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        #: Whether this was an unexpected exception rather than a refusal (SpecError & co.).
        self.crash = crash


class DeadlineError(BaseException):
    """Raised by SIGALRM when a compilation or a check runs out of time.

    A ``BaseException`` so that code under test that catches ``Exception`` cannot swallow it.
    """


@contextlib.contextmanager
def deadline(seconds: float) -> Generator[None]:
    """Raise ``DeadlineError`` in the block after ``seconds`` (0: no limit; Unix only)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise DeadlineError(f"no result after {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def describe(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters)."""
    text = str(exc).strip().splitlines()
    message = text[0] if text else ""
    return f"{type(exc).__name__}: {message}"[:200]


# --- implementations --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compiled:
    """A compiled group: ``accepts(data)`` returns True/False, raises on a crash."""

    accepts: Callable[[Any], bool]
    #: The same decision through a JSON-text entry point (toolbind only).
    accepts_json: Callable[[Any], bool] | None = None


class Implementation(Protocol):
    name: str
    #: Whether assertion mode needs its own compilation (else the annotation one is reused).
    mode_sensitive: bool

    def supports(self, mode: Mode) -> bool: ...

    def compile(self, group: Group, mode: Mode) -> Compiled: ...

    def release(self) -> None:
        """Forget what the last group left behind (modules, files)."""
        ...


def pydantic_accepts(model: type[BaseModel]) -> Callable[[Any], bool]:
    def accepts(data: Any) -> bool:
        try:
            model.model_validate(data)
        except ValidationError:
            return False
        return True

    return accepts


def type_adapter_accepts(adapter: TypeAdapter[Any]) -> Callable[[Any], bool]:
    def accepts(data: Any) -> bool:
        try:
            adapter.validate_python(data)
        except ValidationError:
            return False
        return True

    return accepts


def pydantic_accepts_json(model: type[BaseModel]) -> Callable[[Any], bool]:
    def accepts(data: Any) -> bool:
        text = json.dumps(data)
        try:
            model.model_validate_json(text)
        except ValidationError:
            return False
        return True

    return accepts


class Toolbind:
    name = TOOLBIND

    def __init__(self, remotes: Mapping[str, Any]) -> None:
        from toolbind.compiler import SpecError, model_from_schema

        self._compile = model_from_schema
        self._spec_error = SpecError
        self._remotes = dict(remotes)
        parameters = inspect.signature(model_from_schema).parameters
        found = [p for p in ASSERTION_PARAMETERS if p in parameters]
        self.assertion_kwargs: dict[str, Any] | None = {found[0]: True} if found else None
        self.mode_sensitive = self.assertion_kwargs is not None
        self.takes_draft = "draft" in parameters
        unknown = [p for p in parameters if "format" in p and p not in ASSERTION_PARAMETERS]
        self.note = (
            f"assertion mode via {found[0]}=True"
            if found
            else "n/a (no assertion mode yet)"
            + (f"; parameter(s) {', '.join(unknown)} not understood" if unknown else "")
        )

    def supports(self, mode: Mode) -> bool:
        return mode == "annotation" or self.assertion_kwargs is not None

    def compile(self, group: Group, mode: Mode) -> Compiled:
        kwargs: dict[str, Any] = (self.assertion_kwargs or {}) if mode == "assertion" else {}
        schema = copy.deepcopy(group.schema)
        try:
            if self.takes_draft:
                kwargs = {**kwargs, "draft": group.draft}
            model = self._compile(schema, remotes=self._remotes, **kwargs)
        except self._spec_error as exc:
            raise NotCompiledError(f"SpecError: {exc}".splitlines()[0][:200]) from exc
        except Exception as exc:
            raise NotCompiledError(describe(exc), crash=True) from exc
        return Compiled(accepts=pydantic_accepts(model), accepts_json=pydantic_accepts_json(model))

    def release(self) -> None:
        pass


class DatamodelCodegen:
    name = PEER
    mode_sensitive = False

    def __init__(self, suite: Path, scratch: Path) -> None:
        import datamodel_code_generator as dcg
        from datamodel_code_generator.enums import DataModelType

        self._dcg = dcg
        self._pydantic_v2 = DataModelType.PydanticV2BaseModel
        self._refs = scratch / "http-refs"
        # The peer maps http://<host>/<path> to <refs>/<host>/<path>; a copy (not a symlink)
        # because it refuses files that resolve outside that directory.
        shutil.copytree(suite / "remotes", self._refs / "localhost:1234")
        self._cwd = scratch / "cwd"
        self._cwd.mkdir()
        self._packages = scratch / "packages"
        self._packages.mkdir()
        sys.path.insert(0, str(self._packages))
        self._counter = itertools.count()
        self._modules: list[str] = []
        self.failures: Counter[str] = Counter()

    def supports(self, mode: Mode) -> bool:
        return True

    def compile(self, group: Group, mode: Mode) -> Compiled:
        dcg = self._dcg
        root = cast("dict[str, Any] | bool", group.schema)
        if isinstance(root, bool):
            raise self._fail("boolean root schema: generate() takes a mapping")
        schema = copy.deepcopy(root)
        try:
            with (
                contextlib.chdir(self._cwd),
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                output = dcg.generate(
                    schema,
                    input_file_type=dcg.InputFileType.JsonSchema,
                    output_model_type=self._pydantic_v2,
                    class_name="Model",
                    formatters=[],
                    disable_timestamp=True,
                    allow_remote_refs=False,
                    http_local_ref_path=self._refs,
                )
        except Exception as exc:
            raise self._fail(f"generate: {describe(exc)}") from exc
        try:
            accepts = self._load(output)
        except NotCompiledError:
            raise
        except Exception as exc:
            raise self._fail(f"import: {describe(exc)}") from exc
        return Compiled(accepts=accepts)

    def _fail(self, reason: str) -> NotCompiledError:
        # Counted by the kind of failure, without the details that differ per group.
        self.failures[reason.split(" for ")[0].split(": /")[0][:120]] += 1
        return NotCompiledError(reason)

    def _load(self, output: str | dict[tuple[str, ...], str] | None) -> Callable[[Any], bool]:
        n = next(self._counter)
        if isinstance(output, str):
            name = f"_conformance_peer_{n}"
            module = types.ModuleType(name)
            # Registered so that pydantic resolves the module's forward references by name.
            sys.modules[name] = module
            self._modules.append(name)
            exec(compile(output, f"<datamodel-codegen {name}>", "exec"), module.__dict__)
            candidates = [module]
        elif isinstance(output, dict):
            package = f"_conformance_peer_pkg_{n}"
            package_dir = self._packages / package
            for parts, code in output.items():
                target = package_dir.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(code, encoding="utf-8")
            for directory in [package_dir, *(p for p in package_dir.rglob("*") if p.is_dir())]:
                (directory / "__init__.py").touch()
            importlib.invalidate_caches()
            self._modules.append(package)
            candidates = [importlib.import_module(package)]
            for parts in sorted(output):
                dotted = ".".join([package, *parts[:-1], parts[-1].removesuffix(".py")])
                dotted = dotted.removesuffix(".__init__")
                self._modules.append(dotted)
                candidates.append(importlib.import_module(dotted))
        else:
            raise self._fail("generate: returned no code")
        for module in candidates:
            root: object = getattr(module, "Model", None)
            if isinstance(root, type) and issubclass(root, BaseModel):
                root.model_rebuild()
                return pydantic_accepts(root)
            if isinstance(root, type):
                # An enum root is a plain ``Enum``: validated the way pydantic validates a field
                # of that type.
                return type_adapter_accepts(TypeAdapter[Any](root))
        raise self._fail("no class Model in the output")

    def release(self) -> None:
        for name in self._modules:
            sys.modules.pop(name, None)
        self._modules.clear()


class Jsonschema:
    name = REFERENCE
    mode_sensitive = True

    def __init__(self, remotes: Mapping[str, Any]) -> None:
        import jsonschema
        import jsonschema.validators
        import referencing.jsonschema
        from jsonschema.protocols import Validator
        from referencing import Registry, Resource

        self._validator_for = jsonschema.validators.validator_for
        self._defaults: dict[str, type[Validator]] = {
            "draft2020-12": jsonschema.Draft202012Validator,
            "draft2019-09": jsonschema.Draft201909Validator,
            "draft7": jsonschema.Draft7Validator,
            "draft6": jsonschema.Draft6Validator,
            "draft4": jsonschema.Draft4Validator,
        }
        specs = {
            "draft2020-12": referencing.jsonschema.DRAFT202012,
            "draft2019-09": referencing.jsonschema.DRAFT201909,
            "draft7": referencing.jsonschema.DRAFT7,
            "draft6": referencing.jsonschema.DRAFT6,
            "draft4": referencing.jsonschema.DRAFT4,
        }
        self._registries: dict[str, Registry[Any]] = {}
        for draft, spec in specs.items():
            resources: list[tuple[str, Resource[Any]]] = []
            for url, document in remotes.items():
                try:
                    resource = Resource.from_contents(document, default_specification=spec)
                except Exception:  # a $schema referencing does not know (e.g. .../v1)
                    resource = spec.create_resource(document)
                resources.append((url, resource))
            self._registries[draft] = Registry[Any]().with_resources(resources)
        self.checked_formats = {
            draft: sorted(cls.FORMAT_CHECKER.checkers) for draft, cls in self._defaults.items()
        }

    def supports(self, mode: Mode) -> bool:
        return True

    def compile(self, group: Group, mode: Mode) -> Compiled:
        try:
            cls = self._validator_for(group.schema, default=self._defaults[group.draft])
            checker = cls.FORMAT_CHECKER if mode == "assertion" else None
            validator = cls(
                group.schema, registry=self._registries[group.draft], format_checker=checker
            )
        except Exception as exc:
            raise NotCompiledError(describe(exc), crash=True) from exc
        return Compiled(accepts=validator.is_valid)

    def release(self) -> None:
        pass


class JsonschemaRs:
    """jsonschema-rs (Rust, through its Python binding): the second reference.

    ``<Draft>Validator(schema, validate_formats=<mode>, retriever=<the remotes>)`` for the test
    directory's draft, or ``validator_for`` when the schema names its ``$schema``; nothing is
    fetched (a URI the remotes lack raises). Accept = ``is_valid(data)``.
    """

    name = RUST
    mode_sensitive = True

    def __init__(self, remotes: Mapping[str, Any]) -> None:
        import jsonschema_rs

        self._rs = jsonschema_rs
        self._classes: dict[str, Any] = {
            "draft2020-12": jsonschema_rs.Draft202012Validator,
            "draft2019-09": jsonschema_rs.Draft201909Validator,
            "draft7": jsonschema_rs.Draft7Validator,
            "draft6": jsonschema_rs.Draft6Validator,
            "draft4": jsonschema_rs.Draft4Validator,
        }
        self._remotes = {url.rstrip("#"): doc for url, doc in remotes.items()}

    def _retrieve(self, uri: str) -> Any:
        try:
            return self._remotes[uri.rstrip("#")]
        except KeyError:
            raise ValueError(f"not in the suite's remotes: {uri}") from None

    def supports(self, mode: Mode) -> bool:
        return True

    def compile(self, group: Group, mode: Mode) -> Compiled:
        options: dict[str, Any] = {
            "validate_formats": mode == "assertion",
            "retriever": self._retrieve,
        }
        schema: Any = group.schema
        try:
            if isinstance(schema, dict) and "$schema" in schema:
                validator = self._rs.validator_for(cast("dict[str, Any]", schema), **options)
            else:
                validator = self._classes[group.draft](schema, **options)
        except Exception as exc:
            raise NotCompiledError(describe(exc)) from exc
        return Compiled(accepts=validator.is_valid)

    def release(self) -> None:
        pass


# --- results ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Cell:
    """One implementation on one file in one mode."""

    available: bool = True
    compiled: int = 0
    agree: int = 0
    crashes: int = 0
    compile_crashes: int = 0


@dataclass(slots=True)
class Row:
    """One suite file in one mode."""

    draft: str
    suite: Suite
    mode: Mode
    file: str
    groups: int = 0
    tests: int = 0
    skipped: int = 0
    cells: dict[str, Cell] = field(default_factory=dict[str, Cell])
    json_mode_disagreements: int = 0


@dataclass(frozen=True, slots=True)
class Miss:
    implementation: str
    mode: Mode
    draft: str
    suite: Suite
    file: str
    group_index: int
    group: str
    test_index: int
    test: str
    expected: bool
    got: str

    def line(self) -> str:
        return (
            f"{self.draft}/{self.file} [{self.mode}]: {self.group} / {self.test}: "
            f"expected valid={self.expected}, got {self.got}"
        )


@dataclass(slots=True)
class Results:
    rows: list[Row] = field(default_factory=list[Row])
    misses: list[Miss] = field(default_factory=list[Miss])
    #: toolbind's crashes (compile and check), each a JSON-able record.
    crashes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    json_mode: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    not_compiled: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))


# --- running ----------------------------------------------------------------------------------


def counts(row: Row, case: Case) -> bool:
    """Whether a test counts in a row (annotation-only tests do not, in main-suite assertion mode)."""
    return not (
        row.mode == "assertion" and row.suite == "main" and ANNOTATION_ONLY_MARK in case.description
    )


def check(fn: Callable[[Any], bool], data: Any, timeout: float) -> tuple[Outcome, str]:
    """Run one check; the outcome and, for a crash, what was raised."""
    try:
        with deadline(timeout):
            accepted = fn(data)
    except (Exception, DeadlineError) as exc:
        return "crash", describe(exc)
    return ("valid" if accepted else "invalid"), ""


class Runner:
    def __init__(self, implementations: list[Implementation], timeout: float) -> None:
        self.implementations = implementations
        self.timeout = timeout
        self.results = Results()

    def run_file(self, groups: list[Group], modes: tuple[Mode, ...]) -> None:
        if not groups:
            return
        first = groups[0]
        rows: dict[Mode, Row] = {
            mode: Row(draft=first.draft, suite=first.suite, mode=mode, file=first.file)
            for mode in modes
        }
        for row in rows.values():
            row.cells = {
                impl.name: Cell(available=impl.supports(row.mode)) for impl in self.implementations
            }
            self.results.rows.append(row)
        for group in groups:
            for row in rows.values():
                row.groups += 1
                for case in group.tests:
                    if counts(row, case):
                        row.tests += 1
                    else:
                        row.skipped += 1
            for impl in self.implementations:
                try:
                    self._run_group(impl, group, rows)
                except (Exception, DeadlineError) as exc:  # a bug of this script: keep going
                    print(f"internal error on {group.file} / {group.description}: {exc!r}")
                finally:
                    impl.release()

    def _compile(self, impl: Implementation, group: Group, mode: Mode) -> Compiled | str:
        """The compiled group, or why it did not compile."""
        started = time.perf_counter()
        try:
            with deadline(self.timeout):
                return impl.compile(group, mode)
        except NotCompiledError as exc:
            reason, crash = exc.reason, exc.crash
        except (Exception, DeadlineError) as exc:  # what an implementation wrapper let through
            reason, crash = describe(exc), True
        finally:
            self.results.seconds[f"{impl.name} compile"] += time.perf_counter() - started
        if crash and impl.name == TOOLBIND:
            self.results.crashes.append(
                {**self._where(group), "mode": mode, "phase": "compile", "error": reason}
            )
        return ("compile crash: " if crash else "") + reason

    def _run_group(self, impl: Implementation, group: Group, rows: Mapping[Mode, Row]) -> None:
        compiled: dict[Mode, Compiled | str] = {}
        for mode, row in rows.items():
            cell = row.cells[impl.name]
            if not cell.available:
                continue
            if mode == "assertion" and not impl.mode_sensitive and "annotation" in compiled:
                result = compiled["annotation"]
            else:
                result = self._compile(impl, group, mode)
            compiled[mode] = result
            if isinstance(result, str):
                if result.startswith("compile crash"):
                    cell.compile_crashes += 1
                if mode == next(iter(rows)):
                    self.results.not_compiled.append(
                        {**self._where(group), "implementation": impl.name, "reason": result}
                    )
            else:
                cell.compiled += 1
            self._run_tests(impl, group, row, result)

    def _run_tests(
        self, impl: Implementation, group: Group, row: Row, result: Compiled | str
    ) -> None:
        cell = row.cells[impl.name]
        for index, case in enumerate(group.tests):
            if not counts(row, case):
                continue
            if isinstance(result, str):
                got = f"not compiled ({result})"
                agrees = False
            else:
                started = time.perf_counter()
                outcome, error = check(result.accepts, case.data, self.timeout)
                self.results.seconds[f"{impl.name} validate"] += time.perf_counter() - started
                agrees = (outcome == "valid") == case.valid
                got = f"valid={outcome == 'valid'}"
                if outcome == "crash":
                    cell.crashes += 1
                    got = f"crash ({error})"
                    if impl.name == TOOLBIND:
                        self.results.crashes.append(
                            {
                                **self._where(group),
                                "mode": row.mode,
                                "phase": "model_validate",
                                "test": case.description,
                                "error": error,
                            }
                        )
                if result.accepts_json is not None:
                    started = time.perf_counter()
                    json_outcome, json_error = check(result.accepts_json, case.data, self.timeout)
                    self.results.seconds[f"{impl.name} validate (JSON)"] += (
                        time.perf_counter() - started
                    )
                    if json_outcome != outcome:
                        row.json_mode_disagreements += 1
                        self.results.json_mode.append(
                            {
                                **self._where(group),
                                "mode": row.mode,
                                "test": case.description,
                                "python": outcome,
                                "json": json_outcome,
                                "json_error": json_error,
                            }
                        )
            if agrees:
                cell.agree += 1
            else:
                self.results.misses.append(
                    Miss(
                        implementation=impl.name,
                        mode=row.mode,
                        draft=group.draft,
                        suite=group.suite,
                        file=group.file,
                        group_index=group.index,
                        group=group.description,
                        test_index=index,
                        test=case.description,
                        expected=case.valid,
                        got=got,
                    )
                )

    @staticmethod
    def _where(group: Group) -> dict[str, Any]:
        return {
            "draft": group.draft,
            "suite": group.suite,
            "file": group.file,
            "group_index": group.index,
            "group": group.description,
        }


# --- reporting --------------------------------------------------------------------------------


def xfail_key(miss: Miss) -> tuple[str, str, str, str]:
    return (miss.draft, miss.file, miss.group, miss.test)


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def sum_rows(rows: list[Row], names: list[str]) -> Row:
    first = rows[0]
    total = Row(draft=first.draft, suite=first.suite, mode=first.mode, file="TOTAL")
    total.cells = {name: Cell(available=first.cells[name].available) for name in names}
    for row in rows:
        total.groups += row.groups
        total.tests += row.tests
        total.skipped += row.skipped
        total.json_mode_disagreements += row.json_mode_disagreements
        for name in names:
            cell, into = row.cells[name], total.cells[name]
            into.compiled += cell.compiled
            into.agree += cell.agree
            into.crashes += cell.crashes
            into.compile_crashes += cell.compile_crashes
    return total


def print_table(title: str, rows: list[Row], names: list[str], na_note: str) -> None:
    if not rows:
        return
    width = max(len("file"), *(len(r.file) for r in rows))
    cw = 19
    print(f"\n{title}")
    head = f"  {'file':<{width}} {'groups':>6} {'tests':>5} {'skip':>4}"
    print(head + "".join(f"  {name:>{cw}}" for name in names))
    print(
        f"  {'':<{width}} {'':>6} {'':>5} {'':>4}"
        + "".join(f"  {'compiled agree':>{cw}}" for _ in names)
    )

    def cells(row: Row) -> str:
        out = ""
        for name in names:
            cell = row.cells[name]
            text = (
                f"{cell.compiled}/{row.groups} {cell.agree}/{row.tests}"
                if cell.available
                else "n/a"
            )
            out += f"  {text:>{cw}}"
        return out

    for row in rows:
        print(f"  {row.file:<{width}} {row.groups:>6} {row.tests:>5} {row.skipped:>4}" + cells(row))
    total = sum_rows(rows, names)
    print(
        f"  {'TOTAL':<{width}} {total.groups:>6} {total.tests:>5} {total.skipped:>4}" + cells(total)
    )
    percentages = ""
    for name in names:
        cell = total.cells[name]
        text = (
            f"{pct(cell.compiled, total.groups)} {pct(cell.agree, total.tests)}"
            if cell.available
            else "n/a"
        )
        percentages += f"  {text:>{cw}}"
    print(f"  {'%':<{width}} {'':>6} {'':>5} {'':>4}" + percentages)
    crashes = ", ".join(
        f"{name} {total.cells[name].crashes} check / {total.cells[name].compile_crashes} compile"
        for name in names
        if total.cells[name].available
    )
    print(
        f"  crashes: {crashes}; toolbind JSON-mode ≠ Python-mode: {total.json_mode_disagreements}"
    )
    if not total.cells[names[0]].available:
        print(f"  toolbind: {na_note}")


def totals_json(rows: list[Row], names: list[str]) -> dict[str, Any]:
    total = sum_rows(rows, names)
    return {
        "draft": total.draft,
        "suite": total.suite,
        "mode": total.mode,
        "files": len(rows),
        "groups": total.groups,
        "tests": total.tests,
        "skipped": total.skipped,
        "toolbind_json_mode_disagreements": total.json_mode_disagreements,
        "implementations": {
            name: {
                "available": cell.available,
                "compiled": cell.compiled,
                "agree": cell.agree,
                "compiled_pct": round(100 * cell.compiled / total.groups, 2)
                if total.groups
                else None,
                "agree_pct": round(100 * cell.agree / total.tests, 2) if total.tests else None,
                "crashes": cell.crashes,
                "compile_crashes": cell.compile_crashes,
            }
            for name, cell in total.cells.items()
        },
    }


def row_json(row: Row) -> dict[str, Any]:
    return {
        "draft": row.draft,
        "suite": row.suite,
        "mode": row.mode,
        "file": row.file,
        "groups": row.groups,
        "tests": row.tests,
        "skipped": row.skipped,
        "toolbind_json_mode_disagreements": row.json_mode_disagreements,
        "implementations": {
            name: {
                "available": cell.available,
                "compiled": cell.compiled,
                "agree": cell.agree,
                "crashes": cell.crashes,
                "compile_crashes": cell.compile_crashes,
            }
            for name, cell in row.cells.items()
        },
    }


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--corpus",
        type=Path,
        default=corpus_root(),
        help="the shared corpus (holds jsonschema-test-suite/); default: %(default)s",
    )
    parser.add_argument(
        "--draft",
        choices=[*DRAFTS, "all"],
        action="append",
        help="a draft to run (repeatable); default: all",
    )
    parser.add_argument("--only", metavar="SUBSTRING", help="only the files whose name contains it")
    parser.add_argument("--no-peer", action="store_true", help="skip datamodel-code-generator")
    parser.add_argument("--no-rs", action="store_true", help="skip jsonschema-rs")
    parser.add_argument("--misses", action="store_true", help="print every toolbind disagreement")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write all results as JSON")
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="seconds per compilation and per check"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    root = suite_root(args.corpus)
    if not (root / "tests").is_dir():
        print(
            f"error: no test suite at {root} (use --corpus or set TOOLBIND_CORPUS)", file=sys.stderr
        )
        return 2
    if importlib.util.find_spec("rfc3987_syntax") is None:
        # without it jsonschema checks no iri/iri-reference format: the reference's format
        # figures are then below its full format-nongpl checkers' (toolbind's are unaffected)
        print(
            "note: jsonschema (the reference) checks no iri formats here: pip install "
            "rfc3987-syntax==1.1.0 (make conformance does) for its full format checkers",
            file=sys.stderr,
        )
    wanted = set(args.draft or ["all"])
    drafts = DRAFTS if "all" in wanted else tuple(d for d in DRAFTS if d in wanted)
    remotes = load_remotes(root)

    with tempfile.TemporaryDirectory(prefix="toolbind-conformance-") as scratch_dir:
        scratch = Path(scratch_dir)
        toolbind = Toolbind(remotes)
        reference = Jsonschema(remotes)
        implementations: list[Implementation] = [toolbind]
        peer: DatamodelCodegen | None = None
        if not args.no_peer:
            peer = DatamodelCodegen(root, scratch)
            implementations.append(peer)
        implementations.append(reference)
        if not args.no_rs:
            implementations.append(JsonschemaRs(remotes))
        names = [impl.name for impl in implementations]
        runner = Runner(implementations, args.timeout)

        plan: list[tuple[Suite, tuple[Mode, ...]]] = [
            ("main", ("annotation", "assertion")),
            ("format", ("assertion",)),
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for draft in drafts:
                for suite, modes in plan:
                    for path in steps(list(suite_files(root, draft, suite)), f"{draft} {suite}"):
                        groups = load_groups(root, draft, suite, path)
                        if args.only and (not groups or args.only not in groups[0].file):
                            continue
                        runner.run_file(groups, modes)
        if peer is not None:
            peer.release()
            sys.path.remove(str(scratch / "packages"))
    results = runner.results
    elapsed = time.perf_counter() - started

    print(
        f"JSON-Schema-Test-Suite conformance — toolbind {version('toolbind')}, "
        f"datamodel-code-generator {version('datamodel-code-generator')}"
        f"{' (skipped)' if args.no_peer else ''}, jsonschema {version('jsonschema')}, "
        f"jsonschema-rs {version('jsonschema-rs')}{' (skipped)' if args.no_rs else ''}, "
        f"pydantic {version('pydantic')}"
    )
    print("cells: compiled groups/groups agreeing tests/tests; skip: annotation-only tests")
    tables: list[tuple[str, list[Row]]] = []
    for draft in drafts:
        for suite, mode, label in (
            ("main", "annotation", "annotation mode (format not asserted)"),
            ("main", "assertion", "assertion mode (format asserted)"),
            ("format", "assertion", "optional/format, assertion mode"),
        ):
            rows = [r for r in results.rows if (r.draft, r.suite, r.mode) == (draft, suite, mode)]
            if rows:
                tables.append((f"{draft} — {label}", rows))
    for title, rows in tables:
        print_table(title, rows, names, toolbind.note)

    print("\nSummary (compiled groups %, agreeing tests %)")
    for title, rows in tables:
        total = sum_rows(rows, names)
        parts = [
            f"{name} {pct(c.compiled, total.groups).strip()} {pct(c.agree, total.tests).strip()}"
            if c.available
            else f"{name} n/a"
            for name, c in total.cells.items()
        ]
        print(f"  {title:<50} {total.tests:>5} tests: " + " | ".join(parts))

    crashes = results.crashes
    print(f"\ntoolbind crashes: {len(crashes)} (exceptions other than SpecError / ValidationError)")
    by_error = Counter(str(c["error"]).split(":")[0] + f" [{c['phase']}]" for c in crashes)
    for error, count in by_error.most_common():
        print(f"  {count:>4}  {error}")
    for c in crashes[:CRASHES_SHOWN]:
        test = f" / {c['test']}" if "test" in c else ""
        print(f"  {c['draft']}/{c['file']} [{c['mode']}]: {c['group']}{test}: {c['error']}")

    print(f"\ntoolbind JSON mode ≠ Python mode: {len(results.json_mode)} tests")
    for d in results.json_mode[:10]:
        print(
            f"  {d['draft']}/{d['file']} [{d['mode']}]: {d['group']} / {d['test']}: "
            f"python {d['python']}, json {d['json']} {d['json_error']}".rstrip()
        )

    own = [m for m in results.misses if m.implementation == TOOLBIND]
    known = [m for m in own if m.suite == "main" and xfail_key(m) in XFAIL]
    print(f"\ntoolbind known misses (XFAIL table, main suite): {len(known)}")
    for key, reason in XFAIL.items():
        hits = sum(1 for m in known if xfail_key(m) == key)
        print(f"  {key[0]}/{key[1]}: {key[2]} / {key[3]} — {hits} mode(s)\n      why: {reason}")
    unexpected = [m for m in own if m.suite == "main" and xfail_key(m) not in XFAIL]
    print(f"toolbind unexpected misses (main suite): {len(unexpected)}")
    shown = own if args.misses else own[:MISSES_SHOWN]
    print(
        f"\ntoolbind disagreements: {len(own)}"
        + ("" if args.misses else f" (first {len(shown)}; --misses for all)")
    )
    for miss in shown:
        print(f"  {miss.line()}")
    per_file = Counter(f"{m.draft}/{m.file} [{m.mode}]" for m in own)
    print("\ntoolbind disagreements per file (most first)")
    for key, count in per_file.most_common():
        print(f"  {count:>4}  {key}")

    if peer is not None:
        print(f"\n{PEER}: groups that did not compile, by reason (per compilation)")
        for reason, count in peer.failures.most_common():
            print(f"  {count:>4}  {reason}")
    for draft in drafts:
        checked = ", ".join(reference.checked_formats[draft])
        print(f"\n{REFERENCE} ({draft}) asserts these formats in assertion mode: {checked}")

    if args.json:
        payload: dict[str, Any] = {
            "meta": {
                "argv": sys.argv[1:] if argv is None else argv,
                "corpus": str(args.corpus),
                "drafts": list(drafts),
                "only": args.only,
                "implementations": names,
                "versions": {
                    p: version(p)
                    for p in (
                        "toolbind",
                        "datamodel-code-generator",
                        "jsonschema",
                        "jsonschema-rs",
                        "pydantic",
                    )
                },
                "toolbind_assertion": toolbind.note,
                "reference_checked_formats": {d: reference.checked_formats[d] for d in drafts},
                "seconds": {**results.seconds, "whole run": elapsed},
            },
            "totals": [totals_json(rows, names) for _, rows in tables],
            "rows": [row_json(r) for r in results.rows],
            "misses": [
                {
                    "implementation": m.implementation,
                    "mode": m.mode,
                    "draft": m.draft,
                    "suite": m.suite,
                    "file": m.file,
                    "group_index": m.group_index,
                    "group": m.group,
                    "test_index": m.test_index,
                    "test": m.test,
                    "expected": m.expected,
                    "got": m.got,
                }
                for m in results.misses
            ],
            "toolbind_crashes": results.crashes,
            "toolbind_json_mode_disagreements": results.json_mode,
            "not_compiled": results.not_compiled,
            "peer_failures": dict(peer.failures) if peer is not None else None,
        }
        args.json.write_text(
            json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"\nwrote {args.json}")

    elapsed = time.perf_counter() - started
    print("\ntiming")
    for key, seconds in sorted(results.seconds.items()):
        print(f"  {key:<30} {seconds:8.2f}s")
    print(f"  {'whole run':<30} {elapsed:8.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
