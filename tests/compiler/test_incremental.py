"""Incremental regeneration (compiler/memo): ``toolbind generate`` into a previous output reuses every
spec whose inputs did not change, and writes the tree a full run writes, byte for byte."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any, cast

import pytest

from toolbind.compiler._cachedir import CACHE_DIR_ENV
from toolbind.compiler._driver import OutputError, write_into
from toolbind.compiler._load import digest
from toolbind.compiler.memo._outputs import Previous
from toolbind.compiler.naming import module_name

CORPUS = Path(__file__).parent.parent / "corpus"
# small real specs of every kind of input (kept small: the fast suite compiles them many times)
SPECS = [
    "openapi/oai-examples__petstore.yaml",
    "openapi/oai-examples__link-example.yaml",
    "openapi/oai-examples__uber-swagger2.json",
    "openapi/readme-examples__schema-circular.json",
    "openapi/redocly__museum.yaml",
    "openapi/bump-sh__train-travel.json",
]


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def copy_specs(tmp_path: Path, rels: list[str]) -> Path:
    """``tmp_path/specs`` holding writable copies of the corpus specs ``rels``."""
    specs = tmp_path / "specs"
    specs.mkdir()
    for rel in rels:
        shutil.copy(CORPUS / rel, specs / Path(rel).name)
        (specs / Path(rel).name).chmod(0o644)
    return specs


def generate(specs: Path, out: Path) -> list[str]:
    """Generate; the specs that were compiled (not reused)."""
    compiled: list[str] = []
    write_into([specs], out, compiled.append)
    return compiled


def _descriptions(value: Any, found: list[dict[str, Any]]) -> None:
    if isinstance(value, dict):
        table = cast("dict[str, Any]", value)
        if isinstance(table.get("description"), str) or isinstance(table.get("summary"), str):
            found.append(table)
        for v in table.values():
            _descriptions(v, found)
    elif isinstance(value, list):
        for v in cast("list[Any]", value):
            _descriptions(v, found)


def edit(path: Path, rng: random.Random) -> None:
    """One random edit of a spec: a description changed, or a property added to a schema."""
    import yaml

    text = path.read_text(encoding="utf-8")
    doc: Any = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    found: list[dict[str, Any]] = []
    _descriptions(doc, found)
    target = rng.choice(found)
    key = "description" if "description" in target else "summary"
    target[key] = f"{target[key]} (edit {rng.randrange(1000)})"
    schemas = [t for t in found if isinstance(t.get("properties"), dict)]
    if schemas and rng.random() < 0.5:
        rng.choice(schemas)["properties"][f"added_{rng.randrange(1000)}"] = {"type": "string"}
    out = json.dumps(doc, indent=1) if path.suffix == ".json" else yaml.safe_dump(doc)
    path.write_text(out, encoding="utf-8")


def test_incremental_output_is_byte_identical_to_a_full_run_after_random_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    specs = copy_specs(tmp_path, SPECS)
    assert len(generate(specs, tmp_path / "inc")) == len(SPECS)
    assert generate(specs, tmp_path / "inc") == [], "nothing changed: everything is reused"
    rng = random.Random(18)
    for round_ in range(3):
        edited = rng.sample(sorted(specs.iterdir()), 2)
        for path in edited:
            edit(path, rng)
        compiled = generate(specs, tmp_path / "inc")
        assert sorted(compiled) == sorted(f"specs/{p.name}" for p in edited), round_
        full = tmp_path / f"full{round_}"
        generate(specs, full)
        assert tree(tmp_path / "inc") == tree(full)


def test_a_changed_ref_file_or_a_hand_edited_output_is_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "shared.json").write_text(
        json.dumps({"City": {"type": "string", "description": "A city"}}), encoding="utf-8"
    )
    (specs / "tools.json").write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {
                        "name": "weather",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"$ref": "shared.json#/City"}},
                        },
                    },
                }
            ]
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    # shared.json is a spec too (a map of schemas is not a tool list: it is refused), so only
    # tools.json is compiled here
    write_into([specs / "tools.json"], out)
    manifest = json.loads((out / "toolbind.json").read_text(encoding="utf-8"))
    assert sorted(manifest["incremental"]["tools"]["inputs"]) == [
        "specs/shared.json",
        "specs/tools.json",
    ]
    compiled: list[str] = []
    write_into([specs / "tools.json"], out, compiled.append)
    assert compiled == []
    write_into([specs / "tools.json"], out, compiled.append, reuse=False)  # --full
    assert compiled == ["specs/tools.json"]
    compiled.clear()
    (specs / "shared.json").write_text(
        json.dumps({"City": {"type": "string", "description": "A city name"}}), encoding="utf-8"
    )
    write_into([specs / "tools.json"], out, compiled.append)
    assert compiled == ["specs/tools.json"]
    assert "A city name" in (out / "tools" / "tools.json").read_text(encoding="utf-8")
    # a generated file edited by hand is not reused: the run writes it as toolbind would
    models = next(p for p in (out / "tools").rglob("*.py") if "city" in p.read_text())
    expected = models.read_text(encoding="utf-8")
    models.write_text(expected + "# edited\n", encoding="utf-8")
    compiled.clear()
    write_into([specs / "tools.json"], out, compiled.append)
    assert compiled == ["specs/tools.json"]
    assert models.read_text(encoding="utf-8") == expected


def _signature_records(cache: Path) -> dict[str, list[Any]]:
    (file,) = (cache / "signatures").glob("*.json")
    return json.loads(file.read_text(encoding="utf-8"))["files"]


def test_kept_files_are_confirmed_by_their_signatures_and_an_edit_never_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run after one that changed nothing confirms every kept file by how it looks (inode,
    size, times) instead of reading it; a file edited to the same size, its mtime set back, is
    read, found changed and written again."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    specs = copy_specs(tmp_path, SPECS[:2])
    out = tmp_path / "out"
    generate(specs, out)
    full = tree(out)
    assert generate(specs, out) == []
    records = _signature_records(tmp_path / "cache")
    prev = Previous(out)
    files = {
        rel: digests
        for _, entry in prev.by_source.values()
        for rel, digests in entry["files"].items()
    }
    assert len(files) > 10 and set(records) >= {str(out / rel) for rel in files}
    for rel, digests in files.items():
        kept = prev.kept(rel, digests)
        assert kept is not None and kept.data is None, rel  # confirmed unread
    rel = next(r for r in sorted(files) if r.endswith("/tools.py"))
    target = out / rel
    before = target.stat()
    target.write_text(target.read_text(encoding="utf-8").replace("DO NOT", "DO NOt", 1))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    assert Previous(out).kept(rel, files[rel]) is None  # read, and not as written
    (source,) = [src for src, (name, _) in prev.by_source.items() if rel.startswith(f"{name}/")]
    assert generate(specs, out) == [source]
    assert tree(out) == full


def test_inputs_changed_near_a_run_are_not_recorded_and_a_bad_cache_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    specs = copy_specs(tmp_path, SPECS[:1])
    spec = specs / Path(SPECS[0]).name
    out = tmp_path / "out"
    generate(specs, out)
    full = tree(out)
    assert generate(specs, out) == []
    # copied just now: an edit during the run could carry the same time, so it is read again
    assert str(spec) not in _signature_records(cache)
    old = spec.stat().st_mtime_ns - 60 * 10**9
    os.utime(spec, ns=(old, old))
    assert generate(specs, out) == []
    record = _signature_records(cache)[str(spec)]
    assert record[2] == old and record[4] == digest(spec.read_bytes())
    # a cache that is not JSON, or a cache directory that cannot be made: files are read
    (file,) = (cache / "signatures").glob("*.json")
    file.write_text("{not json", encoding="utf-8")
    assert generate(specs, out) == []
    assert tree(out) == full
    monkeypatch.setenv(CACHE_DIR_ENV, str(spec))  # a file: no directory below it
    assert generate(specs, out) == []
    assert tree(out) == full


def _edit_a_line(path: Path, rng: random.Random) -> None:
    """A one-line edit as a user makes it: a description or summary gets words appended."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found = [
        i
        for i, line in enumerate(lines)
        if line.strip().startswith(("description: ", "summary: "))
        and not line.rstrip().endswith(("|", ">", "-", "'", '"'))
    ]
    i = rng.choice(found)
    lines[i] += f" (edit {rng.randrange(1000)})"
    path.write_text("\n".join(lines), encoding="utf-8")


