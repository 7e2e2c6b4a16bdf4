"""A real third-party server, installed from PyPI, with its own spec as it serves it: Kinto.

Kinto (Mozilla's JSON storage service: Pyramid, cornice_swagger) runs in this process on
127.0.0.1 under werkzeug's server, with its memory backends and its history, flush and
permissions-endpoint plugins. Its Swagger 2.0 spec is downloaded from ``/v1/__api__`` and compiled
as served — it declares a ``basicauth`` security scheme on every protected operation — then its
operations are called through the generated HTTP Activities with the credentials configured the
way ``HttpClient`` takes them for a declared scheme (``credentials={"basicauth": (user, pw)}``;
Kinto's basicauth policy takes any user name and password, a user being the pair):
buckets, collections, records and groups CRUD with path parameters; query filters, ``_sort`` (an
array, csv), ``_limit``, ``_fields``, ``_since``; ``If-Match``/``If-None-Match`` headers (412,
304); JSON bodies with permissions; 401/403/404/400/500 statuses read into Kinto's declared
``ErrorSchema``; Kinto's version-prefix redirect (307, a POST keeps its body); history snapshots
(whose path parameter ``collection_id}@{timestamp`` is no template of the path: reported, not a
field). Each result is checked against what Kinto documents it answers.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from tests._servers import serve_wsgi
from tests.conftest import unload
from toolbind.runtime.http import HttpClient

from ._served import compile_served

kinto = pytest.importorskip("kinto", reason="kinto is in the test extra (make install)")

SETTINGS = {
    "includes": "kinto.plugins.history kinto.plugins.flush",
    "multiauth.policies": "basicauth",
    "userid_hmac_secret": "kinto-test-hmac-secret-0123456789",
    "bucket_create_principals": "system.Authenticated",
    "experimental_permissions_endpoint": "true",
    "flush_endpoint_enabled": "true",
}
ALICE = ("alice", "alice-password")
BOB = ("bob", "bob-password")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    logger = logging.getLogger("kinto")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # its 500 logs a traceback
    with warnings.catch_warnings():  # "HTTPS is not enabled": on 127.0.0.1, by design
        warnings.simplefilter("ignore", UserWarning)
        app = kinto.main({}, **SETTINGS)
    try:
        with serve_wsgi(app, name="kinto") as base:
            yield base
    finally:
        logger.setLevel(level)


@pytest.fixture(scope="module")
def pkg(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("kinto")
    package, note, warnings = compile_served(f"{server}/v1/__api__", root, "kinto_api")
    assert "operations 41 → 41 emitted" in note, note
    # the snapshot's 'collection_id}@{timestamp' path parameter: reported, not a Call field
    assert "parameters in path 52 → 50 emitted, 1 reported, 1 overridden" in note, note
    assert any("path parameter 'collection_id}@{timestamp' is not named" in w for w in warnings)
    yield package
    unload("kinto_api")


State = dict[str, Any]
Args = Callable[[State], dict[str, Any]]
Check = Callable[[Any, dict[str, Any], State], bool]


def _etag(key: str) -> Check:
    """Keep the response's ETag under ``key`` (for If-Match / If-None-Match later)."""

    def check(data: Any, meta: dict[str, Any], st: State) -> bool:
        st[key] = meta["headers"]["etag"]
        return True

    return check


def _both(*checks: Check) -> Check:
    return lambda d, m, s: all(c(d, m, s) for c in checks)


def _keep(key: str, pick: Callable[[Any], Any]) -> Check:
    def check(data: Any, meta: dict[str, Any], st: State) -> bool:
        st[key] = pick(data)
        return True

    return check


def _error(errno: int) -> Check:
    """A failed call's body, read into the ErrorSchema model Kinto declares (``error_model``)."""
    return lambda d, m, s: d["errno"] == errno and m.get("error_model") is not None


def _titles(d: Any) -> list[str]:
    return [r["title"] for r in d["data"]]


def _const(args: dict[str, Any]) -> Args:
    return lambda s: args


# operations whose answer does not fit Kinto's own response schema
OFF_SPEC = {"get_permissionss"}
B = {"bucket_id": "shop"}
C = {"bucket_id": "shop", "collection_id": "fruits"}

