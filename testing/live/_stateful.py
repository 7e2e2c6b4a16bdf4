"""Testing layer, live checks: create/read/delete sequences — "created, then read back"
(``ensure_resource_availability``) and "deleted, then gone" (``use_after_free``). Imports
hypothesis, pydantic, ``toolbind.runtime`` and this package's private modules.

A resource is a create — a POST — and a GET (read) and, where there is one, a DELETE of what
it made. Where the spec links the create's 2xx answer to them (OpenAPI ``links``: an
``operationId`` or ``operationRef`` and a parameter taking ``$response.body#/pointer`` or
``$response.header.Name``), the links say which operations and where the id comes from;
otherwise they are inferred: a POST on a collection path ``/items`` and the GET and DELETE of
``/items/{id}``, whose one parameter takes the created body's member of the same name, else its
``id``, else the last segment of the answer's ``Location``. Each sequence draws a valid create
Call, sends it, and — when it was accepted (2xx) with an id — reads the item (a 404 breaks
``ensure_resource_availability``), deletes it and, when the delete was accepted, reads it again
(a 2xx breaks ``use_after_free``). An item path with a GET and a DELETE is a resource too,
whether or not a collection's create reaches it: its id is drawn and the item put there (its
PUT, else its POST) or, without either, looked for (a 2xx read says it is there); then deleted
and read again. Each request is checked as in the single-operation probes.
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

from ._declared import at, resolved
from ._declared import document as read_again
from ._probe import Target, drive, failure, timed_out
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
        source: ``body`` (a value in the answer's JSON) or ``header``.
        key: the value's JSON pointer (``/id``) or the header's name (``Location``).
    """

    parameter: str
    source: str
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """A create and the operations that take what it created.

    Attributes:
        create: the operation that makes the item, or None where the item path has none (an
            item is looked for: read first, and one the read finds is deleted).
        read: the GET of the item.
        delete: the DELETE of the item, or None.
        field: the read/delete Call field holding the id.
        link: where the spec's links say the id comes from; None: inferred.
        at_item: the create is on the item's own path (PUT or POST ``/items/{id}``): the
            id is chosen, not read from its answer.
    """

    create: ToolBinding | None
    read: ToolBinding
    delete: ToolBinding | None
    field: str
    link: Link | None
    at_item: bool = False

    @property
    def first(self) -> ToolBinding:
        """The operation a sequence starts with."""
        return self.create or self.read


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
    """Every create with a read of what it made; ``links``: a create's tool name → a later
    operation's tool name → the link between them (``spec_links``)."""
    found: list[Resource] = []
    for create in tools:
        op = operations[create.name]
        if op.method.upper() != "POST":
            continue
        linked = (links or {}).get(create.name, {})
        by_method: dict[str, tuple[ToolBinding, str, Link | None]] = {}
        for other in tools:
            theirs = operations[other.name]
            method = theirs.method.upper()
            if method not in ("GET", "DELETE"):
                continue
            if other.name in linked:
                link = linked[other.name]
                by_method[method] = (other, link.parameter, link)
            elif not linked and (name := _item_param(op.path, theirs.path)) is not None:
                by_method.setdefault(method, (other, name, None))
        if "GET" not in by_method:
            continue
        read, name, link = by_method["GET"]
        delete = by_method.get("DELETE", (None, "", None))[0]
        field = next((p.field for p in operations[read.name].parameters if p.name == name), None)
        if field is not None:
            found.append(Resource(create=create, read=read, delete=delete, field=field, link=link))
    # (the item paths first: a create whose answer names no id still leaves its item path a
    # sequence, and a finding of a collection's sequence, which says more, is kept over theirs)
    return item_resources(tools, operations) + found


def item_resources(
    tools: Sequence[ToolBinding], operations: Mapping[str, HttpOperation]
) -> list[Resource]:
    """Every item path ``…/{id}`` with a GET and a DELETE: made there by its PUT (else its
    POST) where it has one, else looked for — "deleted, then gone" holds for an item however
    it came to be."""
    by_path: dict[str, dict[str, ToolBinding]] = {}
    for tool in tools:
        op = operations[tool.name]
        by_path.setdefault(op.path, {}).setdefault(op.method.upper(), tool)
    found: list[Resource] = []
    for path, methods in sorted(by_path.items()):
        last = _segments(path)[-1] if _segments(path) else ""
        read, delete = methods.get("GET"), methods.get("DELETE")
        if read is None or delete is None:
            continue
        if not (last.startswith("{") and last.endswith("}")):
            continue
        name = last[1:-1]
        field = next((p.field for p in operations[read.name].parameters if p.name == name), None)
        if field is None:
            continue
        create = methods.get("PUT") or methods.get("POST")
        found.append(
            Resource(create=create, read=read, delete=delete, field=field, link=None, at_item=True)
        )
    return found


