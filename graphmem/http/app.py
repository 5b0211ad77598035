"""The HTTP app: ``create_app`` wraps the ``/v1`` routes (``graphmem.http.routes``) in the
middleware of ``guard``, the error handlers of ``errors``, the health probes, ``/docs`` and the
memory browser page."""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from contextlib import asynccontextmanager, suppress
from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

import graphmem
from graphmem.api import GraphMem
from graphmem.errors import GraphMemError
from graphmem.http import schemas
from graphmem.http.config import HttpConfig
from graphmem.http.errors import ApiError, answers, install, refusal_of
from graphmem.http.errors import body as error_body
from graphmem.http.guard import AccessLog, Authenticate, BodyLimit, Gate, Headers, LoopbackHost, RawPath
from graphmem.http.jobs import Jobs
from graphmem.http.metrics import IndexCollector, metrics, observe_request
from graphmem.http.routes import ROUTERS

__all__ = ["HttpConfig", "create_app"]

STATIC = Path(__file__).parent / "static"
#: Swagger UI's script and styles, as the fastapi-offline package carries them (from its npm release).
SWAGGER_UI = Path(str(files("fastapi_offline") / "static"))
#: Seconds /readyz waits for the checks: a probe must answer while the driver still retries
#: an unreachable Neo4j (for up to 30 s).
READY_WITHIN = 10.0
#: Seconds a /readyz answer stands: probes need no key, so they must not be a way to load Neo4j.
READY_FOR = 5.0
#: Threads that look keys up, beside the gate's: a request with a made-up key never takes (or
#: waits for) a place of keyed work.
KEY_LOOKUPS = 2
#: Live tokens remembered for the lookups of their own (the most recently used).
LIVE_TOKENS = 1024


def create_app(factory: Callable[[], GraphMem], config: HttpConfig | None = None, owned: bool = False) -> FastAPI:
    """The API, its probes and the browser page around the ``GraphMem`` that ``factory``
    returns (called once, at startup; closed at shutdown when ``owned``, else by the caller
    after the server stops)."""
    config = config or HttpConfig()
    live: OrderedDict[str, None] = OrderedDict()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # Thread pools for one run: an app started again (a second test client over it) gets
        # new ones, not the pools the last shutdown closed.
        state = app.state
        state.gate = Gate(config.concurrency, config.timeout, config.queue, share=config.key_concurrency)
        state.keys = Gate(KEY_LOOKUPS, config.timeout, config.queue)
        # Tokens that were live when last looked up are looked up again (revocation is checked
        # every time) on threads of their own: a flood of made-up keys fills the line above, not
        # this one. Only the token's holder can put it here: it is found by its digest.
        state.known = Gate(KEY_LOOKUPS, config.timeout, config.queue)
        state.readiness = Readiness(min(READY_WITHIN, config.timeout))
        state.mem = factory()
        state.index_metrics = IndexCollector(state.mem.index_status)
        try:
            yield
        finally:
            with suppress(GraphMemError):
                await state.jobs.close(state.mem)
            for pool in (state.gate, state.keys, state.known, state.readiness.gate):
                pool.close()
            if owned:
                state.mem.close()

    # FastAPI's own /docs and /redoc pages load their scripts from a CDN (blank offline, and a
    # third party's code on this origin) with an inline bootstrap the CSP refuses: /docs is ours
    # below, on Swagger UI's files from the fastapi-offline package. No /redoc: Redoc injects its
    # styles as inline <style> elements, which the CSP refuses too.
    app = FastAPI(
        title="graphmem",
        version=graphmem.__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description=(
            "Temporal memory for LLM agents. Every /v1 request carries `Authorization: Bearer <key>` "
            '(`graphmem keys create`); errors are `{"error": {"code", "message"}}`.'
        ),
    )
    app.state.config = config
    app.state.jobs = Jobs()
    install(app)

    async def authenticate(token: str) -> Any:
        # Keys are checked in a middleware, outside the routes' error handlers: a database that
        # is down must still answer 503, not 500.
        seen = hashlib.sha256(token.encode()).hexdigest()
        state = app.state
        try:
            key = await (state.known if seen in live else state.keys).run(state.mem.authenticate, token)
        except GraphMemError as exc:
            raise refusal_of(exc) from exc
        if key is None:
            live.pop(seen, None)
        else:
            live[seen] = None
            live.move_to_end(seen)
            if len(live) > LIVE_TOKENS:
                live.popitem(last=False)
        return key

    app.add_middleware(RawPath)
    app.add_middleware(BodyLimit, limit=config.max_body)
    app.add_middleware(Authenticate, authenticate=authenticate, open_keys=not config.auth)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    if config.loopback:
        app.add_middleware(LoopbackHost)
    app.add_middleware(Headers)
    app.add_middleware(AccessLog, observe=observe_request)

    async def admin_key(header: str) -> Any:
        scheme, _, token = header.partition(" ")
        return await authenticate(token.strip()) if scheme.lower() == "bearer" and token.strip() else None

    app.state.admin_key = admin_key

    app.get(
        "/healthz",
        tags=["probes"],
        summary="200 while the process runs",
        response_model=schemas.Health,
        responses=answers(),
    )(healthz)
    app.get(
        "/readyz",
        tags=["probes"],
        summary="200 when Neo4j answers and the index is usable, else 503",
        response_model=schemas.Ready,
        responses={**answers(), 503: {"model": schemas.NotReady, "description": "Not ready, with the reason."}},
    )(readyz)
    app.get("/metrics", include_in_schema=False)(metrics)
    app.get("/", include_in_schema=False)(page)
    app.get("/docs", include_in_schema=False)(docs)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/docs/assets", StaticFiles(directory=SWAGGER_UI), name="swagger-ui")
    for router in ROUTERS:
        app.include_router(router)
    return app


