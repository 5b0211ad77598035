"""Every named query is planned on indexes: EXPLAIN each file in cypher/ and look for operators
that read every node of a label (or every node, or every relationship of a type). The few that
do by design are listed with the reason; a new query that scans fails here, so a missing
predicate (a composite index's second property) or a missing index shows up before a large
store does. Each version family's statements are planned on it: `*_v5` on Neo4j 5.26 (the
compat run of scripts/test), the others on 2026.01+."""

from __future__ import annotations

import pytest

from graphmem.adapters.neo4j.index import Neo4jIndex, index_name
from graphmem.adapters.neo4j.queries import cypher_root, load
from graphmem.embed.hashing import HashingEmbedder

pytestmark = [pytest.mark.neo4j, pytest.mark.compat]

SCANS = {
    "NodeByLabelScan",
    "AllNodesScan",
    "DirectedRelationshipTypeScan",
    "UndirectedRelationshipTypeScan",
    "DirectedAllRelationshipsScan",
    "UndirectedAllRelationshipsScan",
}

#: Queries that read a whole label by design, and why.
SCANNING = {
    "admin/applied_migrations": "one node per migration",
    "admin/delete_log_filler": "the throwaway nodes just written to close a transaction log",
    "erase/erased": "one record per erasure ever started",
    "erase/legacy_records": "a migration over every erasure record",
    "index/drop_vectors": "an index rebuild visits every entry",
    "index/status": "the index status counts every entry",
    "index/unentered_units": "doctor and rebuild look for units without entries, in the whole store",
    "keys/drop_subject": "one node per API key",
    "mentions/untokened_episode_scopes": "a migration over every episode",
    "keys/list_keys": "one node per API key",
    "review/list_reviews": "the listing of every subject's review items (an operator's)",
    "store/list_scopes": "a sweep over every subject visits every unit anyway",
    "store/subjects": "the listing of every subject",
    "subjects/block_labels": "a migration: labels of the blocks a subject moves into",
    "subjects/set_by_id": "a migration over every scoped node",
    "subjects/stored_subjects": "a migration over every scoped node",
}

#: Renderings whose scanning branch never runs, and why.
DEAD_BRANCHES = {
    ("exchange/records", "Episode"): "episode ids belong to their subject: looked up in it ($own), never in any scope",
}

#: Values for the queries with {{placeholders}}: each label a query is rendered with in the code.
LABELS = ["Unit", "Episode", "Entity", "Decision", "Trace", "Block", "Review", "Usage", "Deletion"]


def _names() -> list[str]:
    root = cypher_root()
    names = sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.cypher"))
    return [n for n in names if not n.startswith("migrations/") and load(n).mode in ("read", "write")]


def _renderings(name: str, index: str) -> list:
    query = load(name)
    if not query.values:
        return [query]
    if "label" in query.values:
        keys = {"Usage": "unit_id"}
        return [
            query.rendered(**{"label": label, **({"key": keys.get(label, "id")} if "key" in query.values else {})})
            for label in LABELS
            if (name, label) not in DEAD_BRANCHES
        ]
    return [query.rendered(index=index)]


def _scans(plan: dict) -> list[str]:
    found = [
        f"{plan['operatorType'].split('@')[0]} {plan['args'].get('Details', '')}"
        for _ in [0]
        if plan["operatorType"].split("@")[0] in SCANS
    ]
    return found + [s for child in plan.get("children", []) for s in _scans(child)]


@pytest.fixture(scope="module")
def index(conn) -> Neo4jIndex:
    index = Neo4jIndex(conn, HashingEmbedder())
    index.ensure()
    return index


NAMES = _names()


@pytest.mark.parametrize("name", NAMES)
def test_query_is_planned_on_indexes(conn, index, name):
    if name == "admin/checkpoint":
        pytest.skip("runs on Enterprise editions only")
    if name.endswith("_v5") and index.filtered:
        pytest.skip("runs on Neo4j 5.26 only")
    if f"{name}_v5" in NAMES and not index.filtered:
        pytest.skip("runs on Neo4j 2026.01 and later only: its twin *_v5 runs here")
    scans = []
    for query in _renderings(name, index_name(index.generation)):
        with conn.driver.session(database=conn.database) as session:
            summary = session.run("EXPLAIN " + query.text, {p: None for p in query.params}).consume()
        scans += _scans(summary.plan)
    if name in SCANNING:
        assert scans, f"{name} no longer scans: take it off the list"
    else:
        assert not scans, f"{name} reads whole labels: {scans}"
