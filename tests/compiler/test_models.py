"""Generated models: names, aliases, absent ≠ null, refs and recursion, every input format."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.conftest import CompileSpec
from toolbind.runtime._response import explain_errors


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def seeds_tool(
    name: str, params: dict[str, Any], required: list[str] | None = None, **meta: Any
) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"_tool": {"type": "string", "const": name}, **meta, **params},
        "required": required or [],
    }


def test_reserved_parameter_names_work(compile_spec: CompileSpec) -> None:
    names = [
        "tool",
        "output",
        "class",
        "model_config",
        "schema",
        "json",
        "activity",
        "_x",
        "self",
        "str",
        "Field",
        "None",
    ]
    params = {n: {"type": "string"} for n in names if not n.startswith("_")}
    params["user-name"] = {"type": "integer"}
    module = compile_spec([seeds_tool("odd", params, required=list(params))])
    call_cls = module.OddCall
    payload = {"_tool": "odd", **{n: f"v-{n}" for n in params if n != "user-name"}, "user-name": 3}
    call = call_cls.model_validate(payload)
    assert dump(call) == payload
    assert call.tool == "odd"  # the meta field keeps its name …
    assert call.tool_ == "v-tool"  # … the parameter gets a suffixed one
    assert call.output is None and call.output_ == "v-output"
    assert call.class_ == "v-class" and call.model_config_ == "v-model_config"
    assert call.schema_ == "v-schema" and call.json_ == "v-json" and call.str_ == "v-str"
    assert call.user_name == 3
    assert isinstance(call_cls.model_json_schema(), dict)


def test_names_a_class_lookup_finds_are_renamed_and_nothing_warns(
    compile_spec: CompileSpec,
) -> None:
    """Found on OpenSearch's spec: a property ``register`` kept its name, which ``ABCMeta``
    (pydantic's metaclass) defines, so every import of the package warned that the field shadows
    an attribute of ``BaseModel`` — and failed under ``-W error``. Every public name a class
    lookup on a generated model finds (its bases' and its metaclass's) is renamed."""
    from pydantic import RootModel

    from toolbind.compiler.naming import field_name
    from toolbind.runtime.types import ToolModel

    found = {
        n
        for base in (ToolModel, RootModel[Any])
        for n in set(dir(base)) | set(dir(type(base)))
        if not n.startswith("_") and hasattr(base, n)
    }
    assert {n for n in found if field_name(n) == n} == set()
    params = {n: {"type": "string"} for n in ("register", "mro", "copy")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (pydantic's "shadows an attribute" is a UserWarning)
        module = compile_spec([seeds_tool("shadow", params, required=list(params))])
    payload = {"_tool": "shadow", "register": "r", "mro": "m", "copy": "c"}
    call = module.ShadowCall.model_validate(payload)
    assert dump(call) == payload and call.register_ == "r" and call.mro_ == "m"


def test_absent_is_not_null(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            seeds_tool(
                "t",
                {
                    "a": {"type": "string"},
                    "b": {"type": ["string", "null"]},
                    "c": {"type": "integer", "default": 3},
                },
            )
        ]
    )
    cls = module.TCall
    assert dump(cls.model_validate({"_tool": "t"})) == {"_tool": "t"}
    with pytest.raises(ValidationError, match="valid string"):
        cls.model_validate({"_tool": "t", "a": None})
    assert dump(cls.model_validate({"_tool": "t", "b": None})) == {"_tool": "t", "b": None}
    call = cls.model_validate({"_tool": "t"})
    assert call.c == 3  # the schema's default, for Python readers …
    assert "c" not in dump(call)  # … never invented on the wire
    with pytest.raises(ValidationError):
        cls.model_validate({"_tool": "t", "_reasoningForCall": None})


def test_json_types_are_not_coerced(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            seeds_tool(
                "t",
                {
                    "i": {"type": "integer"},
                    "n": {"type": "number"},
                    "s": {"type": "string"},
                    "b": {"type": "boolean"},
                },
            )
        ]
    )
    cls = module.TCall
    ok = cls.model_validate({"_tool": "t", "i": 1.0, "n": 2, "s": "x", "b": False})
    assert ok.i == 1 and isinstance(ok.i, int)
    assert dump(cls.model_validate({"_tool": "t", "n": 10**30})) == {"_tool": "t", "n": 10**30}
    for bad in (
        {"i": "1"},
        {"i": 1.5},
        {"i": True},
        {"n": "2"},
        {"n": True},
        {"s": 1},
        {"b": 1},
        {"b": "true"},
    ):
        with pytest.raises(ValidationError):
            cls.model_validate({"_tool": "t", **bad})


def test_constraints_enforced(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            seeds_tool(
                "t",
                {
                    "name": {
                        "type": "string",
                        "minLength": 2,
                        "maxLength": 3,
                        "pattern": "^[a-z]+$",
                    },
                    "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
                    "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "uniqueItems": True,
                        "maxItems": 2,
                    },
                    "mode": {"enum": ["fast", "slow"]},
                    "flag": {"const": 1},
                },
            )
        ]
    )
    cls = module.TCall
    good = {
        "_tool": "t",
        "name": "ab",
        "count": 9,
        "ratio": 0.5,
        "tags": ["a", "b"],
        "mode": "fast",
        "flag": 1,
    }
    assert dump(cls.model_validate(good)) == good
    for key, value in (
        ("name", "a"),
        ("name", "abcd"),
        ("name", "AB"),
        ("count", 0),
        ("count", 10),
        ("ratio", 1.5),
        ("tags", ["a", "a"]),
        ("tags", ["a", "b", "c"]),
        ("mode", "medium"),
        ("flag", True),
        ("flag", 2),
    ):
        with pytest.raises(ValidationError):
            cls.model_validate({**good, key: value})


def test_additional_properties(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            seeds_tool("closed", {"a": {"type": "string"}}),
            seeds_tool("typed", {"a": {"type": "string"}}),
            seeds_tool("open", {"a": {"type": "string"}}),
        ]
    )
    del module
    spec = [
        {**seeds_tool("closed", {"a": {"type": "string"}}), "additionalProperties": False},
        {
            **seeds_tool("typed", {"a": {"type": "string"}}),
            "additionalProperties": {"type": "integer"},
        },
        seeds_tool("open", {"a": {"type": "string"}}),
    ]
    module = compile_spec(spec)
    with pytest.raises(ValidationError):
        module.ClosedCall.model_validate({"_tool": "closed", "zz": 1})
    assert dump(module.TypedCall.model_validate({"_tool": "typed", "zz": 1})) == {
        "_tool": "typed",
        "zz": 1,
    }
    with pytest.raises(ValidationError):
        module.TypedCall.model_validate({"_tool": "typed", "zz": "no"})
    kept = {"_tool": "open", "zz": {"deep": [1, None]}}
    assert dump(module.OpenCall.model_validate(kept)) == kept


def test_any_extra_key_round_trips_on_an_open_call(compile_spec: CompileSpec) -> None:
    """dump(validate(x)) == x for every extra key name, the meta fields' Python names included
    (an extra ``output`` once put ``"_output": null`` into the dump of every tool with an
    untyped Output)."""
    module = compile_spec(
        [
            seeds_tool("open", {"q": {"type": "string"}}),
            seeds_tool("typed", {"q": {"type": "string"}}, _output={"type": "string"}),
        ]
    )
    names = st.sampled_from(
        ["output", "tool", "activity", "reasoning_for_call", "model_config", "q_", "output_"]
    ) | st.text(min_size=1, max_size=12)
    value = st.none() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2)

    def with_output(v: Any) -> dict[str, Any]:
        return {"_output": v}

    nothing: dict[str, Any] = {}
    outputs: st.SearchStrategy[dict[str, Any]] = st.just(nothing) | st.builds(with_output, value)

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(names, value, max_size=4), st.sampled_from(["open", "typed"]), outputs)
    def round_trips(extra: dict[str, Any], tool: str, output: dict[str, Any]) -> None:
        reserved = {"_tool", "_activity", "_reasoningForCall", "_output", "q"}
        payload = {"_tool": tool, **{k: v for k, v in extra.items() if k not in reserved}}
        cls = module.OpenCall if tool == "open" else module.TypedCall
        if tool == "open" or isinstance(output.get("_output"), str):
            payload.update(output)  # any JSON for the untyped Output; a string for the typed
        assert dump(cls.model_validate(payload)) == payload
        assert dump(cls.model_validate_json(json.dumps(payload))) == payload
        response = module.Response[str].model_validate({"output": None, "calls": [payload]})
        assert dump(response)["calls"] == [payload]

    round_trips()


def test_a_parameter_named_tool_does_not_steal_the_union_tag(compile_spec: CompileSpec) -> None:
    """pydantic reads a discriminator by Python name before alias: ``tool`` (a parameter, or an
    extra property) was taken for ``_tool``'s value and every such call refused by the union."""
    module = compile_spec(
        [
            seeds_tool("useTool", {"tool": {"type": "string"}}, required=["tool"]),
            seeds_tool("other", {"x": {"type": "string"}}),
        ]
    )
    for payload in (
        {"_tool": "useTool", "tool": "hammer"},
        {"_tool": "other", "tool": "hammer", "x": "1"},  # an extra property
    ):
        call = module.CallAdapter.validate_python(payload)
        assert dump(call) == payload
        assert dump(module.CallAdapter.validate_json(json.dumps(payload))) == payload
        response = module.Response[str].model_validate({"output": None, "calls": [payload]})
        assert dump(response)["calls"] == [payload]
        assert module.Response[str](output=None, calls=[call]).calls == [call]  # instances too
    with pytest.raises(ValidationError, match="'nope'"):
        module.CallAdapter.validate_python({"_tool": "nope", "tool": "useTool"})


def test_one_of_checked_in_python_only_when_variants_can_overlap(
    compile_spec: CompileSpec,
) -> None:
    def role(*roles: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"role": {"enum": list(roles)}, "text": {"type": "string"}},
            "required": ["role"],
        }

    tagged = {"oneOf": [role("user"), role("tool", "system"), {"type": "string"}]}
    overlapping = {"oneOf": [role("user"), role("user", "tool")]}
    module = compile_spec(
        [seeds_tool("tagged", {"m": tagged}), seeds_tool("overlapping", {"m": overlapping})]
    )
    # variants told apart by JSON type and by "role": the union alone, no Python check
    assert "ExactlyOne" not in inspect.getsource(module.TaggedCall)
    assert "ExactlyOne" in inspect.getsource(module.OverlappingCall)
    for m in ({"role": "user"}, {"role": "system", "text": "x"}, "hi"):
        assert dump(module.TaggedCall.model_validate({"_tool": "tagged", "m": m}))["m"] == m
    for m in ({"role": "other"}, {"text": "x"}, 1, None):
        with pytest.raises(ValidationError):
            module.TaggedCall.model_validate({"_tool": "tagged", "m": m})
    # {"role": "user"} matches both variants: oneOf rejects it, so the check stays
    with pytest.raises(ValidationError):
        module.OverlappingCall.model_validate({"_tool": "overlapping", "m": {"role": "user"}})
    assert dump(
        module.OverlappingCall.model_validate({"_tool": "overlapping", "m": {"role": "tool"}})
    )["m"] == {"role": "tool"}


