"""Recall's second stage (issue 44): the cross-encoder reranker against today's default recall, on
LoCoMo and MuSiQue, each half's settings chosen on the other half.

    NEO4J_URI=bolt://127.0.0.1:7870 flock /tmp/graphmem-bench.lock python benchmarks/rerank_recall.py \\
        [--locomo FILE] [--musique DIR] [--keep] [--latency-every 15] [--json]
        [--conversations N] [--musique-questions N] [--depths 10 20 30 50] [--weights 0.5 1 2 4 1000]

WIPES THE TARGET DATABASE unless --keep. It ingests LoCoMo (stored form, as locomo_recall.py) and
the MuSiQue corpus (as musique_recall.py) with MiniLM, the default embedder, and asks every
question through graphmem's own ``Recaller`` (hybrid, no hops, k 10):

1. the default recall, and the fused candidates of a recall of ``depth`` for each depth of the
   grid (``--depths``); the reranker scores each candidate once (cached on disk by question and
   text: a pair's score does not depend on the others), and each (depth, weight) of the grid is
   the candidates reordered by ``graphmem.pipelines.rerank.blended``, as recall reorders them;
2. the setting is chosen on one half (LoCoMo conversations 1-5 with MuSiQue questions 1-50 = A,
   the rest = B) by the mean of LoCoMo R@10 and MuSiQue's mean of R@5 and all-supports@10, and
   reported on the other, both directions: that setting asked again for real (recall with the
   reranker on, every question), beside the default and BM25 on the same questions, with 95%
   bootstrap intervals and the paired bootstrap of the gain over the default;
3. latency: every ``--latency-every``-th question of each set asked with a fresh reranker (no
   cache) and without, one after the other; p50/p95 of each and of what the reranker adds.

BM25 is recomputed per half with the reference's settings (bench-data/README.md: k1 1.2, b 0.75,
its tokens and stopwords; LoCoMo turns in the dated form, one index per conversation; MuSiQue
passages as "<title>. <text>", one index). --json: the last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_recall
import musique_recall
from _common import default_uri, pct, wipe
from _recall import Question, bootstrap, cache_vectors, covered_at, paired, recall_at

from graphmem import GraphMem
from graphmem.adapters.memory import bm25
from graphmem.domain.models import AsOf, utcnow
from graphmem.pipelines.recall import Recaller
from graphmem.pipelines.rerank import Rerank, blended
from graphmem.rerank import CrossEncoderReranker
from graphmem.settings.config import Settings, default_home

K = 10
LOCOMO_GROUPS = ("single-hop", "temporal", "multi-hop", "open-domain", "all")
MUSIQUE_GROUPS = ("2", "all")  # two-hop: the target; all: 2-, 3- and 4-hop


class DiskScores:
    """A reranker's scores cached on disk by (question, text): the same pair scored again (a
    second depth, a second run) costs nothing. Stands for the reranker (``graphmem.ports.Reranker``)."""

    def __init__(self, inner: CrossEncoderReranker):
        self.inner, self.name = inner, inner.name
        self.file = default_home() / "bench" / "rerank-scores" / f"{inner.name}.json"
        self._scores: dict[str, float] = json.loads(self.file.read_text()) if self.file.exists() else {}
        self.computed = self.cached = 0
        self.seconds = 0.0

    @staticmethod
    def _key(query: str, text: str) -> str:
        return hashlib.sha256(f"{query}\x1f{text}".encode()).hexdigest()

    def score(self, query, texts):
        keys = [self._key(query, t) for t in texts]
        missing = [i for i, key in enumerate(keys) if key not in self._scores]
        if missing:
            started = time.perf_counter()
            for i, s in zip(missing, self.inner.score(query, [texts[i] for i in missing])):
                self._scores[keys[i]] = s
            self.seconds += time.perf_counter() - started
        self.computed += len(missing)
        self.cached += len(texts) - len(missing)
        return [self._scores[key] for key in keys]

    def save(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        self.file.write_text(json.dumps(self._scores))

    def summary(self) -> str:
        rate = f", {self.computed / self.seconds:.1f} pairs/s" if self.seconds else ""
        return f"{self.computed} pairs scored in {self.seconds:.0f} s{rate}, {self.cached} from the cache"


def musique_bm25(corpus: musique_recall.Corpus, questions: list[Question]) -> dict[str, list[str]]:
    """The reference's BM25 over the passages ("<title>. <text>", one index): the top k
    distinct passages of each question."""
    docs = [(e.id, locomo_recall.bm25_tokens(e.raw)) for e in corpus.episodes]
    out = {}
    for q in questions:
        scores = bm25(locomo_recall.bm25_tokens(q.text), docs)
        ranked = sorted(scores, key=lambda key: (-scores[key], int(key.split(":")[1])))
        out[q.id] = list(dict.fromkeys(corpus.doc_of(key) for key in ranked))[:K]
    return out


def candidates(mem, recaller, questions, doc_of, depth, now) -> dict[str, list[tuple[str, str]]]:
    """Each question's fused candidates in a recall of ``depth`` (no reranker): (document, text)."""
    out = {}
    for n, q in enumerate(questions, 1):
        at = AsOf(valid=q.asked_at or now, known=now)
        scopes = mem.scopes(q.subject, None, False)
        hits = recaller.recall(q.text, scopes, depth, at=at, hops=0, mode="hybrid", rerank=False)
        out[q.id] = [(doc_of(h.unit.source.episode_id), h.unit.content) for h in hits]
        if n % 200 == 0:
            print(f"  depth {depth}: {n}/{len(questions)} questions", file=sys.stderr, flush=True)
    return out


