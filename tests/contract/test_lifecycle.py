"""Erasure, episode deletion and archive, on every adapter family."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.adapters.memory import InMemoryStore
from graphmem.domain.models import Episode, Fact, Scope, UnitFilter, utcnow
from graphmem.errors import GraphMemError, NotFound, exit_code
from tests.conftest import fresh_scope
from tests.examples import examples

WORDS = ["tea", "chess", "Lisbon", "jazz", "Berlin", "cello", "python", "sailing"]


def subject_nodes(mem, scope) -> int:
    """Every node of any kind that still belongs to the subject."""
    store = mem.store
    if isinstance(store, InMemoryStore):
        st_ = store.tables
        tables = (
            st_.units.values(),
            st_.episodes.values(),
            st_.decisions.values(),
            st_.traces.values(),
            st_.blocks.values(),
        )
        return sum(
            1
            for t in tables
            for x in t
            if (x.scope.subject_type, x.scope.subject_id) == (scope.subject_type, scope.subject_id)
        )
    records, _, _ = store.conn.driver.execute_query(
        "MATCH (n) WHERE n.subject_type = $t AND n.subject_id = $i RETURN count(n) AS n",
        t=scope.subject_type.value,
        i=scope.subject_id,
    )
    return records[0]["n"]


def snapshot(mem, scopes, queries):
    return {(str(s), q): [h.unit.id for h in mem.recall(q, s, k=5)] for s in scopes for q in queries}


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_forgetting_a_subject_leaves_everyone_else_unchanged(mem, data):
    scopes = [fresh_scope() for _ in range(3)] + [fresh_scope("shared")]
    for s in scopes:
        for word in data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True)):
            mem.remember(f"I like {word}.", s)
            mem.remember(f"Note about {word} and {s.subject_id}", s, extractor="none")
        mem.blocks.set(s, "persona", f"persona of {s.subject_id}", token_budget=50)
        mem.assemble("what do I like?", s)
    victim = data.draw(st.sampled_from(scopes[:3]))
    others = [s for s in scopes if s != victim]
    before = snapshot(mem, others, ["what do I like?", "Lisbon jazz"])
    counts = mem.forget(victim)
    assert counts["units"] > 0 and counts["episodes"] > 0 and counts["decisions"] > 0
    assert subject_nodes(mem, victim) == 0
    assert snapshot(mem, others, ["what do I like?", "Lisbon jazz"]) == before
    assert all(subject_nodes(mem, s) > 0 for s in others)


def test_an_erasure_during_a_write_leaves_nothing_derived_from_the_episodes_it_erased(mem):
    """A write of several batches stores each batch's episodes before deciding them. The
    subject erased in between (here as the batch before reports its commit: the next one is
    stored and planned) takes those episodes; that batch's commit then fails, saying so, and
    no unit, decision or link of the subject outlives the erasure."""
    s = fresh_scope()
    at = datetime(2024, 5, 1, tzinfo=UTC)
    episodes = [
        Episode(
            scope=s,
            occurred_at=at,
            raw=f"Zed{i} lives in Oslo.",
            facts=(Fact(subject=f"Zed{i}", predicate="lives_in", object="Oslo"),),
        )
        for i in range(4)
    ]
    erased = []

    def erase_once(report, size):
        if not erased:
            erased.append(mem.forget(s))

    with pytest.raises(NotFound, match=f"2 episode\\(s\\) of this write are no longer in scope {s}") as raised:
        mem.ingest(episodes, batch=2, on_write=erase_once)
    assert exit_code(raised.value) == 1  # a race with another caller, not bad input
    assert erased[0]["units"] == 2 and erased[0]["episodes"] == 4  # the first batch's units, every episode
    assert subject_nodes(mem, s) == 0


def test_a_write_stores_nothing_more_of_a_subject_erased_while_it_runs(mem, monkeypatch):
    """The subject erased while a batch is planned (here right after its episodes are stored):
    the batches after it store nothing (each checks before storing, where the erasure would
    miss them), and the one planned fails at its commit."""
    s = fresh_scope()
    at = datetime(2024, 5, 1, tzinfo=UTC)
    episodes = [
        Episode(
            scope=s,
            occurred_at=at,
            raw=f"Zed{i} lives in Oslo.",
            facts=(Fact(subject=f"Zed{i}", predicate="lives_in", object="Oslo"),),
        )
        for i in range(6)
    ]
    put, stored = mem.store.put_episodes, []

    def erased_after_the_first(batch):
        stored.append(put(batch))
        if len(stored) == 1:
            mem.forget(s)
        return stored[-1]

    monkeypatch.setattr(mem.store, "put_episodes", erased_after_the_first)
    with pytest.raises(GraphMemError):
        mem.ingest(episodes, batch=2)
    assert len(stored) == 1 and subject_nodes(mem, s) == 0 and mem.episodes(s) == []


def test_interrupted_erasure_counts_what_was_removed_and_resumes(mem, monkeypatch):
    s = fresh_scope()
    for word in WORDS:
        mem.remember(f"I like {word}.", s)
    real = mem.store.erase_batch
    calls = {"n": 0}

    def flaky(*args):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("server went away before the batch")
        done = real(*args)
        if calls["n"] == 3:
            raise ConnectionError("server went away after the batch committed")
        return done

    monkeypatch.setattr(mem.store, "erase_batch", flaky)
    for _ in range(2):
        with pytest.raises(ConnectionError):
            mem.forget(s, batch=3)
    assert subject_nodes(mem, s) > 0  # part done
    monkeypatch.setattr(mem.store, "erase_batch", real)
    counts = mem.forget(s, batch=3)
    assert subject_nodes(mem, s) == 0
    # the record counted every batch, the one whose answer was lost too: totals span the runs
    assert counts["units"] == len(WORDS) and counts["episodes"] == len(WORDS)


def test_erasure_records_key_the_subject_by_hmac(mem):
    alice, bob = fresh_scope(), fresh_scope()
    in_project = Scope.parse(f"user:{alice.subject_id}", "p1")
    mem.remember("I like tea.", alice)
    mem.remember("I like jazz.", in_project)
    assert not mem.store.erased(alice)
    mem.forget(in_project)
    assert mem.store.erased(in_project)  # that project was erased ...
    assert not mem.store.erased(alice)  # ... not the subject's other records
    mem.forget(alice)
    assert mem.store.erased(alice) and mem.store.erased(Scope.parse(f"user:{alice.subject_id}", "p2"))
    assert not mem.store.erased(bob)
    record = mem.store.start_erasure("user", alice.subject_id, None)  # a new one: the others are done
    plain = hashlib.sha256(f"user:{alice.subject_id}".encode()).hexdigest()
    assert record.subject_hash != plain and len(record.subject_hash) == 64
    assert alice.subject_id not in str(record)


def lives(city: str, valid: str) -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        content=f"Alice lives in {city}",
        single_valued=True,
        valid_at=datetime.fromisoformat(valid).replace(tzinfo=UTC),
    )


def test_deleting_an_episode_restores_what_it_invalidated(mem):
    s = fresh_scope()
    mem.remember("Paris", s, facts=[lives("Paris", "2020-01-01")], episode_id=f"{s.subject_id}:1")
    mem.remember("Berlin", s, facts=[lives("Berlin", "2023-01-01")], episode_id=f"{s.subject_id}:2")
    assert [h.unit.content for h in mem.recall("where does Alice live", s)] == ["Alice lives in Berlin"]
    result = mem.delete_episode(f"{s.subject_id}:2", s)
    paris = mem.recall("where does Alice live", s)
    assert [h.unit.content for h in paris] == ["Alice lives in Paris"]
    assert result["units"] == 1 and result["decisions"] == 1 and result["restored"] == [paris[0].unit.id]
    assert paris[0].unit.time.expired_at is None and paris[0].unit.time.invalid_at is None
    assert mem.store.get_episode(f"{s.subject_id}:2", s) is None
    assert mem.store.get_episode(f"{s.subject_id}:1", s) is not None


def test_archive_moves_old_unrecalled_units_out_of_search(mem):
    s = fresh_scope()
    mem.remember("I like sailing.", s)
    mem.remember("I like chess.", s)
    mem.recall("chess", s, k=1)  # recalled: in active use, so kept in search
    later = utcnow() + timedelta(days=200)
    listed = mem.archive(s, dry_run=True, now=later)[str(s)]
    assert [u.content for u in listed] == ["I like sailing."]
    assert mem.store.archived_ids(s) == set()  # dry run moved nothing
    mem.archive(s, now=later)
    assert "I like sailing." not in [h.unit.content for h in mem.recall("sailing", s)]
    assert len(mem.store.list_units(s, UnitFilter())) == 2  # still in the store
    assert mem.restore([listed[0].id], s) == 1
    assert "I like sailing." in [h.unit.content for h in mem.recall("sailing", s)]
