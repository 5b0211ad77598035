"""The admin CLI against a real Neo4j, through the default factory (``GraphMem.connect`` from
the environment): the operator commands and one write-read round trip. The rest of the CLI
runs on the in-memory adapters in tests/unit/test_cli.py."""

from __future__ import annotations

import pytest

from graphmem.adapters.neo4j.store import Neo4jStore
from tests.cli import as_json, fact_line, invoker, subject
from tests.conftest import fresh_scope

pytestmark = pytest.mark.neo4j


@pytest.fixture
def run(conn):
    """Invoke the CLI; the `conn` fixture makes sure Neo4j is up and migrated."""
    return invoker()


def test_init_json_shape(run):
    doc = as_json(run("init", "--json"))
    assert set(doc) == {"applied", "already_applied"}
    assert doc["applied"] == []  # the conn fixture already migrated
    assert doc["already_applied"]


def test_doctor_passes_every_check(run):
    doc = as_json(run("doctor", "--json"))
    assert doc["ok"], doc
    assert [c["check"] for c in doc["checks"]] == [
        "connectivity",
        "migrations",
        "indexes",
        "episodes",
        "embedder",
        "tokenizer",
        "default subject",
    ]
    assert "Neo4j" in doc["checks"][0]["detail"]


def test_ingest_recall_as_of_and_explain(run, conn, tmp_path):
    scope = fresh_scope()
    s = subject(scope)
    path = tmp_path / "moved.jsonl"
    path.write_text(
        fact_line(scope, f"{scope.subject_id}:p", "2023-01-01", "Paris")
        + "\n"
        + fact_line(scope, f"{scope.subject_id}:b", "2023-06-01", "Berlin")
        + "\n"
    )
    assert as_json(run("ingest", path, "--json"))["decisions"]["UPDATE"] == 1
    assert Neo4jStore(conn).get_episode(f"{scope.subject_id}:b", scope) is not None

    now = [h["content"] for h in as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]]
    assert "Alice lives in Berlin" in now and "Alice lives in Paris" not in now
    before = as_json(run("recall", "where does Alice live", "--subject", s, "--as-of", "2023-03-01", "--json"))
    [paris] = [h for h in before["hits"] if h["content"] == "Alice lives in Paris"]
    assert paris["invalid_at"] == "2023-06-01T00:00:00+00:00"
    assert "Alice lives in Berlin" not in [h["content"] for h in before["hits"]]

    [berlin] = [
        h
        for h in as_json(run("recall", "Berlin", "--subject", s, "--json"))["hits"]
        if h["content"] == "Alice lives in Berlin"
    ]
    doc = as_json(run("explain", berlin["id"], "--subject", s, "--json"))
    update = next(d for d in doc["decisions"] if d["op"] == "UPDATE")
    assert "supersedes" in update["reason"] and update["target_id"] == paris["id"]
    # learned in one write, Paris was bounded by Berlin from the start: no edge needed
    assert doc["outgoing"] == []


def test_index_status_rebuild_and_stats(run):
    s = subject(fresh_scope())
    assert as_json(run("remember", "I like green tea.", "--subject", s, "--json"))["decisions"]["ADD"] == 1
    status = as_json(run("index", "status", "--json"))
    assert status["units"] >= 1 and status["model"] == status["embedder"]["model"]
    live = f"entry_embedding_{status['generation']}"
    assert {row["name"] for row in status["indexes"]} >= {live, "entry_text", "entity_names"}
    assert all(row["state"] == "ONLINE" for row in status["indexes"])
    rebuilt = as_json(run("index", "rebuild", "--subject", s, "--json"))
    assert rebuilt == {
        "units": 1,
        "model": status["model"],
        "dimension": status["dimension"],
        "scope": s,
        "project": None,
    }
    stats = as_json(run("stats", "--json"))
    assert stats["units"] >= 1 and stats["migrations"] >= 1 and "indexes" not in stats
    assert stats["building"] is None and "building: -" in run("stats").stdout.splitlines()  # no rebuild under way
