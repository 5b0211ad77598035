"""Stateful property test: random sequences of writes, restatements, endings, retractions, episode
deletions, re-extractions and archive operations, driven through the public API (GraphMem) on
every adapter, compared after every step with the reference model (tests/temporal_model.py) at
random (world time, system time) points, system times between earlier steps included.

What is compared at each point: the units the store lists as visible, what recall returns
(the visible units that are not archived), and each subject's history (the units alive at that
system time, whose intervals covering the world time show the model's values and never overlap
within a single-valued slot).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from graphmem import GraphMem
from graphmem.domain.models import AsOf, Episode, Fact, Page, UnitFilter, utcnow
from graphmem.extract import FactsExtractor
from tests.conftest import fresh_scope
from tests.examples import examples
from tests.temporal_model import FactSpec, TemporalModel


class FactsAgain(FactsExtractor):
    """The same facts under another version: re-extraction where the extractors agree."""

    version = "facts-2"


def year(y: int) -> datetime:
    return datetime(y, 1, 1, tzinfo=UTC)


SUBJECTS = ("Zed", "Amy")
PREDICATES = {"lives_in": True, "likes": False}
OBJECTS = ("Rome", "Oslo", "Kyiv")
YEARS = range(2000, 2008)
#: World times probed: the years facts start and end at, and points between them.
PROBES = [year(y) + timedelta(days=d) for y in range(1999, 2010) for d in (0, 180)]


@st.composite
def facts(draw) -> FactSpec:
    predicate = draw(st.sampled_from(sorted(PREDICATES)))
    valid = draw(st.none() | st.sampled_from(YEARS).map(year))
    end = None
    if draw(st.integers(0, 3)) == 0:
        start = (valid or year(2000)).year
        end = year(draw(st.integers(start, 2009)))
    return FactSpec(
        subject=draw(st.sampled_from(SUBJECTS)),
        predicate=predicate,
        object=draw(st.sampled_from(OBJECTS)),
        single=PREDICATES[predicate],
        valid=valid,
        end=end,
    )


def to_fact(f: FactSpec) -> Fact:
    return Fact(
        subject=f.subject,
        predicate=f.predicate,
        object=f.object,
        content=f.content,
        valid_at=f.valid,
        invalid_at=f.end,
        single_valued=f.single,
        op=f.op,
    )


def value(unit) -> tuple[str, str, str]:
    return unit.triple.subject, unit.triple.predicate, unit.triple.object


class TemporalMachine(RuleBasedStateMachine):
    """Drives one GraphMem (built by ``make``) and the model side by side."""

    make = staticmethod(lambda: None)

    def __init__(self) -> None:
        super().__init__()
        self.mem: GraphMem = self.make()
        self.mem.extractors["facts2"] = FactsAgain()
        self.scope = fresh_scope()
        self.model = TemporalModel()
        self.times = [utcnow()]  # system time after each step; [0]: before anything
        self.specs: dict[str, tuple[FactSpec, ...]] = {}
        self.serial = 0

    # -- operations -----------------------------------------------------------------------
    def _ingest(self, batch: list[tuple[datetime, tuple[FactSpec, ...]]]) -> None:
        episodes, modelled = [], []
        for occurred, specs in batch:
            self.serial += 1
            eid = f"{self.scope.subject_id}-e{self.serial}"
            self.specs[eid] = specs
            episodes.append(
                Episode(id=eid, scope=self.scope, occurred_at=occurred, raw=eid, facts=tuple(to_fact(f) for f in specs))
            )
            modelled.append((eid, occurred, specs))
        self.mem.ingest(episodes, extractor="facts")
        self.model.ingest(modelled, "facts-1")
        self._stepped()

    def _stepped(self) -> None:
        self.times.append(utcnow())

    @rule(
        batch=st.lists(
            st.tuples(st.sampled_from(YEARS).map(year), st.lists(facts(), min_size=1, max_size=3).map(tuple)),
            min_size=1,
            max_size=3,
        ),
        data=st.data(),
    )
    def assert_facts(self, batch, data) -> None:
        self._ingest(batch)
        self.check(data)

    @precondition(lambda self: self.specs)
    @rule(data=st.data(), op=st.sampled_from(["assert", "retract"]), shift=st.sampled_from([None, 0, -2, 3]))
    def restate_or_retract(self, data, op: str, shift) -> None:
        eid = data.draw(st.sampled_from(sorted(self.specs)))
        f = data.draw(st.sampled_from(self.specs[eid]))
        valid = f.valid if shift is None or f.valid is None else year(f.valid.year + shift)
        end = f.end if f.end is None or valid is None or f.end >= valid else None
        spec = FactSpec(f.subject, f.predicate, f.object, f.single, valid, end, op=op)
        self._ingest([(year(2005), (spec,))])
        self.check(data)

    @rule(
        data=st.data(),
        subject=st.sampled_from(SUBJECTS),
        predicate=st.sampled_from(sorted(PREDICATES)),
        obj=st.sampled_from(OBJECTS),
        at=st.none() | st.sampled_from(YEARS).map(year),
        told=st.sampled_from(YEARS).map(year),
    )
    def end_a_fact(self, data, subject: str, predicate: str, obj: str, at, told) -> None:
        # Any fact, known or not yet: an ending may come before what it ends.
        self._ingest([(told, (FactSpec(subject, predicate, obj, PREDICATES[predicate], None, at, op="end"),))])
        self.check(data)

    @precondition(lambda self: self.model.episodes)
    @rule(data=st.data())
    def delete_episode(self, data) -> None:
        eid = data.draw(st.sampled_from(sorted(self.model.episodes)))
        self.mem.delete_episode(eid, self.scope)
        self.model.delete(eid)
        self._stepped()
        self.check(data)

    @rule(version=st.sampled_from(["facts", "facts2"]), data=st.data())
    def reextract(self, version: str, data) -> None:
        self.mem.reextract(self.scope, version)
        self.model.reextract({"facts": "facts-1", "facts2": "facts-2"}[version])
        self._stepped()
        self.check(data)

    @rule(data=st.data())
    def archive(self, data) -> None:
        self.mem.archive(self.scope, now=utcnow() + timedelta(days=400))
        self.check(data)

    @rule(data=st.data())
    def restore(self, data) -> None:
        archived = sorted(self.mem.store.archived_ids(self.scope))
        if archived:
            self.mem.restore(archived, self.scope)
        self.check(data)

    @rule(data=st.data(), pick=st.integers(0, 1_000))
    def write_an_archived_fact_again(self, data, pick: int) -> None:
        # Which units are archived depends on recall statistics written by a background
        # thread: every draw is made whatever it is (the choice before it is known, the check
        # in both branches), so a replayed example draws the same.
        archived = sorted(self.mem.store.archived_ids(self.scope))
        if archived:
            uid = archived[pick % len(archived)]
            unit = self.mem.store.get_unit(uid, self.scope)
            spec = next(
                f for f in self.specs[unit.source.episode_id] if value(unit) == (f.subject, f.predicate, f.object)
            )
            self._ingest([(year(2005), (spec,))])
            alive = self.mem.store.get_unit(uid, self.scope, AsOf(valid=unit.time.valid_at, known=utcnow()))
            if alive is not None:  # a restatement leaves the unit that shows the fact searchable again
                assert uid not in self.mem.store.archived_ids(self.scope)
        self.check(data)

    def teardown(self) -> None:
        self.mem.close()

    # -- the comparison -------------------------------------------------------------------
    def check(self, data) -> None:
        # The step is drawn from a range that does not depend on the steps taken so far (which
        # can depend on background state, above), then folded onto them.
        step = data.draw(st.integers(0, 10_000), label="after step") % (self.model.step + 1)
        t = data.draw(st.sampled_from(PROBES), label="world time")
        known = self.times[step]
        expected = self.model.values(t, step)
        listed = self.mem.store.list_units(self.scope, UnitFilter(), Page(limit=1000), AsOf(valid=t, known=known))
        assert sorted(map(value, listed)) == sorted(expected), ("list_units", t, step)
        archived = self.mem.store.archived_ids(self.scope)
        hits = self.mem.recall("where", self.scope, k=1000, as_of=t, known_at=known)
        assert {h.unit.id for h in hits} == {u.id for u in listed if u.id not in archived}, ("recall", t, step)
        for subject in SUBJECTS:
            entries = self.mem.history(self.scope, entity=subject, known_at=known)
            covering = [
                e["unit"]
                for e in entries
                if (e["unit"].time.valid_at or t) <= t
                and (e["unit"].time.invalid_at is None or t < e["unit"].time.invalid_at)
            ]
            assert {value(u) for u in covering} == {v for v in expected if v[0] == subject}, ("history", t, step)
            slots = [value(u)[:2] for u in covering if u.triple.single_valued]
            assert len(slots) == len(set(slots)), ("overlap in a single-valued slot", t, step)
        self.history_says_what_recall_says(known, archived)

    def history_says_what_recall_says(self, known, archived) -> None:
        """A unit history shows as believed at S with interval I is what a recall of its own
        content returns at (a T in I, S); one it shows as no longer believed is not."""
        for subject in SUBJECTS:
            for e in self.mem.history(self.scope, entity=subject, known_at=known, include_expired=True):
                u = e["unit"]
                if u.id in archived or (u.time.valid_at and u.time.invalid_at and u.time.invalid_at <= u.time.valid_at):
                    continue
                t = u.time.valid_at or PROBES[0]
                hits = {h.unit.id for h in self.mem.recall(u.content, self.scope, k=10, as_of=t, known_at=known)}
                assert (u.id in hits) == (e["believed_until"] is None), ("history vs recall", u.content, t, known)


def machine_for(make):
    return type("Machine", (TemporalMachine,), {"make": staticmethod(make)})


def _run(make, count: int, steps: int) -> None:
    run_state_machine_as_test(
        machine_for(make),
        settings=settings(
            max_examples=count,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )


def test_memory_matches_the_model(embedder):
    from graphmem.adapters.memory import InMemoryIndex, InMemoryStore

    def make():
        store = InMemoryStore()
        return GraphMem(store, InMemoryIndex(store, embedder))

    _run(make, count=int(os.environ.get("GRAPHMEM_MACHINE_EXAMPLES") or examples(300)), steps=10)


def _neo4j(conn, embedder):
    from graphmem.adapters.neo4j.index import Neo4jIndex
    from graphmem.adapters.neo4j.store import Neo4jStore

    index = Neo4jIndex(conn, embedder)
    index.ensure()
    return lambda: GraphMem(Neo4jStore(conn), index)


@pytest.mark.neo4j
def test_neo4j_matches_the_model(conn, embedder):
    _run(_neo4j(conn, embedder), count=examples(50), steps=8)


@pytest.mark.neo4j
@pytest.mark.slow
def test_neo4j_matches_the_model_at_length(conn, embedder):
    _run(_neo4j(conn, embedder), count=int(os.environ.get("GRAPHMEM_MACHINE_EXAMPLES") or examples(300)), steps=10)
