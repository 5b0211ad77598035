"""Reciprocal rank fusion: the ranking rule every hybrid recall stands on."""

from __future__ import annotations

from graphmem.domain.fusion import rrf
from graphmem.domain.models import Hit


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(id=i, score=s) for i, s in pairs]


def test_fused_score_is_the_sum_of_reciprocal_ranks():
    fused = rrf({"semantic": hits(("a", 0.9), ("b", 0.5)), "lexical": hits(("b", 7.0))}, k=60)
    assert fused == {"a": 1 / 61, "b": 1 / 62 + 1 / 61}


def test_a_list_weighs_what_its_weight_says():
    fused = rrf({"semantic": hits(("a", 0.9)), "lexical": hits(("b", 7.0))}, k=60, weights={"lexical": 2.0})
    assert fused == {"a": 1 / 61, "b": 2 / 61}


def test_equal_scores_share_a_rank():
    # e.g. every unit about the entity a query names: their order must come from other lists
    fused = rrf({"entities": hits(("a", 1.0), ("b", 1.0), ("c", 0.5))}, k=60)
    assert fused["a"] == fused["b"] == 1 / 61
    assert fused["c"] == 1 / 63


def test_the_time_lists_ties_share_their_average_rank():
    # every state true all through the named time is as near as the others: none is the first
    fused = rrf({"time": hits(("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", -5.0))}, k=1)
    assert fused["a"] == fused["b"] == fused["c"] == 1 / (1 + 2)
    assert fused["d"] == 1 / (1 + 4)


def test_the_fusion_constant_is_a_setting(monkeypatch):
    from graphmem import GraphMem, Settings
    from graphmem.adapters.memory import InMemoryIndex, InMemoryStore
    from graphmem.embed import HashingEmbedder

    monkeypatch.setenv("GRAPHMEM_RRF_K", "5")
    settings = Settings()
    store = InMemoryStore()
    mem = GraphMem(store, InMemoryIndex(store, HashingEmbedder()), settings=settings)
    mem.remember("Alice plays the cello.", "user:alice")
    (hit,) = mem.recall("cello", "user:alice", k=1, mode="lexical")
    assert hit.score == settings.list_weights.get("lexical", 1.0) / (5 + 1)