def test_a_large_yaml_spec_is_parsed_again_from_its_kept_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large YAML specs keep their parse in .toolbind-cache/; an edited one is parsed again
    from it (one entry), and the tree is still the full run's, byte for byte."""
    import toolbind.compiler.memo._parses as load
    import toolbind.compiler.memo._reparse as reparse

    monkeypatch.setattr(load, "PARSE_CACHE_MIN_BYTES", 1000)  # the small YAML specs count
    spliced: list[bool] = []
    real = reparse.splice

    def spy(*args: Any) -> Any:
        result = real(*args)
        spliced.append(result is not None)
        return result

    monkeypatch.setattr(reparse, "splice", spy)
    monkeypatch.chdir(tmp_path)
    yamls = [rel for rel in SPECS if rel.endswith(".yaml")]
    specs = copy_specs(tmp_path, yamls)
    # a parse with a warning is never kept (only a full parse gives the warning again): the
    # museum's one unquoted time (YAML 1.1 reads 18:00 as 1080) is not kept until it is quoted
    museum = specs / "redocly__museum.yaml"
    generate(specs, tmp_path / "inc")
    kept = sorted(p.name for p in (tmp_path / "inc" / ".toolbind-cache").iterdir())
    cached = sorted(
        f"{module_name(Path(r).stem)}{kind}.json" for r in yamls for kind in ("", ".operations")
    )
    assert kept == [".gitignore", *(c for c in cached if not c.startswith("redocly_museum."))]
    museum.write_text(museum.read_text("utf-8").replace("example: 18:00", "example: '18:00'"))
    generate(specs, tmp_path / "inc")
    kept = sorted(p.name for p in (tmp_path / "inc" / ".toolbind-cache").iterdir())
    assert kept == [".gitignore", *cached]
    rng = random.Random(1818)
    for round_ in range(3):
        edited = rng.choice(sorted(specs.iterdir()))
        _edit_a_line(edited, rng)
        spliced.clear()
        assert generate(specs, tmp_path / "inc") == [f"specs/{edited.name}"]
        assert spliced == [True], round_
        full = tmp_path / f"full{round_}"
        generate(specs, full)
        assert tree(tmp_path / "inc") == tree(full)
    # a kept parse edited by hand is not trusted: the spec is parsed whole again
    cache = next((tmp_path / "inc" / ".toolbind-cache").glob("redocly*.json"))
    cache.write_text(cache.read_text(encoding="utf-8").replace("Museum", "Muzeum"), "utf-8")
    _edit_a_line(specs / "redocly__museum.yaml", rng)
    spliced.clear()
    generate(specs, tmp_path / "inc")
    assert spliced == []
    generate(specs, tmp_path / "full")
    assert tree(tmp_path / "inc") == tree(tmp_path / "full")


