"""The pytest plugin's live mode: ``--toolbind-base-url`` turns each tool's item into its live
checks against a real server on 127.0.0.1 (``_keepers``' CRUD app, the variant that still
serves deleted items)."""

from __future__ import annotations

import json

import pytest

from tests._servers import serve_asgi

from . import _keepers

pytest_plugins = ["pytester"]


def test_each_tool_is_an_item_that_fails_with_its_live_findings(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "crud.json").write_text(json.dumps(_keepers.CRUD_SPEC), encoding="utf-8")
    with serve_asgi(_keepers.crud_app("zombie")) as base:
        result = pytester.runpytest(
            "--toolbind-spec",
            "crud.json",
            "--toolbind-base-url",
            base,
            "--toolbind-budget",
            "40",
            *("--toolbind-method", "GET", "--toolbind-method", "POST"),
            *("--toolbind-method", "DELETE"),
            "-v",
        )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*crud.json::create_item PASSED*",
            "*crud.json::get_item FAILED*",
            "*crud.json::delete_item PASSED*",
            "*[[]use_after_free[]] create_item answered 201 with id *",
            "*request: curl -X GET *",
        ]
    )


def test_without_unsafe_methods_the_writes_are_skipped_saying_why(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "crud.json").write_text(json.dumps(_keepers.CRUD_SPEC), encoding="utf-8")
    with serve_asgi(_keepers.crud_app("good")) as base:
        result = pytester.runpytest(
            "--toolbind-spec", "crud.json", "--toolbind-base-url", base, "-rs"
        )
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*POST is not in methods=*"])


def test_a_wrong_option_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    (pytester.path / "crud.json").write_text(json.dumps(_keepers.CRUD_SPEC), encoding="utf-8")
    result = pytester.runpytest("--toolbind-spec", "crud.json", "--toolbind-base-url", "ftp://x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolbind-base_url: 'ftp://x' is not an http(s) URL*"])
    budget = pytester.runpytest(
        "--toolbind-spec",
        "crud.json",
        "--toolbind-base-url",
        "http://127.0.0.1:9",
        "--toolbind-budget",
        "0",
    )
    assert budget.ret == pytest.ExitCode.USAGE_ERROR
    budget.stderr.fnmatch_lines(["*--toolbind-budget: 0 requests*"])
