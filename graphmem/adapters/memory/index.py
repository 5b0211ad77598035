"""``InMemoryIndex``: the ``MemoryIndex`` port over an ``InMemoryStore``'s tables, for fast tests.

Exact cosine and a plain BM25 over the units searchable at the request's (T, S), each list scored
as the Neo4j index scores it, so recall tested on it behaves the same on Neo4j.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from graphmem.adapters.memory.store import InMemoryStore
from graphmem.domain.entries import MAX, MIN, micros, near, nearness, spans, world_range
from graphmem.domain.fusion import rrf, similar, together, walk
from graphmem.domain.models import (
    AsOf,
    Hit,
    MemoryUnit,
    Reached,
    Scope,
    Scored,
    SearchRequest,
    Step,
    normalise,
    terms,
    words,
)
from graphmem.ports import Embedder

__all__ = ["InMemoryIndex", "bm25"]


class InMemoryIndex:
    """MemoryIndex over an ``InMemoryStore``: it reads the store's ``tables``, under their lock."""

    def __init__(self, store: InMemoryStore, embedder: Embedder) -> None:
        self.embedder = embedder
        self._tables = store.tables

    def loading(self) -> AbstractContextManager[None]:
        return nullcontext()  # nothing to build after

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embedder.embed(list(texts))

    def _searchable(self, request: SearchRequest) -> list[MemoryUnit]:
        """Units of the request's scopes and kinds, not archived, with an entry live at its
        system time whose world interval meets its world range; each as that entry shows it."""
        lo, hi = world_range(request.at, request.during)
        known = micros(request.at.known, MIN)
        tables = self._tables
        found = []
        with tables.lock:
            edges: dict[str, list[tuple[datetime, datetime | None]]] = {}
            for e in tables.edges:
                edges.setdefault(e.unit_id, []).append((e.expired_at, e.invalid_at))
            for u in tables.units.values():
                if (
                    u.scope not in request.scopes
                    or u.id in tables.archived
                    or (request.kinds and u.kind not in request.kinds)
                ):
                    continue
                for span in spans(u.time.created_at, u.time.valid_at, u.time.invalid_at, edges.get(u.id, ())):
                    p = span.props()
                    if p["s_from"] <= known < p["s_to"] and p["t_from"] < hi and p["t_to"] > lo:
                        time = u.time.model_copy(update={"invalid_at": span.t_to, "expired_at": span.expired_at})
                        found.append(u.model_copy(update={"time": time}))
        return found

    def _cosine(self, vector: Sequence[float], units: Sequence[MemoryUnit]) -> list[Hit]:
        vectors = self._tables.vectors
        return [Hit(id=u.id, score=_cosine(vector, vectors[u.id])) for u in units if u.id in vectors]

    def recall(self, request: SearchRequest) -> list[Scored]:
        units = self._searchable(request)
        by_id = {u.id: u for u in units}
        vector, asked = request.asked(self._speaking(request))
        lists: dict[str, list[Hit]] = {}
        if vector is not None:
            lists["semantic"] = _top(self._cosine(vector, units), request.fetch)
        if asked:
            scores = bm25(sorted(set(asked)), [(u.id, terms(u.searched)) for u in units])
            lists["lexical"] = _top([Hit(id=i, score=v) for i, v in scores.items()], request.fetch)
        if request.words:
            lists["entities"] = self._about(request, units)
        if request.window and vector is not None:
            lists["time"] = self._near(request, request.window, units, vector)
        if request.words:
            lists["speaker"] = self._said(request, lists)
        fused = rrf(lists, request.rrf_k, request.weights)
        vectors = self._tables.vectors

        def similarity(ids: Sequence[str]) -> dict[str, float]:
            return {} if vector is None else {i: _cosine(vector, vectors[i]) for i in ids if i in vectors}

        best = [
            Scored(unit=by_id[i], score=score, similarity=sim) for i, score, sim in similar(fused, similarity, request)
        ]
        return together(walk(request, best, self.hop), request.weights.get("conversation", 0.0), request.kept)

    def _speaking(self, request: SearchRequest) -> set[str]:
        """Which of the question's ``names`` speak in a text (unit or episode) of the scopes."""
        if not request.names:
            return set()
        tables = self._tables
        with tables.lock:
            owners = [tables.unit_mentions.get(k, {}) for k, u in tables.units.items() if u.scope in request.scopes]
            owners += [
                tables.episode_mentions.get(k, {}) for k, e in tables.episodes.items() if e.scope in request.scopes
            ]
        return {norm for norm in request.names for names in owners if norm in names and names[norm].kind == "speaker"}

    def _near(
        self,
        request: SearchRequest,
        window: tuple[datetime, datetime],
        units: Sequence[MemoryUnit],
        vector: Sequence[float],
    ) -> list[Hit]:
        """The time list: of the units near the window (``graphmem.domain.entries.near``), the
        ``fetch`` most like the question, scored by how near (equal distances tie)."""
        found = []
        for rule in near(window, world_range(request.at, request.during), [k.value for k in request.kinds]):
            for u in units:
                t_from, t_to = micros(u.time.valid_at, MIN), micros(u.time.invalid_at, MAX)
                if u.kind.value in rule.kinds and rule.from_lo <= t_from < rule.from_hi and t_to > rule.to_lo:
                    found.append((u, nearness(t_from, t_to, window, rule.event, request.began_first)))
        similar = {h.id: h.score for h in self._cosine(vector, [u for u, _ in found])}
        best = sorted((u for u, _ in found if u.id in similar), key=lambda u: (-similar[u.id], u.id))[: request.fetch]
        gap = {u.id: d for u, d in found}
        return _top([Hit(id=u.id, score=-gap[u.id]) for u in best], request.fetch)

    def _said(self, request: SearchRequest, lists: dict[str, list[Hit]]) -> list[Hit]:
        """The speaker list: of the candidates in ``lists``, those said by someone the question
        names (a "Name: message" line's speaker, every word of the name in the question), tied."""
        asked = set(request.words or ())
        mentions = self._tables.unit_mentions
        return [
            Hit(id=i, score=1.0)
            for i in sorted({h.id for hits in lists.values() for h in hits})
            if any(m.kind == "speaker" and set(words(m.name)) <= asked for m in mentions.get(i, {}).values())
        ]

    def _about(self, request: SearchRequest, units: Sequence[MemoryUnit]) -> list[Hit]:
        """Units about the entities the question names (see ``search_entities``) and linked to
        at most ``fanout`` units, each scored by the sum of its entities' share of words named
        times their specificity, so the units of one entity tie."""
        asked = set(request.words or ())
        degree = self._degree()
        with self._tables.lock:
            named = {u.id: self._tables.named(u) for u in units}
        named_by = {u.id: {n for n in named[u.id] if degree[(u.scope.key, n)] <= request.fanout} for u in units}
        names = {n for found in named_by.values() for n in found}
        share = {n: len(set(words(n)) & asked) / max(len(set(words(n))), 1) for n in names}
        chosen = [n for n in names if share[n] == 1.0] or [n for n in names if share[n] > 0]
        seeds = set(sorted(chosen, key=lambda n: (-share[n], n))[: request.seeds])
        hits = []
        for u in units:
            about = [share[n] * _specificity(degree[(u.scope.key, n)]) for n in named_by[u.id] if n in seeds]
            if about:
                hits.append(Hit(id=u.id, score=sum(about)))
        return _top(hits, request.fetch)

    def _degree(self) -> dict[tuple[str, str], int]:
        """How many units (any state) are about or name each entity, by (scope key, norm)."""
        degree: dict[tuple[str, str], int] = {}
        with self._tables.lock:
            for u in self._tables.units.values():
                for norm in self._tables.named(u):
                    degree[(u.scope.key, norm)] = degree.get((u.scope.key, norm), 0) + 1
        return degree

    def hop(self, request: SearchRequest, step: Step) -> list[Reached]:
        with self._tables.lock:
            best = self._paths(request, step)

        def loses(r: Reached) -> bool:  # to the path back from the unit it reaches (Step)
            back = best.get(r.source)
            return back is not None and back.source == r.unit.id and (-back.score, back.unit.id) < (-r.score, r.unit.id)

        return sorted((r for r in best.values() if not loses(r)), key=lambda r: (-r.score, r.unit.id))[: step.limit]

    def _paths(self, request: SearchRequest, step: Step) -> dict[str, Reached]:
        """The best path to each unit one hop from the frontier, by unit id (the lock held)."""
        tables = self._tables
        units = [u for u in self._searchable(request) if u.id not in step.seen]
        named_by = {u.id: tables.named(u) for u in units}
        degree = self._degree()
        asked = set(request.words or ())
        best: dict[str, Reached] = {}
        for position, source_id in enumerate(step.frontier):
            came = step.through[position] if position < len(step.through) else None
            came = normalise(came) if came is not None else None
            source = tables.units.get(source_id)
            if source is None:
                continue
            source_names = tables.named(source)
            # a path from a unit naming none of the question's entities counts half (hop.cypher)
            anchor = 1.0 if any(words(n) and set(words(n)) <= asked for n in source_names) else 0.5
            for norm, name in sorted(source_names.items()):
                if norm == came:
                    continue  # a path crosses an entity once (Step)
                if degree[(source.scope.key, norm)] > request.fanout:
                    continue  # a hub: which of its units would be read is arbitrary
                if words(norm) and set(words(norm)) <= asked:
                    continue  # the question names it: its units are the direct search's to find
                specificity = anchor * _specificity(degree[(source.scope.key, norm)])
                reached = [u for u in units if u.id != source_id and norm in named_by[u.id]]
                for u in reached[: request.fanout]:
                    sim = _path(request.vector, tables.vectors.get(source_id), tables.vectors.get(u.id))
                    score = (1.0 if sim is None else sim) * specificity
                    key = (-score, source_id, name)
                    if u.id not in best or key < (-best[u.id].score, best[u.id].source, best[u.id].via):
                        best[u.id] = Reached(source=source_id, via=name, unit=u, score=score, similarity=sim)
        return best

    def search_semantic_many(self, queries: Sequence[str], scope: Scope, k: int, at: AsOf) -> list[list[Scored]]:
        units = self._searchable(SearchRequest(scopes=(scope,), at=at, k=k, fetch=k))
        by_id = {u.id: u for u in units}
        return [
            [Scored(unit=by_id[h.id], score=h.score) for h in _top(self._cosine(v, units), k)]
            for v in self.vectors(queries)
        ]

    def clear_cache(self) -> None:
        """Nothing is cached here: vectors live in the store, erased with their units."""

    def rebuild(self, scope: Scope | None = None, progress: Callable[[int], None] | None = None) -> int:
        with self._tables.lock:
            units = [u for u in self._tables.units.values() if scope is None or u.scope == scope]
        vectors = self.vectors([u.searched for u in units])
        with self._tables.lock:
            self._tables.vectors.update({u.id: v for u, v in zip(units, vectors)})
        return len(units)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two L2-normalised vectors, as Neo4j's cosine index scores it: (1 + cos) / 2."""
    return (1 + sum(x * y for x, y in zip(a, b))) / 2


