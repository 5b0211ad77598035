"""The HTTP API's routes (docs/http.md): each a few lines over one ``GraphMem``
method, answered in a ``graphmem.faces.views`` shape, run under the ``Gate`` (concurrency cap and
timeout).

Path parameters arrive as sent (``guard.RawPath``) and are unquoted here once, so subjects and
ids may hold any character (``user%3Aalice``, ``doc%2F7``). A subject's project is the query
parameter ``project``. Times in bodies and queries are ISO 8601 text read as the CLI reads them
(``2021-03-01`` is midnight UTC).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

import graphmem
from graphmem.api import MAX_BUDGET, MAX_OFFSET, GraphMem, as_scope
from graphmem.domain.keys import holds, subject_name
from graphmem.domain.models import MAX_QUERY_CHARS, Decision, Episode, MemoryKind, Op, Scope, SubjectType
from graphmem.domain.times import parse_optional_time
from graphmem.errors import GraphMemError, InvalidInput, error_line, quoted
from graphmem.faces import views
from graphmem.faces.episode_lines import (  # the CLI's lines, shared with ingest and import
    episode_from_value,
    json_lines,
)
from graphmem.http import schemas
from graphmem.http.errors import ApiError, answers, install, refusal_of, status_of
from graphmem.http.errors import body as error_body
from graphmem.http.guard import AccessLog, Authenticate, BodyLimit, Gate, Headers, LoopbackHost, RawPath
from graphmem.pipelines import exchange
from graphmem.settings.config import Settings

STATIC = Path(__file__).parent / "static"
#: Swagger UI's script and styles, as the fastapi-offline package carries them (from its npm release).
SWAGGER_UI = Path(str(files("fastapi_offline") / "static"))
#: The actor of writes made by a server without keys (``--insecure-no-auth``).
OPEN_ACTOR = "http"
#: The media type of an export (JSON Lines).
NDJSON = "application/x-ndjson"
#: What an import body may be sent as: never a type a page elsewhere may send without asking
#: first (text/plain, a form), so a browser cannot post an import to a server on this machine.
IMPORT_TYPES = (NDJSON, "application/jsonl", "application/json")
#: Decisions a cursor can page through (``GraphMem.decisions`` reads the newest first).
DECISION_WINDOW = 10_000
#: Seconds /readyz waits for the checks: a probe must answer while the driver still retries
#: an unreachable Neo4j (for up to 30 s).
READY_WITHIN = 10.0
#: Seconds a /readyz answer stands: probes need no key, so they must not be a way to load Neo4j.
READY_FOR = 5.0
#: Threads that look keys up, beside the gate's: a request with a made-up key never takes (or
#: waits for) a place of keyed work.
KEY_LOOKUPS = 2
#: Jobs remembered (a write past its request's time; ``Jobs``).
JOBS_KEPT = 1024
#: Live tokens remembered for the lookups of their own (the most recently used).
LIVE_TOKENS = 1024
#: What a route may answer besides its success (``errors.answers``): every /v1 request is
#: authenticated (401, or 503 when the keys cannot be read) and refused for a query parameter
#: it does not take or given twice (422), one naming a subject is refused
#: for a subject the key does not hold (403) or one that is not TYPE:ID (422), and one with a
#: JSON body for a body that is not one (400), too large (413) or breaking the schema (422).
KEYED = (401, 422, 503)
SUBJECT = (*KEYED, 403, 422)
BODY = (400, 413, 422)
#: A write still running at its request's timeout: a job to poll (``Jobs``).
LATE = {"model": schemas.Job, "description": "Still running at GRAPHMEM_HTTP_TIMEOUT: poll Location, /v1/jobs/{id}."}
#: Statuses of what writes, and of what embeds text or calls a model: a conflict, a backend failing.
WRITE, MODEL = 409, 502


def _default(name: str) -> Any:
    return Settings.model_fields[f"http_{name}"].default


class HttpConfig(BaseModel):
    """What one app accepts (defaults: ``Settings``' ``http_*`` fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    auth: bool = Field(True, description="API keys required (False: --insecure-no-auth).")
    max_body: int = Field(_default("max_body"), ge=1024)
    max_episodes: int = Field(_default("max_episodes"), ge=1)
    timeout: float = Field(_default("timeout"), gt=0)
    concurrency: int = Field(_default("concurrency"), ge=1)
    key_concurrency: int = Field(_default("key_concurrency"), ge=1)
    queue: int = Field(_default("queue"), ge=0)
    cors_origins: tuple[str, ...] = ()
    loopback: bool = Field(
        False,
        description=(
            "Bound to a loopback address: only requests whose Host names this machine are answered "
            "(a page whose name was made to resolve here, DNS rebinding, is refused)."
        ),
    )

    @classmethod
    def from_settings(cls, settings: Settings, auth: bool = True, loopback: bool = False) -> HttpConfig:
        origins = tuple(o.strip() for o in settings.http_cors_origins.split(",") if o.strip())
        return cls(
            auth=auth,
            max_body=settings.http_max_body,
            max_episodes=settings.http_max_episodes,
            timeout=settings.http_timeout,
            concurrency=settings.http_concurrency,
            key_concurrency=settings.http_key_concurrency,
            queue=settings.http_queue,
            cors_origins=origins,
            loopback=loopback,
        )


# -- jobs ---------------------------------------------------------------------------------------
class Jobs:
    """Writes still running when their request's time ran out, each answered 202 with a job to
    poll instead of a 503 whose work goes on. Kept in this process, the ``JOBS_KEPT`` newest; a
    job is seen only by the key that sent it (and admin keys). A write is idempotent by episode
    id, so a lost job is completed by sending the same episodes again."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, tuple[str, Scope, asyncio.Future]] = OrderedDict()

    def add(self, owner: str, scope: Scope, running: asyncio.Future) -> JSONResponse:
        job_id = uuid.uuid4().hex
        self._jobs[job_id] = (owner, scope, running)
        while len(self._jobs) > JOBS_KEPT:
            self._jobs.popitem(last=False)
        return JSONResponse(self.view(job_id), status_code=202, headers={"Location": f"/v1/jobs/{job_id}"})

    def view(self, job_id: str) -> dict:
        _, scope, running = self._jobs[job_id]
        out: dict[str, Any] = {
            "id": job_id,
            "subject": subject_name(scope),
            "project": scope.project_id,
            "status": "running",
        }
        if running.done():
            failure = running.exception()
            if failure is None:
                out.update(status="done", result=running.result())
            else:  # as a request would have been answered, without its log line at every poll
                known = isinstance(failure, (GraphMemError, ValueError))
                out.update(
                    status="failed", **error_body(status_of(failure)[1] if known else "internal", error_line(failure))
                )
        return out

    def get(self, job_id: str, caller: Caller) -> dict:
        found = self._jobs.get(job_id)
        if found is None or not (caller.admin or found[0] == caller.actor):
            raise ApiError(
                404,
                "not_found",
                f"no job {quoted(job_id)} of this key "
                f"(a job lives in the process that began it, among its newest {JOBS_KEPT})",
            )
        return self.view(job_id)


# -- request context --------------------------------------------------------------------------
class Caller:
    """One request's memory, key and gate."""

    def __init__(self, request: Request):
        self.mem: GraphMem = request.app.state.mem
        self.gate: Gate = request.app.state.gate
        self.jobs: Jobs = request.app.state.jobs
        self.config: HttpConfig = request.app.state.config
        self.key = request.scope.get("state", {}).get("key")

    @property
    def actor(self) -> str:
        """Who the request's writes are recorded as: its key id."""
        return self.key.id if self.key is not None else OPEN_ACTOR

    @property
    def admin(self) -> bool:
        return self.key is None or self.key.admin

    async def run(
        self, fn: Callable[..., Any], *args: Any, on_time_out: Callable[[asyncio.Future], Any] | None = None
    ) -> Any:
        return await self.gate.run(fn, *args, who=self.actor, on_time_out=on_time_out)

    def check_shared(self, include_shared: bool) -> None:
        """Refuse (403) ``include_shared`` when the key does not hold the shared subject: it
        reads that subject."""
        if include_shared and self.key is not None and not holds(self.key, self.mem.shared):
            raise ApiError(
                403,
                "forbidden",
                f"key {self.key.id} does not hold subject {subject_name(self.mem.shared)}: include_shared reads it",
            )


#: What /openapi.json says of a subject in a path (documented only: the path is routed as sent,
#: percent-encoded, and ``Scope.parse`` checks it, with rules no pattern can say).
SUBJECT_SCHEMA = {"pattern": f"^({'|'.join(t.value for t in SubjectType)}):"}
#: A time in a query or as text, read by ``parse_optional_time`` (blank: not given).
TIME_SCHEMA = {"format": "date-time"}


def target(
    subject: Annotated[
        str,
        PathParam(
            json_schema_extra=SUBJECT_SCHEMA,
            description=("TYPE:ID, percent-encoded (user%3Aalice); the id is visible text in one script."),
        ),
    ],
    project: Annotated[str | None, Query(description="The subject's project.")] = None,
) -> Scope:
    """The scope a path names: its URL-encoded ``TYPE:ID`` and the ``project`` parameter."""
    return as_scope(unquote(subject), project)


CallerDep = Annotated[Caller, Depends(Caller)]
Target = Annotated[Scope, Depends(target)]


def segment(value: str) -> str:
    """A path parameter as it was meant (sent URL-encoded, routed raw)."""
    return unquote(value)


#: A page's cursor: the ``next_cursor`` of the page before (digits).
Cursor = Annotated[
    str | None,
    Query(
        json_schema_extra={"pattern": f"^[0-9]{{0,{len(str(MAX_OFFSET)) - 1}}}$"},
        description="The next_cursor of the page before.",
    ),
]


def offset_of(cursor: str | None) -> int:
    if not cursor:
        return 0
    # Digits of the offsets the facade takes (bounded before int() reads a long string).
    if not (
        cursor.isascii() and cursor.isdigit() and len(cursor) <= len(str(MAX_OFFSET)) and int(cursor) <= MAX_OFFSET
    ):
        raise ApiError(422, "invalid_input", "cursor: not a cursor this API returned")
    return int(cursor)


# -- request bodies ---------------------------------------------------------------------------
def _text_time(value: Any) -> Any:
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 string, e.g. 2021-03-01")
    return parse_optional_time(value)


TextTime = Annotated[datetime | None, BeforeValidator(_text_time)]
AsOf = Annotated[TextTime, Field(description="World time T, ISO 8601 (2021-03-01 is midnight UTC) [default: now].")]
KnownAt = Annotated[TextTime, Field(description="System time S: what was known then, ISO 8601 [default: now].")]
Hops = Annotated[int, Field(ge=0, le=3, strict=True, description="Graph hops from the top hits (0..3).")]
IncludeShared = Annotated[
    bool, Field(strict=True, description="Also read the shared:global scope (the key must hold it).")
]


#: Text as ``models.clean_text`` takes it: no NUL; and not blank.
PLAIN, WORDS = r"^[^\u0000]*$", r"^[^\u0000]*[^\s\u0000][^\u0000]*$"


class Body(BaseModel):
    # Numbers and booleans are strict: "5" or "yes" is a mistake to name, not to guess at.
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _integral(cls, value: Any) -> Any:
        # But JSON Schema's integers include 2.0: one is taken as 2 (no field of a body is a float).
        return int(value) if isinstance(value, float) and value.is_integer() else value


class EpisodesIn(Body):
    episodes: list[Any] = Field(
        description=(
            "Episode lines as `graphmem ingest` reads them, without `subject` (the path names it), at most "
            "GRAPHMEM_HTTP_MAX_EPISODES of them (else 413). A bad item is reported by its index; the others are stored."
        )
    )
    extractor: Literal["facts", "rule", "llm", "none"] | None = Field(
        None,
        description=(
            "[default: facts when an episode carries facts, else rule]; llm needs an endpoint (GRAPHMEM_LLM_*)."
        ),
    )


class RecallIn(Body):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=WORDS)
    k: int = Field(10, ge=1, le=1000, strict=True)
    as_of: AsOf = None
    known_at: KnownAt = None
    hops: Hops = 0
    kinds: list[MemoryKind] = Field(default_factory=list, description="Only these kinds.")
    include_shared: IncludeShared = False
    mode: Literal["hybrid", "semantic", "lexical"] = "hybrid"


