"""Recall's optional second stage: a reranker (``graphmem.ports.Reranker``, a cross-encoder that
reads the question and a candidate together) scores the ``depth`` best fused candidates, and
their order becomes a blend of two ranks, the fused one and the reranker's (docs/recall.md,
"Reranking").

A candidate at fused rank r (1 = best) that the reranker ranks s scores
1 / (RRF_K + r) + weight / (RRF_K + s): reciprocal rank fusion of the two orders, so the
scales of the two scores never meet. ``weight`` 0 keeps the fused order; a large one follows the
reranker. Candidates past ``depth`` keep their fused order below the others. The set is not
changed, only its order: what the reranker adds is that a recall of k reads ``depth`` candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphmem.domain.fusion import RERANK_DEPTH, RERANK_WEIGHT, RRF_K
from graphmem.domain.models import Scored
from graphmem.ports import Reranker


@dataclass(frozen=True)
class Rerank:
    """How recall uses its reranker: whether a recall that does not say is reranked (``on``),
    over how many of the best fused candidates (``depth``), and how much the reranker's rank
    weighs against the fused rank's 1 (``weight``)."""

    on: bool = False
    depth: int = RERANK_DEPTH
    weight: float = RERANK_WEIGHT


def blended(scores: Sequence[float], weight: float) -> list[tuple[int, float]]:
    """(fused position, blended score) of each candidate, best first: ``scores`` are the
    reranker's, in fused order. Ties go to the better fused rank."""
    by_reranker = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    rank = {i: s for s, i in enumerate(by_reranker, 1)}
    score = {i: 1 / (RRF_K + i + 1) + weight / (RRF_K + rank[i]) for i in range(len(scores))}
    return sorted(score.items(), key=lambda item: (-item[1], item[0]))


def reranked(query: str, scored: Sequence[Scored], reranker: Reranker, depth: int, weight: float) -> list[Scored]:
    """``scored`` (fused order, best first) with its first ``depth`` reordered by their blend
    with ``reranker``'s scores for ``query`` (module docstring); each hit's score is its blend."""
    head, tail = list(scored[:depth]), list(scored[depth:])
    scores = reranker.score(query, [s.unit.content for s in head])
    out = [head[i].model_copy(update={"score": b}) for i, b in blended(scores, weight)]
    return out + [s.model_copy(update={"score": 1 / (RRF_K + len(head) + n)}) for n, s in enumerate(tail, 1)]
