"""The write pipeline.

    0  persist the episodes           (a failing extractor or policy never loses them), each new
                                      one undecided until stage 4's commit decides it
    1  extract candidates
    0' gate: policy.should_write      (resident targets go to the human review queue)
    2  timelines first, for free: a candidate that restates a value its group already holds,
       or retracts one, is decided here without asking the policy (no LLM call)
    3  reconcile a new value against visible same-scope same-kind neighbours (the policy)
    4  draw every touched group's timeline (``graphmem.domain.timeline``): new units, invalidation
       edges ending or closing old ones; commit all of it atomically, then update the index

Every candidate belongs to a timeline group (a single-valued slot, a multi-valued fact, or a
text without a triple); whatever the policy decided about a candidate, where its unit starts and
ends, and which units it ends, is the timeline's job, so facts arriving in any order give one
value per single-valued slot at every (world time, system time).

Stage 4 is guarded optimistically: the batch records the length of each group's log as it read
it, and its commit, holding the scope's names lock (which every commit with guards holds), is
refused when another writer has changed one since; the batch is then planned again.
"""

from __future__ import annotations

import gc
import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from graphmem.domain import timeline
from graphmem.domain.entries import unit_text
from graphmem.domain.mentions import KnownNames, digest, mentions, names_in, written
from graphmem.domain.models import (
    AsOf,
    Candidate,
    Decision,
    Episode,
    GroupUnit,
    Invalidation,
    MemoryKind,
    MemoryUnit,
    NamesRead,
    Op,
    Page,
    Relink,
    ReviewItem,
    Scope,
    SourceRef,
    TemporalMeta,
    TextsRead,
    TimelineEvent,
    WriteBatch,
    WriteContext,
    normalise,
    utcnow,
)
from graphmem.errors import Conflict, GraphMemError, NotFound, episode_conflict, erased_meanwhile
from graphmem.ports import EpisodeStore, ErasureStore, Extractor, MemoryIndex, MemoryPolicy, TimelineStore, UnitStore

MAX_ATTEMPTS = 8
NEIGHBOURS = 5
#: System times of one group's log are strictly increasing: a write never shares its time
#: with an earlier one, whatever the clock says.
TICK = timedelta(microseconds=1)


@dataclass
class WriteReport:
    episodes: int = 0
    new_episodes: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    unit_ids: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)
    conflicts: int = 0
    #: Episodes not stored, by position in the episodes written, with why (one line each).
    rejected: list[tuple[int, str]] = field(default_factory=list)

    def merge(self, other: WriteReport) -> None:
        self.episodes += other.episodes
        self.new_episodes += other.new_episodes
        self.decisions.update(other.decisions)
        self.unit_ids += other.unit_ids
        self.failed += other.failed
        self.reviews += other.reviews
        self.conflicts += other.conflicts
        self.rejected += other.rejected


@dataclass
class _Planned:
    """One candidate with its episode, the extractor that produced it, and its place in the
    order of assertions: (the episode's place in the write, the fact's place in the episode),
    after ``order_at`` (the write's time; re-extraction keeps the episode's first one)."""

    episode: Episode
    candidate: Candidate
    extractor_version: str
    position: tuple[int, int]
    order_at: datetime | None = None
    #: (group, value, single) when they are given rather than derived from the candidate.
    group: tuple[str, str, bool] | None = None
    #: An operator's reason: the decision is the operator's, in no episode's log.
    operator: str | None = None


def group_of(c: Candidate, single: bool) -> tuple[str, str]:
    """(timeline group, value) of a candidate: a single-valued slot holds one object at a
    time; a multi-valued fact and a text without a triple each form a group of their own. An
    episodic text is an event: the same words at another time are another event, so its group
    is also keyed by when it happened."""
    if c.triple is not None and single:
        return "slot:" + c.triple.slot(c.scope), normalise(c.triple.object or "")
    if c.triple is not None:
        t = c.triple
        key = f"{c.scope.key}\x1f{normalise(t.subject)}\x1f{normalise(t.predicate)}\x1f{normalise(t.object or '')}"
        return "fact:" + hashlib.sha256(key.encode()).hexdigest()[:32], normalise(t.object or "")
    key = f"{c.scope.key}\x1f{c.kind.value}\x1f{c.content_hash}"
    if c.kind is MemoryKind.episodic and c.valid_at is not None:
        key += f"\x1f{c.valid_at.isoformat()}"
    return "text:" + hashlib.sha256(key.encode()).hexdigest()[:32], c.content_hash


def as_event(d: Decision) -> timeline.Event:
    """A decision's log entry in the shape ``graphmem.domain.timeline`` computes with."""
    e = d.event
    assert e is not None
    return timeline.Event(
        id=d.id,
        kind=e.kind,
        value=e.value,
        known=d.decided_at,
        order=(e.order_at, e.order_ep, e.order_fact),
        valid_at=e.valid_at,
        end=e.end,
        target=e.target,
    )


def _retracts(retraction: TimelineEvent, assertions: Sequence[Decision]) -> bool:
    """Whether ``retraction`` takes back one of ``assertions``: an earlier assertion of its value
    in its group (as ``graphmem.domain.timeline`` applies a retraction)."""
    order = (retraction.order_at, retraction.order_ep, retraction.order_fact)
    return any(
        a.event is not None
        and a.event.kind == "assert"
        and a.event.group == retraction.group
        and a.event.value == retraction.value
        and (a.event.order_at, a.event.order_ep, a.event.order_fact) < order
        for a in assertions
    )


def drawn(
    units: Sequence[GroupUnit],
) -> list[tuple[str, str, datetime | None, datetime | None, datetime, list[tuple[datetime, datetime | None]]]]:
    """Stored units in the shape ``timeline.shown`` reads."""
    return [
        (
            g.unit.id,
            g.unit.source.assertion_id or g.unit.id,
            g.unit.time.valid_at,
            g.unit.time.invalid_at,
            g.unit.time.created_at,
            [(e.expired_at, e.invalid_at) for e in g.edges],
        )
        for g in units
    ]