def _kind(tag: str, *values: str, **extra: Any) -> dict[str, Any]:
    """An object variant requiring ``tag`` with ``values`` (a const for one value)."""
    spec = {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
    return {
        "type": "object",
        "properties": {tag: spec, "n": {"type": "integer"}, **extra},
        "required": [tag],
    }


def test_classes_told_apart_by_a_required_tag_are_a_tagged_union(
    compile_spec: CompileSpec,
) -> None:
    """oneOf/anyOf of classes that each require one property with their own string values
    become pydantic tagged unions (one key lookup instead of trying each class: 3.5× faster
    on openai's chat request); they accept exactly what jsonschema accepts, in both modes."""
    defs = {"Circle": _kind("type", "circle"), "Square": _kind("type", "square", "box")}
    params: dict[str, Any] = {
        "one": {"oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]},
        "any": {"anyOf": [_kind("type", "a"), _kind("type", "b", "c"), {"type": "null"}]},
        "listed": {
            "type": "array",
            "items": {"oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]},
        },
        # not tagged: the tag is optional in one variant / needs an alias / values overlap /
        # a variant is no class / a variant is an allOf subclass
        "optional_tag": {"oneOf": [_kind("type", "a"), {**_kind("type", "b"), "required": []}]},
        "aliased": {"oneOf": [_kind("Kind", "a"), _kind("Kind", "b")]},
        "overlap": {"oneOf": [_kind("type", "a", "b"), _kind("type", "b")]},
        "mixed": {"oneOf": [_kind("type", "a"), {"type": "string"}]},
        "subclass": {
            "oneOf": [
                {"$ref": "#/$defs/Circle"},
                {"allOf": [{"$ref": "#/$defs/Circle"}, _kind("type", "circle")]},
            ]
        },
    }
    tool = {**seeds_tool("shapes", params, required=["one"]), "$defs": defs}
    module = compile_spec([tool])
    fields = module.ShapesCall.model_fields
    tagged = {n for n, f in fields.items() if "discriminator='type'" in repr(f)}
    assert tagged == {"one", "any", "listed"}, {n: repr(f) for n, f in fields.items()}
    reference: Any = jsonschema.Draft202012Validator(tool)

    tags = st.sampled_from(["circle", "square", "box", "a", "b", "c", "x", 1, None])
    obj = st.dictionaries(
        st.sampled_from(["type", "Kind", "n"]),
        tags | st.integers(-2, 2) | st.just("s"),
        max_size=3,
    )
    value = obj | st.lists(obj, max_size=3) | st.none() | st.just("s")

    @settings(max_examples=400, deadline=None, database=None, derandomize=True)
    @given(st.dictionaries(st.sampled_from(sorted(params)), value, max_size=4), obj)
    def agree(args: dict[str, Any], one: dict[str, Any]) -> None:
        call = {"_tool": "shapes", "one": one, **args}
        expected = reference.is_valid(call)
        for validate in (
            lambda: module.ShapesCall.model_validate(call),
            lambda: module.ShapesCall.model_validate_json(json.dumps(call)),
        ):
            try:
                model = validate()
            except ValidationError:
                assert not expected, call
            else:
                assert expected, call
                assert dump(model) == call

    agree()
    # Python construction from instances (the tag read from the attribute)
    square = module.ShapesCall.model_validate(
        {"_tool": "shapes", "one": {"type": "box", "n": 1}}
    ).one
    rebuilt = module.ShapesCall(one=square, listed=[square])
    assert dump(rebuilt)["listed"] == [{"type": "box", "n": 1}]
    # the model is told which keyword failed: the tag's values, or the tag missing
    for bad, keyword in (({"type": "oval"}, "const/enum"), ({"n": 1}, "required")):
        with pytest.raises(ValidationError) as info:
            module.ShapesCall.model_validate({"_tool": "shapes", "one": bad})
        assert f"(keyword: {keyword})" in explain_errors(info.value.errors(), {}), explain_errors(
            info.value.errors(), {}
        )


def test_an_allof_subclass_restating_a_property_keeps_the_parents_schema(
    compile_spec: CompileSpec,
) -> None:
    """allOf: both schemas hold. The subclass's restated field used to replace the parent's
    (openai's BetaComputerToolCallOutputResource accepted ``status: "failed"``, which its
    parent's enum forbids)."""
    defs = {
        "Base": {
            "type": "object",
            "properties": {
                "status": {"enum": ["in_progress", "completed", "incomplete"]},
                "size": {"type": "integer", "maximum": 10},
            },
        },
        "Child": {
            "allOf": [
                {"$ref": "#/$defs/Base"},
                {
                    "type": "object",
                    "properties": {
                        "status": {"enum": ["completed", "incomplete", "failed"]},
                        "size": {"type": ["integer", "null"], "minimum": 2},
                    },
                    "required": ["status"],
                },
            ]
        },
    }
    tool = {**seeds_tool("restate", {"c": {"$ref": "#/$defs/Child"}}, ["c"]), "$defs": defs}
    module = compile_spec([tool])
    reference: Any = jsonschema.Draft202012Validator(tool)
    for c in (
        {"status": "completed"},
        {"status": "incomplete", "size": 10},
        {"status": "failed"},
        {"status": "in_progress"},
        {"status": "completed", "size": 11},
        {"status": "completed", "size": 1},
        {"status": "completed", "size": None},
        {"size": 5},
    ):
        call = {"_tool": "restate", "c": c}
        expected = reference.is_valid(call)
        for as_json in (False, True):
            try:
                model = (
                    module.RestateCall.model_validate_json(json.dumps(call))
                    if as_json
                    else module.RestateCall.model_validate(call)
                )
            except ValidationError:
                assert not expected, call
            else:
                assert expected, call
                assert dump(model) == call
    assert reference.is_valid({"_tool": "restate", "c": {"status": "completed", "size": 3}})


def test_refs_and_recursion(compile_spec: CompileSpec) -> None:
    tree = {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        },
        "required": ["value"],
    }
    spec = {
        "$defs": {"Node": tree, "Color": {"enum": ["red", "green"]}},
        "tools": [
            {
                "name": "walk",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "root": {"$ref": "#/$defs/Node"},
                        "color": {"$ref": "#/$defs/Color"},
                    },
                    "required": ["root"],
                },
            }
        ],
    }
    module = compile_spec(spec)
    payload = {
        "_tool": "walk",
        "root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
        "color": "red",
    }
    call = module.CallAdapter.validate_json(json.dumps(payload))
    assert dump(call) == payload
    assert call.root.children[0].children[0].value == 3
    with pytest.raises(ValidationError):
        module.CallAdapter.validate_python(
            {**payload, "root": {"value": 1, "children": [{"value": "x"}]}}
        )
    with pytest.raises(ValidationError):
        module.CallAdapter.validate_python({**payload, "color": "blue"})