def test_check_compares_the_output_not_the_spec_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whitespace or comment edit changes the spec's digest but no generated file: --check
    says up to date; a real edit is still stale."""
    from toolbind.compiler._driver import build, diff_tree

    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "petstore.yaml"
    shutil.copy(CORPUS / SPECS[0], spec)
    spec.chmod(0o644)
    out = tmp_path / "out"
    write_into([specs], out)
    spec.write_text(spec.read_text(encoding="utf-8") + "\n\n# a comment\n", encoding="utf-8")
    assert diff_tree(build([specs]), out) == []
    spec.write_text(spec.read_text(encoding="utf-8").replace("Pets", "Animals"), "utf-8")
    stale = diff_tree(build([specs]), out)
    assert stale and all("toolbind.json" not in d.splitlines()[0] for d in stale)


def test_nothing_changed_leaves_the_output_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every package reused and the output as written, nothing is staged or swapped (the
    files keep their inodes); a file toolbind did not write makes the run write the tree."""
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    for rel in SPECS[:2]:
        shutil.copy(CORPUS / rel, specs / Path(rel).name)
    out = tmp_path / "out"
    generate(specs, out)
    before = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
    assert generate(specs, out) == []
    assert {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()} == before
    stray = next(out.glob("*/")) / "stray.py"
    stray.write_text("x = 1\n", encoding="utf-8")
    assert generate(specs, out) == []
    assert not stray.exists()
    full = tmp_path / "full"
    generate(specs, full)
    assert tree(out) == tree(full)


