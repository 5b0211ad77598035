"""The HTTP API's answers as Pydantic models, for its OpenAPI description: each is what a
``graphmem.faces.views`` function gives (the CLI's ``--json`` shape), field by field, and each
route validates its answer against its model, so ``/openapi.json`` cannot drift from what
the API sends (a field added to a view and not here is a 500 in the contract tests).

Times stay the strings the views write (``+00:00``, full precision) rather than datetimes,
which Pydantic would write back as ``Z``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from graphmem.domain.models import ERASED_KINDS, RECORD_KINDS, FactOp, MemoryKind, Op

#: An instant as ``views.time`` writes it.
Instant = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


class Out(BaseModel):
    # Exact: an answer holding a field its model does not name fails validation (500).
    model_config = ConfigDict(extra="forbid")


class Problem(Out):
    code: str = Field(description="Stable, machine-readable: e.g. not_found, invalid_input, unavailable.")
    message: str = Field(description="One line naming what was wrong.")


class ErrorBody(Out):
    """Every refusal and failure: ``{"error": {"code", "message"}}``."""

    error: Problem


class Check(Out):
    check: str
    ok: bool


class FailedCheck(Check):
    detail: str


class Ready(Out):
    ok: Literal[True]
    checks: list[Check]


class NotReady(ErrorBody):
    """/readyz's 503: the error body, and the checks when they finished (over time: none)."""

    checks: list[FailedCheck] | None = None


class Health(Out):
    status: Literal["ok"]


class Scoped(Out):
    scope: str = Field(description="The subject, TYPE:ID.")
    project: str | None


# -- units, episodes, decisions -----------------------------------------------------------------
class Source(Out):
    episode_id: str
    channel: str
    extractor_version: str
    assertion_id: str | None
    occurred_at: Instant | None


class Times(Out):
    created_at: Instant
    expired_at: Instant | None
    valid_at: Instant | None
    invalid_at: Instant | None
    last_recalled_at: Instant | None
    recall_count: int


class Triple(Out):
    subject: str
    predicate: str
    object: str | None
    single_valued: bool


class Unit(Scoped):
    id: str
    kind: MemoryKind
    content: str
    summary: str | None
    content_hash: str
    source: Source
    time: Times
    confidence: float
    labels: list[str]
    triple: Triple | None
    group: str | None


class Fact(Out):
    subject: str
    predicate: str
    object: str | None
    content: str | None
    kind: MemoryKind
    valid_at: Instant | None
    invalid_at: Instant | None
    single_valued: bool
    op: FactOp
    labels: list[str]
    confidence: float


class Episode(Scoped):
    id: str
    occurred_at: Instant
    raw: str
    channel: str
    facts: list[Fact]
    derived_ids: list[str]


class Event(Out):
    """What a decision put into its timeline (``views.decision``)."""

    kind: Literal["assert", "end", "retract", "retire"]
    group: str
    single: bool
    value: str
    valid_at: Instant | None
    end: Instant | None
    target: str | None
    extractor_version: str | None
    channel: str | None
    occurred_at: Instant | None
    order: tuple[Instant, int, int] = Field(
        description="(first extracted at, place in that write, place in the episode)."
    )


class Decision(Scoped):
    id: str
    op: Op
    target_id: str | None
    reason: str
    confidence: float
    policy: str
    decided_at: Instant
    episode_id: str | None
    produced_id: str | None
    invalid_at: Instant | None
    candidate: str | None
    event: Event | None
    deletion_id: str | None
    actor: str | None


class LoggedDecision(Decision):
    """A row of the decision log: with the texts of the facts it wrote and ended."""

    produced_fact: str | None
    target_fact: str | None


#: Decisions of a write, counted per op (0 included).
Decisions = create_model("Decisions", __base__=Out, **{op.value: (int, ...) for op in Op})  # type: ignore[call-overload]


class ExtractionFailure(Out):
    episode_id: str
    error: str


class WriteReport(Out):
    episodes: int
    new_episodes: int
    decisions: Decisions
    unit_ids: list[str]
    extraction_failed: list[ExtractionFailure]
    reviews: list[str] = Field(description="Ids of the review items held.")


class ItemFailure(Out):
    index: int = Field(description="Where the item is in the request's episodes.")
    error: str


class Ingested(WriteReport):
    episodes: int = Field(description="Episodes stored (new or already there).")
    failed: list[ItemFailure]


class Job(Out):
    """A write still running when its request's time ran out (202), as ``GET /v1/jobs/{id}``
    shows it: ``result`` once done, ``error`` once failed."""

    id: str
    subject: str
    project: str | None
    status: Literal["running", "done", "failed"]
    result: Ingested | WriteReport | None = None
    error: Problem | None = None


class Operated(WriteReport):
    """A retraction's or an ending's write."""

    unit_id: str


