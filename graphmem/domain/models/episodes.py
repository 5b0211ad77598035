"""Episodes (the raw events), the structured facts given with them, and what extraction makes of
them: candidates, for the policy to decide on or a human to review."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from graphmem.domain.hashing import content_hash
from graphmem.domain.models.base import Confidence, Model, UTCDatetime, WorldTime, new_id, utcnow, valid_before_invalid
from graphmem.domain.models.scope import MemoryKind, Scope
from graphmem.domain.models.text import Channel, Content, EpisodeId, Labels, RawText, Reason, plain_text
from graphmem.domain.models.units import Triple

FactOp = Literal["assert", "end", "retract"]


class Fact(Model):
    """A structured fact given with an episode (docs/episodes.md)."""

    subject: Annotated[str, AfterValidator(plain_text(500, "a fact's names"))]
    predicate: Annotated[str, AfterValidator(plain_text(200, "a fact's names"))]
    object: Annotated[str, AfterValidator(plain_text(500, "a fact's names"))] | None = None
    content: Content | None = None
    kind: MemoryKind = MemoryKind.semantic
    valid_at: WorldTime | None = None
    invalid_at: WorldTime | None = None
    # Strict: a fact arrives as JSON (ingest lines, HTTP, MCP), where "yes" or "0.5" is a mistake.
    single_valued: Annotated[bool, Field(strict=True)] = False
    #: assert: true from valid_at (until invalid_at); end: true until invalid_at (default: the
    #: episode's time) and no longer; retract: never true (a correction).
    op: FactOp = "assert"
    labels: Labels = ()
    confidence: Annotated[Confidence, Field(strict=True)] = 1.0

    _ordered = model_validator(mode="after")(valid_before_invalid)

    @model_validator(mode="after")
    def _ending_time(self) -> Fact:
        if self.op == "end" and self.valid_at is not None:
            raise ValueError("an ending gives invalid_at (when the fact stopped), not valid_at")
        return self

    def text(self) -> str:
        """The fact as one sentence: its content, else subject, predicate and object."""
        if self.content:
            return self.content
        words = [self.subject, self.predicate.replace("_", " "), self.object or ""]
        return " ".join(w for w in words if w)


class Episode(Model):
    """An immutable raw event. Append-only: the same id may only ever hold the same content.
    ``facts`` are structured facts that came with it (the raw event's structured part)."""

    id: EpisodeId = Field(default_factory=new_id)
    scope: Scope
    occurred_at: WorldTime
    raw: RawText
    channel: Channel = "chat"
    facts: tuple[Fact, ...] = ()
    derived_ids: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """What "the same content" means for an episode id."""
        return fingerprint(
            self.scope, self.occurred_at, self.raw, self.channel, [f.model_dump(mode="json") for f in self.facts]
        )


def fingerprint(scope: Scope, occurred_at: datetime, raw: str, channel: str, facts: list[dict[str, Any]]) -> str:
    """An episode's fingerprint from its parts (``facts`` as their JSON dumps), also for an
    episode as stored."""
    payload = json.dumps([scope.key, occurred_at.isoformat(), raw, channel, facts])
    return hashlib.sha256(payload.encode()).hexdigest()


class Appended(Model):
    """What ``MemoryStore.put_episodes`` did: how many episodes were new, and the positions (in
    the order given) of those not stored because their scope already holds other content under
    their id."""

    new: int = 0
    conflicts: tuple[int, ...] = ()


class Candidate(Model):
    """What an extractor proposes; the policy decides what becomes of it. ``op`` as for a
    ``Fact``: an ending's time is its ``invalid_at``."""

    kind: MemoryKind = MemoryKind.semantic
    scope: Scope
    content: Content
    valid_at: UTCDatetime | None = None
    invalid_at: UTCDatetime | None = None
    labels: tuple[str, ...] = ()
    confidence: Confidence = 1.0
    triple: Triple | None = None
    op: FactOp = "assert"

    _ordered = model_validator(mode="after")(valid_before_invalid)

    @model_validator(mode="before")
    @classmethod
    def _stored_before_endings(cls, data: Any) -> Any:
        # Candidates stored before endings existed say ``retract: true|false``.
        if isinstance(data, dict) and "retract" in data:
            data = {k: v for k, v in data.items() if k != "retract"} | ({"op": "retract"} if data["retract"] else {})
        return data

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


class WriteContext(Model):
    """What the policy's write gate sees besides the candidate: the episode it came from."""

    episode: Episode


class ReviewItem(Model):
    """A candidate held for a human (resident targets): approve writes it, reject drops it."""

    id: str = Field(default_factory=new_id)
    scope: Scope
    candidate: Candidate
    episode_id: str
    extractor_version: str
    reason: Reason
    status: Literal["pending", "approved", "rejected"] = "pending"
    created_at: UTCDatetime = Field(default_factory=utcnow)
    decided_at: UTCDatetime | None = None
    note: str | None = None
