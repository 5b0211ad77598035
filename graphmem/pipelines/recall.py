"""Recall: the k best units visible at (T, S) for a question, from hybrid lists fused by
reciprocal rank, with walks through the entities the best hits are about (docs/recall.md).

- A time the question names (``graphmem.domain.timewords``) leaves its words and adds a time
  list; without an as-of point it also decides visibility. A question about what happened
  counts that list ``EVENT_TIME_BOOST`` times.
- The first ``UNNAMED`` names it writes leave it too (``without_names``): the index reads the
  question without those that speak in the scopes, and ranks what they said.
- One index call reads the lists from search entries (``graphmem.domain.entries``), fuses them
  (``graphmem.domain.fusion``), walks ``hops`` hops from the best hits (``fanout``,
  ``frontier`` and ``seeds`` bound the work) and keeps the k best of twice as many, each
  gaining for the others told in its conversation.
- A question about "X's R" is decomposed by rule (``Recaller._relation``); ``rated`` last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel, Field

from graphmem.domain.fusion import RRF_K, WEIGHTS
from graphmem.domain.mentions import written
from graphmem.domain.mentions.first_person import as_named
from graphmem.domain.models import (
    MAX_QUERY_CHARS,
    SEEDS,
    UNNAMED,
    AsOf,
    MemoryKind,
    MemoryUnit,
    Scope,
    Scored,
    SearchRequest,
    Unnamed,
    search_terms,
    words,
)
from graphmem.domain.relations import Relation, bridged, relation_of
from graphmem.domain.timewords import TimeWindow, find_window
from graphmem.domain.tokenise import normalise
from graphmem.errors import InvalidInput
from graphmem.pipelines import confidence
from graphmem.pipelines.rerank import Rerank, reranked
from graphmem.ports import MemoryIndex, Reranker, query_prefix

MODES = ("hybrid", "semantic", "lexical")
#: A question asking what happened, not what was true ("what did I do last week?", "anything
#: new in May?"): in the time it names, its events are the answer.
_EVENT_QUESTION = re.compile(r"\b(?:happen\w*|do|doing|done|went|up to|events?)\b", re.I)
#: How much more the time list counts for such a question: in-window events outrank words
#: that merely resemble it (the same "went for a run" told on other days).
EVENT_TIME_BOOST = 10.0
_POSSESSIVE = re.compile(r"(?:['’]s\b|['’](?!\w))?")
_WORD_CHAR = re.compile(r"\w")


class RecallHit(BaseModel):
    unit: MemoryUnit
    score: float
    hop: int = 0
    path: list[str] = []
    #: The question's similarity with the unit, (1 + cos) / 2, when fusion read it (a direct
    #: hit of a recall with a question vector: ``graphmem.domain.fusion.similar``).
    similarity: float | None = None
    #: How likely the unit is what the question asks about (``graphmem.pipelines.confidence``; not the
    #: unit's own ``confidence``, its extraction's).
    confidence: float = Field(0.0, ge=0.0, le=1.0)


class Recalled(list[RecallHit]):
    """Recall hits, best first, the time window the question named (None if none), the
    confidence from which a hit is relevant (``threshold``: its embedder's
    ``confidence.fitted``) and whether any is, and how many episodes of the scopes searched are
    stored undecided (``GraphMem.complete``): what they teach is missing from the hits until
    they are decided."""

    window: TimeWindow | None = None
    threshold: float = 1.0
    relevant: bool = False
    incomplete: int = 0


def without_names(text: str) -> dict[tuple[str, ...], str]:
    """The question without each non-empty set of the first ``UNNAMED`` names it writes
    (proper names and speakers, ``graphmem.domain.mentions.written``; a possessive goes with its
    name), by the set's norms, sorted."""
    first: dict[str, list[tuple[int, int]]] = {}
    for m in written(text):
        possessive = _POSSESSIVE.match(text, m.end)
        assert possessive is not None  # the pattern matches the empty string too
        end = m.end + len(possessive[0])
        # only whole words as search reads them ("¹A0" is one word there, no name "A0")
        whole = not _WORD_CHAR.match(text[m.start - 1 : m.start]) and not _WORD_CHAR.match(text[end : end + 1])
        if whole and (m.norm in first or len(first) < UNNAMED):
            first.setdefault(m.norm, []).append((m.start, end))
    out = {}
    for size in range(1, len(first) + 1):
        for norms in combinations(sorted(first), size):
            spans = sorted(span for n in norms for span in first[n])
            kept, at = [], 0
            for start, end in spans:
                kept.append(text[at:start])
                at = max(at, end)
            out[norms] = " ".join("".join(kept + [text[at:]]).split())
    return out


