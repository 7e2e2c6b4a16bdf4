"""toolbind.runtime.temporal, runtime layer (imports temporalio's client and the runtime's errors,
and this package's ``_names``): ``temporal_pending``, the store behind ``pending_app`` that resolves
the pending calls of durable runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from ._names import SUBMIT


@dataclass(frozen=True, slots=True)
class _Submitted:
    record: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return self.record


class temporal_pending:
    """What ``pending_app`` needs to resolve the pending calls of durable runs: each
    ``POST /runs/{run_id}/tool-results`` becomes the run's update (404 unknown call, 409 already
    resolved, as with the SQLite store) or, when no worker answers within ``update_timeout``
    seconds, its signal (recorded in the run's history, delivered when a worker starts).

    Args:
        address: the Temporal frontend (``127.0.0.1:7233``); connected on first use, in the
            server's event loop.
    """

    def __init__(
        self, address: str, *, namespace: str = "default", update_timeout: float = 5.0
    ) -> None:
        self.address = address
        self.namespace = namespace
        self.update_timeout = update_timeout
        self._client: Client | None = None

    async def submit(
        self, run_id: str, call_id: str, result: Any, *, error: str | None = None
    ) -> _Submitted:
        from temporalio.client import (
            WorkflowUpdateFailedError,
            WorkflowUpdateRPCTimeoutOrCancelledError,
        )
        from temporalio.service import RPCError, RPCStatusCode

        from ..errors import AlreadyResolved, UnknownPendingCall

        if self._client is None:
            self._client = await Client.connect(self.address, namespace=self.namespace)
        handle = self._client.get_workflow_handle(run_id)
        body = {"call_id": call_id, "result": result, "error": error}
        try:
            update: Any = handle.execute_update  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            record: Any = await update(
                SUBMIT, body, rpc_timeout=timedelta(seconds=self.update_timeout)
            )
            return _Submitted(cast("dict[str, Any]", record))
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            kind = cause.type if isinstance(cause, ApplicationError) else None
            message = cause.message if isinstance(cause, ApplicationError) else str(exc)
            if kind == "AlreadyResolved":
                raise AlreadyResolved(message) from None
            raise UnknownPendingCall(message) from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise UnknownPendingCall(f"no run {run_id!r}") from None
            if exc.status not in (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED):
                raise
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            pass
        # no worker answered: a signal waits in the run's history for the next one
        await handle.signal(SUBMIT, body)
        return _Submitted(
            {
                "run_id": run_id,
                "call_id": call_id,
                "status": "submitted",
                "result": result,
                "error": error,
            }
        )
