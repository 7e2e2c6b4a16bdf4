"""Runtime layer: the store of async (pending) tool calls, and its HTTP submission endpoint.

Imports the standard library (``sqlite3``, ``json``, ``asyncio``) and ``errors``; never the compiler, never a
web framework: ``pending_app`` is a raw ASGI application any ASGI server runs.

gateway-v3's async tools (``space``, ``external`` without a URL): the Activity answers *pending*,
the store records a ``PendingToolCall``; later a client or a webhook submits the result
(``PendingStore.submit`` or ``POST /runs/{run_id}/tool-results``), and the next step of the run
picks it up with ``PendingStore.collect``. Status moves one way::

    pending ──submit──▶ resolved ──collect──▶ delivered
       └──TTL passed──▶ expired

Durability and concurrency: one SQLite file in WAL mode, ``synchronous=FULL``; every change is one
``BEGIN IMMEDIATE`` transaction, so concurrent submissions for one call from several threads or
processes serialise and exactly one wins (the others get ``AlreadyResolved``). A submitted result is
on disk when ``submit`` returns: it survives the death of every process.

Delivery semantics (``collect``): the read of the resolved results and their ``delivered`` mark are
one transaction. A ``collect`` that dies before it commits marks nothing, so the results stay
resolved and the next ``collect`` returns them; a committed ``collect`` returns each result to
exactly one caller, never twice, across threads and processes. This is exactly-once *hand-over*:
a caller that is killed after ``collect`` returned but before it used the results has taken them
(they are not handed out again), yet nothing is erased — ``get`` still reads a delivered record, so a
restarted run can look it up by call id.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol, cast
from urllib.parse import unquote

from .errors import (
    AlreadyResolved,
    DuplicatePendingCall,
    InvalidPendingValue,
    PendingError,
    PendingExpired,
    UnknownPendingCall,
    UsageError,
)

PendingStatus = Literal["pending", "resolved", "expired", "delivered"]

DEFAULT_PATH = Path(".toolbind") / "pending.sqlite3"
"""Where ``PendingStore()`` keeps its file when neither ``path`` nor ``TOOLBIND_PENDING_DB`` is set."""

ENV_PATH = "TOOLBIND_PENDING_DB"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_tool_calls (
    run_id      TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    status      TEXT NOT NULL
                CHECK (status IN ('pending', 'resolved', 'expired', 'delivered')),
    result      TEXT,
    error       TEXT,
    created_at  REAL NOT NULL,
    expires_at  REAL,
    resolved_at REAL,
    PRIMARY KEY (run_id, call_id)
);
CREATE INDEX IF NOT EXISTS pending_by_status ON pending_tool_calls (run_id, status);
"""

_COLUMNS = "run_id, call_id, tool, arguments, status, result, error, created_at, expires_at"


@dataclass(frozen=True, slots=True)
class PendingToolCall:
    """One async tool call, as stored.

    Attributes:
        run_id: the run that made the call.
        call_id: the call's id (unique within the run; the key for result submission).
        tool: the tool's name.
        arguments: the call's arguments (JSON).
        status: ``pending`` → ``resolved`` (a result arrived) → ``delivered`` (collected), or
            ``expired`` (the TTL passed first).
        result: the submitted result (a JSON value), None while pending.
        error: the submitted error message, when the tool failed on the other side.
        created_at: when the call was added (seconds since the epoch).
        expires_at: when it expires unless resolved, or None for never.
    """

    run_id: str
    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    status: PendingStatus
    result: Any
    error: str | None
    created_at: float
    expires_at: float | None

    def as_dict(self) -> dict[str, Any]:
        """The record as a JSON object (what the HTTP endpoint answers)."""
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "status": self.status,
            "result": self.result,
            "error": self.error,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
        }


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidPendingValue(f"{what} must be a JSON value: {exc}") from None