def test_relative_file_refs(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            {
                "name": "geo",
                "inputSchema": {
                    "type": "object",
                    "properties": {"at": {"$ref": "common/point.json"}},
                },
            }
        ],
        extra_files={
            "common/point.json": {
                "type": "object",
                "properties": {"lat": {"type": "number"}},
                "required": ["lat"],
            }
        },
    )
    assert dump(module.GeoCall.model_validate({"_tool": "geo", "at": {"lat": 1.5}})) == {
        "_tool": "geo",
        "at": {"lat": 1.5},
    }
    with pytest.raises(ValidationError):
        module.GeoCall.model_validate({"_tool": "geo", "at": {}})


def test_call_union_discriminates_and_response_wraps(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            seeds_tool(
                "a",
                {"x": {"type": "string"}},
                ["x"],
                _output={"type": "object", "properties": {"n": {"type": "integer"}}},
            ),
            seeds_tool("b", {"y": {"type": "integer"}}, ["y"]),
        ]
    )
    response = module.Response[str].model_validate(
        {
            "output": None,
            "calls": [{"_tool": "a", "x": "1", "_output": {"n": 2}}, {"_tool": "b", "y": 2}],
        }
    )
    first, second = response.calls
    assert isinstance(first, module.ACall) and isinstance(second, module.BCall)
    assert isinstance(first.output, module.AOutput) and first.output.n == 2
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        module.CallAdapter.validate_python({"_tool": "c"})
    with pytest.raises(ValidationError):  # output is required (nullable), calls too
        module.Response[str].model_validate({"calls": []})
    assert module.NAME_MAP == {"a": "a", "b": "b"}


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            [
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                        "strict": False,
                    },
                }
            ],
            id="openai-tools",
        ),
        pytest.param(
            [
                {
                    "name": "f",
                    "description": "d",
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                }
            ],
            id="openai-functions",
        ),
        pytest.param(
            {
                "tools": [
                    {
                        "name": "f",
                        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                    }
                ]
            },
            id="mcp-tools-list",
        ),
        pytest.param(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "tools": [
                        {
                            "name": "f",
                            "inputSchema": {
                                "type": "object",
                                "properties": {"q": {"type": "string"}},
                            },
                        }
                    ]
                },
            },
            id="mcp-jsonrpc",
        ),
        pytest.param(
            [
                {
                    "name": "f",
                    "description": "d",
                    "parameters": [
                        {"name": "q", "type": "string", "description": "query", "required": False}
                    ],
                }
            ],
            id="agentb",
        ),
        pytest.param(
            {"f": {"type": "object", "properties": {"q": {"type": "string"}}}}, id="seeds-map"
        ),
        pytest.param(
            [
                {
                    "name": "f",
                    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                    "executionType": "internal",
                }
            ],
            id="gateway",
        ),
    ],
)
def test_every_input_format(compile_spec: CompileSpec, spec: Any) -> None:
    module = compile_spec(spec)
    (tool,) = module.TOOLS
    assert tool.name == "f"
    assert dump(module.FCall.model_validate({"_tool": "f", "q": "x"})) == {"_tool": "f", "q": "x"}
    with pytest.raises(ValidationError):
        module.FCall.model_validate({"_tool": "f", "q": 1})


