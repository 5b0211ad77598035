"""Tune recall's fusion settings (Settings.rrf_k, Settings.list_weights) on half A of LoCoMo and
MuSiQue together; report half B with the chosen values beside a baseline (the current defaults,
or --baseline-rrf-k / --baseline-weights).

    python benchmarks/tune_recall.py [--locomo FILE] [--musique DIR] --uri bolt://127.0.0.1:7751
        [--embedder minilm|hashing] [--baseline-rrf-k K --baseline-weights JSON] [--keep] [--json]

WIPES THE TARGET DATABASE unless --keep. Point it at a dedicated benchmark server.

Data: LoCoMo in the stored form and the MuSiQue corpus, ingested once into one database, as
locomo_recall.py and musique_recall.py do (their halves too: LoCoMo conversations 1-5 / 6-10,
MuSiQue questions 1-50 / 51-100).

Objective (half A only): the mean of LoCoMo evidence R@1 and R@10 and MuSiQue
all-supports@10, each averaged over the hybrid and hybrid+hops2 modes (R@1, as hybrid must not
lose the top to the lexical list alone; R@10 and all@10 for what a context is built from).

Search, two stages, every setting run by graphmem's own Recaller over the same stored data
(``_recall.ListReplay``: the database is asked each question's lists once, and each
distinct walk hop once):
  1. the fusion grid, rrf_k x lexical x entities x time x speaker weights (semantic fixed at
     1: only ratios matter), scored on the hybrid mode, with the baseline's paths and
     similarity weights;
  2. the best few of stage 1 times the paths and similarity weights, and the baseline with
     each similarity weight, scored on the whole objective.
The winner is then asked over half B through the real index (no replay), beside the baseline,
with 95% bootstrap intervals. --json: the last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_recall
import musique_recall
from _common import default_uri, wipe
from _recall import ListReplay, ask, cache_vectors, covered_at, figures, print_table, recall_at, score

from graphmem import GraphMem
from graphmem.domain.models import utcnow
from graphmem.pipelines.recall import Recaller
from graphmem.settings.config import Settings

RRF_K = (1, 2, 3, 5, 10, 20, 60)
LEXICAL = (0.5, 1.0, 1.5, 2.0, 3.0)
ENTITIES = (0.0, 0.5, 1.0)
#: Not below 2: with less, lexical and semantic noise outranks the day a question names among
#: near-identical texts (tests/contract/test_time_words.py), which the benchmarks ask too
#: rarely to show.
TIME = (2.0, 3.0)
#: The candidates said by someone the question names (LoCoMo's questions only).
SPEAKER = (1.0, 2.0, 3.0)
PATHS = (0.5, 1.0, 2.0, 4.0)
#: The question's similarity with the best fused units (graphmem.domain.fusion.similar).
SIMILARITY = (0.0, 0.5, 1.0, 1.5, 2.0, 4.0)
#: Stage 1 settings carried into stage 2.
CARRIED = 5
LABELS = ("hybrid", "hybrid+hops2")


class Sets:
    """Both data sets' questions and how a hit maps back to a gold document."""

    def __init__(self, locomo: Path, musique: Path):
        self.convs = json.loads(locomo.read_text())
        self.corpus = musique_recall.Corpus(musique)
        self.locomo, _ = locomo_recall.questions_of(self.convs, "stored")
        self.musique = musique_recall.questions_of(musique)

    def ingest(self, mem: GraphMem) -> None:
        locomo_recall.ingest(mem, self.convs, "stored")
        self.corpus.ingest(mem)
        self.now = utcnow()

    def ask(self, mem: GraphMem, recaller: Recaller, labels, half: str):
        """(LoCoMo answers, MuSiQue answers) of one half, all asked at one system time (so the
        replay sees one question as the same request whatever the setting)."""
        loc = [q for q in self.locomo if q.half == half]
        mus = [q for q in self.musique if q.half == half]
        return (
            ask(mem, loc, labels, recaller, doc_of=locomo_recall.doc_of, now=self.now)[0],
            ask(mem, mus, labels, recaller, doc_of=self.corpus.doc_of, now=self.now)[0],
        )

    def objective(self, answers, labels, half: str = "A") -> dict[str, float]:
        """The objective's parts for the labels asked, and their mean as "objective"."""
        loc_ans, mus_ans = answers
        loc = [q for q in self.locomo if q.half == half]
        mus = [q for q in self.musique if q.half == half]
        parts = {}
        for label in labels:
            parts[f"locomo R@1 {label}"] = score(loc, loc_ans[label], lambda g, got: recall_at(g, got, 1))
            parts[f"locomo R@10 {label}"] = score(loc, loc_ans[label], lambda g, got: recall_at(g, got, 10))
            parts[f"musique all@10 {label}"] = score(mus, mus_ans[label], lambda g, got: covered_at(g, got, 10))
        parts["objective"] = sum(parts.values()) / len(parts)
        return parts


