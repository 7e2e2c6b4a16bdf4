"""Compiler layer (frontends): JSON Schema vocabularies — which keywords a meta-schema's
``$vocabulary`` switches on (drafts 2019-09 and 2020-12). Imports nothing of toolbind's.

A schema whose ``$schema`` names a meta-schema that declares ``$vocabulary`` is read with the
keywords of the declared vocabularies only: a keyword of a standard vocabulary the meta-schema
leaves out is no keyword there (an annotation, as any unknown word). A vocabulary that toolbind
does not know and that the meta-schema marks required (``true``) cannot be honoured: the schema
is refused, as the specification asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

_2020 = "https://json-schema.org/draft/2020-12/vocab/"
_2019 = "https://json-schema.org/draft/2019-09/vocab/"

_VALIDATION = frozenset(
    {
        "type",
        "const",
        "enum",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
    }
)
_APPLICATOR_COMMON = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "properties",
        "patternProperties",
        "dependentSchemas",
        "propertyNames",
        "if",
        "then",
        "else",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)
_META_DATA = frozenset(
    {"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"}
)
_CONTENT = frozenset({"contentEncoding", "contentMediaType", "contentSchema"})

#: Every standard vocabulary's URI → the keywords it defines.
VOCABULARIES: Mapping[str, frozenset[str]] = {
    _2020 + "core": frozenset(
        {"$id", "$schema", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary"}
        | {"$comment", "$defs"}
    ),
    _2020 + "applicator": _APPLICATOR_COMMON | {"prefixItems"},
    _2020 + "unevaluated": frozenset({"unevaluatedItems", "unevaluatedProperties"}),
    _2020 + "validation": _VALIDATION,
    _2020 + "meta-data": _META_DATA,
    _2020 + "format-annotation": frozenset({"format"}),
    _2020 + "format-assertion": frozenset({"format"}),
    _2020 + "content": _CONTENT,
    _2019 + "core": frozenset(
        {"$id", "$schema", "$ref", "$anchor", "$recursiveRef", "$recursiveAnchor"}
        | {"$vocabulary", "$comment", "$defs"}
    ),
    _2019 + "applicator": _APPLICATOR_COMMON
    | {"additionalItems", "unevaluatedItems", "unevaluatedProperties"},
    _2019 + "validation": _VALIDATION,
    _2019 + "meta-data": _META_DATA,
    _2019 + "format": frozenset({"format"}),
    _2019 + "content": _CONTENT,
}


def vocabulary_of(meta: Any) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """What a meta-schema's ``$vocabulary`` leaves out: the standard keywords of the standard
    vocabularies it does not declare, and the unknown vocabularies it requires. None when it
    declares no ``$vocabulary`` (every keyword applies)."""
    declared: Any = (
        cast("dict[str, Any]", meta).get("$vocabulary") if isinstance(meta, dict) else None
    )
    if not isinstance(declared, dict):
        return None
    named = {str(k): v for k, v in cast("dict[Any, Any]", declared).items()}
    on = {uri for uri in named if uri in VOCABULARIES}
    family = _2019 if any(uri.startswith(_2019) for uri in on) else _2020
    kept = frozenset[str]().union(*(VOCABULARIES[uri] for uri in on))
    everything = frozenset[str]().union(
        *(words for uri, words in VOCABULARIES.items() if uri.startswith(family))
    )
    unknown = tuple(
        sorted(
            uri for uri, required in named.items() if uri not in VOCABULARIES and required is True
        )
    )
    return everything - kept, unknown