def test_gateway_config_is_carried(compile_spec: CompileSpec) -> None:
    execution = {
        "url": "https://api.example.com/data",
        "method": "POST",
        "headers": {"Authorization": "Bearer ${env.API_KEY}"},
        "body": {"query": "{{input.query}}"},
        "timeout": 30000,
    }
    module = compile_spec(
        [
            {
                "name": "fetch",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
                "executionType": "gateway",
                "visible": True,
                "execution": execution,
            },
            {
                "name": "confirm",
                "inputSchema": {"type": "object"},
                "executionType": "space",
                "display": {"customUI": "confirmAction"},
            },
            {"name": "quiet", "inputSchema": {"type": "object"}, "executionType": "internal"},
        ]
    )
    fetch, confirm, quiet = module.TOOLS
    assert (
        fetch.execution == execution and fetch.execution_type == "gateway" and fetch.visible is True
    )
    assert fetch.activity == "fetch"  # a declarative execution makes the tool explicit
    assert (
        confirm.execution_type == "space"
        and confirm.visible is True
        and confirm.display == {"customUI": "confirmAction"}
    )
    assert quiet.visible is False  # internal tools default to invisible


def test_bfcl_types_are_mapped(compile_spec: CompileSpec) -> None:
    fn = {
        "name": "calc.area",
        "description": "d",
        "parameters": {
            "type": "dict",
            "properties": {
                "base": {"type": "float"},
                "n": {"type": "long"},
                "opts": {"type": "HashMap"},
                "pair": {"type": "tuple", "items": {"type": "integer"}},
                "anything": {"type": "any"},
                "name": {"type": "String"},
            },
            "required": ["base"],
        },
    }
    module = compile_spec(
        json.dumps({"id": "r1", "question": [], "function": [fn]})
        + "\n"
        + json.dumps({"id": "r2", "question": [], "function": [fn]})
        + "\n"
    )
    (tool,) = module.TOOLS
    assert (
        tool.name == "calc.area"
        and tool.provider_name == "calc_area"
        and tool.toolsets == ("r1", "r2")
    )
    assert module.NAME_MAP == {"calc_area": "calc.area"}
    payload = {
        "_tool": "calc.area",
        "base": 1.5,
        "n": 2,
        "opts": {"k": [1]},
        "pair": [1, 2],
        "anything": None,
        "name": "x",
    }
    assert dump(module.CalcAreaCall.model_validate(payload)) == payload
    assert tool.parameters["properties"]["base"] == {"type": "number"}


