"""RulePolicy: reconcile without an LLM. Pure: no I/O, deterministic, table-testable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from graphmem.domain.models import Candidate, Decision, MemoryUnit, Op, normalise
from graphmem.policy import BasePolicy


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", normalise(text)))


def same_object(candidate: Candidate, unit: MemoryUnit) -> bool:
    a, b = candidate.triple, unit.triple
    return (
        a is not None
        and b is not None
        and normalise(a.subject) == normalise(b.subject)
        and normalise(a.predicate) == normalise(b.predicate)
        and normalise(a.object or "") == normalise(b.object or "")
    )


def _recency(unit: MemoryUnit) -> tuple[Any, ...]:
    """Later valid (a stated valid time before one taken from storage), later stored, still open
    or else ended later, then by content: a total order up to copies (alike in content and times)."""
    t = unit.time
    return (
        t.valid_at or t.created_at,
        t.valid_at is not None,
        t.created_at,
        t.invalid_at is None,
        t.invalid_at or t.created_at,
        unit.content,
    )


class RulePolicy(BasePolicy):
    """Exact or near duplicate → NOOP; retract → DELETE; end → UPDATE ending it; same subject and single-valued
    predicate with a new object → UPDATE (or, when the candidate is older than the current
    fact, ADD bounded by it); else ADD."""

    name = "rule"

    def reconcile(self, candidate: Candidate, neighbours: Sequence[MemoryUnit]) -> Decision:
        def decide(op: Op, reason: str, target: MemoryUnit | None = None, **extra: Any) -> Decision:
            return Decision(
                op=op,
                reason=reason,
                target_id=target.id if target else None,
                scope=candidate.scope,
                policy=self.name,
                confidence=candidate.confidence,
                candidate=candidate.content,
                **extra,
            )

        # Neighbours come in the store's order, which ties differently on each adapter (and in a
        # bulk load, decided in memory): the latest first, so what a decision names is the same.
        neighbours = sorted(neighbours, key=_recency, reverse=True)
        same = [n for n in neighbours if same_object(candidate, n) or n.content_hash == candidate.content_hash]
        if candidate.op == "retract":
            if same:
                return decide(Op.DELETE, f"retraction of {same[0].content!r}", same[0])
            return decide(Op.NOOP, "retraction matched no current fact")
        if candidate.op == "end":
            if same:
                return decide(
                    Op.UPDATE,
                    f"{candidate.content!r}: {same[0].content!r} ends",
                    same[0],
                    invalid_at=candidate.invalid_at,
                )
            return decide(Op.NOOP, "ending matched no current fact")
        if same:
            return decide(Op.NOOP, f"duplicate of {same[0].content!r}", same[0])
        if candidate.triple is None:
            words = _words(candidate.content)
            for n in neighbours:
                other = _words(n.content)
                overlap = len(words & other) / max(1, len(words | other))
                if overlap >= self.config.near_duplicate:
                    return decide(Op.NOOP, f"near duplicate ({overlap:.2f} word overlap) of {n.content!r}", n)
        triple = candidate.triple
        if triple is not None and self.is_single_valued(candidate):
            slot = triple.slot(candidate.scope)
            current = [n for n in neighbours if n.triple and n.triple.slot(n.scope) == slot]
            if current:
                latest = current[0]
                if candidate.valid_at and latest.time.valid_at and candidate.valid_at < latest.time.valid_at:
                    return decide(
                        Op.ADD,
                        f"older than the current {latest.content!r} (valid from "
                        f"{latest.time.valid_at.date()}): kept as history ending then",
                        latest,
                        invalid_at=latest.time.valid_at,
                    )
                assert latest.triple is not None  # current holds units with a triple only
                return decide(
                    Op.UPDATE,
                    f"{triple.predicate} holds one value: {triple.object!r} supersedes {latest.triple.object!r}",
                    latest,
                    invalid_at=candidate.valid_at,
                )
        return decide(Op.ADD, "new information")