# (client, tool, args, status, check): in order, as each step builds on the ones before.
STEPS: list[tuple[str, str, Args, int, Check]] = [
    ("alice", "server_info", _const({}), 200, lambda d, m, s: d["project_name"] == "kinto"),
    ("alice", "__heartbeat__", _const({}), 200, lambda d, m, s: d["storage"] is True),
    ("alice", "__lbheartbeat__", _const({}), 200, lambda d, m, s: d == {}),
    ("alice", "contribute", _const({}), 200, lambda d, m, s: d["name"] == "Kinto"),
    (
        "alice",
        "get_openapi_spec",
        _const({}),
        200,
        lambda d, m, s: d["securityDefinitions"] == {"basicauth": {"type": "basic"}},
    ),
    # the wheel ships no version.json: Kinto answers 500, a status this operation does not
    # declare, so the body stays as sent (no error model)
    (
        "alice",
        "__version__",
        _const({}),
        500,
        lambda d, m, s: d["errno"] == 999 and "error_model" not in m,
    ),
    (
        "alice",
        "create_bucket",
        _const({"data": {"id": "shop", "title": "Shop"}}),
        201,
        _both(
            lambda d, m, s: d["data"]["id"] == "shop",
            _keep("alice", lambda d: d["permissions"]["write"][0]),
        ),
    ),
    # If-None-Match: * creates only what does not exist yet
    (
        "alice",
        "create_bucket",
        _const({"data": {"id": "shop"}, "If-None-Match": "*"}),
        412,
        _error(114),
    ),
    ("alice", "create_bucket", _const({"data": {"id": "no spaces!"}}), 400, _error(107)),
    ("alice", "get_bucket", _const({"id": "shop"}), 200, _etag("bucket")),
    (
        "alice",
        "get_buckets",
        _const({}),
        200,
        lambda d, m, s: [b["id"] for b in d["data"]] == ["shop"],
    ),
    (
        "alice",
        "update_bucket",
        _const({"id": "shop", "data": {"title": "Old"}, "If-Match": '"1"'}),
        412,
        _error(114),
    ),
    (
        "alice",
        "update_bucket",
        lambda s: {"id": "shop", "data": {"title": "Shop 2"}, "If-Match": s["bucket"]},
        200,
        lambda d, m, s: d["data"]["title"] == "Shop 2",
    ),
    (
        "alice",
        "patch_bucket",
        _const({"id": "shop", "data": {"open": True}, "Response-Behavior": "full"}),
        200,
        lambda d, m, s: d["data"]["title"] == "Shop 2" and d["data"]["open"] is True,
    ),
    (
        "bob",
        "create_bucket",
        _const({"data": {"id": "bobs"}}),
        201,
        _keep("bob", lambda d: d["permissions"]["write"][0]),
    ),
    # bob is authenticated, but has no permission on alice's bucket
    ("bob", "get_bucket", _const({"id": "shop"}), 403, _error(121)),
    # Kinto's basicauth needs a user name: without one the request is anonymous
    ("nobody", "get_bucket", _const({"id": "shop"}), 401, _error(104)),
    # a bucket alice may not read, existing or not: 403, so that its existence is not revealed
    ("alice", "get_bucket", _const({"id": "nowhere"}), 403, _error(121)),
    (
        "alice",
        "create_collection",
        _const({**B, "data": {"id": "fruits"}}),
        201,
        lambda d, m, s: d["data"]["id"] == "fruits",
    ),
    (
        "alice",
        "get_collections",
        _const(B),
        200,
        lambda d, m, s: [c["id"] for c in d["data"]] == ["fruits"],
    ),
    (
        "alice",
        "get_collection",
        _const({**B, "id": "fruits"}),
        200,
        lambda d, m, s: d["data"]["id"] == "fruits",
    ),
    (
        "alice",
        "update_collection",
        _const({**B, "id": "fruits", "data": {"kind": "fruit"}}),
        200,
        lambda d, m, s: d["data"]["kind"] == "fruit",
    ),
    (
        "alice",
        "patch_collection",
        _const({**B, "id": "fruits", "data": {"shelf": 2}}),
        200,
        lambda d, m, s: d["data"]["kind"] == "fruit" and d["data"]["shelf"] == 2,
    ),
    (
        "alice",
        "create_record",
        _const({**C, "data": {"title": "apple", "n": 3}}),
        201,
        _both(
            _keep("apple", lambda d: d["data"]["id"]),
            _keep("t_apple", lambda d: d["data"]["last_modified"]),
        ),
    ),
    (
        "alice",
        "create_record",
        _const({**C, "data": {"title": "banana", "n": 1}}),
        201,
        _keep("banana", lambda d: d["data"]["id"]),
    ),
    (
        "alice",
        "create_record",
        _const({**C, "data": {"title": "cherry", "n": 2}}),
        201,
        _keep("cherry", lambda d: d["data"]["id"]),
    ),
    (
        "alice",
        "get_records",
        _const({**C, "_sort": ["-n"]}),
        200,
        lambda d, m, s: _titles(d) == ["apple", "cherry", "banana"],
    ),
    (
        "alice",
        "get_records",
        _const({**C, "_sort": ["n"], "_limit": 2}),
        200,
        lambda d, m, s: _titles(d) == ["banana", "cherry"],
    ),
    (
        "alice",
        "get_records",
        _const({**C, "_fields": ["title"], "_sort": ["title"]}),
        200,
        lambda d, m, s: [sorted(r) for r in d["data"]] == [["id", "last_modified", "title"]] * 3,
    ),
    (
        "alice",
        "get_records",
        lambda s: {**C, "id": s["banana"]},
        200,
        lambda d, m, s: _titles(d) == ["banana"],
    ),
    (
        "alice",
        "get_records",
        lambda s: {**C, "_since": s["t_apple"], "_sort": ["title"]},
        200,
        lambda d, m, s: _titles(d) == ["banana", "cherry"],
    ),
    (
        "alice",
        "get_record",
        lambda s: {**C, "id": s["apple"]},
        200,
        _both(lambda d, m, s: d["data"]["n"] == 3, _etag("apple_etag")),
    ),
    # not modified since the ETag the caller has: a success with no data
    (
        "alice",
        "get_record",
        lambda s: {**C, "id": s["apple"], "If-None-Match": s["apple_etag"]},
        304,
        lambda d, m, s: d is None,
    ),
    (
        "alice",
        "update_record",
        lambda s: {**C, "id": s["apple"], "data": {"title": "apple", "n": 30}, "If-Match": '"1"'},
        412,
        _error(114),
    ),
    (
        "alice",
        "update_record",
        lambda s: {
            **C,
            "id": s["apple"],
            "data": {"title": "apple", "n": 30},
            "If-Match": s["apple_etag"],
        },
        200,
        lambda d, m, s: d["data"]["n"] == 30,
    ),
    (
        "alice",
        "patch_record",
        lambda s: {**C, "id": s["banana"], "data": {"n": 10}},
        200,
        lambda d, m, s: d["data"] == {**d["data"], "title": "banana", "n": 10},
    ),
    ("alice", "get_record", _const({**C, "id": "nope"}), 404, _error(110)),
    (
        "alice",
        "create_group",
        lambda s: {**B, "data": {"id": "staff", "members": [s["bob"]]}},
        201,
        lambda d, m, s: d["data"]["members"] == [s["bob"]],
    ),
    (
        "alice",
        "get_group",
        _const({**B, "id": "staff"}),
        200,
        lambda d, m, s: d["data"]["id"] == "staff",
    ),
    (
        "alice",
        "get_groups",
        _const(B),
        200,
        lambda d, m, s: [g["id"] for g in d["data"]] == ["staff"],
    ),
    (
        "alice",
        "update_group",
        lambda s: {**B, "id": "staff", "data": {"members": [s["bob"]], "role": "clerk"}},
        200,
        lambda d, m, s: d["data"]["role"] == "clerk",
    ),
    (
        "alice",
        "patch_group",
        _const({**B, "id": "staff", "data": {"shift": "day"}}),
        200,
        lambda d, m, s: d["data"]["role"] == "clerk" and d["data"]["shift"] == "day",
    ),
    # JSON body with permissions: the staff group may read the bucket, and so bob can
    (
        "alice",
        "patch_bucket",
        _const({"id": "shop", "permissions": {"read": ["/buckets/shop/groups/staff"]}}),
        200,
        lambda d, m, s: d["permissions"]["read"] == ["/buckets/shop/groups/staff"],
    ),
    (
        "bob",
        "get_bucket",
        _const({"id": "shop"}),
        200,
        lambda d, m, s: d["data"]["title"] == "Shop 2",
    ),
    # Kinto's answer breaks its own spec (the root entry has no bucket_id, which the spec
    # requires): a failed output check, with the data as Kinto sent it
    (
        "alice",
        "get_permissionss",
        _const({}),
        200,
        lambda d, m, s: (
            m["error_type"] == "invalid_output"
            and {"uri": "/", "resource_name": "root", "permissions": ["bucket:create"]} in d["data"]
            and next(p for p in d["data"] if p["uri"] == "/buckets/shop")["bucket_id"] == "shop"
        ),
    ),
    (
        "alice",
        "get_history",
        _const({**B, "_sort": ["last_modified"], "_limit": 3}),
        200,
        lambda d, m, s: (
            [(h["action"], h["resource_name"]) for h in d["data"]]
            == [("create", "bucket"), ("update", "bucket"), ("update", "bucket")]
        ),
    ),
    (
        "alice",
        "get_history_snapshot",
        lambda s: {**C, "timestamp": s["t_apple"]},
        200,
        lambda d, m, s: _titles(d) == ["apple"],
    ),
    (
        "alice",
        "delete_history",
        _const(B),
        200,
        lambda d, m, s: all(h["deleted"] for h in d["data"]),
    ),
    (
        "alice",
        "batch",
        _const(
            {
                "requests": [
                    {"method": "GET", "path": "/"},
                    {"method": "GET", "path": "/buckets/shop"},
                ]
            }
        ),
        200,
        lambda d, m, s: [r["status"] for r in d["responses"]] == [200, 401],
    ),
    (
        "alice",
        "delete_record",
        lambda s: {**C, "id": s["cherry"]},
        200,
        lambda d, m, s: d["data"]["deleted"] is True,
    ),
    ("alice", "delete_records", _const(C), 200, lambda d, m, s: len(d["data"]) == 2),
    (
        "alice",
        "delete_group",
        _const({**B, "id": "staff"}),
        200,
        lambda d, m, s: d["data"]["deleted"] is True,
    ),
    ("alice", "delete_groups", _const(B), 200, lambda d, m, s: d["data"] == []),
    (
        "alice",
        "delete_collection",
        _const({**B, "id": "fruits"}),
        200,
        lambda d, m, s: d["data"]["deleted"] is True,
    ),
    ("alice", "delete_collections", _const(B), 200, lambda d, m, s: d["data"] == []),
    # the base URL without /v1: Kinto redirects (307) to its versioned path, a POST with its body
    (
        "unversioned",
        "create_bucket",
        _const({"data": {"id": "moved"}}),
        201,
        lambda d, m, s: m["redirects"] == 1 and d["data"]["id"] == "moved",
    ),
    (
        "unversioned",
        "get_bucket",
        _const({"id": "moved"}),
        200,
        lambda d, m, s: m["redirects"] == 1,
    ),
    (
        "alice",
        "delete_bucket",
        _const({"id": "shop"}),
        200,
        lambda d, m, s: d["data"]["deleted"] is True,
    ),
    (
        "alice",
        "delete_buckets",
        _const({}),
        200,
        lambda d, m, s: [b["id"] for b in d["data"]] == ["moved"],
    ),
    # deleting a user's data takes the server-wide delete permission, which alice has not
    ("alice", "delete_user-data", lambda s: {"principal": s["alice"]}, 403, _error(121)),
    ("alice", "create_flush", _const({}), 202, lambda d, m, s: d == {}),
]


