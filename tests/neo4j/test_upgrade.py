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
import importlib
import json
import struct
from datetime import UTC, datetime
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.time import DateTime

from graphmem import GraphMem
from graphmem.adapters.neo4j.migrations import migrations
from graphmem.domain.models import Fact, Scope
from graphmem.errors import NotFound
from graphmem.settings.config import Settings

timelines = importlib.import_module("graphmem.adapters.neo4j.migrations.0014_timelines_of_earlier_units")
TIMELINES = "0014_timelines_of_earlier_units"

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

        run("MATCH (n) DETACH DELETE n")
        for row in run("SHOW CONSTRAINTS YIELD name"):
            run("DROP CONSTRAINT $name", name=row["name"])
        for row in run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'"):
            run("DROP INDEX $name", name=row["name"])
        for statement in dump["schema"]:
            run(statement)
        run("CALL db.awaitIndexes(300)")
        nodes = [{"key": n["key"], "labels": n["labels"], "props": _props(n["props"])} for n in dump["nodes"]]
        created = run(
            "UNWIND $nodes AS row CREATE (n:$(row.labels)) SET n = row.props RETURN row.key AS key, elementId(n) AS id",
            nodes=nodes,
        )
        ids = {row["key"]: row["id"] for row in created}
        rels = [
            {"type": r["type"], "start": ids[r["start"]], "end": ids[r["end"]], "props": _props(r["props"])}
            for r in dump["relationships"]
        ]
        run(
            "UNWIND $rels AS row MATCH (a) WHERE elementId(a) = row.start MATCH (b) WHERE elementId(b) = row.end "
            "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props",
            rels=rels,
        )


@pytest.fixture(scope="module")
def answers() -> dict:
    return json.loads((FIXTURE / "answers.json").read_text())


@pytest.fixture(scope="module")
def dump() -> dict:
    return json.loads((FIXTURE / "store.json").read_text())


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def upgraded(spare_server, dump):
    """(GraphMem on the upgraded store, what its `init` reported). The first `init` is cut off
    inside 0014 after its first page of units; the second finishes it."""
    load_dump(spare_server.uri, ("neo4j", spare_server.password), dump)
    settings = Settings.from_env(neo4j_uri=spare_server.uri, embedder="hashing")
    mem = GraphMem.connect(settings, migrate=False, check_index=False)
    join = timelines._join

    def once(tx, joined):
        patch.setattr(timelines, "_join", cut)
        join(tx, joined)

    def cut(tx, joined):
        raise Interrupted

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timelines, "PAGE", 4)
        patch.setattr(timelines, "_join", once)
        with pytest.raises(Interrupted):
            mem.init()
    report = mem.init()
    yield mem, report
    mem.close()


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def contents(mem: GraphMem, question: str, **options) -> list[str]:
    return sorted(hit.unit.content for hit in mem.recall(question, ALICE, k=50, **options))


def test_init_applies_every_migration_after_the_release_s_and_resumes_an_interrupted_one(upgraded):
    mem, report = upgraded
    assert mem.database.applied_migrations() == [m.number for m in migrations()]
    names = [m.name for m in migrations()]
    cut = names.index(TIMELINES)
    assert report["applied"] == names[cut:]  # the one cut off and those after it; the earlier ones were recorded
    assert report["already_applied"] == names[:cut]


def test_the_timeline_migration_run_again_changes_nothing(upgraded, spare_server):
    mem, _ = upgraded

    def stored() -> list[dict]:
        with GraphDatabase.driver(spare_server.uri, auth=("neo4j", spare_server.password)) as driver:
            records, _, _ = driver.execute_query(
                "MATCH (n) WHERE n:Unit OR n:Decision OR n:Entry "
                "RETURN labels(n) AS labels, properties(n) AS props ORDER BY n.id, n.unit_id, n.s_from"
            )
        return [r.data() for r in records]

    before = stored()
    assert timelines.apply(mem.database.conn) == []
    assert stored() == before


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
    # This release loads approved procedural rules beside the blocks, not among recalled units:
    # together they are the units the release put in context.
    rules = [mem.unit(i, ALICE)["unit"].content for i in assembly.trace.rule_ids]
    assert rules == ["Always answer Alice briefly"]
    # And it leaves out recalled units below the confidence threshold: the release's less those.
    rated = mem.recall(answers["assemble"]["query"], ALICE)
    relevant = {h.unit.content for h in rated if h.confidence >= rated.threshold}
    expected = [c for c in answers["assemble"]["recalled"] if c in relevant or c in rules]
    assert sorted([h.unit.content for h in assembly.hits] + rules) == sorted(expected)
    stored = [
        {"label": b.label, "value": b.value, "token_budget": b.token_budget, "writable": b.writable}
        for b in mem.list_blocks(ALICE)
    ]
    assert stored == answers["blocks"]


