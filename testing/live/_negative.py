"""Testing layer, live checks: Calls the spec forbids, sent raw, must be refused with a 4xx
(``negative_data_rejection``). Imports hypothesis, jsonschema, ``toolbind.runtime`` and this
package's private modules.

hypothesis-jsonschema cannot draw from a schema's negation, so a valid Call is drawn and mutated
(``_strategies.Mutator``: a required key dropped, a value of another type, a bound, length or
enum missed by one) until the reference validator rejects it. Only mutations a server can see
are kept: anything in a JSON body; a required parameter left out; a parameter's value none of
whose readings from the wire (the text as it is sent, or that text read as JSON: ``0.5``,
``true``) the parameter's schema accepts — ``0`` for a string parameter is sent as ``0``, a valid
string, and proves nothing. Meta fields and extra keys never go out and are never mutated. The
mutated Call goes through the client as a plain mapping, so the Call model's validation is
bypassed and the exact request the spec forbids is sent.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, cast

import jsonschema.protocols
from hypothesis import strategies as st

from toolbind.runtime import ToolBinding
from toolbind.runtime.contract import HttpOperation

from .._contract import Contract
from .._strategies import Edit, Mutator, describe
from ._probe import Target, drive, record, timed_out, wire_schema
from ._report import ToolOutcome
from ._verdicts import negative_data_rejection, not_a_server_error

_MAX_MISSES = 8  # valid Calls drawn without a mutation a server can see, before giving up


def wire_fields(op: HttpOperation) -> dict[str, str]:
    """Each Call field that goes over the wire → ``json`` (in a JSON body, sent as it is) or
    ``text`` (a parameter or a form field: sent as text)."""
    out = {p.field: "text" for p in op.parameters}
    if op.body is not None:
        kind = "json" if op.body.kind == "json" else "text"
        out.update({field: kind for field, _ in op.body.fields})
        if op.body.wrapped is not None:
            out[op.body.wrapped] = kind
    return out


def _readings(value: Any) -> list[Any]:
    """What a server may read from ``value`` sent as text: the text, and the text as JSON."""
    text = value if isinstance(value, str) else json.dumps(value)
    found: list[Any] = [text]
    with contextlib.suppress(ValueError):
        found.append(json.loads(text))
    return found


class WireMutator(Mutator):
    """Mutations a server can see (see the module docstring)."""

    def __init__(self, contract: Contract, op: HttpOperation) -> None:
        super().__init__(contract)
        self.fields = wire_fields(op)
        # a path without one of its parameters, or with one empty, is not a request the client
        # can make (it would name another resource): drawn, each was refused unsent and drawn
        # again — 96% of httpbin's invalid draws
        self.in_path = frozenset(p.field for p in op.parameters if p.location == "path")
        schema = contract.schema if isinstance(contract.schema, dict) else {}
        properties = cast("dict[str, Any]", schema.get("properties", {}))
        defs = schema.get("$defs")
        self.field_checks: dict[str, jsonschema.protocols.Validator] = {}
        for name, kind in self.fields.items():
            if kind == "text" and name in properties:
                part = {**properties[name], **({"$defs": defs} if defs else {})}
                self.field_checks[name] = Contract("Model", None, part).validator()

    def visible(self, edit: Edit) -> bool:
        """Whether the request ``edit`` makes differs, on the wire, from every valid one."""
        path, kind, arg = edit
        if not path:  # (an extra key is never sent; a dropped one is absent on the wire)
            return kind == "drop" and arg in self.fields and arg not in self.in_path
        head = str(path[0])
        if head in self.in_path and arg == "":
            return False
        where = self.fields.get(head)
        if where == "json":
            return True
        if where is None or len(path) > 1 or kind != "set":
            return False  # (a nested parameter's text depends on its style: not judged here)
        if arg is None or isinstance(arg, (list, dict)):
            return False
        check = self.field_checks.get(head)
        return check is not None and not any(check.is_valid(r) for r in _readings(arg))

    def candidates(self, instance: Any) -> list[Edit]:
        """The mutations of ``instance`` a server can see."""
        return [e for e in super().candidates(instance) if self.visible(e)]


def _pointer(tool: ToolBinding, op: HttpOperation, edit: Edit) -> str:
    """Where the spec says what the edit broke: the request body or the parameters."""
    if not tool.source:
        return ""
    path, _, arg = edit
    field = str(path[0]) if path else str(arg)
    in_body = op.body is not None and (
        field == op.body.wrapped or any(f == field for f, _ in op.body.fields)
    )
    return f"{tool.source}/{'requestBody' if in_body else 'parameters'}"


def probe_invalid(
    target: Target,
    tool: ToolBinding,
    op: HttpOperation,
    outcome: ToolOutcome,
    limit: int,
    seed: int,
) -> bool:
    """Send invalid Calls of ``tool`` until ``outcome`` has ``limit`` requests; each must be
    refused with a 4xx (a 5xx is ``not_a_server_error``). Whether a failure ended the draws."""
    how = target.how
    mutator: WireMutator | None = target.memo.get(("invalid", tool.name))
    if mutator is None:
        contract = Contract("Call", tool.call_model, wire_schema(tool), tool.name, ("_tool",))
        mutator = target.memo[("invalid", tool.name)] = WireMutator(contract, op)
    if not mutator.fields:
        return False  # (a Call with nothing on the wire has no invalid request)
    # the valid Calls this run drew and sent, mutated: drawing another (a Kinto record, a
    # nested object) cost more than all the rest of an invalid Call
    sent: list[Any] = target.memo.get(("drawn", tool.name), [])
    valid = st.sampled_from(sent[-64:]) if sent else target.calls(tool)
    known = frozenset(f.check for f in outcome.failures)
    misses = 0

    def probe(data: st.DataObject) -> None:
        nonlocal misses
        if outcome.requests >= limit or how.spent or misses >= _MAX_MISSES or timed_out(outcome):
            return
        found = mutator.mutate(data, data.draw(valid, label="valid Call"))
        if found is None:
            # (where every value on the wire is valid — a free string — no draw finds one:
            # given up after a few, not rejected until hypothesis gives up)
            misses += 1
            return
        mutated, edit = found
        findings, sent = target.send(tool.name, lambda: target.client.call(tool.name, mutated))
        outcome.requests += 1
        if not findings and sent:
            answer = sent[-1]
            findings = not_a_server_error(tool, op, answer) or negative_data_rejection(
                answer, describe(edit), _pointer(tool, op, edit)
            )
        record(target, tool, outcome, findings, mutated, sent, known)

    examples = max(1, limit - outcome.requests)
    return drive(probe, st.data(), examples=examples, seed=seed, outcome=outcome)