# JSON specs large enough for their models to be split into _models/ modules (each keyed by
# what it is rendered from), with schemas many operations share
SPLIT = ["openapi/bump-sh__train-travel.json", "openapi/readme__readme-api.json"]


def _operations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    methods = ("get", "put", "post", "delete", "patch")
    return [op for item in doc["paths"].values() for m, op in item.items() if m in methods]


def _description_edit(doc: dict[str, Any], rng: random.Random) -> None:
    op = rng.choice(_operations(doc))
    op["description"] = f"{op.get('description', '')} (edit {rng.randrange(1000)})"


def _shared_schema_edit(doc: dict[str, Any], rng: random.Random) -> None:
    """A property added to the component schema the most operations reference."""
    text = json.dumps(doc["paths"])
    schemas = doc["components"]["schemas"]
    name = max(
        (n for n in schemas if isinstance(schemas[n].get("properties"), dict)),
        key=lambda n: text.count(f'schemas/{n}"'),
    )
    schemas[name]["properties"][f"added_{rng.randrange(1000)}"] = {"type": "string"}


def _rename_edit(doc: dict[str, Any], rng: random.Random) -> None:
    op = rng.choice([op for op in _operations(doc) if "operationId" in op])
    op["operationId"] += f"Renamed{rng.randrange(1000)}"


def _remove_edit(doc: dict[str, Any], rng: random.Random) -> None:
    path = rng.choice(sorted(doc["paths"]))
    item = doc["paths"][path]
    method = rng.choice([m for m in ("get", "put", "post", "delete", "patch") if m in item])
    del item[method]


def _add_edit(doc: dict[str, Any], rng: random.Random) -> None:
    path = rng.choice(sorted(doc["paths"]))
    copy = json.loads(json.dumps(doc["paths"][path]))
    for op in _operations({"paths": {path: copy}}):
        op["operationId"] = f"{op.get('operationId', 'op')}Copy{rng.randrange(1000)}"
    doc["paths"][f"{path}/copy{rng.randrange(1000)}"] = copy


