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

from ..errors import Conflict, GraphMemError, NotFound
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
    ReviewItem,
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


def _visible_at(unit: MemoryUnit, t: datetime) -> bool:
    """Is a unit just planned (no invalidation edges yet) true at world time ``t``?"""
    time = unit.time
    return (time.valid_at is None or time.valid_at <= t) and (time.invalid_at is None or t < time.invalid_at)


class _Visible:
    """The units visible now that a batch's candidates can collide with, indexed by
    (kind, content hash) and by single-valued slot, kept current as the batch is planned."""

    def __init__(self) -> None:
        self.units: dict[str, MemoryUnit] = {}
        self.by_hash: dict[tuple[str, str], set[str]] = {}
        self.by_slot: dict[str, set[str]] = {}

    def add(self, u: MemoryUnit) -> None:
        self.units[u.id] = u
        self.by_hash.setdefault((u.kind.value, u.content_hash), set()).add(u.id)
        if u.triple:
            self.by_slot.setdefault(u.triple.slot(u.scope), set()).add(u.id)

    def add_all(self, units: Sequence[MemoryUnit]) -> None:
        for u in units:
            self.add(u)

    def remove(self, unit_id: str) -> None:
        u = self.units.pop(unit_id, None)
        if u is not None:
            self.by_hash[(u.kind.value, u.content_hash)].discard(unit_id)
            if u.triple:
                self.by_slot[u.triple.slot(u.scope)].discard(unit_id)

    def same_hash(self, c: Candidate) -> list[MemoryUnit]:
        return [self.units[i] for i in sorted(self.by_hash.get((c.kind.value, c.content_hash), ()))]

    def neighbours(self, c: Candidate, semantic: Sequence[MemoryUnit]) -> list[MemoryUnit]:
        """Visible same-kind units sharing the candidate's hash or single-valued slot, plus its
        nearest units by meaning."""
        ids = set(self.by_hash.get((c.kind.value, c.content_hash), ()))
        if c.triple:
            ids |= {i for i in self.by_slot.get(c.triple.slot(c.scope), ()) if self.units[i].kind == c.kind}
        near = {i: self.units[i] for i in sorted(ids)}
        for u in semantic:
            near.setdefault(u.id, u)
        return list(near.values())


