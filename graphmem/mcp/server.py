"""graphmem as an MCP server on the official ``mcp`` SDK (2.x ``MCPServer``): the tools of
``tools``, the resources, prompt and completion of ``surface`` and the logging of
``session_log``, served over stdio or streamable HTTP.

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
import time
from collections.abc import Callable
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult
from pydantic import ValidationError

import graphmem
from graphmem.api import GraphMem
from graphmem.domain.models import ApiKey
from graphmem.errors import REPORTED, error_line, one_line
from graphmem.mcp import session_log
from graphmem.mcp.auth import BearerAuth
from graphmem.mcp.config import CALLER, McpConfig
from graphmem.mcp.surface import PROMPT, Surface
from graphmem.mcp.surface import install as install_surface
from graphmem.mcp.tools import FactIn, MemoryTools

log = logging.getLogger("graphmem.mcp")

__all__ = ["CALLER", "BearerAuth", "FactIn", "MCPServer", "McpConfig", "build_server", "http_app", "run_server"]


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


class _Server(MCPServer):
    """The SDK's server with its own refusals (an unknown tool, arguments that fail a tool's
    input schema) worded as one line like graphmem's: the SDK writes pydantic's report, one
    line per field and more."""

    #: Each tool's argument names: the SDK ignores others, so a misspelt ``as_of`` would answer
    #: as of now instead of refusing.
    arguments: dict[str, frozenset[str]]  # set by build_server

    #: The resources, prompt and completion (``surface``) and the sessions' logging
    #: (``session_log``); set by build_server.
    surface: Surface
    log: session_log.SessionLog

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        result, level = await self._call_tool(name, arguments, *args, **kwargs)
        context = args[0] if args else kwargs.get("context")
        ms = round((time.monotonic() - started) * 1000, 1)
        await self.log.after_call(context, name, arguments or {}, result, level, ms)
        return result

    async def _call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> tuple[Any, str]:
        """The answer, and the level of its log line if it is a refusal (a crash: error)."""
        known = self.arguments.get(name)
        unknown = sorted(set(arguments or {}) - known) if known is not None else []
        if known is not None and unknown:
            message = f"{unknown[0]}: not an argument of {name} (it takes {', '.join(sorted(known))})"
            return _refusal(one_line(message)), "warning"
        try:
            return await super().call_tool(name, arguments, *args, **kwargs), "warning"
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return _refusal(error_line(cause)), "warning"
            if cause is not None:  # a crash: the caller gets one line, the server log the traceback
                log.error("tool %s failed", name, exc_info=cause)
                return _refusal(error_line(exc)), "error"
            return _refusal(error_line(exc)), "warning"

    async def get_prompt(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The SDK's, but an unknown prompt is -32602 (the SDK answers error code 0)."""
        if self._prompt_manager.get_prompt(name) is None:
            raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}: this server has {PROMPT!r}")
        return await super().get_prompt(name, *args, **kwargs)


def build_server(mem_factory: Callable[[], GraphMem], config: McpConfig) -> MCPServer:
    """An MCP server whose tools read and write the memory ``mem_factory`` returns (called
    once, at the first tool call; the caller closes that GraphMem)."""
    tools = MemoryTools(mem_factory, config)
    instructions = (
        "graphmem: temporal memory. `remember` what the user says; `recall` or `assemble` before "
        "answering; `history` and `explain` show how a fact changed and why. Every fact keeps both "
        f"time axes, so as_of/known_at replay any past moment. Default subject: {config.subject}."
    )
    server = _Server(config.name, instructions=instructions, version=graphmem.__version__)
    server.arguments = {}
    for name, function in vars(MemoryTools).items():
        if hasattr(function, "mcp_tool"):
            annotations, description = function.mcp_tool
            server.arguments[name] = frozenset(inspect.signature(getattr(tools, name)).parameters)
            server.add_tool(
                _answering(name, getattr(tools, name)), name=name, description=description, annotations=annotations
            )
    server.surface = install_surface(server, tools)
    server.log = session_log.install(server)
    return server


def run_server(
    server: MCPServer,
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
    server: MCPServer,
    host: str = "127.0.0.1",
    token: str | None = None,
    authenticate: Callable[[str], ApiKey | None] | None = None,
) -> Callable:
    """The ASGI app ``run_server`` serves over HTTP: the SDK's streamable HTTP app at /mcp,
    behind ``BearerAuth`` when there is a ``token``."""
    app: Callable = server.streamable_http_app(host=host)
    if token is not None:
        app = BearerAuth(app, token, authenticate or (lambda _: None))
    return app
