"""Compiler layer: the only place that makes names. Imports the standard library and
``toolbind.runtime.contract`` (the runtime type names a generated module imports, reserved here).

Every Python identifier and provider-safe tool name the compiler emits comes from here, so the
rules live in one spot:

* identifiers are ASCII (NFKD-folded, everything else replaced by ``_``), never keywords,
  soft keywords, builtins, dunders or pydantic ``BaseModel`` attributes;
* field names are the JSON names when those are usable identifiers starting with a lower-case
  letter (else ``snake_case``), and class names ``PascalCase``, so a field can never shadow a
  class or an imported name inside a generated class body;
* ``Scope`` hands out names first-come, first-served and resolves collisions with a
  deterministic numeric suffix, recording every name that had to change;
* provider tool names match ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI, Anthropic, Gemini).
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import keyword
import re
import sys
import unicodedata
from dataclasses import dataclass, field

from toolbind.contract import TYPES_EXPORTS

# Attributes of pydantic.BaseModel (v2) and RootModel: a field with one of these names would
# shadow a method the runtime relies on.
_BASEMODEL_ATTRS = frozenset(
    [
        "construct",
        "copy",
        "dict",
        "fields",
        "from_orm",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
        "model_computed_fields",
        "model_config",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_extra",
        "model_fields",
        "model_fields_set",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
        # the metaclass's (``ABCMeta.register``, ``type.mro``): a class attribute lookup finds
        # them too, and pydantic warns that a field so named shadows them (OpenSearch's
        # ``ModelProfile.register``: every import warned, and failed under ``-W error``)
        "mro",
        "register",
    ]
)

RESERVED_IDENTIFIERS = frozenset(
    set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | _BASEMODEL_ATTRS
)

# Names the generated modules define or import at module level.
_GENERATED_MODULE_NAMES = frozenset(
    {
        "Annotated",
        "Any",
        "Awaitable",
        "BaseModel",
        "Call",
        "CallAdapter",
        "ConfigDict",
        "Field",
        "Generic",
        "JsonValue",
        "Literal",
        "Protocol",
        "Response",
        "RootModel",
        "TypeAdapter",
        "TypeAliasType",
        "TypeVar",
        "OutputT",
        "TOOLS",
        "TOOLSETS",
        "TOOLSET_CALLS",
        "NAME_MAP",
        "ACTIVITY_PROTOCOLS",
        "Union",
        "Callable",
        "ToolBinding",
        # OpenAPI packages (http.py)
        "API",
        "OPERATIONS",
        "HttpActivities",
    }
)
"""Names generated modules define or import; a class named after a spec never takes one.

