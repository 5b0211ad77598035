"""Listings (``GraphMem.units``, ``entities``, ``entity``) on both adapters: filters, standings,
cursors that survive concurrent writes, and hostile cursors."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.domain.models import (
    AsOf,
    Fact,
    MemoryKind,
    Page,
    Triple,
    UnitFilter,
    UnitKey,
    UnitQuery,
    UnitStatus,
    WriteBatch,
)
from graphmem.errors import InvalidInput, NotFound
from tests.conftest import fresh_scope
from tests.examples import examples
from tests.factories import unit

pytestmark = pytest.mark.compat


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def lives(city: str, since: str, **extra) -> Fact:
    return Fact(
        subject="Alice",
        predicate="lives_in",
        object=city,
        content=f"Alice lives in {city}",
        valid_at=d(since) if "op" not in extra or extra["op"] != "end" else None,
        single_valued=True,
        **extra,
    )


def contents(page) -> list[str]:
    return [u.content for u in page.units]


def test_units_by_standing_kind_text_and_entity(mem):
    s = fresh_scope()
    mem.remember("Paris", s, at=d("2020-01-01"), facts=[lives("Paris", "2020-01-01")])
    mem.remember("Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    likes = Fact(subject="Alice", predicate="likes", object="jazz", content="Alice likes jazz")
    mem.remember("jazz", s, at=d("2023-05-01"), facts=[likes])
    mem.remember("no jazz", s, at=d("2023-06-01"), facts=[likes.model_copy(update={"op": "retract"})])
    boss = Fact(subject="Bob", predicate="manages", object="Alice", content="Bob manages Alice")
    mem.remember("boss", s, at=d("2023-07-01"), facts=[boss])
    mem.remember("I had a quiet day.", s, at=d("2023-08-01"), extractor="none")

    assert contents(mem.units(s)) == ["I had a quiet day.", "Bob manages Alice", "Alice lives in Berlin"]
    assert contents(mem.units(s, status="ended")) == ["Alice lives in Paris"]
    assert contents(mem.units(s, status="retracted")) == ["Alice likes jazz"]
    everything = contents(mem.units(s, status=None))
    assert sorted(everything) == sorted([*contents(mem.units(s)), "Alice lives in Paris", "Alice likes jazz"])
    assert contents(mem.units(s, kind="episodic")) == ["I had a quiet day."]
    assert contents(mem.units(s, contains="LIVES IN")) == ["Alice lives in Berlin"]
    assert contents(mem.units(s, entity="alice")) == ["Bob manages Alice", "Alice lives in Berlin"]
    assert contents(mem.units(s, entity="Bob", status=None)) == ["Bob manages Alice"]
    # As of 2021 Paris was current and Berlin not yet true; before Berlin was learnt, Paris held.
    assert contents(mem.units(s, as_of=d("2021-01-01"), entity="Alice")) == ["Alice lives in Paris"]
    berlin = mem.units(s, contains="Berlin").units[0]
    before = berlin.time.created_at - timedelta(microseconds=1)
    assert contents(mem.units(s, known_at=before, entity="Alice")) == ["Alice lives in Paris"]
    assert mem.units(fresh_scope()).units == ()  # another subject holds nothing of these


def test_a_closed_and_continued_unit_is_neither_ended_nor_retracted(mem):
    s = fresh_scope()
    mem.remember("Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    mem.remember("old news", s, at=d("2023-06-01"), facts=[lives("Paris", "2020-01-01")])
    mem.remember("no", s, at=d("2023-07-01"), facts=[lives("Berlin", "2023-04-01", op="retract")])
    # Paris's first unit (until 2023-04-01) is closed: a longer stretch continues it.
    assert contents(mem.units(s)) == ["Alice lives in Paris"]
    assert contents(mem.units(s, status="retracted")) == ["Alice lives in Berlin"]
    assert contents(mem.units(s, status="ended")) == []
    assert contents(mem.units(s, status=None)).count("Alice lives in Paris") == 2


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["assert", "end", "retract"]), st.sampled_from("PBR"), st.integers(0, 5)),
        min_size=1,
        max_size=6,
    ),
    when=st.integers(0, 6),
)
def test_standings_agree_with_visibility(mem, steps, when):
    """Whatever facts arrive: ``current`` lists exactly the units visible at (T, S), the three
    standings never overlap, and every listed unit is one of those known at S."""
    s = fresh_scope()
    cities = {"P": "Paris", "B": "Berlin", "R": "Rome"}
    for n, (op, city, year) in enumerate(steps):
        if op == "end":
            fact = lives(cities[city], "2020-01-01", op="end", invalid_at=d(f"{2020 + year}-06-01"))
        else:
            fact = lives(cities[city], f"{2020 + year}-01-01", op=op)
        mem.remember(f"step {n}", s, at=d("2024-01-01") + timedelta(days=n), facts=[fact])
    at = AsOf(valid=d(f"{2020 + when}-03-01"), known=datetime.now(UTC))
    visible = {u.id for u in mem.store.list_units(s, UnitFilter(kind=MemoryKind.semantic), Page(limit=1000), at)}
    standing = {
        status: {u.id for u in mem.units(s, kind="semantic", status=status, as_of=at.valid, known_at=at.known).units}
        for status in UnitStatus
    }
    known = {u.id for u in mem.units(s, kind="semantic", status=None, known_at=at.known, limit=1000).units}
    assert standing[UnitStatus.current] == visible
    assert not standing[UnitStatus.current] & standing[UnitStatus.ended]
    assert not standing[UnitStatus.current] & standing[UnitStatus.retracted]
    assert not standing[UnitStatus.ended] & standing[UnitStatus.retracted]
    assert set().union(*standing.values()) <= known


def _units(s, n: int, start: datetime, tag: str):
    """n units of one scope, created a millisecond apart (some at the same time: ties by id)."""
    return [unit(s, f"{tag} {i}", created=start + timedelta(milliseconds=i // 3)) for i in range(n)]


def test_ten_thousand_units_paged_to_the_end_while_writes_go_on(mem):
    s = fresh_scope()
    base = datetime.now(UTC) - timedelta(hours=1)
    existing = _units(s, 10_000, base, "old")
    for start in range(0, len(existing), 2_000):
        mem.store.commit(WriteBatch(units=tuple(existing[start : start + 2_000])), s)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        # New units, some of them dated inside the listed range (a late writer's clock): they
        # may show or not, but never make an existing unit show twice or go missing.
        n = 0
        while not stop.is_set():
            late = base + timedelta(milliseconds=(n * 37) % 3_000)
            mem.store.commit(
                WriteBatch(units=(unit(s, f"new {n}", created=late), unit(s, f"now {n}", created=datetime.now(UTC)))), s
            )
            n += 1
            written.append(n)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        seen: list[str] = []
        page = mem.units(s, status=None, limit=700)
        while True:
            seen += [u.id for u in page.units]
            if page.next_cursor is None:
                break
            page = mem.units(s, status=None, limit=700, cursor=page.next_cursor)
    finally:
        stop.set()
        thread.join()
    assert written, "the writer never wrote while the listing paged"
    old = {u.id for u in existing}
    assert sorted(i for i in seen if i in old) == sorted(old)  # each exactly once
    assert len(seen) == len(set(seen))


def test_cursors_are_checked(mem):
    s = fresh_scope()
    mem.store.commit(WriteBatch(units=tuple(_units(s, 5, datetime.now(UTC) - timedelta(minutes=1), "u"))), s)
    first = mem.units(s, limit=2)
    assert first.next_cursor
    rest = mem.units(s, limit=2, cursor=first.next_cursor)
    assert not {u.id for u in rest.units} & {u.id for u in first.units}
    for bad in ("", "nonsense", first.next_cursor[:-3], "eyJmIjoxfQ", first.next_cursor * 40):
        with pytest.raises(InvalidInput, match="cursor"):
            mem.units(s, limit=2, cursor=bad)
    with pytest.raises(InvalidInput, match="other filters or another subject"):
        mem.units(fresh_scope(), limit=2, cursor=first.next_cursor)
    with pytest.raises(InvalidInput, match="other filters"):
        mem.units(s, limit=2, contains="u", cursor=first.next_cursor)
    with pytest.raises(InvalidInput, match="cursor"):
        mem.entities(s, cursor=first.next_cursor)
    with pytest.raises(InvalidInput):
        mem.units(s, limit=0)
    with pytest.raises(InvalidInput):
        mem.units(s, status="gone")


def test_entities_with_aliases_counts_prefix_and_cursor(mem):
    s = fresh_scope()
    mem.remember("Paris", s, at=d("2020-01-01"), facts=[lives("Paris", "2020-01-01")])
    mem.remember("Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    lower = Fact(subject="alice", predicate="likes", object="Jazz", content="alice likes Jazz")
    mem.remember("jazz", s, at=d("2023-05-01"), facts=[lower])
    page = mem.entities(s)
    by_name = {e.name: e for e in page.entities}
    assert list(by_name) == ["Alice", "Berlin", "Jazz", "Paris"]
    alice = by_name["Alice"]
    assert alice.aliases == ("alice",)
    assert alice.facts == 2  # Berlin and jazz; Paris has ended
    assert by_name["Paris"].facts == 0 and by_name["Berlin"].facts == 1
    newest = mem.units(s, entity="Alice").units[0]
    assert alice.last_change == newest.time.created_at
    assert [e.name for e in mem.entities(s, prefix="ja").entities] == ["Jazz"]
    assert [e.name for e in mem.entities(s, prefix="B").entities] == ["Berlin"]
    names, cursor = [], None
    while True:
        got = mem.entities(s, limit=1, cursor=cursor)
        names += [e.name for e in got.entities]
        cursor = got.next_cursor
        if cursor is None:
            break
    assert names == ["Alice", "Berlin", "Jazz", "Paris"]
    assert mem.entities(fresh_scope()).entities == ()


def test_one_entity_with_its_facts_and_timeline(mem):
    s = fresh_scope()
    mem.remember("Paris", s, at=d("2020-01-01"), facts=[lives("Paris", "2020-01-01")])
    mem.remember("Berlin", s, at=d("2023-04-01"), facts=[lives("Berlin", "2023-04-01")])
    shown = mem.entity("alice", s)
    assert shown["entity"].name == "Alice"
    assert [u.content for u in shown["facts"]] == ["Alice lives in Berlin"]
    assert [e["unit"].content for e in shown["history"]] == ["Alice lives in Paris", "Alice lives in Berlin"]
    with pytest.raises(NotFound):
        mem.entity("Alice", fresh_scope())
    with pytest.raises(NotFound):
        mem.entity("Ali", s)  # a prefix is not the entity
    with pytest.raises(NotFound):
        mem.entity("...", s)  # no entity has a name of punctuation only
    with pytest.raises(InvalidInput):
        mem.entity("A" * 201, s)


def test_store_pages_units_by_keyset(store):
    """The port itself: newest first by (created_at, id), strictly after the key given."""
    s = fresh_scope()
    t = datetime(2024, 1, 1, tzinfo=UTC)
    units = [unit(s, f"u{i}", created=t + timedelta(seconds=i // 2)) for i in range(6)]
    store.commit(WriteBatch(units=tuple(units)), s)
    order = sorted(units, key=lambda u: (u.time.created_at, u.id), reverse=True)
    at = AsOf(valid=t + timedelta(days=1), known=t + timedelta(days=1))

    got = store.page_units(s, UnitQuery(), at, None, 4)
    assert [u.id for u in got] == [u.id for u in order[:4]]
    after = UnitKey(created_at=got[-1].time.created_at, id=got[-1].id)
    assert [u.id for u in store.page_units(s, UnitQuery(), at, after, 4)] == [u.id for u in order[4:]]
    early = AsOf(valid=at.valid, known=t + timedelta(seconds=1))
    assert {u.id for u in store.page_units(s, UnitQuery(), early, None, 10)} == {u.id for u in units[:4]}
    assert store.page_units(s, UnitQuery(entity="nobody"), at, None, 10) == []
    assert store.page_entities(s, at) == []
    named = unit(s, "Carol knows Dave", created=t, triple=Triple(subject="Carol", predicate="knows", object="Dave"))
    store.commit(WriteBatch(units=(named,)), s)
    assert [e.name for e in store.page_entities(s, at)] == ["Carol", "Dave"]
    assert [e.name for e in store.page_entities(s, at, prefix="d")] == ["Dave"]
    assert [e.name for e in store.page_entities(s, at, after="carol")] == ["Dave"]