class AssembleIn(Body):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=WORDS)
    budget: int | None = Field(
        None,
        ge=0,
        le=MAX_BUDGET,
        strict=True,
        description="Token budget of the recalled section (0: blocks only) [default: the policy's].",
    )
    as_of: AsOf = None
    known_at: KnownAt = None
    hops: Hops = 0
    include_shared: IncludeShared = False


class BlockIn(Body):
    value: str = Field(pattern=PLAIN)
    token_budget: int | None = Field(None, gt=0, le=100_000, strict=True, description="Required for a new block.")
    description: str | None = Field(None, max_length=1000, pattern=PLAIN)
    writable: bool | None = Field(None, strict=True, description="Change writability (admin key only).")
    truncate: bool = Field(False, strict=True, description="Cut a value over budget instead of refusing.")
    admin: bool = Field(False, strict=True, description="Change a read-only block (admin key only).")


class RetractIn(Body):
    reason: str = Field(min_length=1, max_length=2_000, pattern=WORDS, description="Why (not blank).")


class EndIn(RetractIn):
    at: str | None = Field(
        None, json_schema_extra=TIME_SCHEMA, description="When the fact stopped being true (ISO 8601) [default: now]."
    )


def episode_item(item: Any, scope: Scope) -> Episode:
    """One item of ``EpisodesIn.episodes`` as an Episode of ``scope``; ValueError if bad."""
    if isinstance(item, dict):
        if item.get("subject") not in (None, subject_name(scope)):
            raise ValueError(f"subject: the path names {subject_name(scope)}; leave it out of the episode")
        if item.get("project") not in (None, scope.project_id):
            raise ValueError("project: the query parameter names it; leave it out of the episode")
        item = {**item, "subject": subject_name(scope), "project": scope.project_id}
    return episode_from_value(item)


