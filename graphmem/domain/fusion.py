"""Reciprocal rank fusion: how recall joins its ranked lists (semantic, lexical, entities, time,
speaker), the question's similarity that re-scores the best, the walk that adds the units
paths from the best hits reach, and the conversations the best were told in."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import NamedTuple

from graphmem.domain.models import Hit, Reached, Scored, SearchRequest, Step

#: The defaults recall fuses with (``Settings.rrf_k``, ``Settings.list_weights``), chosen by
#: ``benchmarks/tune_recall.py`` on half A of LoCoMo and MuSiQue together (the mean of LoCoMo
#: R@1 and R@10 and MuSiQue all-supports@10, with and without a walk) and checked on half B: the
#: smallest constant trusts the top of each list most; words count twice as much as meaning
#: (MiniLM reads chat turns poorly, and a question's rare words pin its evidence); the
#: named-entity list half; a walk's paths count like two lists; a list not named weighs 1. The
#: speaker list (the candidates said by someone the question names: in LoCoMo, 96% of the
#: evidence of a question naming one participant is what that participant said) counts like
#: two: the best of a grid of constants, lexical and speaker weights on LoCoMo half A. The
#: question's similarity with each of the best fused units (``similar``) counts one and a half:
#: of 0 to 4 with the other defaults, the best on half A of both sets (the tuning objective
#: 0.564 against 0.551 without it). With it, the time list counts three times (the tuner's
#: winner: 0.565 on half A and 0.525 on half B against 0.564 and 0.523 with two).
#: ``conversation`` is not a list: what each other of the best told in the same conversation
#: adds to a unit's score (``together``).
RRF_K = 1
WEIGHTS = {
    "semantic": 1.0,
    "lexical": 2.0,
    "entities": 0.5,
    "time": 3.0,
    "speaker": 2.0,
    "paths": 2.0,
    "similarity": 1.5,
    "conversation": 0.05,
}

#: Recall's optional second stage (``graphmem.pipelines.rerank``; ``Settings.rerank_depth``,
#: ``Settings.rerank_weight``): how many of the best fused candidates the reranker reads, and how
#: much its rank weighs against the fused rank's 1. The best of depths 10 to 50 and weights 0.5 to
#: 1000 by ``benchmarks/rerank_recall.py`` on half A of LoCoMo and MuSiQue together, and on half B
#: alike; each reported on the other half (docs/benchmarks.md#reranking).
RERANK_DEPTH = 50
RERANK_WEIGHT = 4.0

#: Units whose episodes were told less than this apart, one after another, were told in one
#: conversation (``together``).
CONVERSATION_GAP = timedelta(hours=1)


#: Scores closer than this share a rank. Neo4j scores vectors in float32 with Lucene's SIMD
#: code, whose rounding changes while the server's JIT compiles it (one pair of equal cosines
#: came out 6e-8 apart): equal scores must tie however warm the server is.
TIE = 1e-6

#: Lists whose ties share their average rank rather than the best: the time list, where every
#: state true all through the named time is equally near (often most of the candidates), so a
#: tie of many must not give each of them the top rank's share.
AVERAGED = frozenset({"time"})


def rrf(
    lists: Mapping[str, Sequence[Hit]], k: int = RRF_K, weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Ranks, not raw scores, so BM25 and cosine mix fairly: each hit scores
    ``weight / (k + rank)`` in each list, summed. Lists are best first; hits with equal scores
    share a rank (1, 1, 3; scores within ``TIE`` are equal), so a tie carries no weight, except in
    the ``AVERAGED`` lists, where
    they share their average rank (1.5, 1.5, 3). A list's weight defaults to 1."""
    fused: dict[str, float] = {}
    for name, hits in lists.items():
        weight = (weights or {}).get(name, 1.0)
        tied = Counter(hit.score for hit in hits)
        ranks = shared_ranks([hit.score for hit in hits])
        for hit, rank in zip(hits, ranks):
            shared = rank + (tied[hit.score] - 1) / 2 if name in AVERAGED else rank
            fused[hit.id] = fused.get(hit.id, 0.0) + weight / (k + shared)
    return fused


def shared_ranks(scores: Sequence[float]) -> list[int]:
    """The rank of each score of a list sorted best first: one more than how many score more
    than ``TIE`` above it (so 1, 1, 3 for a tie at the top)."""
    below = [-s for s in scores]  # ascending
    return [1 + bisect_left(below, -s - TIE) for s in scores]


