"""Testing layer: an Activity against its tool's contract. Imports ``_contract``, ``_errors``, pydantic.

Static part: the Activity's signature must take the Call as its one required positional argument,
its annotation must accept the tool's Call model, and a declared return type must be the Output
model. A class *of the same name and the same JSON Schema* counts as that model: an Activity
module imports the user's own generated package, while ``toolbind test`` checks a fresh
compilation of the spec. Dynamic part: each generated Call is given to the Activity (as an
instance of the class it annotates), awaited when it returns an awaitable, and what it returns
must be valid against both the Output model and the output's JSON Schema.

Finding Activities in a module (``toolbind test --activities``) follows toolbind's zero-config
rule: the module's ``ACTIVITIES`` dict (tool name → function, what ``toolbind scaffold`` writes)
when it has one, else module attributes named exactly like a tool.
"""

from __future__ import annotations

import asyncio
import collections.abc
import concurrent.futures
import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from pydantic.errors import PydanticUserError

from toolbind.runtime import ToolBinding
from toolbind.runtime.types import json_equal

from ._contract import Contract, ContractError, binding_of, output_schema
from ._errors import ContractViolation, from_pydantic_error, from_schema_error, schema_error


def subject_of(binding: ToolBinding, fn: object) -> str:
    """``greetUser Activity greet_user`` for reports."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{binding.name} Activity {name}"


class ActivityCheck:
    """Checks calls of one Activity against one tool's contract (create once per run)."""

    def __init__(self, binding: ToolBinding, fn: Callable[..., Any]) -> None:
        self.binding = binding
        self.fn = fn
        self.subject = subject_of(binding, fn)
        self.output = Contract("Output", binding.output_model, output_schema(binding), binding.name)
        self.output_validator = self.output.validator()
        self.call_class: type[BaseModel] = binding.call_model
        self._loop: asyncio.AbstractEventLoop | None = None

    def signature_problem(self) -> ContractViolation | None:
        """What is wrong with the Activity's signature for this tool, if anything."""
        fn = self.fn
        if not callable(fn):
            return self._violation(f"is a {type(fn).__name__}, not a callable")
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None  # a builtin without a signature: only the calls can tell
        params = list(sig.parameters.values())
        positional = [
            p
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        if not positional:
            return self._violation(
                f"takes no positional argument{_sig(sig)} — an Activity is called with the Call: "
                f"(call: {self.binding.call_model.__name__})"
            )
        first = positional[0]
        extra = [
            p
            for p in params
            if p is not first
            and p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if extra:
            names = ", ".join(p.name for p in extra)
            return self._violation(
                f"requires more than the Call{_sig(sig)}: {names} must have defaults"
            )
        try:
            hints = typing.get_type_hints(_annotated_callable(fn))
        except Exception as exc:
            return self._violation(f"has annotations that cannot be resolved ({exc})")
        accepted = _accepts(hints.get(first.name, Any), self.binding.call_model)
        stale = [
            m
            for m in _members(hints.get(first.name, Any))
            if isinstance(m, type) and m.__name__ == self.binding.call_model.__name__
        ]
        if accepted is None and stale:
            theirs = binding_of(stale[0])
            other = theirs[0].source.partition("#")[0] if theirs is not None else ""
            mine = self.binding.source.partition("#")[0]
            if other and mine and other != mine:
                # the same tool name in two specs: nothing is stale, the Activity is the other's
                return self._violation(
                    f"takes a {stale[0].__name__} from {stale[0].__module__} (the tool "
                    f"{self.binding.name!r} of {other}), not this one's ({mine}), and their schemas "
                    "differ — two specs define a tool of that name: give this spec's tool its own "
                    "Activity (its own --activities module), or rename the tool in one spec"
                )
            return self._violation(
                f"takes a {stale[0].__name__} from {stale[0].__module__} whose schema differs "
                "from the spec's — regenerate that package (`toolbind generate`)"
            )
        if accepted is None:
            return self._violation(
                f"does not accept the Call: parameter `{first.name}: {_type_name(hints[first.name])}` "
                f"does not take a {self.binding.call_model.__name__}"
            )
        self.call_class = accepted
        declared = hints.get("return", Any)
        if not _returns_ok(declared, self.binding.output_model):
            return self._violation(
                f"declares the return type {_type_name(declared)}, "
                f"but the contract's Output is {self.binding.output_model.__name__}"
            )
        return None

    def check_call(self, call: Any) -> None:
        """Give the Call (JSON) to the Activity; raise ContractViolation on any breach."""
        try:
            argument = self.call_class.model_validate(call)
        except ValidationError as exc:
            # only a look-alike class can get here: the tool's own Call model round-trips calls
            raise self._violation(
                f"takes a {self.call_class.__name__} from {self.call_class.__module__}, which "
                "rejects a valid Call — is that generated package stale?",
                instance=call,
                **from_pydantic_error(exc, call),
            ) from None
        try:
            result = self.fn(argument)
            if inspect.isawaitable(result):
                result = self._await(result)
        except Exception as exc:
            raise self._violation(
                f"raised {type(exc).__name__}: {exc}{_where(exc)}", instance=call
            ) from None
        self._check_result(call, result)

    def close(self) -> None:
        """Close the event loop the check made for async Activities, if any."""
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def _check_result(self, call: Any, result: Any) -> None:
        output_model = self.binding.output_model
        if isinstance(result, BaseModel):
            if not (isinstance(result, output_model) or _same_contract(type(result), output_model)):
                raise self._violation(
                    f"returned a {type(result).__name__}, but the contract's Output is "
                    f"{output_model.__name__}",
                    instance=call,
                )
            try:
                value = result.model_dump(
                    mode="json", by_alias=True, exclude_unset=True, warnings=False
                )
            except Exception as exc:
                raise self._violation(
                    f"returned a {type(result).__name__} that cannot be serialised ({exc})",
                    instance=call,
                ) from None
        else:
            try:
                value = json.loads(json.dumps(result, allow_nan=False))
            except (TypeError, ValueError) as exc:
                raise self._violation(
                    f"returned a value that is not JSON ({type(result).__name__}: {exc})",
                    instance=call,
                ) from None
            if not json_equal(value, result):
                raise self._violation(
                    f"returned a value that is not JSON ({type(result).__name__})", instance=call
                )
        err = schema_error(self.output_validator, value)
        if err is not None:
            raise self._violation(
                "returned a value its Output schema forbids",
                instance=call,
                returned=value,
                **from_schema_error(err),
            )
        for mode in ("model_validate", "model_validate_json"):
            try:
                if mode == "model_validate":
                    output_model.model_validate(value)
                else:
                    output_model.model_validate_json(json.dumps(value))
            except ValidationError as exc:
                raise self._violation(
                    f"returned a value the Output model rejects ({mode}) though its schema "
                    "accepts it — a toolbind bug, please report it",
                    instance=call,
                    returned=value,
                    **from_pydantic_error(exc, value),
                ) from None

    def _await(self, awaitable: Awaitable[Any]) -> Any:
        async def wait() -> Any:
            return await awaitable

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(wait())
        # called from inside a running loop (an async test): run the Activity on its own thread
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, wait()).result()

    def _violation(self, problem: str, **kwargs: Any) -> ContractViolation:
        return ContractViolation(self.subject, problem, check="activity", **kwargs)


def _sig(sig: inspect.Signature) -> str:
    return f" {sig}" if len(str(sig)) < 120 else ""


def _annotated_callable(fn: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return fn
    if isinstance(fn, type):
        return fn.__init__
    return type(fn).__call__  # a callable object's own method


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _accepts(annotation: Any, model: type[BaseModel]) -> type[BaseModel] | None:
    """The class to build the Call as, when ``annotation`` accepts the Call model; else None."""
    for member in _members(annotation):
        if member is Any or member is object or isinstance(member, typing.TypeVar):
            return model
        if isinstance(member, type):
            if issubclass(model, member):
                return model
            if issubclass(member, BaseModel) and _same_contract(member, model):
                return member
    return None


def _returns_ok(annotation: Any, model: type[BaseModel]) -> bool:
    for member in _members(annotation):
        origin = typing.get_origin(member)
        if origin in (collections.abc.Awaitable, collections.abc.Coroutine):
            if _returns_ok(typing.get_args(member)[-1], model):
                return True
            continue
        if not (isinstance(member, type) and issubclass(member, BaseModel)):
            return True  # a plain type (dict, str, Any): the returned values will tell
        if issubclass(member, model) or _same_contract(member, model):
            return True
    return False


def _same_contract(a: type[BaseModel], b: type[BaseModel]) -> bool:
    """Same class, or a look-alike from another copy of the generated package."""
    if a is b:
        return True
    if a.__name__ != b.__name__:
        return False
    try:
        return a.model_json_schema(by_alias=True) == b.model_json_schema(by_alias=True)
    except (PydanticUserError, TypeError, ValueError):
        return {f.alias or n for n, f in a.model_fields.items()} == {
            f.alias or n for n, f in b.model_fields.items()
        }


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    path = Path(last.filename)
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:
        shown = path
    return f" (at {shown}:{last.lineno} in {last.name})"


def load_activities(target: str) -> types.ModuleType:
    """Import an Activity module by import path (``app.activities``) or file (``app/activities.py``).

    The current directory is put on ``sys.path`` first, as ``python -m`` does, so the module can
    import the user's generated package.

    Raises:
        ContractError: the module cannot be found or fails to import (the message says why).
    """
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    path = Path(target)
    try:
        if target.endswith(".py") or path.is_file():
            if not path.is_file():
                raise ContractError(f"{target}: no such file")
            name = f"toolbind_activities_{abs(hash(str(path.resolve())))}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ContractError(f"{target}: not a Python module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(target)
    except ContractError:
        raise
    except SyntaxError as exc:
        raise ContractError(
            f"{exc.filename}:{exc.lineno}: cannot import {target}: {exc.msg}"
        ) from None
    except Exception as exc:
        raise ContractError(
            f"cannot import {target}: {type(exc).__name__}: {exc}{_where(exc)}"
        ) from None


def activities_in(
    module: types.ModuleType, tools: Iterable[ToolBinding]
) -> tuple[dict[str, Callable[..., Any]], list[str]]:
    """Tool name → Activity found in ``module``, and the ``ACTIVITIES`` keys that name no tool."""
    tool_list = list(tools)
    registry: object = getattr(module, "ACTIVITIES", None)
    if registry is not None:
        if not isinstance(registry, Mapping):
            raise ContractError(
                f"{module.__name__}.ACTIVITIES is a {type(registry).__name__}, expected a dict "
                "tool name → Activity"
            )
        entries = cast("Mapping[object, Any]", registry)
        names = {t.name for t in tool_list} | {t.provider_name for t in tool_list}
        by_name: dict[str, Callable[..., Any]] = {}
        for t in tool_list:
            for key in (t.name, t.provider_name):
                if key in entries:
                    by_name[t.name] = entries[key]
                    break
        unknown = sorted(str(k) for k in entries if k not in names)
        return by_name, unknown
    found: dict[str, Callable[..., Any]] = {}
    for t in tool_list:
        for key in (t.name, t.provider_name):
            value = getattr(module, key, None)
            if value is not None and callable(value):
                found[t.name] = value
                break
    return found, []


__all__ = ["ActivityCheck", "activities_in", "load_activities", "subject_of"]