def asked(mem, recaller, questions, doc_of, now, rerank: bool | None = None) -> tuple[dict, list[float]]:
    """({question id: the documents of the top k}, milliseconds per question)."""
    out, ms = {}, []
    for q in questions:
        at = AsOf(valid=q.asked_at or now, known=now)
        started = time.perf_counter()
        hits = recaller.recall(
            q.text, mem.scopes(q.subject, None, False), K, at=at, hops=0, mode="hybrid", rerank=rerank
        )
        ms.append(1000 * (time.perf_counter() - started))
        out[q.id] = [doc_of(h.unit.source.episode_id) for h in hits]
    return out, ms


def objective(answers, lq, mq) -> float:
    """What a setting is chosen by on one half (the lab's, benchmarks/_lab_experiments.py)."""
    loc = np.mean([recall_at(q.gold, answers[q.id], 10) for q in lq])
    mus = np.mean([(recall_at(q.gold, answers[q.id], 5) + covered_at(q.gold, answers[q.id], 10)) / 2 for q in mq])
    return float((loc + mus) / 2)


def report(runs: dict[str, dict], lq, mq, half: str) -> dict:
    """Each figure of ``half`` per run, with intervals, and the paired gain over "default"."""
    measures = {
        "locomo": {"R@10": lambda g, a: recall_at(g, a, 10)},
        "musique": {"R@5": lambda g, a: recall_at(g, a, 5), "all@10": lambda g, a: covered_at(g, a, 10)},
    }
    out: dict = {}
    for set_name, qs, groups in (("locomo", lq, LOCOMO_GROUPS), ("musique", mq, MUSIQUE_GROUPS)):
        mine = [q for q in qs if q.half == half]
        for group in groups:
            gq = [q for q in mine if group in ("all", q.group)]
            name = "two-hop" if group == "2" else group
            for mname, m in measures[set_name].items():
                row: dict = {"n": len(gq)}
                base = [m(q.gold, runs["default"][q.id]) for q in gq]
                for run, answers in runs.items():
                    vals = [m(q.gold, answers[q.id]) for q in gq]
                    row[run] = {"mean": bootstrap(vals)}
                    if run not in ("default", "bm25"):
                        row[run]["gain"] = paired(base, vals)
                out[f"{set_name} {name} {mname}"] = row
    for key, row in out.items():
        cells = []
        for run, cell in row.items():
            if run == "n":
                continue
            m, lo, hi = cell["mean"]
            text = f"{run} {m:.3f} [{lo:.3f},{hi:.3f}]"
            if "gain" in cell:
                g, glo, ghi = cell["gain"]
                text += f" gain {g:+.3f} [{glo:+.3f},{ghi:+.3f}]{' *' if glo > 0 else ''}"
            cells.append(text)
        print(f"  {key:<30} n={row['n']:<4} " + " | ".join(cells))
    return out


