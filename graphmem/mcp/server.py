"""graphmem as an MCP server: the memory of any agent host, on the official ``mcp`` SDK.

    from graphmem import GraphMem
    from graphmem.mcp.server import McpConfig, build_server, run_server

    with GraphMem.connect() as mem:
        server = build_server(lambda: mem, McpConfig(subject="user:alice"))
        run_server(server, "stdio")

(``graphmem mcp serve`` does exactly this.) Every tool is a few lines over a ``GraphMem``
method and answers in the shapes of ``graphmem.faces.views``, so the policy, the decision audit and
the assembly traces apply as they do for the CLI, and a hit or a block looks the same.

Every tool is scoped: a call may name a ``subject`` (``TYPE:ID``); without one it gets the
server's configured subject, and a call naming any other subject is refused unless the server
allows it (``allow_subjects`` or ``allow_any_subject``). Times are ISO 8601 strings (a date
alone is midnight UTC). A failure comes back as an MCP tool error (``isError: true``) whose
text is ``graphmem.errors.error_line`` of the error (the line the CLI prints after ``error:``).

Over HTTP every request carries ``Authorization: Bearer <token>``: the server's own token, or
an API key (``graphmem keys``), whose subjects then bound what its calls may name on top of the
server's rules (``BearerAuth``). Writes record their actor: the API key id, else ``"mcp"``.

Needs the optional extra: ``pip install 'graphmem[mcp]'`` (mcp 1.x ``FastMCP`` or mcp 2.x
``MCPServer``; both are driven the same way here).
"""

from __future__ import annotations

import functools
import hmac
import inspect
import logging
import socket
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from starlette.responses import JSONResponse

import graphmem
from graphmem.api import MAX_BUDGET, MAX_OFFSET, GraphMem, as_scope
from graphmem.domain.keys import holds, subject_name
from graphmem.domain.models import ApiKey, Fact, MemoryKind, Scope
from graphmem.domain.times import parse_optional_time
from graphmem.errors import REPORTED, BackendError, InvalidInput, ScopeViolation, Unavailable, error_line, one_line
from graphmem.faces import views

log = logging.getLogger("graphmem.mcp")

__all__ = ["BearerAuth", "FactIn", "FastMCP", "McpConfig", "build_server", "http_app", "run_server"]

#: The API key of the HTTP request a tool call came with (None: the server's token, or stdio).
#: The SDK hands each call the context of the request that sent it.
CALLER: ContextVar[ApiKey | None] = ContextVar("graphmem_mcp_caller", default=None)
#: The actor of writes made without an API key.
ACTOR = "mcp"


# -- configuration ----------------------------------------------------------------------------
class McpConfig(BaseModel):
    """What one server serves: its default subject and which other subjects a call may name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str = Field(description="The default subject (TYPE:ID) of every call.")
    project: str | None = Field(None, description="Optional project id of every subject.")
    allow_subjects: tuple[str, ...] = Field((), description="Other subjects a call may name.")
    allow_any_subject: bool = Field(False, description="A call may name any subject.")
    name: str = "graphmem"

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str) -> str:
        Scope.parse(value)  # ValueError: "subject 'x' is not TYPE:ID ..."
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "subject" in info.data:  # else the subject's own error is the one reported
            Scope.parse(info.data["subject"], value)  # ValueError: "project 'null' reads as no project ..."
        return value

    @field_validator("allow_subjects")
    @classmethod
    def _allowed(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            Scope.parse(value)
        return values

    def scope_for(self, subject: str | None) -> Scope:
        """The scope a call reaches: the configured one, or ``subject`` when allowed; with an
        API key (``CALLER``), only a subject the key holds."""
        if subject is None or not subject.strip():
            scope = as_scope(self.subject, self.project)
        else:
            scope = as_scope(subject.strip(), self.project)
            allowed = [as_scope(s, self.project) for s in (self.subject, *self.allow_subjects)]
            if not self.allow_any_subject and scope not in allowed:
                raise ScopeViolation(f"subject {subject.strip()} is not allowed by this server")
        key = CALLER.get()
        if key is not None and not holds(key, scope):
            raise ScopeViolation(f"key {key.id} does not hold subject {scope}")
        return scope


# -- tool input types -------------------------------------------------------------------------
class FactIn(BaseModel):
    """A structured fact given with an episode: the fields of ``graphmem.domain.models.Fact``, with
    times as ISO 8601 strings."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(description="The entity the fact is about, e.g. 'Alice'.")
    predicate: str = Field(description="The relation, e.g. 'lives_in'.")
    object: str | None = Field(None, description="The other entity or value, e.g. 'Berlin'.")
    content: str | None = Field(None, description="The fact as a sentence [default: subject predicate object].")
    kind: MemoryKind = Field(MemoryKind.semantic, description="semantic | episodic | procedural.")
    valid_at: str | None = Field(None, description="When it became true in the world (ISO 8601).")
    invalid_at: str | None = Field(None, description="When it stopped being true (ISO 8601).")
    single_valued: bool = Field(
        False, strict=True, description="The predicate holds one object at a time (a new one supersedes)."
    )
    op: Literal["assert", "end", "retract"] = Field(
        "assert",
        description="assert the fact; end it (true until invalid_at, default the episode's time, and no "
        "longer: the past stays); or retract it (it never was: a correction).",
    )
    labels: list[str] = Field(default_factory=list, description="Free labels.")
    confidence: float = Field(1.0, ge=0.0, le=1.0, strict=True, description="0..1.")

    def to_fact(self, where: str) -> Fact:
        data = self.model_dump()
        for key in ("valid_at", "invalid_at"):
            data[key] = parse_optional_time(data[key], f"{where}.{key}")
        data["labels"] = tuple(data["labels"])
        try:
            return Fact.model_validate(data)
        except ValidationError as exc:
            raise InvalidInput(f"{where}.{error_line(exc)}") from None


