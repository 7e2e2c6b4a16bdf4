"""Testing layer: the contract properties, run with hypothesis. Imports the other testing modules.

Each property runs as one hypothesis test; a failure is shrunk to a minimal counterexample and
reported as a ``ContractViolation``. ``run_model`` checks a model both ways in one pass — every
generated valid instance round-trips, then a mutation of it that the reference validator rejects
must be rejected by the model too — so the costly valid generation is shared.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, InvalidArgument, Unsatisfiable
from jsonschema.protocols import Validator
from pydantic import ValidationError

from toolbind.contract import tool_schema
from toolbind.runtime import ToolBinding
from toolbind.runtime.types import json_equal

from ._activities import ActivityCheck
from ._contract import Contract, contracts_of, with_defs
from ._errors import ContractViolation, from_pydantic_error, from_schema_error, schema_error, show
from ._strategies import Mutator, describe, json_instances
from ._unroll import recursive_defs


@dataclass(slots=True)
class PartResult:
    """How one part of a tool's contract fared (``Call``, ``Output`` or ``Activity``)."""

    part: str
    examples: int = 0
    invalid: int = 0
    failure: ContractViolation | None = None
    skipped: str | None = None
    flaky: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def unchecked(self) -> bool:
        """Some of this part could not be checked (``skipped`` says why): never a pass.

        A tool without an output schema has nothing tool-specific to check in its Output: that
        part is complete as it is.
        """
        return self.skipped is not None and self.skipped != NO_OUTPUT_SCHEMA


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How many examples, which seed, and whether hypothesis may keep a database."""

    max_examples: int | None = None
    seed: int | None = None
    database: bool = False
    budget: float | None = None
    """Seconds one part (a model, an Activity) may take; past them it is ``not checked``
    (None: no limit). Kept where the part runs on a process's main thread on a system with
    interval timers (Linux, macOS); elsewhere there is no limit."""

    def settings(self) -> settings:
        kwargs: dict[str, Any] = {}
        if self.max_examples is not None:
            kwargs["max_examples"] = self.max_examples
        if not self.database:
            kwargs["database"] = None
        return settings(
            deadline=None,
            # not the explain phase: its notes on which parts of a counterexample matter are
            # never shown (quiet), and it cost 10 s of a failing 2-tool run's 11
            phases=_PHASES,
            suppress_health_check=_HEALTH_CHECKS,
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            print_blob=False,
            **kwargs,
        )


class _OutOfTime(BaseException):
    """A part's time budget ran out (a ``BaseException``, as ``KeyboardInterrupt``, so
    hypothesis stops instead of taking it for a failure to shrink)."""


class _Budget:
    """A part's time budget: ``check()`` in the test body raises ``_OutOfTime`` once it is
    spent, and a timer signal raises it wherever the part is (building a strategy from a large
    schema, drawing an instance), so a part never runs on for long past it."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds if seconds else math.inf

    @property
    def spent(self) -> bool:
        return time.monotonic() >= self.ends

    def check(self) -> None:
        if self.spent:
            raise _OutOfTime


@contextlib.contextmanager
def _within(budget: _Budget) -> Generator[None]:
    """Where the system has interval timers and this is a process's main thread (the CLI, its
    forked workers), a timer signal raises ``_OutOfTime`` in the block when ``budget`` is
    spent (the caller catches it around the block: it may come as the block ends)."""
    seconds = budget.seconds
    timer = getattr(signal, "setitimer", None)
    if not seconds or timer is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise _OutOfTime

    unraisable = sys.unraisablehook

    def quiet(info: Any) -> None:
        # the signal landing in a weakref callback or a ``__del__``: Python drops the exception
        # there and prints it; the next example's ``check()`` stops the part instead
        if not isinstance(info.exc_value, _OutOfTime):
            unraisable(info)

    previous = signal.signal(signal.SIGALRM, expired)
    sys.unraisablehook = quiet
    timer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        timer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = unraisable


