"""MuSiQue supporting-passage recall of GraphMem.recall in lexical, semantic, hybrid and hybrid+hops=2 modes.

    python benchmarks/musique_recall.py [DATA_DIR] --uri bolt://127.0.0.1:7695 --embedder minilm|hashing
        [--extractor none|rule] [--questions N]

WIPES THE TARGET DATABASE (the embedder name is recorded in it, so each embedder needs a fresh
one). Point it at a dedicated benchmark server, never the test one.

DATA_DIR holds qa.json (100 raw MuSiQue records) and corpus.json (the 1,890 {title, text}
passages, the union of all questions' paragraphs); see ../shared/bench-data/README.md.

The whole corpus is ingested into one scope (user:musique) as `document` episodes
(id "musique:<i>", raw "<title>. <text>") with extractor "none" (one episodic unit per
passage). For every question: recall top 10; a hit counts for a supporting paragraph when its
episode maps back to the same (title, text) as a paragraph with is_supporting true. Printed:
recall@2/5/10 = |supporting ∩ top k| / |supporting| and all-supports@10, by hop count
(len(question_decomposition)) and overall, beside the BM25 reference of the README.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, median, pct, wipe  # noqa: E402
from locomo_recall import TimedEmbedder  # noqa: E402

from graphmem import GraphMem
from graphmem.config import Settings
from graphmem.models import Episode, Scope

SUBJECT = "user:musique"
MODES = (("lexical", "lexical", 0), ("semantic", "semantic", 0), ("hybrid", "hybrid", 0), ("hybrid+hops2", "hybrid", 2))
KS = (2, 5, 10)
#: BM25 over "<title>. <text>", from bench-data/README.md: overall R@2/5/10, and R@10 by hops.
BM25_ALL = (0.410, 0.508, 0.585)
BM25_HOPS_R10 = {2: 0.640, 3: 0.481, 4: 0.400}
#: Ingest chunk: progress is visible and one failed commit does not cost the whole corpus.
CHUNK = 250


def key(title: str, text: str) -> tuple[str, str]:
    return (title.strip(), text.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/musique", type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--extractor", choices=("none", "rule"), default="none")
    ap.add_argument("--questions", type=int, default=None, help="only the first N questions")
    args = ap.parse_args()

    qas = json.loads((args.data / "qa.json").read_text())[: args.questions]
    corpus = json.loads((args.data / "corpus.json").read_text())
    scope = Scope.parse(SUBJECT)
    at = datetime(2024, 1, 1, tzinfo=timezone.utc)
    by_episode: dict[str, tuple[str, str]] = {}
    episodes = []
    for i, p in enumerate(corpus):
        eid = f"musique:{i}"
        by_episode[eid] = key(p["title"], p["text"])
        episodes.append(Episode(id=eid, scope=scope, occurred_at=at, raw=f"{p['title']}. {p['text']}", channel="document"))
    passages = set(by_episode.values())

    wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    timer = TimedEmbedder(mem.index.embedder)
    mem.index.embedder = timer
    if hasattr(timer.inner, "load"):
        timer.inner.load()  # model load is not ingest time

    t0 = time.perf_counter()
    decisions: dict[str, int] = defaultdict(int)
    failed = 0
    for start in range(0, len(episodes), CHUNK):
        report = mem.ingest(episodes[start : start + CHUNK], extractor=args.extractor)
        for op, n in report.decisions.items():
            decisions[op] += n
        failed += len(report.failed)
        print(f"  ingested {min(start + CHUNK, len(episodes))}/{len(episodes)} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    ingest_s = time.perf_counter() - t0
    status = mem.index.status()
    print(f"ingested {len(episodes)} passages ({len(passages)} distinct title+text) in {ingest_s:.1f} s "
          f"({len(episodes) / ingest_s:.1f} passages/s); extractor {args.extractor}; decisions {dict(decisions)}; "
          f"failed {failed}; index status units={status.get('units')}")
    print(f"embedding during ingest: {timer.texts} texts in {timer.seconds:.1f} s "
          f"({timer.texts / max(timer.seconds, 1e-9):.1f} texts/s, {args.embedder})", flush=True)

    # sums[mode][hops] = [n, r2, r5, r10, all10]
    sums = {m: defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0]) for m, _, _ in MODES}
    latency: dict[str, list[float]] = defaultdict(list)
    missing_gold = unmapped = 0
    q_embed_before = timer.seconds
    t_q = time.perf_counter()
    for qa in qas:
        hops = len(qa["question_decomposition"])
        gold = {key(p["title"], p["paragraph_text"]) for p in qa["paragraphs"] if p["is_supporting"]}
        missing_gold += len(gold - passages)
        for label, mode, walk in MODES:
            t = time.perf_counter()
            hits = mem.recall(qa["question"], SUBJECT, k=10, mode=mode, hops=walk)
            latency[label].append(1000 * (time.perf_counter() - t))
            got = []
            for h in hits:
                p = by_episode.get(h.unit.source.episode_id)
                if p is None:
                    unmapped += 1
                got.append(p)
            s = sums[label][hops]
            s[0] += 1
            for i, k in enumerate(KS, 1):
                s[i] += len(gold & set(got[:k])) / len(gold)
            s[4] += float(gold <= set(got[:10]))
    q_s = time.perf_counter() - t_q
    print(f"{len(qas)} questions; supporting paragraphs not found in the corpus: {missing_gold}; "
          f"hits not mapping to a passage: {unmapped}; query phase {q_s:.1f} s "
          f"(of which query embedding {timer.seconds - q_embed_before:.1f} s)")
    print("recall latency ms p50/p95: " + ", ".join(
        f"{m} {median(latency[m]):.0f}/{pct(latency[m], 95):.0f}" for m, _, _ in MODES))
    print()
    print(f"embedder={args.embedder}  extractor={args.extractor}  passages={len(episodes)}  k=10")
    print(f"{'hops':<6}{'n':>5}  {'mode':<13}{'R@2':>7}{'R@5':>7}{'R@10':>7}{'all@10':>8}   "
          f"{'BM25 R@2':>9}{'R@5':>7}{'R@10':>7}")
    for group in (2, 3, 4, "all"):
        for label, _, _ in MODES:
            if group == "all":
                rows = list(sums[label].values())
                s = [sum(r[i] for r in rows) for i in range(5)]
                ref = f"{BM25_ALL[0]:>9.3f}{BM25_ALL[1]:>7.3f}{BM25_ALL[2]:>7.3f}"
            else:
                s = sums[label].get(group)
                if not s or not s[0]:
                    continue
                ref = f"{'':>9}{'':>7}{BM25_HOPS_R10[group]:>7.3f}"
            n = s[0]
            print(f"{str(group):<6}{n:>5}  {label:<13}{s[1] / n:>7.3f}{s[2] / n:>7.3f}{s[3] / n:>7.3f}{s[4] / n:>8.3f}   {ref}")
    mem.close()


if __name__ == "__main__":
    main()