Subject = Annotated[
    str | None,
    Field(
        description="The subject, TYPE:ID (e.g. user:alice) [default: the server's subject]; "
        "another subject is refused unless the server allows it."
    ),
]
Time = str | None
AsOfArg = Annotated[Time, Field(description="World time T, ISO 8601 (2021-03-01 is midnight UTC) [default: now].")]
KnownAtArg = Annotated[Time, Field(description="System time S: what was known then, ISO 8601 [default: now].")]
HopsArg = Annotated[
    int, Field(ge=0, le=3, strict=True, description="Graph hops from the top hits through shared entities (0..3).")
]
SharedArg = Annotated[
    bool,
    Field(strict=True, description="Also read the shared:global scope (refused unless a call may name that subject)."),
]


READ = ToolAnnotations.model_validate({"readOnlyHint": True, "openWorldHint": False})
WRITE = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False})
ERASE = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False})


def tool(annotations: ToolAnnotations, description: str) -> Callable[[Callable], Callable]:
    """Mark a ``MemoryTools`` method as an MCP tool with these hints and description."""

    def mark(method: Callable) -> Callable:
        method.mcp_tool = (annotations, description)  # type: ignore[attr-defined]
        return method

    return mark


# -- the tools --------------------------------------------------------------------------------
class MemoryTools:
    """The MCP tools: each scopes the call (``McpConfig.scope_for``), calls one ``GraphMem``
    method and answers in a ``graphmem.faces.views`` shape. The GraphMem is opened by ``factory`` at
    the first call that needs it."""

    def __init__(self, factory: Callable[[], GraphMem], config: McpConfig):
        self.factory = factory
        self.config = config
        self._lock = threading.Lock()
        self._opened: GraphMem | None = None

    @property
    def mem(self) -> GraphMem:
        with self._lock:
            if self._opened is None:
                self._opened = self.factory()
            return self._opened

    @staticmethod
    def actor() -> str:
        key = CALLER.get()
        return key.id if key is not None else ACTOR

    def check_shared(self, include_shared: bool) -> None:
        """Refuse ``include_shared`` unless a call may name the shared subject itself
        (``McpConfig.scope_for``): it reads that subject."""
        if include_shared:
            try:
                self.config.scope_for(subject_name(self.mem.shared))
            except ScopeViolation as exc:
                raise ScopeViolation(f"include_shared: {exc}") from None

    @tool(
        WRITE,
        "Store one episode (what was said or happened) and the facts it teaches. The policy decides "
        "ADD/UPDATE/DELETE/NOOP for each fact, with a reason kept in the decision log. Give `facts` for "
        "structured facts (e.g. {subject: 'Alice', predicate: 'lives_in', object: 'Berlin', valid_at: "
        "'2023-04-01', single_valued: true}); otherwise facts are extracted from the text. Returns the "
        "decision counts and the ids of the units written.",
    )
    def remember(
        self,
        text: Annotated[str, Field(description="The episode text, e.g. 'I moved to Berlin last month.'")],
        facts: Annotated[list[FactIn] | None, Field(description="Structured facts that came with the episode.")] = None,
        at: Annotated[Time, Field(description="When it happened, ISO 8601 [default: now].")] = None,
        channel: Annotated[str, Field(description="Where it came from (chat, email, ...).")] = "chat",
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        parsed = [f.to_fact(f"facts.{n}") for n, f in enumerate(facts or [])]
        report = self.mem.remember(
            text, subject=scope, at=parse_optional_time(at, "at"), channel=channel, facts=parsed, actor=self.actor()
        )
        return views.write_report(report)

    @tool(
        READ,
        "The k memory units best matching `query`, best first, as visible at world time `as_of` and "
        "system time `known_at` (both default to now). With hops > 0, units reached through shared "
        "entities (e.g. a manager's city) are added, each with the `path` that reached it. Each hit has a "
        "`confidence` (0..1, calibrated: how likely it answers the question); `relevant` false means "
        "nothing relevant was found: the hits are then only the closest, not an answer.",
    )
    def recall(
        self,
        query: Annotated[str, Field(description="What to recall, e.g. 'where does Alice live?'")],
        k: Annotated[int, Field(ge=1, le=1000, strict=True, description="How many hits (1..1000).")] = 10,
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
        hops: HopsArg = 0,
        include_shared: SharedArg = False,
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        self.check_shared(include_shared)
        hits = self.mem.recall(
            query,
            subject=scope,
            k=k,
            as_of=parse_optional_time(as_of, "as_of"),
            known_at=parse_optional_time(known_at, "known_at"),
            hops=hops,
            include_shared=include_shared,
        )
        return views.recall(hits)

    @tool(
        WRITE,
        "The context to put in front of the model for `query`: the subject's resident blocks, then "
        "recalled units within `budget` tokens. The assembly trace is stored; its id is returned.",
    )
    def assemble(
        self,
        query: Annotated[str, Field(description="What the context is for.")],
        budget: Annotated[
            int | None,
            Field(
                ge=0,
                le=MAX_BUDGET,
                strict=True,
                description="Token budget of the recalled section (0: blocks only) [default: the policy's].",
            ),
        ] = None,
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
        hops: HopsArg = 0,
        include_shared: SharedArg = False,
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        self.check_shared(include_shared)
        result = self.mem.assemble(
            query,
            subject=scope,
            budget=budget,
            as_of=parse_optional_time(as_of, "as_of"),
            known_at=parse_optional_time(known_at, "known_at"),
            include_shared=include_shared,
            hops=hops,
        )
        return views.assembly(result)

    @tool(
        READ,
        "The bi-temporal timeline of an entity's facts (give `entity`), or of one unit and the units it "
        "superseded (give `unit_id`), as known at `known_at`: each entry has valid_at/invalid_at (world "
        "time), created_at/expired_at (system time) and the decisions that shaped it.",
    )
    def history(
        self,
        entity: Annotated[str | None, Field(description="An entity name, e.g. 'Alice'.")] = None,
        unit_id: Annotated[str | None, Field(description="A unit id (from recall).")] = None,
        known_at: KnownAtArg = None,
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        if (unit_id is None) == (entity is None):
            raise InvalidInput("give exactly one of unit_id or entity")
        entries = self.mem.history(
            subject=scope, entity=entity, unit_id=unit_id, known_at=parse_optional_time(known_at, "known_at")
        )
        return {"entries": [views.history_entry(e) for e in entries]}

    @tool(
        READ,
        "Provenance of one unit: the episode it came from, the extractor version, every decision about "
        "it with its reason, and the invalidations in and out.",
    )
    def explain(
        self,
        unit_id: Annotated[str, Field(description="A unit id (from recall or history).")],
        subject: Subject = None,
    ) -> dict[str, Any]:
        return views.explanation(self.mem.explain(unit_id, subject=self.config.scope_for(subject)))

    @tool(
        READ,
        "The subject's resident blocks (always in the assembled context), each with its token budget "
        "and whether it is writable.",
    )
    def blocks_list(self, subject: Subject = None) -> dict[str, Any]:
        return {"blocks": [views.block(b) for b in self.mem.list_blocks(self.config.scope_for(subject))]}

    @tool(READ, "One resident block by label, with its value.")
    def blocks_get(
        self,
        label: Annotated[str, Field(description="The block label, e.g. 'persona'.")],
        subject: Subject = None,
    ) -> dict[str, Any]:
        return views.block(self.mem.get_block(self.config.scope_for(subject), label))

    @tool(
        WRITE,
        "Create or replace a resident block. A new block needs `token_budget`; a value over the budget "
        "is refused; a read-only block cannot be changed here (an operator uses the CLI's --admin).",
    )
    def blocks_set(
        self,
        label: Annotated[str, Field(description="The block label, e.g. 'persona'.")],
        value: Annotated[str, Field(description="The new value.")],
        token_budget: Annotated[
            int | None, Field(gt=0, le=100_000, strict=True, description="Token budget (required for a new block).")
        ] = None,
        description: Annotated[str | None, Field(description="What the block is for.")] = None,
        subject: Subject = None,
    ) -> dict[str, Any]:
        # Never admin, never a writability change: the writable rule stays with operators.
        block = self.mem.set_block(
            self.config.scope_for(subject), label, value, token_budget=token_budget, description=description
        )
        return views.block(block, self.mem.count_tokens(block.value))

    @tool(
        ERASE,
        "Erase everything stored for `subject`: episodes, units, entities, decisions, traces, blocks and "
        "review items. Irreversible: refused unless `confirm` is true.",
    )
    def forget(
        self,
        subject: Annotated[str, Field(description="The subject to erase, TYPE:ID; must be one this server allows.")],
        confirm: Annotated[bool, Field(strict=True, description="Must be true: confirms the erasure.")] = False,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        if confirm is not True:
            raise InvalidInput(f"forget erases everything stored for {scope}: call it again with confirm: true")
        # A server with a project erases that project only; without one, GraphMem.forget
        # erases the subject with all its projects.
        erased = self.mem.forget(scope, project=scope.project_id, actor=self.actor())
        return {"subject": views.scope(scope)["scope"], "project": scope.project_id, "forgotten": erased}

    @tool(
        READ, "A page of the subject's stored episodes (raw events with their structured facts), in the store's order."
    )
    def episodes_list(
        self,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, strict=True, description="Skip this many.")] = 0,
        limit: Annotated[int, Field(ge=1, le=1000, strict=True, description="At most this many.")] = 100,
        subject: Subject = None,
    ) -> dict[str, Any]:
        found = self.mem.episodes(self.config.scope_for(subject), offset=offset, limit=limit)
        return {"episodes": [views.episode(e) for e in found]}

    @tool(
        ERASE,
        "Delete one episode and what only it produced, as if it had never been stored; the facts it "
        "had ended or replaced hold again. Returns the counts removed and the units restored.",
    )
    def episode_delete(
        self,
        episode_id: Annotated[str, Field(description="The episode id (from episodes_list or explain).")],
        subject: Subject = None,
    ) -> dict[str, Any]:
        return self.mem.delete_episode(episode_id, self.config.scope_for(subject), actor=self.actor())

    @tool(
        READ,
        "The decision log, newest first: every ADD/UPDATE/DELETE/NOOP with its reason and who caused it "
        "(`actor`); one episode's (`episode_id`) or one op's.",
    )
    def decisions(
        self,
        op: Annotated[Literal["ADD", "UPDATE", "DELETE", "NOOP"] | None, Field(description="Only this op.")] = None,
        episode_id: Annotated[str | None, Field(description="Only this episode's decisions.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, strict=True, description="At most this many.")] = 100,
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        found = self.mem.decisions(scope, episode_id=episode_id, op=op, limit=limit)
        return {"decisions": views.decision_log(found, self.mem.fact_texts(found, scope))}


# -- the server -------------------------------------------------------------------------------
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
        if unknown:
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
            await _unauthorized(send, "missing bearer token: send Authorization: Bearer <token>")
            return
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            try:
                key = await anyio.to_thread.run_sync(self.authenticate, given)
            except BackendError as exc:
                # The key is looked up outside the tools' error handling: a database that is
                # down must still answer 503 with its one line, as the HTTP API does, not 500.
                log.warning("key lookup failed: %s", error_line(exc))
                status, code = (503, "unavailable") if isinstance(exc, Unavailable) else (502, "backend_error")
                await _refuse(send, status, code, error_line(exc))
                return
            if key is None:
                await _unauthorized(send, "unknown bearer token or API key")
                return
        mark = CALLER.set(key)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(mark)


async def _refuse(send: Callable, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
    response = JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)
    await response({"type": "http"}, None, send)


async def _unauthorized(send: Callable, message: str) -> None:
    await _refuse(send, 401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})


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
    if "host" in inspect.signature(server.streamable_http_app).parameters:  # mcp 2.x
        app = server.streamable_http_app(host=host)
    else:  # pragma: no cover - mcp 1.x keeps the host in its settings
        server.settings.host = host
        app = server.streamable_http_app()
    if token is not None:
        app = BearerAuth(app, token, authenticate or (lambda _: None))
    return app
