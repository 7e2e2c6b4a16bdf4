"""The pending tool-call store: exactly-once hand-over, TTL, refusals, the HTTP endpoint, crashes.

Processes are real (``sys.executable`` subprocesses sharing one SQLite file), the endpoint is served
by uvicorn on 127.0.0.1 and called with httpx, and the crash tests use SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._servers import serve_asgi
from toolbind.runtime._pending import InvalidPendingValue
from toolbind.runtime.errors import AlreadyResolved, PendingExpired, UnknownPendingCall, UsageError
from toolbind.runtime.pending import PendingStore, PendingToolCall, pending_app

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "pending.sqlite3"


@pytest.fixture
def store(db: Path) -> Iterator[PendingStore]:
    with PendingStore(db) as s:
        yield s


def run_python(code: str, *args: str, timeout: float = 60) -> str:
    """Run ``code`` in a fresh interpreter; its stdout (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


COLLECT = """
import json, sys
from toolbind.runtime.pending import PendingStore
with PendingStore(sys.argv[1]) as s:
    print(json.dumps([r.as_dict() for r in s.collect(sys.argv[2])]))
"""


def collect_in_new_process(db: Path, run_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = json.loads(run_python(COLLECT, str(db), run_id))
    return out


# -- the Python API -----------------------------------------------------------------------------


def test_add_submit_collect_delivers_each_result_once(store: PendingStore) -> None:
    added = store.add(run_id="r1", call_id="c1", tool="sendEmail", arguments={"to": "a@b.c"})
    assert added.status == "pending"
    assert added.expires_at is not None and added.expires_at > added.created_at
    store.add(run_id="r1", call_id="c2", tool="sendEmail", arguments={"to": "d@e.f"})
    store.add(run_id="r2", call_id="c1", tool="confirm", arguments={})
    assert store.collect("r1") == []  # nothing resolved yet

    resolved = store.submit("r1", "c1", {"sent": True})
    assert (resolved.status, resolved.result, resolved.error) == ("resolved", {"sent": True}, None)
    store.submit("r2", "c1", None, error="the user closed the dialog")

    first = store.collect("r1")
    assert [(r.call_id, r.status, r.result) for r in first] == [("c1", "delivered", {"sent": True})]
    assert store.collect("r1") == []
    waiting = store.get("r1", "c2")
    assert waiting is not None
    assert waiting == PendingToolCall(
        run_id="r1",
        call_id="c2",
        tool="sendEmail",
        arguments={"to": "d@e.f"},
        status="pending",
        result=None,
        error=None,
        created_at=waiting.created_at,
        expires_at=waiting.expires_at,
    )
    (other,) = store.collect("r2")
    assert (other.result, other.error) == (None, "the user closed the dialog")
    delivered = store.get("r1", "c1")
    assert delivered is not None and delivered.status == "delivered"  # kept for look-up


def test_refusals_are_typed(store: PendingStore) -> None:
    store.add(run_id="r", call_id="c", tool="t", arguments={"x": 1})
    with pytest.raises(UnknownPendingCall, match="'nope'"):
        store.submit("r", "nope", 1)
    with pytest.raises(UnknownPendingCall):
        store.submit("other-run", "c", 1)
    store.submit("r", "c", [1, 2])
    with pytest.raises(AlreadyResolved):
        store.submit("r", "c", [3])
    store.collect("r")
    with pytest.raises(AlreadyResolved, match="delivered"):
        store.submit("r", "c", [3])
    record = store.get("r", "c")
    assert record is not None and record.result == [1, 2]  # the first submission stays


def test_results_and_arguments_must_be_json(store: PendingStore) -> None:
    store.add(run_id="r", call_id="c", tool="t", arguments={})
    with pytest.raises(InvalidPendingValue, match="JSON"):
        store.submit("r", "c", {1, 2})
    with pytest.raises(InvalidPendingValue, match="JSON"):
        store.submit("r", "c", float("nan"))
    with pytest.raises(InvalidPendingValue):
        store.add(run_id="r", call_id="d", tool="t", arguments={"when": object()})
    unchanged = store.get("r", "c")
    assert unchanged is not None and unchanged.status == "pending"
    assert store.get("r", "d") is None


def test_duplicate_add_is_refused(store: PendingStore) -> None:
    from toolbind.runtime._pending import DuplicatePendingCall

    store.add(run_id="r", call_id="c", tool="t", arguments={})
    with pytest.raises(DuplicatePendingCall):
        store.add(run_id="r", call_id="c", tool="t", arguments={})


def test_ttl_expiry(store: PendingStore, db: Path) -> None:
    a = store.add(run_id="r", call_id="a", tool="t", arguments={}, ttl=10)
    store.add(run_id="r", call_id="b", tool="t", arguments={}, ttl=1000)
    with PendingStore(db, ttl=None) as forever:
        never = forever.add(run_id="r", call_id="n", tool="t", arguments={})
    assert never.expires_at is None
    assert a.expires_at is not None
    assert store.expire(now=a.expires_at - 1) == 0
    assert store.expire(now=a.expires_at + 1) == 1
    statuses = [store.get("r", c) for c in "abn"]
    assert [r.status if r else None for r in statuses] == ["expired", "pending", "pending"]
    with pytest.raises(PendingExpired):
        store.submit("r", "a", 1)
    assert store.expire(now=a.expires_at + 1) == 0  # idempotent

    # An expired TTL refuses a submission even before anyone called expire().
    store.add(run_id="r", call_id="quick", tool="t", arguments={}, ttl=0.05)
    time.sleep(0.1)
    with pytest.raises(PendingExpired):
        store.submit("r", "quick", 1)
    quick = store.get("r", "quick")
    assert quick is not None and quick.status == "expired"
    assert store.collect("r") == []


def test_bad_ttl_is_refused(db: Path) -> None:
    with pytest.raises(UsageError, match=r"PendingStore\(ttl=\.\.\.\)"):
        PendingStore(db, ttl=-1)
    with PendingStore(db) as s, pytest.raises(UsageError, match=r"add\(ttl=\.\.\.\)"):
        s.add(run_id="r", call_id="c", tool="t", arguments={}, ttl=float("inf"))


def test_default_path_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBIND_PENDING_DB", str(tmp_path / "sub" / "env.sqlite3"))
    with PendingStore() as s:
        assert s.path == tmp_path / "sub" / "env.sqlite3"
    assert (tmp_path / "sub" / "env.sqlite3").is_file()
    monkeypatch.delenv("TOOLBIND_PENDING_DB")
    monkeypatch.chdir(tmp_path)
    with PendingStore() as s:
        s.add(run_id="r", call_id="c", tool="t", arguments={})
    assert (tmp_path / ".toolbind" / "pending.sqlite3").is_file()


def test_a_closed_store_says_so(db: Path) -> None:
    from toolbind.runtime._pending import PendingError

    s = PendingStore(db)
    s.close()
    s.close()
    with pytest.raises(PendingError, match="closed"):
        s.collect("r")


# -- the HTTP endpoint --------------------------------------------------------------------------


def test_http_endpoint(store: PendingStore) -> None:
    store.add(run_id="run 1", call_id="c1", tool="sendEmail", arguments={"to": "x"})
    store.add(run_id="run 1", call_id="gone", tool="sendEmail", arguments={}, ttl=0.01)
    time.sleep(0.05)
    with serve_asgi(pending_app(store, max_body=4096)) as base, httpx.Client(base_url=base) as http:
        url = "/runs/run%201/tool-results"
        ok = http.post(url, json={"call_id": "c1", "result": {"sent": True}})
        assert ok.status_code == 200, ok.text
        body = ok.json()
        assert (body["status"], body["result"], body["call_id"]) == (
            "resolved",
            {"sent": True},
            "c1",
        )

        again = http.post(url, json={"callId": "c1", "result": {"sent": False}})
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "already_resolved"
        assert "already has a result" in again.json()["error"]["message"]

        assert http.post(url, json={"call_id": "nope"}).status_code == 404
        assert http.post("/runs/other/tool-results", json={"call_id": "c1"}).status_code == 404
        expired = http.post(url, json={"call_id": "gone", "result": 1})
        assert expired.status_code == 410 and expired.json()["error"]["code"] == "expired"

        not_json = http.post(url, content=b"{nope", headers={"content-type": "application/json"})
        assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]["message"]
        deep = http.post(url, content=b"[" * 2000 + b"]" * 2000)
        assert deep.status_code == 400 and "nested" in deep.json()["error"]["message"]
        for bad, fragment in [
            ([1, 2], "JSON object"),
            ({"result": 1}, "call_id"),
            ({"call_id": 7}, "call_id"),
            ({"call_id": "c1", "error": 5}, "error"),
            ({"call_id": "c1", "extra": 1}, "'extra'"),
        ]:
            response = http.post(url, json=bad)
            assert response.status_code == 422, bad
            assert fragment in response.json()["error"]["message"]
        nan = http.post(url, content=b'{"call_id": "c1", "result": NaN}')
        assert nan.status_code == 422 and "JSON value" in nan.json()["error"]["message"]
        slash = http.post("/runs/a%2Fb/tool-results", json={"call_id": "c"})
        assert slash.status_code == 404 and "'a/b'" in slash.json()["error"]["message"]

        big = http.post(url, json={"call_id": "c1", "result": "x" * 5000})
        assert big.status_code == 413
        assert http.get(url).status_code == 405
        assert http.get(url).headers["allow"] == "POST"
        assert http.post("/elsewhere", json={}).status_code == 404

    # exactly one result reached the store, the first one
    (delivered,) = store.collect("run 1")
    assert delivered.result == {"sent": True}


# -- processes ----------------------------------------------------------------------------------

SUBMIT_RACE = """
import os, sys, time
from toolbind.runtime.errors import AlreadyResolved
from toolbind.runtime.pending import PendingStore
db, go, me = sys.argv[1], sys.argv[2], sys.argv[3]
with PendingStore(db) as s:
    while not os.path.exists(go):
        time.sleep(0.001)
    try:
        s.submit("race", "c", {"winner": me})
    except AlreadyResolved:
        print("lost")
    else:
        print("won")
"""


def test_concurrent_submissions_from_processes_exactly_one_wins(
    store: PendingStore, db: Path, tmp_path: Path
) -> None:
    store.add(run_id="race", call_id="c", tool="confirm", arguments={})
    go = tmp_path / "go"
    procs = [spawn(SUBMIT_RACE, str(db), str(go), f"p{i}") for i in range(5)]
    time.sleep(1.0)  # let them all import and open the store before the start signal
    go.touch()
    outcomes = {f"p{i}": p.communicate(timeout=60) for i, p in enumerate(procs)}
    for name, (_, err) in outcomes.items():
        assert err == "", (name, err)
    winners = [name for name, (out, _) in outcomes.items() if out.strip() == "won"]
    losers = [name for name, (out, _) in outcomes.items() if out.strip() == "lost"]
    assert len(winners) == 1 and len(losers) == 4, outcomes
    record = store.get("race", "c")
    assert record is not None and record.result == {"winner": winners[0]}


ADD_THEN_HANG = """
import sys, time
from toolbind.runtime.pending import PendingStore
s = PendingStore(sys.argv[1])
s.add(run_id="run", call_id="email-1", tool="sendEmail", arguments={"recipient": "a@b.c"})
print("added", flush=True)
time.sleep(600)
"""


def test_kill_9_between_submission_and_pickup(db: Path) -> None:
    """The run's process dies; the result is submitted over HTTP; a new process collects it once."""
    proc = spawn(ADD_THEN_HANG, str(db))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "added"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    with (
        PendingStore(db) as server_store,
        serve_asgi(pending_app(server_store)) as base,
    ):
        response = httpx.post(
            f"{base}/runs/run/tool-results", json={"call_id": "email-1", "result": {"sent": True}}
        )
        assert response.status_code == 200, response.text
    # no process holds the store now: the result lives on disk only
    first = collect_in_new_process(db, "run")
    assert [(r["call_id"], r["result"], r["status"]) for r in first] == [
        ("email-1", {"sent": True}, "delivered")
    ]
    assert collect_in_new_process(db, "run") == []


PAUSE_IN_COLLECT = """
import sys, time
from toolbind.runtime.pending import PendingStore
s = PendingStore(sys.argv[1])
marked = []
def trace(statement):
    if "SET status = 'delivered'" in statement:
        marked.append(statement)
    elif statement == "COMMIT" and marked:
        print("in-collect", flush=True)  # the mark is made, not committed
        time.sleep(600)
s._conn.set_trace_callback(trace)
s.collect("run")
print("collect returned", flush=True)
"""


def test_kill_9_in_the_middle_of_collect_loses_and_doubles_nothing(
    store: PendingStore, db: Path
) -> None:
    for i in range(3):
        store.add(run_id="run", call_id=f"c{i}", tool="t", arguments={"i": i})
        store.submit("run", f"c{i}", {"n": i})
    proc = spawn(PAUSE_IN_COLLECT, str(db))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "in-collect"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    # the killed collect held the write lock; it is released, and its marks were rolled back
    assert [r.status for r in (store.get("run", f"c{i}") for i in range(3)) if r] == [
        "resolved"
    ] * 3
    got = collect_in_new_process(db, "run")
    assert sorted(r["call_id"] for r in got) == ["c0", "c1", "c2"]
    assert [r["result"] for r in sorted(got, key=lambda r: r["call_id"])] == [
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]
    assert collect_in_new_process(db, "run") == []
    assert store.collect("run") == []


COLLECT_LOOP = """
import json, sys, time
from toolbind.runtime.pending import PendingStore
got = []
with PendingStore(sys.argv[1]) as s:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not __import__("os").path.exists(sys.argv[2]):
        got.extend(r.call_id for r in s.collect("run"))
    got.extend(r.call_id for r in s.collect("run"))
print(json.dumps(got))
"""


def test_concurrent_collectors_never_share_a_result(
    store: PendingStore, db: Path, tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    collectors = [spawn(COLLECT_LOOP, str(db), str(stop)) for _ in range(3)]
    time.sleep(0.5)
    for i in range(40):
        store.add(run_id="run", call_id=f"c{i:02}", tool="t", arguments={})
        store.submit("run", f"c{i:02}", i)
    stop.touch()
    seen: list[str] = []
    for proc in collectors:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        seen.extend(json.loads(out))
    assert sorted(seen) == [f"c{i:02}" for i in range(40)]  # every one, none twice


def _thread_race(store: PendingStore, db: Path, call_id: str, shared: bool) -> list[str]:
    import threading

    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def submit(i: int) -> None:
        own = store if shared else PendingStore(db)
        barrier.wait()
        try:
            own.submit("race", call_id, i)
            outcomes.append(f"won:{i}")
        except AlreadyResolved:
            outcomes.append("lost")
        finally:
            if not shared:
                own.close()

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return outcomes


@pytest.mark.parametrize("shared", [True, False], ids=["one-store", "store-per-thread"])
def test_concurrent_submissions_from_threads_exactly_one_wins(
    store: PendingStore, db: Path, shared: bool
) -> None:
    store.add(run_id="race", call_id="c", tool="t", arguments={})
    outcomes = _thread_race(store, db, "c", shared)
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and outcomes.count("lost") == 5, outcomes
    record = store.get("race", "c")
    assert record is not None and f"won:{record.result}" == winners[0]


WRITER = """
import sys
from toolbind.runtime.pending import PendingStore
db, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with PendingStore(db) as s:
    for i in range(count):
        call_id = f"{name}-{i:04}"
        s.add(run_id="run", call_id=call_id, tool="t", arguments={"i": i})
        s.submit("run", call_id, {"from": name, "i": i})
        print(call_id, flush=True)  # acknowledged: the submission is durable
"""


def test_concurrent_writers_and_a_kill_9_lose_and_double_nothing(db: Path, tmp_path: Path) -> None:
    """Four processes add and submit distinct results while three collect; one writer is killed
    with SIGKILL half-way (possibly inside a transaction). Every acknowledged result is collected
    exactly once, nothing is collected twice, and the database is intact."""
    PendingStore(db).close()  # create the schema before the race
    stop = tmp_path / "stop"
    collectors = [spawn(COLLECT_LOOP, str(db), str(stop)) for _ in range(3)]
    writers = {f"w{k}": spawn(WRITER, str(db), f"w{k}", "150") for k in range(4)}
    victim = writers["w0"]
    assert victim.stdout is not None
    acknowledged: list[str] = [victim.stdout.readline().strip() for _ in range(40)]
    os.kill(victim.pid, signal.SIGKILL)
    rest, _ = victim.communicate(timeout=60)
    assert victim.returncode == -signal.SIGKILL
    acknowledged += rest.split()
    for name, proc in writers.items():
        if proc is victim:
            continue
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (name, err)
        assert out.split() == [f"{name}-{i:04}" for i in range(150)]
        acknowledged += out.split()
    stop.touch()
    collected: list[str] = []
    for proc in collectors:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        collected += json.loads(out)
    with PendingStore(db) as store:
        collected += [r.call_id for r in store.collect("run")]
        # the victim's last call may have been added and not submitted: it is still pending
        left = store.pending("run")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len(collected) == len(set(collected)), "a result was handed over twice"
    assert set(acknowledged) <= set(collected), set(acknowledged) - set(collected)
    killed = {c for c in collected if c.startswith("w0-")}
    # beyond what it acknowledged, the victim committed at most the one call in flight
    assert len(killed - set(acknowledged)) <= 1
    assert len(left) <= 1 and all(r.call_id.startswith("w0-") for r in left)
    assert len(acknowledged) >= 3 * 150 + 40