def test_mcp_output_schema_becomes_output_model(compile_spec: CompileSpec) -> None:
    module = compile_spec(
        [
            {
                "name": "f",
                "inputSchema": {"type": "object"},
                "outputSchema": {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            }
        ]
    )
    assert module.FOutput.model_validate({"ok": True}).ok is True
    with pytest.raises(ValidationError):
        module.FOutput.model_validate({})


def test_tool_without_output_accepts_any_json(compile_spec: CompileSpec) -> None:
    module = compile_spec([{"name": "f", "inputSchema": {"type": "object"}}])
    for value in (None, 1, "x", [1, {"a": None}], {"k": "v"}):
        assert module.FOutput.model_validate(value).root == value


def test_output_that_refers_to_a_shared_enum(compile_spec: CompileSpec) -> None:
    spec = {
        "$defs": {"Mood": {"enum": ["happy", "sad"]}},
        "feel": {
            "type": "object",
            "properties": {"_tool": {"const": "feel"}, "_output": {"$ref": "#/$defs/Mood"}},
        },
    }
    module = compile_spec(spec)
    assert module.FeelOutput.model_validate("sad").root == "sad"
    with pytest.raises(ValidationError):
        module.FeelOutput.model_validate("meh")
    call = module.FeelCall.model_validate({"_tool": "feel", "_output": "happy"})
    assert call.output is not None and call.output.root == "happy"


def test_tool_named_tool_does_not_shadow_the_base_class(compile_spec: CompileSpec) -> None:
    """Found by the hostile-spec fuzzer: a tool called "tool" generated `class ToolCall(ToolCall)`."""
    module = compile_spec(
        [
            {
                "name": "tool",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
            {
                "name": "other",
                "inputSchema": {"type": "object", "properties": {"b": {"type": "integer"}}},
            },
        ]
    )
    assert module.ToolCall_.__name__ == "ToolCall_"
    assert "a" not in module.OtherCall.model_fields
    assert dump(module.CallAdapter.validate_python({"_tool": "other", "b": 1})) == {
        "_tool": "other",
        "b": 1,
    }


def test_applicator_checks_are_enforced_and_exported(compile_spec: CompileSpec) -> None:
    """``not``, ``if``/``then``/``else``, ``contains``, ``dependentRequired``/``dependentSchemas``
    and ``propertyNames`` hold on the instance beside its type (no Python type can spell them)."""
    params: dict[str, Any] = {
        "code": {"type": "string", "not": {"const": "admin"}},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "contains": {"const": "x"},
            "maxContains": 1,
        },
        "card": {
            "type": "object",
            "properties": {
                "kind": {"type": "string"},
                "number": {"type": "string"},
                "cvc": {"type": "string"},
            },
            "dependentRequired": {"number": ["cvc"]},
            "dependentSchemas": {"kind": {"required": ["number"]}},
            "propertyNames": {"type": "string", "maxLength": 6},
            "if": {"properties": {"kind": {"const": "visa"}}, "required": ["kind"]},
            "then": {"properties": {"number": {"type": "string", "pattern": "^4"}}},
        },
    }
    module = compile_spec([seeds_tool("pay", params)])
    cls = module.PayCall
    good = {
        "_tool": "pay",
        "code": "bob",
        "tags": ["x", "y"],
        "card": {"kind": "visa", "number": "41", "cvc": "1"},
    }
    assert dump(cls.model_validate(good)) == good
    assert dump(cls.model_validate_json(json.dumps(good))) == good
    for key, value in (
        ("code", "admin"),
        ("tags", ["y"]),
        ("tags", ["x", "x"]),
        ("card", {"number": "41"}),
        ("card", {"kind": "amex"}),
        ("card", {"kind": "visa", "number": "51", "cvc": "1"}),
        ("card", {"toolongname": 1}),
    ):
        with pytest.raises(ValidationError):
            cls.model_validate({**good, key: value})
    (tool,) = module.TOOLS
    exported = tool.parameters["properties"]
    assert exported["code"]["not"] == {"const": "admin"}
    assert exported["tags"]["contains"] == {"const": "x"} and exported["tags"]["maxContains"] == 1
    assert exported["card"]["dependentRequired"] == {"number": ["cvc"]}
    assert exported["card"]["then"]["properties"]["number"] == {"type": "string", "pattern": "^4"}


def test_pattern_properties_and_the_additional_properties_they_leave(
    compile_spec: CompileSpec,
) -> None:
    params: dict[str, Any] = {
        "labels": {
            "type": "object",
            "properties": {"team": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": False,
        }
    }
    module = compile_spec([seeds_tool("tag", params)])
    cls = module.TagCall
    good = {"_tool": "tag", "labels": {"team": "a", "x-size": 3}}
    assert dump(cls.model_validate(good)) == good
    for labels in ({"x-size": "big"}, {"other": 1}, {"team": 1}):
        with pytest.raises(ValidationError):
            cls.model_validate({"_tool": "tag", "labels": labels})
    (tool,) = module.TOOLS
    exported = tool.parameters["properties"]["labels"]
    assert exported["patternProperties"] == {"^x-": {"type": "integer"}}
    assert exported["additionalProperties"] is False


def test_a_value_an_allof_part_refuses_says_which_field_and_why(
    compile_spec: CompileSpec,
) -> None:
    """Found on Redocly's openapi-starter: a body that missed a field of a branch was refused
    with "value does not match allOf part 2", which names nothing — a model retrying, or a
    developer, could not tell what to fix. The message now carries the part's first errors."""
    part = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"k": {"const": "a"}, "v": {"type": "integer"}},
                "required": ["k", "v"],
            },
            {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]},
        ]
    }
    thing = {"allOf": [{"type": "object", "properties": {"n": {"type": "integer"}}}, part]}
    module = compile_spec([seeds_tool("parts", {"thing": thing}, required=["thing"])])
    ok = {"_tool": "parts", "thing": {"n": 1, "k": "a", "v": 2}}
    assert dump(module.PartsCall.model_validate(ok)) == ok
    with pytest.raises(ValidationError) as info:
        module.PartsCall.model_validate({"_tool": "parts", "thing": {"n": 1, "k": "a"}})
    message = str(info.value)
    assert "value does not match allOf part 2: " in message
    assert "v: Field required" in message, message
