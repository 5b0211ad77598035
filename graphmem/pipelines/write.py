"""The write pipeline (seed §3 writePipeline, design brief §6).

    0  persist the episode            (a failing extractor or policy never loses it)
    1  extract candidates
    0' gate: policy.should_write      (resident targets go to the human review queue)
    2  hash dedupe                    (free, before any policy or LLM call)
    3  reconcile against visible same-scope same-kind neighbours
    4  commit the store, then update the index

Stage 4 is one atomic commit per batch of episodes, guarded by optimistic lock keys (one per
content hash and one per single-valued slot): if another writer committed to any of them
after this batch read its neighbours, the commit is refused by the database and the batch is
planned again. Two writers of the same fact therefore leave exactly one visible unit.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Mapping, Sequence

from ..errors import Conflict, GraphMemError
from ..models import (
    AsOf,
    Candidate,
    Decision,
    Episode,
    Invalidation,
    MemoryKind,
    MemoryUnit,
    Op,
    Page,
    Scope,
    SourceRef,
    TemporalMeta,
    UnitFilter,
    WriteBatch,
    WriteContext,
    utcnow,
)
from ..ports import Extractor, MemoryIndex, MemoryPolicy, MemoryStore

MAX_ATTEMPTS = 8
NEIGHBOURS = 5


@dataclass
class WriteReport:
    episodes: int = 0
    new_episodes: int = 0
    decisions: Counter = field(default_factory=Counter)
    unit_ids: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)
    conflicts: int = 0

    def merge(self, other: "WriteReport") -> None:
        self.episodes += other.episodes
        self.new_episodes += other.new_episodes
        self.decisions.update(other.decisions)
        self.unit_ids += other.unit_ids
        self.failed += other.failed
        self.reviews += other.reviews
        self.conflicts += other.conflicts


@dataclass
class _Planned:
    """One candidate with its episode and the extractor that produced it."""

    episode: Episode
    candidate: Candidate
    extractor_version: str


def hash_key(c: Candidate) -> str:
    key = f"{c.scope.key}\x1f{c.kind.value}\x1f{c.content_hash}"
    return "hash:" + hashlib.sha256(key.encode()).hexdigest()[:32]


def slot_key(c: Candidate) -> str | None:
    return "slot:" + c.triple.slot(c.scope) if c.triple else None


class WritePipeline:
    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        policy: MemoryPolicy,
        extractors: Mapping[str, Extractor],
        clock: Callable[[], datetime] = utcnow,
        review_queue=None,
    ):
        self.store = store
        self.index = index
        self.policy = policy
        self.extractors = extractors
        self.clock = clock
        self.review_queue = review_queue

    def pick_extractor(self, episode: Episode, name: str | None) -> Extractor:
        return self.extractors[name or ("facts" if episode.facts else "rule")]

    def write(self, episodes: Sequence[Episode], extractor: str | None = None) -> WriteReport:
        """Write episodes of one scope as one batch. Episodes already decided are skipped, so
        re-ingesting the same ids adds nothing, and an ingest cut short completes on re-run."""
        report = WriteReport(episodes=len(episodes))
        if not episodes:
            return report
        scope = episodes[0].scope
        if any(e.scope != scope for e in episodes):
            raise GraphMemError("a write batch holds episodes of one scope")
        planned: list[_Planned] = []
        failures: list[Decision] = []
        report.new_episodes = self.store.put_episodes(episodes)  # stage 0
        done = self.store.processed_episodes(scope, [e.id for e in episodes])
        for episode in episodes:
            if episode.id in done:
                continue
            chosen = self.pick_extractor(episode, extractor)
            try:
                candidates = chosen.extract(episode)  # stage 1
            except Exception as exc:  # any extractor failure is recorded, never lost
                reason = f"extraction by {chosen.version} failed: {type(exc).__name__}: {exc}"[:1900]
                report.failed.append((episode.id, reason))
                failures.append(Decision(op=Op.NOOP, reason=reason, scope=scope, policy=self.policy.name,
                                         episode_id=episode.id, decided_at=self.clock(), confidence=0.0))
                continue
            for c in candidates:
                if c.valid_at is None:
                    c = c.model_copy(update={"valid_at": min(episode.occurred_at, c.invalid_at or episode.occurred_at)})
                planned.append(_Planned(episode, c, chosen.version))
        for attempt in range(MAX_ATTEMPTS):
            try:
                units, decisions, reviews = self._plan_and_commit(scope, planned, failures)
                break
            except Conflict:
                report.conflicts += 1
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        report.decisions.update(d.op.value for d in decisions)
        report.unit_ids = [u.id for u in units]
        report.reviews = reviews
        if units:
            self.index.upsert(units)  # store first, then index
        return report

    # -- planning -------------------------------------------------------------------------
    def _plan_and_commit(self, scope: Scope, planned: list[_Planned], failures: list[Decision]):
        now = self.clock()
        at = AsOf(valid=now, known=now)
        decisions: list[Decision] = list(failures)
        reviews: list[str] = []
        todo: list[_Planned] = []
        for p in planned:  # stage 0': the gate
            ok, reason = self.policy.should_write(p.candidate, WriteContext(episode=p.episode))
            if ok:
                todo.append(p)
                continue
            review_id = self.review_queue.hold(p.candidate, p.episode, reason) if self.review_queue else None
            if review_id:
                reviews.append(review_id)
            decisions.append(self._decision(Op.NOOP, reason, p, now))
        guards = {k for p in todo for k in (hash_key(p.candidate), slot_key(p.candidate)) if k}
        versions = self.store.guard_versions(scope, guards)  # read before the neighbours
        hashes = sorted({p.candidate.content_hash for p in todo})
        slots = sorted({p.candidate.triple.slot(scope) for p in todo if p.candidate.triple})
        visible: dict[str, MemoryUnit] = {}
        if hashes:
            visible.update({u.id: u for u in self._all(scope, UnitFilter(content_hashes=tuple(hashes)), at)})
        if slots:
            visible.update({u.id: u for u in self._all(scope, UnitFilter(slots=tuple(slots)), at)})

        semantic = self._semantic_neighbours(scope, todo, at)
        units: list[MemoryUnit] = []
        invalidations: list[Invalidation] = []
        gone: set[str] = set()
        for i, p in enumerate(todo):
            c = p.candidate
            dup = next((u for u in visible.values() if u.kind == c.kind and u.content_hash == c.content_hash), None)
            if dup is not None and not c.retract:  # stage 2: exact duplicate, no policy call
                decisions.append(self._decision(Op.NOOP, "exact duplicate of a current fact", p, now, target=dup.id))
                continue
            neighbours = self._neighbours(c, visible, [u for u in semantic.get(i, ()) if u.id not in gone])
            decision = self.policy.reconcile(c, neighbours)  # stage 3
            decision = decision.model_copy(update={"episode_id": p.episode.id, "decided_at": now})
            if decision.target_id and decision.target_id not in {n.id for n in neighbours}:
                decision = self._decision(
                    Op.NOOP, f"policy named target {decision.target_id!r}, not a neighbour shown", p, now
                )
            if decision.op in (Op.ADD, Op.UPDATE):
                unit = self._unit(p, now, decision)
                units.append(unit)
                visible[unit.id] = unit
                decision = decision.model_copy(update={"produced_id": unit.id})
            if decision.op in (Op.UPDATE, Op.DELETE):
                invalid_at = decision.invalid_at or c.valid_at if decision.op is Op.UPDATE else None
                invalidations.append(
                    Invalidation(unit_id=decision.target_id, decision_id=decision.id, expired_at=now,
                                 invalid_at=invalid_at, reason=decision.reason)
                )
                visible.pop(decision.target_id, None)
                gone.add(decision.target_id)
            decisions.append(decision)
        batch = WriteBatch(
            units=tuple(units),
            decisions=tuple(decisions),
            invalidations=tuple(invalidations),
            guards={k: versions.get(k, 0) for k in guards},
        )
        self.store.commit(batch, scope)
        return units, decisions, reviews

    def _all(self, scope: Scope, flt: UnitFilter, at: AsOf) -> list[MemoryUnit]:
        found, page = [], Page(limit=5_000)
        while True:
            chunk = self.store.list_units(scope, flt, page, at)
            found += chunk
            if len(chunk) < page.limit:
                return found
            page = Page(offset=page.offset + page.limit, limit=page.limit)

    def _semantic_neighbours(self, scope: Scope, todo: list[_Planned], at: AsOf) -> dict[int, list[MemoryUnit]]:
        """Nearest visible same-kind units by meaning, for the candidates that need them: all
        of them when the policy asks, else semantic candidates without a triple (near-duplicate
        detection). One embedding batch and one store read for the whole batch."""
        wants_all = getattr(self.policy, "wants_semantic_neighbours", False)
        picked = [i for i, p in enumerate(todo)
                  if wants_all or (p.candidate.triple is None and p.candidate.kind is MemoryKind.semantic)]
        if not picked:
            return {}
        found = self.index.search_semantic_many([todo[i].candidate.content for i in picked], scope, NEIGHBOURS)
        ids = tuple({h.id for hits in found for h in hits})
        units = {u.id: u for u in self._all(scope, UnitFilter(ids=ids), at)} if ids else {}
        return {
            i: [units[h.id] for h in hits if h.id in units and units[h.id].kind == todo[i].candidate.kind]
            for i, hits in zip(picked, found)
        }

    @staticmethod
    def _neighbours(c: Candidate, visible: dict[str, MemoryUnit], semantic: list[MemoryUnit]) -> list[MemoryUnit]:
        """Visible same-kind units sharing the candidate's hash or single-valued slot, plus its
        nearest units by meaning."""
        slot = c.triple.slot(c.scope) if c.triple else None
        near = {
            u.id: u for u in visible.values()
            if u.kind == c.kind and (u.content_hash == c.content_hash or (slot and u.triple and u.triple.slot(u.scope) == slot))
        }
        for u in semantic:
            near.setdefault(u.id, u)
        return list(near.values())

    def _unit(self, p: _Planned, now: datetime, decision: Decision) -> MemoryUnit:
        c = p.candidate
        ends = [t for t in (c.invalid_at, decision.invalid_at if decision.op is Op.ADD else None) if t]
        return MemoryUnit(
            kind=c.kind,
            scope=c.scope,
            content=c.content,
            content_hash=c.content_hash,
            source=SourceRef(episode_id=p.episode.id, channel=p.episode.channel,
                             extractor_version=p.extractor_version),
            time=TemporalMeta(created_at=now, valid_at=c.valid_at, invalid_at=min(ends) if ends else None),
            confidence=c.confidence,
            labels=c.labels,
            triple=c.triple,
        )

    def _decision(self, op: Op, reason: str, p: _Planned, now: datetime, target: str | None = None) -> Decision:
        return Decision(op=op, reason=reason, target_id=target, scope=p.candidate.scope, policy=self.policy.name,
                        confidence=p.candidate.confidence, decided_at=now, episode_id=p.episode.id,
                        candidate=p.candidate.content)
