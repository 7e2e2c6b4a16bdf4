"""A real third-party server from PyPI with its own spec as it serves it: LNbits (apiKey auth).

LNbits 1.6.2 (a Lightning wallet server: FastAPI on pydantic 1) pins pydantic 1.10, fastapi 0.116
and httpx 0.27, so it cannot share ``.venv``: ``make install`` puts it in ``.venv-lnbits``
(``tests/realworld/lnbits-requirements.txt``) and it runs here as a subprocess on 127.0.0.1,
offline (no extension manifests, price aggregator or exchange-rate providers), with its
``FakeWallet`` funding source (invoices made and decoded locally) and SQLite in a temporary
directory. Its OpenAPI 3.1 spec is downloaded from ``/openapi.json`` and compiled as served — it
declares ``APIKeyHeader`` (``X-API-KEY``), ``APIKeyQuery`` (``api-key``), HTTP bearer and OAuth2
password schemes, and 126 ``in: cookie`` parameters — then its operations are called through the
generated HTTP Activities with credentials configured the way ``HttpClient`` takes them per
declared scheme: a wallet's admin key in the header and its invoice key in the query (and what
each may do: an invoice key may not pay or rename), a wrong key (404), the bearer token
``register`` returns and the same token as an OAuth2 access token; path, query and header
parameters, JSON bodies; a cookie parameter and the session cookie ``login`` sets (checked on the
wire: LNbits reads the ``Authorization`` header before the cookie), a redirect to another host
(refused). LNbits answers ``null`` where its spec says ``string`` (pydantic 1's ``Optional[str]``
schema): those calls went through, and are successes naming the nulls (``metadata["nulls"]``). The
configured keys and tokens never appear in a client's repr, a result's error or a log record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests._servers import free_port
from tests.conftest import REPO, unload
from toolbind.runtime.http import HttpClient

from ._served import LNBITS_OFFLINE, compile_served, require_venv, running

# ~35 s on 2 cores (LNbits starts in ~10 s): `make test-slow` (CI) runs it
pytestmark = pytest.mark.slow

VENV = REPO / ".venv-lnbits"
REQUIREMENTS = REPO / "tests" / "realworld" / "lnbits-requirements.txt"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_venv(VENV, REQUIREMENTS, "python", "LNbits")
    # LNbits mounts lnbits/static by a relative path: it runs from its site-packages
    site = next(VENV.glob("lib/python3*/site-packages/lnbits")).parent
    tmp = tmp_path_factory.mktemp("lnbits")
    port = free_port()
    env = LNBITS_OFFLINE | {
        "LNBITS_DATA_FOLDER": str(tmp / "data"),
        "LNBITS_EXTENSIONS_PATH": str(tmp / "extensions"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    command = [str(VENV / "bin" / "python"), "-m", "uvicorn", "lnbits.__main__:app"]
    base = f"http://127.0.0.1:{port}"
    with running(
        "LNbits",
        [*command, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        f"{base}/api/v1/health",
        tmp / "lnbits.log",
        env=env,
        cwd=site,
    ):
        yield base


@pytest.fixture(scope="module")
def pkg(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("lnbits_spec")
    package, note, _ = compile_served(f"{server}/openapi.json", root, "lnbits_api")
    # nothing dropped: every operation, parameter (126 in cookies), body and response emitted
    assert note == (
        "read → emitted: operations 178 → 178 emitted; parameters in cookie 126 → 126 emitted; "
        "parameters in header 1 → 1 emitted; parameters in path 80 → 80 emitted; "
        "parameters in query 328 → 328 emitted; request bodies 62 → 62 emitted; "
        "responses 351 → 351 emitted"
    ), note
    schemes = package.API.security_schemes
    assert {k: (v.type, v.location, v.name) for k, v in schemes.items()} == {
        "APIKeyHeader": ("apiKey", "header", "X-API-KEY"),
        "APIKeyQuery": ("apiKey", "query", "api-key"),
        "HTTPBearer": ("http", None, None),
        "OAuth2PasswordBearer": ("oauth2", None, None),
    }
    yield package
    unload("lnbits_api")


State = dict[str, Any]
Args = Callable[[State], dict[str, Any]]
Check = Callable[[Any, dict[str, Any], State], bool]


def _const(args: dict[str, Any]) -> Args:
    return lambda s: args


def _keep(key: str, pick: Callable[[Any], Any]) -> Check:
    def check(data: Any, meta: dict[str, Any], st: State) -> bool:
        st[key] = pick(data)
        return True

    return check


def _both(*checks: Check) -> Check:
    return lambda d, m, s: all(c(d, m, s) for c in checks)


def _detail(text: str) -> Check:
    """FastAPI's error body: ``{"detail": "..."}``."""
    return lambda d, m, s: d["detail"] == text