def _apply(path: Path, change: Any, rng: random.Random) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc, rng)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def test_model_modules_are_reused_by_key_and_the_tree_is_a_full_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits of every kind (a description, a schema many operations share, a renamed, removed
    or added operation) render only the _models/ modules whose key changed; the tree is the
    full run's byte for byte; a module file not as written, or a manifest whose keys or digests
    are damaged, is never trusted."""
    import toolbind.compiler._driver as driver

    skipped: list[int] = []
    real = driver._render_files  # pyright: ignore[reportPrivateUsage]

    def spy(*args: Any) -> Any:
        result = real(*args)
        skipped.append(len(args[-1].skipped))  # (the memo layer's steps: the files not made)
        return result

    monkeypatch.setattr(driver, "_render_files", spy)
    monkeypatch.chdir(tmp_path)
    specs = copy_specs(tmp_path, SPLIT)
    inc = tmp_path / "inc"
    generate(specs, inc)
    rng = random.Random(1819)
    changes = [_description_edit, _shared_schema_edit, _rename_edit, _remove_edit, _add_edit]
    for round_, change in enumerate(changes):
        spec = specs / Path(SPLIT[round_ % len(SPLIT)]).name
        _apply(spec, change, rng)
        skipped.clear()
        assert generate(specs, inc) == [f"specs/{spec.name}"], change.__name__
        if change is _description_edit:
            assert skipped[0] > 0, "a description edit leaves most model modules as they were"
        full = tmp_path / f"full{round_}"
        generate(specs, full)
        assert tree(inc) == tree(full), change.__name__
    # a module the next run would reuse, edited by hand: written again as a full run writes it
    spec = specs / Path(SPLIT[0]).name
    module = sorted((inc / module_name(spec.stem) / "_models").glob("m_*.py"))[-1]
    module.write_text(module.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    _apply(spec, _description_edit, rng)
    generate(specs, inc)
    generate(specs, tmp_path / "full-a")
    assert tree(inc) == tree(tmp_path / "full-a")
    # damaged keys and digests in the manifest: nothing is skipped on their word
    manifest = inc / "toolbind.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for entry in data["incremental"].values():
        for digests in entry["files"].values():
            digests[1] = "0" * 16
    manifest.write_text(json.dumps(data), encoding="utf-8")
    _apply(spec, _description_edit, rng)
    skipped.clear()
    generate(specs, inc)
    # both specs compiled again; the modules whose keys matched are read back, found not as
    # the manifest says, and the package is rendered whole
    assert len(skipped) == 4 and skipped[1::2] == [0, 0], skipped
    generate(specs, tmp_path / "full-b")
    assert tree(inc) == tree(tmp_path / "full-b")
    # a manifest cut short (a partial write): not read at all — the directory is not taken for
    # toolbind's output, so it is not replaced either
    manifest.write_text(manifest.read_text(encoding="utf-8")[:200], encoding="utf-8")
    skipped.clear()
    with pytest.raises(OutputError, match=r"toolbind\.json"):
        generate(specs, inc)
    assert skipped == [0, 0]


def test_a_model_modules_key_covers_every_field_of_its_views() -> None:
    """A module is reused when its key is unchanged: the key must change with every field of
    the classes it renders (a field added to the views without the key would reuse stale
    modules)."""
    import dataclasses

    from toolbind.compiler.backends._views import ClassView, FieldView
    from toolbind.compiler.backends._views import class_key as _class_key

    field = FieldView(name="f", annotation="JsonStr", default=None)
    view = ClassView(name="A", bases="ToolModel", fields=[field])
    for f in dataclasses.fields(FieldView):
        other = "changed" if f.name != "override" else True
        changed = dataclasses.replace(view, fields=[dataclasses.replace(field, **{f.name: other})])
        assert _class_key(changed) != _class_key(view), f.name
    for f in dataclasses.fields(ClassView):
        other: object = [] if f.name == "fields" else "changed"
        assert _class_key(dataclasses.replace(view, **{f.name: other})) != _class_key(view), f.name


def test_keyed_templates_are_keyed_on_every_variable_they_read() -> None:
    """A file rendered by key (``TEMPLATE_INPUTS``) is skipped when its key is unchanged: the
    key must hold every context variable the template and its includes read, and the
    ``ToolView`` fields the template is given (``TOOL_FIELDS``) must be those it reads."""
    import re

    import jinja2.meta

    from toolbind.compiler.backends._templates import ENV as _ENV
    from toolbind.compiler.backends._templates import (
        HTTP_TEMPLATE_SOURCES,
        TEMPLATE_INPUTS,
        TEMPLATES,
        TOOL_FIELDS,
    )
    from toolbind.compiler.backends._views import ToolView

    def reads(name: str) -> tuple[set[str], str]:
        source = (TEMPLATES / name).read_text(encoding="utf-8")
        ast = _ENV.parse(source)
        found = set(jinja2.meta.find_undeclared_variables(ast))
        for included in jinja2.meta.find_referenced_templates(ast):
            assert included is not None
            more, text = reads(included)
            found |= more
            source += text
        return found, source

    for name, inputs in TEMPLATE_INPUTS.items():
        assert reads(name)[0] == set(inputs), name
    assert reads("http.py.jinja")[0] == set(HTTP_TEMPLATE_SOURCES)
    view_fields = {f.name for f in dataclasses.fields(ToolView)}
    for name, fields in TOOL_FIELDS.items():
        assert set(fields) <= view_fields, name
        source = reads(name)[1]
        # every ``t.<field>`` of a view field the template reads is one it is given
        used = set(re.findall(r"\bt\.([a-z_]+)", source)) & view_fields
        assert used == set(fields), name


def test_a_render_memo_is_taken_only_when_made_from_the_same_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large package's whole-package passes (definition views, the models' split, shared
    subschemas) are kept in .toolbind-cache/<package>.render.json: a description edit takes
    all three (and tools.json's schemas are the previous tools.json's text); an edit of a schema many operations share takes none it changes; a memo edited
    by hand (its digest no longer the manifest's), or damaged with its digest made to match,
    is never trusted. The tree is a full run's every time."""
    import hashlib

    import toolbind.compiler.backends._json_files as json_files
    import toolbind.compiler.backends.python as backend
    import toolbind.compiler.memo._render as render
    from toolbind.compiler._load import digest

    taken: list[str] = []
    real_run = render.RenderSteps.run

    def run_spy(self: Any, name: str, key: str, make: Any, save: Any, load: Any) -> Any:
        def spy_load(kept: Any) -> Any:
            result = load(kept)
            if result is not None:
                taken.append(name)
            return result

        return real_run(self, name, key, make, save, spy_load)

    monkeypatch.setattr(render.RenderSteps, "run", run_spy)
    real_texts = json_files.ToolsJson._written_schema_texts  # pyright: ignore[reportPrivateUsage]

    def texts_spy(self: Any, *args: Any) -> Any:
        result = real_texts(self, *args)
        if result:
            taken.append("tools.json")
        return result

    monkeypatch.setattr(json_files.ToolsJson, "_written_schema_texts", texts_spy)
    # (readme's 36 tools and 31 definitions count as many: it keeps a render memo)
    monkeypatch.setattr(backend, "STEPS_MIN", 10)
    monkeypatch.chdir(tmp_path)
    spec_rel = "openapi/readme__readme-api.json"
    specs = copy_specs(tmp_path, [spec_rel])
    spec = specs / Path(spec_rel).name
    inc = tmp_path / "inc"
    generate(specs, inc)
    memo = inc / ".toolbind-cache" / f"{module_name(spec.stem)}.render.json"
    assert set(json.loads(memo.read_text(encoding="utf-8"))) == {
        "definitions",
        "modules",
        "shared",
    }
    rng = random.Random(1820)

    def check(label: str) -> None:
        full = tmp_path / f"full-{label}"
        generate(specs, full)
        assert tree(inc) == tree(full), label

    _apply(spec, _description_edit, rng)
    taken.clear()
    generate(specs, inc)
    # (and tools.json's schemas are copied from the previous tools.json)
    assert sorted(taken) == ["definitions", "modules", "shared", "tools.json"]
    check("description")
    _apply(spec, _shared_schema_edit, rng)
    taken.clear()
    generate(specs, inc)
    assert taken == []
    check("shared-schema")
    # edited by hand: the manifest's digest no longer matches, the memo is not read
    memo.write_text(memo.read_text(encoding="utf-8").replace('"m_', '"n_'), encoding="utf-8")
    _apply(spec, _description_edit, rng)
    taken.clear()
    generate(specs, inc)
    assert taken == []
    check("hand-edited")
    # damaged with the digest made to match: each entry's content is checked before use (a
    # key that matches with views cut short, a split that does not cover every model)
    data = json.loads(memo.read_text(encoding="utf-8"))
    data["definitions"]["classes"] = data["definitions"]["classes"][:-1]
    data["definitions"]["classes"].append(["X", "ToolModel", None, None, None, None, [[1]]])
    data["modules"]["components"] = data["modules"]["components"][1:]
    data["shared"]["claimed"] = data["shared"]["claimed"][1:]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    memo.write_text(text, encoding="utf-8")
    manifest = inc / "toolbind.json"
    top = json.loads(manifest.read_text(encoding="utf-8"))
    rel = memo.relative_to(inc).as_posix()
    for entry in top["incremental"].values():
        if rel in entry["files"]:
            entry["files"][rel] = [digest(text.encode()), digest(text.encode())]
    manifest.write_text(json.dumps(top, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest(text.encode())
    _apply(spec, _description_edit, rng)
    taken.clear()
    generate(specs, inc)
    assert "modules" not in taken and "shared" not in taken
    check("damaged")


@pytest.mark.slow
def test_one_description_edited_in_the_largest_corpus_spec_regenerates_as_a_full_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/incremental.py's case, checked: the openai spec (a large YAML: its parse and its
    render memo kept) with one operation's description edited, then a schema's, regenerated
    into the previous output — byte for byte the full run's tree."""
    monkeypatch.chdir(tmp_path)
    specs = copy_specs(tmp_path, ["openapi/openai__openapi.yaml"])
    spec = next(specs.iterdir())
    inc = tmp_path / "inc"
    generate(specs, inc)
    rng = random.Random(1821)
    for round_ in range(2):
        _edit_a_line(spec, rng)
        assert generate(specs, inc) == [f"specs/{spec.name}"]
        full = tmp_path / f"full{round_}"
        generate(specs, full)
        assert tree(inc) == tree(full), round_


def test_the_version_in_every_key_is_the_installed_distributions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version (in every header and every reuse key) is read without importlib.metadata
    from the first toolbind .dist-info on sys.path — the one importlib.metadata reads — and
    left to importlib.metadata where that is unsure (an .egg-info first, two of them)."""
    import importlib.metadata
    import sys

    from toolbind import _version  # pyright: ignore[reportPrivateUsage]

    assert importlib.metadata.version("toolbind") == _version.VERSION
    site = tmp_path / "site"
    (site / "toolbind-9.9.dist-info").mkdir(parents=True)
    (site / "toolbind-9.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolbind\nVersion: 9.9\n\nbody\n", encoding="utf-8"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(site), *sys.path])
    assert _version._from_dist_info() == "9.9"  # pyright: ignore[reportPrivateUsage]
    (site / "toolbind.egg-info").mkdir()
    assert _version._from_dist_info() is None  # pyright: ignore[reportPrivateUsage]


def _yaml_apply(path: Path, change: Any, rng: random.Random) -> None:
    """``change`` made to a YAML spec written by one dumper: the lines of what it changed
    differ, the others stay (so the kept parse is parsed again where the edit is)."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if change is not None:
        change(doc, rng)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=1000), encoding="utf-8")


