"""Recall's second stage (issue 44) on every adapter family: a reranked recall of k holds the units
the default recall of k holds when k reaches the depth, reordered by the blend
(``graphmem.pipelines.rerank``); the reranker is asked only for a reranked recall, and with the
cross-encoder itself (when its files are provisioned) the set stays the same too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem import GraphMem
from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
from graphmem.domain.models import Episode
from graphmem.errors import ConfigurationError, InvalidInput
from graphmem.pipelines.rerank import blended
from graphmem.rerank import CrossEncoderReranker, msmarco
from graphmem.settings.config import Settings
from graphmem.settings.home import default_home
from tests.conftest import NEO4J, fresh_scope

T0 = datetime(2026, 6, 1, tzinfo=UTC)
DEPTH = 5
TEXTS = [
    "Caroline went hiking in the mountains with her old friends from school last summer.",
    "Caroline went hiking.",
    "Melanie and Caroline went hiking near the lake, and they talked about painting for hours.",
    "Caroline went hiking again on Sunday morning.",
    "Hiking is what Caroline does whenever the weather is good and she has a free weekend.",
    "Caroline likes hiking trips.",
    "Caroline went hiking in Sweden, where she grew up, and took photos of the forest.",
    "A short hike for Caroline.",
]


class Longest:
    """Prefers long texts (each text's score is its own; fusion ranks short ones first here), and
    counts what it is asked."""

    name = "longest"

    def __init__(self) -> None:
        self.asked: list[int] = []

    def score(self, query: str, texts: list[str]) -> list[float]:
        self.asked.append(len(texts))
        return [float(len(t)) for t in texts]


def made(request, embedder, reranker, **settings) -> GraphMem:
    from graphmem.adapters.neo4j.admin import Neo4jDatabase
    from graphmem.adapters.neo4j.index import Neo4jIndex
    from graphmem.adapters.neo4j.store import Neo4jStore

    chosen = Settings.from_env(embedder="hashing", rerank_depth=DEPTH, rerank_weight=1000.0, **settings)
    if request.param == "memory":
        store = InMemoryStore()
        return GraphMem(store, InMemoryIndex(store, embedder), settings=chosen, reranker=reranker)
    conn = request.getfixturevalue("conn")
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    return GraphMem(Neo4jStore(conn), index, database=Neo4jDatabase(conn, index), settings=chosen, reranker=reranker)


@pytest.fixture(params=["memory", NEO4J])
def ranked(request, embedder):
    reranker = Longest()
    mem = made(request, embedder, reranker)
    yield mem, reranker
    mem.usage.close()


def told(mem: GraphMem):
    scope = fresh_scope()
    mem.ingest([Episode(scope=scope, occurred_at=T0 + timedelta(minutes=i), raw=t) for i, t in enumerate(TEXTS)])
    return scope


def test_a_reranked_recall_holds_the_same_units_reordered(ranked) -> None:
    mem, reranker = ranked
    scope = told(mem)
    question = "Where did Caroline go hiking?"
    default = mem.recall(question, scope, k=len(TEXTS))
    assert reranker.asked == []  # off unless asked: Settings.rerank is off
    again = mem.recall(question, scope, k=len(TEXTS), rerank=True)
    assert reranker.asked == [DEPTH]
    assert sorted(h.unit.id for h in again) == sorted(h.unit.id for h in default)
    # the first DEPTH in the reranker's order (weight 1000), the rest in the fused order below
    head = [h.unit.content for h in default[:DEPTH]]
    order = [i for i, _ in blended([float(len(t)) for t in head], 1000.0)]
    assert [h.unit.content for h in again] == [head[i] for i in order] + [h.unit.content for h in default[DEPTH:]]
    assert [h.unit.content for h in again] != [h.unit.content for h in default]
    # confidences are the hits' own (similarity and words), whatever their order
    assert {h.unit.id: h.confidence for h in again} == {h.unit.id: h.confidence for h in default}


def test_a_short_recall_reads_depth_candidates_and_keeps_k(ranked) -> None:
    mem, reranker = ranked
    scope = told(mem)
    default = mem.recall("Where did Caroline go hiking?", scope, k=DEPTH)
    hits = mem.recall("Where did Caroline go hiking?", scope, k=2, rerank=True)
    assert reranker.asked == [DEPTH] and len(hits) == 2
    assert {h.unit.id for h in hits} <= {h.unit.id for h in default}
    assert hits[0].unit.content == max((h.unit.content for h in default), key=len)


def test_settings_turn_it_on_and_a_recall_may_turn_it_off(request, embedder) -> None:
    request.param = "memory"
    reranker = Longest()
    mem = made(request, embedder, reranker, rerank=True)
    scope = told(mem)
    mem.recall("hiking", scope, k=3)
    mem.recall("hiking", scope, k=3, rerank=False)
    mem.assemble("hiking", scope)  # assembly recalls as the settings say
    assert reranker.asked == [DEPTH, DEPTH]


def test_no_reranker_no_reranked_recall(memory_mem) -> None:
    scope = told(memory_mem)
    assert memory_mem.recall("hiking", scope, k=3)
    with pytest.raises(InvalidInput, match="no reranker"):
        memory_mem.recall("hiking", scope, k=3, rerank=True)


def test_the_cross_encoder_reorders_the_same_candidates(request, embedder) -> None:
    pytest.importorskip("onnxruntime")
    model = CrossEncoderReranker(cache_dir=default_home() / "models" / msmarco.MODEL_NAME, fetch=False)
    try:
        model.load()
    except ConfigurationError as exc:
        pytest.skip(f"the reranker's files are not provisioned: {exc}")
    request.param = "memory"
    mem = made(request, embedder, model)
    scope = told(mem)
    question = "Did Caroline take photos in the country she grew up in?"
    default = mem.recall(question, scope, k=len(TEXTS))
    again = mem.recall(question, scope, k=len(TEXTS), rerank=True)
    assert sorted(h.unit.id for h in again) == sorted(h.unit.id for h in default)
    assert "Sweden" in again[0].unit.content
