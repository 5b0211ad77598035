"""Writes in batches plan the next batch while the one before commits
(``WritePipeline.write_all``). Whatever the batches hold, the memory they leave is the memory
the same batches leave written one after the other: the same units over the same world times,
the same decisions, the same mention links. The store below holds every commit back, so the
next batch is always planned before the commit it may depend on has landed; a plan that read
what that commit changes without waiting for it (a group, an episode's log, the search entries,
the names it makes known) shows here as a difference."""

from __future__ import annotations

import gc
import threading
import time
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.domain.models import AsOf, Episode, Fact, Page, UnitFilter, normalise
from graphmem.errors import Conflict, Unavailable
from graphmem.policy import PolicyConfig
from graphmem.policy.rule import RulePolicy
from tests.conftest import NEO4J, fresh_scope
from tests.examples import examples

PEOPLE = ["Ann", "Bob"]
CITIES = ["Paris", "Rome", "Oslo"]
DAYS = [None, datetime(2020, 1, 1, tzinfo=UTC), datetime(2022, 6, 1, tzinfo=UTC)]


class HeldCommits:
    """A store whose commits wait ``hold`` seconds before they start; ``fail`` makes the
    commit of that batch (counted from 1) raise ``error`` instead."""

    def __init__(self, store, hold: float = 0.005, fail: int | None = None, error: Exception | None = None):
        self._store, self._hold, self._fail, self._error = store, hold, fail, error
        self.commits = 0
        self.threads: list[str] = []  # the thread of each commit

    def __getattr__(self, name):
        return getattr(self._store, name)

    def commit(self, batch, scope, relink=None):
        self.commits += 1
        self.threads.append(threading.current_thread().name)
        time.sleep(self._hold)
        if self.commits == self._fail:
            raise self._error
        return self._store.commit(batch, scope, relink)


@st.composite
def episode_texts(draw) -> tuple[str, tuple[Fact, ...]]:
    """An episode: a fact about where someone lives (one value at a time) or what they like
    (many), or a text naming people and cities as a chat writes them (capitalised or not;
    some the same words in another order: near duplicates, found by meaning)."""
    person, city = draw(st.sampled_from(PEOPLE)), draw(st.sampled_from(CITIES))
    kind = draw(st.sampled_from(["lives", "likes", "likes", "text"]))
    if kind == "text":
        words = draw(
            st.sampled_from(
                [
                    "{p} flew to {c}.",
                    "{p} and Zed love {c}!",
                    "we met {p} in {c}",
                    "{p}: see you in {lc}!",
                    "Zed and {p} love {c}.",
                    "zed said hi",
                ]
            )
        )
        return words.format(p=person, c=city, lc=city.lower()), ()
    day = draw(st.sampled_from(DAYS))
    if kind == "lives":
        fact = Fact(subject=person, predicate="lives_in", object=city, valid_at=day, single_valued=True)
    else:  # two predicates, one text: a duplicate a policy finds among the neighbours by meaning
        fact = Fact(
            subject=person,
            predicate=draw(st.sampled_from(["likes", "loves"])),
            object=city,
            content=f"{person} loves {city}",
            valid_at=day,
        )
    return f"note about {person}", (fact,)


class Neighbourly(RulePolicy):
    """The rule policy shown the nearest units by meaning of every candidate, as the LLM
    policy is."""

    wants_semantic_neighbours = True


def build(request, family: str, store_wrapper, policy=None):
    """(GraphMem over a held store, the held store) of one adapter family."""
    embedder = request.getfixturevalue("embedder")
    if family == "memory":
        store = InMemoryStore()
        index = InMemoryIndex(store, embedder)
    else:
        from graphmem.adapters.neo4j.index import Neo4jIndex
        from graphmem.adapters.neo4j.store import Neo4jStore

        conn = request.getfixturevalue("conn")
        store, index = Neo4jStore(conn), Neo4jIndex(conn, embedder)
        index.ensure()
    held = store_wrapper(store)
    return GraphMem(held, index, policy=policy), held


