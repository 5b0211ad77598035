"""Sequences that once broke "one value per single-valued slot at any (as-of, known-at)" or
lost facts in active use, each through the public API on every adapter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.domain.models import Episode, Fact, utcnow
from tests.conftest import fresh_scope

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def lives(who: str, city: str, valid: str, **kw) -> Fact:
    return Fact(
        subject=who,
        predicate="lives_in",
        object=city,
        content=f"{who} lives in {city}",
        valid_at=d(valid),
        single_valued=True,
        **kw,
    )


def cities(mem, scope, **at) -> list[str]:
    return sorted(h.unit.triple.object for h in mem.recall("where does he live", scope, k=50, **at) if h.unit.triple)


def test_out_of_order_arrival_in_separate_writes(mem):
    s = fresh_scope()
    for city, year in (("Rome", "2000"), ("Oslo", "1990"), ("Kyiv", "1995")):
        mem.remember(f"{city} since {year}", s, facts=[lives("Zed", city, f"{year}-01-01")])
    assert cities(mem, s, as_of=d("1992-06-01")) == ["Oslo"]
    assert cities(mem, s, as_of=d("1996-06-01")) == ["Kyiv"]
    assert cities(mem, s, as_of=d("2002-06-01")) == ["Rome"]
    assert cities(mem, s) == ["Rome"]


def test_out_of_order_arrival_in_one_episode(mem):
    s = fresh_scope()
    mem.remember(
        "three moves",
        s,
        facts=[
            lives("Zed", "Rome", "2000-01-01"),
            lives("Zed", "Oslo", "1990-01-01"),
            lives("Zed", "Kyiv", "1995-01-01"),
        ],
    )
    assert cities(mem, s, as_of=d("1996-06-01")) == ["Kyiv"]
    assert cities(mem, s, as_of=d("2002-06-01")) == ["Rome"]


def test_deleting_the_middle_of_a_chain(mem):
    s = fresh_scope()
    for n, (city, year) in enumerate((("Paris", "2010"), ("Berlin", "2015"), ("Rome", "2020"))):
        mem.remember(city, s, facts=[lives("Alice", city, f"{year}-01-01")], episode_id=f"{s.subject_id}:m{n}")
    result = mem.delete_episode(f"{s.subject_id}:m1", s)
    assert cities(mem, s) == ["Rome"]
    assert cities(mem, s, as_of=d("2021-01-01")) == ["Rome"]
    assert cities(mem, s, as_of=d("2016-01-01")) == ["Paris"]
    rederived = [x for x in mem.store.list_decisions(s) if x.deletion_id == result["deletion_id"]]
    assert any("episode" in x.reason and "deleted" in x.reason and "Rome" in x.reason for x in rederived)


def test_deleting_one_of_two_restatements(mem):
    s = fresh_scope()
    mem.remember("Paris", s, facts=[lives("Alice", "Paris", "2010-01-01")], episode_id=f"{s.subject_id}:r0")
    mem.remember("Berlin", s, facts=[lives("Alice", "Berlin", "2015-01-01")], episode_id=f"{s.subject_id}:r1")
    between = utcnow()
    again = mem.remember(
        "Berlin again", s, facts=[lives("Alice", "Berlin", "2015-01-01")], episode_id=f"{s.subject_id}:r2"
    )
    assert again.decisions == {"NOOP": 1}
    mem.delete_episode(f"{s.subject_id}:r1", s)
    assert cities(mem, s) == ["Berlin"]  # r2 still says so
    berlin = mem.recall("where", s, k=5)[0].unit
    assert berlin.source.episode_id == f"{s.subject_id}:r2"
    # as if r1 had never been written: before r2 arrived, Paris was all we knew
    assert cities(mem, s, known_at=between) == ["Paris"]


def test_reextraction_with_another_extractor_replaces_the_units(mem):
    s = fresh_scope()
    for raw, city, year in (("I live in Paris.", "Paris", "2020"), ("I moved to Berlin.", "Berlin", "2022")):
        fact = Fact(
            subject=s.subject_id,
            predicate="lives_in",
            object=city,
            content=f"Alice lives in {city}",
            single_valued=True,
        )
        mem.remember(raw, s, at=d(f"{year}-01-01"), facts=[fact])
    before = utcnow()
    mem.reextract(s, "rule")
    assert [h.unit.content for h in mem.recall("where", s, as_of=d("2021-01-01"))] == ["I live in Paris."]
    assert [h.unit.content for h in mem.recall("where", s)] == ["I moved to Berlin."]
    # history before the re-extraction is kept
    assert [h.unit.content for h in mem.recall("where", s, as_of=d("2021-01-01"), known_at=before)] == [
        "Alice lives in Paris"
    ]


def test_recall_counts_as_use_so_archive_keeps_the_current_value(mem):
    s = fresh_scope()
    mem.remember("Paris", s, facts=[lives("Alice", "Paris", "2010-01-01")])
    mem.remember("Berlin", s, facts=[lives("Alice", "Berlin", "2015-01-01")])
    hit = mem.recall("where does Alice live", s, k=1)[0].unit
    mem.archive(s, now=utcnow() + timedelta(days=200))
    assert hit.id not in mem.store.archived_ids(s)
    assert cities(mem, s) == ["Berlin"]
    assert mem.store.get_unit(hit.id, s).time.recall_count >= 1


def test_writing_an_archived_fact_again_makes_it_searchable(mem):
    s = fresh_scope()
    mem.remember("Paris", s, facts=[lives("Alice", "Paris", "2010-01-01")])
    mem.archive(s, now=utcnow() + timedelta(days=200))
    assert cities(mem, s) == []
    report = mem.remember("Paris again", s, facts=[lives("Alice", "Paris", "2010-01-01")])
    assert report.decisions == {"NOOP": 1}  # the same fact: no new unit...
    assert cities(mem, s) == ["Paris"]  # ...but its unit is searchable again
    assert mem.store.archived_ids(s) == set()


def test_deleting_two_episodes_in_turn(mem):
    """Found by the stateful test: the first deletion's re-derivation hung two edges (at two
    system times) from one decision on one unit; the second deletion, which no longer wanted
    one of them, dropped both and the unit came back."""
    s = fresh_scope()

    def write(*episodes):
        mem.ingest(
            [
                Episode(id=f"{s.subject_id}:{eid}", scope=s, occurred_at=d("2000-01-01"), raw=eid, facts=tuple(facts))
                for eid, facts in episodes
            ]
        )

    write(
        ("e1", [lives("Zed", "Rome", "2000-01-01")]),
        ("e3", [lives("Zed", "Rome", "2000-01-01", invalid_at=d("2000-01-01"))]),
    )
    write(("e5", [lives("Zed", "Rome", "2000-01-01", invalid_at=d("2001-01-01"))]))
    write(("e6", [lives("Zed", "Rome", "2000-01-01", invalid_at=d("2000-01-01"))]))
    after_e6 = utcnow()
    for eid in ("e3", "e5"):
        mem.delete_episode(f"{s.subject_id}:{eid}", s)
    # e6, the latest word on 2000, says Rome ended as it began: nothing then, at every S since
    assert cities(mem, s, as_of=d("2000-06-01"), known_at=after_e6) == []
    assert cities(mem, s, as_of=d("2000-06-01")) == []


def test_a_fact_retracted_in_the_write_that_asserts_it_has_decisions_that_say_so(mem):
    """In one write, "Zed lives in Rome" (ending Oslo) then its retraction: Oslo holds, as when
    the three arrive in three writes, and the two decisions say what happened, not that Rome was
    already shown or that the retraction matched nothing."""
    s = fresh_scope()
    at = d("2024-01-01")
    rome = lives("Zed", "Rome", "2010-01-01")
    episodes = [
        Episode(id=f"{s.subject_id}:{n}", scope=s, occurred_at=at, raw=n, facts=(f,))
        for n, f in (
            ("oslo", lives("Zed", "Oslo", "2000-01-01")),
            ("rome", rome),
            ("never", rome.model_copy(update={"op": "retract"})),
        )
    ]
    mem.ingest(episodes)
    assert cities(mem, s) == ["Oslo"]
    reasons = {x.episode_id.rsplit(":", 1)[1]: (x.op.value, x.reason) for x in mem.decisions(s)}
    assert reasons["rome"] == (
        "NOOP",
        f"lives_in holds one value: 'Rome' supersedes 'Oslo'; retracted later in "
        f"this write (episode {s.subject_id}:never)",
    )
    assert reasons["never"] == (
        "NOOP",
        "retraction of 'Zed lives in Rome', asserted earlier in this write: none of it was stored",
    )


def test_deleting_the_episode_a_restated_fact_first_came_from_leaves_it_one_hit(mem):
    """The deletion re-derives the restated unit and re-adds it: its search entries were
    written twice (each visible once), so recall returned it twice."""
    s = fresh_scope()
    for n, fact in enumerate(
        [lives("Zed", "Rome", "2005-01-01"), lives("Zed", "Rome", "2005-01-01"), lives("Zed", "Kyiv", "2008-01-01")], 1
    ):
        mem.remember(f"episode {n}", s, facts=[fact], episode_id=f"{s.subject_id}:{n}")
    mem.delete_episode(f"{s.subject_id}:1", s)
    for at in (d("2006-06-01"), d("2009-06-01"), None):
        ids = [h.unit.id for h in mem.recall("where does Zed live", s, k=50, as_of=at)]
        assert len(ids) == len(set(ids)), at
    assert cities(mem, s, as_of=d("2006-06-01")) == ["Rome"] and cities(mem, s) == ["Kyiv"]


def test_a_fact_true_for_no_time_is_stored_as_nothing_and_its_decision_says_why(mem):
    """Found by an attacker's trial: the reason said a current fact already showed it."""
    s = fresh_scope()
    mem.ingest(
        [
            Episode(
                id=f"{s.subject_id}:e1",
                scope=s,
                occurred_at=d("2020-01-01"),
                raw="e1",
                facts=(lives("Zed", "Kyiv", "2020-01-01", invalid_at=d("2020-01-01")),),
            )
        ]
    )
    [decision] = mem.decisions(s)
    assert decision.op.value == "NOOP" and "true for no time" in decision.reason, decision.reason
    assert cities(mem, s, as_of=d("2020-01-01")) == []


def test_history_shows_a_unit_ended_by_a_later_fact_as_believed_as_recall_finds_it(mem):
    """Paris from 2024-03, then London (2022) and Tokyo (2025) in a later write: Paris ends at
    Tokyo's start and is still believed; history said "believed ... -> ..." (withdrawn)."""
    s = fresh_scope()
    mem.remember("Paris", s, facts=[lives("Ken", "Paris", "2024-03-01")])
    mem.remember(
        "London and Tokyo", s, facts=[lives("Ken", "London", "2022-01-01"), lives("Ken", "Tokyo", "2025-01-01")]
    )
    [paris] = [e for e in mem.history(s, entity="Ken") if e["unit"].triple.object == "Paris"]
    assert paris["believed_until"] is None
    assert (paris["unit"].time.valid_at, paris["unit"].time.invalid_at) == (d("2024-03-01"), d("2025-01-01"))
    assert [e["invalid_at"] for e in paris["earlier"]] == [None]  # believed open-ended until Tokyo came
    [hit] = mem.recall("where does Ken live", s, as_of=d("2024-06-01"))
    assert hit.unit.id == paris["unit"].id