#: How many first hits a relation question looks for its bridge among.
RELATION_POOL = 10


def chained(
    bridge: RecallHit, through: Sequence[RecallHit], rest: Sequence[RecallHit], weight: float, rrf_k: int, beyond: bool
) -> list[RecallHit]:
    """A relation question's hits: its chain, then the ``rest`` as they were. The chain is the
    bridge and what follows it (``through``), the first of those first when the question asks
    ``beyond`` who X's R is (where they live, say), else the bridge, the answer then. Each
    scores the best of the rest plus what its rank would in a list of ``weight`` (the walk's
    paths): a chain answers the question, the rest do not."""
    floor = max((h.score for h in rest), default=0.0)
    chain = [*through[:1], bridge, *through[1:]] if beyond else [bridge, *through]
    scored = [h.model_copy(update={"score": floor + weight / (rrf_k + rank)}) for rank, h in enumerate(chain, 1)]
    return scored + list(rest)


def rated(
    hits: Sequence[RecallHit],
    stems: frozenset[str],
    model: confidence.Model,
    kept: Mapping[str, float] | None = None,
    also: Sequence[frozenset[str]] = (),
) -> Recalled:
    """``hits`` with their confidences under ``model`` (``stems``: the question's
    ``confidence.asked``; ``also``: its other readings', the best counting), and whether any is
    relevant. A walked hit with no similarity of its own is as confident as the direct hit its
    path starts from, when among them: what a relevant hit leads to is relevant as far as it is.
    ``kept``: confidences already rated (by unit id)."""
    rates = [max(r) for r in zip(*(confidence.confidences(hits, s, model) for s in (stems, *also)))]
    start = {h.unit.content: c for h, c in zip(hits, rates) if not h.hop}
    rates = [start.get(h.path[0], c) if h.hop and h.similarity is None and h.path else c for h, c in zip(hits, rates)]
    rates = [c if kept is None else kept.get(h.unit.id, c) for h, c in zip(hits, rates)]
    out = Recalled(h.model_copy(update={"confidence": c}) for h, c in zip(hits, rates))
    out.threshold = model.threshold
    out.relevant = any(h.confidence >= model.threshold for h in out)
    return out


def readings(query: str, scopes: Sequence[Scope]) -> list[str]:
    """How a question is asked: as said and, of one user's memory whose id reads as a name, also
    with its first person as that name, as search reads the user's units (``as_named``): "Where
    did I live?" meets "I moved to Graz." read as "alice moved to Graz.", while "What did I do?"
    still meets "Went to the cinema." as said. Not when the name would make it longer than a
    question may be."""
    users = {sc.subject_id for sc in scopes if sc.subject_type.value == "user"}
    named = as_named(query, "user", users.pop()) if len(users) == 1 else query
    return [query] if named == query or len(named) > MAX_QUERY_CHARS else [query, named]


