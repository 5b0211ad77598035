"""Recall: hybrid candidates fused by reciprocal rank, at a point on both time axes, and walks
through the entities the best hits are about.

0. A time the question names ("on 19 March 2024", "last week": ``graphmem.timewords``) is taken
   out of the question's words, adds a ranked list of units told or true near it, and, when no
   as-of point is given, decides what is visible: units true at some point inside it (when
   none is, the texts visible at the asked point, the time only ranking them: see ``recall``);

1. One index call (one round trip on Neo4j) returns the k best units visible at (T, S): the
   semantic, lexical and named-entity lists are each read from search entries filtered by
   scope and both time axes (``graphmem.entries``), then fused by reciprocal rank fusion
   (``graphmem.fusion.rrf``), so an as-of question about a sparse moment needs no second round;
2. with hops > 0, one more index call per hop walks from the best hits through the entities
   they are about or name (facts, and mentions: ``graphmem.mentions``) to other units visible
   at (T, S), ranked by how well the whole path answers the question (see ``_walk``); each
   carries the path that reached it. ``fanout`` bounds the units read per entity (hub safety),
   ``frontier`` the units a hop returns and ``seeds`` the units a hop starts from (the best
   hits, then the best units the previous hop reached), so a question's work is bounded.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel

from ..errors import InvalidInput
from ..fusion import RRF_K, WEIGHTS
from ..models import AsOf, MemoryKind, MemoryUnit, Scope, SearchRequest, Step, search_terms, words
from ..ports import MemoryIndex
from ..timewords import TimeWindow, find_window

MODES = ("hybrid", "semantic", "lexical")


class RecallHit(BaseModel):
    unit: MemoryUnit
    score: float
    hop: int = 0
    path: list[str] = []


class Recalled(list):
    """Recall hits, best first, and the time window the question named (None if none)."""

    window: TimeWindow | None = None


class Recaller:
    def __init__(
        self,
        index: MemoryIndex,
        rrf_k: int = RRF_K,
        fanout: int = 50,
        hop_decay: float = 0.5,
        seeds: int = 5,
        frontier: int = 20,
        weights: dict[str, float] | None = None,
    ):
        self.index = index
        self.weights = WEIGHTS if weights is None else weights
        self.rrf_k = rrf_k
        self.fanout = fanout
        self.hop_decay = hop_decay
        self.seeds = seeds
        self.frontier = frontier

    def request(self, query: str, scopes: Sequence[Scope], k: int, at: AsOf, kinds: Sequence[MemoryKind],
                mode: str, window: TimeWindow | None = None, fixed: bool = False) -> SearchRequest:
        """What the index is asked for ``query`` in ``mode`` (hybrid | semantic | lexical).
        A ``window`` the question names leaves its words, adds the time list and (unless the
        world time is ``fixed`` by an explicit as-of point) widens visibility to it."""
        if mode not in MODES:
            raise InvalidInput(f"unknown recall mode {mode!r}: use {'|'.join(MODES)}")
        text = window.outside(query) if window is not None else query
        span = (window.start, window.end) if window is not None else None
        return SearchRequest(
            scopes=tuple(scopes), at=at, k=k, fetch=max(3 * k, 30), kinds=tuple(kinds),
            vector=self.index.vectors([text])[0] if mode != "lexical" else None,
            terms=tuple(search_terms(text)) if mode != "semantic" else None,
            words=tuple(words(text)) if mode == "hybrid" else None,
            window=span, during=None if fixed else span,
            rrf_k=self.rrf_k, weights=self.weights, seeds=self.seeds, fanout=self.fanout,
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
        fixed: bool = False,
    ) -> Recalled:
        """Best k visible units for ``query`` across ``scopes`` (the caller's, plus the shared
        one when asked), best first; ``fixed``: ``at.valid`` was given, not taken as now (a time
        the question names then ranks, but does not decide visibility)."""
        at = at or AsOf.now()
        window = find_window(query, at.valid)
        request = self.request(query, scopes, k, at, kinds, mode, window, fixed)
        if hops:  # a walk adds the fused score of units the question found below the top k
            request = request.model_copy(update={"k": min(1000, max(k, request.fetch))})
        scored = self.index.recall(request)
        if not scored and request.during is not None and (not kinds or MemoryKind.episodic in kinds):
            # Nothing is true inside the named time. A text is true from when it was told, so
            # one told later about that time ("we moved here four years ago", a document about
            # 1930) is never inside it: then texts are searched as at the asked point, and the
            # time only ranks them. Facts stay as they were (none was true then).
            request = request.model_copy(update={"during": None, "kinds": (MemoryKind.episodic,)})
            scored = self.index.recall(request)
        found = [RecallHit(unit=s.unit, score=s.score) for s in scored]
        hits = found[:k] + (self._walk(request, found, k, hops) if hops else [])
        best: dict[str, RecallHit] = {}
        for h in hits:
            if h.unit.id not in best or h.score > best[h.unit.id].score:
                best[h.unit.id] = h
        recalled = Recalled(sorted(best.values(), key=lambda h: (-h.score, h.unit.id))[:k])
        recalled.window = window
        return recalled

    def _walk(self, request: SearchRequest, found: list[RecallHit], k: int, hops: int) -> list[RecallHit]:
        """Each hop starts from at most ``seeds`` units: the best hits, then the best units the
        previous hop reached (the cost of a hop grows with the units it starts from). The paths of a
        hop are ranked by how well they answer the question (``graphmem.models.Reached``) and
        that rank counts like one more fused list: a reached unit scores its own fused score
        from the direct search (if any) plus ``hop_decay ** (hop - 1) * weight / (rrf_k + rank)``,
        so a path that answers the question outranks direct hits about the wrong thing."""
        fused = {h.unit.id: h.score for h in found}
        frontier = found[:k]
        # The first hop may reach the direct hits too: a path that answers the question counts
        # for them as for any unit (in a small scope every unit is a direct hit).
        seen: set[str] = set()
        weight = self.weights.get("paths", 2.0)
        walked: list[RecallHit] = []
        for hop in range(1, hops + 1):
            if not frontier:
                break
            by_id = {h.unit.id: h for h in frontier[: self.seeds]}
            step = Step(frontier=tuple(by_id), seen=frozenset(seen), limit=self.frontier)
            frontier = []
            rank, previous = 0, None
            for position, r in enumerate(self.index.hop(request, step), 1):
                if r.score != previous:
                    rank, previous = position, r.score
                parent = by_id[r.source]
                path = (parent.path or [parent.unit.content]) + [r.via, r.unit.content]
                score = fused.get(r.unit.id, 0.0) + self.hop_decay ** (hop - 1) * weight / (self.rrf_k + rank)
                frontier.append(RecallHit(unit=r.unit, score=score, hop=hop, path=path))
            seen.update(by_id)  # no path comes back to where a hop started
            seen.update(h.unit.id for h in frontier)
            walked += frontier
        return walked