def _path(question: Sequence[float] | None, a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    """The cosine between the question and the path a + b (unit vectors), from the pairwise
    cosines, as the Neo4j hop computes it."""
    if question is None or a is None or b is None:
        return None

    def cos(x: Sequence[float], y: Sequence[float]) -> float:
        return 2 * _cosine(x, y) - 1  # _cosine is (1 + cos) / 2

    return (cos(a, question) + cos(b, question)) / math.sqrt(2 + 2 * cos(a, b) + 1e-9)


def bm25(
    query: Sequence[str], docs: Sequence[tuple[str, Sequence[str]]], k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """Okapi BM25 with Lucene's idf, as the fulltext index scores: each document (key, its
    terms) with at least one query term, by key. A term repeated in the query counts again."""
    if not query or not docs:
        return {}
    avg = sum(len(w) for _, w in docs) / len(docs)
    df = {t: sum(1 for _, w in docs if t in w) for t in set(query)}
    scores = {}
    for key, doc in docs:
        score = 0.0
        for t in query:
            tf = doc.count(t)
            if tf:
                idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg))
        if score > 0:
            scores[key] = score
    return scores


def _specificity(linked: int) -> float:
    """1 / log2(1 + units linked to an entity): an entity named everywhere tells little."""
    return math.log(2) / math.log(1 + linked)


def _top(hits: Sequence[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=lambda h: (-h.score, h.id))[:k]
