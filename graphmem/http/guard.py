"""What every request passes before and around a route: plain ASGI middlewares, and ``Gate``.

Order, outermost first (``app.create_app`` stacks them): ``AccessLog`` -> ``Headers`` ->
(``LoopbackHost``, on a loopback address) -> (CORS, when configured) -> ``Authenticate`` ->
``BodyLimit`` -> ``RawPath`` -> the routes. So a request without a valid key is refused before
its body is read, and nothing of the memory is read before the key and its subject are checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any, TypeVar
from urllib.parse import unquote

from starlette.routing import Match

from graphmem.domain.keys import holds
from graphmem.domain.models import Scope
from graphmem.errors import quoted
from graphmem.http.errors import ApiError, respond

T = TypeVar("T")
ASGI = Callable[[dict, Callable, Callable], Awaitable[None]]

access_log = logging.getLogger("graphmem.http.access")

#: Every page's policy (the memory browser, /docs): only this origin's own files run, nothing
#: inline, no framing.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class Gate:
    """At most ``concurrency`` requests at once, on as many threads (the facade is
    synchronous), at most ``share`` of them one caller's, each within ``timeout`` seconds; the
    others wait in line, at most ``queue`` of them, else 503 ``busy`` (docs/http.md, "Load").

    - A freed place goes to the waiting caller with the fewest requests running (then the
      longest waiting).
    - A request still waiting at its timeout is dropped; one running finishes in the
      background and keeps its place.
    """

    def __init__(self, concurrency: int, timeout: float, queue: int, share: int | None = None):
        self.timeout, self.queue, self.limit = timeout, queue, concurrency
        self.share = min(share or concurrency, concurrency)
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="graphmem-http")
        self._running: Counter[str] = Counter()
        self._line: list[tuple[str, asyncio.Future]] = []

    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        who: str = "",
        on_time_out: Callable[[asyncio.Future], Awaitable[T]] | None = None,
    ) -> T:
        """``fn(*args)`` on the pool as ``who``'s request. When it is still running at the
        timeout: ``on_time_out(its future)`` answers, else 503 saying it runs on."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        if not self._admits(who):
            if len(self._line) >= self.queue:
                raise ApiError(
                    503,
                    "busy",
                    f"{sum(self._running.values()) + len(self._line)} requests in progress or waiting: retry shortly",
                    {"Retry-After": "1"},
                )
            place: asyncio.Future = loop.create_future()
            self._line.append((who, place))
            try:
                await asyncio.wait_for(place, self.timeout)  # granted: the place is taken for it
            except BaseException as exc:  # over time, or its client went away
                if place.done() and not place.cancelled():
                    self._release(who)  # granted as it gave up: the place goes on
                else:
                    self._line.remove((who, place))
                if isinstance(exc, asyncio.TimeoutError):
                    raise ApiError(
                        503,
                        "timeout",
                        f"the request took longer than {self.timeout:g} s; it did not start",
                        {"Retry-After": "1"},
                    ) from None
                raise
        else:
            self._running[who] += 1
        future = self.pool.submit(fn, *args)
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release, who))
        running = asyncio.wrap_future(future)
        try:
            return await asyncio.wait_for(asyncio.shield(running), max(0.0, self.timeout - (loop.time() - began)))
        except TimeoutError:
            if on_time_out is not None:
                return await on_time_out(running)
            raise ApiError(
                503,
                "timeout",
                f"the request took longer than {self.timeout:g} s; it runs on and may "
                "finish: a write sent again with the same episode ids completes it (what "
                "is stored is skipped)",
                {"Retry-After": "1"},
            ) from None

    def _admits(self, who: str) -> bool:
        """Whether ``who`` may start now: a place is free and its share not used up. (Nobody
        in line could take that place: ``_release`` hands each freed one on while it can.)"""
        return sum(self._running.values()) < self.limit and self._running[who] < self.share

    def _release(self, who: str) -> None:
        self._running[who] -= 1
        if not self._running[who]:
            del self._running[who]
        while self._line and sum(self._running.values()) < self.limit:
            # A place cancelled at its timeout may still be in line until its request wakes.
            waiting = [
                (self._running[w], i)
                for i, (w, place) in enumerate(self._line)
                if self._running[w] < self.share and not place.done()
            ]
            if not waiting:
                break
            who_next, place = self._line.pop(min(waiting)[1])
            self._running[who_next] += 1
            place.set_result(None)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def on_start(send: Callable, edit: Callable[[dict], dict]) -> Callable:
    """``send`` with ``edit`` applied to the response's start message (status and headers)."""

    async def sending(message: dict) -> None:
        await send(edit(message) if message["type"] == "http.response.start" else message)

    return sending


async def _send_error(
    send: Callable, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> None:
    response = respond(status, code, message, headers)
    await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> dict:  # pragma: no cover - a JSONResponse never reads the request
    return {"type": "http.disconnect"}


class Middleware:
    """A plain ASGI middleware that looks at HTTP requests only (lifespan passes through)."""

    def __init__(self, app: ASGI):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        else:
            await self.handle(scope, receive, send)

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        raise NotImplementedError


class RawPath(Middleware):
    """Route on the path as sent, so an id or subject holding ``/`` (sent as ``%2F``) stays
    one path segment; each route unquotes its path parameters once (``app.segment``)."""

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        raw = scope.get("raw_path")
        if raw:
            with suppress(UnicodeDecodeError):  # not a percent-encoded path: keep the server's reading
                scope["path"] = raw.decode("ascii")
        await self.app(scope, receive, send)


class BodyLimit(Middleware):
    """A body over ``limit`` bytes is refused with 413: at once when its Content-Length says
    so, else as soon as that many bytes have arrived. The body is read here (it is at most
    ``limit`` bytes) and handed on whole."""

    def __init__(self, app: ASGI, limit: int):
        super().__init__(app)
        self.limit = limit

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away: let the app see it
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.limit:
                await self._refuse(send)
                return
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return whole
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Callable) -> None:
        await _send_error(send, 413, "payload_too_large", f"the request body is over {self.limit} bytes")


