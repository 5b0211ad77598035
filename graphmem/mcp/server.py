"""graphmem as an MCP server on the official ``mcp`` SDK (mcp 1.x ``FastMCP`` or 2.x
``MCPServer``, driven the same way): the tools of ``tools`` served over stdio or streamable HTTP.

    from graphmem import GraphMem
    from graphmem.mcp.server import McpConfig, build_server, run_server

    with GraphMem.connect() as mem:
        server = build_server(lambda: mem, McpConfig(subject="user:alice"))
        run_server(server, "stdio")

(``graphmem mcp serve`` does exactly this; docs/mcp.md.) A failure comes back as an MCP tool
error (``isError: true``) whose text is the line the CLI prints after ``error:``. Over HTTP,
``auth.BearerAuth`` checks every request. Needs the extra: ``pip install 'graphmem[mcp]'``.
"""

from __future__ import annotations

import functools
import inspect
import logging
import socket
from collections.abc import Callable
from typing import Any, Literal

from pydantic import ValidationError

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult

import graphmem
from graphmem.api import GraphMem
from graphmem.domain.models import ApiKey
from graphmem.errors import REPORTED, error_line, one_line
from graphmem.mcp.auth import BearerAuth
from graphmem.mcp.config import CALLER, McpConfig
from graphmem.mcp.tools import FactIn, MemoryTools

log = logging.getLogger("graphmem.mcp")

__all__ = ["CALLER", "BearerAuth", "FactIn", "FastMCP", "McpConfig", "build_server", "http_app", "run_server"]


def _refusal(message: str) -> CallToolResult:
    return CallToolResult.model_validate({"content": [{"type": "text", "text": message}], "isError": True})


def _answering(name: str, method: Callable[..., dict]) -> Callable[..., Any]:
    """``method`` with graphmem's errors turned into a tool error carrying their one line."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except REPORTED as exc:
            message = error_line(exc)
            log.info("tool %s refused: %s", name, message)
            return _refusal(message)

    return call


class _Server(FastMCP):
    """The SDK's server with its own refusals (an unknown tool, arguments that fail a tool's
    input schema) worded as one line like graphmem's: the SDK writes pydantic's report, one
    line per field and more."""

    #: Each tool's argument names: the SDK ignores others, so a misspelt ``as_of`` would answer
    #: as of now instead of refusing.
    arguments: dict[str, frozenset[str]]  # set by build_server

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        known = self.arguments.get(name)
        unknown = sorted(set(arguments or {}) - known) if known is not None else []
        if known is not None and unknown:
            return _refusal(one_line(f"{unknown[0]}: not an argument of {name} (it takes {', '.join(sorted(known))})"))
        try:
            return await super().call_tool(name, arguments, *args, **kwargs)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return _refusal(error_line(cause))
            if cause is not None:  # a crash: the caller gets one line, the server log the traceback
                log.error("tool %s failed", name, exc_info=cause)
            return _refusal(error_line(exc))


def build_server(mem_factory: Callable[[], GraphMem], config: McpConfig) -> FastMCP:
    """An MCP server whose tools read and write the memory ``mem_factory`` returns (called
    once, at the first tool call; the caller closes that GraphMem)."""
    tools = MemoryTools(mem_factory, config)
    instructions = (
        "graphmem: temporal memory. `remember` what the user says; `recall` or `assemble` before "
        "answering; `history` and `explain` show how a fact changed and why. Every fact keeps both "
        f"time axes, so as_of/known_at replay any past moment. Default subject: {config.subject}."
    )
    if "version" in inspect.signature(FastMCP).parameters:  # mcp 2.x: serverInfo.version
        server = _Server(config.name, instructions=instructions, version=graphmem.__version__)
    else:  # pragma: no cover - mcp 1.x reports the low-level server's version
        server = _Server(config.name, instructions=instructions)
        server._mcp_server.version = graphmem.__version__
    server.arguments = {}
    for name, function in vars(MemoryTools).items():
        if hasattr(function, "mcp_tool"):
            annotations, description = function.mcp_tool
            server.arguments[name] = frozenset(inspect.signature(getattr(tools, name)).parameters)
            server.add_tool(
                _answering(name, getattr(tools, name)), name=name, description=description, annotations=annotations
            )
    return server


def run_server(
    server: FastMCP,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    sock: socket.socket | None = None,
    token: str | None = None,
    authenticate: Callable[[str], ApiKey | None] | None = None,
) -> None:
    """Serve over stdio, or streamable HTTP at http://HOST:PORT/mcp (on ``sock`` when given,
    already bound), until stopped. Over HTTP with a ``token``, requests need it or an API key
    (``BearerAuth``); without one the endpoint is open."""
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    config = uvicorn.Config(http_app(server, host, token, authenticate), host=host, port=port, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock] if sock is not None else None)


def http_app(
    server: FastMCP,
    host: str = "127.0.0.1",
    token: str | None = None,
    authenticate: Callable[[str], ApiKey | None] | None = None,
) -> Callable:
    """The ASGI app ``run_server`` serves over HTTP: the SDK's streamable HTTP app at /mcp,
    behind ``BearerAuth`` when there is a ``token``."""
    app: Callable
    if "host" in inspect.signature(server.streamable_http_app).parameters:  # mcp 2.x
        app = server.streamable_http_app(host=host)
    else:  # pragma: no cover - mcp 1.x keeps the host in its settings
        server.settings.host = host
        app = server.streamable_http_app()
    if token is not None:
        app = BearerAuth(app, token, authenticate or (lambda _: None))
    return app