def memory_of(mem: GraphMem, scope) -> dict:
    """What a user can see of the scope, free of system times and ids: every unit (its text,
    world times, whether it shows now, the world ends its edges give it, the entities it names),
    and every decision (its op, candidate and reason)."""
    units = mem.store.list_units(scope, UnitFilter(include_expired=True), Page(limit=1000))
    now = {u.id for u in mem.store.list_units(scope, UnitFilter(), Page(limit=1000), AsOf.now())}
    seen = sorted(
        (
            u.content,
            str(u.time.valid_at),
            str(u.time.invalid_at),
            u.id in now,
            tuple(sorted((normalise(n), how) for n, how in mem.store.unit_entities(scope, u.id))),
        )
        for u in units
    )
    decisions = sorted((d.op.value, d.candidate or "", d.reason) for d in mem.decisions(scope, limit=1000))
    return {"units": seen, "decisions": decisions}


def written(request, family: str, batches: list[list[Episode]], size: int, together: bool, policy=None) -> list:
    """The memory of each scope the batches write, in order of first appearance."""
    mem, _ = build(request, family, HeldCommits, policy)
    if together:  # and no other writer: a plan that read a group before its commit would be refused
        assert mem.ingest([e for b in batches for e in b], batch=size).conflicts == 0
    else:
        for batch in batches:
            mem.ingest(batch)
    scopes = list(dict.fromkeys(e.scope for b in batches for e in b))
    return [memory_of(mem, scope) for scope in scopes]


def as_batches(
    scopes, drawn: list[tuple[tuple[str, tuple[Fact, ...]], int]], size: int, again: list[int] = ()
) -> list[list[Episode]]:
    """The episodes, each in the scope its number names and those at ``again`` positions sent
    once more, in the writes ``GraphMem.ingest`` makes of them: runs of one scope, at most
    ``size`` episodes each."""
    at = datetime(2024, 1, 1, tzinfo=UTC)
    episodes = [
        Episode(scope=scopes[where], occurred_at=at, raw=raw, facts=facts, id=f"e{i}")
        for i, ((raw, facts), where) in enumerate(drawn)
    ]
    episodes += [episodes[i % len(episodes)] for i in again]
    batches: list[list[Episode]] = []
    for e in episodes:
        if batches and batches[-1][0].scope == e.scope and len(batches[-1]) < size:
            batches[-1].append(e)
        else:
            batches.append([e])
    return batches


def texts(scope, raws: list[str]) -> list[Episode]:
    """One episode of each text, in one scope."""
    return [e for b in as_batches((scope,), [((raw, ()), 0) for raw in raws], len(raws)) for e in b]