#: A Host header: a name or IPv4 address, or an IPv6 address in brackets, and maybe a port.
HOST = re.compile(r"(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<name>[^:\[\]]+))(?::[0-9]{1,5})?")


def local_host(host: str) -> bool:
    """``host`` (a Host header) names this machine: ``localhost`` or a loopback address."""
    match = HOST.fullmatch(host)
    if match is None:
        return False
    name = match["v6"] or match["name"]
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class LoopbackHost(Middleware):
    """On a loopback address, only requests for this machine (``Host: localhost``, or a
    loopback address, with the port) are answered, on every route and with or without keys:
    a page elsewhere whose own name was made to resolve to 127.0.0.1 (DNS rebinding) sends its
    name, and is refused with 421 before anything runs."""

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if not local_host(host):
            await _send_error(
                send,
                421,
                "misdirected_request",
                f"Host {quoted(host)} is not this machine: this server answers requests for "
                "localhost, 127.0.0.1 or [::1] only",
            )
            return
        await self.app(scope, receive, send)


class Authenticate(Middleware):
    """Every ``/v1`` request carries ``Authorization: Bearer <key>``: missing or unknown -> 401;
    a subject in the path (``/v1/subjects/{subject}/...``) the key does not hold -> 403;
    ``/v1/import`` needs an admin key. The live key goes to ``scope["state"]["key"]``.

    ``open_keys`` (``--insecure-no-auth``) skips all of it: every request may do anything."""

    def __init__(self, app: ASGI, authenticate: Callable[[str], Awaitable[Any]], open_keys: bool = False):
        super().__init__(app)
        self.authenticate, self.open_keys = authenticate, open_keys

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if self.open_keys or not (path == "/v1" or path.startswith("/v1/")):
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await _send_error(
                send,
                401,
                "unauthorized",
                "missing API key: send Authorization: Bearer <key>",
                {"WWW-Authenticate": "Bearer"},
            )
            return
        try:
            key = await self.authenticate(token.strip())
        except ApiError as exc:
            await _send_error(send, exc.status, exc.code, exc.message, exc.headers)
            return
        if key is None:
            await _send_error(send, 401, "unauthorized", "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
            return
        # Set before the subject check, so the access log names the key a 403 refused.
        scope.setdefault("state", {})["key"] = key
        refusal = self.refusal(key, path.split("?")[0].split("/")) if routed(scope, path) else None
        if refusal:
            await _send_error(send, *refusal)
            return
        await self.app(scope, receive, send)

    @staticmethod
    def refusal(key: Any, parts: list[str]) -> tuple[int, str, str] | None:
        """Why ``key`` may not go to this path (``["", "v1", ...]``), or None."""
        if parts[2:3] == ["import"] and not key.admin:
            return 403, "forbidden", f"key {key.id} is not an admin key: importing needs one"
        if parts[2:3] == ["subjects"] and len(parts) > 3 and parts[3]:
            subject = unquote(parts[3])
            try:
                scope = Scope.parse(subject)
            except ValueError as exc:
                return 422, "invalid_input", str(exc)
            if not holds(key, scope):
                return 403, "forbidden", f"key {key.id} does not hold subject {subject}"
        return None


def routed(scope: dict, path: str) -> bool:
    """The request (its method and ``path`` as sent) reaches a route: only then is its subject
    checked, so a method the path does not take is 405 and an unknown path 404 (after the key),
    whatever the subject."""
    probe = {**scope, "path": path}
    return any(route.matches(probe)[0] is Match.FULL for route in scope["app"].router.routes)


class Headers(Middleware):
    """Security headers on every response: no sniffing, no referrer, no framing, the strict
    CSP, and ``no-store`` on the API's answers."""

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        extra = [
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY"),
            (b"content-security-policy", CSP.encode()),
        ]
        if scope["path"].startswith("/v1"):
            extra.append((b"cache-control", b"no-store"))
        await self.app(scope, receive, on_start(send, lambda m: {**m, "headers": [*m.get("headers", []), *extra]}))


#: An incoming ``X-Request-Id`` kept as the request's id: short, printable, no spaces or quotes.
REQUEST_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")


class AccessLog(Middleware):
    """One JSON line per request on the ``graphmem.http.access`` logger: its id (also the
    response's ``X-Request-Id``: the caller's own when sane, else a new one), method, the
    route's path template (never the path itself, which names subjects and ids), status,
    milliseconds and the key id; nothing of the memory's text. ``observe`` is told each too."""

    def __init__(self, app: ASGI, observe: Callable[[str, str, int, float], None] | None = None):
        super().__init__(app)
        self.observe = observe

    async def handle(self, scope: dict, receive: Callable, send: Callable) -> None:
        began, status = time.perf_counter(), [500]
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex

        def seen(message: dict) -> dict:
            status[0] = message["status"]
            return {**message, "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())]}

        try:
            await self.app(scope, receive, on_start(send, seen))
        finally:
            route = getattr(scope.get("route"), "path", "-")
            key = scope.get("state", {}).get("key")
            seconds = time.perf_counter() - began
            if self.observe is not None:
                self.observe(scope["method"], route, status[0], seconds)
            line = {
                "request_id": request_id,
                "method": scope["method"],
                "route": route,
                "status": status[0],
                "ms": round(seconds * 1000, 1),
                "key": key.id if key is not None else None,
            }
            access_log.info("%s", json.dumps(line))
