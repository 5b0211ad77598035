"""Embedding rate of the candidate embedders beside MiniLM's, in one run (issue 44).

    python benchmarks/embedder_candidates.py [--locomo FILE] [--musique DIR] [--n 600]
        [--models bge-small-en-v1.5 ...] [--rounds 3] [--json]

Texts: the first N LoCoMo turns ("<speaker>: <text>", short) and the first N/3 MuSiQue passages
("<title>. <text>", long). Each round embeds both sets with every embedder in turn, cold (a
fresh instance, no cache), so load on a shared machine falls on all alike; the median of the
rounds is printed, wall and CPU seconds. MiniLM is graphmem's numpy forward pass; the others are
benchmarks/_onnx_bert.py on onnxruntime (its default threads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _onnx_bert import MODELS, OnnxBertEmbedder

from graphmem.embed.minilm import MiniLMEmbedder


def texts_of(locomo: Path, musique: Path, n: int) -> dict[str, list[str]]:
    turns = []
    for conv in json.loads(locomo.read_text()):
        c = conv["conversation"]
        for key in sorted(
            (k for k in c if k.startswith("session_") and isinstance(c[k], list)), key=lambda k: int(k.split("_")[1])
        ):
            turns.extend(f"{t['speaker']}: {t['text']}" for t in c[key])
    passages = [f"{p['title']}. {p['text']}" for p in json.loads((musique / "corpus.json").read_text())]
    return {"locomo turns": turns[:n], "musique passages": passages[: max(n // 3, 1)]}


def make(name: str):
    return MiniLMEmbedder() if name == "minilm" else OnnxBertEmbedder(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=Path("../shared/bench-data/locomo/locomo10.json"))
    ap.add_argument("--musique", type=Path, default=Path("../shared/bench-data/musique"))
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--models",
        nargs="+",
        default=[
            "minilm",
            "all-MiniLM-L6-v2-int8",
            "bge-small-en-v1.5",
            "bge-small-en-v1.5-q",
            "e5-small-v2",
            "e5-small-v2-q",
        ],
        choices=["minilm", *MODELS],
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sets = texts_of(args.locomo, args.musique, args.n)
    for name in args.models:  # load and warm once: files fetched, BLAS and sessions ready
        e = make(name)
        e.load()
        e.embed(["warm up " + str(i) for i in range(40)])
    timings: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for set_name, texts in sets.items():
            for name in args.models:
                e = make(name)
                e.load()
                wall, cpu = time.perf_counter(), time.process_time()
                e.embed(texts)
                timings.setdefault((set_name, name), []).append((time.perf_counter() - wall, time.process_time() - cpu))
    out = {}
    print(f"{'texts':<18}{'embedder':<24}{'texts/s':>9}{'x MiniLM':>10}{'texts/cpu-s':>13}")
    for set_name, texts in sets.items():
        base = None
        for name in args.models:
            wall = statistics.median(w for w, _ in timings[(set_name, name)])
            cpu = statistics.median(c for _, c in timings[(set_name, name)])
            rate = len(texts) / wall
            base = base or rate
            out.setdefault(set_name, {})[name] = {"texts_per_s": rate, "texts_per_cpu_s": len(texts) / cpu}
            print(f"{set_name:<18}{name:<24}{rate:>9.1f}{rate / base:>10.2f}{len(texts) / cpu:>13.1f}")
    if args.json:
        print(json.dumps({"n": {k: len(v) for k, v in sets.items()}, "rounds": args.rounds, "rates": out}))


if __name__ == "__main__":
    main()