def test_the_release_s_assembly_trace_shows_what_it_loaded(upgraded, answers, dump):
    mem, _ = upgraded
    [trace] = [n for n in dump["nodes"] if n["labels"] == ["Trace"]]  # made by the assemble in answers.json
    shown = mem.trace(trace["props"]["id"], ALICE)
    assert [b.label for b in shown["resident"]] == answers["assemble"]["resident"]
    assert [u.content for u in shown["recalled"]] == answers["assemble"]["recalled"]


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


def test_units_carry_their_episode_s_time(upgraded):
    mem, _ = upgraded
    hits = mem.recall("Alice", ALICE, k=50)
    assert len(hits) == 5
    for hit in hits:
        assert hit.unit.source.occurred_at == mem.episode(hit.unit.source.episode_id, ALICE).occurred_at


def lives(mem: GraphMem, **options) -> list[str]:
    return [c for c in contents(mem, "where does Alice live", **options) if " lives in " in c]


def test_new_writes_continue_the_release_s_timelines(upgraded):
    mem, _ = upgraded
    before = datetime.now(UTC)
    # A later value of a slot the release wrote ends the release's current value...
    mem.remember(
        "I moved to Lisbon.",
        ALICE,
        at("2024-02-01"),
        facts=[
            Fact(
                subject="Alice",
                predicate="lives_in",
                object="Lisbon",
                content="Alice lives in Lisbon",
                valid_at=at("2024-01-01"),
                single_valued=True,
            )
        ],
    )
    assert lives(mem) == ["Alice lives in Lisbon"]
    assert lives(mem, as_of=at("2023-06-01")) == ["Alice lives in Berlin"]
    # ...and the slot is drawn again: London, which the release kept until Berlin, ends where
    # Paris begins from now on; what was believed before stays as it was.
    assert lives(mem, as_of=at("2020-06-01")) == ["Alice lives in Paris"]
    assert lives(mem, as_of=at("2020-06-01"), known_at=before) == ["Alice lives in London", "Alice lives in Paris"]
    # A restatement of a value the release wrote is known as one, not a second unit.
    report = mem.remember(
        "I still like tea.",
        ALICE,
        at("2024-03-01"),
        facts=[
            Fact(subject="Alice", predicate="likes", object="tea", content="Alice likes tea", valid_at=at("2024-03-01"))
        ],
    )
    assert report.decisions == {"NOOP": 1}
    assert contents(mem, "tea").count("Alice likes tea") == 1
    # A retraction reaches the release's assertion.
    mem.remember(
        "I never worked at Globex.",
        ALICE,
        at("2024-04-01"),
        facts=[Fact(subject="Alice", predicate="works_at", object="Globex", single_valued=True, op="retract")],
    )
    assert [c for c in contents(mem, "where does Alice work") if " works at " in c] == ["Alice works at Acme"]


def test_the_release_s_episodes_link_the_names_their_subject_knows(upgraded):
    """Migration 0019: the release's episodes (it drew no mention links) link the names their
    subject knows that they hold, and a name made known now links them too: the episode text
    index finds them by the scope token the migration gave them."""
    mem, _ = upgraded
    alice = Scope.parse(ALICE)
    assert ("Berlin", "fact") in mem.store.episode_entities(alice, "e-berlin")
    assert ("Acme", "fact") in mem.store.episode_entities(alice, "e-acme")
    assert ("the harbour", "fact") not in mem.store.episode_entities(alice, "e-dinner")
    mem.remember(
        "The harbour is in Oslo.",
        ALICE,
        at("2024-05-01"),
        facts=[Fact(subject="the harbour", predicate="is_in", object="Oslo", content="the harbour is in Oslo")],
    )
    assert ("the harbour", "fact") in mem.store.episode_entities(alice, "e-dinner")
