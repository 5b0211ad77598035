"""The MCP tools: each scopes its call (``McpConfig.scope_for``), calls one ``GraphMem`` method
and answers in a ``graphmem.faces.views`` shape, so a hit or a block looks as it does in the CLI.
Times are ISO 8601 strings (a date alone is midnight UTC)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple

from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphmem.api import MAX_BUDGET, MAX_OFFSET, GraphMem
from graphmem.domain.keys import subject_name
from graphmem.domain.limits import MAX_HOPS, MAX_K, Hops, K, TokenBudget
from graphmem.domain.models import MAX_FILTER_CHARS, Fact, MemoryKind, Scope, Standing
from graphmem.domain.times import parse_optional_time
from graphmem.errors import InvalidInput, ScopeViolation, error_line
from graphmem.faces import views
from graphmem.mcp.config import ACTOR, CALLER, McpConfig


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
HopsArg = Annotated[Hops, Field(description=f"Graph hops from the top hits through shared entities (0..{MAX_HOPS}).")]
#: How many rows a page holds.
LimitArg = Annotated[int, Field(ge=1, le=MAX_K, strict=True, description="At most this many.")]
SharedArg = Annotated[
    bool,
    Field(strict=True, description="Also read the shared:global scope (refused unless a call may name that subject)."),
]
RerankArg = Annotated[
    bool | None,
    Field(
        strict=True,
        description="Reorder the best candidates with the cross-encoder (slower) [default: the server's setting].",
    ),
]


class ReadAt(NamedTuple):
    """The scope and the point on both time axes a read tool looks at."""

    scope: Scope
    as_of: datetime | None
    known_at: datetime | None


READ = ToolAnnotations.model_validate({"readOnlyHint": True, "openWorldHint": False})
WRITE = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False})
ERASE = ToolAnnotations.model_validate({"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False})


def tool(annotations: ToolAnnotations, description: str) -> Callable[[Callable], Callable]:
    """Mark a ``MemoryTools`` method as an MCP tool with these hints and description."""

    def mark(method: Callable) -> Callable:
        method.mcp_tool = (annotations, description)  # type: ignore[attr-defined]
        return method

    return mark


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

    def read_at(self, subject: str | None, include_shared: bool, as_of: Time, known_at: Time) -> ReadAt:
        """Where a read looks: the call's scope (``include_shared`` checked) and its times."""
        scope = self.config.scope_for(subject)
        self.check_shared(include_shared)
        return ReadAt(scope, parse_optional_time(as_of, "as_of"), parse_optional_time(known_at, "known_at"))

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
        k: K = 10,
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
        hops: HopsArg = 0,
        include_shared: SharedArg = False,
        subject: Subject = None,
        rerank: RerankArg = None,
    ) -> dict[str, Any]:
        at = self.read_at(subject, include_shared, as_of, known_at)
        hits = self.mem.recall(
            query,
            at.scope,
            k=k,
            as_of=at.as_of,
            known_at=at.known_at,
            hops=hops,
            include_shared=include_shared,
            rerank=rerank,
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
        at = self.read_at(subject, include_shared, as_of, known_at)
        result = self.mem.assemble(
            query,
            at.scope,
            budget=budget,
            as_of=at.as_of,
            known_at=at.known_at,
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
            TokenBudget | None, Field(description="Token budget (required for a new block).")
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
        limit: LimitArg = 100,
        subject: Subject = None,
    ) -> dict[str, Any]:
        found = self.mem.episodes(self.config.scope_for(subject), offset=offset, limit=limit)
        return {"episodes": [views.episode(e) for e in found]}

    @tool(
        READ,
        "A page of the subject's memory units (facts), newest first, with filters: `kind`; `entity` "
        "(units about or naming it); `contains` (text, any case); `status` at world time `as_of` and "
        "system time `known_at` (current: true then; ended: true until an end before then; retracted: no "
        "longer believed; all). Pass `next_cursor` back as `cursor` for the next page.",
    )
    def units_list(
        self,
        kind: Annotated[MemoryKind | None, Field(description="Only units of this kind.")] = None,
        entity: Annotated[
            str | None, Field(min_length=1, max_length=MAX_FILTER_CHARS, description="Only units about or naming it.")
        ] = None,
        contains: Annotated[
            str | None, Field(min_length=1, max_length=MAX_FILTER_CHARS, description="Only units whose text holds it.")
        ] = None,
        status: Annotated[Standing, Field(description="The units' standing.")] = Standing.current,
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
        cursor: Annotated[str | None, Field(description="The next_cursor of the page before.")] = None,
        limit: LimitArg = 50,
        subject: Subject = None,
    ) -> dict[str, Any]:
        at = self.read_at(subject, False, as_of, known_at)
        page = self.mem.units(
            at.scope,
            kind=kind,
            entity=entity,
            contains=contains,
            status=status.status,
            as_of=at.as_of,
            known_at=at.known_at,
            cursor=cursor,
            limit=limit,
        )
        return views.unit_page(page)

    @tool(
        READ,
        "A page of the entities (people, places, things) the subject's memory is about, by name: each "
        "with its other spellings, how many facts about it hold now and when one last changed. `prefix` "
        "finds names that start with it. Pass `next_cursor` back as `cursor` for the next page.",
    )
    def entities_list(
        self,
        prefix: Annotated[str, Field(max_length=MAX_FILTER_CHARS, description="Names starting with this.")] = "",
        cursor: Annotated[str | None, Field(description="The next_cursor of the page before.")] = None,
        limit: LimitArg = 50,
        subject: Subject = None,
    ) -> dict[str, Any]:
        page = self.mem.entities(self.config.scope_for(subject), prefix=prefix, cursor=cursor, limit=limit)
        return views.entity_page(page)

    @tool(
        READ,
        "What the memory knows about one entity: its facts that hold now (newest first) and its timeline, "
        "ended and retracted facts too, each with the decisions behind it.",
    )
    def entity_show(
        self,
        entity: Annotated[str, Field(description="The entity's name, any case, e.g. 'Maria'.")],
        subject: Subject = None,
    ) -> dict[str, Any]:
        return views.entity_view(self.mem.entity(entity, self.config.scope_for(subject)))

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
        limit: LimitArg = 100,
        subject: Subject = None,
    ) -> dict[str, Any]:
        scope = self.config.scope_for(subject)
        found = self.mem.decisions(scope, episode_id=episode_id, op=op, limit=limit)
        return {"decisions": views.decision_log(found, self.mem.fact_texts(found, scope))}
