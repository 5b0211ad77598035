"""Recall: hybrid candidates fused by reciprocal rank, at a point on both time axes, and walks
through the entities the best hits are about.

1. One index call (one round trip on Neo4j) returns the k best units visible at (T, S): the
   semantic, lexical and named-entity lists are each read from search entries filtered by
   scope and both time axes (``graphmem.entries``), then fused by reciprocal rank fusion
   (``graphmem.fusion.rrf``), so an as-of question about a sparse moment needs no second round;
2. with hops > 0, one more index call per hop walks from the best hits through the entities
   they are about to other units visible at (T, S). A unit reached at hop h scores its parent's
   score times ``hop_decay``, plus its own score if the question found it directly, and carries
   the path that reached it. ``fanout`` bounds the units read per entity (hub safety) and
   ``frontier`` the units carried from one hop to the next, so a question's work is bounded.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel

from ..errors import InvalidInput
from ..models import AsOf, MemoryKind, MemoryUnit, Scope, SearchRequest, Step, search_terms, words
from ..ports import MemoryIndex

MODES = ("hybrid", "semantic", "lexical")


class RecallHit(BaseModel):
    unit: MemoryUnit
    score: float
    hop: int = 0
    path: list[str] = []


class Recaller:
    def __init__(
        self,
        index: MemoryIndex,
        rrf_k: int = 60,
        fanout: int = 50,
        hop_decay: float = 0.5,
        seeds: int = 5,
        frontier: int = 200,
    ):
        self.index = index
        self.rrf_k = rrf_k
        self.fanout = fanout
        self.hop_decay = hop_decay
        self.seeds = seeds
        self.frontier = frontier

    def request(self, query: str, scopes: Sequence[Scope], k: int, at: AsOf, kinds: Sequence[MemoryKind],
                mode: str) -> SearchRequest:
        """What the index is asked for ``query`` in ``mode`` (hybrid | semantic | lexical)."""
        if mode not in MODES:
            raise InvalidInput(f"unknown recall mode {mode!r}: use {'|'.join(MODES)}")
        return SearchRequest(
            scopes=tuple(scopes), at=at, k=k, fetch=max(3 * k, 30), kinds=tuple(kinds),
            vector=self.index.vectors([query])[0] if mode != "lexical" else None,
            terms=tuple(search_terms(query)) if mode != "semantic" else None,
            words=tuple(words(query)) if mode == "hybrid" else None,
            rrf_k=self.rrf_k, seeds=self.seeds, fanout=self.fanout,
        )

    def recall(
        self,
        query: str,
        scopes: Sequence[Scope],
        k: int = 10,
        at: AsOf | None = None,
        hops: int = 0,
        kinds: Sequence[MemoryKind] = (),
        mode: str = "hybrid",
    ) -> list[RecallHit]:
        """Best k visible units for ``query`` across ``scopes`` (the caller's, plus the shared
        one when asked), best first."""
        request = self.request(query, scopes, k, at or AsOf.now(), kinds, mode)
        if hops:  # a walk adds the fused score of units the question found below the top k
            request = request.model_copy(update={"k": min(1000, max(k, request.fetch))})
        found = [RecallHit(unit=s.unit, score=s.score) for s in self.index.recall(request)]
        hits = found[:k] + (self._walk(request, found, k, hops) if hops else [])
        best: dict[str, RecallHit] = {}
        for h in hits:
            if h.unit.id not in best or h.score > best[h.unit.id].score:
                best[h.unit.id] = h
        return sorted(best.values(), key=lambda h: (-h.score, h.unit.id))[:k]

    def _walk(self, request: SearchRequest, found: list[RecallHit], k: int, hops: int) -> list[RecallHit]:
        """Walks start from the best hits returned (at most ``seeds`` of the k)."""
        fused = {h.unit.id: h.score for h in found}
        frontier = found[: min(k, self.seeds)]
        seen = {h.unit.id for h in frontier}
        walked: list[RecallHit] = []
        for hop in range(1, hops + 1):
            if not frontier:
                break
            by_id = {h.unit.id: h for h in frontier}
            # The index scores each reached unit (parent score x decay, plus its own fused
            # score: evidence adds up) and keeps the best path to each: the work per hop is
            # bounded by ``frontier``, not only per entity.
            step = Step(frontier={h.unit.id: h.score for h in frontier}, decay=self.hop_decay,
                        fused={i: s for i, s in fused.items() if i not in seen}, seen=frozenset(seen),
                        limit=self.frontier)
            frontier = []
            for r in self.index.hop(request, step):
                parent = by_id[r.source]
                path = (parent.path or [parent.unit.content]) + [r.via, r.unit.content]
                frontier.append(RecallHit(unit=r.unit, score=r.score, hop=hop, path=path))
            seen.update(h.unit.id for h in frontier)
            walked += frontier
        return walked
