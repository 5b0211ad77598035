"""MuSiQue supporting-passage recall of GraphMem.recall in lexical, semantic, hybrid and hybrid+hops=2 modes.

    python benchmarks/musique_recall.py [DATA_DIR] --uri bolt://127.0.0.1:7751 --embedder minilm|hashing
        [--extractor none|rule] [--questions N] [--keep] [--json]

WIPES THE TARGET DATABASE (the embedder name is recorded in it, so each embedder needs a fresh
one) unless --keep. Point it at a dedicated benchmark server, never the test one.

DATA_DIR holds qa.json (100 raw MuSiQue records) and corpus.json (the 1,890 {title, text}
passages, the union of all questions' paragraphs); see ../shared/bench-data/README.md.

The whole corpus is ingested into one scope (user:musique) as `document` episodes
(id "musique:<i>", raw "<title>. <text>") with extractor "none" (one episodic unit per
passage). For every question: recall top 10; a hit counts for a supporting paragraph when its
episode maps back to the same (title, text) as a paragraph with is_supporting true. Printed:
recall@2/5/10 = |supporting ∩ top k| / |supporting|, all-supports@5 and @10, by hop count
(len(question_decomposition)) and overall, beside the BM25 reference of the README.

Halves: questions 1-50 are half A, 51-100 half B (with --questions N, the first ceil(N/2) are
A). Each half's figures come with 95% bootstrap intervals over its questions (2,000
resamples, fixed seed). --keep asks the questions of what the database already holds (ingest
skips stored episodes). --json: the last stdout line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, wipe
from _recall import (
    DEEP,
    MODES,
    PUBLISHED,
    Question,
    ask,
    cache_vectors,
    covered_at,
    figures,
    metrics,
    misses,
    print_misses,
    print_published,
    print_table,
    settings_of,
)

from graphmem import GraphMem
from graphmem.domain.models import Episode, Scope
from graphmem.settings.config import Settings

SUBJECT = "user:musique"
MEASURES = {**metrics((2, 5, 10)), "all@5": lambda gold, got: covered_at(gold, got, 5)}
#: BM25 over "<title>. <text>", from bench-data/README.md: overall R@2/5/10, and R@10 by hops.
BM25_ALL = (0.410, 0.508, 0.585)
BM25_HOPS_R10 = {"2": 0.640, "3": 0.481, "4": 0.400}
REFERENCE_TITLE = f"{'BM25 R@2':>10}{'R@5':>7}{'R@10':>7}"
#: Ingest chunk: progress is visible and one failed commit does not cost the whole corpus.
CHUNK = 250


class Corpus:
    """The passages as episodes, and which distinct passage (title and text) each episode is:
    the corpus repeats a few passages, and a question's gold is the passage, not the copy."""

    def __init__(self, data: Path):
        scope = Scope.parse(SUBJECT)
        at = datetime(2024, 1, 1, tzinfo=UTC)
        self.key: dict[str, str] = {}
        self.episodes = []
        for i, p in enumerate(json.loads((data / "corpus.json").read_text())):
            eid = f"musique:{i}"
            self.key[eid] = passage(p["title"], p["text"])
            self.episodes.append(
                Episode(id=eid, scope=scope, occurred_at=at, raw=f"{p['title']}. {p['text']}", channel="document")
            )

    def doc_of(self, episode_id: str) -> str:
        return self.key.get(episode_id, f"unmapped:{episode_id}")

    def ingest(self, mem: GraphMem, extractor: str = "none") -> float:
        started = time.perf_counter()
        for start in range(0, len(self.episodes), CHUNK):
            report = mem.ingest(self.episodes[start : start + CHUNK], extractor=extractor)
            if report.failed:
                raise SystemExit(f"{len(report.failed)} passages failed to ingest: {report.failed[0]}")
            print(
                f"  ingested {min(start + CHUNK, len(self.episodes))}/{len(self.episodes)} "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        return time.perf_counter() - started


def passage(title: str, text: str) -> str:
    return f"{title.strip()}\x1f{text.strip()}"


def questions_of(data: Path, limit: int | None = None) -> list[Question]:
    """The questions, half A for the first ceil(N/2)."""
    qas = json.loads((data / "qa.json").read_text())[:limit]
    first = math.ceil(len(qas) / 2)
    return [
        Question(
            id=qa["id"],
            text=qa["question"],
            subject=SUBJECT,
            group=str(len(qa["question_decomposition"])),
            gold=frozenset(passage(p["title"], p["paragraph_text"]) for p in qa["paragraphs"] if p["is_supporting"]),
            half="A" if i < first else "B",
        )
        for i, qa in enumerate(qas)
    ]


def reference(group: str) -> str:
    if group == "all":
        return f"{BM25_ALL[0]:>9.3f}{BM25_ALL[1]:>7.3f}{BM25_ALL[2]:>7.3f}"
    return f"{'':>9}{'':>7}{BM25_HOPS_R10[group]:>7.3f}" if group in BM25_HOPS_R10 else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/bench-data/musique", type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--extractor", choices=("none", "rule"), default="none")
    ap.add_argument("--questions", type=int, default=None, help="only the first N questions")
    ap.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    ap.add_argument("--keep", action="store_true", help="do not wipe: ask over what the database holds")
    ap.add_argument("--misses", type=int, default=3, metavar="N", help="N missed questions shown per hop count")
    ap.add_argument("--json", action="store_true", help="last stdout line: the figures as one JSON object")
    args = ap.parse_args()

    corpus = Corpus(args.data)
    questions = questions_of(args.data, args.questions)
    missing = sum(len(q.gold - set(corpus.key.values())) for q in questions)
    if not args.keep:
        wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    vectors = cache_vectors(mem)
    ingest_s = corpus.ingest(mem, args.extractor)
    print(
        f"ingested {len(corpus.episodes)} passages ({len(set(corpus.key.values()))} distinct title+text) "
        f"in {ingest_s:.1f} s; extractor {args.extractor}; embedding: {vectors.summary()}",
        flush=True,
    )

    started = time.perf_counter()
    got, seconds = ask(mem, questions, args.modes, doc_of=corpus.doc_of, progress="musique")
    deep, _ = ask(mem, questions, ["hybrid"], doc_of=corpus.doc_of, k=DEEP)
    missed = misses(questions, deep["hybrid"], lambda key: key.replace("\x1f", ". "), k=5, examples=args.misses)
    vectors.save()
    result = figures(questions, got, MEASURES, sorted({q.group for q in questions}))
    print(
        f"{len(questions)} questions (half A {sum(q.half == 'A' for q in questions)}, half B "
        f"{sum(q.half == 'B' for q in questions)}); supporting paragraphs not found in the corpus: {missing}; "
        f"query phase {time.perf_counter() - started:.1f} s"
    )
    print("mean recall latency ms: " + ", ".join(f"{m} {1000 * s:.0f}" for m, s in seconds.items()))
    settings = settings_of(mem.recaller)
    print(
        f"\nembedder={args.embedder}  extractor={args.extractor}  passages={len(corpus.episodes)}  settings={settings}"
    )
    print_table(result, list(MEASURES), "hops", reference, REFERENCE_TITLE)
    print_misses(missed, k=5)
    print_published("musique")
    mem.close()
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "musique",
                    "embedder": args.embedder,
                    "extractor": args.extractor,
                    "settings": settings,
                    "figures": result,
                    "bm25": {
                        "all": dict(zip(("R@2", "R@5", "R@10"), BM25_ALL)),
                        **{g: {"R@10": v} for g, v in BM25_HOPS_R10.items()},
                    },
                    "misses": missed,
                    "published": PUBLISHED["musique"],
                }
            )
        )


if __name__ == "__main__":
    main()
