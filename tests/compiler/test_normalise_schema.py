"""The JSON Schema quirk rules (``toolbind.compiler.normalise.schema_*``), one test each.

Each rule is read twice: applied to a fragment, it gives the canonical fragment and the warning
(the texts users see, compared whole); and a minimal spec holding the fragment, compiled end to
end, says that warning at that place and generates the models the canonical spec generates.
"""

from __future__ import annotations

import copy
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolbind.compiler import SpecError, generate_tree, model_from_schema, normalise
from toolbind.compiler.diagnostics import Diagnostics
from toolbind.compiler.frontends import read_spec
from toolbind.compiler.ir import SourceLocation
from toolbind.compiler.normalise import (
    Rule,
    _families,
    schema_drafts,
    schema_nullable,
    schema_objects,
    schema_patterns,
    schema_refs,
    schema_shapes,
    schema_types,
    schema_unions,
)
from toolbind.compiler.normalise._schema import Phase, SchemaContext
from toolbind.compiler.normalise.schema_unions import Branches

OPENAPI30 = SchemaContext(dialect="openapi30", lenient=True, drop_extensions=True)
OPENAPI31 = SchemaContext(lenient=True, drop_extensions=True, openapi31=True)
DRAFT7 = SchemaContext(draft="draft7", legacy_ref=True)
TOOLS = SchemaContext()
UNIONS = SchemaContext(lenient=True)  # (a union's rules are given its branches: ``Branches``)
FAMILIES = (
    schema_drafts,
    schema_nullable,
    schema_objects,
    schema_patterns,
    schema_refs,
    schema_shapes,
    schema_types,
    schema_unions,
)


@dataclass(frozen=True)
class Case:
    """A rule, a fragment it reads in ``context``, what it makes of it and what it says."""

    rule: Rule[SchemaContext]
    context: SchemaContext
    fragment: Any
    canonical: Any
    said: list[str]  # rendered, with ``{at}`` for the fragment's place


OTHER = {"type": "object", "properties": {"id": {"type": "integer"}}}
REF = "#/components/schemas/Other"


def _component(ref: Any, place: Any) -> tuple[Any, Any] | None:
    """The look-up the lowerer gives the union rules, over the components of ``_openapi``."""
    return (OTHER, place) if ref == REF else None


def _union(schema: dict[str, Any], form: str = "oneOf") -> Branches:
    combinator = next(c for c in ("oneOf", "anyOf", "allOf") if c in schema)
    return Branches(schema=schema, combinator=combinator, form=form, place=None, resolve=_component)