class Recaller:
    def __init__(
        self,
        index: MemoryIndex,
        rrf_k: int = RRF_K,
        fanout: int = 50,
        hop_decay: float = 0.5,
        seeds: int = SEEDS,
        frontier: int = 20,
        weights: dict[str, float] | None = None,
        reranker: Reranker | None = None,
        rerank: Rerank | None = None,
    ):
        self.index = index
        self.reranker = reranker
        self.rerank = rerank or Rerank()
        self.confidence = confidence.fitted(index.embedder.name)
        self.weights = WEIGHTS if weights is None else weights
        self.rrf_k = rrf_k
        self.fanout = fanout
        self.hop_decay = hop_decay
        self.seeds = seeds
        self.frontier = frontier

    def request(
        self,
        query: str,
        scopes: Sequence[Scope],
        k: int,
        at: AsOf,
        kinds: Sequence[MemoryKind],
        mode: str,
        window: TimeWindow | None = None,
        fixed: bool = False,
        hops: int = 0,
    ) -> SearchRequest:
        """What the index is asked for ``query`` in ``mode`` (hybrid | semantic | lexical),
        walking ``hops`` hops. A ``window`` the question names leaves its words, adds the time
        list and (unless the world time is ``fixed`` by an explicit as-of point) widens
        visibility to it."""
        if mode not in MODES:
            raise InvalidInput(f"unknown recall mode {mode!r}: use {'|'.join(MODES)}")
        text = window.outside(query) if window is not None else query
        span = (window.start, window.end) if window is not None else None
        names = without_names(text) if mode == "hybrid" else {}
        weights, happened = self.weights, window is not None and bool(_EVENT_QUESTION.search(text))
        if happened:
            weights = {**weights, "time": weights.get("time", 0.0) * EVENT_TIME_BOOST}
        # The question side of the embedder (bge's instruction); stored texts are embedded bare.
        prefix = query_prefix(self.index.embedder)
        vectors = self.index.vectors([prefix + q for q in (text, *names.values())]) if mode != "lexical" else None
        return SearchRequest(
            scopes=tuple(scopes),
            at=at,
            k=2 * k,
            keep=k,
            fetch=max(3 * k, 30),
            kinds=tuple(kinds),
            vector=vectors[0] if vectors else None,
            terms=tuple(search_terms(text)) if mode != "semantic" else None,
            words=tuple(words(text)) if mode == "hybrid" else None,
            names=tuple(sorted({n for key in names for n in key})),
            unnamed=tuple(
                Unnamed(names=key, vector=vector, terms=tuple(search_terms(rest)))
                for (key, rest), vector in zip(names.items(), (vectors or [])[1:])
            ),
            window=span,
            began_first=happened,
            during=None if fixed else span,
            rrf_k=self.rrf_k,
            weights=weights,
            seeds=self.seeds,
            fanout=self.fanout,
            hops=hops,
            frontier=self.frontier,
            hop_decay=self.hop_decay,
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
        rerank: bool | None = None,
    ) -> Recalled:
        """Best k visible units for ``query`` across ``scopes`` (the caller's, plus the shared
        one when asked), best first; ``fixed``: ``at.valid`` was given, not taken as now (a time
        the question names then ranks, but does not decide visibility); ``rerank``: with the
        second stage (``graphmem.pipelines.rerank``) or not (None: as ``self.rerank.on`` says)."""
        at = at or AsOf.now()
        rerank = self.rerank.on if rerank is None else rerank
        if rerank and self.reranker is None:
            raise InvalidInput("rerank: this GraphMem has no reranker (graphmem.ports.Reranker)")
        forms = readings(query, scopes)
        windows = [find_window(form, at.valid) for form in forms]
        # A relation question looks for its bridge among more hits than it returns.
        relation = next(((form, r) for form in forms if (r := relation_of(form))), None) if hops else None
        wanted = max(k, RELATION_POOL) if relation else k
        asked = max(wanted, self.rerank.depth) if rerank else wanted
        scored = self._read(forms, windows, scopes, asked, at, kinds, mode, fixed, hops)
        if rerank:
            assert self.reranker is not None
            scored = reranked(query, scored, self.reranker, self.rerank.depth, self.rerank.weight)[:wanted]
        recalled = Recalled(
            RecallHit(unit=s.unit, score=s.score, hop=s.hop, path=list(s.path), similarity=s.similarity) for s in scored
        )
        kept: dict[str, float] = {}
        if relation:
            recalled, kept = self._relation(*relation, recalled, scopes, k, at, kinds, mode, fixed, rerank)
            recalled = Recalled(recalled[:k])
        stems = [confidence.asked(form, window) for form, window in zip(forms, windows)]
        recalled = rated(recalled, stems[0], self.confidence, kept, also=stems[1:])
        recalled.window = windows[0]
        return recalled

    def _read(
        self,
        forms: Sequence[str],
        windows: Sequence[TimeWindow | None],
        scopes: Sequence[Scope],
        asked: int,
        at: AsOf,
        kinds: Sequence[MemoryKind],
        mode: str,
        fixed: bool,
        hops: int,
    ) -> list[Scored]:
        """The index's hits for each reading of the question (``readings``), each with the time
        it names; a unit found by more than one keeps its best score. The named reading counts
        only for units search reads with the name (said in the first person): for the others the
        question as said is the one in their terms ("What did I do?", "Went to the cinema.")."""
        found = [
            self._recall(self.request(form, scopes, asked, at, kinds, mode, window, fixed, hops), kinds)
            for form, window in zip(forms, windows)
        ]
        if len(found) == 1:
            return found[0]
        best: dict[str, Scored] = {}
        for s in (s for n, hits in enumerate(found) for s in hits if not n or s.unit.searched != s.unit.content):
            if s.unit.id not in best or s.score > best[s.unit.id].score:
                best[s.unit.id] = s
        return sorted(best.values(), key=lambda s: (-s.score, s.unit.id))[:asked]

    def _recall(self, request: SearchRequest, kinds: Sequence[MemoryKind]) -> list[Scored]:
        """The index's hits for ``request``; none inside the named time: the texts, as at the
        asked point."""
        scored = self.index.recall(request)
        if not scored and request.during is not None and (not kinds or MemoryKind.episodic in kinds):
            # Nothing is true inside the named time. A text is true from when it was told, so
            # one told later about that time ("we moved here four years ago", a document about
            # 1930) is never inside it: then texts are searched as at the asked point, and the
            # time only ranks them. Facts stay as they were (none was true then).
            request = request.model_copy(update={"during": None, "kinds": (MemoryKind.episodic,)})
            scored = self.index.recall(request)
        return scored

    def _relation(
        self,
        query: str,
        asked: Relation,
        recalled: Recalled,
        scopes: Sequence[Scope],
        k: int,
        at: AsOf,
        kinds: Sequence[MemoryKind],
        mode: str,
        fixed: bool,
        rerank: bool,
    ) -> tuple[Recalled, dict[str, float]]:
        """A question about "X's R" decomposed by rule: the first hit that says who X's R is, B,
        is the bridge (``graphmem.domain.relations``); the question asked again of B finds
        what follows it, its hits that name B. With the bridge they rank first (``chained``),
        above same-shaped facts about others and hits about X that do not answer R. What
        follows keeps its confidence as an answer to the question asked of B (by unit id)."""
        x, start, words = asked
        for bridge in recalled:
            found = bridged(bridge.unit.content, x, words, {normalise(sc.subject_id) for sc in scopes})
            if found is None:
                continue
            other, relation = found
            # "Where does Anna's team lead live?" -> "Where does Boris live?"
            end = start + len(f"{x}'s ") + len(" ".join(words[:relation]))
            again = query[:start] + other + query[end:]
            followed = self.recall(again, scopes, k, at, 0, kinds, mode, fixed, rerank)
            through = [
                h.model_copy(update={"hop": 1, "path": [bridge.unit.content, other, h.unit.content]})
                for h in followed
                if h.unit.id != bridge.unit.id and re.search(rf"\b{re.escape(other)}\b", h.unit.content)
            ]
            seen = {bridge.unit.id} | {h.unit.id for h in through}
            rest = [h for h in recalled if h.unit.id not in seen]
            beyond = bool(set(search_terms(again)) - set(search_terms(other)))  # not "who is Boris?"
            chain = chained(bridge, through, rest, self.weights.get("paths", 1.0), self.rrf_k, beyond)
            return Recalled(chain), {h.unit.id: h.confidence for h in through}
        return recalled, {}
