"""Compiler layer (normalise): what the JSON Schema quirk families share. Imports ``_rule`` only.

``SchemaContext`` is the read-only state a schema rule may look at (the dialect the schemas are
read in, whether the run is lenient, the draft named, …); the lowerer builds one per run.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

JSON_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "deprecated",
        "examples",
        "example",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "$defs",
        "definitions",
        "contentMediaType",
        "contentEncoding",
        "xml",
        "externalDocs",
        "discriminator",
    }
)
"""Keywords that only annotate; they never change which instances are valid."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaContext:
    """How the schemas of one run are read, for the schema rules.

    Attributes:
        dialect: ``jsonschema`` (OpenAPI 3.1 too), ``openapi30`` (and Swagger 2.0) or ``bfcl``.
        lenient: real API descriptions: a quirk with one sensible reading is read so, and said.
        draft: the JSON Schema draft named (``draft4`` … ``draft2020-12``), None when none was.
        legacy_ref: drafts 4-7, where a ``$ref`` replaces the schema object it sits in.
        drop_extensions: ``x-`` keys are not carried into the IR (OpenAPI).
        openapi31: an OpenAPI 3.1 document (JSON Schema 2020-12 without a draft named).
        reported: the places (``str(SourceLocation)``) a once-per-place warning was given at.
    """

    dialect: str = "jsonschema"
    lenient: bool = False
    draft: str | None = None
    legacy_ref: bool = False
    drop_extensions: bool = False
    openapi31: bool = False
    reported: Container[str] = frozenset()


def without(fragment: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``fragment`` without ``keys`` (a new dict: a rule never touches what it is given)."""
    return {k: v for k, v in fragment.items() if k not in keys}
