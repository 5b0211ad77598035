"""One batch of a write on its way to its commit (``Batch``), and the candidates it decides
(``Proposal``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.domain.models import Candidate, Decision, Episode, Op, Relink, Scope, WriteBatch
from graphmem.pipelines.write.report import WriteReport
from graphmem.pipelines.write.timelines import GroupKey


@dataclass
class Proposal:
    """One candidate to decide, with its episode, the extractor that produced it, and its place
    in the order of assertions: ``position`` (the episode's place in the write, the fact's
    place in the episode), after ``order_at`` (the write's time; re-extraction keeps the
    episode's first one)."""

    episode: Episode
    candidate: Candidate
    extractor_version: str
    position: tuple[int, int]
    order_at: datetime | None = None
    #: Its group when given rather than derived from the candidate (an operator's change).
    key: GroupKey | None = None
    #: An operator's reason: the decision is the operator's, in no episode's log.
    operator: str | None = None

    def decision(self, op: Op, reason: str, now: datetime, policy: str, target: str | None = None) -> Decision:
        """A decision about this candidate, by ``policy`` unless an operator made it."""
        return Decision(
            op=op,
            reason=reason,
            target_id=target,
            scope=self.candidate.scope,
            policy="operator" if self.operator else policy,
            confidence=self.candidate.confidence,
            decided_at=now,
            episode_id=None if self.operator else self.episode.id,
            candidate=self.candidate.content,
        )

    def because(self, reason: str) -> str:
        """``reason``, after the operator's own when an operator made the change."""
        return f"{self.operator} ({reason})" if self.operator else reason


@dataclass
class Batch:
    """One batch of a write: received (its episodes stored, its candidates extracted), then
    planned (``plan``: what its commit writes), then committed."""

    scope: Scope
    proposals: list[Proposal]
    #: NOOP decisions of the extractions that failed.
    failures: list[Decision]
    report: WriteReport
    #: Re-extraction: the decisions of the standing facts it replaces.
    retire: Sequence[Decision] = ()
    #: Whether the policy's gate applies (not to a candidate a human approved, nor an operator's).
    gated: bool = True
    note: str = ""
    actor: str | None = None
    #: Every episode id of the batch, how many episodes it has, and the new ones (to link).
    ids: frozenset[str] = frozenset()
    size: int = 0
    episodes: Sequence[Episode] = ()
    #: The episodes its commit decides (``WriteBatch.decided``).
    decided: tuple[str, ...] = ()
    plan: WriteBatch | None = None
    #: The review items its plan holds.
    review_ids: list[str] = field(default_factory=list)
    #: Draws the batch's mention links again, for a commit that finds names made known since.
    relink: Relink | None = None

    @property
    def planned(self) -> WriteBatch:
        """What the batch's commit writes, once planned."""
        if self.plan is None:
            raise RuntimeError("the write is not planned yet")
        return self.plan

    def committed(self) -> WriteReport:
        """The batch's report, once it committed."""
        self.report.decisions.update(d.op.value for d in self.planned.decisions)
        self.report.unit_ids += [u.id for u in self.planned.units]
        self.report.reviews += self.review_ids
        return self.report