def _row(row: tuple[Any, ...]) -> PendingToolCall:
    run_id, call_id, tool, arguments, status, result, error, created_at, expires_at = row
    return PendingToolCall(
        run_id=run_id,
        call_id=call_id,
        tool=tool,
        arguments=json.loads(arguments),
        status=status,
        result=None if result is None else json.loads(result),
        error=error,
        created_at=created_at,
        expires_at=expires_at,
    )


def _check_ttl(ttl: float | None, what: str) -> None:
    """Refuses a ``ttl`` argument that is no positive number of seconds (``what`` names it)."""
    if ttl is not None and (isinstance(ttl, bool) or not math.isfinite(ttl) or ttl <= 0):
        raise UsageError(f"{what} must be a positive number of seconds or None, not {ttl!r}")


class PendingStore:
    """Pending tool calls in one SQLite file, shared safely by threads and processes.

    Args:
        path: the SQLite file (created with its directory). Default: ``$TOOLBIND_PENDING_DB``,
            else ``./.toolbind/pending.sqlite3``.
        ttl: the default time to live of a new call, in seconds; None for calls that never expire.

    Raises:
        UsageError: ``ttl`` is no positive number of seconds.

    Use as a context manager, or call ``close``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, ttl: float | None = 3600.0):
        _check_ttl(ttl, "PendingStore(ttl=...)")
        if path is None:
            path = os.environ.get(ENV_PATH) or DEFAULT_PATH
        self.path = Path(path)
        self.ttl = ttl
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per store, guarded by a lock: threads of one process take turns, other
        # processes wait on SQLite's own lock (busy timeout) inside BEGIN IMMEDIATE.
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA busy_timeout = 30000")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = FULL")
        with self._transaction() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)

    # -- plumbing ------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Generator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise PendingError(f"{self.path}: the pending store is closed")
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @staticmethod
    def _select(conn: sqlite3.Connection, run_id: str, call_id: str) -> PendingToolCall | None:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM pending_tool_calls WHERE run_id = ? AND call_id = ?",
            (run_id, call_id),
        ).fetchone()
        return None if row is None else _row(row)

    # -- API -----------------------------------------------------------------------------------

    def add(
        self,
        *,
        run_id: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        ttl: float | None = None,
    ) -> PendingToolCall:
        """Record a new pending call.

        Args:
            ttl: seconds until it expires; None takes the store's ``ttl``.

        Raises:
            DuplicatePendingCall: the store already holds this run id and call id.
            InvalidPendingValue: ``arguments`` are not JSON.
            UsageError: ``ttl`` is no positive number of seconds.
        """
        _check_ttl(ttl, "add(ttl=...)")
        for name, value in (("run_id", run_id), ("call_id", call_id), ("tool", tool)):
            if not isinstance(value, str) or not value:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise InvalidPendingValue(f"{name} must be a non-empty string, not {value!r}")
        args_text = _dumps(dict(arguments), "arguments")
        now = time.time()
        life = ttl if ttl is not None else self.ttl
        expires_at = None if life is None else now + life
        with self._transaction() as conn:
            try:
                conn.execute(
                    f"INSERT INTO pending_tool_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, 'pending', NULL, NULL, ?, ?)",
                    (run_id, call_id, tool, args_text, now, expires_at),
                )
            except sqlite3.IntegrityError:
                raise DuplicatePendingCall(
                    f"run {run_id!r} already has a call {call_id!r}"
                ) from None
            record = self._select(conn, run_id, call_id)
        assert record is not None
        return record

    def submit(
        self, run_id: str, call_id: str, result: Any = None, *, error: str | None = None
    ) -> PendingToolCall:
        """Store the result (or the error) of a pending call; durable when this returns.

        Raises:
            UnknownPendingCall: no such call.
            AlreadyResolved: the call already has a result (the first submission won).
            PendingExpired: the call's TTL passed first (it is marked expired).
            InvalidPendingValue: ``result`` is not JSON, or ``error`` is not a string.
        """
        if error is not None and not isinstance(error, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidPendingValue(f"error must be a string or None, not {type(error).__name__}")
        result_text = _dumps(result, "the result")
        expired = False
        with self._transaction() as conn:
            record = self._select(conn, run_id, call_id)
            if record is None:
                raise UnknownPendingCall(f"run {run_id!r} has no pending call {call_id!r}")
            now = time.time()
            if record.status in ("resolved", "delivered"):
                raise AlreadyResolved(
                    f"call {call_id!r} of run {run_id!r} already has a result ({record.status})"
                )
            if record.status == "pending" and (
                record.expires_at is not None and record.expires_at <= now
            ):
                conn.execute(
                    "UPDATE pending_tool_calls SET status = 'expired' WHERE run_id = ? AND call_id = ?",
                    (run_id, call_id),
                )
                expired = True
            elif record.status == "expired":
                expired = True
            else:
                conn.execute(
                    "UPDATE pending_tool_calls SET status = 'resolved', result = ?, error = ?, resolved_at = ?"
                    " WHERE run_id = ? AND call_id = ? AND status = 'pending'",
                    (result_text, error, now, run_id, call_id),
                )
                record = self._select(conn, run_id, call_id)
        if expired:  # raised after the commit, so the 'expired' mark is kept
            raise PendingExpired(f"call {call_id!r} of run {run_id!r} expired before its result")
        assert record is not None
        return record

    def collect(self, run_id: str) -> list[PendingToolCall]:
        """The run's resolved results not yet delivered, now marked delivered (in resolution order).

        The read and the mark are one transaction: each result is returned by exactly one
        ``collect`` (see the module docstring for what a crash does).
        """
        with self._transaction() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM pending_tool_calls WHERE run_id = ? AND status = 'resolved'"
                " ORDER BY resolved_at, call_id",
                (run_id,),
            ).fetchall()
            if rows:
                conn.execute(
                    "UPDATE pending_tool_calls SET status = 'delivered'"
                    " WHERE run_id = ? AND status = 'resolved'",
                    (run_id,),
                )
        return [replace(_row(row), status="delivered") for row in rows]

    def get(self, run_id: str, call_id: str) -> PendingToolCall | None:
        """The call as stored now (any status), or None."""
        with self._lock:
            if self._conn is None:
                raise PendingError(f"{self.path}: the pending store is closed")
            return self._select(self._conn, run_id, call_id)

    def pending(self, run_id: str) -> list[PendingToolCall]:
        """The run's calls still waiting for a result (status ``pending``)."""
        with self._lock:
            if self._conn is None:
                raise PendingError(f"{self.path}: the pending store is closed")
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM pending_tool_calls WHERE run_id = ? AND status = 'pending'"
                " ORDER BY created_at, call_id",
                (run_id,),
            ).fetchall()
        return [_row(row) for row in rows]

    def expire(self, now: float | None = None) -> int:
        """Mark every pending call whose TTL has passed (at ``now``, default: the clock) expired.

        Returns:
            How many calls were marked.
        """
        at = time.time() if now is None else now
        with self._transaction() as conn:
            cursor = conn.execute(
                "UPDATE pending_tool_calls SET status = 'expired'"
                " WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?",
                (at,),
            )
            return cursor.rowcount

    def close(self) -> None:
        """Close the database connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> PendingStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# -- HTTP ---------------------------------------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 1024 * 1024
"""The largest request body ``pending_app`` reads (bytes), unless told otherwise."""

_BODY_KEYS = {"call_id", "callId", "result", "error"}


class _HTTPError(Exception):
    """An internal signal: becomes the pending app's HTTP error response, never leaves it (a
    plain ``Exception``, outside the public ``ToolbindError`` tree)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


