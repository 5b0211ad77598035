"""`graphmem export` then `graphmem import` against a real Neo4j, through the default factory:
the subject forgotten in between comes back with the same answers, searchable again."""

from __future__ import annotations

import json

import pytest

from tests.cli import as_json, fact_line, invoker, subject
from tests.conftest import fresh_scope

pytestmark = pytest.mark.neo4j


def test_export_forget_import_round_trip(conn, tmp_path):
    run = invoker()
    scope = fresh_scope()
    s, out = subject(scope), tmp_path / "alice.jsonl"
    for eid, when, city in (("p", "2023-01-01", "Paris"), ("b", "2023-06-01", "Berlin")):
        assert run("ingest", "-", input=fact_line(scope, f"{scope.subject_id}:{eid}", when, city)).exit_code == 0
    [berlin] = as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"]
    assert (
        as_json(run("retract", berlin["id"], "--subject", s, "--reason", "a typo", "--json"))["decisions"]["DELETE"]
        == 1
    )
    asked = [
        ("recall", "where does Alice live", "--as-of", "2023-08-01"),
        ("history", "--entity", "Alice"),
        ("explain", berlin["id"]),
        ("decisions",),
    ]

    def answers() -> list[dict]:
        found = [as_json(run(*args, "--subject", s, "--json")) for args in asked]
        for hit in found[0]["hits"]:
            del hit["score"]  # fulltext scores count deleted documents until Lucene merges them
        for side in ("incoming", "outgoing"):
            found[2][side].sort(key=json.dumps)
        return found

    assert run("export", "--subject", s, "--output", out).exit_code == 0
    before = answers()
    assert before[0]["hits"][0]["content"] == "Alice lives in Paris"
    assert run("forget", "--subject", s, "--yes").exit_code == 0
    assert as_json(run("recall", "where does Alice live", "--subject", s, "--json"))["hits"] == []

    doc = as_json(run("import", out, "--force", "--json"))
    assert doc["imported"]["unit"] == 3 and doc["imported"]["invalidation"] == 3
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [json.loads(line) for line in run("export", "--subject", s).stdout.splitlines()][1:] == exported[1:]
    again = as_json(run("import", out, "--force", "--json"))
    assert sum(again["imported"].values()) == 0
    assert answers() == before
