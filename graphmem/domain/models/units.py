"""Memory units (facts) with their two time axes, the entities they are about, and what is kept
beside them: invalidation edges as stored, recall statistics and archive state."""

from __future__ import annotations

import hashlib
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from graphmem.domain.mentions.first_person import as_named
from graphmem.domain.models.base import Confidence, Model, UTCDatetime, new_id, valid_before_invalid
from graphmem.domain.models.scope import MemoryKind, Scope
from graphmem.domain.models.text import Content, clean_text
from graphmem.domain.tokenise import normalise


class SourceRef(Model):
    episode_id: str
    channel: str
    extractor_version: str
    #: The decision whose assertion this unit shows (``graphmem.domain.timeline``): a unit shows one
    #: stretch of one assertion's timeline.
    assertion_id: str | None = None
    #: When the episode happened (the date a question about "last week" is near).
    occurred_at: UTCDatetime | None = None


class TemporalMeta(Model):
    """Both time axes. ``expired_at``/``invalid_at`` are derived from invalidation edges as
    seen at the query's system time; ``invalid_at`` may also be known at creation (a fact with
    a known end)."""

    created_at: UTCDatetime
    expired_at: UTCDatetime | None = None
    valid_at: UTCDatetime | None = None
    invalid_at: UTCDatetime | None = None
    last_recalled_at: UTCDatetime | None = None
    recall_count: int = 0

    _ordered = model_validator(mode="after")(valid_before_invalid)


class Triple(Model):
    """The graph shape of a fact: it links a subject entity to an object entity."""

    subject: Annotated[str, AfterValidator(clean_text(500))]
    predicate: Annotated[str, AfterValidator(clean_text(200))]
    object: Annotated[str, AfterValidator(clean_text(500))] | None = None
    single_valued: bool = False

    def slot(self, scope: Scope) -> str:
        """The (scope, subject, predicate) key: a single-valued predicate holds one current
        object per slot."""
        key = f"{scope.key}\x1f{normalise(self.subject)}\x1f{normalise(self.predicate)}"
        return hashlib.sha256(key.encode()).hexdigest()[:32]


class MemoryUnit(Model):
    id: str = Field(default_factory=new_id)
    kind: MemoryKind
    scope: Scope
    content: Content
    summary: str | None = None
    content_hash: str
    source: SourceRef
    time: TemporalMeta
    confidence: Confidence = 1.0
    labels: tuple[str, ...] = ()
    triple: Triple | None = None
    #: The timeline group the unit belongs to (``graphmem.domain.timeline``); None for units written
    #: outside the write pipeline.
    group: str | None = None

    @property
    def searched(self) -> str:
        """What search reads of the content (its entry text, its vector, recall's word match):
        a user's first person as their name (``graphmem.domain.mentions.first_person``)."""
        return as_named(self.content, self.scope.subject_type.value, self.scope.subject_id, self.source.channel)


class UnitFilter(Model):
    """Which units: every given field must match (``labels``: all of them)."""

    kind: MemoryKind | None = None
    labels: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    content_hashes: tuple[str, ...] | None = None
    slots: tuple[str, ...] | None = None
    #: Ignore the visibility rule entirely (erasure, export, history).
    include_expired: bool = False


class Edge(Model):
    """An invalidation edge as stored on a unit (see ``Invalidation``)."""

    expired_at: UTCDatetime
    invalid_at: UTCDatetime | None
    decision_id: str
    #: The episode of that decision (None for decisions of a deletion record).
    episode_id: str | None = None


class GroupUnit(Model):
    """A unit of a timeline group as stored (its own end in ``unit.time.invalid_at``) with
    every invalidation edge on it, so its stretch can be read at any system time."""

    unit: MemoryUnit
    edges: tuple[Edge, ...] = ()
    archived: bool = False


class Entity(Model):
    """A named thing units are about, resolved within its scope by normalised name: its id is
    ``entity_id(scope, name)``, its name the spelling of the first unit that named it."""

    id: str
    scope: Scope
    name: str
    norm: str
    created_at: UTCDatetime | None = None


class RecallStats(Model):
    """Recall statistics: operational state kept beside a unit, never on it."""

    recalled_at: UTCDatetime
    increment: Annotated[int, Field(ge=1)] = 1


class Usage(Model):
    """What happens to a unit in use, kept beside it (never on it): recall statistics and
    archive state."""

    unit_id: str
    scope: Scope
    recall_count: Annotated[int, Field(ge=0)] = 0
    last_recalled_at: UTCDatetime | None = None
    #: When it left search (None: searchable).
    archived_at: UTCDatetime | None = None

    @model_validator(mode="after")
    def _counted(self) -> Usage:
        if self.recall_count and self.last_recalled_at is None:
            raise ValueError("a recall count needs last_recalled_at")
        return self
