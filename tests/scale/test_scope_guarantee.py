"""The scope guarantee at scale: a 5-unit scope among 100,000 units of other subjects gets
exactly its own 5 best hits (semantic and lexical); a 10,000-unit scope, searched through the
HNSW index with over-fetch, gets k hits, all its own. (Approximation quality on this random data
is the index's own; the benchmarks measure it.) Runs last (tests/scale): it leaves 100k units in the test database."""

from __future__ import annotations

import os

import numpy as np
import pytest

from graphmem.adapters.neo4j_index import Neo4jIndex
from graphmem.adapters.neo4j_store import Neo4jStore
from graphmem import GraphMem
from graphmem.models import Page, Triple, UnitFilter, WriteBatch
from tests.conftest import fresh_scope
from tests.factories import unit

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

OTHERS, SCOPES, BATCH = int(os.environ.get("GRAPHMEM_SCALE_UNITS", 100_000)), 10, 5_000


def put(store, conn, scope, texts, vectors, hub=None):
    triple = (lambda i: Triple(subject=hub, predicate="rel", object=f"thing {i}")) if hub else (lambda i: None)
    units = [unit(scope, t, triple=triple(i)) for i, t in enumerate(texts)]
    store.commit(WriteBatch(units=tuple(units)), scope)
    rows = [{"id": u.id, "embedding": v.tolist()} for u, v in zip(units, vectors)]
    conn.write("index/set_unit_embeddings", rows=rows)
    return units


def unit_vectors(rng, n, dim):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_tiny_and_mid_scopes_among_100k(conn, embedder):
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    store = Neo4jStore(conn)
    rng = np.random.default_rng(7)
    dim = embedder.dimension
    others = [fresh_scope() for _ in range(SCOPES)]
    mid = others[0]
    for n, scope in enumerate(others):
        per_scope = OTHERS // SCOPES
        for start in range(0, per_scope, BATCH):
            size = min(BATCH, per_scope - start)
            vectors = unit_vectors(rng, size, dim)
            put(store, conn, scope, [f"alpha common words item {n}-{start + i}" for i in range(size)], vectors,
                hub="Hub" if scope == mid else None)  # every unit of the mid scope is about one hub
    tiny = fresh_scope()
    tiny_units = put(store, conn, tiny, [f"alpha common words tiny {i}" for i in range(5)], unit_vectors(rng, 5, dim))
    tiny_ids = {u.id for u in tiny_units}

    for q in unit_vectors(rng, 20, dim):
        hits = index.search_vector(q.tolist(), tiny, 10)
        assert {h.id for h in hits} == tiny_ids  # min(k, units in scope), never another scope's
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    # A hub entity with 10,000 facts: one hop reads at most `fanout` of them per entity.
    seeds = [h.id for h in index.search_vector(unit_vectors(rng, 1, dim)[0].tolist(), mid, 3)]
    rows = store.expand(mid, seeds, 50)
    assert all(len(r["next"]) <= 50 for r in rows)
    assert any(r["via"] == "Hub" and len(r["next"]) == 50 for r in rows)  # 10,000 there, 50 read
    mem = GraphMem(store, index)
    hits = mem.recall("alpha common words item", mid, k=10, hops=2)
    assert len(hits) == 10 and all(h.unit.scope == mid for h in hits)
    lexical = index.search_lexical("alpha common words", tiny, 10)
    assert {h.id for h in lexical} == tiny_ids

    mid_ids = {u.id for u in store.list_units(mid, UnitFilter(), Page(limit=10_000))}
    assert len(mid_ids) == OTHERS // SCOPES
    for q in unit_vectors(rng, 10, dim):  # a 10% scope: HNSW over-fetch, not the exact scan
        hits = index.search_vector(q.tolist(), mid, 10)
        assert len(hits) == 10 and {h.id for h in hits} <= mid_ids
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
