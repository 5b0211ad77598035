"""MCP logging: after ``logging/setLevel``, each tool call of that session sends
``notifications/message`` at or above the level: a refusal (warning) or a crash (error) with
its message, what a write did (info), every call with its duration (debug). On protocol
2026-07-28, where the method is gone, a request asks for its own lines with the
``io.modelcontextprotocol/logLevel`` key of its ``_meta``.

Levels are kept per streamable-HTTP session (its ``mcp-session-id``); over stdio a process
serves one client, so it keeps one level.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any

from mcp.types import LoggingMessageNotification, LoggingMessageNotificationParams, SetLevelRequestParams

#: The logging levels, least severe first (RFC 5424, as the protocol orders them).
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
#: Sessions whose level is remembered at once (the oldest is forgotten past it).
MAX_SESSIONS = 10_000
#: The tools whose calls change what is stored: their effect is logged at info.
WRITES = frozenset({"remember", "assemble", "blocks_set", "forget", "episode_delete"})


def request_of(context: Any) -> Any:
    """The SDK's request context behind a tool call's ``Context`` (None outside a request)."""
    try:
        return context.request_context if context is not None else None
    except ValueError:
        return None


def session_key(ctx: Any) -> str | None:
    """The streamable-HTTP session of a request (its ``mcp-session-id``); None over stdio."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    keys = ("decisions", "unit_ids", "forgotten", "subject", "label", "trace")
    return {k: result[k] for k in keys if k in result}


class SessionLog:
    """The level each session asked for, and the log lines of its tool calls."""

    def __init__(self) -> None:
        self.levels: OrderedDict[str | None, str] = OrderedDict()

    async def set_level(self, ctx: Any, params: SetLevelRequestParams) -> dict[str, Any]:
        """The ``logging/setLevel`` handler: remember the session's level."""
        key = session_key(ctx)
        self.levels[key] = params.level
        self.levels.move_to_end(key)
        while len(self.levels) > MAX_SESSIONS:
            self.levels.popitem(last=False)
        return {}

    def wanted(self, ctx: Any) -> str | None:
        """The least severe level the client asked for: with ``logging/setLevel`` for its
        session, or in the request's ``_meta``."""
        return self.levels.get(session_key(ctx)) or (getattr(ctx, "meta", None) or {}).get(LOG_LEVEL_META_KEY)

    async def log(self, ctx: Any, level: str, data: dict[str, Any]) -> None:
        """Send ``data`` to the session of ``ctx`` if it asked for ``level`` or less (a line
        that cannot be sent is dropped: the call's answer matters more)."""
        wanted = self.wanted(ctx)
        if wanted not in LEVELS or LEVELS.index(level) < LEVELS.index(wanted):
            return
        params = LoggingMessageNotificationParams.model_validate({"level": level, "logger": "graphmem", "data": data})
        with contextlib.suppress(Exception):
            await ctx.session.send_notification(
                LoggingMessageNotification(params=params), related_request_id=ctx.request_id
            )

    async def after_call(
        self, context: Any, name: str, arguments: dict[str, Any], result: Any, level: str, ms: float
    ) -> None:
        """Log one tool call to its session: a refusal (``level`` warning) or a crash (error)
        with its message, what a write did (info), and every call with its duration (debug)."""
        ctx = request_of(context)
        if ctx is None or self.wanted(ctx) not in LEVELS:
            return
        answer = result.model_dump(by_alias=True, mode="json") if hasattr(result, "model_dump") else {}
        if answer.get("isError"):
            text = "".join(block.get("text", "") for block in answer.get("content", []))
            await self.log(ctx, level, {"tool": name, "refused": text})
        elif name in WRITES:
            await self.log(ctx, "info", {"tool": name, "did": _summary(answer.get("structuredContent") or {})})
        await self.log(ctx, "debug", {"tool": name, "arguments": sorted(arguments), "ms": ms})


def install(server: Any) -> SessionLog:
    """Register ``logging/setLevel`` on ``server`` (an ``MCPServer``): it has no public hook
    for it (the SDK deprecates logging as of protocol 2026-07-28); the handler's presence is
    what advertises the capability."""
    log = SessionLog()
    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, log.set_level)
    return log