def spec_links(
    tools: Sequence[ToolBinding], operations: Mapping[str, HttpOperation]
) -> dict[str, dict[str, Link]]:
    """The links of each POST's 2xx answers in the spec its tool came from (``tool.source``),
    by tool name; an operation or expression that cannot be followed is left out."""
    by_id = {op.operation_id: name for name, op in operations.items() if op.operation_id}
    by_source = {t.source.partition("#")[2]: t.name for t in tools if t.source}
    out: dict[str, dict[str, Link]] = {}
    for tool in tools:
        if operations[tool.name].method.upper() != "POST" or "#" not in tool.source:
            continue
        file, _, pointer = tool.source.partition("#")
        document = read_again(file)
        responses = at(document, pointer + "/responses")
        if not isinstance(responses, dict):
            continue
        # (a YAML spec's status keys may be numbers)
        for status, response in cast("dict[Any, Any]", responses).items():
            if not str(status).startswith("2") or not isinstance(response, dict):
                continue
            answer = cast("dict[str, Any]", response)
            for link in cast("dict[str, Any]", answer.get("links") or {}).values():
                followed = _link(resolved(document, link), by_id, by_source)
                if followed is not None:
                    out.setdefault(tool.name, {})[followed[0]] = followed[1]
    return out


def _link(
    link: Any, by_id: Mapping[str, str], by_source: Mapping[str, str]
) -> tuple[str, Link] | None:
    """(the target's tool name, the first parameter it takes from the answer), or None."""
    if not isinstance(link, dict):
        return None
    entry = cast("dict[str, Any]", link)
    target = by_id.get(str(entry.get("operationId", "")))
    if target is None and isinstance(entry.get("operationRef"), str):
        target = by_source.get(str(entry["operationRef"]).partition("#")[2])
    if target is None:
        return None
    for name, expression in cast("dict[str, Any]", entry.get("parameters") or {}).items():
        text = str(expression)
        if text.startswith("$response.body#"):
            return target, Link(parameter=name.rpartition(".")[2], source="body", key=text[15:])
        if text.startswith("$response.header."):
            return target, Link(parameter=name.rpartition(".")[2], source="header", key=text[17:])
    return None


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
    pointers = [link.key] if link is not None else [f"/{name}", "/id"]
    for pointer in pointers:
        value = at(body, pointer)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return value
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
        the request got no answer: the single-operation probes report that) or the tool timed
        out before (each Call would wait the timeout out again)."""
        outcome = self.outcomes.get(tool.name)
        if self.target.how.spent or (outcome is not None and timed_out(outcome)):
            return None
        findings, sent = self.target.send(
            tool.name, lambda: self.target.activities[tool.name](call)
        )
        if outcome is not None:
            outcome.requests += 1
        return None if findings or not sent else sent[-1]

    def item_call(self, data: st.DataObject, tool: ToolBinding, ident: Any) -> Any:
        """A valid Call of ``tool`` for the item ``ident`` (its other parameters drawn)."""
        drawn = data.draw(self.target.calls(tool), label=tool.name)
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

    def created(self, data: st.DataObject) -> tuple[Any, Any, str] | None:
        """A collection's create sent and accepted: (the id, the read Call, what was said)."""
        r = self.resource
        if r.create is None:
            return None
        try:
            create = r.create.call_model.model_validate(
                data.draw(self.target.calls(r.create), label="create")
            )
        except ValidationError:
            reject()
        made = self.send(r.create, create)
        if made is None or not 200 <= made.status < 300:
            return None
        ident = created_id(made, r.field, r.link)
        if ident is None:
            return None
        said = f"{r.create.name} answered {made.status} with id {ident!r}"
        return ident, self.item_call(data, r.read, ident), said

    def chosen(self, data: st.DataObject) -> tuple[Any, Any, str] | None:
        """An item path's id drawn; made there (PUT/POST) when it can be, else looked for
        (read): (the id, the read Call, what was said) once it is there."""
        r = self.resource
        drawn: Any = data.draw(self.target.calls(r.read), label=r.read.name)
        ident: Any = cast("dict[str, Any]", drawn).get(r.field) if isinstance(drawn, dict) else None
        if ident is None:
            reject()
        read = self.item_call(data, r.read, ident)
        if r.create is None:
            got = self.send(r.read, read)
            if got is None or not 200 <= got.status < 300:
                return None  # (nothing there: nothing to delete)
            return ident, read, f"{r.read.name} answered {got.status} for id {ident!r}"
        made = self.send(r.create, self.item_call(data, r.create, ident))
        if made is None or not 200 <= made.status < 300:
            return None
        return ident, read, f"{r.create.name} answered {made.status} for id {ident!r}"

    def run(self, data: st.DataObject) -> None:
        r = self.resource
        there = self.chosen(data) if r.at_item else self.created(data)
        if there is None:
            return
        ident, read, said = there
        checks = self.target.how.checks
        if r.create is not None:
            got = self.send(r.read, read)
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
        if resource.first.name not in outcomes or target.how.spent:
            continue
        sequence = _Sequence(target=target, resource=resource, outcomes=outcomes)
        drive(
            sequence.run,
            st.data(),
            examples=_SEQUENCES_PER_RESOURCE,
            seed=target.how.seed,
            outcome=ToolOutcome(tool=resource.first.name, method="", path=""),
        )
