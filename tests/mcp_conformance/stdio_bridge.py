"""Serve a stdio MCP server over streamable HTTP, so the conformance suite (which only speaks
HTTP) can test ``graphmem mcp serve`` over stdio.

    python tests/mcp_conformance/stdio_bridge.py --stdio "graphmem mcp serve --subject user:x" --port 7723

One child process (the ``--stdio`` command) serves every HTTP session, as a stdio host's one
connection does; the bridge forwards each request the child's capabilities cover, unchanged,
and passes its answers and JSON-RPC errors back as they came. The HTTP side is the SDK's own
streamable HTTP transport, so the scenarios about HTTP itself (sessions, SSE streams, DNS
rebinding) test the SDK there, not graphmem: run them against ``--transport http`` instead.
Log notifications of the child are not forwarded (one child, many sessions).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from mcp import Client, StdioServerParameters
from mcp.server.lowlevel.server import Server
from mcp.types import SetLevelRequestParams


def bridge(command: list[str]) -> Server:
    """A server forwarding every request to one stdio child running ``command``."""
    # The whole environment: the SDK passes a child only a few variables by default.
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    held: dict[str, Any] = {}

    @asynccontextmanager
    async def child(_: Server):
        async with Client(params, mode="legacy") as client:
            held["client"] = client
            yield {}

    def session():
        return held["client"].session

    async def list_tools(ctx, p):
        return await session().list_tools(params=p)

    async def call_tool(ctx, p):
        return await session().call_tool(p.name, p.arguments)

    async def list_resources(ctx, p):
        return await session().list_resources(params=p)

    async def list_templates(ctx, p):
        return await session().list_resource_templates(params=p)

    async def read_resource(ctx, p):
        return await session().read_resource(p.uri)

    async def list_prompts(ctx, p):
        return await session().list_prompts(params=p)

    async def get_prompt(ctx, p):
        return await session().get_prompt(p.name, p.arguments)

    async def complete(ctx, p):
        given = p.context.arguments if p.context is not None else None
        return await session().complete(p.ref, p.argument.model_dump(), given)

    async def set_level(ctx, p):
        return await session().set_logging_level(p.level)

    # Capabilities follow from the handlers; the child's decide which exist. The child runs
    # only once the app starts, so each handler is registered and the unsupported ones are
    # removed then (``prune``).
    server = Server(
        "graphmem-stdio-bridge",
        lifespan=child,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # Not on_set_logging_level=: the SDK warns that logging is deprecated (protocol 2026-07-28).
    server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    server.held = held  # type: ignore[attr-defined]
    return server


def prune(server: Server) -> None:
    """Drop the handlers of what the child does not offer, and take its name and version."""
    client = server.held["client"]  # type: ignore[attr-defined]
    caps = client.server_capabilities
    wanted = {
        "tools/list": caps.tools,
        "tools/call": caps.tools,
        "resources/list": caps.resources,
        "resources/templates/list": caps.resources,
        "resources/read": caps.resources,
        "prompts/list": caps.prompts,
        "prompts/get": caps.prompts,
        "completion/complete": caps.completions,
        "logging/setLevel": caps.logging,
    }
    for method, offered in wanted.items():
        if offered is None:
            server._request_handlers.pop(method, None)
    info = client.server_info
    if info is not None:
        server.name, server.version = info.name, info.version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--stdio", required=True, help="the stdio server's command line")
    args = parser.parse_args()
    command = shlex.split(args.stdio)
    server = bridge(command)
    app = server.streamable_http_app(host=args.host)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_):
        async with inner(app_):
            prune(server)
            print(f"bridge on http://{args.host}:{args.port}/mcp -> {args.stdio}", file=sys.stderr)
            yield

    app.router.lifespan_context = lifespan
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