def weights_of(
    lexical: float, entities: float, time_: float, speaker: float, paths: float, similarity: float
) -> dict[str, float]:
    return {
        "semantic": 1.0,
        "lexical": lexical,
        "entities": entities,
        "time": time_,
        "speaker": speaker,
        "paths": paths,
        "similarity": similarity,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", default=Path("../shared/bench-data/locomo/locomo10.json"), type=Path)
    ap.add_argument("--musique", default=Path("../shared/bench-data/musique"), type=Path)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument(
        "--baseline-rrf-k",
        type=int,
        default=None,
        help="what the winner is compared with (default: the current Settings default)",
    )
    ap.add_argument("--baseline-weights", type=json.loads, default=None, help="JSON; as --baseline-rrf-k")
    ap.add_argument("--keep", action="store_true", help="do not wipe: ask over what the database holds")
    ap.add_argument("--json", action="store_true", help="last stdout line: the figures as one JSON object")
    args = ap.parse_args()

    sets = Sets(args.locomo, args.musique)
    if not args.keep:
        wipe(args.uri)
    mem = GraphMem.connect(Settings.from_env(neo4j_uri=args.uri, embedder=args.embedder))
    vectors = cache_vectors(mem)
    sets.ingest(mem)
    print(f"ingested; embedding: {vectors.summary()}", flush=True)

    default = Settings()
    baseline_k = args.baseline_rrf_k or default.rrf_k
    # a list not named weighs 1, as in Recaller
    baseline_weights = {
        **weights_of(1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        **(default.list_weights if args.baseline_weights is None else args.baseline_weights),
    }
    replay = ListReplay(mem.index)
    started = time.perf_counter()

    stage1 = []
    for rrf_k, lexical, entities, time_, speaker in itertools.product(RRF_K, LEXICAL, ENTITIES, TIME, SPEAKER):
        weights = weights_of(
            lexical, entities, time_, speaker, baseline_weights["paths"], baseline_weights["similarity"]
        )
        parts = sets.objective(
            sets.ask(mem, Recaller(replay, rrf_k=rrf_k, weights=weights), ["hybrid"], "A"), ["hybrid"]
        )
        stage1.append((parts["objective"], rrf_k, weights))
        print(
            f"  stage 1: rrf_k {rrf_k} {weights}: {parts['objective']:.4f} "
            f"({replay.calls} index calls, {time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    stage1.sort(key=lambda row: -row[0])

    candidates = [(baseline_k, baseline_weights)]
    candidates += [
        (baseline_k, {**baseline_weights, "similarity": similarity})  # the baseline's own neighbours
        for similarity in SIMILARITY
        if similarity != baseline_weights["similarity"]
    ]
    for _, rrf_k, weights in stage1[:CARRIED]:
        candidates += [
            (rrf_k, {**weights, "paths": paths, "similarity": similarity})
            for paths, similarity in itertools.product(PATHS, SIMILARITY)
        ]
    stage2 = []
    for rrf_k, weights in candidates:
        parts = sets.objective(sets.ask(mem, Recaller(replay, rrf_k=rrf_k, weights=weights), LABELS, "A"), LABELS)
        stage2.append((parts, rrf_k, weights))
        print(
            f"  stage 2: rrf_k {rrf_k} {weights}: {parts['objective']:.4f} "
            f"({replay.calls} index calls, {time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    best_parts, best_k, best_weights = max(stage2[1:], key=lambda row: row[0]["objective"])
    grid_s = time.perf_counter() - started
    # The replay must answer as the real index does: the winner asked again over half A.
    replayed = sets.ask(mem, Recaller(replay, rrf_k=best_k, weights=best_weights), LABELS, "A")
    real = sets.ask(mem, Recaller(mem.index, rrf_k=best_k, weights=best_weights), LABELS, "A")
    same = sum(a[label][qid] == b[label][qid] for a, b in zip(replayed, real) for label in LABELS for qid in a[label])
    asked = sum(len(a[label]) for a in real for label in LABELS)

    print(f"\nstage 1 (hybrid, half A), best {CARRIED} of {len(stage1)}:")
    for objective, rrf_k, weights in stage1[:CARRIED]:
        print(f"  {objective:.4f}  rrf_k={rrf_k:<3} {weights}")
    print(f"stage 2 (hybrid and hybrid+hops2, half A), {len(stage2)} settings, first the baseline:")
    names = [n for n in stage2[0][0] if n != "objective"]
    print("  objective  " + "  ".join(names))
    for parts, rrf_k, weights in stage2:
        print(
            f"  {parts['objective']:.4f}     "
            + "  ".join(f"{parts[n]:.3f}".center(len(n)) for n in names)
            + f"   rrf_k={rrf_k} {weights}"
        )
    print(
        f"grid: {len(stage1) + len(stage2)} settings in {grid_s:.0f} s, {replay.calls} index calls; "
        f"replay and real index agree on {same} of {asked} top-10 lists (the winner, half A)"
    )
    print(f"chosen: rrf_k={best_k} weights={best_weights}")

    held_out = {}
    for name, rrf_k, weights in (("baseline", baseline_k, baseline_weights), ("chosen", best_k, best_weights)):
        answers = sets.ask(mem, Recaller(mem.index, rrf_k=rrf_k, weights=weights), LABELS, "B")
        held_out[name] = {
            "settings": {"rrf_k": rrf_k, "weights": weights},
            "objective": sets.objective(answers, LABELS, "B"),
            "locomo": figures(
                [q for q in sets.locomo if q.half == "B"],
                answers[0],
                locomo_recall.MEASURES,
                list(locomo_recall.CATEGORIES.values()),
            )["B"],
            "musique": figures(
                [q for q in sets.musique if q.half == "B"],
                answers[1],
                musique_recall.MEASURES,
                sorted({q.group for q in sets.musique}),
            )["B"],
        }
    vectors.save()
    for name, result in held_out.items():
        print(
            f"\nhalf B, {name}: rrf_k={result['settings']['rrf_k']} {result['settings']['weights']}; "
            f"objective {result['objective']['objective']:.4f}"
        )
        print_table(
            {"B": result["locomo"]},
            list(locomo_recall.MEASURES),
            "category",
            locomo_recall.reference,
            locomo_recall.REFERENCE_TITLE,
        )
        print_table(
            {"B": result["musique"]},
            list(musique_recall.MEASURES),
            "hops",
            musique_recall.reference,
            musique_recall.REFERENCE_TITLE,
        )
    mem.close()
    if args.json:
        print(
            json.dumps(
                {
                    "benchmark": "tune_recall",
                    "embedder": args.embedder,
                    "stage1": [{"objective": o, "rrf_k": k, "weights": w} for o, k, w in stage1],
                    "stage2": [{"parts": p, "rrf_k": k, "weights": w} for p, k, w in stage2],
                    "chosen": {"rrf_k": best_k, "weights": best_weights, "half_a": best_parts},
                    "replay_agreement": {"same": same, "asked": asked},
                    "half_b": held_out,
                }
            )
        )


if __name__ == "__main__":
    main()