def latency(mem, chosen: Rerank, lq, mq, doc_of, now, every: int) -> dict:
    """Default recall and recall with a fresh reranker (no cache: what a user pays), the same
    sampled questions one after the other; ms p50/p95 of each and of the difference."""
    fresh = CrossEncoderReranker(cache_dir=mem.settings.home / "models" / CrossEncoderReranker.name)
    fresh.load()
    recaller = Recaller(
        mem.index, rrf_k=mem.recaller.rrf_k, weights=mem.recaller.weights, reranker=fresh, rerank=chosen
    )
    out = {}
    for set_name, qs, doc, step in (
        ("locomo", lq, locomo_recall.doc_of, every),
        ("musique", mq, doc_of, max(1, every // 5)),
    ):
        sample = qs[::step]
        plain, ranked = [], []
        for q in sample:
            plain += asked(mem, recaller, [q], doc, now, rerank=False)[1]
            ranked += asked(mem, recaller, [q], doc, now, rerank=True)[1]
        added = [r - p for r, p in zip(ranked, plain)]
        out[set_name] = {
            "questions": len(sample),
            **{
                name: {"p50": pct(v, 50), "p95": pct(v, 95)}
                for name, v in (("default", plain), ("reranked", ranked), ("added", added))
            },
        }
        row = out[set_name]
        print(
            f"  {set_name}: {len(sample)} questions; default p50 {row['default']['p50']:.0f} p95 "
            f"{row['default']['p95']:.0f} ms; reranked p50 {row['reranked']['p50']:.0f} p95 "
            f"{row['reranked']['p95']:.0f} ms; added p50 {row['added']['p50']:.0f} p95 {row['added']['p95']:.0f} ms"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=Path("../shared/bench-data/locomo/locomo10.json"))
    ap.add_argument("--musique", type=Path, default=Path("../shared/bench-data/musique"))
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--keep", action="store_true", help="do not wipe or ingest: ask over what the database holds")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N LoCoMo conversations")
    ap.add_argument("--musique-questions", type=int, default=None, help="only the first N MuSiQue questions")
    ap.add_argument("--depths", nargs="+", type=int, default=[10, 20, 30, 50])
    ap.add_argument("--weights", nargs="+", type=float, default=[0.5, 1.0, 2.0, 4.0, 1000.0])
    ap.add_argument(
        "--latency-every", type=int, default=15, help="time every N-th LoCoMo question (MuSiQue: every N/5-th)"
    )
    ap.add_argument("--json", action="store_true", help="last stdout line: the figures as one JSON object")
    args = ap.parse_args()

    convs = json.loads(args.locomo.read_text())[: args.conversations]
    lq, _ = locomo_recall.questions_of(convs, "stored")
    corpus = musique_recall.Corpus(args.musique)
    mq = musique_recall.questions_of(args.musique, args.musique_questions)
    if not args.keep:
        wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder="minilm"))
    vectors = cache_vectors(mem)
    if not args.keep:
        turns, seconds = locomo_recall.ingest(mem, convs, "stored")
        seconds += corpus.ingest(mem)
        print(f"ingested {turns} turns and {len(corpus.episodes)} passages in {seconds:.0f} s; {vectors.summary()}")
    now = utcnow()
    scores = DiskScores(CrossEncoderReranker(cache_dir=mem.settings.home / "models" / CrossEncoderReranker.name))
    sets = (("locomo", lq, locomo_recall.doc_of), ("musique", mq, corpus.doc_of))

    base, base_ms = {}, {}
    for name, qs, doc in sets:
        got, ms = asked(mem, mem.recaller, qs, doc, now, rerank=False)
        base.update(got)
        base_ms[name] = ms
    bm = {**locomo_recall.bm25_answers(convs, lq), **musique_bm25(corpus, mq)}
    vectors.save()

    grid: dict[tuple[int, float], dict[str, list[str]]] = {}
    for depth in args.depths:
        cands = {}
        for _, qs, doc in sets:
            cands.update(candidates(mem, mem.recaller, qs, doc, depth, now))
        texts = {q.id: q.text for q in [*lq, *mq]}
        for n, (qid, cs) in enumerate(cands.items(), 1):
            scored = scores.score(texts[qid], [t for _, t in cs])
            for w in args.weights:
                grid.setdefault((depth, w), {})[qid] = [cs[i][0] for i, _ in blended(scored, w)][:K]
            if n % 200 == 0:
                scores.save()
                print(f"  depth {depth} scored {n}/{len(cands)}: {scores.summary()}", file=sys.stderr, flush=True)
        scores.save()
        print(f"depth {depth}: {scores.summary()}", flush=True)
    halves = {h: ([q for q in lq if q.half == h], [q for q in mq if q.half == h]) for h in ("A", "B")}
    print("\nobjective (mean of LoCoMo R@10 and MuSiQue (R@5 + all@10) / 2) per half:")
    print(f"  default: A {objective(base, *halves['A']):.4f}  B {objective(base, *halves['B']):.4f}")
    for (depth, w), answers in grid.items():
        a, b = objective(answers, *halves["A"]), objective(answers, *halves["B"])
        print(f"  depth {depth} weight {w:g}: A {a:.4f}  B {b:.4f}")

    result: dict = {"benchmark": "rerank", "reranker": scores.name, "k": K, "directions": {}}
    for chosen_on, shown in (("A", "B"), ("B", "A")):
        depth, w = max(grid, key=lambda s: objective(grid[s], *halves[chosen_on]))
        chosen = Rerank(True, depth, w)
        recaller = Recaller(
            mem.index, rrf_k=mem.recaller.rrf_k, weights=mem.recaller.weights, reranker=scores, rerank=chosen
        )
        real = {}
        for _, qs, doc in sets:
            real.update(asked(mem, recaller, [q for q in qs if q.half == shown], doc, now)[0])
        agree = np.mean([real[qid] == grid[(depth, w)][qid] for qid in real])
        print(
            f"\ndepth {depth}, weight {w:g} chosen on half {chosen_on}; reported on half {shown} "
            f"(recall with the reranker on; it agrees with the grid's lists on {agree:.1%} of questions):"
        )
        figures = report({"bm25": bm, "default": base, "reranked": real}, lq, mq, shown)
        print("latency (ms per question):")
        timing = latency(mem, chosen, lq, mq, corpus.doc_of, now, args.latency_every)
        result["directions"][f"chosen on {chosen_on}, reported on {shown}"] = {
            "depth": depth,
            "weight": w,
            "agreement": float(agree),
            "figures": figures,
            "latency_ms": timing,
        }
    result["default_latency_ms"] = {name: {"p50": pct(ms, 50), "p95": pct(ms, 95)} for name, ms in base_ms.items()}
    mem.close()
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
