"""Compiler layer (backends): the Activities that call a service — an OpenAPI package's
``http.py`` (and a large package's ``http.json``), an MCP configuration's ``mcp.py``.

Imports ``naming``, ``ir``, ``toolbind.runtime.contract`` (the HTTP API's JSON form) and the
backends' ``_context``, ``_source``, ``_templates`` and ``_views``.
"""

from __future__ import annotations

from typing import Any

from toolbind.contract import API_FILE, api_to_json

from .. import naming
from ..ir import thaw
from ._context import Writer
from ._source import docstring, py_str, py_value
from ._templates import ENV
from ._views import ToolView


class ServiceActivities(Writer):
    """Writes the modules whose Activities call the package's HTTP API or MCP servers."""

    def http_module(
        self, files: dict[str, str], ctx: dict[str, Any], tools: list[ToolView], large: bool
    ) -> None:
        """``http.py`` (and ``http.json`` when ``large``): the ``HttpApi`` value and a typed sync + async Activity per tool."""
        api = self.state.pkg.http
        assert api is not None
        # keyed on what the template's inputs are made from (HTTP_TEMPLATE_SOURCES): the API
        # (its generated repr names every field) and the fields of the tools' views read below
        made_from = [(n, ctx[n]) for n in ("header", "source_literal")]
        tool_fields = [
            (t.name, t.name_literal, t.call_class, t.output_class, t.errors, t.provider_name)
            for t in tools
        ]
        api_repr = repr(api)
        if large and self._keyed(API_FILE, api_repr):
            # a large package's API is data in http.json: as one Python expression it was most
            # of a type checker's time over the package (``runtime._package_json``)
            files[API_FILE] = api_to_json(api)
        if not self._keyed("http.py", "http.py.jinja", made_from, api_repr, tool_fields, large):
            return
        used: set[str] = {"HttpCaller"}
        if large:
            used |= {"HttpApi", "load_api"}
            api_expr = None
        else:
            api_expr = py_value(api, used)
        methods = naming.Scope(
            taken=set(naming.RESERVED_IDENTIFIERS) | {"client", "activities", "async_activities"}
        )
        views: list[dict[str, Any]] = []
        for t in tools:
            op = api.operations[t.name]
            method = methods.claim(naming.function_name(t.name), original=t.name)
            amethod = methods.claim("a" + method.rstrip("_"), original=t.name)
            doc = f"{op.method} {op.path}" + (" (deprecated)" if op.deprecated else "")
            views.append(
                {
                    "name_literal": t.name_literal,
                    "call_class": t.call_class,
                    "output_class": t.output_class,
                    "errors": t.errors,
                    "method": method,
                    "amethod": amethod,
                    "doc": docstring(f"{doc}: {t.provider_name}, sync."),
                    "adoc": docstring(f"{doc}: {t.provider_name}, async."),
                }
            )
        operations = [
            (
                py_str(name),
                py_str(op.method),
                py_str(op.path),
                py_str(op.operation_id) if op.operation_id is not None else "None",
            )
            for name, op in api.operations.items()
        ]
        files["http.py"] = ENV.get_template("http.py.jinja").render(
            {
                **ctx,
                "tools": views,
                "api": api_expr,
                "http_imports": ", ".join(sorted(used)),
                "operations": operations,
            }
        )

    def mcp_module(self, files: dict[str, str], ctx: dict[str, Any], tools: list[ToolView]) -> None:
        """``mcp.py``: the servers, and a typed async Activity per tool calling its server."""
        source = self.state.pkg.mcp
        assert source is not None
        owner = dict(source.tool_servers)
        methods = naming.Scope(
            taken=set(naming.RESERVED_IDENTIFIERS) | {"connections", "async_activities", "aclose"}
        )
        views: list[dict[str, Any]] = []
        for spec, t in zip(self.state.pkg.tools, tools, strict=True):
            method = methods.claim(naming.function_name(t.name), original=t.name)
            views.append(
                {
                    "name_literal": t.name_literal,
                    "call_class": t.call_class,
                    "output_class": t.output_class,
                    "structured": spec.output is not None,
                    "server": py_str(owner[spec.name]),
                    "method": method,
                    "doc": docstring(f"{t.provider_name} on MCP server {owner[spec.name]!r}."),
                }
            )
        servers = [thaw(s) for s in source.servers]
        self._render_file(
            files,
            "mcp.py",
            "mcp.py.jinja",
            {
                **ctx,
                "tools": views,
                "servers": repr(servers),
                "tool_servers": [(py_str(n), py_str(s)) for n, s in source.tool_servers],
            },
        )