@pytest.mark.parametrize("family,ci_examples", [("memory", 150), pytest.param("neo4j", 10, marks=NEO4J.marks)])
def test_batches_planned_while_the_one_before_commits_leave_the_memory_of_one_after_the_other(
    request, family, ci_examples
):
    @settings(max_examples=examples(ci_examples), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(
        drawn=st.lists(st.tuples(episode_texts(), st.sampled_from([0, 0, 1])), min_size=2, max_size=9),
        size=st.integers(1, 3),
        again=st.lists(st.integers(0, 8), max_size=2),
        neighbourly=st.booleans(),
    )
    def check(drawn, size, again, neighbourly):
        # the same episodes (ids too) in two pairs of scopes: one pair per way of writing
        ones, others = (fresh_scope(), fresh_scope()), (fresh_scope(), fresh_scope())
        policy = Neighbourly(PolicyConfig()) if neighbourly else None
        together = written(request, family, as_batches(ones, drawn, size, again), size, True, policy)
        apart = written(request, family, as_batches(others, drawn, size, again), size, False, policy)
        assert together == apart

    check()


def test_the_batches_commit_in_a_second_thread_one_after_the_other(request):
    """While a batch follows, a commit runs in the second thread; the last one (a write of
    one batch too) runs in the caller's, where nothing is left to plan beside it."""
    mem, held = build(request, "memory", HeldCommits)
    s = fresh_scope()
    reported: list[int] = []
    mem.ingest(
        texts(s, ["Ann flew to Paris."] * 3), batch=1, on_write=lambda report, n: reported.append(len(report.unit_ids))
    )
    main = threading.current_thread().name
    assert held.commits == 3 and held.threads == ["graphmem-commit_0", "graphmem-commit_0", main]
    assert reported == [1, 0, 0]  # each batch saw the one before: the same text once
    mem.remember("Bob flew to Rome.", s)
    assert held.threads[3:] == [main]


def test_a_failed_commit_is_raised_after_the_batches_before_it_are_reported(request):
    """The batches after a failed commit are not decided, and a re-run completes them."""
    mem, _ = build(request, "memory", lambda store: HeldCommits(store, fail=2, error=Unavailable("gone")))
    s = fresh_scope()
    episodes = texts(s, [f"{p} flew to {c}." for p in PEOPLE for c in CITIES])
    reported: list[int] = []
    with pytest.raises(Unavailable):
        mem.ingest(episodes, batch=2, on_write=lambda report, n: reported.append(n))
    assert reported == [2]  # the first batch; the third was planned, never committed
    assert {d.episode_id for d in mem.decisions(s, limit=100)} == {e.id for e in episodes[:2]}
    assert len(mem.ingest(episodes, batch=2).unit_ids) == 4
    assert {d.episode_id for d in mem.decisions(s, limit=100)} == {e.id for e in episodes}


def test_a_batch_a_guard_refused_is_planned_again_with_the_one_planned_meanwhile(request):
    """Another writer got to a group first: no failure, the batch and the one after it are
    planned again, and every episode is decided once."""
    mem, held = build(request, "memory", lambda store: HeldCommits(store, fail=2, error=Conflict("stale")))
    s = fresh_scope()
    episodes = texts(s, [f"{p} flew to {c}." for p in PEOPLE for c in CITIES])
    reported: list[int] = []
    report = mem.ingest(episodes, batch=2, on_write=lambda r, n: reported.append(n))
    assert reported == [2, 2, 2] and report.conflicts == 1 and held.commits == 4
    assert len(report.unit_ids) == 6 and not mem.ingest(episodes).unit_ids


class SeesThresholds(HeldCommits):
    """Records the collector's thresholds at each commit."""

    def __init__(self, store, **kw):
        super().__init__(store, **kw)
        self.thresholds: list[tuple[int, int, int]] = []

    def commit(self, batch, scope, relink=None):
        self.thresholds.append(gc.get_threshold())
        return super().commit(batch, scope, relink)


def test_an_ingest_of_many_batches_collects_in_full_rarely_and_restores_the_collector(request):
    """A many-batch ingest runs with full collections a tenth as often (it plans while it
    commits; all but the last commit run inside it), and leaves the collector as it found it:
    also when it fails, and when two ingests overlap in threads."""
    from graphmem.pipelines.write import FULL_COLLECTION_EVERY

    before = gc.get_threshold()
    mem, held = build(request, "memory", SeesThresholds)
    s = fresh_scope()
    mem.ingest(texts(s, [f"{p} flew to {c}." for p in PEOPLE for c in CITIES]), batch=2)
    assert [t[2] for t in held.thresholds] == [FULL_COLLECTION_EVERY] * 2 + [before[2]]
    assert gc.get_threshold() == before
    mem.remember("Ann flew to Oslo again.", s)  # one batch: the collector as it is
    assert held.thresholds[-1] == before
    failing, _ = build(request, "memory", lambda store: HeldCommits(store, fail=2, error=Unavailable("gone")))
    with pytest.raises(Unavailable):
        failing.ingest(texts(s, [f"{p} went to {c}." for p in PEOPLE for c in CITIES]), batch=2)
    assert gc.get_threshold() == before
    slow, _ = build(request, "memory", lambda store: HeldCommits(store, hold=0.02))
    runs = [
        threading.Thread(
            target=slow.ingest, args=(texts(fresh_scope(), [f"{c} is far." for c in CITIES]),), kwargs={"batch": 1}
        )
        for _ in range(3)
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert gc.get_threshold() == before