# -- the app ----------------------------------------------------------------------------------
def create_app(factory: Callable[[], GraphMem], config: HttpConfig | None = None) -> FastAPI:
    """The API, its probes and the browser page around the ``GraphMem`` that ``factory``
    returns (called once, at startup; the caller closes it after the server stops)."""
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
        try:
            yield
        finally:
            for pool in (state.gate, state.keys, state.known, state.readiness.gate):
                pool.close()

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
    app.add_middleware(AccessLog)

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
    app.get("/", include_in_schema=False)(page)
    app.get("/docs", include_in_schema=False)(docs)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/docs/assets", StaticFiles(directory=SWAGGER_UI), name="swagger-ui")
    app.include_router(v1)
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


def query_names(dependant: Any) -> set[str]:
    """The query parameters a route (its FastAPI dependant) takes, its dependencies' included."""
    return {p.alias for p in dependant.query_params}.union(*(query_names(d) for d in dependant.dependencies))


def plain_query(request: Request) -> None:
    """Refuse a query parameter the route does not take (as a body's unknown field is: a
    misspelt ``projet`` would read the subject without its project) or one given twice (none
    is a list, and which value was meant, which project to erase, is not for the server to guess)."""
    taken = query_names(request.scope["route"].dependant)
    for name, times in Counter(name for name, _ in request.query_params.multi_items()).items():
        shown = quoted(name) if name else "a parameter without a name"
        if name not in taken:
            raise ApiError(422, "invalid_input", f"{shown}: not a parameter of this operation")
        if times > 1:
            raise ApiError(422, "invalid_input", f"{shown}: given {times} times; give it once")