class Rescored(NamedTuple):
    """A fused unit once the question's similarity re-scored it (``similar``)."""

    id: str
    score: float
    #: (1 + cos) / 2; None when the unit had no vector to compare.
    similarity: float | None


def similar(
    fused: Mapping[str, float], similarity: Callable[[Sequence[str]], Mapping[str, float]], request: SearchRequest
) -> list[Rescored]:
    """The ``request.depth`` best of the ``request.pool`` best ``fused`` units, best first
    (then by id), once each adds ``weights["similarity"]`` times the question's similarity with
    it above the pool's lowest (docs/recall.md, "Fusion").

    - ``similarity(ids)``: (1 + cos) / 2 with the vector the lists read, as Neo4j's cosine
      scores it; empty without one;
    - above the lowest, so that a unit a walk reaches keeps its footing among direct hits.

    The Neo4j recall statement (recall/fused) computes the same."""
    pool = sorted(fused, key=lambda i: (-fused[i], i))[: request.pool]
    sims = similarity(pool)
    lowest = min(sims.values(), default=0.0)
    weight = request.weights.get("similarity", 1.0)
    scored = [Rescored(i, fused[i] + weight * (sims[i] - lowest if i in sims else 0.0), sims.get(i)) for i in pool]
    return sorted(scored, key=lambda x: (-x.score, x.id))[: request.depth]


def walk(
    request: SearchRequest, found: Sequence[Scored], hop: Callable[[SearchRequest, Step], Sequence[Reached]]
) -> list[Scored]:
    """The ``request.k`` best of the fused units ``found`` (``request.depth`` deep) and of
    those ``request.hops`` hops of ``hop`` reach, each with its best score.

    - a hop starts from the ``request.seeds`` best (hits, then the last hop's) and reaches new
      units only, never back through the entity it came by;
    - paths count like a list, ranked by ``Reached.score``, weighing ``weights["paths"]`` times
      ``hop_decay`` per hop past the first, added to a fused score.

    As the Neo4j recall statement (recall/fused) computes."""
    fused = {s.unit.id: s.score for s in found}
    weight = request.weights.get("paths", 1.0)
    hits = list(found[: request.k])
    frontier, seen = hits, set[str]()
    for depth in range(1, request.hops + 1):
        by_id = {h.unit.id: h for h in frontier[: request.seeds]}
        if not by_id:
            break
        through = tuple(h.path[-2] if h.hop else None for h in by_id.values())
        reached = hop(
            request, Step(frontier=tuple(by_id), through=through, seen=frozenset(seen), limit=request.frontier)
        )
        frontier = []
        for r, rank in zip(reached, shared_ranks([r.score for r in reached])):
            parent = by_id[r.source]
            frontier.append(
                Scored(
                    unit=r.unit,
                    hop=depth,
                    path=(parent.path or (parent.unit.content,)) + (r.via, r.unit.content),
                    score=fused.get(r.unit.id, 0.0)
                    + request.hop_decay ** (depth - 1) * weight / (request.rrf_k + rank),
                )
            )
        seen.update(by_id)
        seen.update(h.unit.id for h in frontier)
        hits += frontier
    best: dict[str, Scored] = {}
    for h in hits:
        if h.unit.id not in best or h.score > best[h.unit.id].score:
            best[h.unit.id] = h
    return sorted(best.values(), key=lambda h: (-h.score, h.unit.id))[: request.k]


def together(found: Sequence[Scored], weight: float, k: int) -> list[Scored]:
    """The ``k`` best of ``found`` (a recall's ``SearchRequest.k`` best) once each adds
    ``weight`` for every other of them told in its conversation: episodes told less than
    ``CONVERSATION_GAP`` apart, one after another; a unit with no time is alone. Units all told
    at once gain alike, so their order stands.

    Evidence clusters where a question's best hits were told; docs/recall.md, "Evidence
    clusters", has the measurements. The Neo4j recall statement (recall/fused) computes the same."""
    told = sorted((s.unit.source.occurred_at, n) for n, s in enumerate(found) if s.unit.source.occurred_at)
    label: dict[int, int] = {}
    for (at, n), before in zip(told, [None, *told]):
        label[n] = label[before[1]] if before and at - before[0] < CONVERSATION_GAP else n
    size = Counter(label.values())
    scored = [
        s.model_copy(update={"score": s.score + weight * (size[label[n]] - 1)}) if size[label.get(n, -1)] > 1 else s
        for n, s in enumerate(found)
    ]
    return sorted(scored, key=lambda s: (-s.score, s.unit.id))[:k]
