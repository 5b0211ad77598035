"""Policies: every "should we" decision (``graphmem.ports.MemoryPolicy``).

``RulePolicy`` decides with rules and no LLM; ``LLMPolicy`` asks a model through any
OpenAI-compatible endpoint. Both share the gate, archive rule and budgets of ``BasePolicy``,
so swapping one for the other changes only ``reconcile``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from graphmem.domain.models import Candidate, Decision, MemoryKind, MemoryUnit, WriteContext

RECALL_BUDGET = "__recall__"


class PolicyConfig(BaseModel):
    """Thresholds and budgets: the defaults every policy starts from."""

    budgets: dict[str, int] = Field(
        default_factory=lambda: {"rules": 1200, "user_profile": 600, "persona": 300, RECALL_BUDGET: 1500}
    )
    default_budget: int = 400
    #: Archive units that stopped being believed this long ago...
    archive_expired_days: int = 90
    #: ...or that were never recalled and are this old.
    archive_unrecalled_days: int = 180
    #: Predicates that hold one current object per subject, besides facts marked single_valued.
    single_valued: frozenset[str] = frozenset(
        {"lives_in", "works_at", "reports_to", "name", "married_to", "age", "job_title", "plays_for"}
    )
    #: Word-set overlap at or above which two texts without triples are near duplicates.
    near_duplicate: float = 0.85


class BasePolicy:
    name = "base"

    def __init__(self, config: PolicyConfig | None = None):
        self.config = config or PolicyConfig()

    def should_write(self, candidate: Candidate, ctx: WriteContext) -> tuple[bool, str]:
        # Procedural rules are resident: they change what the agent always sees, so a human decides.
        if candidate.kind is MemoryKind.procedural:
            return False, "resident (procedural) writes require human review"
        return True, "non-resident candidate: reconcile against neighbours"

    def should_archive(self, unit: MemoryUnit, now: datetime) -> bool:
        t = unit.time
        if t.expired_at and now - t.expired_at > timedelta(days=self.config.archive_expired_days):
            return True
        return t.recall_count == 0 and now - t.created_at > timedelta(days=self.config.archive_unrecalled_days)

    def budget_for(self, label: str) -> int:
        return self.config.budgets.get(label, self.config.default_budget)

    def reconcile(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> Decision:
        """The decision on a candidate given its neighbours: each policy's own."""
        raise NotImplementedError(f"{type(self).__name__} does not reconcile")

    def is_single_valued(self, candidate: Candidate) -> bool:
        t = candidate.triple
        return t is not None and (t.single_valued or t.predicate in self.config.single_valued)