def _day(t: datetime | None) -> str:
    return t.date().isoformat() if t else "the open end"


@dataclass
class _Group:
    """One timeline group while a batch is planned: its stored log and units, plus the log
    entries this batch adds."""

    single: bool
    events: list[Decision]
    units: list[GroupUnit]

    def standing(self, at: datetime) -> list[timeline.Event]:
        return timeline.active([as_event(d) for d in self.events], at)

    def alive(self, at: datetime) -> dict[str, timeline.Shown]:
        return {s.id: s for s in timeline.shown(drawn(self.units), at)}

    def covering(self, at: datetime, owners: set[str]) -> list[MemoryUnit]:
        """Units of these owners alive at system time ``at`` that show world time ``at``."""
        alive = self.alive(at)
        return [
            u.unit
            for u in self.units
            if u.unit.id in alive and u.unit.source.assertion_id in owners and timeline.covers(alive[u.unit.id], at)
        ]

    @property
    def archived(self) -> set[str]:
        return {u.unit.id for u in self.units if u.archived}


@dataclass
class _Write:
    """One batch of a write: received (its episodes stored, its candidates extracted), then
    planned (``batch``, ``held``), then committed."""

    scope: Scope
    planned: list[_Planned]
    failures: list[Decision]
    report: WriteReport
    retire: Sequence[Decision] = ()
    gated: bool = True
    note: str = ""
    actor: str | None = None
    #: Every episode id of the batch, how many episodes it has, and the new ones (to link).
    ids: frozenset[str] = frozenset()
    size: int = 0
    episodes: Sequence[Episode] = ()
    #: The episodes its commit decides (``WriteBatch.decided``).
    decided: tuple[str, ...] = ()
    batch: WriteBatch | None = None
    held: list[str] = field(default_factory=list)
    #: Draws the batch's mention links again, for a commit that finds names made known since.
    relink: Relink | None = None

    @property
    def staged(self) -> WriteBatch:
        """The batch as planned (``_prepare``)."""
        if self.batch is None:
            raise RuntimeError("the write is not planned yet")
        return self.batch


class _Ahead:
    """What the batch committing while the next one is planned changes: the logs of its
    episodes, its groups (its guards), the search entries (when it adds, ends or unarchives
    units) and the names it makes known. The plan calls ``before`` ahead of each read of the
    first three, which waits for that commit when the read would see what it changes, and
    adds ``known`` to what it reads of the names, so the plan is the one a plan after the
    commit would make."""

    def __init__(self, settle: Callable[[], None] | None = None, w: _Write | None = None):
        self._settle = settle
        self._scope = w.scope if w else None
        self._ids = w.ids if w else frozenset()
        batch = w.staged if w else WriteBatch()
        self._guards = batch.guards.keys()
        self._search = bool(batch.units or batch.invalidations or batch.unarchive)
        self._anchors = batch.anchors
        self._units = batch.units
        self._texts_key = batch.texts_key

    @property
    def pending(self) -> bool:
        """Whether a commit of the same pipeline runs (or ran) while this plan is made."""
        return self._scope is not None

    def texts(self, scope: Scope, read: TextsRead) -> TextsRead:
        """``read`` (``UnitStore.earlier_texts``) with the commit's new units' texts in ``scope``
        and its key: those the read may have missed, as the commit's own count says
        (``TextsRead.ahead``); its episodes were stored before it was planned, so found."""
        if scope != self._scope or self._texts_key is None:
            return read
        new = {u.id: unit_text(u.content, u.summary) for u in self._units}
        return read.model_copy(update={"ahead": self._texts_key, "found": {**read.found, **new}})

    def known(self, scope: Scope, texts: Collection[str]) -> dict[str, bool]:
        """The names the texts hold that the commit makes known in ``scope``, as
        ``UnitStore.known_names`` will read them once it is done (what it read before plus
        these: ``mention_links``)."""
        if scope != self._scope:
            return {}
        return names_in(texts, dict(self._anchors))

    def made(self, scope: Scope) -> str | None:
        """The digest of the names the commit makes known in ``scope`` (None: none)."""
        return digest(self._anchors) if scope == self._scope and self._anchors else None

    def before(self, episodes: Collection[str] = (), guards: Collection[str] = (), search: bool = False) -> None:
        if self._settle is None:
            return
        if not self._ids.isdisjoint(episodes) or not self._guards.isdisjoint(guards) or (search and self._search):
            settle, self._settle = self._settle, None
            settle()


NOTHING_AHEAD = _Ahead()

#: How many more collections of the collector's youngest but one generation an ingest lets pass
#: before a full one (Python's default: 10). A full collection scans every object the process
#: holds, and an ingest's caller often holds all its episodes: in benchmarks/graphiti's shape
#: (20k one-fact episodes held by the caller), 18 full collections took 5.3 s of the client's
#: 17.9 s of CPU; at 100 a tenth as many, 0.8 s.
FULL_COLLECTION_EVERY = 100
_collections_lock = threading.Lock()
_collections_users = 0  # ingests running with FULL_COLLECTION_EVERY
_collections_before = gc.get_threshold()  # the process's thresholds before the first of them


@contextmanager
def _rare_full_collections() -> Iterator[None]:
    """Full collections a tenth as often while a many-batch ingest runs (``FULL_COLLECTION_EVERY``);
    the thresholds the process had are restored when the last such ingest ends."""
    global _collections_users, _collections_before
    with _collections_lock:
        if _collections_users == 0:
            _collections_before = gc.get_threshold()
            gc.set_threshold(*_collections_before[:2], FULL_COLLECTION_EVERY)
        _collections_users += 1
    try:
        yield
    finally:
        with _collections_lock:
            _collections_users -= 1
            if _collections_users == 0:
                gc.set_threshold(*_collections_before)


