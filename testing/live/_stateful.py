"""Testing layer, live checks: create/read/delete sequences — "created, then read back"
(``ensure_resource_availability``) and "deleted, then gone" (``use_after_free``). Imports
hypothesis, pydantic, ``toolbind.runtime`` and this package's private modules.

A resource is a create — a POST on a collection path ``/items`` — with an item path
``/items/{id}`` that a GET (read) and, where there is one, a DELETE take. Where the spec links the
create's answer to those operations (``links`` passed in as ``Link``s, keyed by the operation's
``operationId``) the link names the parameter and where its value comes from; otherwise it is
inferred: the item path's one parameter takes the created body's member of the same name, else
its ``id``, else the last segment of the answer's ``Location``. Each sequence draws a valid create
Call, sends it, and — when it was accepted (2xx) with an id — reads the item (a 404 breaks
``ensure_resource_availability``), deletes it and, when the delete was accepted, reads it again
(a 2xx breaks ``use_after_free``). Each request is checked as in the single-operation probes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import httpx
from hypothesis import reject
from hypothesis import strategies as st
from pydantic import ValidationError

from toolbind.runtime import ToolBinding
from toolbind.runtime.contract import HttpOperation

from .._strategies import json_instances
from ._probe import Target, drive, failure, wire_schema
from ._report import LiveReport, ToolOutcome
from ._verdicts import ENSURE_RESOURCE_AVAILABILITY, USE_AFTER_FREE, Finding
from ._wire import Exchange

# requests one sequence sends at most: create, read, delete, read again
SEQUENCE_COST = 4
_SEQUENCES_PER_RESOURCE = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """Where a parameter of a later operation takes its value from a create's answer.

    Attributes:
        parameter: the later operation's parameter (its name on the wire).
        source: ``body`` (a member of the answer's JSON object) or ``header``.
        key: the member's key (``id``) or the header's name (``Location``).
    """

    parameter: str
    source: str
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """A create and the operations that take what it created."""

    create: ToolBinding
    read: ToolBinding
    delete: ToolBinding | None
    field: str  # the read/delete Call field holding the id
    link: Link | None  # None: inferred


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s]


def _item_param(collection: str, item: str) -> str | None:
    """``id`` when ``item`` is ``collection`` + ``/{id}``, else None."""
    head, tail = _segments(collection), _segments(item)
    if len(tail) != len(head) + 1 or tail[:-1] != head:
        return None
    last = tail[-1]
    return last[1:-1] if last.startswith("{") and last.endswith("}") else None


def resources(
    tools: Sequence[ToolBinding],
    operations: Mapping[str, HttpOperation],
    links: Mapping[str, Mapping[str, Link]] | None = None,
) -> list[Resource]:
    """Every create with a read of what it made; ``links``: operationId of a create →
    operationId of a later operation → the link between them (from the spec)."""
    found: list[Resource] = []
    for create in tools:
        op = operations[create.name]
        if op.method.upper() != "POST":
            continue
        by_method: dict[str, tuple[ToolBinding, str]] = {}
        for other in tools:
            theirs = operations[other.name]
            name = _item_param(op.path, theirs.path)
            if name is not None and theirs.method.upper() in ("GET", "DELETE"):
                by_method.setdefault(theirs.method.upper(), (other, name))
        if "GET" not in by_method:
            continue
        read, name = by_method["GET"]
        delete = by_method.get("DELETE", (None, ""))[0]
        read_op = operations[read.name]
        link = (links or {}).get(op.operation_id or "", {}).get(read_op.operation_id or "")
        if link is not None:
            name = link.parameter
        field = next((p.field for p in read_op.parameters if p.name == name), None)
        if field is not None:
            found.append(Resource(create=create, read=read, delete=delete, field=field, link=link))
    return found


def created_id(answer: Exchange, name: str, link: Link | None) -> Any:
    """The id in a create's answer: where ``link`` says, else the body's ``name`` or ``id``
    member, else the last segment of ``Location``; None when there is none."""
    if link is not None and link.source == "header":
        value = answer.headers.get(link.key)
        return value.rstrip("/").rpartition("/")[2] if value else None
    try:
        body: Any = json.loads(answer.body) if answer.body else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        members = cast("dict[str, Any]", body)
        keys = [link.key] if link is not None else [name, "id"]
        for key in keys:
            if isinstance(members.get(key), (str, int)) and not isinstance(members[key], bool):
                return members[key]
    location = answer.headers.get("location")
    if link is None and location:
        return httpx.URL(location).path.rstrip("/").rpartition("/")[2] or None
    return None


@dataclass(slots=True, kw_only=True)
class _Sequence:
    target: Target
    resource: Resource
    outcomes: Mapping[str, ToolOutcome]

    def send(self, tool: ToolBinding, call: Any) -> Exchange | None:
        """Send a Call of ``tool``; its answer, or None when none came (the budget is spent or
        the request got no answer: the single-operation probes report that)."""
        if self.target.how.spent:
            return None
        findings, sent = self.target.send(lambda: self.target.activities[tool.name](call))
        outcome = self.outcomes.get(tool.name)
        if outcome is not None:
            outcome.requests += 1
        return None if findings or not sent else sent[-1]

    def item_call(self, data: st.DataObject, tool: ToolBinding, ident: Any) -> Any:
        """A valid Call of ``tool`` for the item ``ident`` (its other parameters drawn)."""
        drawn = data.draw(json_instances(wire_schema(tool)), label=tool.name)
        try:
            return tool.call_model.model_validate({**drawn, self.resource.field: ident})
        except ValidationError:
            # (a path parameter read as text: a created id may be a number)
            try:
                return tool.call_model.model_validate({**drawn, self.resource.field: str(ident)})
            except ValidationError:
                reject()

    def found(self, check: str, tool: ToolBinding, call: Any, answer: Exchange, why: str) -> None:
        outcome = self.outcomes.get(tool.name)
        if outcome is None:
            return
        pointer = tool.source or ""
        finding = Finding(check=check, message=why, pointer=pointer)
        shown = call.model_dump(mode="json", by_alias=True)
        outcome.add(failure(self.target, tool, finding, shown, [answer]))

    def run(self, data: st.DataObject) -> None:
        r = self.resource
        try:
            create = r.create.call_model.model_validate(
                data.draw(json_instances(wire_schema(r.create)), label="create")
            )
        except ValidationError:
            reject()
        made = self.send(r.create, create)
        if made is None or not 200 <= made.status < 300:
            return
        ident = created_id(made, r.field, r.link)
        if ident is None:
            return
        said = f"{r.create.name} answered {made.status} with id {ident!r}"
        read = self.item_call(data, r.read, ident)
        got = self.send(r.read, read)
        checks = self.target.how.checks
        if got is not None and got.status == 404 and ENSURE_RESOURCE_AVAILABILITY in checks:
            why = f"{said}, then {r.read.name} of that id answered 404"
            self.found(ENSURE_RESOURCE_AVAILABILITY, r.read, read, got, why)
            return
        if r.delete is None or USE_AFTER_FREE not in checks:
            return
        gone = self.send(r.delete, self.item_call(data, r.delete, ident))
        if gone is None or not 200 <= gone.status < 300:
            return
        again = self.send(r.read, read)
        if again is not None and 200 <= again.status < 300:
            why = f"{said}, {r.delete.name} answered {gone.status}, then {r.read.name} answered {again.status}"
            self.found(USE_AFTER_FREE, r.read, read, again, why)


def probe_sequences(target: Target, found: Sequence[Resource], report: LiveReport) -> None:
    """Run a few create/read/delete sequences for each resource in ``found``."""
    outcomes = {t.tool: t for t in report.tools if not t.skipped}
    for resource in found:
        if resource.create.name not in outcomes or target.how.spent:
            continue
        sequence = _Sequence(target=target, resource=resource, outcomes=outcomes)
        drive(
            sequence.run,
            st.data(),
            examples=_SEQUENCES_PER_RESOURCE,
            seed=target.how.seed,
            outcome=ToolOutcome(tool=resource.create.name, method="POST", path=""),
        )
