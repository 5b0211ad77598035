"""Reciprocal rank fusion: how recall joins its ranked lists (semantic, lexical, entities)."""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from .models import Hit

#: The defaults recall fuses with (``Settings.rrf_k``, ``Settings.list_weights``), chosen by
#: ``benchmarks/tune_recall.py`` on half A of LoCoMo and MuSiQue together (the mean of LoCoMo
#: R@1 and R@10 and MuSiQue all-supports@10, with and without a walk) and checked on half B: the
#: smallest constant trusts the top of each list most; words count twice as much as meaning
#: (MiniLM reads chat turns poorly, and a question's rare words pin its evidence); the
#: named-entity list half; a walk's paths count like two lists; a list not named weighs 1.
RRF_K = 1
WEIGHTS = {"semantic": 1.0, "lexical": 2.0, "entities": 0.5, "time": 2.0, "paths": 2.0}


#: Lists whose ties share their average rank rather than the best: the time list, where every
#: state true all through the named time is equally near (often most of the candidates), so a
#: tie of many must not give each of them the top rank's share.
AVERAGED = frozenset({"time"})


def rrf(lists: Mapping[str, Sequence[Hit]], k: int = RRF_K, weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Ranks, not raw scores, so BM25 and cosine mix fairly: each hit scores
    ``weight / (k + rank)`` in each list, summed. Lists are best first; hits with equal scores
    share a rank (1, 1, 3), so a tie carries no weight, except in the ``AVERAGED`` lists, where
    they share their average rank (1.5, 1.5, 3). A list's weight defaults to 1."""
    fused: dict[str, float] = {}
    for name, hits in lists.items():
        weight = (weights or {}).get(name, 1.0)
        tied = Counter(hit.score for hit in hits)
        rank, previous = 0, None
        for position, hit in enumerate(hits, 1):
            if hit.score != previous:
                rank, previous = position, hit.score
            shared = rank + (tied[hit.score] - 1) / 2 if name in AVERAGED else rank
            fused[hit.id] = fused.get(hit.id, 0.0) + weight / (k + shared)
    return fused