_OPEN = {"oneOf": [{"$ref": REF}, {"type": "object", "properties": {"n": {"type": "string"}}}]}
_NESTED = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
_TYPED = {"type": "object", "oneOf": [{"type": "string"}, {"$ref": REF}]}
_PARTS = {"allOf": [{"$ref": REF}, {"properties": {"n": {"type": "string"}}}]}
_TYPED_PARTS = {
    "allOf": [{"$ref": REF}, {"type": "object", "properties": {"n": {"type": "string"}}}]
}
CASES = [
    Case(
        schema_shapes.SCHEMA_NOT_OBJECT,
        OPENAPI31,
        "The name",
        {"description": "The name"},
        [
            "{at}: warning: schema is a string 'The name'; read as any value described "
            "by that text — a JSON Schema object or boolean (hint: write {{description: ...}})"
        ],
    ),
    Case(
        schema_shapes.EMPTY_ENUM,
        OPENAPI31,
        {"type": "string", "enum": []},
        {"type": "string"},
        [
            "{at}/enum: warning: enum is empty; it is ignored — at least one allowed value "
            "(hint: remove the enum, or list the allowed values)"
        ],
    ),
    Case(
        schema_shapes.PROPERTIES_WITHOUT_TYPE,
        OPENAPI30,
        {"properties": {"a": {"type": "string"}}},
        {"properties": {"a": {"type": "string"}}, "type": "object"},
        [
            "{at}/properties: warning: properties without type: read as type: object — type: "
            "object beside properties (without it, JSON Schema lets any non-object value through)"
        ],
    ),
    Case(
        schema_drafts.DRAFT3_KEYWORD,
        OPENAPI31,
        {"type": "number", "divisibleBy": 2},
        {"type": "number", "divisibleBy": 2},
        [
            "{at}/divisibleBy: warning: divisibleBy is JSON Schema draft 3's keyword; toolbind "
            "does not read it, so it checks nothing — multipleOf (drafts 4 and later)"
        ],
    ),
    Case(
        schema_drafts.OTHER_DRAFT_KEYWORD,
        DRAFT7,
        {"type": "string", "id": "name"},
        {"type": "string", "id": "name"},
        [
            "{at}/id: warning: id is no keyword of JSON Schema draft7; it is ignored — $id "
            "(hint: name the draft it belongs to (draft=, $schema) or write $id)"
        ],
    ),
    Case(
        schema_drafts.BOOLEAN_EXCLUSIVE_BOUND,
        OPENAPI31,
        {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "maximum": 9},
        {"type": "integer", "exclusiveMinimum": 0, "maximum": 9},
        [
            "{at}/exclusiveMinimum: warning: exclusiveMinimum is a boolean true (the form of JSON "
            "Schema draft 4 and OpenAPI 3.0); read as exclusiveMinimum: 0 — a number "
            "(exclusiveMinimum: <the bound>) in drafts 6 and later and OpenAPI 3.1 (hint: write "
            "exclusiveMinimum: <the bound> instead of minimum and exclusiveMinimum: true)"
        ],
    ),
    Case(
        schema_drafts.BOOLEAN_EXCLUSIVE_BOUND,
        DRAFT7,
        {"type": "number", "maximum": 1.5, "exclusiveMaximum": False},
        {"type": "number", "maximum": 1.5},
        [
            "{at}/exclusiveMaximum: warning: exclusiveMaximum is a boolean false (the form of "
            "JSON Schema draft 4 and OpenAPI 3.0); read as no bound of its own — a number "
            "(exclusiveMaximum: <the bound>) in drafts 6 and later and OpenAPI 3.1 (hint: leave "
            "out exclusiveMaximum: false (maximum alone is inclusive))"
        ],
    ),
    Case(
        schema_drafts.DRAFT3_REQUIRED,
        OPENAPI30,
        {"type": "object", "properties": {"a": {"type": "string", "required": True}}},
        {
            "type": "object",
            "properties": {"a": {"type": "string", "required": True}},
            "required": ["a"],
        },
        [
            "{at}/properties/a/required: warning: required is a boolean true (JSON Schema draft "
            "3's form); read as: the object requires 'a' — the property's name in the object's "
            "required array"
        ],
    ),
    Case(
        schema_refs.LEGACY_REF_SIBLINGS,
        DRAFT7,
        {"$ref": "#/definitions/Name", "maxLength": 3},
        {"$ref": "#/definitions/Name"},
        [
            "{at}/$ref: warning: $ref replaces the keywords beside it in JSON Schema draft7: "
            "maxLength check nothing — a $ref alone in its schema (hint: wrap them: allOf: "
            "[{{$ref: ...}}, {{...}}], or use draft 2019-09 or later)"
        ],
    ),
    Case(
        schema_refs.OPENAPI30_REF_SIBLINGS,
        OPENAPI30,
        {"$ref": REF, "type": "number", "description": "the other"},
        {"$ref": REF, "description": "the other"},
        [
            "{at}/$ref: warning: $ref replaces the fields beside it in OpenAPI 3.0 and Swagger "
            "2.0: type ignored — a $ref alone in its schema (annotations and nullable beside it "
            "are read) (hint: wrap them: allOf: [{{$ref: ...}}, {{...}}] (OpenAPI 3.1 reads them "
            "beside it))"
        ],
    ),
    Case(
        schema_refs.RECURSIVE_REF_TO_COMPONENT,
        OPENAPI31,
        {"$recursiveRef": "#"},
        {"$ref": "#/components/schemas/Thing"},
        [
            "{at}/$recursiveRef: warning: $recursiveRef '#' is no keyword of OpenAPI schemas "
            "(draft 2019-09's); read as $ref: '#/components/schemas/Thing', the component schema "
            "it is in, which '#' names when the component is read as a JSON Schema of its own — "
            "$ref to the schema meant (hint: write $ref: '#/components/schemas/Thing')"
        ],
    ),
    Case(
        schema_refs.PROPERTIES_REF,
        OPENAPI30,
        {"type": "object", "properties": {"$ref": "#/components/schemas/Other/properties"}},
        {"type": "object", "properties": {"$ref": "#/components/schemas/Other/properties"}},
        [
            "{at}/properties/$ref: warning: properties is a $ref to the whole map; followed — "
            "a map of property names to schemas (each may be a $ref)"
        ],
    ),
    Case(
        schema_refs.RECURSIVE_REF_IN_OPENAPI,
        OPENAPI31,
        {"type": "object", "$recursiveRef": "#node"},
        {"type": "object"},
        [
            "{at}/$recursiveRef: warning: $recursiveRef is no keyword of OpenAPI schemas (draft "
            "2019-09's); it is ignored, so the value it names is not checked — $ref to the "
            "schema meant"
        ],
    ),
    Case(
        schema_refs.RECURSIVE_ANCHOR_IN_OPENAPI,
        OPENAPI31,
        {"$recursiveAnchor": True, "type": "object"},
        {"type": "object"},
        [
            "{at}/$recursiveAnchor: warning: $recursiveAnchor is no keyword of OpenAPI schemas "
            "(draft 2019-09's); it is ignored"
        ],
    ),
    Case(
        schema_nullable.X_NULLABLE,
        OPENAPI30,
        {"type": "string", "x-nullable": True},
        {"type": "string", "nullable": True},
        ["{at}/x-nullable: note: x-nullable: true read as nullable"],
    ),
    Case(
        schema_nullable.NULLABLE_IN_JSON_SCHEMA,
        OPENAPI31,
        {"type": "string", "nullable": True},
        {"type": "string", "nullable": True},
        [
            "{at}/nullable: warning: nullable is OpenAPI 3.0's keyword; read as also allowing "
            "null — type: [..., 'null'] in OpenAPI 3.1"
        ],
    ),
    Case(
        schema_nullable.NULL_TYPE_BESIDE_REF,
        OPENAPI31,
        {"$ref": REF, "type": ["object", "null"]},
        {"$ref": REF, "type": "object", "nullable": True},
        [
            "{at}/type: warning: type beside $ref lists 'null': read as also allowing null, "
            "whatever the referenced schema allows — anyOf: [{{$ref: ...}}, {{type: 'null'}}] "
            "for a reference that may be null"
        ],
    ),
    Case(
        schema_types.TYPE_NAME_ALIAS,
        OPENAPI30,
        {"type": "int"},
        {"type": "integer"},
        [
            "{at}/type: warning: type 'int' is not a JSON Schema type; read as 'integer' — one "
            "of null, boolean, object, array, number, integer, string (hint: write 'integer')"
        ],
    ),
    Case(
        schema_types.ENUM_SCALARS_AS_TEXT,
        OPENAPI30,
        {"type": "string", "enum": [True, 4.1, "x"]},
        {"type": "string", "enum": ["true", "4.1", "x"]},
        [
            "{at}/enum: warning: enum value(s) true, 4.1 are booleans and numbers under type: "
            "string; read as the string(s) 'true', '4.1' — strings (hint: quote them: an "
            "unquoted true in JSON is a boolean, not a string)"
        ],
    ),
    Case(
        schema_patterns.INLINE_REGEX_FLAGS,
        OPENAPI30,
        {"type": "string", "pattern": "(?i)^(all|none)$"},
        {"type": "string", "pattern": "(?i:^(all|none)$)"},
        [
            "{at}/pattern: warning: pattern '(?i)^(all|none)$' starts with '(?i)', an inline "
            "flag group ECMA-262 has not (Java's, Python's); read as '(?i:^(all|none)$)', the "
            "flags over the whole pattern — an ECMA-262 regular expression (hint: write "
            "'(?i:^(all|none)$)' (ECMA-262's modifier group))"
        ],
    ),
    Case(
        schema_objects.ONE_WAY_REQUIRED,
        OPENAPI31,
        {
            "type": "object",
            "properties": {"id": {"type": "integer", "readOnly": True}, "n": {"type": "string"}},
            "required": ["id", "n"],
        },
        {
            "type": "object",
            "properties": {"id": {"type": "integer", "readOnly": True}, "n": {"type": "string"}},
            "required": ["n"],
        },
        [
            "{at}/required: warning: required lists readOnly/writeOnly id: read as optional "
            "(OpenAPI requires a readOnly property in responses only, a writeOnly one in requests "
            "only, and this schema is read for both) — required naming properties required both "
            "ways"
        ],
    ),
    Case(
        schema_unions.ONEOF_OPEN_BRANCHES,
        UNIONS,
        _union(_OPEN),
        _union(_OPEN, "anyOf"),
        [
            "{at}/oneOf: warning: oneOf branches 0, 1 require nothing: an object they all accept "
            "({{}} and every object with none of their properties) matches more than one, and "
            "oneOf refuses it; read as anyOf (the first branch that matches) — branches that "
            "exclude each other (a required property, a const/enum, a discriminator) (hint: "
            "write anyOf, or make the branches exclusive)"
        ],
    ),
    Case(
        schema_unions.ONEOF_NESTED_BRANCH,
        UNIONS,
        _union(_NESTED),
        _union(_NESTED, "anyOf"),
        [
            "{at}/oneOf: warning: oneOf branch 0 is within branch 1: every value branch 0 "
            "accepts matches both, and oneOf refuses it, so no value could ever be read as "
            "branch 0; read as anyOf (the first branch that matches) — branches that exclude "
            "each other (an integer is also a number: type integer beside type number matches "
            "every integer twice) (hint: write anyOf, or drop or narrow the wider branch)"
        ],
    ),
    Case(
        schema_unions.TYPE_BESIDE_BRANCHES,
        UNIONS,
        _union(_TYPED),
        _union({"oneOf": _TYPED["oneOf"]}),
        [
            "{at}/type: warning: type object beside oneOf excludes branch(es) 0 (string): no "
            "value could match them; read as the branches' own types (the type beside them left "
            "out) — a type that allows every branch of oneOf (hint: drop the type beside oneOf, "
            "or widen it to the branches' types)"
        ],
    ),
    Case(
        schema_unions.UNTYPED_OBJECT_PART,
        UNIONS,
        _union(_PARTS, "allOf"),
        _union(_TYPED_PARTS, "allOf"),
        [],  # (the allOf says object already: nothing to tell)
    ),
]


