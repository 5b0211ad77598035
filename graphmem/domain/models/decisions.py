"""Decisions with their reasons, the timeline events they log, the invalidation edges they write,
and the record of an episode's deletion they may hang from."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from graphmem.domain.models.base import Confidence, Model, UTCDatetime, new_id, utcnow
from graphmem.domain.models.episodes import Candidate
from graphmem.domain.models.scope import Scope
from graphmem.domain.models.text import Reason


class Op(str, Enum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


class TimelineEvent(Model):
    """What a decision put into its group's log (``graphmem.domain.timeline.Event``): an assertion
    with what its units show, the ending of a value, a retraction of one, or the retirement
    of an assertion."""

    kind: Literal["assert", "end", "retract", "retire"]
    group: str
    single: bool
    value: str
    #: (when the asserting episode was first extracted, its place in that write, the fact's
    #: place in the episode): ties of valid_at and the reach of retractions follow it.
    order_at: UTCDatetime
    order_ep: Annotated[int, Field(ge=0)] = 0
    order_fact: Annotated[int, Field(ge=0)] = 0
    valid_at: UTCDatetime | None = None
    end: UTCDatetime | None = None
    #: ``retire``: the assertion (decision id) it retires.
    target: str | None = None
    #: ``assert``: what the units of its stretches show.
    candidate: Candidate | None = None
    extractor_version: str | None = None
    channel: str | None = None
    occurred_at: UTCDatetime | None = None

    @property
    def asserted(self) -> Candidate:
        """The candidate an assertion event states."""
        if self.candidate is None:
            raise ValueError(f"a {self.kind} event of {self.group} states no candidate")
        return self.candidate


class Decision(Model):
    """One policy decision. The reason is mandatory, for NOOP too."""

    id: str = Field(default_factory=new_id)
    op: Op
    target_id: str | None = None
    reason: Reason
    confidence: Confidence = 1.0
    policy: str = "rule"
    decided_at: UTCDatetime = Field(default_factory=utcnow)
    episode_id: str | None = None
    scope: Scope
    produced_id: str | None = None
    #: UPDATE: when the target stopped being true in the world. ADD: a known end for the new
    #: unit, e.g. an out-of-order fact bounded by the newer fact named in ``target_id``.
    invalid_at: UTCDatetime | None = None
    candidate: str | None = None
    #: Set when the decision entered its group's timeline log.
    event: TimelineEvent | None = None
    #: Decisions that re-derive timelines after an episode deletion hang from its record.
    deletion_id: str | None = None
    #: Who caused it: "cli", "mcp", an API key id, or None (the Python API).
    actor: str | None = None

    @property
    def logged(self) -> TimelineEvent:
        """The timeline event of a decision in a group's log (every one there carries one)."""
        if self.event is None:
            raise ValueError(f"decision {self.id} carries no timeline event")
        return self.event

    @model_validator(mode="after")
    def _target(self) -> Decision:
        if self.op in (Op.UPDATE, Op.DELETE) and not self.target_id:
            raise ValueError(f"{self.op.value} decision needs a target_id")
        return self


class Invalidation(Model):
    """An invalidation edge: ``decision_id`` stopped believing ``unit_id`` at ``expired_at``
    (system time); the fact stopped being true at ``invalid_at`` (world time), or never was
    (``None``: a retraction)."""

    unit_id: str
    decision_id: str
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None
    reason: Reason


class InvalidatedBy(Model):
    """An invalidation edge into a unit, as ``explain`` shows it: the decision that stopped
    believing the unit, what that decision produced, when and why."""

    decision_id: str
    op: Op
    produced_id: str | None = None
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None = None
    reason: str


class Superseded(Model):
    """An invalidation edge out of the decision that produced a unit: the unit it stopped
    believing (id and content), when and why."""

    unit_id: str
    content: str
    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None = None
    reason: str


class UnitEdges(Model):
    """The invalidation edges around one unit: into it, and out of its producing decision."""

    incoming: tuple[InvalidatedBy, ...] = ()
    outgoing: tuple[Superseded, ...] = ()


class Deletion(Model):
    """The content-free record of an episode deletion: ids, counts and when. Decisions that
    re-derive timelines after it hang from it."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    episode_id: str
    deleted_at: UTCDatetime
    units: int = 0
    decisions: int = 0
    #: Who asked for the deletion (see ``Decision.actor``).
    actor: str | None = None