# -- reads ---------------------------------------------------------------------------------------
class Window(Out):
    from_: Instant | None = Field(alias="from")
    to: Instant | None
    text: str


class Hit(Scoped):
    id: str
    content: str
    kind: MemoryKind
    score: float
    episode_id: str
    valid_at: Instant | None
    invalid_at: Instant | None
    created_at: Instant
    expired_at: Instant | None
    hop: int
    path: list[str]
    similarity: float | None
    confidence: float = Field(
        ge=0,
        le=1,
        description="How likely the unit is what the question asks about "
        "(calibrated: of hits at p, about a share p are).",
    )


class Recalled(Out):
    relevant: bool = Field(
        description="Whether any hit reached the confidence threshold (false: nothing "
        "relevant found, the hits are only the closest)."
    )
    hits: list[Hit]
    window: Window | None = Field(None, description="The time the question named, when it named one (else absent).")
    incomplete: int | None = Field(
        None,
        description="Episodes of the subject stored without their decisions, when "
        "any (else absent): what they teach is not in the hits.",
    )


class Trace(Scoped):
    id: str
    query: str
    resident_ids: list[str]
    recalled_ids: list[str]
    tokens: int
    rule_ids: list[str]
    created_at: Instant


class Assembly(Out):
    text: str
    trace: Trace


class Block(Scoped):
    id: str
    label: str
    value: str
    token_budget: int
    writable: bool
    description: str | None
    updated_at: Instant


class WrittenBlock(Block):
    tokens: int = Field(description="The value's token count.")


class TraceView(Out):
    trace: Trace
    resident: list[Block]
    recalled: list[Unit]


class Earlier(Out):
    until: Instant
    invalid_at: Instant | None


class Edge(Out):
    expired_at: Instant
    invalid_at: Instant | None
    decision_id: str


class HistoryEntry(Scoped):
    id: str
    content: str
    kind: MemoryKind
    slot: str
    valid_at: Instant | None
    invalid_at: Instant | None
    created_at: Instant
    expired_at: Instant | None
    believed: bool
    believed_until: Instant | None
    earlier: list[Earlier]
    edges: list[Edge]
    episode_id: str
    decisions: list[Decision]


class History(Out):
    entries: list[HistoryEntry]


class InvalidatedBy(Out):
    decision_id: str
    op: Op
    produced_id: str | None
    expired_at: Instant
    invalid_at: Instant | None
    reason: str


class Superseded(Out):
    unit_id: str
    content: str
    expired_at: Instant
    invalid_at: Instant | None
    reason: str


class Mention(Out):
    name: str
    how: str


class Explanation(Out):
    unit: Unit
    episode: Episode | None
    extractor_version: str
    decisions: list[Decision]
    incoming: list[InvalidatedBy]
    outgoing: list[Superseded]
    entities: list[Mention]
    episode_entities: list[Mention]


class EpisodePage(Out):
    episodes: list[Episode]
    next_cursor: str | None


class UnitPage(Out):
    units: list[Unit]
    next_cursor: str | None


class EntitySummary(Out):
    id: str
    name: str
    aliases: list[str]
    facts: int
    last_change: Instant | None


class EntityPage(Out):
    entities: list[EntitySummary]
    next_cursor: str | None


class EntityView(Out):
    entity: EntitySummary
    facts: list[Unit]
    history: list[HistoryEntry]


class DecisionPage(Out):
    decisions: list[LoggedDecision]
    next_cursor: str | None


class Blocks(Out):
    blocks: list[Block]


# -- keys, subjects, lifecycle -------------------------------------------------------------------
class Key(Out):
    id: str
    subjects: list[str]
    admin: bool
    name: str | None
    created_at: Instant
    revoked_at: Instant | None


class Me(Out):
    key: Key | None = Field(description="Null on a server run without keys.")


class Subject(Scoped):
    episodes: int
    units: int
    decisions: int


class Subjects(Out):
    subjects: list[Subject]


class BlockDeleted(Out):
    deleted: Literal[True]
    label: str


class EpisodeDeleted(Out):
    deletion_id: str
    units: int
    decisions: int
    restored: list[str] = Field(description="Units current again.")
    rederived: int
    actor: str | None


#: The erasure receipt: its id, who asked, records deleted per kind, keys revoked.
Erasure = create_model(  # type: ignore[call-overload]
    "Erasure",
    __base__=Out,
    erasure_id=(str, ...),
    actor=(str | None, ...),
    revoked_keys=(list[str], ...),
    **{kind: (int, ...) for kind in ERASED_KINDS},
)
#: Records per kind of an import.
RecordCounts = create_model("RecordCounts", __base__=Out, **{kind: (int, ...) for kind in RECORD_KINDS})  # type: ignore[call-overload]


class Imported(Scoped):
    imported: RecordCounts
    skipped: RecordCounts