def _id(case: Case) -> str:
    return case.rule.name


# -- the rule alone -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_rule_gives_the_canonical_fragment_and_its_warning(case: Case) -> None:
    at = SourceLocation(file="spec.json", pointer="/components/schemas/Thing/properties/v")
    given = copy.deepcopy(case.fragment)
    fixed = case.rule.apply(given, at, case.context)
    assert fixed is not None
    assert fixed.value == case.canonical
    assert [d.render() for d in fixed.diagnostics] == [s.format(at=at) for s in case.said]
    assert given == case.fragment  # (a rule never touches what it is given)
    again = case.rule.apply(fixed.value, at, case.context)  # canonical: nothing more to do,
    assert again is None or again.value == fixed.value  # (warn-only rules say it again)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_rule_is_quiet_where_its_quirk_is_not(case: Case) -> None:
    at = SourceLocation(file="spec.json")
    assert case.rule.apply({"type": "string"}, at, case.context) is None
    # what the lowerer runs: the rule, in its context, on a fragment with its quirk
    phase = Phase.of((case.rule,), case.context)
    assert phase.rules == (case.rule,)
    assert not phase.idle(case.fragment)
    assert phase.idle({"title": "nothing for the rules"})
    # the rule and the runs it fires in (``Phase``) agree, in a strict run too
    c = case.context
    strict = SchemaContext(
        dialect=c.dialect, draft=c.draft, legacy_ref=c.legacy_ref, drop_extensions=c.drop_extensions
    )
    fires = case.rule.apply(case.fragment, at, strict) is not None
    assert fires == bool(Phase.of((case.rule,), strict).rules)


