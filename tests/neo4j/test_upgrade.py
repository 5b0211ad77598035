"""A store written by the previous release (b3c2886), opened by this one: `graphmem init` migrates
it (the numbered migrations, then search entries built from its units) and every answer the
release gave on it is given again.

The store is tests/fixtures/release_b3c2886/store.json, dumped from a database that release's
own code wrote (generate.py beside it says how), with answers.json: what that release answered
on it. Here it is loaded into the spare server's emptied database, schema included, exactly
as dumped: nothing of this release touches it before `init`.
"""

from __future__ import annotations

import base64
import json
import struct
from datetime import datetime, timezone
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.time import DateTime

from graphmem import GraphMem
from graphmem.config import Settings
from graphmem.errors import NotFound
from graphmem.migrations import migrations

pytestmark = pytest.mark.neo4j

FIXTURE = Path(__file__).parent.parent / "fixtures" / "release_b3c2886"
ALICE, BOB, CAROL = "user:alice", "user:bob", "user:carol"


def _value(value):
    if isinstance(value, dict):
        if value["$type"] == "datetime":
            return DateTime.from_iso_format(value["value"])
        raw = base64.b64decode(value["value"])
        return list(struct.unpack(f"<{len(raw) // 8}d", raw))
    return value


def _props(props: dict) -> dict:
    return {key: _value(value) for key, value in props.items()}


def load_dump(uri: str, auth: tuple[str, str], dump: dict) -> None:
    """Empty the database (data and schema), then create the dump's schema, nodes and
    relationships as they were."""
    with GraphDatabase.driver(uri, auth=auth) as driver:
        def run(query: str, **params) -> list[dict]:
            records, _, _ = driver.execute_query(query, params)
            return [r.data() for r in records]

        run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS")
        for row in run("SHOW CONSTRAINTS YIELD name"):
            run("DROP CONSTRAINT $name", name=row["name"])
        for row in run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'"):
            run("DROP INDEX $name", name=row["name"])
        for statement in dump["schema"]:
            run(statement)
        run("CALL db.awaitIndexes(300)")
        nodes = [{"key": n["key"], "labels": n["labels"], "props": _props(n["props"])} for n in dump["nodes"]]
        created = run("UNWIND $nodes AS row CREATE (n:$(row.labels)) SET n = row.props "
                      "RETURN row.key AS key, elementId(n) AS id", nodes=nodes)
        ids = {row["key"]: row["id"] for row in created}
        rels = [{"type": r["type"], "start": ids[r["start"]], "end": ids[r["end"]], "props": _props(r["props"])}
                for r in dump["relationships"]]
        run("UNWIND $rels AS row MATCH (a) WHERE elementId(a) = row.start MATCH (b) WHERE elementId(b) = row.end "
            "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props", rels=rels)


@pytest.fixture(scope="module")
def answers() -> dict:
    return json.loads((FIXTURE / "answers.json").read_text())


@pytest.fixture(scope="module")
def upgraded(spare_server):
    """(GraphMem on the upgraded store, what its `init` reported)."""
    load_dump(spare_server.uri, ("neo4j", spare_server.password), json.loads((FIXTURE / "store.json").read_text()))
    settings = Settings.from_env(neo4j_uri=spare_server.uri, embedder="hashing")
    mem = GraphMem.connect(settings, migrate=False, check_index=False)
    report = mem.init()
    yield mem, report
    mem.close()


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc)


def contents(mem: GraphMem, question: str, **options) -> list[str]:
    return sorted(hit.unit.content for hit in mem.recall(question, ALICE, k=50, **options))


def test_init_applies_every_migration_after_the_release_s(upgraded):
    _, report = upgraded
    assert report["already_applied"] == [m.name for m in migrations() if m.number <= "0005"]
    assert report["applied"] == [m.name for m in migrations() if m.number > "0005"]


def test_doctor_finds_no_problem_and_every_unit_is_searchable(upgraded):
    mem, _ = upgraded
    doctor = mem.doctor()
    assert doctor["ok"], doctor["checks"]
    status = mem.index_status()
    # Every unit has its entry (doctor checks that); of the ten, search shows eight now: the
    # archived one and the retracted one are out.
    assert (status["units"], status["searchable_units"]) == (10, 8), status


def test_recall_gives_the_release_s_units_now_and_as_of_every_date(upgraded, answers):
    mem, _ = upgraded
    question = answers["question"]
    # Which units are visible is the store's answer; their order is the ranking's, which this
    # release changed on purpose (fusion weights, time lists), so units are compared as sets.
    assert contents(mem, question) == sorted(answers["recall_now"])
    assert contents(mem, question, mode="lexical") == sorted(answers["recall_lexical_now"])
    for day, expected in answers["recall_as_of"].items():
        assert contents(mem, question, as_of=at(day)) == sorted(expected), day
    for day, expected in answers["recall_known_at"].items():
        assert contents(mem, question, known_at=at(day)) == sorted(expected), day


def test_history_shows_each_fact_with_the_release_s_world_times(upgraded, answers):
    mem, _ = upgraded

    def iso(value: datetime | None) -> str | None:
        return value and value.isoformat()

    entries = mem.history(ALICE, entity="Alice", include_expired=True)
    shown = sorted((e["unit"].content, iso(e["unit"].time.valid_at), iso(e["unit"].time.invalid_at)) for e in entries)
    assert shown == sorted((e["content"], e["valid_at"], e["invalid_at"]) for e in answers["history_alice"])


def test_assemble_loads_the_same_blocks_and_units(upgraded, answers):
    mem, _ = upgraded
    assembly = mem.assemble(answers["assemble"]["query"], ALICE)
    blocks = {b.id: b.label for b in mem.list_blocks(ALICE)}
    assert [blocks[i] for i in assembly.trace.resident_ids] == answers["assemble"]["resident"]
    assert sorted(h.unit.content for h in assembly.hits) == sorted(answers["assemble"]["recalled"])
    stored = [{"label": b.label, "value": b.value, "token_budget": b.token_budget, "writable": b.writable}
              for b in mem.list_blocks(ALICE)]
    assert stored == answers["blocks"]


def test_reviews_erasure_and_archive_are_kept(upgraded, answers):
    mem, _ = upgraded
    assert [r.candidate.content for r in mem.reviews(ALICE)] == answers["pending_reviews"]
    assert [h.unit.content for h in mem.recall("Oslo", BOB, k=10)] == answers["recall_bob"] == []
    assert mem.store.erased(mem.scopes(BOB, None, False)[0])
    assert [h.unit.content for h in mem.recall("Carol keeps bees", CAROL, k=10)] == answers["recall_carol"] == []
    [archived] = answers["archived_carol"]
    assert mem.unit(archived, CAROL)["usage"].archived_at is not None
    with pytest.raises(NotFound):
        mem.unit(archived, BOB)


def test_the_upgraded_store_takes_new_writes_on_its_old_timelines(upgraded):
    mem, _ = upgraded
    from graphmem.models import Fact

    mem.remember("I moved to Lisbon.", ALICE, at("2024-02-01"), facts=[Fact(
        subject="Alice", predicate="lives_in", object="Lisbon", content="Alice lives in Lisbon",
        valid_at=at("2024-01-01"), single_valued=True)])
    lives = [c for c in contents(mem, "where does Alice live") if "lives in" in c]
    assert lives == ["Alice lives in Lisbon"]
    assert [c for c in contents(mem, "where does Alice live", as_of=at("2023-06-01")) if "lives in" in c] == [
        "Alice lives in Berlin"]