async def _send_json(
    send: Send, status: int, body: Any, headers: list[tuple[bytes, bytes]]
) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                raise _HTTPError(400, "bad_request", "Content-Length is not a number") from None
            if declared > limit:
                raise _HTTPError(413, "too_large", f"the body is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _HTTPError(400, "bad_request", "the client went away")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _HTTPError(413, "too_large", f"the body is over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse_submission(raw: bytes) -> tuple[str, Any, str | None]:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _HTTPError(400, "invalid_json", f"the body is not JSON: {exc}") from None
    except RecursionError:
        raise _HTTPError(400, "invalid_json", "the body is nested too deeply") from None
    if not isinstance(body, dict):
        raise _HTTPError(422, "invalid_body", "the body must be a JSON object")
    fields = cast("dict[str, Any]", body)
    unknown = sorted(set(fields) - _BODY_KEYS)
    if unknown:
        raise _HTTPError(
            422,
            "invalid_body",
            f"unknown field(s) {', '.join(map(repr, unknown))} — expected call_id, result, error",
        )
    call_id = fields.get("call_id", fields.get("callId"))
    if not isinstance(call_id, str) or not call_id:
        raise _HTTPError(422, "invalid_body", "call_id must be a non-empty string")
    error = fields.get("error")
    if error is not None and not isinstance(error, str):
        raise _HTTPError(422, "invalid_body", "error must be a string or null")
    return call_id, fields.get("result"), error


class AsyncSubmitter(Protocol):
    """A store resolved asynchronously (``runtime.temporal.temporal_pending``: durable runs)."""

    async def submit(
        self, run_id: str, call_id: str, result: Any, *, error: str | None = None
    ) -> Any: ...


def pending_app(store: PendingStore | AsyncSubmitter, *, max_body: int = MAX_BODY) -> ASGIApp:
    """A dependency-free ASGI app serving ``POST /runs/{run_id}/tool-results``.

    The body is ``{"call_id": ..., "result": <JSON>, "error": <string or null>}`` (``callId`` is
    accepted too, as the seeds spell it). Answers (always JSON): 200 with the stored record;
    404 unknown call; 409 already resolved; 410 expired; 400 not JSON; 413 body over
    ``max_body`` bytes; 422 malformed body; 405 other methods. Errors read
    ``{"error": {"code": ..., "message": ...}}``.
    """

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path: str = scope.get("path", "")
        raw: bytes | None = scope.get("raw_path")
        # split the raw path, then decode each segment: a run id may hold an encoded '/'
        segments = raw.decode("latin-1").split("?")[0] if raw else path
        parts = [unquote(p) for p in segments.strip("/").split("/")]
        headers: list[tuple[bytes, bytes]] = []
        try:
            if len(parts) != 3 or parts[0] != "runs" or parts[2] != "tool-results" or not parts[1]:
                raise _HTTPError(404, "not_found", f"no route {path!r}")
            if scope.get("method") != "POST":
                headers.append((b"allow", b"POST"))
                raise _HTTPError(405, "method_not_allowed", "use POST")
            run_id = parts[1]
            call_id, result, error = _parse_submission(await _read_body(scope, receive, max_body))
            try:
                submit: Any = store.submit
                if inspect.iscoroutinefunction(submit):  # e.g. a durable run's (runtime.temporal)
                    record = await submit(run_id, call_id, result, error=error)
                else:
                    record = await asyncio.to_thread(submit, run_id, call_id, result, error=error)
            except UnknownPendingCall as exc:
                raise _HTTPError(404, "unknown_call", str(exc)) from None
            except AlreadyResolved as exc:
                raise _HTTPError(409, "already_resolved", str(exc)) from None
            except PendingExpired as exc:
                raise _HTTPError(410, "expired", str(exc)) from None
            except InvalidPendingValue as exc:
                raise _HTTPError(422, "invalid_body", str(exc)) from None
        except _HTTPError as exc:
            await _send_json(
                send, exc.status, {"error": {"code": exc.code, "message": exc.message}}, headers
            )
            return
        await _send_json(send, 200, record.as_dict(), headers)

    return app