# -- end to end ---------------------------------------------------------------------------------


def _openapi(version: str, fragment: Any) -> dict[str, Any]:
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}
    return {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/things": {"post": {"operationId": "make", "requestBody": body, "responses": {}}}
        },
        "components": {
            "schemas": {
                "Thing": {"type": "object", "properties": {"v": fragment}},
                "Other": OTHER,
            }
        },
    }


def _compiled(spec: dict[str, Any], where: Path) -> tuple[dict[str, str], list[str]]:
    where.mkdir()
    path = where / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    said = [d.render().replace(str(path), "spec.json") for d in tree.diagnostics]
    # (a generated file names the spec it was made from)
    files = {n: tree.files[n].replace(str(path), "spec.json") for n in tree.files}
    del files["toolbind.json"]  # (the manifest holds the spec's digest)
    return files, said


_E2E_OPENAPI = [c for c in CASES if c.context in (OPENAPI30, OPENAPI31)]


@pytest.mark.parametrize("case", _E2E_OPENAPI, ids=_id)
def test_a_minimal_openapi_spec_says_it_and_compiles_as_the_canonical_one(
    case: Case, tmp_path: Path
) -> None:
    version = "3.0.3" if case.context is OPENAPI30 else "3.1.0"
    files, said = _compiled(_openapi(version, case.fragment), tmp_path / "quirk")
    canonical_files, _ = _compiled(_openapi(version, case.canonical), tmp_path / "canonical")
    at = SourceLocation(file="spec.json", pointer="/components/schemas/Thing/properties/v")
    expected = [s.format(at=at) for s in case.said]
    if case.rule is schema_nullable.X_NULLABLE:  # (counted, and said once for the spec)
        expected = [
            f"{at}/x-nullable: note: x-nullable: true read as nullable in 1 schema(s): the "
            "Swagger 2.0 extension (go-swagger, Swashbuckle, NSwag) for OpenAPI 3.0's nullable"
        ]
    assert [s for s in said if s.startswith(str(at))] == expected
    assert files == canonical_files


