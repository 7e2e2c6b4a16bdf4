"""The live checks on data and state against real servers on 127.0.0.1 (``_keepers``): each
check fails on the server built to break its promise and holds on the one that keeps it.

``negative_data_rejection`` (asked for) sends Calls the spec forbids, raw, and wants a 4xx;
``positive_data_acceptance`` wants a valid Call not refused for its data; the create/read/delete
sequences check ``ensure_resource_availability`` and ``use_after_free``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest
import yaml

from tests._servers import serve_asgi
from tests.conftest import unload
from tests.realworld._served import compile_served
from toolbind.runtime.errors import UsageError
from toolbind.testing._contract import Contract
from toolbind.testing.live import CHECKS, DEFAULT_CHECKS, LiveReport, check_live
from toolbind.testing.live._negative import WireMutator
from toolbind.testing.live._probe import wire_schema

from . import _keepers

NEGATIVE = (*DEFAULT_CHECKS, "negative_data_rejection")
WRITES = ("GET", "POST", "DELETE")


def _checks(report: LiveReport) -> dict[str, list[str]]:
    return {t.tool: sorted({f.check for f in t.failures}) for t in report.tools if not t.skipped}


@pytest.fixture(scope="module")
def data_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str, str]]:
    with (
        serve_asgi(_keepers.data_app(lax=False)) as strict,
        serve_asgi(_keepers.data_app(lax=True)) as lax,
    ):
        root = tmp_path_factory.mktemp("keepers")
        package, _, _ = compile_served(f"{strict}/openapi.json", root, "keepers_api")
        yield package, strict, lax
        unload("keepers_api")


def test_a_server_that_refuses_forbidden_calls_passes(
    data_servers: tuple[ModuleType, str, str],
) -> None:
    pkg, strict, _ = data_servers
    report = check_live(
        pkg, strict, tools=["strict", "strict_body"], methods=WRITES, checks=NEGATIVE, budget=60
    )
    assert _checks(report) == {"strict": [], "strict_body": []}
    assert all(t.requests >= 10 for t in report.tools)


def test_a_server_that_takes_forbidden_calls_fails_negative_data_rejection(
    data_servers: tuple[ModuleType, str, str],
) -> None:
    pkg, _, lax = data_servers
    report = check_live(
        pkg, lax, tools=["strict", "strict_body"], methods=WRITES, checks=NEGATIVE, budget=60
    )
    assert _checks(report) == {
        "strict": ["negative_data_rejection"],
        "strict_body": ["negative_data_rejection"],
    }
    query = report.failures("strict")[0]
    assert "was answered 200, not 4xx" in query.message and query.status == 200
    assert query.pointer.endswith("keepers_api.json#/paths/~1strict/get/parameters")
    # the request sent is the forbidden one: the Call model would have refused it
    call = {k: v for k, v in query.call.items() if k != "_tool"}
    assert not (0 <= call.get("n", -1) <= 10 and call.get("kind") in ("a", "b"))  # type: ignore[operator]
    assert query.curl.startswith("curl -X GET")
    body = report.failures("strict_body")[0]
    assert body.curl.startswith("curl -X POST") and "--data-binary" in body.curl
    assert body.pointer.endswith("#/paths/~1strict-body/post/requestBody")


def test_negative_data_rejection_is_asked_for(data_servers: tuple[ModuleType, str, str]) -> None:
    pkg, _, lax = data_servers
    report = check_live(pkg, lax, tools=["strict", "strict_body"], methods=WRITES, budget=20)
    assert _checks(report) == {"strict": [], "strict_body": []}
    assert "negative_data_rejection" not in report.render()


def test_a_valid_call_refused_fails_positive_data_acceptance(
    data_servers: tuple[ModuleType, str, str],
) -> None:
    pkg, strict, _ = data_servers
    report = check_live(pkg, strict, tools=["picky", "strict"], budget=30)
    assert _checks(report) == {"picky": ["positive_data_acceptance"], "strict": []}
    (refused,) = report.failures("picky")
    assert refused.status == 400 and refused.call["n"] % 2 == 1  # type: ignore[operator]
    assert refused.message == "a Call the spec allows was refused with 400"
    skipped = check_live(
        pkg,
        strict,
        tools=["picky"],
        budget=10,
        checks=[c for c in DEFAULT_CHECKS if c != "positive_data_acceptance"],
    )
    assert skipped.ok and "positive_data_acceptance" not in skipped.render()


def test_an_unknown_check_is_a_usage_error(data_servers: tuple[ModuleType, str, str]) -> None:
    pkg, strict, _ = data_servers
    with pytest.raises(UsageError, match=r"^checks: no check named nonsense"):
        check_live(pkg, strict, checks=["nonsense"])
    assert set(DEFAULT_CHECKS) < set(CHECKS)


@pytest.fixture(scope="module")
def crud_spec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    with serve_asgi(_keepers.crud_app("good")) as base:
        root = tmp_path_factory.mktemp("crud")
        package, _, _ = compile_served(f"{base}/openapi.json", root, "crud_api")
        yield package
        unload("crud_api")


def _crud(pkg: ModuleType, mode: _keepers.Mode) -> LiveReport:
    with serve_asgi(_keepers.crud_app(mode)) as base:
        return check_live(pkg, base, methods=WRITES, budget=40)


def test_a_crud_server_that_keeps_its_items_passes(crud_spec: ModuleType) -> None:
    report = _crud(crud_spec, "good")
    assert report.ok, report.render()
    assert report.requests <= 40


def test_a_deleted_item_still_served_fails_use_after_free(crud_spec: ModuleType) -> None:
    report = _crud(crud_spec, "zombie")
    assert _checks(report) == {"create_item": [], "get_item": ["use_after_free"], "delete_item": []}
    (found,) = report.failures("get_item")
    assert found.message.startswith("create_item answered 201 with id ")
    assert ", delete_item answered 204, then get_item answered 200" in found.message
    assert found.status == 200 and found.curl.startswith("curl -X GET")
    assert found.pointer.endswith("crud_api.json#/paths/~1items~1{itemId}/get")


def test_a_created_item_not_served_fails_ensure_resource_availability(
    crud_spec: ModuleType,
) -> None:
    report = _crud(crud_spec, "ghost")
    assert _checks(report) == {
        "create_item": [],
        "get_item": ["ensure_resource_availability"],
        "delete_item": [],
    }
    (found,) = report.failures("get_item")
    assert found.message.endswith("then get_item of that id answered 404")
    assert found.status == 404


def test_the_specs_links_lead_the_sequence(tmp_path: Path) -> None:
    # the created thing's id is its "uid" and the item path's parameter "thingId": only the
    # create's links (one by operationId, one by a $ref to an operationRef) say so
    with serve_asgi(_keepers.crud_app("zombie", linked=True)) as base:
        package, _, _ = compile_served(f"{base}/openapi.json", tmp_path, "linked_api")
        try:
            report = check_live(package, base, methods=WRITES, budget=40)
        finally:
            unload("linked_api")
    assert _checks(report) == {
        "create_thing": [],
        "get_thing": ["use_after_free"],
        "delete_thing": [],
    }
    (found,) = report.failures("get_thing")
    assert found.message.startswith("create_thing answered 201 with id ")


def test_links_are_read_from_a_yaml_spec_whose_statuses_are_numbers(tmp_path: Path) -> None:
    spec = json.loads(json.dumps(_keepers.LINKED_SPEC))
    for methods in spec["paths"].values():
        for op in methods.values():
            op["responses"] = {int(k): v for k, v in op["responses"].items()}
    path = tmp_path / "linked.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    assert "\n        201:\n" in path.read_text(encoding="utf-8")
    with serve_asgi(_keepers.crud_app("zombie", linked=True)) as base:
        report = check_live([path], base, methods=WRITES, budget=40)
    assert _checks(report)["get_thing"] == ["use_after_free"]


def test_checks_are_chosen_on_the_command_line(
    data_servers: tuple[ModuleType, str, str], tmp_path: Path
) -> None:
    _, _, lax = data_servers
    spec = tmp_path / "keepers.json"
    spec.write_text(json.dumps(_keepers.DATA_SPEC), encoding="utf-8")
    toolbind = [sys.executable, "-m", "toolbind.cli", "test", str(spec), "--base-url", lax]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*toolbind, "--tool", "strict", "--budget", "20", *extra],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    asked = run("--check", "negative_data_rejection")
    assert asked.returncode == 1, asked.stdout + asked.stderr
    assert "[negative_data_rejection] a Call the spec forbids" in asked.stdout
    assert run().returncode == 0
    picky = run("--tool", "picky", "--skip-check", "positive_data_acceptance")
    assert picky.returncode == 0 and "positive_data_acceptance" not in picky.stdout
    wrong = run("--skip-check", "nonsense")
    assert wrong.returncode == 2 and "--skip-check nonsense: no such check" in wrong.stderr


def _items(mode: Literal["good", "zombie"], tmp_path: Path) -> LiveReport:
    spec = tmp_path / "items.json"
    spec.write_text(json.dumps(_keepers.ITEM_SPEC), encoding="utf-8")
    with serve_asgi(_keepers.item_app(mode)) as base:
        return check_live([spec], base, methods=("GET", "PUT", "POST", "DELETE"), budget=50)


def test_items_at_their_own_paths_that_go_when_deleted_pass(tmp_path: Path) -> None:
    report = _items("good", tmp_path)
    assert report.ok, report.render()


def test_an_item_put_or_found_then_deleted_and_still_served_fails_use_after_free(
    tmp_path: Path,
) -> None:
    # the item is put at its own path, or (without a PUT) looked for — also where a collection's
    # create (add_word) answers no id to read back by
    report = _items("zombie", tmp_path)
    assert _checks(report) == {
        "put_slot": [],
        "get_slot": ["use_after_free"],
        "delete_slot": [],
        "add_word": [],
        "get_word": ["use_after_free"],
        "delete_word": [],
    }
    (slot,) = report.failures("get_slot")
    assert slot.message.startswith("put_slot answered 200 for id ")
    assert ", delete_slot answered 200, then get_slot answered 200" in slot.message
    (word,) = report.failures("get_word")
    assert word.message.startswith("get_word answered 200 for id ")
    assert word.curl.startswith("curl -X GET") and word.status == 200


def test_invalid_calls_keep_every_path_parameter_sendable(crud_spec: ModuleType) -> None:
    # a path without its parameter, or with it empty, is a request the client cannot make:
    # drawn, each was refused unsent and drawn again (most of httpbin's invalid draws)
    tool = next(t for t in crud_spec.TOOLS if t.name == "get_item")
    op = crud_spec.API.operations["get_item"]
    schema = wire_schema(tool)
    mutator = WireMutator(Contract("Call", tool.call_model, schema, tool.name, ("_tool",)), op)
    edits = mutator.candidates({"_tool": "get_item", "itemId": 7})
    assert edits and all(path == ("itemId",) for path, _, _ in edits)
    assert not any(arg == "" for _, _, arg in edits)
