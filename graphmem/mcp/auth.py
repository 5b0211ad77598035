"""Who may call MCP over HTTP: ``BearerAuth``, the ASGI middleware that checks every request's
bearer token (the server's own, or an API key whose subjects then bound the calls)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable

import anyio
from starlette.responses import JSONResponse

from graphmem.domain.models import ApiKey
from graphmem.errors import BackendError, Unavailable, error_line
from graphmem.mcp.config import CALLER

log = logging.getLogger("graphmem.mcp")


class BearerAuth:
    """ASGI middleware for MCP over HTTP: every request carries ``Authorization: Bearer
    <token>``, either ``token`` (compared in constant time) or a live API key (``authenticate``
    returns it, its subjects then bound the calls through ``CALLER``); anything else is 401."""

    def __init__(self, app: Callable, token: str, authenticate: Callable[[str], ApiKey | None]):
        self.app, self.token, self.authenticate = app, token, authenticate

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, given = header.partition(" ")
        given = given.strip()
        key = None
        if scheme.lower() != "bearer" or not given:
            await _unauthorized(scope, receive, send, "missing bearer token: send Authorization: Bearer <token>")
            return
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            try:
                key = await anyio.to_thread.run_sync(self.authenticate, given)
            except BackendError as exc:
                # The key is looked up outside the tools' error handling: a database that is
                # down must still answer 503 with its one line, as the HTTP API does, not 500.
                log.warning("key lookup failed: %s", error_line(exc))
                status, code = (503, "unavailable") if isinstance(exc, Unavailable) else (502, "backend_error")
                await _refuse(scope, receive, send, status, code, error_line(exc))
                return
            if key is None:
                await _unauthorized(scope, receive, send, "unknown bearer token or API key")
                return
        mark = CALLER.set(key)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(mark)


async def _refuse(
    scope: dict,
    receive: Callable,
    send: Callable,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
) -> None:
    response = JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)
    await response(scope, receive, send)


async def _unauthorized(scope: dict, receive: Callable, send: Callable, message: str) -> None:
    await _refuse(scope, receive, send, 401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})
