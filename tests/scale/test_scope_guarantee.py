"""The scope guarantee at scale: a 5-unit scope among 100,000 units of other subjects gets
exactly its own 5 units (semantic and lexical lists), every hit of a 10,000-unit scope is its
own, and a hop does not walk through a hub entity with 10,000 facts (more than ``fanout``:
which of them it read would be arbitrary) but through the frontier's other entities. (Approximation
quality on this random data is the index's own; the benchmarks
measure it.) Runs last (tests/scale): it leaves 100k units in the test database."""

from __future__ import annotations

import os

import numpy as np
import pytest

from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.domain.models import AsOf, Page, Step, Triple, UnitFilter, WriteBatch
from graphmem.pipelines.recall import Recaller
from tests.conftest import fresh_scope
from tests.factories import unit

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

OTHERS, SCOPES, BATCH = int(os.environ.get("GRAPHMEM_SCALE_UNITS", 100_000)), 10, 5_000


def put(store, model, scope, texts, vectors, hub=None):
    triple = (lambda i: Triple(subject=hub, predicate="rel", object=f"thing {i}")) if hub else (lambda i: None)
    units = [unit(scope, t, triple=triple(i)) for i, t in enumerate(texts)]
    store.commit(
        WriteBatch(units=tuple(units), vectors={u.id: v.tolist() for u, v in zip(units, vectors)}, vector_model=model),
        scope,
    )
    return units


def unit_vectors(rng, n, dim):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_tiny_and_mid_scopes_among_100k(conn, embedder):
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    store = Neo4jStore(conn)
    recaller = Recaller(index)
    rng = np.random.default_rng(7)
    dim = embedder.dimension
    others = [fresh_scope() for _ in range(SCOPES)]
    mid = others[0]
    for n, scope in enumerate(others):
        per_scope = OTHERS // SCOPES
        for start in range(0, per_scope, BATCH):
            size = min(BATCH, per_scope - start)
            put(
                store,
                embedder.name,
                scope,
                [f"alpha common words item {n}-{start + i}" for i in range(size)],
                unit_vectors(rng, size, dim),
                hub="Hub" if scope == mid else None,
            )  # mid: all about one hub
    tiny = fresh_scope()
    tiny_ids = {
        u.id
        for u in put(
            store, embedder.name, tiny, [f"alpha common words tiny {i}" for i in range(5)], unit_vectors(rng, 5, dim)
        )
    }

    def ask(scope, vector=None, terms=None):
        request = recaller.request("alpha", [scope], 10, AsOf.now(), (), "semantic")
        return index.recall(request.model_copy(update={"vector": vector, "terms": terms}))

    for q in unit_vectors(rng, 20, dim):
        hits = ask(tiny, vector=q.tolist())
        assert {h.unit.id for h in hits} == tiny_ids  # min(k, units in scope), never another scope's
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.unit.id for h in ask(tiny, terms=("alpha", "common", "words"))} == tiny_ids

    mid_ids = {u.id for u in store.list_units(mid, UnitFilter(), Page(limit=10_000))}
    assert len(mid_ids) == OTHERS // SCOPES
    for q in unit_vectors(rng, 10, dim):  # a 10% scope, filtered inside the vector index
        hits = ask(mid, vector=q.tolist())
        assert len(hits) == 10 and {h.unit.id for h in hits} <= mid_ids

    # A hub entity with 10,000 facts is not walked; each frontier unit's own object ("thing i",
    # named by the two units of the scope written at position i of a batch) is.
    frontier = tuple(h.unit.id for h in ask(mid, vector=unit_vectors(rng, 1, dim)[0].tolist())[:3])
    request = recaller.request("alpha common words item", [mid], 10, AsOf.now(), (), "hybrid")
    reached = index.hop(request, Step(frontier=frontier, limit=1000))
    assert reached and "Hub" not in {r.via for r in reached}
    assert len(reached) <= len(frontier) and {r.unit.id for r in reached} <= mid_ids
