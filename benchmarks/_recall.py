"""Shared parts of the recall-quality benchmarks (locomo_recall.py, musique_recall.py,
tune_recall.py): questions split into two fixed halves, every mode asked over one ingest,
figures per half with bootstrap confidence intervals, and a replay index that lets a grid of
fusion settings run over the same stored data without asking the database again per setting.

Not part of the library.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from graphmem.domain.fusion import rrf, similar, together, walk
from graphmem.domain.models import AsOf, Hit, Scored, SearchRequest, Step, utcnow
from graphmem.pipelines.recall import Recaller
from graphmem.settings.config import default_home

#: label -> (recall mode, hops)
MODES = {"lexical": ("lexical", 0), "semantic": ("semantic", 0), "hybrid": ("hybrid", 0), "hybrid+hops2": ("hybrid", 2)}
HALVES = ("A", "B")
BOTH = "A+B"
K = 10
RESAMPLES = 2_000
SEED = 20_240_601
#: How deep the miss report reads the default recall's ranking: a gold document within it is
#: an order problem (a second stage over these candidates could lift it), beyond it a
#: candidate problem.
DEEP = 50
#: What systems that build their graph with an LLM at write time report, as their authors
#: published them (other corpora, question sets or settings): printed beside ours as
#: references, never as the same measurement.
PUBLISHED = {
    "locomo": {"Engram R@10 (LoCoMo, its own setting)": 0.95},
    "musique": {"HippoRAG 2 recall@5 (MuSiQue, its own corpus)": 0.747},
}


@dataclass(frozen=True)
class Question:
    """One benchmark question: ``gold`` holds the document keys that answer it, ``group`` its
    category or hop count, ``half`` the fixed half it belongs to; ``asked_at``, the world time
    it is asked at, as a user would ask it then (None: now). The system time is always now:
    the data was stored now."""

    id: str
    text: str
    subject: str
    gold: frozenset[str]
    group: str
    half: str
    asked_at: datetime | None = None


def recall_at(gold: frozenset[str], got: Sequence[str], k: int) -> float:
    return len(gold & set(got[:k])) / len(gold)


def covered_at(gold: frozenset[str], got: Sequence[str], k: int) -> float:
    return float(gold <= set(got[:k]))


def metrics(ks: Sequence[int], all_k: int = K) -> dict[str, Callable[[frozenset[str], Sequence[str]], float]]:
    """The figures reported: R@k for each k, and all@all_k (every gold document in the top all_k)."""
    out = {f"R@{k}": (lambda gold, got, k=k: recall_at(gold, got, k)) for k in ks}
    out[f"all@{all_k}"] = lambda gold, got: covered_at(gold, got, all_k)
    return out


def bootstrap(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its 95% percentile bootstrap interval, questions resampled
    with replacement (numpy, fixed seed, so a run is reproducible)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3
    means = x[np.random.default_rng(seed).integers(0, x.size, (resamples, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(x.mean()), float(lo), float(hi)


class DiskVectors:
    """Wraps an embedder with an on-disk cache of its vectors by text (under the graphmem home's
    bench folder), so a second ingest of the same texts, or the same questions asked again,
    costs no model time. Counts what it computed and what came from the cache."""

    def __init__(self, inner, folder: Path | None = None):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.query_prefix = getattr(inner, "query_prefix", "")  # recall reads it (graphmem.ports.query_prefix)
        self.folder = folder or default_home() / "bench" / "recall-vectors" / inner.name
        self._keys: list[str] = []
        self._rows = np.zeros((0, inner.dimension), np.float32)
        if (self.folder / "keys.json").exists():
            self._keys = json.loads((self.folder / "keys.json").read_text())
            self._rows = np.load(self.folder / "vectors.npy")
        self._row = {key: i for i, key in enumerate(self._keys)}
        self._new: dict[str, list[float]] = {}
        self.computed = self.cached = 0
        self.seconds = 0.0

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def _get(self, key: str) -> list[float] | None:
        if key in self._new:
            return self._new[key]
        i = self._row.get(key)
        return None if i is None else self._rows[i].tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, key in zip(texts, keys) if self._get(key) is None))
        if missing:
            started = time.perf_counter()
            for text, vector in zip(missing, self.inner.embed(missing)):
                self._new[self._key(text)] = list(vector)
            self.seconds += time.perf_counter() - started
        self.computed += len(missing)
        self.cached += len(texts) - len(missing)
        return [self._get(key) for key in keys]

    def load(self) -> None:
        if hasattr(self.inner, "load"):
            self.inner.load()

    def save(self) -> None:
        """Write the vectors computed since the cache was read."""
        if not self._new:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._keys += list(self._new)
        self._rows = np.concatenate([self._rows, np.asarray(list(self._new.values()), np.float32)])
        self._row = {key: i for i, key in enumerate(self._keys)}
        self._new = {}
        np.save(self.folder / "vectors.npy", self._rows)
        (self.folder / "keys.json").write_text(json.dumps(self._keys))

    def summary(self) -> str:
        rate = f", {self.computed / self.seconds:.1f} texts/s" if self.seconds else ""
        return (
            f"{self.computed} texts embedded in {self.seconds:.1f} s{rate}, {self.cached} from the cache ({self.name})"
        )


def paired(base: Sequence[float], new: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED):
    """(gain, low, high): the mean gain of ``new`` over ``base`` on the same questions, and its
    95% paired bootstrap interval (questions resampled with replacement, fixed seed)."""
    d = np.asarray(new, float) - np.asarray(base, float)
    if d.size == 0:
        return (float("nan"),) * 3
    means = d[np.random.default_rng(seed).integers(0, d.size, (resamples, d.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


def cache_vectors(mem) -> DiskVectors:
    """Put a ``DiskVectors`` in front of the connection's embedder (loaded: model load is not
    ingest time) and return it."""
    cached = DiskVectors(mem.index.embedder)
    cached.load()
    mem.index.embedder = cached
    return cached


class ListReplay:
    """A ``MemoryIndex`` stand-in for grids over fusion settings on one stored data set.

    The first time it sees a question it asks the real index for each ranked list alone (the
    same request with that list's weight 1 and the others' 0, read to the list's full depth,
    ``fetch``), keeps the lists, and fuses them itself with ``graphmem.domain.fusion.rrf``, which
    ranks as the fused statement does (ties share a rank; best first, then id), then walks with
    ``graphmem.domain.fusion.walk``, the reference of the statement's walk, and keeps the best with
    ``graphmem.domain.fusion.together``. Walk hops are asked of the
    real index once per distinct (question, frontier, seen, limit) and kept. So ``Recaller``
    runs over the replay for every setting, and the database sees each question once per list
    and each distinct hop once.
    """

    LISTS = ("semantic", "lexical", "entities", "time", "speaker")

    def __init__(self, index):
        self.index = index
        self.embedder = index.embedder  # the port's: what recall's confidence is fitted by
        self._lists: dict[str, dict[str, list[Scored]]] = {}
        self._hops: dict[tuple, list] = {}
        self.calls = 0

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        return self.index.vectors(texts)

    @staticmethod
    def _question(request: SearchRequest) -> str:
        """What a request asks, whatever the fusion settings."""
        return request.model_dump_json(exclude={"rrf_k", "weights", "k", "keep", "hops", "hop_decay"})

    def lists(self, request: SearchRequest) -> dict[str, list[Scored]]:
        """Each ranked list of the request on its own, best first (a list's hits carry their
        share 1 / (rrf_k + rank), so ties stay ties)."""
        key = self._question(request)
        if key not in self._lists:
            asked = {
                "semantic": request.vector is not None,
                "lexical": bool(request.terms),
                "entities": bool(request.words),
                "time": request.window is not None,
                "speaker": bool(request.words),
            }
            self._lists[key] = {name: self._alone(request, name) for name in self.LISTS if asked[name]}
        return self._lists[key]

    def _alone(self, request: SearchRequest, name: str) -> list[Scored]:
        self.calls += 1
        # The speaker list can hold every candidate of the others, each ``fetch`` deep.
        # Every hit carries its similarity with the question: a run alone re-scores none.
        only = request.model_copy(
            update={
                "weights": {**{n: float(n == name) for n in self.LISTS}, "similarity": 0.0},
                "k": len(self.LISTS) * request.fetch,
                "keep": None,
                "hops": 0,
            }
        )
        return [s for s in self.index.recall(only) if s.score > 0]

    def recall(self, request: SearchRequest) -> list[Scored]:
        lists = self.lists(request)
        units = {s.unit.id: s.unit for hits in lists.values() for s in hits}
        sims = {s.unit.id: s.similarity for hits in lists.values() for s in hits if s.similarity is not None}
        fused = rrf(
            {name: [Hit(id=s.unit.id, score=s.score) for s in hits] for name, hits in lists.items()},
            request.rrf_k,
            request.weights,
        )
        best = similar(fused, lambda ids: {i: sims[i] for i in ids if i in sims}, request)
        found = walk(request, [Scored(unit=units[i], score=score, similarity=sim) for i, score, sim in best], self.hop)
        return together(found, request.weights.get("conversation", 0.0), request.kept)

    def hop(self, request: SearchRequest, step: Step) -> list:
        # The hop statement ranks its rows whatever order the frontier comes in.
        key = (self._question(request), frozenset(step.frontier), step.seen, step.limit)
        if key not in self._hops:
            self.calls += 1
            self._hops[key] = self.index.hop(request, step)
        return self._hops[key]


def ask(
    mem,
    questions: Sequence[Question],
    labels: Iterable[str],
    recaller: Recaller | None = None,
    doc_of: Callable[[str], str] = lambda episode_id: episode_id,
    k: int = K,
    now: datetime | None = None,
    progress: str | None = None,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, float]]:
    """Every question in every mode: ({label: {question id: document keys of the top k}},
    {label: mean seconds}), asked of ``recaller`` (default: the connection's own, built from
    its Settings) as ``GraphMem.recall`` asks it, at the question's world time (else ``now``)
    with no as-of point given, so a time the question names decides what is visible, as for a
    user. ``now`` (default: the current time) is also the system time."""
    recaller = recaller or mem.recaller
    now = now or utcnow()
    got: dict[str, dict[str, list[str]]] = defaultdict(dict)
    seconds: dict[str, float] = defaultdict(float)
    labels = list(labels)
    for n, q in enumerate(questions, 1):
        at = AsOf(valid=q.asked_at or now, known=now)
        for label in labels:
            mode, hops = MODES[label]
            started = time.perf_counter()
            hits = recaller.recall(q.text, mem.scopes(q.subject, None, False), k, at=at, hops=hops, mode=mode)
            seconds[label] += time.perf_counter() - started
            got[label][q.id] = [doc_of(h.unit.source.episode_id) for h in hits]
        if progress and n % 100 == 0:
            print(f"  {progress}: {n}/{len(questions)} questions", file=sys.stderr, flush=True)
    return dict(got), {label: seconds[label] / max(len(questions), 1) for label in labels}


def figures(
    questions: Sequence[Question],
    got: dict[str, dict[str, list[str]]],
    measures: dict[str, Callable],
    groups: Sequence[str],
) -> dict:
    """{half: {group or "all": {label: {"n": n, measure: [mean, low, high]}}}} for the labels
    in ``got``, and the same for both halves together (half "A+B": what a reference computed
    over the whole set compares with)."""
    out: dict = {}
    for half in (*HALVES, BOTH):
        mine = [q for q in questions if half in (BOTH, q.half)]
        out[half] = {}
        for group in (*groups, "all"):
            qs = [q for q in mine if group in ("all", q.group)]
            if not qs:
                continue
            out[half][group] = {
                label: {
                    "n": len(qs),
                    **{name: list(bootstrap([m(q.gold, answers[q.id]) for q in qs])) for name, m in measures.items()},
                }
                for label, answers in got.items()
            }
    return out


def score(questions: Sequence[Question], answers: dict[str, list[str]], measure: Callable) -> float:
    """The mean of one measure over the questions (no interval: what a grid compares)."""
    return float(np.mean([measure(q.gold, answers[q.id]) for q in questions]))


def print_table(
    result: dict,
    measures: Sequence[str],
    group_title: str,
    reference: Callable[[str], str] = lambda group: "",
    reference_title: str = "",
) -> None:
    """One block per half: a row per group and mode, each measure as mean [low, high]."""
    for half, by_group in result.items():
        print(f"\nhalf {half}")
        print(f"{group_title:<12}{'n':>5}  {'mode':<13}" + "".join(f"{m:^22}" for m in measures) + reference_title)
        for group, by_label in by_group.items():
            for label, row in by_label.items():
                cells = "".join(f"  {row[m][0]:.3f} [{row[m][1]:.3f},{row[m][2]:.3f}]" for m in measures)
                print(f"{group:<12}{row['n']:>5}  {label:<13}{cells}  {reference(group)}")


def settings_of(recaller: Recaller) -> dict:
    return {"rrf_k": recaller.rrf_k, "weights": dict(recaller.weights)}


def misses(
    questions: Sequence[Question],
    deep: dict[str, list[str]],
    text_of: Callable[[str], str],
    k: int = K,
    examples: int = 3,
) -> dict:
    """Where a ranking (question id -> the DEEP best document keys) misses, by group: the
    questions whose top k lacks a gold document, how many of them have it within DEEP, and the
    first ``examples`` misses (the question, each missed gold text with its rank, or None beyond
    DEEP, and the first hit's text)."""
    out: dict = {}
    for group in sorted({q.group for q in questions}):
        qs = [q for q in questions if q.group == group]
        missed = [q for q in qs if not q.gold <= set(deep[q.id][:k])]
        shown = [
            {
                "question": q.text,
                "missed": [
                    {"rank": deep[q.id].index(g) + 1 if g in deep[q.id] else None, "text": text_of(g)}
                    for g in sorted(q.gold - set(deep[q.id][:k]))
                ],
                "first": text_of(deep[q.id][0]) if deep[q.id] else None,
            }
            for q in missed[:examples]
        ]
        within = sum(q.gold <= set(deep[q.id]) for q in missed)
        out[group] = {"n": len(qs), "missed": len(missed), "within_deep": within, "examples": shown}
    return out


def print_misses(report: dict, k: int = K) -> None:
    print(f"\nmisses of the default (hybrid) at {k}, and whether the gold is within its {DEEP} best")
    for group, row in report.items():
        print(f"{group}: {row['missed']} of {row['n']} missed, {row['within_deep']} of them within {DEEP}")
        for ex in row["examples"]:
            print(f"  Q: {ex['question']}\n     first hit: {ex['first']}")
            for m in ex["missed"]:
                print(f"     missed (rank {m['rank'] or '>' + str(DEEP)}): {m['text']}")


def print_published(benchmark: str) -> None:
    for name, value in PUBLISHED[benchmark].items():
        print(f"published, not the same measurement: {name} {value:.3f}")
