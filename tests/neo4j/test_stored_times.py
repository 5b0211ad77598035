"""Times are stored as Neo4j temporal values, whatever form the adapter sends them in: every
time property of a scope's units, decisions, entities and invalidation edges is a DATE TIME,
so as-of comparisons in Cypher never meet text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem.domain.models import Episode, Fact
from tests.conftest import fresh_scope

pytestmark = [pytest.mark.neo4j, pytest.mark.compat]

#: BENCHMARK-STYLE RAW CYPHER for the check only: the types of every time-like property.
TYPES = """
MATCH (n) WHERE n.scope = $scope
UNWIND [k IN keys(n) WHERE k ENDS WITH '_at' OR k = 'ev_end' | [labels(n)[0], k, valueType(n[k])]] AS t
RETURN DISTINCT t[0] AS owner, t[1] AS key, t[2] AS type
UNION
MATCH (d:Decision)-[r:INVALIDATES]->() WHERE d.scope = $scope
UNWIND [k IN keys(r) WHERE k ENDS WITH '_at' | ['INVALIDATES', k, valueType(r[k])]] AS t
RETURN DISTINCT t[0] AS owner, t[1] AS key, t[2] AS type
"""


@pytest.mark.parametrize("mem", ["neo4j"], indirect=True)
def test_every_stored_time_is_a_datetime(mem, conn):
    scope = fresh_scope()
    at = datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
    mem.ingest(
        [
            Episode(
                id=f"{scope.subject_id}-e1",
                scope=scope,
                occurred_at=at,
                raw="Alice lives in Paris",
                facts=(
                    Fact(
                        subject="Alice",
                        predicate="lives_in",
                        object="Paris",
                        single_valued=True,
                        valid_at=datetime(2020, 1, 1, tzinfo=UTC),
                    ),
                ),
            ),
            Episode(
                id=f"{scope.subject_id}-e2",
                scope=scope,
                occurred_at=at,
                raw="Alice moved to Berlin",
                facts=(
                    Fact(
                        subject="Alice",
                        predicate="lives_in",
                        object="Berlin",
                        single_valued=True,
                        valid_at=datetime(2023, 6, 1, tzinfo=UTC),
                    ),
                ),
            ),
        ]
    )
    mem.ingest(
        [
            Episode(
                id=f"{scope.subject_id}-e3",
                scope=scope,
                occurred_at=at,
                raw="Alice never lived in Paris",
                facts=(Fact(subject="Alice", predicate="lives_in", object="Paris", single_valued=True, op="retract"),),
            )
        ]
    )
    with conn.driver.session(database=conn.database) as session:
        rows = session.run(TYPES, scope=scope.key).data()
    seen = {(r["owner"], r["key"]) for r in rows}
    assert {
        ("Unit", "created_at"),
        ("Unit", "valid_at"),
        ("Unit", "invalid_at"),
        ("Decision", "decided_at"),
        ("Decision", "ev_order_at"),
        ("INVALIDATES", "expired_at"),
    } <= seen
    assert {r["type"] for r in rows} == {"ZONED DATETIME NOT NULL"}, rows
