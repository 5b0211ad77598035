"""Recall: hybrid candidates, reciprocal rank fusion, visibility at (T, S), graph expansion.

1. semantic and lexical candidates from the index (which knows nothing of time), and in
   hybrid mode the units about entities whose names the query mentions;
2. fused by reciprocal rank fusion: score = sum over lists of 1 / (rrf_k + rank);
3. the visibility rule at (T, S) applied *before* truncating to k; candidate lists grow until
   k visible hits are found or the index has nothing more, so an as-of query still returns k
   hits when k visible ones exist. Candidates are tested by id (``visible_ids``) and only the
   k returned are materialised; each growth step is sized from the share of candidates found
   visible so far, so a question about a sparse moment takes few rounds;
4. with hops > 0, a walk from the entities of the top hits through units visible at (T, S);
   a unit reached at hop h scores its parent's score times ``hop_decay`` plus its own fused
   score (if the query matched it too), and carries the path that reached it. ``fanout`` bounds the neighbours read per entity (hub safety) and
   ``frontier`` the units carried from one hop to the next, so a query's work is bounded.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from pydantic import BaseModel

from ..models import AsOf, Hit, MemoryKind, MemoryUnit, Page, Scope, UnitFilter
from ..ports import MemoryIndex, MemoryStore

MAX_CANDIDATES = 5_000
#: Ids per visibility query (a store page holds at most 10,000).
VISIBILITY_CHUNK = 2_000


class RecallHit(BaseModel):
    unit: MemoryUnit
    score: float
    hop: int = 0
    path: list[str] = []


def rrf(lists: Sequence[Sequence[Hit]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ranks, not raw scores, so BM25 and cosine mix fairly. Each list
    is best first; hits with equal scores share a rank (1, 1, 3), so a tie carries no weight."""
    fused: dict[str, float] = {}
    for hits in lists:
        rank, previous = 0, None
        for position, hit in enumerate(hits, 1):
            if hit.score != previous:
                rank, previous = position, hit.score
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (k + rank)
    return fused


def grow(fetch: int, visible: int, k: int) -> int:
    """The next per-list fetch when ``visible`` candidates passed at ``fetch`` and k are
    wanted: enough to reach k at the visible share seen so far, with margin; 2x to 16x."""
    if visible == 0:
        return 16 * fetch
    needed = math.ceil(1.5 * fetch * k / visible)
    return max(2 * fetch, min(16 * fetch, needed))


class Recaller:
    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        rrf_k: int = 60,
        fanout: int = 50,
        hop_decay: float = 0.5,
        seeds: int = 5,
        frontier: int = 200,
    ):
        self.store = store
        self.index = index
        self.rrf_k = rrf_k
        self.fanout = fanout
        self.hop_decay = hop_decay
        self.seeds = seeds
        self.frontier = frontier
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="graphmem-recall")

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
        one when asked), best first. ``mode``: hybrid | semantic | lexical."""
        at = at or AsOf.now()
        hits: list[RecallHit] = []
        for scope in scopes:
            ranked, fused = self._direct(query, scope, k, at, kinds, mode)
            units = {u.id: u for u in self._visible(scope, ranked[:k], at, kinds)}
            direct = [RecallHit(unit=units[i], score=fused[i]) for i in ranked[:k] if i in units]
            hits += direct
            if hops:
                hits += self._walk(direct[: self.seeds], scope, at, hops, kinds, {h.unit.id for h in direct}, fused)
        best: dict[str, RecallHit] = {}
        for h in hits:
            if h.unit.id not in best or h.score > best[h.unit.id].score:
                best[h.unit.id] = h
        return sorted(best.values(), key=lambda h: (-h.score, h.unit.id))[:k]

    def _direct(self, query, scope, k, at, kinds, mode) -> tuple[list[str], dict[str, float]]:
        """Ids of every visible fused candidate, best first (at least k when k exist), and
        their fused scores."""
        fetch = max(3 * k, 30)
        about = self._pool.submit(self._about_entities, query, scope) if mode == "hybrid" else None
        while True:
            # The searches are independent round trips: run them side by side.
            searches = []
            if mode in ("hybrid", "semantic"):
                searches.append(self._pool.submit(self.index.search_semantic, query, scope, fetch))
            if mode in ("hybrid", "lexical"):
                searches.append(self._pool.submit(self.index.search_lexical, query, scope, fetch))
            found = [f.result() for f in searches]
            about_hits = about.result() if about else []
            lists = [about_hits, *found] if about_hits else found
            fused = rrf(lists, self.rrf_k)
            visible = self.store.visible_ids(scope, list(fused), at, kinds)
            exhausted = all(len(hits) < fetch for hits in found)
            if len(visible) >= k or exhausted or fetch >= MAX_CANDIDATES:
                return sorted(visible, key=lambda i: (-fused[i], i)), {i: fused[i] for i in visible}
            fetch = min(MAX_CANDIDATES, grow(fetch, len(visible), k))

    def _about_entities(self, query: str, scope: Scope) -> list[Hit]:
        """Units about the entities the query names, each scored by its best-matching entity:
        the units of one entity tie, leaving their order to the other lists."""
        entities = {h.id: h.score for h in self.index.search_entities(query, scope, self.seeds) if h.score > 0}
        if not entities:
            return []
        best: dict[str, float] = {}
        for row in self.store.units_about(scope, list(entities), self.fanout):
            for uid in row["ids"]:
                best[uid] = max(best.get(uid, 0.0), entities[row["entity"]])
        return [Hit(id=uid, score=score) for uid, score in sorted(best.items(), key=lambda x: (-x[1], x[0]))]

    def _visible(self, scope: Scope, ids: list[str], at: AsOf, kinds) -> list[MemoryUnit]:
        units = []
        for start in range(0, len(ids), VISIBILITY_CHUNK):
            chunk = tuple(ids[start : start + VISIBILITY_CHUNK])
            units += self.store.list_units(scope, UnitFilter(ids=chunk), Page(limit=len(chunk)), at)
        return [u for u in units if not kinds or u.kind in kinds]

    def _walk(self, seeds: list[RecallHit], scope, at, hops, kinds, seen: set[str], fused: dict[str, float]) -> list[RecallHit]:
        found: list[RecallHit] = []
        frontier = seeds
        for hop in range(1, hops + 1):
            if not frontier:
                break
            by_id = {h.unit.id: h for h in frontier}
            rows = self.store.expand(scope, list(by_id), self.fanout)
            # id -> (score, parent id, via entity): plain tuples, as a hop can reach
            # frontier x entities x fanout units; hits are built only for those kept.
            reached: dict[str, tuple[float, str, str]] = {}
            for row in rows:
                base = by_id[row["source"]].score * self.hop_decay
                for nid in row["next"]:
                    if nid in seen:
                        continue
                    # Evidence adds up: reached through the graph and matching the query itself.
                    score = base + fused.get(nid, 0.0)
                    if nid not in reached or score > reached[nid][0]:
                        reached[nid] = (score, row["source"], row["via"])
            # Bound the work per hop, not only per entity: the best-scored reached units go on.
            best = sorted(reached, key=lambda i: (-reached[i][0], i))[: self.frontier]
            visible = {u.id: u for u in self._visible(scope, best, at, kinds)}
            frontier = []
            for nid in best:
                if nid in visible:
                    score, source, via = reached[nid]
                    parent = by_id[source]
                    path = (parent.path or [parent.unit.content]) + [via, visible[nid].content]
                    frontier.append(RecallHit(unit=visible[nid], score=score, hop=hop, path=path))
                    seen.add(nid)
            found += frontier
        return found