_E2E_UNIONS = [c for c in CASES if c.context is UNIONS]


@pytest.mark.parametrize("case", _E2E_UNIONS, ids=_id)
def test_a_minimal_openapi_spec_with_a_union_says_it_and_compiles_as_the_canonical_one(
    case: Case, tmp_path: Path
) -> None:
    def written(union: Branches) -> dict[str, Any]:  # (the union as a spec writes it)
        schema = dict(union.schema)
        schema[union.form] = schema.pop(union.combinator)
        return schema

    files, said = _compiled(_openapi("3.1.0", written(case.fragment)), tmp_path / "quirk")
    canonical_files, _ = _compiled(
        _openapi("3.1.0", written(case.canonical)), tmp_path / "canonical"
    )
    at = SourceLocation(file="spec.json", pointer="/components/schemas/Thing/properties/v")
    assert [s for s in said if s.startswith(str(at))] == [s.format(at=at) for s in case.said]
    assert files == canonical_files


_E2E_SCHEMA = [c for c in CASES if c.context is DRAFT7]


def _model(schema: Any) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = model_from_schema(schema, name="Thing", draft="draft7")
    return model.model_json_schema(), [str(w.message) for w in caught]


@pytest.mark.parametrize("case", _E2E_SCHEMA, ids=_id)
def test_a_minimal_json_schema_says_it_and_compiles_as_the_canonical_one(case: Case) -> None:
    def schema(fragment: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"v": fragment},
            "definitions": {"Name": {"type": "string"}},
        }

    model, said = _model(schema(case.fragment))
    canonical, _ = _model(schema(case.canonical))
    at = SourceLocation(file="<schema>", pointer="/properties/v")
    assert said == [s.format(at=at) for s in case.said]
    assert model == canonical


def test_a_tool_spec_is_read_by_the_draft_rules_too(tmp_path: Path) -> None:
    spec = tmp_path / "tools.yaml"
    spec.write_text(
        "greet:\n  type: object\n  properties:\n    _tool: {const: greet}\n"
        "    n: {type: number, divisibleBy: 2}\n",
        encoding="utf-8",
    )
    said = [d.render() for d in generate_tree([spec]).diagnostics if d.severity == "warning"]
    assert said == [
        f"{spec}#/greet/properties/n/divisibleBy: warning: divisibleBy is JSON Schema draft 3's "
        "keyword; toolbind does not read it, so it checks nothing — multipleOf (drafts 4 and later)"
    ]


# -- the table ----------------------------------------------------------------------------------


