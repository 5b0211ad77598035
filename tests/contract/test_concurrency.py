"""Concurrent writers of the same fact leave exactly one visible unit. In one process the writes
of a scope take turns; between processes the guard keys make the database refuse the second
commit, which is then re-planned (tests/neo4j/test_two_servers.py)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from graphmem.domain.models import Fact, UnitFilter
from tests.conftest import fresh_scope


def test_concurrent_duplicate_writers(mem):
    scope = fresh_scope()
    fact = Fact(
        subject="Alice",
        predicate="lives_in",
        object="Berlin",
        content="Alice lives in Berlin",
        single_valued=True,
        valid_at=datetime(2023, 4, 1, tzinfo=UTC),
    )

    def write(i: int):
        return mem.remember(f"writer {i}", scope, facts=[fact])

    with ThreadPoolExecutor(8) as pool:
        reports = list(pool.map(write, range(8)))
    assert len(mem.store.list_units(scope, UnitFilter())) == 1
    ops = sum((r.decisions for r in reports), start=Counter())
    assert ops == {"ADD": 1, "NOOP": 7}


def test_concurrent_single_valued_writers_leave_one_current_value(mem):
    scope = fresh_scope()
    cities = ["Berlin", "Paris", "Rome", "Oslo"]

    def write(city: str):
        fact = Fact(
            subject="Alice",
            predicate="lives_in",
            object=city,
            single_valued=True,
            valid_at=datetime(2023, 4, 1, tzinfo=UTC),
        )
        return mem.remember(f"I live in {city}", scope, facts=[fact])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, cities))
    current = mem.store.list_units(scope, UnitFilter())
    assert len(current) == 1  # one current value, the others superseded with edges
    assert len(mem.store.list_units(scope, UnitFilter(include_expired=True))) == 4


def test_many_writers_of_one_hot_slot_all_succeed_without_replanning(mem):
    """Each write planned against the timelines another write of the process was committing
    used to be refused and re-planned, up to 8 times, and then failed with Conflict."""
    scope = fresh_scope()

    def write(w: int):
        reports = []
        for n in range(15):
            day = datetime(2020, 1, 1, tzinfo=UTC).replace(day=1 + n % 28, month=1 + w)
            city = ["Berlin", "Paris", "Rome"][(n + w) % 3]
            fact = Fact(subject="Alice", predicate="lives_in", object=city, single_valued=True, valid_at=day)
            reports.append(mem.remember(f"{w}-{n}", scope, facts=[fact]))
        return reports

    with ThreadPoolExecutor(4) as pool:
        reports = [r for rs in pool.map(write, range(4)) for r in rs]
    assert len(reports) == 60 and sum(r.conflicts for r in reports) == 0
    assert len(mem.store.list_units(scope, UnitFilter())) == 1


def test_concurrent_creators_of_the_same_index_all_succeed(conn):
    """Processes starting at once on a fresh database all create the same indexes; Neo4j
    answers the losers 'equivalent rule already exists' despite IF NOT EXISTS. Every creator
    returns (a failure would re-raise from the pool) and one index exists."""
    create = "CREATE INDEX race_probe IF NOT EXISTS FOR (n:RaceProbe) ON (n.x)"

    def probes() -> int:
        records, _, _ = conn.driver.execute_query("SHOW INDEXES YIELD name WHERE name = 'race_probe' RETURN name")
        return len(records)

    try:
        for _ in range(3):
            conn.schema("DROP INDEX race_probe IF EXISTS", what="test")
            assert probes() == 0
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda _: conn.schema(create, what="race probe"), range(16)))
            assert probes() == 1
    finally:
        conn.schema("DROP INDEX race_probe IF EXISTS", what="test")