def _cookie(request: httpx.Request, name: str) -> list[str]:
    """The values of cookie ``name`` in a sent request's ``Cookie`` header."""
    pairs = [p.strip().split("=", 1) for p in request.headers.get("cookie", "").split(";")]
    return [p[1] for p in pairs if len(p) == 2 and p[0] == name]


def _sent(data: Any, meta: dict[str, Any], st: State) -> httpx.Request:
    (request,) = meta["sent"]
    return request


# operations whose answers break LNbits' own spec: null where it says string (shared_wallet_id,
# pubkey, fiat_provider, ...: pydantic 1 writes Optional[str] as a plain string schema). The
# call went through: a success, the nulls listed in metadata["nulls"] (``_without_undeclared_nulls``)
OFF_SPEC = {
    "api_create_account",
    "api_update_wallet",
    "api_payments_create",
    "Payment_List",
    "get_auth_user",
    "api_create_wallet",
    "Wallets",
    "api_reset_wallet_keys",
}
WALLET = {"name", "balance"}
# (client, tool, args, status, check): in order, as each step builds on the ones before. The
# clients: "anon" (no credentials), "admin" (a wallet's admin key, X-API-KEY header), "invoice"
# (its invoice key, api-key query), "wrong" (a key of no wallet), "alice"/"bob" (HTTPBearer, the
# token register returned), "oauth" (alice's token as an OAuth2 access token).
STEPS: list[tuple[str, str, Args, int, Check]] = [
    ("anon", "health", _const({}), 200, lambda d, m, s: isinstance(d["server_time"], int)),
    # a JSON body; the wallet comes back with its keys (and a null shared_wallet_id: off spec)
    (
        "anon",
        "api_create_account",
        _const({"name": "till"}),
        200,
        _both(
            lambda d, m, s: d["name"] == "till" and d["balance_msat"] == 0,
            _keep("wallet", lambda d: d["id"]),
            _keep("adminkey", lambda d: d["adminkey"]),
            _keep("inkey", lambda d: d["inkey"]),
        ),
    ),
    ("admin", "api_wallet", _const({}), 200, lambda d, m, s: d["id"] == s["wallet"]),
    # the invoice key reads the wallet too, without its id
    ("invoice", "api_wallet", _const({}), 200, lambda d, m, s: set(d) == WALLET),
    ("wrong", "api_wallet", _const({}), 404, _detail("Wallet not found.")),
    # path parameter
    (
        "admin",
        "api_update_wallet_name",
        _const({"new_name": "front till"}),
        200,
        lambda d, m, s: d == {"id": s["wallet"], "name": "front till", "balance": 0},
    ),
    (
        "admin",
        "api_update_wallet",
        _const({"currency": "EUR"}),
        200,
        _both(lambda d, m, s: d["currency"] == "EUR" and d["name"] == "front till"),
    ),
    ("invoice", "api_update_wallet", _const({"name": "x"}), 403, _detail("Invalid adminkey.")),
    # invoices (FakeWallet), with either key
    (
        "admin",
        "api_payments_create",
        _const({"out": False, "amount": 100, "memo": "coffee"}),
        201,
        _both(
            lambda d, m, s: d["amount"] == 100_000 and d["status"] == "pending",
            _keep("coffee", lambda d: d["payment_hash"]),
            _keep("coffee_bolt11", lambda d: d["bolt11"]),
        ),
    ),
    (
        "invoice",
        "api_payments_create",
        _const({"out": False, "amount": 21, "memo": "tea"}),
        201,
        _both(lambda d, m, s: d["amount"] == 21_000 and d["memo"] == "tea"),
    ),
    # paying takes the admin key
    (
        "invoice",
        "api_payments_create",
        lambda s: {"out": True, "bolt11": s["coffee_bolt11"]},
        403,
        _detail("Invoice (or Admin) key required."),
    ),
    (
        "anon",
        "api_payments_decode",
        lambda s: {"data": s["coffee_bolt11"]},
        200,
        lambda d, m, s: d["amount_msat"] == 100_000 and d["payment_hash"] == s["coffee"],
    ),
    # a declared header parameter (X-Api-Key, no security scheme): the details only with it
    (
        "anon",
        "api_payment",
        lambda s: {"payment_hash": s["coffee"]},
        200,
        lambda d, m, s: d == {"paid": False, "preimage": None},
    ),
    (
        "anon",
        "api_payment",
        lambda s: {"payment_hash": s["coffee"], "x-api-key": s["inkey"]},
        200,
        lambda d, m, s: d["status"] == "pending" and d["details"]["memo"] == "coffee",
    ),
    # query parameters: filters, sort, limit
    (
        "admin",
        "Payment_List",
        _const({"sortby": "amount", "direction": "desc"}),
        200,
        _both(lambda d, m, s: [p["memo"] for p in d] == ["coffee", "tea"]),
    ),
    (
        "invoice",
        "Payment_List",
        _const({"memo": "tea", "limit": 5}),
        200,
        _both(lambda d, m, s: [p["memo"] for p in d] == ["tea"]),
    ),
    ("admin", "Get_payments_history", _const({}), 200, lambda d, m, s: d == []),
    ("admin", "Get_wallet_payment_total_breakdown", _const({}), 200, lambda d, m, s: d == []),
    (
        "anon",
        "api_payments_fee_reserve",
        lambda s: {"invoice": s["coffee_bolt11"]},
        200,
        lambda d, m, s: d["fee_reserve"] >= 0,
    ),
    # tinyurl: a query-parameter POST, then GET and DELETE by path
    (
        "admin",
        "Tinyurl",
        _const({"url": "https://example.com/menu"}),
        200,
        _both(
            lambda d, m, s: d["url"] == "https://example.com/menu" and d["wallet"] == s["wallet"],
            _keep("tiny", lambda d: d["id"]),
        ),
    ),
    (
        "invoice",
        "Tinyurl_2",
        lambda s: {"tinyurl_id": s["tiny"]},
        200,
        lambda d, m, s: d["url"] == "https://example.com/menu",
    ),
    # /t/{id} redirects to the stored URL: another host, refused (never requested)
    (
        "anon",
        "Tinyurl_4",
        lambda s: {"tinyurl_id": s["tiny"]},
        307,
        lambda d, m, s: (
            m["error_type"] == "redirect_refused" and "https://example.com/menu" in m["error"]
        ),
    ),
    (
        "admin",
        "Tinyurl_3",
        lambda s: {"tinyurl_id": s["tiny"]},
        200,
        lambda d, m, s: d == {"deleted": True},
    ),
    # accounts: register returns a bearer token (and sets it as a cookie)
    (
        "anon",
        "register",
        _const(
            {
                "username": "alice",
                "password": "alice-password-1",
                "password_repeat": "alice-password-1",
                "email": "alice@example.com",
            }
        ),
        200,
        _both(
            lambda d, m, s: d["token_type"] == "bearer",
            _keep("alice_token", lambda d: d["access_token"]),
        ),
    ),
    (
        "anon",
        "register",
        _const(
            {"username": "bob", "password": "bob-password-1", "password_repeat": "bob-password-1"}
        ),
        200,
        _keep("bob_token", lambda d: d["access_token"]),
    ),
    (
        "anon",
        "register",
        _const(
            {"username": "alice", "password": "alice-pass-2", "password_repeat": "alice-pass-2"}
        ),
        400,
        _detail("Username already exists."),
    ),
    (
        "alice",
        "get_auth_user",
        _const({}),
        200,
        _both(
            lambda d, m, s: d["username"] == "alice" and len(d["wallets"]) == 1,
            _keep("alice_id", lambda d: d["id"]),
            _keep("alice_wallet", lambda d: d["wallets"][0]["id"]),
        ),
    ),
    # the same token as the OAuth2 password flow's access token
    ("oauth", "get_auth_user", _const({}), 200, lambda d, m, s: d["username"] == "alice"),
    ("bob", "get_auth_user", _const({}), 200, lambda d, m, s: d["username"] == "bob"),
    (
        "alice",
        "api_create_wallet",
        _const({"name": "savings"}),
        200,
        _both(_keep("savings", lambda d: d["id"])),
    ),
    (
        "alice",
        "Wallets",
        _const({}),
        200,
        _both(lambda d, m, s: sorted(w["name"] for w in d)[-1] == "savings"),
    ),
    (
        "oauth",
        "Wallet_List",
        _const({"search": "savings", "limit": 5}),
        200,
        lambda d, m, s: [w["name"] for w in d["data"]] == ["savings"] and d["total"] == 1,
    ),
    ("bob", "Wallet_List", _const({"search": "savings"}), 200, lambda d, m, s: d["data"] == []),
    (
        "alice",
        "api_get_user_acls",
        _const({}),
        200,
        lambda d, m, s: d["id"] == s["alice_id"] and d["access_control_list"] == [],
    ),
    ("alice", "api_get_user_extensions", _const({}), 200, lambda d, m, s: d == []),
    (
        "admin",
        "Payment_List_2",
        _const({"limit": 1, "sortby": "amount", "direction": "asc"}),
        200,
        lambda d, m, s: d["total"] == 2 and [p["memo"] for p in d["data"]] == ["tea"],
    ),
    # another user's wallet: not found for bob
    (
        "bob",
        "api_delete_wallet",
        lambda s: {"wallet_id": s["savings"]},
        404,
        _detail("Wallet not found"),
    ),
    (
        "alice",
        "api_delete_wallet",
        lambda s: {"wallet_id": s["savings"]},
        200,
        lambda d, m, s: d is None,
    ),
    (
        "anon",
        "login",
        _const({"username": "alice", "password": "wrong-password"}),
        401,
        _detail("Invalid credentials."),
    ),
    (
        "alice",
        "login",
        _const({"username": "alice", "password": "alice-password-1"}),
        200,
        _keep("alice_login", lambda d: d["access_token"]),
    ),
    # the cookie login set is sent back (the session), beside the configured bearer token
    (
        "alice",
        "get_auth_user",
        _const({}),
        200,
        lambda d, m, s: (
            d["username"] == "alice"
            and _cookie(_sent(d, m, s), "cookie_access_token") == [s["alice_login"]]
            and _sent(d, m, s).headers["authorization"] == f"Bearer {s['alice_token']}"
        ),
    ),
    # a cookie parameter: its value goes as Cookie (and wins over the session's cookie of the
    # same name); LNbits reads the Authorization header first, so the answer is alice's
    (
        "alice",
        "get_auth_user",
        lambda s: {"cookie_access_token": s["bob_token"]},
        200,
        lambda d, m, s: (
            d["username"] == "alice"
            and _cookie(_sent(d, m, s), "cookie_access_token") == [s["bob_token"]]
            and _cookie(_sent(d, m, s), "is_lnbits_user_authorized") == ["true"]
        ),
    ),
    ("alice", "logout", _const({}), 200, lambda d, m, s: d == {"status": "success"}),
    # logout deleted the session cookie
    (
        "alice",
        "Get_payments_history_per_day",
        _const({}),
        200,
        lambda d, m, s: d == [] and "cookie_access_token" not in str(_sent(d, m, s).headers),
    ),
    # alice's first wallet: its admin key works until the keys are reset
    (
        "alice",
        "Wallets",
        _const({}),
        200,
        _keep("alice_adminkey", lambda d: d[0]["adminkey"]),
    ),
    ("alice_wallet", "api_wallet", _const({}), 200, lambda d, m, s: d["balance"] == 0),
    (
        "alice",
        "api_reset_wallet_keys",
        lambda s: {"wallet_id": s["alice_wallet"]},
        200,
        lambda d, m, s: d["adminkey"] != s["alice_adminkey"],
    ),
    ("alice_wallet", "api_wallet", _const({}), 404, _detail("Wallet not found.")),
    # a message to the listeners of a websocket item: path parameters, then path and query
    (
        "anon",
        "websocket_update_get",
        _const({"item_id": "till-1", "data": "paid"}),
        200,
        lambda d, m, s: d == {"sent": True, "data": "paid"},
    ),
    (
        "anon",
        "websocket_update_post",
        _const({"item_id": "till-1", "data": "paid 2"}),
        200,
        lambda d, m, s: d == {"sent": True, "data": "paid 2"},
    ),
    # QR codes: the data in the path and in the query
    ("anon", "img", _const({"data": "lnbc1"}), 200, lambda d, m, s: "<svg" in d),
    ("anon", "img_2", _const({"data": "lnbc1"}), 200, lambda d, m, s: "<svg" in d),
    ("anon", "api_list_currencies_available", _const({}), 200, lambda d, m, s: "EUR" in d),
]