def test_kintos_own_spec_works_against_kinto(pkg: ModuleType, server: str) -> None:
    base = f"{server}/v1"
    clients = {
        "alice": HttpClient(pkg.API, base_url=base, credentials={"basicauth": ALICE}),
        "bob": HttpClient(pkg.API, base_url=base, credentials={"basicauth": BOB}),
        "nobody": HttpClient(pkg.API, base_url=base, credentials={"basicauth": ("", "pw-nobody")}),
        "unversioned": HttpClient(pkg.API, base_url=server, credentials={"basicauth": ALICE}),
    }
    acts = {name: pkg.HttpActivities(client).activities() for name, client in clients.items()}
    state: State = {}
    called = correct = 0
    tools: set[str] = set()
    wrong: list[str] = []
    try:
        for who, tool, args, status, check in STEPS:
            given = args(state)
            call = pkg.CallAdapter.validate_python({"_tool": tool, **given})
            result = acts[who][tool](call)
            called += 1
            tools.add(tool)
            data = (
                result.data.model_dump(mode="json", by_alias=True, exclude_unset=True)
                if hasattr(result.data, "model_dump")
                else result.data
            )
            succeeds = (200 <= status < 300 or status == 304) and tool not in OFF_SPEC
            ok = result.metadata["status"] == status and result.success == succeeds
            if ok and check(data, result.metadata, state):
                correct += 1
            else:
                wrong.append(
                    f"{who} {tool} {given}: {result.metadata['status']} {result.error} "
                    f"{str(data)[:300]}"
                )
    finally:
        for client in clients.values():
            client.close()
    assert correct == called, "\n".join(wrong)
    assert called >= 50 and len(tools) == len(pkg.OPERATIONS), sorted(set(pkg.OPERATIONS) - tools)
