"""toolbind.testing: property-based contract tests for tool specs, models and Activities.

Imports ``toolbind.runtime``, hypothesis, hypothesis-jsonschema and jsonschema (the ``testing``
extra: ``pip install 'toolbind[testing]'``); ``toolbind.compiler`` only to compile specs for
``toolbind test`` and the pytest plugin.

A tool's schemas are a contract between the LLM, the runtime and the Activity::

    from toolbind.testing import check_activity, check_roundtrip, strategies_for
    from generated.seeds import TOOLS, GreetUserCall

    check_roundtrip(TOOLS[0])                    # valid instances round-trip, both modes
    check_activity(TOOLS[3], greet_user)         # every Call accepted, every result valid

    @given(strategies_for(GreetUserCall))        # valid Calls, as JSON
    def test_greeting(call): ...

A failure raises ``ContractViolation`` (an ``AssertionError``) holding the shrunk counterexample,
the JSON pointer of the failing value and the JSON Schema keyword involved. ``max_examples``
defaults to the active hypothesis profile's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "ContractError",
    "ContractViolation",
    "check_activity",
    "check_contract",
    "check_rejects_invalid",
    "check_roundtrip",
    "contract_schema",
    "invalid_instances_for",
    "strategies_for",
]

if TYPE_CHECKING:
    from ._api import (
        ContractError,
        ContractViolation,
        check_activity,
        check_contract,
        check_rejects_invalid,
        check_roundtrip,
        contract_schema,
        invalid_instances_for,
        strategies_for,
    )


def __getattr__(name: str) -> object:
    # Imported on first use: the pytest plugin (an entry point every pytest run loads) imports
    # this package, which must work without the ``testing`` extra installed.
    if name not in __all__:
        raise AttributeError(f"module 'toolbind.testing' has no attribute {name!r}")
    try:
        from . import _api
    except ImportError as exc:
        raise ImportError(
            f"toolbind.testing needs the testing extra ({exc.name or exc} is missing): "
            "pip install 'toolbind[testing]'"
        ) from exc
    return getattr(_api, name)
