"""Migration 0022 (issue 43, store size) on a store written before it: the search entries'
`occurred` time, its index and the units' scope token go, run twice it changes nothing more,
and recall answers as before."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem.adapters.neo4j.migrations import migrations
from graphmem.domain.models import Fact

pytestmark = pytest.mark.neo4j

STORE_SIZE = "0022_store_size"


def run(conn, query: str, **params) -> list[dict]:
    records, _, _ = conn.driver.execute_query(query, params, database_=conn.database)
    return [r.data() for r in records]


def test_0022_drops_what_no_query_reads_and_recall_still_answers(index_mem, conn, scope):
    index_mem.remember(
        "Alice joined Acme in 2020.",
        scope,
        facts=[Fact(subject="Alice", predicate="works_at", object="Acme", valid_at=datetime(2020, 1, 1, tzinfo=UTC))],
    )
    before = [hit.unit.id for hit in index_mem.recall("where does Alice work", scope)]
    assert before
    # What the layout before 0022 wrote: a token on every unit, a time on every entry, its index.
    run(conn, "MATCH (u:Unit {scope: $scope}) SET u.scope_token = 'token'", scope=scope.key)
    run(conn, "MATCH (e:Entry {scope: $scope}) SET e.occurred = 0", scope=scope.key)
    run(conn, "CREATE INDEX entry_occurred IF NOT EXISTS FOR (n:SearchEntry) ON (n.scope, n.occurred)")
    migration = next(m for m in migrations() if m.name == STORE_SIZE)

    for _ in range(2):  # an interrupted run is run again from the start
        assert migration.run(conn) == []
        left = run(
            conn,
            "MATCH (n) WHERE n.scope = $scope AND (n.scope_token IS NOT NULL AND n:Unit OR n.occurred IS NOT NULL) "
            "RETURN count(n) AS n",
            scope=scope.key,
        )
        assert left == [{"n": 0}]
        assert run(conn, "SHOW INDEXES YIELD name WHERE name = 'entry_occurred' RETURN name") == []
    assert [hit.unit.id for hit in index_mem.recall("where does Alice work", scope)] == before


def test_new_units_and_entries_carry_neither(index_mem, conn, scope):
    index_mem.remember("Bob moved to Paris.", scope, facts=[Fact(subject="Bob", predicate="lives_in", object="Paris")])
    found = run(
        conn,
        "MATCH (n) WHERE n.scope = $scope AND (n:Unit OR n:Entry) "
        "RETURN count(n) AS nodes, count(n.occurred) AS occurred, "
        "count(CASE WHEN n:Unit THEN n.scope_token END) AS tokens",
        scope=scope.key,
    )
    assert found[0]["nodes"] >= 2 and found[0]["occurred"] == 0 and found[0]["tokens"] == 0