async def healthz() -> dict:
    return {"status": "ok"}


async def readyz(request: Request) -> JSONResponse:
    status, answer = await request.app.state.readiness.answer(request.app.state.mem.doctor)
    return JSONResponse(answer, status_code=status)


class Readiness:
    """/readyz's answer, which needs no key: the checks run on a thread of their own (never in
    the gate, before keyed work), for one probe at a time, and what they found stands
    ``READY_FOR`` seconds for every probe."""

    def __init__(self, within: float):
        self.within = within
        # No line: checks still running after their time (an unreachable Neo4j) are not doubled.
        self.gate = Gate(concurrency=1, timeout=within, queue=0)
        self.lock = asyncio.Lock()
        self.last: tuple[int, dict] = (503, {})
        self.since = -math.inf

    async def answer(self, doctor: Callable[[], dict]) -> tuple[int, dict]:
        """(status, body) of the last checks, run again when they are over ``READY_FOR`` s old."""
        async with self.lock:
            if time.monotonic() - self.since >= READY_FOR:
                self.last, self.since = await self.check(doctor), time.monotonic()
            return self.last

    async def check(self, doctor: Callable[[], dict]) -> tuple[int, dict]:
        try:
            report = await self.gate.run(doctor)
        except ApiError:  # over time; or refused, as the last checks, over time, still run
            return 503, error_body(
                "not_ready", f"the checks did not finish within {self.within:g} s: is Neo4j reachable?"
            )
        if report["ok"]:  # no details: the probe needs no key, and they name the server and its version
            return 200, {"ok": True, "checks": [{"check": c["check"], "ok": True} for c in report["checks"]]}
        reason = "; ".join(f"{c['check']}: {c['detail']}" for c in report["checks"] if not c["ok"])
        return 503, {**error_body("not_ready", reason), "checks": report["checks"]}


async def page() -> FileResponse:
    return FileResponse(STATIC / "index.html")


async def docs() -> FileResponse:
    return FileResponse(STATIC / "docs.html")