def test_the_table_lists_every_rule_with_its_fields_and_a_name_of_its_own() -> None:
    rows = normalise.table()
    assert rows and all(all(field.strip() for field in row) for row in rows)
    names = [name for _, name, *_ in rows]
    assert len(names) == len(set(names))
    listed = set(names)
    for family in FAMILIES:
        assert {r.name for r in family.RULES} <= listed, family.__name__
    assert {c.rule.name for c in CASES} == {r.name for f in FAMILIES for r in f.RULES}
    assert all(isinstance(r, Rule) for r in _families.ALL)


def test_every_schema_family_is_listed() -> None:
    modules = {p.stem for p in Path(normalise.__file__).parent.glob("schema_*.py")}
    assert modules == {f.__name__.rsplit(".", 1)[1] for f in FAMILIES}


@pytest.mark.parametrize("listed", [[5, "json"], ["json", 5, "str"]])
def test_a_type_dropped_for_a_name_meaning_any_value_still_refuses_what_is_no_name(
    listed: list[Any], tmp_path: Path
) -> None:
    # the rule drops the whole ``type``: its entries that are no type name at all would never
    # reach the lowerer's check, and a spec with one compiled without an error
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_openapi("3.1.0", {"type": listed})), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        generate_tree([path])
    at = f"{path}#/components/schemas/Thing/properties/v/type"
    said = [
        d.render()
        for d in caught.value.diagnostics
        if d.loc.pointer.startswith(at[len(str(path)) + 1 :])
    ]
    types = "one of null, boolean, object, array, number, integer, string"
    expected = {
        5: f"error: type is an integer 5 — {types}",
        "json": "warning: type 'json' is not a JSON Schema type; read as any value (no type) — "
        f"{types} (hint: leave out 'type')",
    }
    shown = [i for i, x in enumerate(listed) if x in (5, "json")]
    assert said == [f"{at}/{i}: {expected[listed[i]]}" for i in shown]


@pytest.mark.parametrize("version", ["3.0.3", "2.0"])
def test_a_boolean_exclusive_bound_is_no_quirk_where_it_is_the_form(
    version: str, tmp_path: Path
) -> None:
    # OpenAPI 3.0 and Swagger 2.0 (draft 4's schemas) spell exclusivity as a boolean: read so,
    # without a word
    bound = {"type": "integer", "minimum": 0, "exclusiveMinimum": True}
    if version == "2.0":
        parameter = {"name": "v", "in": "query", "required": True, **bound}
        spec: dict[str, Any] = {
            "swagger": "2.0",
            "info": {"title": "t", "version": "1"},
            "paths": {"/things": {"get": {"operationId": "make", "parameters": [parameter]}}},
        }
    else:
        spec = _openapi(version, bound)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tree = generate_tree([path])
    assert not [d for d in tree.diagnostics if "exclusiveMinimum" in d.render()]
    models = "".join(text for name, text in tree.files.items() if name.endswith(".py"))
    assert "gt=0" in models  # exclusive, as the boolean says


def test_a_property_map_behind_a_ref_in_another_file_is_the_calls_fields(tmp_path: Path) -> None:
    # a split spec writes a body's whole property map as one $ref: its entries are the Call's
    # fields (it was one field ``ref``, sent as "$ref"), their own $refs read from that file
    body: dict[str, Any] = {"name": "body", "in": "body", "required": True}
    body["schema"] = {"type": "object", "required": ["name"], "properties": {"$ref": "props.json"}}
    spec = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/items": {
                "post": {
                    "operationId": "create",
                    "parameters": [body],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    props = {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 0}}
    (tmp_path / "props.json").write_text(json.dumps(props), encoding="utf-8")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    diags = Diagnostics()
    package = read_spec(path, "spec.json", diags)
    assert package is not None and package.http is not None
    (tool,) = package.tools
    fields = {p.name: (p.required, type(p.schema).__name__) for p in tool.params.properties}
    assert fields == {"name": (True, "StringNode"), "size": (False, "IntegerNode")}
    assert package.http.operations["create"].body is not None
    assert package.http.operations["create"].body.fields == (
        ("name", "name"),
        ("size", "size"),
    )
    said = [d.render() for d in diags.items if d.severity != "note"]
    assert said == [
        "spec.json#/paths/~1items/post/parameters/0/schema/properties/$ref: warning: properties "
        "is a $ref to the whole map; followed — a map of property names to schemas (each may be "
        "a $ref)"
    ]
