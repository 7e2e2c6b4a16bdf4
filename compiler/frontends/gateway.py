"""Compiler layer (frontends): the gateway's tool configuration (gateway-v3-tool-system.md).

``{name, description, inputSchema, executionType, visible, execution, display}``. The execution
type, the visibility (defaulted per the seed: ``false`` for ``internal``, ``true`` otherwise) and
the declarative execution config are checked here and carried into the IR unchanged; the
runtime executes them.
"""

from __future__ import annotations

from typing import Any

from .._load import as_object
from ..diagnostics import describe
from ..ir import ExecutionType, SourceLocation, ToolSpec, freeze
from ._common import ToolReader

EXECUTION_TYPES: tuple[ExecutionType, ...] = ("gateway", "external", "space", "internal")
_GATEWAY_KEYS = ("executionType", "execution", "visible", "display")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


def is_tool(value: Any) -> bool:
    obj = as_object(value)
    return obj is not None and "name" in obj and any(k in obj for k in _GATEWAY_KEYS)


def read_tool(reader: ToolReader, value: dict[str, Any], loc: SourceLocation) -> ToolSpec | None:
    diags = reader.diags
    name = reader.name(value.get("name"), loc.child("name"))
    if name is None:
        return None
    execution_type: ExecutionType = "gateway"
    raw_type = value.get("executionType", "gateway")
    if raw_type in EXECUTION_TYPES:
        execution_type = raw_type
    else:
        diags.error(
            loc.child("executionType"),
            f"executionType is {describe(raw_type)}",
            f"one of {', '.join(EXECUTION_TYPES)}",
            hint=_execution_type_hint(raw_type),
        )
    visible = value.get("visible", execution_type != "internal")
    if not isinstance(visible, bool):
        diags.error(loc.child("visible"), f"visible is {describe(visible)}", "true or false")
        visible = execution_type != "internal"
    execution = value.get("execution")
    if execution is not None:
        _check_execution(reader, execution, loc.child("execution"))
    raw_display = value.get("display")
    display = as_object(raw_display)
    if raw_display is not None and display is None:
        diags.error(
            loc.child("display"),
            f"display is {describe(raw_display)}",
            "an object such as {customUI: <component>}",
        )
    return ToolSpec(
        name=name,
        loc=loc,
        params=reader.params(value.get("inputSchema"), loc.child("inputSchema")),
        output=reader.output(value.get("outputSchema"), loc.child("outputSchema")),
        description=reader.text(value.get("description"), loc.child("description"), "description"),
        execution_type=execution_type,
        visible=visible,
        execution=freeze(execution) if as_object(execution) is not None else None,
        display=freeze(display) if display is not None else None,
    )


def _check_execution(reader: ToolReader, raw_execution: Any, loc: SourceLocation) -> None:
    diags = reader.diags
    execution = as_object(raw_execution)
    if execution is None:
        diags.error(
            loc,
            f"execution is {describe(raw_execution)}",
            "an object: {url, method, headers, body, timeout} or {webhookUrl, ...}",
        )
        return
    for key in ("url", "webhookUrl"):
        url = execution.get(key)
        if url is not None and (
            not isinstance(url, str) or not url.startswith(("http://", "https://"))
        ):
            diags.error(loc.child(key), f"{key} is {describe(url)}", "an absolute http(s) URL")
    method = execution.get("method")
    if method is not None and (not isinstance(method, str) or method.upper() not in _METHODS):
        diags.error(
            loc.child("method"), f"method is {describe(method)}", f"one of {', '.join(_METHODS)}"
        )
    raw_headers = execution.get("headers")
    if raw_headers is not None:
        headers = as_object(raw_headers)
        if headers is None:
            diags.error(
                loc.child("headers"),
                f"headers is {describe(raw_headers)}",
                "an object of header name → string",
            )
        else:
            for h, v in headers.items():
                if not isinstance(v, str):
                    diags.error(
                        loc.child("headers", h), f"header {h!r} is {describe(v)}", "a string"
                    )
                elif "\r" in v or "\n" in v:
                    diags.error(
                        loc.child("headers", h),
                        f"header {h!r} contains a line break",
                        "a single-line string",
                        hint="a line break in a header value would start another header",
                    )
    timeout = execution.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        diags.error(
            loc.child("timeout"),
            f"timeout is {describe(timeout)}",
            "a positive number of milliseconds",
        )


def _execution_type_hint(raw_type: Any) -> str | None:
    if not isinstance(raw_type, str):
        return None
    if raw_type.lower() in EXECUTION_TYPES:
        return f"execution types are lower-case: {raw_type.lower()!r}"
    if "webhook" in raw_type.lower():
        return "a webhook tool is executionType 'external' with execution.webhookUrl"
    return None