# what each configured client says, from the state the steps built
CREDENTIALS: dict[str, Callable[[State], dict[str, Any]]] = {
    "anon": lambda s: {},
    "admin": lambda s: {"APIKeyHeader": s["adminkey"]},
    "invoice": lambda s: {"APIKeyQuery": s["inkey"]},
    "wrong": lambda s: {"APIKeyHeader": "0123456789abcdef0123456789abcdef"},
    "alice": lambda s: {"HTTPBearer": s["alice_token"]},
    "bob": lambda s: {"HTTPBearer": s["bob_token"]},
    "oauth": lambda s: {"OAuth2PasswordBearer": {"access_token": s["alice_token"]}},
    "alice_wallet": lambda s: {"APIKeyHeader": s["alice_adminkey"]},
}


def _data(result: Any) -> Any:
    if hasattr(result.data, "model_dump"):
        return result.data.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return result.data


def test_lnbits_own_spec_works_against_lnbits(
    pkg: ModuleType, server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sent: list[httpx.Request] = []

    class Recording(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            sent.append(request)
            return super().handle_request(request)

    state: State = {}
    clients: dict[str, HttpClient] = {}
    since: dict[str, int] = {}  # the log records before each client was configured

    def client(who: str) -> HttpClient:
        if who not in clients:
            since[who] = len(caplog.records)
            clients[who] = HttpClient(
                pkg.API, base_url=server, credentials=CREDENTIALS[who](state), transport=Recording()
            )
        return clients[who]

    called = correct = 0
    tools: set[str] = set()
    wrong: list[str] = []
    errors: dict[str, list[str]] = {}
    try:
        for who, tool, args, status, check in STEPS:
            given = args(state)
            before = len(sent)
            call = pkg.CallAdapter.validate_python({"_tool": tool, **given})
            result = pkg.HttpActivities(client(who)).activities()[tool](call)
            called += 1
            tools.add(tool)
            errors.setdefault(who, []).append(result.error or "")
            data = _data(result)
            meta = {**result.metadata, "sent": sent[before:], "error": result.error or ""}
            off_spec = 200 <= status < 300 and tool in OFF_SPEC
            succeeds = 200 <= status < 300
            fine = result.metadata["status"] == status and result.success == succeeds
            # the nulls are said where (and only where) LNbits sends them against its spec
            fine = fine and bool(result.metadata.get("nulls")) == off_spec
            if fine and check(data, meta, state):
                correct += 1
            else:
                wrong.append(
                    f"{who} {tool} {given}: {result.metadata.get('status')} {result.error} "
                    f"{str(data)[:300]}"
                )
    finally:
        reprs = {who: repr(c) for who, c in clients.items()}
        for c in clients.values():
            c.close()
    assert correct == called, "\n".join(wrong)
    assert called >= 50 and len(tools) >= 34, (called, sorted(tools))

    # apiKey in the header and in the query: on the wire as declared
    by_key = [r for r in sent if r.headers.get("x-api-key") == state["adminkey"]]
    assert by_key and all("api-key" not in r.url.params for r in by_key)
    in_query = [r for r in sent if r.url.params.get("api-key") == state["inkey"]]
    assert in_query and all("x-api-key" not in r.headers for r in in_query)

    # configured secrets never in a client's repr, a result's error or a log record
    secrets = {
        "admin": state["adminkey"],
        "invoice": state["inkey"],
        "alice": state["alice_token"],
        "oauth": state["alice_token"],
        "bob": state["bob_token"],
    }
    logged = "\n".join(r.getMessage() for r in caplog.records[since["invoice"] :])
    for who, secret in secrets.items():
        assert secret not in reprs[who], reprs[who]
        assert not [e for e in errors.get(who, []) if secret in e], who
    assert "api-key=***" in logged  # httpx logged the query-key calls, the key scrubbed
    # ... from the moment it is configured: before, it was the data of the response that made it
    # (register's body and Set-Cookie, logged by httpcore at DEBUG as LNbits sent them)
    for who, secret in secrets.items():
        leaked = [r.name for r in caplog.records[since[who] :] if secret in r.getMessage()]
        assert not leaked, (who, leaked)
