"""``WritePipeline``: batches of episodes through the stages, each batch one atomic commit."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import datetime, timedelta
from typing import Literal, Protocol

from graphmem.domain.models import (
    AsOf,
    Candidate,
    Decision,
    Episode,
    MemoryKind,
    MemoryUnit,
    Op,
    Page,
    ReviewItem,
    Scope,
    TimelineEvent,
    WriteBatch,
    utcnow,
)
from graphmem.errors import Conflict, GraphMemError, NotFound, episode_conflict, erased_meanwhile
from graphmem.pipelines.write import stages
from graphmem.pipelines.write.batch import Batch, Proposal
from graphmem.pipelines.write.collector import rare_full_collections
from graphmem.pipelines.write.draw import draw
from graphmem.pipelines.write.mentions import drawn_links, mention_links
from graphmem.pipelines.write.pipelining import NO_COMMIT_IN_FLIGHT, CommitInFlight, Committer
from graphmem.pipelines.write.report import ExtractionFailure, Rejection, WriteReport
from graphmem.pipelines.write.timelines import GroupKey, group_of
from graphmem.ports import EpisodeStore, ErasureStore, Extractor, MemoryIndex, MemoryPolicy, TimelineStore, UnitStore

#: Plans of one batch that a guard may refuse before the write fails with ``Conflict``. Between
#: two, a random pause of up to ``BACKOFF`` doubled at each attempt (at most ``MAX_BACKOFF``), so
#: writers racing for the same groups (threads, or server processes on one database) fall out of
#: step instead of refusing each other every time. Eight attempts ran out on a busy 2-core
#: machine for four writers of one subject over two server processes (tests/neo4j/test_two_servers.py).
MAX_ATTEMPTS = 16
BACKOFF = 0.005
MAX_BACKOFF = 1.0
#: Locks that keep a process's writes of one scope apart (``WritePipeline._writing``).
SCOPE_LOCKS = 64
NEIGHBOURS = 5
#: System times of one group's log are strictly increasing: a write never shares its time
#: with an earlier one, whatever the clock says.
TICK = timedelta(microseconds=1)


class WriteStore(EpisodeStore, TimelineStore, UnitStore, ErasureStore, Protocol):
    """What a write reads and writes: episodes, timelines, and the names units know; and
    whether an erasure raced it."""


class WritePipeline:
    """Writes episodes: stores them, extracts candidates, decides each, draws the timelines
    they touch and commits each batch atomically (``graphmem.pipelines.write``)."""

    def __init__(
        self,
        store: WriteStore,
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
        self._last = datetime.min.replace(tzinfo=utcnow().tzinfo)
        # A fixed set, however many scopes a long-running process writes: a scope's lock is
        # picked by its key's hash (two scopes rarely share one, and then only take turns).
        self._scope_locks = [threading.RLock() for _ in range(SCOPE_LOCKS)]

    @contextmanager
    def _writing(self, scopes: Iterable[Scope]) -> Iterator[None]:
        """Hold the scopes for one write of this pipeline at a time: two writes planned against
        the same timelines would refuse each other's guards. Writes of other scopes, and of
        other processes (kept apart by the guards), go on."""
        with ExitStack() as held:
            for i in sorted({hash(s.key) % SCOPE_LOCKS for s in scopes}):  # one order: no deadlock
                held.enter_context(self._scope_locks[i])
            yield

    def pick_extractor(self, episode: Episode, name: str | None) -> Extractor:
        return self.extractors[name or ("facts" if episode.facts else "rule")]

    def write_all(
        self,
        batches: Iterable[Sequence[Episode]],
        extractor: str | None = None,
        actor: str | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
    ) -> WriteReport:
        """Write batches (each of one scope) in order, each in one transaction, ``actor`` on
        every decision.

        - Episodes already decided are skipped; an id held with other content is ``rejected``.
        - The next batch is planned while the one before commits (``pipelining``).
        - ``on_write(report, episodes)`` follows each commit, in order.
        - A failure is raised once the batches before it have committed; no later batch is
          decided (its episodes may stay undecided: ``GraphMem.complete``).
        """
        committer = Committer(self.store, self._committed, on_write)
        batches = [b for b in batches if b]
        # An erasure of a scope while its batches are written: the batch committing then fails
        # (its episodes are gone), and no later batch may store its episodes after it (checked
        # before each is stored: only an erasure begun in that moment can still be missed).
        erasures: dict[Scope, datetime | None] = {}
        with self._writing(b[0].scope for b in batches):  # until the last commit is settled
            try:
                with rare_full_collections() if len(batches) > 1 else nullcontext():
                    for place, episodes in enumerate(batches):
                        if len(batches) > 1:
                            scope, mark = episodes[0].scope, self.store.last_erasure(episodes[0].scope)
                            if erasures.setdefault(scope, mark) != mark:
                                raise erased_meanwhile(scope)
                        in_flight = committer.in_flight()
                        batch = self._receive(episodes, extractor, actor, in_flight)
                        self._prepare(batch, in_flight)
                        committer.settle()
                        if committer.retried:  # the batch before was planned again: so is this one
                            committer.retried = False
                            self._prepare(batch)
                        committer.submit(batch, last=place == len(batches) - 1)
            finally:
                try:
                    committer.settle()  # an error of an earlier batch is raised before a later one's
                finally:
                    committer.close()
        return committer.report

    def _receive(
        self, episodes: Sequence[Episode], extractor: str | None, actor: str | None, in_flight: CommitInFlight
    ) -> Batch:
        """Persist a batch's episodes, then extract candidates from those not yet decided."""
        report = WriteReport(episodes=len(episodes))
        scope = episodes[0].scope
        if any(e.scope != scope for e in episodes):
            raise GraphMemError("a write batch holds episodes of one scope")
        proposals: list[Proposal] = []
        failures: list[Decision] = []
        appended = self.store.put_episodes(episodes)
        report.new_episodes = appended.new
        report.episodes -= len(appended.conflicts)
        report.rejected += [Rejection(i, str(episode_conflict(episodes[i].id))) for i in appended.conflicts]
        ids = [e.id for e in episodes]
        in_flight.wait_before(episodes=ids)
        done = self.store.processed_episodes(scope, ids)
        for place, episode in enumerate(episodes):
            if episode.id in done or place in appended.conflicts:
                continue
            chosen = self.pick_extractor(episode, extractor)
            candidates = self._extract(chosen, episode, report, failures)
            proposals += [Proposal(episode, c, chosen.version, (place, i)) for i, c in enumerate(candidates)]
        written = [e for i, e in enumerate(episodes) if e.id not in done and i not in appended.conflicts]
        return Batch(
            scope,
            proposals,
            failures,
            report,
            ids=frozenset(ids),
            size=len(episodes),
            episodes=written,
            decided=tuple(e.id for e in written),
            actor=actor,
        )

    def _extract(
        self, chosen: Extractor, episode: Episode, report: WriteReport, failures: list[Decision]
    ) -> list[Candidate]:
        """Extract an episode's candidates. A failing extractor is recorded as a NOOP decision
        with its reason, never raised: the commit decides the episode like any other (its
        decision says what went wrong; ``reextract`` tries again)."""
        try:
            candidates = chosen.extract(episode)
        except Exception as exc:  # any extractor failure, by design
            reason = f"extraction by {chosen.version} failed: {type(exc).__name__}: {exc}"[:1900]
            report.failed.append(ExtractionFailure(episode.id, reason))
            failures.append(
                Decision(
                    op=Op.NOOP,
                    reason=reason,
                    scope=episode.scope,
                    policy=self.policy.name,
                    episode_id=episode.id,
                    decided_at=self.clock(),
                    confidence=0.0,
                )
            )
            return []
        return [stages.dated(c, episode) for c in candidates]

    def approve(self, item: ReviewItem, actor: str | None = None) -> WriteReport:
        """Write a candidate a human approved: past the gate, through the timeline and reconcile."""
        episode = self.store.get_episode(item.episode_id, item.scope)
        if episode is None:
            raise NotFound(f"episode {item.episode_id} of review {item.id} no longer exists")
        proposals = [Proposal(episode, item.candidate, item.extractor_version, (0, 0))]
        note = f"approved in review {item.id}"
        return self._run(Batch(item.scope, proposals, [], WriteReport(), gated=False, note=note, actor=actor))

    def retract(self, unit: MemoryUnit, reason: str, actor: str | None = None) -> WriteReport:
        """Retract a stored fact on an operator's word: a retraction of its value in its group,
        after every assertion made so far (docs/concepts.md, "Operator changes").

        - Its DELETE decision carries ``reason`` and belongs to no episode's log: re-extracting
          or deleting the unit's episode does not undo it.
        - An assertion made later stands.
        """
        return self._operator(unit, reason, actor, "retract", None)

    def end(self, unit: MemoryUnit, at: datetime, reason: str, actor: str | None = None) -> WriteReport:
        """End a stored fact at world time ``at`` on an operator's word: an ending of the unit's
        value (true until ``at``, no longer after), logged as ``retract`` logs its retraction;
        its UPDATE decision carries ``reason``. What was true before ``at`` stays true."""
        return self._operator(unit, reason, actor, "end", at)

    def _operator(
        self, unit: MemoryUnit, reason: str, actor: str | None, op: Literal["end", "retract"], at: datetime | None
    ) -> WriteReport:
        episode = self.store.get_episode(unit.source.episode_id, unit.scope)
        if episode is None:
            raise NotFound(f"episode {unit.source.episode_id} of unit {unit.id} no longer exists")
        events, _ = self.store.group_state(unit.scope, [unit.group] if unit.group else [])
        owner = next((d.event for d in events if d.id == unit.source.assertion_id), None)
        candidate = Candidate(
            kind=unit.kind,
            scope=unit.scope,
            content=unit.content,
            valid_at=unit.time.valid_at if op == "retract" else None,
            invalid_at=at,
            labels=unit.labels,
            confidence=unit.confidence,
            triple=unit.triple,
            op=op,
        )
        proposal = Proposal(
            episode,
            candidate,
            "operator",
            (0, 0),
            operator=reason,
            key=GroupKey(owner.group, owner.value, owner.single) if owner else None,
        )
        return self._run(Batch(unit.scope, [proposal], [], WriteReport(), gated=False, actor=actor))

    def reextract(
        self,
        scope: Scope,
        extractor: str,
        batch: int = 200,
        progress: Callable[[int], None] | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Re-run extraction over the scope's stored episodes with ``extractor``.

        - An episode's standing facts from another extractor version are retired by decisions
          naming the new version; its new facts take their place in the order of assertions,
          so where the extractors agree the same value stands.
        - History before the re-extraction stays.
        - Episodes whose latest extraction is already this version are skipped.
        """
        chosen = self.extractors[extractor]
        report, page = WriteReport(), Page(limit=batch)
        while ids := self.store.list_episode_ids(scope, page):
            episodes = [e for e in (self.store.get_episode(i, scope) for i in ids) if e is not None]
            logged: dict[str, list[Decision]] = {}
            for d in self.store.episode_events(scope, ids):
                logged.setdefault(d.episode_id or "", []).append(d)
            proposals: list[Proposal] = []
            failures: list[Decision] = []
            retire: list[Decision] = []
            extracted: list[str] = []
            for place, episode in enumerate(episodes):
                events = logged.get(episode.id, [])
                retired = {d.logged.target for d in events if d.logged.kind == "retire"}
                standing = [d for d in events if d.logged.kind != "retire" and d.id not in retired]
                latest = max((d for d in events if d.logged.kind != "retire"), key=lambda d: d.decided_at, default=None)
                if latest is not None and latest.logged.extractor_version == chosen.version:
                    continue
                retire += standing
                first = min(events, key=lambda d: d.decided_at).event if events else None
                position = first.order_ep if first else place
                candidates = self._extract(chosen, episode, report, failures)
                proposals += [
                    Proposal(episode, c, chosen.version, (position, i), first.order_at if first else None)
                    for i, c in enumerate(candidates)
                ]
                extracted.append(episode.id)
            report.episodes += len(episodes)
            note = f"re-extraction with {chosen.version}"
            self._run(
                Batch(
                    scope, proposals, failures, report, retire=retire, note=note, actor=actor, decided=tuple(extracted)
                )
            )
            if progress:
                progress(len(episodes))
            page = Page(offset=page.offset + page.limit, limit=page.limit)
        return report

    # -- one batch, from plan to commit ------------------------------------------------------
    def _run(self, batch: Batch) -> WriteReport:
        """Plan and commit one batch that no other of this pipeline overlaps."""
        with self._writing([batch.scope]):
            self._committed(batch)
        return batch.committed()

    def _committed(self, batch: Batch) -> None:
        """Plan and commit, planning again when a guard says another writer got there first."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                self._prepare(batch)
                self.store.commit(batch.planned, batch.scope, batch.relink)
                return
            except Conflict:
                batch.report.conflicts += 1
                if attempt == MAX_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, min(BACKOFF * 2**attempt, MAX_BACKOFF)))

    def _prepare(self, batch: Batch, in_flight: CommitInFlight = NO_COMMIT_IN_FLIGHT) -> None:
        """Plan a batch up to what its commit writes (``batch.plan``): the decisions, each
        recording the batch's actor, and the mention links of its new units and episodes."""
        plan = self._plan(batch, in_flight)
        batch.review_ids = [r.id for r in plan.reviews]
        units, episodes = plan.units, batch.episodes
        plan = plan.model_copy(update=mention_links(self.store, batch.scope, units, episodes, in_flight))
        if plan.anchors and in_flight.overlaps:
            # Found while the batch before commits, not in this batch's own commit (which
            # searches only if a commit other than that one changed the texts meanwhile).
            read = in_flight.texts(batch.scope, self.store.earlier_texts(batch.scope, plan.anchors))
            plan = plan.model_copy(update={"texts_read": read})
        batch.relink = lambda known_names: drawn_links(known_names, units, episodes)
        actor = batch.actor
        batch.plan = plan.model_copy(
            update={
                "decided": batch.decided,
                "decisions": tuple(
                    d if d.actor == actor else d.model_copy(update={"actor": actor}) for d in plan.decisions
                ),
            }
        )

    def _tick(self, floor: datetime) -> datetime:
        """Now, strictly after ``floor`` and after this pipeline's previous write."""
        now = max(self.clock(), floor + TICK, self._last + TICK)
        self._last = now
        return now

    def _plan(self, batch: Batch, in_flight: CommitInFlight) -> WriteBatch:
        """The stages that decide a batch's candidates, then its timelines drawn (``stages``)."""
        scope = batch.scope
        gated = (
            stages.gate(self.policy, scope, batch.proposals, self.clock())
            if batch.gated
            else stages.Gated(batch.proposals, [], [])
        )
        keys = [self._key(p) for p in gated.passed]
        timelines = stages.Timelines(self.store, scope, in_flight)
        timelines.read({k.group for k in keys} | {d.logged.group for d in batch.retire})
        now = self._tick(timelines.latest or self._last)
        for k in keys:
            timelines.groups[k.group].single = k.single
        decisions = [d.model_copy(update={"decided_at": now}) for d in [*batch.failures, *gated.decisions]]
        similar = self._similar(scope, gated.passed, AsOf(valid=now, known=now), in_flight)
        decisions += [stages.retire(timelines, old, batch.note, now) for old in batch.retire]
        unarchive: set[str] = set()
        for i, (p, key) in enumerate(zip(gated.passed, keys)):
            decided = self._decide(timelines, p, key, now, similar.get(i, ()))
            decisions.append(decided.decision)
            unarchive |= decided.unarchive
        return self._drawn(scope, timelines, now, decisions, gated.held, unarchive)

    def _decide(
        self, timelines: stages.Timelines, p: Proposal, key: GroupKey, now: datetime, similar: Sequence[MemoryUnit]
    ) -> stages.Decided:
        """One candidate decided, for free by its timeline (``stages.dedupe``) or by the policy
        (a new value), its event added to its group's log unless it changes nothing."""
        asserted = stages.event(p, key, now)
        decided = stages.dedupe(timelines.groups[key.group], p, asserted, now, self.policy.name)
        ev: TimelineEvent | None = asserted
        if decided is None:
            neighbours = stages.neighbours(timelines.groups[key.group], timelines.scope, now, similar)
            decided = stages.Decided(self._reconcile(p, neighbours, now), set())
            if decided.decision.op is Op.NOOP:
                ev = None
            elif decided.decision.op is Op.DELETE:  # the policy retracts what the target unit shows
                target = next(n for n in neighbours if n.id == decided.decision.target_id)
                ev = stages.retarget(timelines, asserted, target)
        if ev is None:
            return decided
        logged = decided._replace(decision=decided.decision.model_copy(update={"event": ev}))
        timelines.append(logged.decision)
        return logged

    def _drawn(
        self,
        scope: Scope,
        timelines: stages.Timelines,
        now: datetime,
        decisions: list[Decision],
        held: list[ReviewItem],
        unarchive: set[str],
    ) -> WriteBatch:
        """The touched timelines drawn, and the new units' vectors: their search entries are
        written with them, in the same transaction."""
        records = draw(scope, timelines.groups, now, decisions)
        vectors = dict(zip((u.id for u in records.units), self.index.vectors([u.searched for u in records.units])))
        return WriteBatch(
            units=tuple(records.units),
            decisions=tuple(records.decisions),
            invalidations=tuple(records.invalidations),
            reviews=tuple(held),
            guards=timelines.guards,
            unarchive=tuple(sorted(unarchive)),
            vectors=vectors,
        )

    def _key(self, p: Proposal) -> GroupKey:
        """The group a candidate goes to: given (an operator's), or by the policy's word on
        whether its predicate is single-valued."""
        if p.key is not None:
            return p.key
        single = self.policy.is_single_valued(p.candidate)
        return GroupKey(*group_of(p.candidate, single), single)

    def _reconcile(self, p: Proposal, neighbours: list[MemoryUnit], now: datetime) -> Decision:
        """The policy's decision about a new value, given its neighbours."""
        decision = self.policy.reconcile(p.candidate, neighbours)
        decision = decision.model_copy(update={"episode_id": p.episode.id, "decided_at": now})
        if decision.target_id and decision.target_id not in {n.id for n in neighbours}:
            reason = f"policy named target {decision.target_id!r}, not a neighbour shown"
            return p.decision(Op.NOOP, reason, now, self.policy.name)
        return decision

    def _similar(
        self, scope: Scope, proposals: list[Proposal], at: AsOf, in_flight: CommitInFlight
    ) -> dict[int, list[MemoryUnit]]:
        """Nearest visible same-kind units by meaning, for the candidates that need them: all
        of them when the policy asks, else semantic candidates without a triple (near-duplicate
        detection). One embedding batch and one store read for the whole batch."""
        wants_all = getattr(self.policy, "wants_semantic_neighbours", False)
        picked = [
            i
            for i, p in enumerate(proposals)
            if wants_all or (p.candidate.triple is None and p.candidate.kind is MemoryKind.semantic)
        ]
        if not picked:
            return {}
        in_flight.wait_before(search=True)
        wanted = [proposals[i].candidate for i in picked]
        found = self.index.search_semantic_many([c.content for c in wanted], scope, NEIGHBOURS, at)
        return {i: [s.unit for s in hits if s.unit.kind == c.kind] for i, c, hits in zip(picked, wanted, found)}
