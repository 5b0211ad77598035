"""End-to-end scenarios through the public API (GraphMem), on every adapter family."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import Episode, Fact
from graphmem.errors import InvalidInput
from graphmem.extract.rule import RuleExtractor
from tests.conftest import fresh_scope

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def lives(city: str, valid: str, **kw) -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        content=f"Alice lives in {city}",
        valid_at=d(valid),
        single_valued=True,
        **kw,
    )


def contents(hits) -> list[str]:
    return [h.unit.content for h in hits]


def test_move_supersedes_with_the_right_times(mem):
    s = fresh_scope()
    mem.remember("I live in Paris", s, at=d("2020-01-01"), facts=[lives("Paris", "2020-01-01")])
    report = mem.remember("I moved to Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    assert report.decisions == {"UPDATE": 1}
    assert contents(mem.recall("where does Alice live", s)) == ["Alice lives in Berlin"]
    assert contents(mem.recall("where does Alice live", s, as_of=d("2021-06-01"))) == ["Alice lives in Paris"]
    old = mem.recall("where does Alice live", s, as_of=d("2021-06-01"))[0].unit
    now = mem.store.get_unit(old.id, s)
    assert now.time.invalid_at == d("2023-04-01") and now.time.expired_at is not None
    # known-at before the move was learned: we believed Paris, even for today's world time
    before = now.time.expired_at - timedelta(microseconds=1)
    assert contents(mem.recall("where does Alice live", s, known_at=before)) == ["Alice lives in Paris"]
    # and before anything was learned, nothing
    assert (
        contents(mem.recall("where does Alice live", s, known_at=old.time.created_at - timedelta(microseconds=1))) == []
    )
    explained = mem.explain(old.id, s)
    assert explained["incoming"][0]["invalid_at"] == d("2023-04-01")
    assert "where 'Alice lives in Berlin' begins" in explained["incoming"][0]["reason"]


def test_retraction_duplicate_and_out_of_order(mem):
    s = fresh_scope()
    mem.remember("Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    dup = mem.remember("Berlin again", s, at=d("2023-05-01"), facts=[lives("Berlin", "2023-04-01")])
    assert dup.decisions == {"NOOP": 1}
    late = mem.remember("old news", s, at=d("2023-06-01"), facts=[lives("Paris", "2020-01-01")])
    assert late.decisions == {"ADD": 1}
    assert contents(mem.recall("where does Alice live", s)) == ["Alice lives in Berlin"]
    assert contents(mem.recall("where does Alice live", s, as_of=d("2021-01-01"))) == ["Alice lives in Paris"]
    gone = mem.remember("no", s, at=d("2023-07-01"), facts=[lives("Berlin", "2023-04-01", op="retract")])
    # Berlin was never true, so Paris holds on: its unit is closed and continued without end.
    assert gone.decisions == {"DELETE": 1, "UPDATE": 1}
    assert contents(mem.recall("where does Alice live", s, as_of=d("2024-01-01"))) == ["Alice lives in Paris"]


def test_reingest_is_idempotent(mem):
    s = fresh_scope()
    for _ in range(2):
        mem.remember("I like tea.", s, at=d("2024-01-01"), episode_id=f"ep-{s.subject_id}")
    assert len(mem.recall("tea", s)) == 1
    assert len(mem.store.list_decisions(s)) == 1


def test_failing_extractor_keeps_the_episode(mem):
    class Broken:
        version = "broken-1"

        def extract(self, episode):
            raise RuntimeError("model offline")

    mem.writer.extractors = {**mem.extractors, "broken": Broken()}
    mem.extractors["broken"] = Broken()
    s = fresh_scope()
    report = mem.remember("keep me", s, extractor="broken", episode_id=f"e-{s.subject_id}")
    assert report.failed and "model offline" in report.failed[0][1]
    assert mem.store.get_episode(f"e-{s.subject_id}", s).raw == "keep me"
    assert "model offline" in mem.store.list_decisions(s)[0].reason


PEOPLE = ["Dan", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert"]
CITIES = ["Porto", "Rome", "Oslo", "Kyiv", "Quito", "Lima", "Hanoi", "Dakar", "Perth", "Riga", "Tunis", "Accra"]


def test_multi_hop_reaches_the_managers_city(mem):
    # A name no other test uses: fulltext scores a word by how rare it is in the whole index,
    # and the suite writes thousands of Alices.
    s = fresh_scope()
    mem.remember("Zoltan reports to Bob.", s, at=d("2024-01-01"))
    mem.remember("Bob lives in Lisbon.", s, at=d("2024-01-02"))
    for person, city in zip(PEOPLE, CITIES):  # distractors: everyone lives somewhere
        mem.remember(f"{person} lives in {city}.", s, at=d("2024-01-03"))
    q = "where does Zoltan's manager live?"
    assert contents(mem.recall(q, s, k=1, hops=0)) == ["Zoltan reports to Bob."]
    walked = mem.recall(q, s, k=2, hops=1)
    lisbon = [h for h in walked if h.unit.content == "Bob lives in Lisbon."]
    assert lisbon, contents(walked)
    assert lisbon[0].hop == 1
    assert lisbon[0].path == ["Zoltan reports to Bob.", "Bob", "Bob lives in Lisbon."]


def test_scope_isolation_and_shared(mem):
    alice, bob = fresh_scope(), fresh_scope()
    mem.remember("I like tea.", alice)
    mem.remember("I like tea.", bob)
    mem.remember("The office closes at 6pm.", mem.shared)
    mine = mem.recall("tea office", alice)
    assert mine and all(h.unit.scope == alice for h in mine)
    with_shared = mem.recall("office closes", alice, include_shared=True)
    assert "The office closes at 6pm." in contents(with_shared)


def test_bad_input_is_refused(mem):
    with pytest.raises(InvalidInput):
        mem.recall("x", "robot:r2")
    with pytest.raises(InvalidInput):
        mem.recall("x", "user:a", as_of=datetime(2020, 1, 1))
    with pytest.raises(ValueError):
        mem.remember("\x00", "user:a")


def test_procedural_rules_wait_for_review(mem):
    s = fresh_scope()
    rule = Fact(
        subject="assistant",
        predicate="rule",
        object="answer in French",
        content="Always answer in French",
        kind="procedural",
    )
    report = mem.remember("please always answer in French", s, facts=[rule])
    assert report.decisions == {"NOOP": 1} and len(report.reviews) == 1
    (item,) = mem.reviews(s)
    assert item.candidate.content == "Always answer in French" and "human review" in item.reason
    assert mem.recall("French", s) == []
    approved = mem.review(item.id, approve=True)
    assert approved.decisions == {"ADD": 1}
    assert [h.unit.content for h in mem.recall("French", s)] == ["Always answer in French"]
    assert mem.reviews(s) == []
    with pytest.raises(InvalidInput):
        mem.review(item.id, approve=False)


def test_reextract_supersedes_old_units_with_reasons(mem):
    s = fresh_scope()
    mem.remember("I live in Porto. I like chess.", s, extractor="none", at=d("2024-01-01"))
    (old,) = mem.recall("Porto", s)
    report = mem.reextract(s, "rule")
    assert report.decisions == {"DELETE": 1, "ADD": 2}
    now = sorted(h.unit.content for h in mem.recall("Porto chess", s))
    assert now == ["I like chess.", "I live in Porto."]
    gone = mem.store.get_unit(old.unit.id, s)
    assert gone.time.expired_at is not None
    assert f"re-extraction with {RuleExtractor.version}" in mem.explain(old.unit.id, s)["incoming"][0]["reason"]
    assert mem.reextract(s, "rule").decisions == {}  # already at that version: nothing to do


def test_a_value_that_returns_in_the_same_batch_is_not_lost(mem):
    """An ended fact must not make a later interval with the same content a 'duplicate'."""
    s = fresh_scope()

    def answer(valid: str, invalid: str | None) -> Episode:
        fact = Fact(
            subject="q",
            predicate="answer",
            object="A",
            content="q: A",
            single_valued=True,
            valid_at=d(valid),
            invalid_at=d(invalid) if invalid else None,
        )
        return Episode(scope=s, occurred_at=d("2024-01-01"), raw=f"A from {valid}", facts=(fact,))

    report = mem.ingest([answer("2010-01-01", "2015-01-01"), answer("2019-01-01", None)])
    assert report.decisions == {"ADD": 2}
    assert [h.unit.content for h in mem.recall("q", s, as_of=d("2020-01-01"))] == ["q: A"]
    assert mem.recall("q", s, as_of=d("2017-01-01")) == []