Every public name of ``toolbind.runtime.types`` (the building blocks generated code imports)
is reserved too, through ``RESERVED_CLASS_NAMES`` below."""

RESERVED_CLASS_NAMES = _GENERATED_MODULE_NAMES | frozenset(TYPES_EXPORTS)

_PROVIDER_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
# camelCase boundaries for module names: before an upper-case letter that follows a lower-case
# letter or a digit, and inside an acronym before its last letter (``HTTPServer``); never at digits
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def ascii_words(name: str) -> list[str]:
    """Split ``name`` into ASCII alphanumeric words (camelCase, snake_case, kebab-case, …)."""
    return list(_ascii_words(name))


@functools.lru_cache(maxsize=8192)
def _ascii_words(name: str) -> tuple[str, ...]:
    # (cached: a large spec names the same properties and schemas thousands of times)
    folded = (
        name
        if name.isascii()  # NFKD leaves ASCII as it is
        else unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    )
    words: list[str] = []
    for chunk in _SEPARATORS.split(folded):
        if not chunk:
            continue
        # split camelCase and ABCWord boundaries
        words.extend(_WORDS.findall(chunk))
    return tuple(words)


def snake_case(name: str) -> str:
    """``userName`` → ``user_name``; empty when ``name`` has no ASCII letters or digits."""
    return "_".join(w.lower() for w in ascii_words(name))


def pascal_case(name: str) -> str:
    """``weather-check`` → ``WeatherCheck``; keeps inner capitals of acronyms as words."""
    return "".join(w[:1].upper() + w[1:] for w in ascii_words(name))


def _safe_identifier(candidate: str, fallback: str) -> str:
    if not candidate:
        candidate = fallback
    if candidate[0].isdigit():
        candidate = f"{fallback}_{candidate}" if fallback.islower() else f"{fallback}{candidate}"
    if candidate in RESERVED_IDENTIFIERS or candidate.startswith("model_"):
        candidate += "_"
    return candidate


# What a field name must avoid inside a generated class body: keywords, BaseModel attributes,
# and the builtins the generated annotations and defaults name. (Soft keywords are valid names,
# and ``keyword.softkwlist`` differs between Python versions: output must not.)
_FIELD_RESERVED = frozenset(
    set(keyword.kwlist)
    | _BASEMODEL_ATTRS
    | {"list", "dict", "str", "int", "float", "bool", "tuple", "bytes", "object"}
    | set(TYPES_EXPORTS)
)


def function_name(name: str) -> str:
    """A ``snake_case`` function or method name for a spec name (before collision handling)."""
    return _safe_identifier(snake_case(name), "field")


def field_name(name: str) -> str:
    """The Python field name for a JSON property name (before collision handling): the JSON name
    itself when it is a usable identifier (a name only changes when it has to), else a
    ``snake_case`` identifier made safe."""
    # Lower-case first letter: classes and imported names are capitalised, so a kept name can't
    # shadow one of them in a class body.
    if (
        name.isascii()
        and name.isidentifier()
        and name[0].islower()
        and name not in _FIELD_RESERVED
        and not name.startswith("model_")
    ):
        return name
    return function_name(name)


def class_name(name: str) -> str:
    """The Python class name for a spec name (before collision handling)."""
    candidate = _safe_identifier(pascal_case(name), "Model")
    if candidate in RESERVED_CLASS_NAMES:
        candidate += "_"
    return candidate


def toolset_union_name(toolset: str) -> str:
    """The name of a toolset's (OpenAPI tag's) Call union: ``pets`` → ``PetsToolsetCall``
    (before collision handling). The suffix keeps it clear of reserved and tool class names."""
    stem = pascal_case(toolset)
    if not stem or stem[0].isdigit():
        stem = "Tag" + stem
    return stem + "ToolsetCall"


def module_name(name: str) -> str:
    """A package/module name for a file stem that can't shadow the standard library or a keyword.

    Words are split at separators and camelCase, never at digits: ``petstore_v3`` stays
    ``petstore_v3`` and ``2fa`` becomes ``spec_2fa`` (a name can't start with a digit).
    """
    folded = (
        name
        if name.isascii()
        else (unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii"))
    )
    words = [
        w.lower() for chunk in _SEPARATORS.split(folded) for w in _CAMEL_BOUNDARY.split(chunk) if w
    ]
    candidate = _safe_identifier("_".join(words), "spec")
    if candidate in sys.stdlib_module_names or candidate in {"toolbind", "pydantic", "generated"}:
        candidate += "_tools"
    return candidate


def module_name_reason(name: str) -> str | None:
    """Why ``module_name(name)`` is not ``name`` written as a Python name, or ``None``.

    Said to the user when a package is named: lower case and ``_`` for separators are the rule,
    and the rest is a rename they should hear of."""
    chosen = module_name(name)
    plain = "_".join(w for w in _SEPARATORS.split(name.lower()) if w)
    if chosen.endswith("_tools") and chosen.removesuffix("_tools") == plain:
        what = "a standard-library module" if plain in sys.stdlib_module_names else "taken"
        return f"{plain!r} is {what}"
    if plain[:1].isdigit():
        return "a Python name can't start with a digit"
    if not plain:
        return "the name has no ASCII letters or digits"
    return None


def provider_tool_name(name: str) -> str:
    """A tool name every major provider accepts: ``^[a-zA-Z0-9_-]{1,64}$``.

    Names that already qualify are kept as they are; others have every other character replaced
    by ``_``; names longer than 64 characters keep a 55-character prefix and an 8-character hash
    of the whole name, so two long names never meet.
    """
    if _PROVIDER_NAME.fullmatch(name):  # not `match`: its `$` also matches before a final "\n"
        return name
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    candidate = re.sub(r"[^a-zA-Z0-9_-]", "_", folded).strip("_") or "tool"
    if len(candidate) > 64:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        candidate = f"{candidate[:55]}_{digest}"
    return candidate


def has_identifier_chars(name: str) -> bool:
    """Whether ``name`` contains at least one ASCII letter or digit to build a name from."""
    return bool(ascii_words(name))


@dataclass
class Rename:
    """A name that could not be used as it was, and why."""

    original: str
    chosen: str
    reason: str


@dataclass
class Scope:
    """A namespace that hands out unique names deterministically (first come, first served)."""

    taken: set[str] = field(default_factory=lambda: set())
    renames: list[Rename] = field(default_factory=lambda: [])

    def claim(self, wanted: str, *, original: str | None = None) -> str:
        """``wanted`` if free, else ``wanted_``, ``wanted_2``, ``wanted_3``, … (first free)."""
        chosen = wanted
        if chosen in self.taken:
            chosen = wanted if wanted.endswith("_") else wanted + "_"
            n = 2
            while chosen in self.taken:
                chosen = f"{wanted.rstrip('_')}_{n}"
                n += 1
        self.taken.add(chosen)
        if chosen != wanted:
            self.renames.append(
                Rename(original=original or wanted, chosen=chosen, reason=f"{wanted!r} was taken")
            )
        return chosen


def operation_tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The tool name of an OpenAPI operation, before collision handling (provider-safe).

    The ``operationId`` when there is one — without the route and method FastAPI appends to a
    function's name (``navigate_post_navigate_post`` → ``navigate_post``) — else the method and
    the path's words (``GET /pets/{petId}`` → ``get_pets_by_petId``).
    """
    method = method.lower()
    if operation_id and has_identifier_chars(operation_id):
        fastapi_suffix = re.sub(r"\W", "_", path) + "_" + method
        if operation_id.endswith(fastapi_suffix):
            stem = operation_id[: -len(fastapi_suffix)]
            if re.fullmatch(r"[A-Za-z_]\w*", stem):
                return provider_tool_name(stem)
        return provider_tool_name(operation_id)
    words = [method]
    for segment in path.split("/"):
        param = re.fullmatch(r"\{([^{}]+)\}", segment)
        if param:
            words.extend(["by", *ascii_words(param.group(1))])
        else:
            words.extend(w.lower() for w in ascii_words(segment))
    return provider_tool_name("_".join(words))


@dataclass
class ToolNames:
    """Hands out tool names that stay distinct as provider names and as Python class names."""

    taken: set[str] = field(default_factory=lambda: set())
    renames: list[Rename] = field(default_factory=lambda: [])

    def claim(self, wanted: str) -> str:
        """``wanted`` (provider-safe) if neither it nor its class name is taken, else ``wanted_2``…"""
        chosen = wanted
        n = 2
        while chosen.lower() in self.taken or class_name(chosen).lower() in self.taken:
            suffix = f"_{n}"
            chosen = wanted[: 64 - len(suffix)] + suffix
            n += 1
        self.taken.update({chosen.lower(), class_name(chosen).lower()})
        if chosen != wanted:
            self.renames.append(
                Rename(original=wanted, chosen=chosen, reason=f"{wanted!r} was taken")
            )
        return chosen