class _Committer:
    """Commits the batches of ``WritePipeline.write_all`` one at a time and in order: in a
    second thread while another batch follows to be planned, the last one (so a write of one
    batch: most writes) when it is settled. A batch a guard refused (another writer committed
    to one of its groups) is planned and committed again when it is settled, and ``retried``
    says so: the batch planned meanwhile must be planned again too."""

    def __init__(self, pipeline: WritePipeline, on_write: Callable[[WriteReport, int], None] | None):
        self.pipeline, self.on_write = pipeline, on_write
        self.executor: ThreadPoolExecutor | None = None
        self.pending: tuple[_Write, Future[None] | None] | None = None
        self.retried = False
        self.report = WriteReport()
        self.settled = 0  # episodes of the batches settled

    def submit(self, w: _Write, last: bool) -> None:
        if last:
            self.pending = (w, None)
            return
        self.executor = self.executor or ThreadPoolExecutor(1, thread_name_prefix="graphmem-commit")
        # Shaped here, while the commit before runs: the commit thread is the write's critical path.
        w.batch = self.pipeline.store.stage(w.staged, w.scope)
        self.pending = (w, self.executor.submit(self.pipeline.store.commit, w.staged, w.scope, w.relink))

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()

    def ahead(self) -> _Ahead:
        return _Ahead(self.settle, self.pending[0]) if self.pending else NOTHING_AHEAD

    def settle(self) -> None:
        """Wait for the pending commit, if any, and report it."""
        if self.pending is None:
            return
        (w, future), self.pending = self.pending, None
        try:
            future.result() if future else self.pipeline.store.commit(w.staged, w.scope, w.relink)
        except Conflict:
            w.report.conflicts += 1
            self.retried = True
            self.pipeline._committed(w)
        report = self.pipeline._done(w)
        if self.on_write:
            self.on_write(report, w.size)
        self.report.merge(replace(report, rejected=[(self.settled + i, why) for i, why in report.rejected]))
        self.settled += w.size


class WriteStore(EpisodeStore, TimelineStore, UnitStore, ErasureStore, Protocol):
    """What a write reads and writes: episodes, timelines, and the names units know; and
    whether an erasure raced it."""


