"""Two embedders under graphmem's default recall, paired on the same questions (issue 44).

    NEO4J_URI=bolt://127.0.0.1:7840 python benchmarks/embedder_recall.py \\
        --locomo ../shared/bench-data/locomo/locomo10.json --musique ../shared/bench-data/musique \\
        [--conversations 1 6] [--every 2] [--musique-questions 10] [--json]

WIPES THE TARGET DATABASE. Ingests a fixed sample once with MiniLM (today's default): the LoCoMo
conversations named (stored form, as locomo_recall.py; 1-5 are half A, 6-10 half B) and the
MuSiQue passages of the first N questions of each half (1-50 A, 51-100 B; their supporting and
distractor paragraphs). Asks every question in the default recall (hybrid, no hops; with
--semantic, the semantic list alone too); then switches the store to bge-small through ``graphmem index rebuild``'s
path (``Neo4jIndex.rebuild``: the same units re-embedded into the next index generation) and
asks again. Prints, per set, half and group: each embedder's figure with its 95% bootstrap
interval, BM25 over the same documents, and the paired bootstrap of bge-small's gain over
MiniLM (``*`` where its lower bound is above 0); then both embedders' rates over the same
texts, measured side by side in this run (--rate-texts 0: none). --json: the last stdout line holds it all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_recall
import musique_recall
from _common import default_uri, wipe
from _recall import MODES, ask, bootstrap, cache_vectors, covered_at, paired, recall_at

from graphmem import GraphMem
from graphmem.adapters.memory import bm25
from graphmem.api.wiring import make_embedder
from graphmem.settings.config import Settings

EMBEDDERS = ("minilm", "bge-small")
MEASURES = {
    "locomo": {"R@10": (recall_at, 10), "R@5": (recall_at, 5)},
    "musique": {"R@5": (recall_at, 5), "R@10": (recall_at, 10), "all@10": (covered_at, 10)},
}


def locomo_sample(path: Path, numbers: list[int]):
    """The conversations numbered (1-based) and their questions, each in its half by number."""
    convs = json.loads(path.read_text())
    chosen = [convs[n - 1] for n in numbers]
    half = {convs[n - 1]["sample_id"]: "A" if n <= 5 else "B" for n in numbers}
    questions, _ = locomo_recall.questions_of(chosen, "stored")
    questions = [replace(q, half=half[q.id.split(":")[0]]) for q in questions]
    return chosen, questions


def musique_sample(path: Path, per_half: int):
    """The first ``per_half`` questions of each half, and a corpus of their paragraphs only."""
    questions = musique_recall.questions_of(path)
    chosen = [q for h in ("A", "B") for q in [q for q in questions if q.half == h][:per_half]]
    ids = {q.id for q in chosen}
    wanted = {
        musique_recall.passage(p["title"], p["paragraph_text"])
        for qa in json.loads((path / "qa.json").read_text())
        if qa["id"] in ids
        for p in qa["paragraphs"]
    }
    corpus = musique_recall.Corpus(path)
    corpus.episodes = [e for e in corpus.episodes if corpus.key[e.id] in wanted]
    return corpus, chosen


def musique_bm25(corpus, questions, k: int = 10) -> dict[str, list[str]]:
    """BM25 (k1 1.2, b 0.75) over the sample's passages: question id -> its top k passages."""
    docs = [(corpus.key[e.id], locomo_recall.bm25_tokens(e.raw)) for e in corpus.episodes]
    out = {}
    for q in questions:
        scores = bm25(locomo_recall.bm25_tokens(q.text), docs, 1.2, 0.75)
        out[q.id] = sorted(scores, key=lambda key: (-scores[key], key))[:k]
    return out


def rates(texts: dict[str, list[str]], settings: Settings, rounds: int = 2) -> dict:
    """Texts per second (wall and CPU) of each embedder over the same texts, alternating rounds
    so both see the same load; a fresh embedder per round (no cache), the model loaded first."""
    out: dict = {}
    for kind, sample in texts.items():
        for _ in range(rounds):
            for name in EMBEDDERS:
                embedder = make_embedder(settings.model_copy(update={"embedder": name}))
                embedder.embed(["warm up"])
                wall, cpu = time.perf_counter(), time.process_time()
                embedder.embed(sample)
                cell = out.setdefault(kind, {}).setdefault(name, {"wall": 0.0, "cpu": 0.0, "n": 0})
                cell["wall"] += time.perf_counter() - wall
                cell["cpu"] += time.process_time() - cpu
                cell["n"] += len(sample)
        for cell in out[kind].values():
            cell["texts_per_s"], cell["texts_per_cpu_s"] = cell["n"] / cell["wall"], cell["n"] / cell["cpu"]
        base = out[kind]["minilm"]["texts_per_s"]
        for cell in out[kind].values():
            cell["x_minilm"] = cell["texts_per_s"] / base
    return out


def figures(name: str, questions, runs: dict[str, dict[str, list[str]]]) -> dict:
    """Per half and group: each run's mean [95%], and each embedder's paired gain over MiniLM."""
    out: dict = {}
    for half in ("A", "B"):
        mine = [q for q in questions if q.half == half]
        groups = {"all": mine}
        for q in mine:
            groups.setdefault(q.group, []).append(q)
        for group, qs in groups.items():
            for measure, (of, k) in MEASURES[name].items():
                vals = {run: [of(q.gold, ans[q.id], k) for q in qs] for run, ans in runs.items()}
                row: dict = {"n": len(qs)}
                for run, v in vals.items():
                    row[run] = bootstrap(v)
                row["gain"] = paired(vals["minilm hybrid"], vals["bge-small hybrid"])
                if "minilm semantic" in vals:
                    row["gain semantic"] = paired(vals["minilm semantic"], vals["bge-small semantic"])
                out[f"{name} {half} {group} {measure}"] = row
    return out