def _timed_out(exc: BaseException, budget: _Budget) -> bool:
    """Whether ``exc`` ended a part because its budget was spent: ``_OutOfTime`` itself, or what
    hypothesis made of it when it landed inside hypothesis (a replay that stopped short reads
    to it as a flaky strategy) — anything but an interrupt, once the budget is spent."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return False
    return isinstance(exc, _OutOfTime) or budget.spent


def _out_of_time(how: RunSettings, schema: Mapping[str, Any] | bool, checked: int) -> str:
    size = len(json.dumps(schema, default=str))
    return (
        f"not finished within {how.budget:g} s ({checked} instance(s) checked; the schema is "
        f"{size:,} characters of JSON); --timeout gives a part longer"
    )


_PHASES = tuple(p for p in Phase if p is not Phase.explain)
_NO_INSTANCE = "no instance satisfies the schema"
NO_OUTPUT_SCHEMA = "the spec declares no output schema (the Output model is any JSON value)"
# big or slow-to-generate instances are the norm for real tool schemas, not a test smell
_HEALTH_CHECKS = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]


def _run(
    body: Callable[[st.DataObject], None],
    how: RunSettings,
    result: PartResult,
    schema: Mapping[str, Any] | bool,
) -> None:
    test = given(st.data())(how.settings()(body))
    if how.seed is not None:
        test = hypothesis_seed(how.seed)(test)
    try:
        test()
    except ContractViolation as exc:
        result.failure = exc
    except FlakyFailure as exc:
        found = _first_violation(exc)
        if found is None:
            raise
        result.failure, result.flaky = found, True
    except Unsatisfiable:
        result.skipped = _no_instance(schema)
    except (InvalidArgument, RecursionError) as exc:
        result.skipped = _cannot_generate(exc, schema)
    except Exception as exc:
        if type(exc).__name__ != "HypothesisRefResolutionError":
            raise
        result.skipped = _cannot_generate(exc, schema)


def _no_instance(schema: Mapping[str, Any] | bool) -> str:
    recursive = recursive_defs(schema)
    if recursive:
        return (
            f"no instance found: the schema is recursive ({_names(recursive)}), with none "
            "within a few levels of nesting"
        )
    return _NO_INSTANCE


MAX_REASON = 200
"""The longest reason a part was not checked (hypothesis-jsonschema's errors embed the schema)."""


def _cannot_generate(exc: BaseException, schema: Mapping[str, Any] | bool) -> str:
    """One short line: why no instance of ``schema`` could be generated."""
    recursive = recursive_defs(schema)
    if recursive and (
        isinstance(exc, RecursionError) or type(exc).__name__ == "HypothesisRefResolutionError"
    ):
        return f"cannot generate instances: the schema is recursive ({_names(recursive)})"
    if isinstance(exc, RecursionError):
        return "cannot generate instances: the schema nests too deeply (RecursionError)"
    return f"cannot generate instances: {brief(str(exc), MAX_REASON - 28)}"


def brief(text: str, limit: int = MAX_REASON) -> str:
    """The first line of ``text`` without an embedded ``schema=...``, at most ``limit`` chars."""
    lines = text.strip().splitlines()
    line = _EMBEDDED_SCHEMA.sub("", lines[0] if lines else "").strip() or "no reason given"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


_EMBEDDED_SCHEMA = re.compile(r"\s*\b(?:in )?schema=.*$")


def _names(defs: list[str], most: int = 3) -> str:
    shown = ", ".join(defs[:most])
    return shown if len(defs) <= most else f"{shown} and {len(defs) - most} more"


def _first_violation(exc: BaseException) -> ContractViolation | None:
    if isinstance(exc, ContractViolation):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _first_violation(inner)
        if found is not None:
            return found
    return None


def accepts_everything(schema: object) -> bool:
    """``true``, ``{}`` or a schema of annotations only: no instance is invalid."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    annotations = {"title", "description", "$comment", "examples", "default", "$defs", "$schema"}
    return set(schema) <= annotations  # pyright: ignore[reportUnknownArgumentType]


def round_trip(contract: Contract, instance: Any) -> None:
    """A valid instance validates in both modes and dumps back to itself."""
    model = contract.model
    assert model is not None
    for mode in ("model_validate", "model_validate_json"):
        try:
            if mode == "model_validate":
                parsed = model.model_validate(instance)
            else:
                parsed = model.model_validate_json(json.dumps(instance))
        except ValidationError as exc:
            raise ContractViolation(
                contract.label,
                f"the model rejects an instance its schema accepts ({mode})",
                instance=instance,
                check="round-trip",
                **from_pydantic_error(exc, instance),
            ) from None
        except Exception as exc:
            raise ContractViolation(
                contract.label,
                f"the model raised {type(exc).__name__} instead of validating ({mode}): {exc}",
                instance=instance,
                check="round-trip",
            ) from None
        dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if not json_equal(dumped, instance):
            raise ContractViolation(
                contract.label,
                f"the dump differs from the instance it was validated from ({mode})",
                instance=instance,
                check="round-trip",
                pointer=_difference(instance, dumped),
                detail=f"dumped: {show(dumped)}",
            )


def rejected(
    contract: Contract, validator: Validator, instance: Any, how: str | None = None
) -> None:
    """An instance the reference validator rejects is rejected by the model in both modes."""
    model = contract.model
    assert model is not None
    err = schema_error(validator, instance)
    assert err is not None, "only invalid instances are checked"
    where = from_schema_error(err)
    if how:
        where["detail"] = f"{where['detail']} (mutation: {how})"
    for mode in ("model_validate", "model_validate_json"):
        try:
            if mode == "model_validate":
                model.model_validate(instance)
            else:
                model.model_validate_json(json.dumps(instance))
        except ValidationError:
            continue
        except Exception as exc:
            raise ContractViolation(
                contract.label,
                f"the model raised {type(exc).__name__} instead of a ValidationError ({mode}): {exc}",
                instance=instance,
                check="rejects invalid",
            ) from None
        raise ContractViolation(
            contract.label,
            f"the model accepts an instance its schema rejects ({mode})",
            instance=instance,
            check="rejects invalid",
            **where,
        )


def run_model(
    contract: Contract, how: RunSettings, *, valid: bool = True, invalid: bool = True
) -> PartResult:
    """Check a model against its schema: valid instances round-trip, mutated ones are rejected."""
    result = PartResult(contract.side)
    counts = [0, 0]  # valid, invalid instances checked before the first failure
    budget = _Budget(how.budget)
    try:
        with _within(budget):
            _run_model(contract, how, result, counts, valid, invalid, budget)
    except BaseException as exc:
        if not _timed_out(exc, budget):
            raise
        result.skipped = _out_of_time(how, contract.schema, counts[0] + counts[1])
    if counts[0] and result.skipped is not None and result.skipped == _no_instance(contract.schema):
        result.skipped = "no mutation of a valid instance is invalid"
    result.examples = counts[0] if valid else 0
    result.invalid = counts[1]
    return result


def _run_model(
    contract: Contract,
    how: RunSettings,
    result: PartResult,
    counts: list[int],
    valid: bool,
    invalid: bool,
    budget: _Budget,
) -> None:
    check_invalid = invalid and not accepts_everything(contract.schema)
    mutator = Mutator(contract) if check_invalid else None
    strategy = json_instances(contract.schema)
    failed = [False]

    def body(data: st.DataObject) -> None:
        budget.check()
        instance = data.draw(strategy, label="instance")
        try:
            if valid:
                round_trip(contract, instance)
            counts[0] += not failed[0]
            if mutator is not None:
                found = mutator.mutate(data, instance)
                # an example counts once it checked both ways (so ≥ max_examples of each)
                assume(found is not None)
                assert found is not None
                bad, edit = found
                rejected(contract, mutator.validator, bad, describe(edit))
                counts[1] += not failed[0]
        except ContractViolation:
            failed[0] = True
            raise

    _run(body, how, result, contract.schema)


def run_tool_models(binding: ToolBinding, how: RunSettings) -> tuple[PartResult, PartResult]:
    """``run_model`` for a tool's Call and Output models.

    An Output model without an output schema is ``RootModel[JsonValue]``, the same for every
    such tool: there is nothing tool-specific to check, so that part is skipped.
    """
    call, output = contracts_of(binding)
    if binding.output_schema is None:
        return run_model(call, how), PartResult("Output", skipped=NO_OUTPUT_SCHEMA)
    return run_model(call, how), run_model(output, how)


def activity_contract(binding: ToolBinding) -> Contract:
    """The Calls an Activity registered for the tool receives (``_activity`` resolved to it)."""
    schema = with_defs(tool_schema(binding, (binding.name,)), binding)
    # An explicit call carries no ``_output`` (the Activity makes it); an open tool's schema would
    # otherwise let one in as an extra property, which the Call model types as the Output.
    schema["properties"] = {**schema["properties"], "_output": False}
    return Contract("Call", binding.call_model, schema, binding.name)


def run_activity(binding: ToolBinding, fn: Callable[..., Any], how: RunSettings) -> PartResult:
    """Check an Activity: its signature takes the Call, and what it returns fits the Output."""
    result = PartResult("Activity")
    check = ActivityCheck(binding, fn)
    problem = check.signature_problem()
    if problem is not None:
        result.failure = problem
        return result
    schema = activity_contract(binding).schema
    count = [0]
    failed = [False]

    def body(data: st.DataObject) -> None:
        budget.check()
        call = data.draw(strategy, label="call")
        try:
            check.check_call(call)
        except ContractViolation:
            failed[0] = True
            raise
        count[0] += not failed[0]

    budget = _Budget(how.budget)
    try:
        with _within(budget):
            strategy = json_instances(schema)
            _run(body, how, result, schema)
    except BaseException as exc:
        if not _timed_out(exc, budget):
            raise
        result.skipped = _out_of_time(how, schema, count[0])
    finally:
        check.close()
    result.examples = count[0]
    return result


def _difference(a: Any, b: Any, path: str = "") -> str:
    """The pointer of the first place two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted({*a, *b}):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            step = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"  # pyright: ignore[reportUnknownArgumentType]
            if key not in a or key not in b:
                return step
            if not json_equal(a[key], b[key]):
                return _difference(a[key], b[key], step)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):  # pyright: ignore[reportUnknownArgumentType]
        for i, (x, y) in enumerate(zip(a, b, strict=True)):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            if not json_equal(x, y):
                return _difference(x, y, f"{path}/{i}")
    return path or "/"