def _component_edit(doc: dict[str, Any], rng: random.Random) -> None:
    """A property added to the component schema the most operations reference (OpenAPI 3's
    components or Swagger 2.0's definitions)."""
    schemas = doc["components"]["schemas"] if "components" in doc else doc["definitions"]
    text = json.dumps(doc["paths"])
    name = max(
        (n for n in schemas if isinstance(schemas[n].get("properties"), dict)),
        key=lambda n: text.count(f'/{n}"'),
    )
    schemas[name]["properties"][f"added_{rng.randrange(1000)}"] = {"type": "string"}


@pytest.mark.parametrize(
    "spec_rel",
    [
        "openapi/redocly__museum.yaml",
        "openapi/oai-examples__petstore-expanded.yaml",
        "openapi/oai-examples__petstore-expanded-swagger2.yaml",
    ],
)
def test_operations_are_taken_from_their_records_only_where_nothing_they_read_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec_rel: str
) -> None:
    """A large YAML spec keeps each operation's lowering (.toolbind-cache/<package>.operations
    .json). After an edit, an operation whose reads the edit did not touch is taken from its
    record: a description edit lowers one operation only. An edit of a shared component, a
    renamed, removed or added operation lower what they must; a memo edited by hand, or
    damaged with its digest made to match, is never trusted. The tree is a full run's, byte
    for byte, every time."""
    import toolbind.compiler.memo._parses as load
    from toolbind.compiler._load import digest
    from toolbind.compiler.memo import _replay

    monkeypatch.setattr(load, "PARSE_CACHE_MIN_BYTES", 1000)  # this small spec counts
    replayed: list[int] = []
    real_apply = _replay.Replay._apply  # pyright: ignore[reportPrivateUsage]

    def spy(self: Any, delta: Any) -> None:
        replayed.append(1)
        real_apply(self, delta)

    monkeypatch.setattr(_replay.Replay, "_apply", spy)
    monkeypatch.chdir(tmp_path)
    specs = copy_specs(tmp_path, [spec_rel])
    spec = next(specs.iterdir())
    rng = random.Random(1822)
    _yaml_apply(spec, None, rng)  # (written by the dumper the edits use)
    inc = tmp_path / "inc"
    generate(specs, inc)
    memo = inc / ".toolbind-cache" / f"{module_name(spec.stem)}.operations.json"
    total = len(json.loads(memo.read_text(encoding="utf-8"))["records"])
    assert total >= 4

    def check(label: str) -> None:
        full = tmp_path / f"full-{label}"
        generate(specs, full)
        assert tree(inc) == tree(full), label

    _yaml_apply(spec, _description_edit, rng)
    replayed.clear()
    assert generate(specs, inc) == [f"specs/{spec.name}"]
    assert len(replayed) == total - 1, "only the edited operation is lowered"
    check("description")

    def info_edit(doc: dict[str, Any], rng: random.Random) -> None:
        doc["info"]["description"] = f"{doc['info'].get('description', '')} ({rng.random()})"

    def servers_edit(doc: dict[str, Any], rng: random.Random) -> None:
        host = f"api{rng.randrange(1000)}.example.com"
        if "openapi" in doc:
            doc["servers"] = [{"url": f"https://{host}"}]
        else:
            doc["host"] = host

    # what no operation reads: every operation is taken from its record
    for label, change in [("info", info_edit), ("servers", servers_edit)]:
        _yaml_apply(spec, change, rng)
        replayed.clear()
        generate(specs, inc)
        assert len(replayed) == total, label
        check(label)
    for label, change in [
        ("component", _component_edit),
        ("rename", _rename_edit),
        ("remove", _remove_edit),
        ("add", _add_edit),
    ]:
        _yaml_apply(spec, change, rng)
        replayed.clear()
        generate(specs, inc)
        check(label)
    # edited by hand: the manifest's digest no longer matches, no record is taken
    text = memo.read_text(encoding="utf-8")
    memo.write_text(text.replace('"/paths', '"/pathz', 1), encoding="utf-8")
    _yaml_apply(spec, _description_edit, rng)
    replayed.clear()
    generate(specs, inc)
    assert replayed == []
    check("hand-edited")
    # damaged with the digest made to match: a payload that is no pickle, one that names a
    # global other than an IR class's maker (never called), and two records' payloads swapped
    # are each lowered again, never taken as they are
    import base64
    import os
    import pickle

    data = json.loads(memo.read_text(encoding="utf-8"))
    records = data["records"]
    records[0][2], records[1][2] = records[1][2], records[0][2]
    records[-2][2] = "not base64!"
    records[-1][2] = base64.b64encode(pickle.dumps((os.getcwd, ()))).decode()
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    memo.write_text(text, encoding="utf-8")
    manifest = inc / "toolbind.json"
    top = json.loads(manifest.read_text(encoding="utf-8"))
    rel = memo.relative_to(inc).as_posix()
    for entry in top["incremental"].values():
        if rel in entry["files"]:
            entry["files"][rel] = [digest(text.encode()), digest(text.encode())]
    manifest.write_text(json.dumps(top, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _yaml_apply(spec, _description_edit, rng)
    replayed.clear()
    generate(specs, inc)
    assert len(replayed) <= total - 4
    check("damaged")


def test_compiled_templates_are_kept_and_a_damaged_or_unwritable_cache_is_no_error(
    tmp_path: Path,
) -> None:
    """Each template is compiled once and kept (jinja's bytecode); a kept entry that is
    damaged, or a cache that cannot be written, only means compiling it again."""
    import jinja2

    from toolbind.compiler.backends._templates import TEMPLATES, CompiledTemplates

    def render(where: Path) -> str:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            undefined=jinja2.StrictUndefined,
            bytecode_cache=CompiledTemplates(str(where)),
        )
        template = env.get_template("scaffold.py.jinja")
        return template.root_render_func.__code__.co_code.hex()

    where = tmp_path / "templates"
    first = render(where)
    (kept,) = where.glob("*.cache")
    kept.write_bytes(b"damaged")
    assert render(where) == first
    assert kept.read_bytes() != b"damaged"  # written again
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    assert render(blocked / "templates") == first