def show(result: dict) -> None:
    for key, row in result.items():
        runs = {run: cell for run, cell in row.items() if run != "n"}
        cells = [f"{run} {m:.3f} [{lo:.3f},{hi:.3f}]" for run, (m, lo, hi) in runs.items() if "gain" not in run]
        gains = [
            f"{run} {g:+.3f} [{lo:+.3f},{hi:+.3f}]{'*' if lo > 0 else ''}"
            for run, (g, lo, hi) in runs.items()
            if "gain" in run
        ]
        print(f"{key:<34} n={row['n']:<4} " + " | ".join(cells + gains))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--locomo", type=Path, default=Path("../shared/bench-data/locomo/locomo10.json"))
    ap.add_argument("--musique", type=Path, default=Path("../shared/bench-data/musique"))
    ap.add_argument("--conversations", type=int, nargs="*", default=[1, 6], help="LoCoMo's, 1-based (none: no LoCoMo)")
    ap.add_argument("--musique-questions", type=int, default=10, help="per half (0: no MuSiQue)")
    ap.add_argument("--rate-texts", type=int, default=100, help="turns for the rates (passages: a fifth; 0: none)")
    ap.add_argument("--every", type=int, default=1, help="ask every N-th LoCoMo question only (a fixed sample)")
    ap.add_argument("--semantic", action="store_true", help="also ask the semantic list alone")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    labels = ["hybrid", "semantic"] if args.semantic else ["hybrid"]

    convs, lq = locomo_sample(args.locomo, args.conversations)
    lq = lq[:: args.every]
    corpus, mq = musique_sample(args.musique, args.musique_questions)
    settings = Settings.from_env(neo4j_uri=args.uri, embedder="minilm")
    wipe(args.uri)
    answers: dict[str, dict[str, dict[str, list[str]]]] = {"locomo": {}, "musique": {}}
    runs: dict = {}
    for name in EMBEDDERS:
        mem = GraphMem.connect(settings.model_copy(update={"embedder": name}), check_index=name == "minilm")
        vectors = cache_vectors(mem)
        started = time.perf_counter()
        if name == "minilm":
            locomo_recall.ingest(mem, convs, "stored")
            corpus.ingest(mem)
            how = "ingest"
        else:  # the same store, re-embedded: the path `graphmem index rebuild` takes for a new model
            how = f"index rebuild of {mem.index.rebuild()} units"
        runs[name] = {"how": how, "seconds": time.perf_counter() - started, "embedding": vectors.summary()}
        vectors.save()  # a later run of the same sample embeds nothing again
        print(f"{name}: {how} in {runs[name]['seconds']:.0f} s; {vectors.summary()}", flush=True)
        for set_name, qs, doc_of in (("locomo", lq, locomo_recall.doc_of), ("musique", mq, corpus.doc_of)):
            if not qs:
                continue
            got, seconds = ask(mem, qs, labels, doc_of=doc_of, progress=f"{set_name} {name}")
            for label in labels:
                answers[set_name][f"{name} {label}"] = got[label]
            runs[name][f"{set_name} ms"] = {label: 1000 * s for label, s in seconds.items()}
        vectors.save()
        mem.close()
    answers["locomo"]["bm25"] = locomo_recall.bm25_answers(convs, lq)
    answers["musique"]["bm25"] = musique_bm25(corpus, mq)
    result = figures("locomo", lq, answers["locomo"]) if lq else {}
    if mq:
        result.update(figures("musique", mq, answers["musique"]))
    print(
        f"\nsample: LoCoMo conversations {args.conversations} ({len(lq)} questions, every {args.every}), MuSiQue first "
        f"{args.musique_questions} questions of each half ({len(mq)}; {len(corpus.episodes)} passages); "
        f"default recall = {MODES['hybrid']}",
        flush=True,
    )
    show(result)  # before the rates: the figures stand if the rates are cut short
    sys.stdout.flush()
    first = json.loads(args.locomo.read_text())[0]  # the rates' texts, whatever the sample
    turns = [e.raw for e in locomo_recall.episodes_of(first, "stored")][: args.rate_texts]
    passages = [e.raw for e in musique_recall.Corpus(args.musique).episodes][: max(1, args.rate_texts // 5)]
    rate = rates({"locomo turns": turns, "musique passages": passages}, settings) if args.rate_texts else {}
    for kind, by in rate.items():
        for name, cell in by.items():
            print(
                f"rate {kind:<17} {name:<10} {cell['texts_per_s']:6.1f} texts/s  {cell['x_minilm']:.2f}x MiniLM  "
                f"{cell['texts_per_cpu_s']:6.1f} texts/cpu-s"
            )
    if args.json:
        sample = {
            "conversations": args.conversations,
            "every": args.every,
            "musique_questions_per_half": args.musique_questions,
        }
        print(json.dumps({"sample": sample, "runs": runs, "figures": result, "rates": rate}))


if __name__ == "__main__":
    main()