# The middleware checks the key; declaring the scheme here shows it in /docs.
v1 = APIRouter(prefix="/v1", dependencies=[Depends(HTTPBearer(auto_error=False)), Depends(plain_query)])


@v1.get(
    "/me",
    tags=["keys"],
    summary="The key this request carries (its id, subjects, admin)",
    response_model=schemas.Me,
    responses=answers(*KEYED),
)
async def me(caller: CallerDep) -> dict:
    return views.whoami(caller.key)


@v1.get(
    "/subjects",
    tags=["subjects"],
    summary="Every subject the key holds, with counts",
    response_model=schemas.Subjects,
    responses=answers(*KEYED),
)
async def subjects(caller: CallerDep) -> dict:
    def work() -> dict:
        held = None if caller.admin else set(caller.key.subjects)
        return {
            "subjects": [
                views.subject(s["scope"], {k: n for k, n in s.items() if k != "scope"})
                for s in caller.mem.subjects()
                if held is None or subject_name(s["scope"]) in held
            ]
        }

    return await caller.run(work)


@v1.post(
    "/subjects/{subject}/episodes",
    tags=["episodes"],
    summary="Write episodes (idempotent by episode id)",
    response_model=schemas.Ingested,
    responses={**answers(*SUBJECT, *BODY, WRITE, MODEL), 202: LATE},
)
async def add_episodes(body: EpisodesIn, scope: Target, caller: CallerDep) -> dict:
    cap = caller.config.max_episodes
    if len(body.episodes) > cap:  # refused whole, before it takes a worker: nothing of it is stored
        raise ApiError(
            413,
            "payload_too_large",
            f"{len(body.episodes)} episodes in one request, over the {cap} "
            "a request may carry: send them in several requests",
        )

    def work() -> dict:
        episodes, indexes, failed = [], [], []
        for index, item in enumerate(body.episodes):
            try:
                episodes.append(episode_item(item, scope))
                indexes.append(index)
            except ValueError as exc:
                failed.append({"index": index, "error": error_line(exc)})
        report = caller.mem.ingest(episodes, body.extractor, actor=caller.actor)
        failed += [{"index": indexes[position], "error": why} for position, why in report.rejected]
        failed.sort(key=lambda f: f["index"])
        return views.ingest(report, len(episodes) - len(report.rejected), failed)

    # Past its time the write becomes a job (202), never a 503 for work that then completes.
    return await caller.run(work, on_time_out=lambda running: caller.jobs.add(caller.actor, scope, running))