class WritePipeline:
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

    def pick_extractor(self, episode: Episode, name: str | None) -> Extractor:
        return self.extractors[name or ("facts" if episode.facts else "rule")]

    def write_all(
        self,
        batches: Iterable[Sequence[Episode]],
        extractor: str | None = None,
        actor: str | None = None,
        on_write: Callable[[WriteReport, int], None] | None = None,
    ) -> WriteReport:
        """Write batches (each of one scope) one after the other, each in one transaction, with
        ``actor`` (who caused the write) on every decision. Episodes already decided are
        skipped, so re-ingesting the same ids adds nothing and an ingest cut short completes on
        re-run; an id the scope holds with other content is reported in ``rejected``, and the
        rest written. The next batch is planned while the one before commits (in a second
        thread: planning is the client's work, a commit mostly the database's); a plan about to
        read what that commit changes waits for it (``_Ahead``). ``on_write(report, episodes)``
        follows each commit, in order, its ``rejected`` positions counted within the batch; in
        the report returned they count across all batches. A failure is raised once the
        batches before it have committed; no batch after it is decided (its episodes may be
        stored, undecided: a re-run or ``GraphMem.complete`` completes them)."""
        committer = _Committer(self, on_write)
        batches = [b for b in batches if b]
        # An erasure of a scope while its batches are written: the batch committing then fails
        # (its episodes are gone), and no later batch may store its episodes after it (checked
        # before each is stored: only an erasure begun in that moment can still be missed).
        erasures: dict[Scope, datetime | None] = {}
        try:
            with _rare_full_collections() if len(batches) > 1 else nullcontext():
                for place, episodes in enumerate(batches):
                    if len(batches) > 1:
                        scope, mark = episodes[0].scope, self.store.last_erasure(episodes[0].scope)
                        if erasures.setdefault(scope, mark) != mark:
                            raise erased_meanwhile(scope)
                    ahead = committer.ahead()
                    w = self._receive(episodes, extractor, actor, ahead)
                    self._prepare(w, ahead)
                    committer.settle()
                    if committer.retried:  # the batch before was planned again: so is this one
                        committer.retried = False
                        self._prepare(w)
                    committer.submit(w, last=place == len(batches) - 1)
        finally:
            try:
                committer.settle()  # an error of an earlier batch is raised before a later one's
            finally:
                committer.close()
        return committer.report

    def _receive(self, episodes: Sequence[Episode], extractor: str | None, actor: str | None, ahead: _Ahead) -> _Write:
        """Stages 0 and 1 of a batch: store its episodes, extract candidates from those not yet
        decided."""
        report = WriteReport(episodes=len(episodes))
        scope = episodes[0].scope
        if any(e.scope != scope for e in episodes):
            raise GraphMemError("a write batch holds episodes of one scope")
        planned: list[_Planned] = []
        failures: list[Decision] = []
        appended = self.store.put_episodes(episodes)  # stage 0
        report.new_episodes = appended.new
        report.episodes -= len(appended.conflicts)
        report.rejected += [(i, str(episode_conflict(episodes[i].id))) for i in appended.conflicts]
        ids = [e.id for e in episodes]
        ahead.before(episodes=ids)
        done = self.store.processed_episodes(scope, ids)
        for place, episode in enumerate(episodes):
            if episode.id in done or place in appended.conflicts:
                continue
            chosen = self.pick_extractor(episode, extractor)
            candidates = self._extract(chosen, episode, report, failures)
            planned += [_Planned(episode, c, chosen.version, (place, i)) for i, c in enumerate(candidates)]
        written = [e for i, e in enumerate(episodes) if e.id not in done and i not in appended.conflicts]
        return _Write(
            scope,
            planned,
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
        """Stage 1. A failing extractor is recorded as a NOOP decision with its reason (the
        episode is already stored), never raised: the commit decides the episode like any
        other (not undecided: its decision says what went wrong, ``reextract`` tries again)."""
        try:
            candidates = chosen.extract(episode)
        except Exception as exc:  # any extractor failure, by design
            reason = f"extraction by {chosen.version} failed: {type(exc).__name__}: {exc}"[:1900]
            report.failed.append((episode.id, reason))
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
        return [self._dated(c, episode) for c in candidates]

    def approve(self, item: ReviewItem, actor: str | None = None) -> WriteReport:
        """Write a candidate a human approved: past the gate, through the timeline and reconcile."""
        episode = self.store.get_episode(item.episode_id, item.scope)
        if episode is None:
            raise NotFound(f"episode {item.episode_id} of review {item.id} no longer exists")
        planned = [_Planned(episode, item.candidate, item.extractor_version, (0, 0))]
        return self._run(
            item.scope, planned, [], WriteReport(), gated=False, note=f"approved in review {item.id}", actor=actor
        )

    def retract(self, unit: MemoryUnit, reason: str, actor: str | None = None) -> WriteReport:
        """Retract a stored fact on an operator's word: a retraction of the unit's value in its
        timeline group, after every assertion made so far, so the timeline is drawn again as
        for any retraction (each earlier assertion of the value is withdrawn, what they had
        ended holds again; the fact stays in history). Its DELETE decision carries ``reason``
        and belongs to no episode's log: neither re-extracting nor deleting the unit's episode
        (the candidate's provenance) undoes it. An assertion made later stands."""
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
        planned = _Planned(
            episode,
            candidate,
            "operator",
            (0, 0),
            operator=reason,
            group=(owner.group, owner.value, owner.single) if owner else None,
        )
        return self._run(unit.scope, [planned], [], WriteReport(), gated=False, actor=actor)

    def reextract(
        self,
        scope: Scope,
        extractor: str,
        batch: int = 200,
        progress: Callable[[int], None] | None = None,
        actor: str | None = None,
    ) -> WriteReport:
        """Re-run extraction over the scope's stored episodes with ``extractor``. An episode's
        standing facts from another extractor version are retired by decisions naming the new
        version, and its new facts take their place in the order of assertions (so where the
        extractors agree, the same value stands); history before the re-extraction stays.
        Episodes whose latest extraction is already this version are skipped."""
        chosen = self.extractors[extractor]
        report, page = WriteReport(), Page(limit=batch)
        while ids := self.store.list_episode_ids(scope, page):
            episodes = [e for e in (self.store.get_episode(i, scope) for i in ids) if e is not None]
            logged: dict[str, list[Decision]] = {}
            for d in self.store.episode_events(scope, ids):
                logged.setdefault(d.episode_id or "", []).append(d)
            planned: list[_Planned] = []
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
                planned += [
                    _Planned(episode, c, chosen.version, (position, i), first.order_at if first else None)
                    for i, c in enumerate(candidates)
                ]
                extracted.append(episode.id)
            report.episodes += len(episodes)
            self._run(
                scope,
                planned,
                failures,
                report,
                retire=retire,
                note=f"re-extraction with {chosen.version}",
                actor=actor,
                decided=tuple(extracted),
            )
            if progress:
                progress(len(episodes))
            page = Page(offset=page.offset + page.limit, limit=page.limit)
        return report

    # -- planning -------------------------------------------------------------------------
    @staticmethod
    def _dated(c: Candidate, episode: Episode) -> Candidate:
        """A candidate without a world time is taken as true from when its episode happened."""
        if c.op == "end":  # an ending without a time: the value stopped when the episode happened
            return c if c.invalid_at is not None else c.model_copy(update={"invalid_at": episode.occurred_at})
        if c.valid_at is not None:
            return c
        return c.model_copy(update={"valid_at": min(episode.occurred_at, c.invalid_at or episode.occurred_at)})

    def _run(
        self,
        scope: Scope,
        planned: list[_Planned],
        failures: list[Decision],
        report: WriteReport,
        retire: Sequence[Decision] = (),
        gated: bool = True,
        note: str = "",
        actor: str | None = None,
        decided: tuple[str, ...] = (),
    ) -> WriteReport:
        """Plan and commit one batch that no other of this pipeline overlaps."""
        w = _Write(
            scope, planned, failures, report, retire=retire, gated=gated, note=note, actor=actor, decided=decided
        )
        self._committed(w)
        return self._done(w)

    def _prepare(self, w: _Write, ahead: _Ahead | None = None) -> None:
        """Stages 0' to 4 of a batch, up to what its commit writes (``w.batch``): the decisions,
        each recording the batch's actor, and the mention links of its new units and episodes."""
        ahead = ahead or NOTHING_AHEAD
        batch, w.held = self._plan(w.scope, w.planned, w.failures, w.retire, w.gated, w.note, ahead)
        units, episodes = batch.units, w.episodes
        batch = batch.model_copy(update=mention_links(self.store, w.scope, units, episodes, ahead))
        if batch.anchors and ahead.pending:
            # Found while the batch before commits, not in this batch's own commit (which
            # searches only if a commit other than that one changed the texts meanwhile).
            read = ahead.texts(w.scope, self.store.earlier_texts(w.scope, batch.anchors))
            batch = batch.model_copy(update={"texts_read": read})
        w.relink = lambda known_names: drawn_links(known_names, units, episodes)
        w.batch = batch.model_copy(
            update={
                "decided": w.decided,
                "decisions": tuple(
                    d if d.actor == w.actor else d.model_copy(update={"actor": w.actor}) for d in batch.decisions
                ),
            }
        )

    def _committed(self, w: _Write) -> None:
        """Plan and commit, planning again when a guard says another writer got there first."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                self._prepare(w)
                self.store.commit(w.staged, w.scope, w.relink)
                return
            except Conflict:
                w.report.conflicts += 1
                if attempt == MAX_ATTEMPTS - 1:
                    raise

    @staticmethod
    def _done(w: _Write) -> WriteReport:
        """The batch's report, once it committed."""
        w.report.decisions.update(d.op.value for d in w.staged.decisions)
        w.report.unit_ids += [u.id for u in w.staged.units]
        w.report.reviews += w.held
        return w.report

    def _tick(self, floor: datetime) -> datetime:
        """Now, strictly after ``floor`` and after this pipeline's previous write."""
        now = max(self.clock(), floor + TICK, self._last + TICK)
        self._last = now
        return now

    def _plan(
        self,
        scope: Scope,
        planned: list[_Planned],
        failures: list[Decision],
        retire: Sequence[Decision],
        gated: bool,
        note: str,
        ahead: _Ahead,
    ) -> tuple[WriteBatch, list[str]]:
        decisions: list[Decision] = list(failures)
        held: list[ReviewItem] = []
        todo: list[_Planned] = []
        for p in planned:  # stage 0': the gate
            ok, reason = self.policy.should_write(p.candidate, WriteContext(episode=p.episode))
            if ok or not gated:
                todo.append(p)
                continue
            item = ReviewItem(
                scope=scope,
                candidate=p.candidate,
                episode_id=p.episode.id,
                extractor_version=p.extractor_version,
                reason=reason,
            )
            held.append(item)
            decisions.append(self._decision(Op.NOOP, f"held for review {item.id}: {reason}", p, self.clock()))
        keyed = [(p, *self._grouped(p)) for p in todo]
        groups = {g for _, _, g, _ in keyed} | {d.logged.group for d in retire}
        ahead.before(guards=groups)
        stored, units = self.store.group_state(scope, sorted(groups))
        guards = dict.fromkeys(groups, 0)  # each group's log as read: the commit checks it is unchanged
        for d in stored:
            guards[d.logged.group] += 1
        now = self._tick(max((d.decided_at for d in stored), default=self._last))
        decisions = [d.model_copy(update={"decided_at": now}) for d in decisions]
        state = {g: _Group(single=False, events=[], units=[]) for g in groups}
        for d in stored:
            state[d.logged.group].events.append(d)
            state[d.logged.group].single = d.logged.single
        for u in units:
            state[_group_of(u.unit)].units.append(u)
        for _, single, g, _ in keyed:
            state[g].single = single
        at = AsOf(valid=now, known=now)
        semantic = self._semantic_neighbours(scope, todo, at, ahead)
        unarchive: set[str] = set()

        for old in retire:
            retired = old.logged.model_copy(update={"kind": "retire", "target": old.id})
            shown = self._shown_by(state[retired.group], old.id, now)
            reason = f"superseded by {note} (was {old.logged.extractor_version})"
            d = Decision(
                op=Op.DELETE if shown else Op.NOOP,
                target_id=shown,
                reason=reason,
                scope=scope,
                policy="timeline",
                decided_at=now,
                episode_id=old.episode_id,
                candidate=old.candidate,
                event=retired,
            )
            state[retired.group].events.append(d)
            decisions.append(d)

        for i, (p, single, g, value) in enumerate(keyed):
            group, c = state[g], p.candidate
            ev: TimelineEvent | None
            ev = TimelineEvent(
                kind=c.op,
                group=g,
                single=single,
                value=value,
                order_at=p.order_at or now,
                order_ep=p.position[0],
                order_fact=p.position[1],
                valid_at=c.valid_at,
                end=c.invalid_at,
                candidate=c,
                extractor_version=p.extractor_version,
                channel=p.episode.channel,
                occurred_at=p.episode.occurred_at,
            )
            showing = self._showing(group, value, now)
            shown_text = next((g.unit.content for g in group.units if g.unit.id == showing), c.content)
            if c.op == "end":  # stage 2: an ending cuts what its value shows then
                ended = self._ending(group, value, c.invalid_at, now)
                reason = (
                    f"{c.content!r}: {ended.content!r} ends {_day(c.invalid_at)}"
                    if ended
                    else f"{c.content!r} ends nothing known to be true then"
                )
                reason = f"{p.operator} ({reason})" if p.operator else reason
                d = self._decision(Op.UPDATE if ended else Op.NOOP, reason, p, now, target=ended.id if ended else None)
                if ended:
                    d = d.model_copy(update={"invalid_at": c.invalid_at})
            elif c.op == "retract":  # stage 2: a retraction reaches the earlier assertions of its value
                reason = (
                    f"retraction of {c.content!r}"
                    if showing and shown_text == c.content
                    else f"retraction of {c.content!r}: {shown_text!r} was never true"
                    if showing
                    else f"retraction of {c.content!r}, asserted earlier in this write: none of it was stored"
                    if _retracts(ev, [e for e in group.events if e.decided_at == now])
                    else "retraction matched no current fact"
                )
                reason = f"{p.operator} ({reason})" if p.operator else reason
                d = self._decision(Op.DELETE if showing else Op.NOOP, reason, p, now, target=showing)
            elif any(a.value == value for a in group.standing(now)):  # stage 2: a restatement
                before = timeline.stretches(group.standing(now), single)
                probe = [*map(as_event, group.events), _probe(ev, now)]
                changed = before != timeline.stretches(timeline.active(probe, now), single)
                d = self._decision(
                    Op.ADD if changed else Op.NOOP,
                    f"restates {shown_text!r} over another time" if changed else f"restates the current {shown_text!r}",
                    p,
                    now,
                    target=showing,
                )
                unarchive |= self._units_of_value(group, value, now) & group.archived
            else:  # stage 3: a new value
                standing = {a.id for a in group.standing(now)}
                neighbours = group.covering(now, standing) + [
                    _pending(e, scope, now) for e in group.events if e.id in standing and e.decided_at == now
                ]
                known = {n.id for n in neighbours}
                neighbours += [u for u in semantic.get(i, ()) if u.id not in known]
                d = self._reconcile(p, neighbours, now)
                if d.op is Op.NOOP:
                    ev = None
                elif d.op is Op.DELETE:  # the policy retracts what the target unit shows
                    target = next(n for n in neighbours if n.id == d.target_id)
                    tg = target.group or g
                    if tg not in state:
                        ahead.before(guards={tg})
                        self._load(scope, state, tg)
                        guards[tg] = len(state[tg].events)
                    owner = next((e for e in state[tg].events if e.id == target.source.assertion_id), None)
                    ev = ev.model_copy(
                        update={
                            "kind": "retract",
                            "group": tg,
                            "single": state[tg].single if owner else single,
                            "value": owner.logged.value if owner else value,
                        }
                    )
            if ev is not None:
                d = d.model_copy(update={"event": ev})
                state[ev.group].events.append(d)
            decisions.append(d)

        new_units, invalidations, drawn_decisions = self._draw(scope, state, now, decisions)
        # Search entries are written with the units, in the same transaction: embed first.
        vectors = dict(zip((u.id for u in new_units), self.index.vectors([u.content for u in new_units])))
        batch = WriteBatch(
            units=tuple(new_units),
            decisions=tuple(drawn_decisions),
            invalidations=tuple(invalidations),
            reviews=tuple(held),
            guards=guards,
            unarchive=tuple(sorted(unarchive)),
            vectors=vectors,
        )
        return batch, [r.id for r in held]

    def _grouped(self, p: _Planned) -> tuple[bool, str, str]:
        """(single, group, value) of a planned candidate."""
        if p.group is not None:
            group, value, single = p.group
            return single, group, value
        single = self.policy.is_single_valued(p.candidate)
        return (single, *group_of(p.candidate, single))

    def _load(self, scope: Scope, state: dict[str, _Group], group: str) -> None:
        events, units = self.store.group_state(scope, [group])
        single = events[0].logged.single if events else False
        state[group] = _Group(single=single, events=events, units=units)

    def _reconcile(self, p: _Planned, neighbours: list[MemoryUnit], now: datetime) -> Decision:
        decision = self.policy.reconcile(p.candidate, neighbours)  # stage 3
        decision = decision.model_copy(update={"episode_id": p.episode.id, "decided_at": now})
        if decision.target_id and decision.target_id not in {n.id for n in neighbours}:
            return self._decision(Op.NOOP, f"policy named target {decision.target_id!r}, not a neighbour shown", p, now)
        return decision

    @staticmethod
    def _showing(group: _Group, value: str, now: datetime) -> str | None:
        """A unit alive now showing ``value`` at world time now, else at any time."""
        owners = {d.id for d in group.events if d.logged.value == value}
        alive = group.alive(now)
        showing = [g.unit for g in group.units if g.unit.id in alive and g.unit.source.assertion_id in owners]
        pick = group.covering(now, owners) or showing
        return pick[0].id if pick else None

    @staticmethod
    def _ending(group: _Group, value: str, end: datetime | None, now: datetime) -> MemoryUnit | None:
        """A unit alive now showing ``value`` over a stretch that ``end`` falls inside."""
        owners = {d.id for d in group.events if d.logged.value == value}
        alive = group.alive(now)
        return next(
            (
                g.unit
                for g in group.units
                if g.unit.id in alive
                and g.unit.source.assertion_id in owners
                and end is not None
                and timeline.covers(alive[g.unit.id], end)
                and ((start := alive[g.unit.id].start) is None or start < end)
            ),
            None,
        )

    @staticmethod
    def _shown_by(group: _Group, owner: str, now: datetime) -> str | None:
        alive = group.alive(now)
        return next(
            (g.unit.id for g in group.units if g.unit.id in alive and g.unit.source.assertion_id == owner), None
        )

    @staticmethod
    def _units_of_value(group: _Group, value: str, now: datetime) -> set[str]:
        owners = {d.id for d in group.events if d.logged.value == value}
        alive = group.alive(now)
        return {g.unit.id for g in group.units if g.unit.id in alive and g.unit.source.assertion_id in owners}

    def _draw(
        self, scope: Scope, state: dict[str, _Group], now: datetime, decisions: list[Decision]
    ) -> tuple[list[MemoryUnit], list[Invalidation], list[Decision]]:
        """Stage 4: the units and edges each touched group's timeline needs now, each edge hung
        from the decision that caused it; continuations get decisions of their own."""
        by_id = {d.id: d for d in decisions}
        units: list[MemoryUnit] = []
        edges: list[Invalidation] = []
        extra: list[Decision] = []
        for group in state.values():
            fresh = [d for d in group.events if d.decided_at == now]
            if not fresh:
                continue
            log = [as_event(d) for d in group.events]
            current = timeline.shown(drawn(group.units), now)
            desired = timeline.stretches(timeline.active(log, now), group.single)
            new_units, new_edges = timeline.step(current, desired, now, [as_event(d) for d in fresh])
            owners = {d.id: d for d in group.events}
            closed = {e.unit_id: e for e in new_edges if e.why == "continued"}
            continuing: dict[str, Decision] = {}
            for nu in new_units:
                owner = owners[nu.owner]
                unit = _unit(owner, nu, scope)
                units.append(unit)
                old = next((s.id for s in current if s.owner == nu.owner and s.id in closed), None)
                if owner.id in by_id and by_id[owner.id].produced_id is None and old is None:
                    by_id[owner.id] = by_id[owner.id].model_copy(update={"produced_id": unit.id})
                    continue
                cause = by_id[closed[old].cause] if old else by_id[fresh[0].id]
                reason = f"{unit.content!r} now holds from {_day(nu.start)} until {_day(nu.end)} ({cause.reason})"
                d = Decision(
                    op=Op.UPDATE if old else Op.ADD,
                    target_id=old,
                    produced_id=unit.id,
                    reason=reason,
                    scope=scope,
                    policy="timeline",
                    decided_at=now,
                    episode_id=cause.episode_id,
                    candidate=unit.content,
                )
                extra.append(d)
                if old:
                    continuing[old] = d
            for e in new_edges:
                cause = continuing[e.unit_id] if e.why == "continued" else by_id[e.cause]
                edges.append(
                    Invalidation(
                        unit_id=e.unit_id,
                        decision_id=cause.id,
                        expired_at=now,
                        invalid_at=e.invalid_at,
                        reason=_edge_reason(e, cause),
                    )
                )
            _tell(by_id, group, current, new_units, new_edges, owners)
        # A policy may have named an assertion of this batch as its target: name its unit.
        for did, d in by_id.items():
            if d.target_id in by_id:
                target = by_id[d.target_id].produced_id
                by_id[did] = d.model_copy(
                    update={"target_id": target} if target or d.op is Op.NOOP else {"target_id": None, "op": Op.ADD}
                )
        # A new assertion drawn by no unit of its own changed nothing: a retraction later in this
        # write took it back, or it is absorbed into a stretch a current fact shows.
        retracting: dict[tuple[str, str], list[Decision]] = {}  # this write's retractions, by group and value
        for r in by_id.values():
            if r.event is not None and r.event.kind == "retract":
                retracting.setdefault((r.event.group, r.event.value), []).append(r)
        final = []
        for d in by_id.values():
            if (
                d.event is not None
                and d.event.kind == "assert"
                and d.produced_id is None
                and d.op in (Op.ADD, Op.UPDATE)
            ):
                later = [r for r in retracting.get((d.event.group, d.event.value), ()) if _retracts(r.logged, [d])]
                empty = d.event.valid_at is not None and d.event.end == d.event.valid_at
                why = (
                    f"retracted later in this write (episode {later[0].episode_id})"
                    if later
                    else "true for no time (it ends as it begins): nothing to show"
                    if empty
                    else "already shown by a current fact"
                )
                d = d.model_copy(update={"op": Op.NOOP, "reason": f"{d.reason}; {why}"})
            final.append(d)
        return units, edges, final + extra

    def _semantic_neighbours(
        self, scope: Scope, todo: list[_Planned], at: AsOf, ahead: _Ahead
    ) -> dict[int, list[MemoryUnit]]:
        """Nearest visible same-kind units by meaning, for the candidates that need them: all
        of them when the policy asks, else semantic candidates without a triple (near-duplicate
        detection). One embedding batch and one store read for the whole batch."""
        wants_all = getattr(self.policy, "wants_semantic_neighbours", False)
        picked = [
            i
            for i, p in enumerate(todo)
            if wants_all or (p.candidate.triple is None and p.candidate.kind is MemoryKind.semantic)
        ]
        if not picked:
            return {}
        ahead.before(search=True)
        found = self.index.search_semantic_many([todo[i].candidate.content for i in picked], scope, NEIGHBOURS, at)
        return {i: [s.unit for s in hits if s.unit.kind == todo[i].candidate.kind] for i, hits in zip(picked, found)}

    def _decision(self, op: Op, reason: str, p: _Planned, now: datetime, target: str | None = None) -> Decision:
        return Decision(
            op=op,
            reason=reason,
            target_id=target,
            scope=p.candidate.scope,
            policy="operator" if p.operator else self.policy.name,
            confidence=p.candidate.confidence,
            decided_at=now,
            episode_id=None if p.operator else p.episode.id,
            candidate=p.candidate.content,
        )


def mention_links(
    store: UnitStore,
    scope: Scope,
    units: Sequence[MemoryUnit],
    episodes: Sequence[Episode],
    ahead: _Ahead | None = None,
) -> dict[str, Any]:
    """The entities units and episodes written together (a write's new ones, or an import's)
    name, as the scope knows its names now (``drawn_links``), and what that was read against
    (``names_read``): ``WriteBatch`` fields."""
    if not units and not episodes:
        return {}
    ahead = ahead or NOTHING_AHEAD
    read: NamesRead | None = None

    def known_names(texts: Collection[str]) -> dict[str, bool]:
        nonlocal read
        # Read while the batch before may commit: what it makes known is added (_Ahead.known).
        names, known = store.known_names(scope, texts)
        read = names.model_copy(update={"ahead": ahead.made(scope)})
        for name, fact in ahead.known(scope, texts).items():
            known[name] = known.get(name, False) or fact
        return known

    links = drawn_links(known_names, units, episodes)
    return {**links, "names_read": read}


def drawn_links(
    known_names: Callable[[Collection[str]], dict[str, bool]], units: Sequence[MemoryUnit], episodes: Sequence[Episode]
) -> dict[str, Any]:
    """The entities the units and episodes name (``graphmem.domain.mentions``): speakers and proper
    names as written, and the names the scope knows (``known_names`` of their texts:
    ``KnownNames``, its facts' entities case-folded, names written as proper names anywhere in
    it where capitalised), these included; and the names they make known, for earlier texts."""
    texts = sorted({u.content for u in units} | {e.raw for e in episodes})
    known = known_names(texts)
    facts = {n for u in units if u.triple for n in (u.triple.subject, u.triple.object) if n}
    shown = {text: written(text) for text in texts}  # read once, matched twice
    seen = {m.name for text in texts for m in mentions(text, shown=shown[text]) if m.kind in ("proper", "speaker")}
    names = KnownNames(
        facts=[*(n for n, fact in known.items() if fact), *facts],
        seen=[*(n for n, fact in known.items() if not fact), *seen],
    )
    found = {text: mentions(text, names, shown=shown[text]) for text in texts}

    def named(text: str, about: AbstractSet[str] = frozenset()) -> tuple[tuple[str, str], ...]:
        return tuple((m.name, m.kind) for m in found[text] if m.norm not in about)

    was_fact = {normalise(n) for n, fact in known.items() if fact}
    was_known = {normalise(n) for n in known} | {normalise(n) for n in facts}
    anchors = {normalise(n): (n, True) for n in facts if normalise(n) not in was_fact}
    anchors.update({normalise(n): (n, False) for n in seen if normalise(n) not in was_known})
    return {
        "unit_mentions": {
            u.id: named(
                u.content, {normalise(n) for n in (u.triple.subject, u.triple.object) if n} if u.triple else set()
            )
            for u in units
        },
        "episode_mentions": {e.id: named(e.raw) for e in episodes},
        "anchors": tuple(sorted(anchors.values())),
    }


def _probe(ev: TimelineEvent, now: datetime) -> timeline.Event:
    return timeline.Event(
        id="?",
        kind=ev.kind,
        value=ev.value,
        known=now,
        order=(ev.order_at, ev.order_ep, ev.order_fact),
        valid_at=ev.valid_at,
        end=ev.end,
    )


def _pending(d: Decision, scope: Scope, now: datetime) -> MemoryUnit:
    """An assertion of this batch shown to the policy as a neighbour (its id: the decision's),
    as if its unit already stood from its start to its own end."""
    return _unit(d, timeline.NewUnit(d.id, d.id, d.logged.valid_at, d.logged.end, now), scope)


def _unit(owner: Decision, drawn_unit: timeline.NewUnit, scope: Scope) -> MemoryUnit:
    """The unit showing one stretch of ``owner``'s assertion."""
    ev = owner.logged
    c = ev.asserted
    return MemoryUnit(
        id=drawn_unit.id,
        kind=c.kind,
        scope=scope,
        content=c.content,
        content_hash=c.content_hash,
        source=SourceRef(
            episode_id=owner.episode_id or "",
            channel=ev.channel or "chat",
            extractor_version=ev.extractor_version or "unknown",
            assertion_id=owner.id,
            occurred_at=ev.occurred_at,
        ),
        time=TemporalMeta(created_at=drawn_unit.at, valid_at=drawn_unit.start, invalid_at=drawn_unit.end),
        confidence=c.confidence,
        labels=c.labels,
        triple=c.triple,
        group=ev.group,
    )


def _tell(
    by_id: dict[str, Decision],
    group: _Group,
    current: Sequence[timeline.Shown],
    new_units: Sequence[timeline.NewUnit],
    new_edges: Sequence[timeline.NewEdge],
    owners: Mapping[str, Decision],
) -> None:
    """Reasons that say what the timeline did, whatever order the facts came in: an assertion's
    decision names the facts it ended and the one that bounds it ("'Globex' holds from
    2021-09-01: 'Acme' ends then; until 2023-01-01, where 'Initech' begins"). A policy other
    than the rules keeps its own words beside it."""
    texts = {g.unit.id: g.unit.content for g in group.units}
    shown: list[timeline.Shown | timeline.NewUnit] = [*current, *new_units]
    starts = {
        d.event.valid_at: d.event.candidate.content
        for d in owners.values()
        if d.event and d.event.kind == "assert" and d.event.candidate and d.event.valid_at
    }
    for nu in new_units:
        d = by_id.get(nu.owner)
        if d is None or d.produced_id != nu.id or d.event is None or d.event.candidate is None:
            continue
        ended = [e for e in new_edges if e.cause == d.id and e.why == "ended" and e.unit_id in texts]
        if not ended and nu.end is None:
            continue
        story = f"{d.event.candidate.content!r} holds from {_day(nu.start)}"
        story += "".join(
            f": {texts[e.unit_id]!r} ends {'then' if e.invalid_at == nu.start else _day(e.invalid_at)}" for e in ended
        )
        # The target is what the timeline did: the fact it ended, else the one that bounds it.
        update: dict[str, Any] = (
            {"op": Op.UPDATE, "target_id": ended[0].unit_id, "invalid_at": ended[0].invalid_at} if ended else {}
        )
        if nu.end is not None:
            after = starts.get(nu.end)
            story += f"; until {_day(nu.end)}" + (f", where {after!r} begins" if after else "")
            bound = next((u.id for u in shown if u.start == nu.end), None)
            if not ended and bound:
                update = {"op": Op.ADD, "target_id": bound, "invalid_at": nu.end}
        update["reason"] = story if d.policy == "rule" else f"{story} ({d.reason})"
        by_id[d.id] = d.model_copy(update=update)


def _group_of(unit: MemoryUnit) -> str:
    """The timeline group of a unit read with its group (``group_state``)."""
    if unit.group is None:
        raise ValueError(f"unit {unit.id} is in no timeline group")
    return unit.group


def _edge_reason(edge: timeline.NewEdge, cause: Decision) -> str:
    c = cause.event.candidate if cause.event else None
    if edge.why == "ended":
        if c is not None and cause.logged.kind == "assert" and cause.logged.valid_at == edge.invalid_at:
            return f"ends {_day(edge.invalid_at)}, where {c.content!r} begins"
        return f"ends {_day(edge.invalid_at)}: {cause.reason}"
    if edge.why == "continued":
        return f"closed: a longer stretch continues it ({cause.reason})"
    if cause.event is not None and cause.event.kind == "assert":
        return f"superseded by {c.content!r}" if c else cause.reason
    return cause.reason
