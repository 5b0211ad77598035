"""The whole-subject part of the MemoryStore contract (dump, lookup, load, erased, subjects,
prune_traces), run against every adapter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.domain.models import (
    RECORD_KINDS,
    AsOf,
    AssembleTrace,
    Candidate,
    Deletion,
    Entity,
    MemoryBlock,
    MemoryKind,
    Op,
    ReviewItem,
    StoredTrace,
    Triple,
    UnitFilter,
    Usage,
    WriteBatch,
    entity_id,
)
from tests.conftest import fresh_scope
from tests.contract.test_index_contract import search
from tests.factories import day, decision, episode, invalidation, unit

pytestmark = pytest.mark.compat  # also run against Neo4j 5.26 (scripts/test)


def subject_records(scope, n: int):
    """Records of every kind for one scope, written as the pipelines write them: ``n`` units
    about entities, each ended by an edge of its own decision, plus one of each other kind."""
    triple = Triple(subject="Alice", predicate="likes", object="tea")
    units = [
        unit(
            scope,
            f"Alice likes tea {i}",
            created=day(i),
            valid=day(i),
            triple=triple,
            episode_id=f"{scope.subject_id}:e",
        )
        for i in range(n)
    ]
    decisions = [decision(scope, Op.UPDATE, target=u.id, at=day(i + 10)) for i, u in enumerate(units)]
    edges = [invalidation(d, u.id, day(i + 10), day(i + 5)) for i, (d, u) in enumerate(zip(decisions, units))]
    return units, decisions, edges


def fill(store, scope, n: int = 5):
    """Store ``subject_records`` and a record of every other kind (a trace, block, review item,
    deletion record and archived usage); return the units."""
    store.put_episodes([episode(scope, id=f"{scope.subject_id}:e")])
    units, decisions, edges = subject_records(scope, n)
    held = ReviewItem(
        scope=scope,
        candidate=Candidate(scope=scope, content="Rule: be brief", kind=MemoryKind.procedural),
        episode_id=f"{scope.subject_id}:e",
        extractor_version="test",
        reason="procedural",
    )
    store.commit(
        WriteBatch(units=tuple(units), decisions=tuple(decisions), invalidations=tuple(edges), reviews=(held,)), scope
    )
    store.load(scope, {"deletion": [Deletion(scope=scope, episode_id="gone", deleted_at=day(2), units=1, decisions=2)]})
    store.put_block(MemoryBlock(scope=scope, label="persona", value="Be brief.", token_budget=10))
    store.put_trace(
        AssembleTrace(scope=scope, query="tea", resident_ids=(), recalled_ids=(units[0].id,), tokens=3), [0.5]
    )
    store.set_archived(scope, [units[1].id], day(30))
    return units


def everything(store, scope, kind, limit):
    """Every record of a kind, page by page, and the keys each page ended at."""
    records, after, cursors = [], "", []
    while after is not None:
        page, after = store.dump(scope, kind, after, limit)
        records += page
        cursors.append(after)
    return records, cursors


@pytest.mark.parametrize("kind", RECORD_KINDS)
def test_dump_pages_one_scope_in_key_order(store, kind):
    scope, other = fresh_scope(), fresh_scope()
    fill(store, scope)
    fill(store, other)
    whole, _ = everything(store, scope, kind, 1000)
    paged, cursors = everything(store, scope, kind, 2)
    assert paged == whole  # pages neither skip nor repeat
    assert cursors[-1] is None and all(c is not None for c in cursors[:-1])
    assert whole and all(getattr(r, "scope", scope) == scope for r in whole)  # fill stores every kind
    ids = {r.id for r in store.list_units(scope, UnitFilter(include_expired=True))}
    if kind == "unit":
        assert {r.id for r in whole} == ids and [r.id for r in whole] == sorted(ids)
        # as stored: the own end only, nothing derived from edges or usage
        assert all(r.time.expired_at is None and r.time.recall_count == 0 for r in whole)
    if kind == "invalidation":
        assert {r.unit_id for r in whole} == ids and len(whole) == 5
    if kind == "usage":
        assert [(u.archived_at, u.recall_count) for u in whole] == [(day(30), 0)]
    if kind == "trace":
        assert [t.scores for t in whole] == [(0.5,)]
    if kind == "entity":
        assert sorted(e.name for e in whole) == ["Alice", "tea"]


def test_lookup_returns_the_scopes_records_and_names_keys_held_elsewhere(store):
    scope, other = fresh_scope(), fresh_scope()
    mine, theirs = fill(store, scope), fill(store, other)
    found, elsewhere = store.lookup(scope, "unit", [mine[0].id, theirs[0].id, "missing"])
    assert [u.id for u in found] == [mine[0].id] and elsewhere == {theirs[0].id}
    decisions, _ = store.dump(scope, "decision")
    edges, elsewhere = store.lookup(scope, "invalidation", [d.id for d in decisions])
    assert {e.unit_id for e in edges} == {u.id for u in mine} and elsewhere == set()
    usage, _ = store.lookup(scope, "usage", [mine[1].id, mine[2].id])
    assert [u.unit_id for u in usage] == [mine[1].id]  # only units with usage have a record
    assert store.lookup(scope, "unit", []) == ([], set())


def test_loaded_records_read_back_as_given_and_search_follows_them(store_and_index):
    store, index = store_and_index
    scope = fresh_scope()
    units, decisions, edges = subject_records(scope, 3)
    entity = Entity(id=entity_id(scope, "ALICE"), scope=scope, name="ALICE", norm="alice", created_at=day(-1))
    given = {
        "episode": [episode(scope, id=f"{scope.subject_id}:e")],
        "entity": [entity],
        "unit": units,
        "deletion": [Deletion(scope=scope, episode_id="gone", deleted_at=day(2), units=1, decisions=2)],
        "decision": decisions + [decision(scope, Op.DELETE, target="a unit that is gone", at=day(3))],
        "invalidation": edges,
        "usage": [
            Usage(unit_id=units[0].id, scope=scope, recall_count=4, last_recalled_at=day(40)),
            Usage(unit_id=units[2].id, scope=scope, archived_at=day(41)),
        ],
        "block": [MemoryBlock(scope=scope, label="rules", value="No jargon.", token_budget=9, updated_at=day(5))],
        "review": [],
        "trace": [
            StoredTrace(
                scope=scope,
                query="tea",
                resident_ids=("a block that is gone",),
                recalled_ids=(units[0].id, "a unit that is gone"),
                tokens=4,
                created_at=day(6),
                scores=(0.25, None),
            )
        ],
    }
    derived = {
        "unit": WriteBatch(
            vectors=dict(zip((u.id for u in units), index.vectors([u.content for u in units]))),
            vector_model=index.embedder.name,
            unit_mentions={units[0].id: (("Bob", "proper"),)},
        ),
        "episode": WriteBatch(episode_mentions={given["episode"][0].id: (("Bob", "speaker"),)}),
    }
    for kind in RECORD_KINDS:
        assert store.load(scope, {kind: given[kind]}, derived.get(kind)) == len(given[kind])
    for kind in RECORD_KINDS:
        dumped, _ = everything(store, scope, kind, 1000)
        if kind == "entity":  # units name more; the given one keeps its first spelling
            assert {"ALICE", "tea"} <= {e.name for e in dumped} and entity in dumped
        else:
            assert sorted(dumped, key=str) == sorted(given[kind], key=str), kind
    # edges end each unit at its own time; search sees the same, archived units aside
    at = AsOf(valid=day(4), known=day(20))
    assert [u.id for u in store.list_units(scope, UnitFilter(), at=at)] == [u.id for u in units]
    assert sorted(search(index, [scope], "Alice likes tea", "semantic", at=at)) == sorted(u.id for u in units[:2])
    assert search(index, [scope], "Alice likes tea", "semantic", at=AsOf(valid=day(9), known=day(20))) == []
    assert store.get_unit(units[0].id, scope).time.recall_count == 4
    # mention links are written with their units
    assert ("Bob", "proper") in store.unit_entities(scope, units[0].id)
    assert ("Bob", "proper") not in store.unit_entities(scope, units[1].id)


def test_erased_covers_the_subject_or_its_project(store):
    from graphmem.pipelines.lifecycle import forget

    whole, project, empty = fresh_scope(), fresh_scope(project="p1"), fresh_scope()
    other_project = project.model_copy(update={"project_id": "p2"})
    store.put_episodes([episode(s, "held") for s in (whole, project)])
    assert not store.erased(whole)
    forget(store, project.subject_type.value, project.subject_id, "p1")
    assert store.erased(project) and not store.erased(other_project)
    assert not store.erased(project.model_copy(update={"project_id": None}))
    forget(store, whole.subject_type.value, whole.subject_id)
    assert store.erased(whole) and store.erased(whole.model_copy(update={"project_id": "any"}))
    # A subject that held nothing lost nothing an import could bring back.
    forget(store, empty.subject_type.value, empty.subject_id)
    assert not store.erased(empty)


def test_prune_traces_takes_only_older_traces_of_the_scope(store):
    scope, other = fresh_scope(), fresh_scope()
    for s in (scope, other):
        for n in range(3):
            store.put_trace(
                AssembleTrace(scope=s, query="q", resident_ids=(), recalled_ids=(), tokens=1, created_at=day(n))
            )
    assert store.prune_traces(scope, day(2), dry_run=True) == 2
    assert len(store.dump(scope, "trace")[0]) == 3  # a dry run deletes nothing
    assert store.prune_traces(scope, day(2)) == 2
    assert [t.created_at for t in store.dump(scope, "trace")[0]] == [day(2)]
    assert len(store.dump(other, "trace")[0]) == 3
    assert store.prune_traces(None, day(1) + timedelta(hours=1)) >= 2  # every scope (others' too)
    assert [t.created_at for t in store.dump(other, "trace")[0]] == [day(2)]


def test_subjects_count_what_each_scope_holds(store):
    scope, projected = fresh_scope(), fresh_scope(project="p")
    fill(store, scope, n=3)
    store.put_episodes([episode(projected, id=f"{projected.subject_id}:only")])
    counts = {row.scope: (row.episodes, row.units, row.decisions) for row in store.subjects()}
    assert counts[scope] == (1, 3, 3)
    assert counts[projected] == (1, 0, 0)