@v1.get(
    "/jobs/{job_id}",
    tags=["episodes"],
    summary="A write that outlived its request: running, done or failed",
    response_model=schemas.Job,
    responses=answers(*KEYED, 404),
)
async def get_job(job_id: str, caller: CallerDep) -> dict:
    return caller.jobs.get(segment(job_id), caller)


@v1.post(
    "/subjects/{subject}/complete",
    tags=["episodes"],
    summary="Decide the episodes a write stored but never decided (recall's `incomplete`)",
    response_model=schemas.WriteReport,
    responses={**answers(*SUBJECT, WRITE, MODEL), 202: LATE},
)
async def complete(scope: Target, caller: CallerDep) -> dict:
    return await caller.run(
        lambda: views.write_report(caller.mem.complete(scope, actor=caller.actor)),
        on_time_out=lambda running: caller.jobs.add(caller.actor, scope, running),
    )


@v1.get(
    "/subjects/{subject}/episodes",
    tags=["episodes"],
    summary="A page of the subject's episodes",
    response_model=schemas.EpisodePage,
    responses=answers(*SUBJECT),
)
async def list_episodes(
    scope: Target, caller: CallerDep, cursor: Cursor = None, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> dict:
    offset = offset_of(cursor)
    found = await caller.run(caller.mem.episodes, scope, None, offset, limit + 1)
    more = len(found) > limit
    return {"episodes": [views.episode(e) for e in found[:limit]], "next_cursor": str(offset + limit) if more else None}


@v1.get(
    "/subjects/{subject}/episodes/{episode_id}",
    tags=["episodes"],
    summary="One episode with its facts",
    response_model=schemas.Episode,
    responses=answers(*SUBJECT, 404),
)
async def get_episode(episode_id: str, scope: Target, caller: CallerDep) -> dict:
    return views.episode(await caller.run(caller.mem.episode, segment(episode_id), scope))


@v1.delete(
    "/subjects/{subject}/episodes/{episode_id}",
    tags=["episodes"],
    summary="Remove an episode and what only it produced; what it invalidated is current again",
    response_model=schemas.EpisodeDeleted,
    responses=answers(*SUBJECT, 404, WRITE, MODEL),
)
async def delete_episode(episode_id: str, scope: Target, caller: CallerDep) -> dict:
    return await caller.run(lambda: caller.mem.delete_episode(segment(episode_id), scope, actor=caller.actor))


# Unset fields stay out: the window is there only when the question named a time.
@v1.post(
    "/subjects/{subject}/recall",
    tags=["read"],
    summary="The k best units visible at (as_of, known_at)",
    response_model=schemas.Recalled,
    response_model_exclude_unset=True,
    responses=answers(*SUBJECT, *BODY, MODEL),
)
async def recall(body: RecallIn, scope: Target, caller: CallerDep) -> dict:
    caller.check_shared(body.include_shared)

    def work() -> dict:
        hits = caller.mem.recall(
            body.query,
            scope,
            k=body.k,
            as_of=body.as_of,
            known_at=body.known_at,
            hops=body.hops,
            kinds=tuple(body.kinds),
            include_shared=body.include_shared,
            mode=body.mode,
        )
        return views.recall(hits)

    return await caller.run(work)


@v1.post(
    "/subjects/{subject}/assemble",
    tags=["read"],
    summary="Resident blocks plus recalled units: the context",
    response_model=schemas.Assembly,
    responses=answers(*SUBJECT, *BODY, MODEL),
)
async def assemble(body: AssembleIn, scope: Target, caller: CallerDep) -> dict:
    caller.check_shared(body.include_shared)

    def work() -> dict:
        return views.assembly(
            caller.mem.assemble(
                body.query,
                scope,
                budget=body.budget,
                as_of=body.as_of,
                known_at=body.known_at,
                include_shared=body.include_shared,
                hops=body.hops,
            )
        )

    return await caller.run(work)


@v1.get(
    "/subjects/{subject}/history",
    tags=["read"],
    summary="The bi-temporal timeline of an entity or a unit",
    response_model=schemas.History,
    responses=answers(*SUBJECT, 404),
)
async def history(
    scope: Target,
    caller: CallerDep,
    entity: Annotated[str | None, Query(min_length=1)] = None,
    unit_id: Annotated[str | None, Query(min_length=1)] = None,
    known_at: Annotated[str | None, Query(json_schema_extra=TIME_SCHEMA)] = None,
    include_expired: Annotated[
        bool, Query(description="With entity: also the values no longer believed at known_at.")
    ] = False,
) -> dict:
    if (entity is None) == (unit_id is None):
        raise ApiError(422, "invalid_input", "give exactly one of entity or unit_id")
    known = parse_optional_time(known_at, "known_at")

    def work() -> dict:
        entries = caller.mem.history(
            scope, entity=entity, unit_id=unit_id, known_at=known, include_expired=include_expired
        )
        return {"entries": [views.history_entry(e) for e in entries]}

    return await caller.run(work)


@v1.get(
    "/subjects/{subject}/units/{unit_id}",
    tags=["read"],
    summary="A unit's provenance: episode, extractor, decisions, invalidations",
    response_model=schemas.Explanation,
    responses=answers(*SUBJECT, 404),
)
async def explain(unit_id: str, scope: Target, caller: CallerDep) -> dict:
    return await caller.run(lambda: views.explanation(caller.mem.explain(segment(unit_id), scope)))


@v1.post(
    "/subjects/{subject}/units/{unit_id}/retract",
    tags=["read"],
    summary="Retract a fact with a reason: a DELETE decision, through its timeline",
    response_model=schemas.Operated,
    responses=answers(*SUBJECT, *BODY, 404, WRITE, MODEL),
)
async def retract(unit_id: str, body: RetractIn, scope: Target, caller: CallerDep) -> dict:
    def work() -> dict:
        report = caller.mem.retract(segment(unit_id), scope, body.reason, actor=caller.actor)
        return {"unit_id": segment(unit_id), **views.write_report(report)}

    return await caller.run(work)


@v1.post(
    "/subjects/{subject}/units/{unit_id}/end",
    tags=["read"],
    summary="End a fact with a reason: true until `at` (default now) and no longer; an UPDATE decision",
    response_model=schemas.Operated,
    responses=answers(*SUBJECT, *BODY, 404, WRITE, MODEL),
)
async def end(unit_id: str, body: EndIn, scope: Target, caller: CallerDep) -> dict:
    at = parse_optional_time(body.at, "at")

    def work() -> dict:
        report = caller.mem.end(segment(unit_id), scope, body.reason, at, actor=caller.actor)
        return {"unit_id": segment(unit_id), **views.write_report(report)}

    return await caller.run(work)


@v1.get(
    "/subjects/{subject}/traces/{trace_id}",
    tags=["read"],
    summary="A stored assembly trace",
    response_model=schemas.TraceView,
    responses=answers(*SUBJECT, 404),
)
async def trace(trace_id: str, scope: Target, caller: CallerDep) -> dict:
    def work() -> dict:
        found = caller.mem.trace(segment(trace_id), scope)
        if found is None:
            raise ApiError(404, "not_found", f"no trace {segment(trace_id)} in scope {scope}")
        return views.stored_trace(found)

    return await caller.run(work)


@v1.get(
    "/subjects/{subject}/decisions",
    tags=["audit"],
    summary="The decision log, newest first",
    response_model=schemas.DecisionPage,
    responses=answers(*SUBJECT),
)
async def decisions(
    scope: Target,
    caller: CallerDep,
    op: Op | None = None,
    episode: str | None = None,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict:
    offset = offset_of(cursor)
    window = min(offset + limit + 1, DECISION_WINDOW)

    def work() -> tuple[list[Decision], dict[str, str]]:
        found = caller.mem.decisions(scope, episode_id=episode, op=op, limit=window)
        return found, caller.mem.fact_texts(found[offset : offset + limit], scope)

    found, texts = await caller.run(work)
    more = len(found) > offset + limit
    return {
        "decisions": views.decision_log(found[offset : offset + limit], texts),
        "next_cursor": str(offset + limit) if more else None,
    }


@v1.get(
    "/subjects/{subject}/blocks",
    tags=["blocks"],
    summary="Every resident block",
    response_model=schemas.Blocks,
    responses=answers(*SUBJECT),
)
async def list_blocks(scope: Target, caller: CallerDep) -> dict:
    return {"blocks": [views.block(b) for b in await caller.run(caller.mem.list_blocks, scope)]}


@v1.get(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="One block",
    response_model=schemas.Block,
    responses=answers(*SUBJECT, 404),
)
async def get_block(label: str, scope: Target, caller: CallerDep) -> dict:
    return views.block(await caller.run(caller.mem.get_block, scope, segment(label)))


@v1.put(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="Create or replace a block within its budget",
    response_model=schemas.WrittenBlock,
    responses=answers(*SUBJECT, *BODY, WRITE),
)
async def put_block(label: str, body: BlockIn, scope: Target, caller: CallerDep) -> dict:
    if (body.admin or body.writable is not None) and not caller.admin:
        raise ApiError(403, "forbidden", "changing writability or a read-only block needs an admin key")

    def work() -> dict:
        block = caller.mem.set_block(
            scope,
            segment(label),
            body.value,
            token_budget=body.token_budget,
            description=body.description,
            writable=body.writable,
            truncate=body.truncate,
            admin=body.admin,
        )
        return views.block(block, caller.mem.count_tokens(block.value))

    return await caller.run(work)


@v1.delete(
    "/subjects/{subject}/blocks/{label}",
    tags=["blocks"],
    summary="Delete a block",
    response_model=schemas.BlockDeleted,
    responses=answers(*SUBJECT, 404, WRITE),
)
async def delete_block(
    label: str,
    scope: Target,
    caller: CallerDep,
    admin: Annotated[bool, Query(description="Delete a read-only block (admin key only).")] = False,
) -> dict:
    if admin and not caller.admin:
        raise ApiError(403, "forbidden", "deleting a read-only block needs an admin key")
    await caller.run(lambda: caller.mem.delete_block(scope, segment(label), admin=admin))
    return {"deleted": True, "label": segment(label)}


@v1.delete(
    "/subjects/{subject}",
    tags=["subjects"],
    summary="Erase the subject (all its projects, or the one named); needs confirm=true",
    response_model=schemas.Erasure,
    responses=answers(*SUBJECT, 400, WRITE),
)
async def forget(scope: Target, caller: CallerDep, confirm: bool = False) -> dict:
    if not confirm:
        raise ApiError(400, "bad_request", f"erasing {scope} is for good: add ?confirm=true")
    return await caller.run(lambda: caller.mem.forget(scope, project=scope.project_id, actor=caller.actor))


@v1.get(
    "/subjects/{subject}/export",
    tags=["subjects"],
    summary="The subject as JSON Lines (`graphmem export`)",
    response_class=Response,
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}}, **answers(*SUBJECT)},
)
async def export(scope: Target, caller: CallerDep) -> Response:
    # Read whole within the gate (its concurrency cap and timeout hold for exports too).
    text = await caller.run(lambda: "".join(json.dumps(r) + "\n" for r in caller.mem.export(scope)))
    return Response(text, media_type=NDJSON)


@v1.post(
    "/import",
    tags=["subjects"],
    summary="Import an export, JSON Lines as `graphmem import` reads it (admin key)",
    openapi_extra={"requestBody": {"required": True, "content": {t: {} for t in IMPORT_TYPES}}},
    response_model=schemas.Imported,
    responses=answers(*KEYED, *BODY, 403, 415, WRITE, MODEL),
)
async def import_(
    request: Request,
    caller: CallerDep,
    force: Annotated[bool, Query(description="Import a subject erased from this database.")] = False,
) -> dict:
    # The key was checked for being an admin key before (guard.Authenticate).
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media not in IMPORT_TYPES:
        raise ApiError(415, "unsupported_media_type", f"send the export as Content-Type: {' or '.join(IMPORT_TYPES)}")
    try:
        lines = (await request.body()).decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_request", f"the body is not UTF-8 text ({exc.reason})") from None

    def work() -> dict:
        try:
            records = list(json_lines(lines, "body"))
        except InvalidInput as exc:  # a line that is not JSON, as a body that is not
            raise ApiError(400, "bad_request", error_line(exc)) from None
        return caller.mem.import_(exchange.read(records), force=force)

    return await caller.run(work)