class WritePipeline:
    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        policy: MemoryPolicy,
        extractors: Mapping[str, Extractor],
        clock: Callable[[], datetime] = utcnow,
    ):
        self.store = store
        self.index = index
        self.policy = policy
        self.extractors = extractors
        self.clock = clock

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
            planned += self._extract(self.pick_extractor(episode, extractor), episode, report, failures)
        return self._run(scope, planned, failures, report)

    def _extract(self, chosen: Extractor, episode: Episode, report: WriteReport,
                 failures: list[Decision]) -> list[_Planned]:
        """Stage 1. A failing extractor is recorded as a NOOP decision with its reason (the
        episode is already stored), never raised."""
        try:
            candidates = chosen.extract(episode)
        except Exception as exc:  # any extractor failure, by design
            reason = f"extraction by {chosen.version} failed: {type(exc).__name__}: {exc}"[:1900]
            report.failed.append((episode.id, reason))
            failures.append(Decision(op=Op.NOOP, reason=reason, scope=episode.scope, policy=self.policy.name,
                                     episode_id=episode.id, decided_at=self.clock(), confidence=0.0))
            return []
        return [_Planned(episode, self._dated(c, episode), chosen.version) for c in candidates]

    def approve(self, item: ReviewItem) -> WriteReport:
        """Write a candidate a human approved: past the gate, through dedupe and reconcile."""
        episode = self.store.get_episode(item.episode_id, item.scope)
        if episode is None:
            raise NotFound(f"episode {item.episode_id} of review {item.id} no longer exists")
        planned = [_Planned(episode, item.candidate, item.extractor_version)]
        return self._run(item.scope, planned, [], WriteReport(), gated=False, note=f"approved in review {item.id}")

    def reextract(self, scope: Scope, extractor: str, batch: int = 200, progress=None) -> WriteReport:
        """Re-run extraction over the scope's stored episodes with ``extractor``. Units of other
        extractor versions are retired by DELETE decisions that name the new version (history
        and the old units stay); episodes already extracted by this version are skipped."""
        chosen = self.extractors[extractor]
        report, page = WriteReport(), Page(limit=batch)
        while ids := self.store.list_episode_ids(scope, page):
            episodes = [e for e in (self.store.get_episode(i, scope) for i in ids) if e is not None]
            derived = tuple(d for e in episodes for d in e.derived_ids)
            current = self.store.list_units(scope, UnitFilter(ids=derived), Page(limit=max(len(derived), 1))) if derived else []
            retire = [u for u in current if u.source.extractor_version != chosen.version]
            stale = {u.source.episode_id for u in retire}
            fresh = {u.source.episode_id for u in current} - stale
            planned, failures = [], []
            for episode in episodes:
                if episode.id not in fresh:
                    planned += self._extract(chosen, episode, report, failures)
            report.episodes += len(episodes)
            self._run(scope, planned, failures, report, retire=retire, note=f"re-extraction with {chosen.version}")
            if progress:
                progress(len(episodes))
            page = Page(offset=page.offset + page.limit, limit=page.limit)
        return report

    # -- planning -------------------------------------------------------------------------
    @staticmethod
    def _dated(c: Candidate, episode: Episode) -> Candidate:
        """A candidate without a world time is taken as true from when its episode happened."""
        if c.valid_at is not None:
            return c
        return c.model_copy(update={"valid_at": min(episode.occurred_at, c.invalid_at or episode.occurred_at)})

    def _run(self, scope: Scope, planned: list[_Planned], failures: list[Decision], report: WriteReport,
             retire: Sequence[MemoryUnit] = (), gated: bool = True, note: str = "") -> WriteReport:
        """Plan and commit (re-planning when a guard says another writer got there first), then
        update the index."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                units, decisions, reviews = self._plan_and_commit(scope, planned, failures, retire, gated, note)
                break
            except Conflict:
                report.conflicts += 1
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        report.decisions.update(d.op.value for d in decisions)
        report.unit_ids += [u.id for u in units]
        report.reviews += reviews
        if units:
            self.index.upsert(units)  # store first, then index
        return report

    def _plan_and_commit(self, scope: Scope, planned: list[_Planned], failures: list[Decision],
                         retire: Sequence[MemoryUnit] = (), gated: bool = True, note: str = ""):
        now = self.clock()
        at = AsOf(valid=now, known=now)
        decisions: list[Decision] = list(failures)
        held: list[ReviewItem] = []
        invalidations: list[Invalidation] = []
        for old in retire:
            d = Decision(op=Op.DELETE, target_id=old.id, scope=scope, policy=self.policy.name, decided_at=now,
                         episode_id=old.source.episode_id,
                         reason=f"superseded by {note} (was {old.source.extractor_version})")
            decisions.append(d)
            invalidations.append(Invalidation(unit_id=old.id, decision_id=d.id, expired_at=now, invalid_at=None,
                                              reason=d.reason))
        gone: set[str] = {u.id for u in retire}
        todo: list[_Planned] = []
        for p in planned:  # stage 0': the gate
            ok, reason = self.policy.should_write(p.candidate, WriteContext(episode=p.episode))
            if ok or not gated:
                todo.append(p)
                continue
            item = ReviewItem(scope=scope, candidate=p.candidate, episode_id=p.episode.id,
                              extractor_version=p.extractor_version, reason=reason)
            held.append(item)
            decisions.append(self._decision(Op.NOOP, f"held for review {item.id}: {reason}", p, now))
        guards = {k for p in todo for k in (hash_key(p.candidate), slot_key(p.candidate)) if k}
        versions = self.store.guard_versions(scope, guards)  # read before the neighbours
        hashes = sorted({p.candidate.content_hash for p in todo})
        slots = sorted({p.candidate.triple.slot(scope) for p in todo if p.candidate.triple})
        visible = _Visible()
        if hashes:
            visible.add_all(self._all(scope, UnitFilter(content_hashes=tuple(hashes)), at))
        if slots:
            visible.add_all(self._all(scope, UnitFilter(slots=tuple(slots)), at))
        for uid in gone:
            visible.remove(uid)

        semantic = self._semantic_neighbours(scope, todo, at)
        units: list[MemoryUnit] = []
        for i, p in enumerate(todo):
            c = p.candidate
            dup = next(iter(visible.same_hash(c)), None)
            if dup is not None and not c.retract:  # stage 2: exact duplicate, no policy call
                decisions.append(self._decision(Op.NOOP, "exact duplicate of a current fact", p, now, target=dup.id))
                continue
            neighbours = visible.neighbours(c, [u for u in semantic.get(i, ()) if u.id not in gone])
            decision = self.policy.reconcile(c, neighbours)  # stage 3
            decision = decision.model_copy(update={"episode_id": p.episode.id, "decided_at": now,
                                                   "reason": f"{note}: {decision.reason}" if note else decision.reason})
            if decision.target_id and decision.target_id not in {n.id for n in neighbours}:
                decision = self._decision(
                    Op.NOOP, f"policy named target {decision.target_id!r}, not a neighbour shown", p, now
                )
            if decision.op in (Op.ADD, Op.UPDATE):
                unit = self._unit(p, now, decision)
                units.append(unit)
                if _visible_at(unit, now):  # a unit that already ended is history, not a duplicate
                    visible.add(unit)
                decision = decision.model_copy(update={"produced_id": unit.id})
            if decision.op in (Op.UPDATE, Op.DELETE):
                invalid_at = decision.invalid_at or c.valid_at if decision.op is Op.UPDATE else None
                invalidations.append(
                    Invalidation(unit_id=decision.target_id, decision_id=decision.id, expired_at=now,
                                 invalid_at=invalid_at, reason=decision.reason)
                )
                visible.remove(decision.target_id)
                gone.add(decision.target_id)
            decisions.append(decision)
        batch = WriteBatch(
            units=tuple(units),
            decisions=tuple(decisions),
            invalidations=tuple(invalidations),
            reviews=tuple(held),
            guards={k: versions.get(k, 0) for k in guards},
        )
        self.store.commit(batch, scope)
        return units, decisions, [r.id for r in held]

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
