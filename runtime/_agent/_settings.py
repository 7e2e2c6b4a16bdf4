"""Runtime layer: the Agent's settings — ``ModelSettings`` (how the model is asked) and
``LoopSettings`` (how the loop treats answers and Activities), frozen and checked once. Imports
``_compose``, ``_executor``, ``contract``, ``errors``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolbind._compose import AUTO_TAG, META_FIELD_CHOICES, TOOL_TAG, MetaFields

from .._executor import DEFAULT_ACTIVITY_TIMEOUT
from ..contract import META_FIELDS
from ..errors import UsageError

__all__ = ["DEFAULT_CALL_TAG", "DEFAULT_MAX_CALLS", "LoopSettings", "ModelSettings"]

DEFAULT_CALL_TAG = AUTO_TAG
"""What ``ModelSettings(call_tag=...)`` offers by default: ``_tool`` when one tool is offered,
``function`` when several (measured: bench/bfcl.py, README)."""
DEFAULT_MAX_CALLS = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """How the Agent asks the model: the client's, each request's, and the answer's shape.

    Attributes:
        timeout: seconds per LLM HTTP request (only when the Agent builds the client).
        http_retries: the OpenAI client's own retries of 5xx/connection errors (same condition).
        api_key: API key for a client built from a URL (default ``$OPENAI_API_KEY``); never
            recorded anywhere: it (and the key of a client passed in) is scrubbed from errors,
            the transcript and the log records of openai, instructor and httpx, also when a
            server echoes it back. Not shown in the settings' repr.
        request_kwargs: extra arguments for each completion request (``temperature``, ...).
        max_retries: how many times an invalid answer is sent back with its errors.
        max_calls: the most calls one answer may hold; a longer ``calls`` is an invalid answer
            (fed back like any other), so a model cannot start 10^5 Activities in one step.
        meta_fields: ``"needed"`` (default: ``_tool`` and a latent tool's ``_output``, what
            reading the answer needs) or ``"all"`` (the seeds' whole composition: also the
            ``_activity`` const, which the model can only copy, and the optional
            ``_reasoningForCall``). Answers are read and routed the same way; ``"needed"`` costs
            fewer prompt tokens (on BFCL with Qwen2.5-Coder-0.5B: bench/README.md).
        call_tag: the key each call names its tool under in what the model is sent (composed
            mode): ``"auto"`` by default — ``_tool`` (the seeds' wire format) when one tool is
            offered, ``function`` (the instructor baseline's tag) when several: on BFCL with
            SmolLM2, ``function`` stopped the model copying the first call's tool into the next
            on multi-function questions but lost on single-function ones, and ``auto`` chose the
            right functions more often than either; on Qwen2.5-Coder-0.5B, which reads the tools
            from its chat template, the three gave the same right arguments on the questions
            measured (bench/README.md) —, or a fixed key such as
            ``"_tool"`` or ``"function"``. Only the request changes: the answer is read back as
            ``_tool``; the Calls, their dumps and exports stay the seeds'. Where an offered tool
            takes a parameter of that name, ``call_tag + "_name"`` is offered instead, else
            ``_tool``.
        tools_in_prompt: also list the offered tools in a system message (``name(params) —
            description``, each parameter's description; ``describe_tools``). For servers whose
            chat template does not show the tool schema to the model (llama.cpp with many GGUF
            templates, SmolLM2's among them: only the grammar built from the schema reaches the
            model, never a description); a provider that renders tools itself needs none (on
            Qwen2.5-Coder-0.5B, whose template renders them, listing them again cost ~1.3× the
            prompt tokens and gained no right answer: bench/README.md).

    Raises:
        UsageError: a value out of range (the message names the argument).
    """

    timeout: float = 60.0
    http_retries: int = 2
    api_key: str | None = field(default=None, repr=False)
    request_kwargs: Mapping[str, Any] = field(default_factory=dict[str, Any])
    max_retries: int = 2
    max_calls: int = DEFAULT_MAX_CALLS
    meta_fields: MetaFields = "needed"
    call_tag: str = DEFAULT_CALL_TAG
    tools_in_prompt: bool = False

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise UsageError(f"ModelSettings(max_retries={self.max_retries!r}) must be >= 0")
        if self.max_calls < 1:
            raise UsageError(f"ModelSettings(max_calls={self.max_calls!r}) must be >= 1")
        if self.meta_fields not in META_FIELD_CHOICES:
            raise UsageError(
                f"ModelSettings(meta_fields={self.meta_fields!r}): expected one of "
                f"{', '.join(META_FIELD_CHOICES)}"
            )
        tag: Any = self.call_tag
        if (
            not isinstance(tag, str)
            or not tag
            or (tag in META_FIELDS and tag != TOOL_TAG)
            or tag in ("calls", "output")
        ):
            raise UsageError(
                f"ModelSettings(call_tag={tag!r}): expected a key name for the tool of each call, "
                f"such as 'function' or {TOOL_TAG!r}, or {AUTO_TAG!r} (not another meta field)"
            )
        # read-only, so the frozen settings cannot change under a running Agent
        object.__setattr__(self, "request_kwargs", MappingProxyType(dict(self.request_kwargs)))


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopSettings:
    """How the Agent's loop treats answers and Activities.

    Attributes:
        end_on_output: end a run at the first step that sets ``output``. By default a step that
            sets ``output`` but also made explicit calls (whose results the model has not seen)
            goes on: its output is provisional, the model sees the results and answers again (the
            RFC allows calls and output together; an output written before the results came back
            is a guess). The run ends on an output given with no such call, or with only latent
            calls (their results are the model's own) or pending ones (delivered to a later run).
        activity_timeout: default seconds one Activity call may take.
    """

    end_on_output: bool = False
    activity_timeout: float = DEFAULT_ACTIVITY_TIMEOUT
