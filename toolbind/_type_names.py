"""Kernel layer: the names ``toolbind.runtime.types`` exports, without importing pydantic.

The compiler reserves these names and imports them into generated modules; reading them from
``types.__all__`` would load pydantic in every ``toolbind generate``, which never needs it.
``tests/runtime/test_surface.py`` checks that the two lists are the same.
"""

TYPES_EXPORTS: tuple[str, ...] = (
    "AllOf",
    "BoolLiteral",
    "Bounds",
    "Contains",
    "DependentRequired",
    "DependentSchemas",
    "ExactlyOne",
    "Format",
    "IfThenElse",
    "IntLiteral",
    "JsonBool",
    "JsonInt",
    "JsonNumber",
    "JsonStr",
    "KeepExtrasApart",
    "MultipleOf",
    "Not",
    "NotNull",
    "Nothing",
    "OneOf",
    "Pattern",
    "PatternProperties",
    "Plan",
    "PrefixItems",
    "PropertyNames",
    "ToolCall",
    "ToolModel",
    "ToolResponse",
    "ToolTag",
    "Unevaluated",
    "UniqueItems",
    "json_equal",
)
