"""Embedder throughput on LoCoMo dialogue turns (~25 tokens each), cold cache.

    python benchmarks/embedder_throughput.py [LOCOMO_JSON] [--n 2000] [--batch-size 32] [--json]

Prints texts/s for MiniLM (numpy forward pass) and, for comparison, the hashing test embedder.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from graphmem.embed import HashingEmbedder, MiniLMEmbedder


def load_turns(path: Path, n: int) -> list[str]:
    """The first n turn texts of a LoCoMo file (a list of conversations with session_N turn lists)."""
    texts: list[str] = []
    for conv in json.loads(path.read_text()):
        sessions = conv["conversation"]
        keys = sorted(
            (k for k in sessions if k.startswith("session_") and isinstance(sessions[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for key in keys:
            texts.extend(turn["text"] for turn in sessions[key] if turn.get("text"))
    if len(texts) < n:
        raise SystemExit(f"{path} has only {len(texts)} turns, asked for {n}")
    return texts[:n]


def timed(fn, texts: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): CPU time shows the work when the machine is shared."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(texts)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", default="../shared/bench-data/locomo/locomo10.json", type=Path)
    parser.add_argument("--n", type=int, default=2000, help="number of turns to embed")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()

    texts = load_turns(args.path, args.n)
    minilm = MiniLMEmbedder(batch_size=args.batch_size)
    load_s, _ = timed(lambda _: minilm.load(), texts)
    tokens = sum(len(minilm._tokenizer.encode(t).ids) for t in texts) / len(texts)  # incl. [CLS]/[SEP]
    minilm.embed(texts[:64])  # warm BLAS and allocator on text that is not measured below
    minilm = MiniLMEmbedder(batch_size=args.batch_size)  # fresh instance: empty LRU cache
    minilm.load()
    cold = timed(minilm.embed, texts)
    warm = timed(minilm.embed, texts)  # all cache hits
    hashing = HashingEmbedder()
    hashing_s = timed(hashing.embed, texts)

    print(
        f"{len(texts)} LoCoMo turns, mean {tokens:.1f} tokens; MiniLM load {load_s:.2f} s, batch size {args.batch_size}"
    )
    print(f"{'embedder':<26}{'wall s':>9}{'texts/s':>10}{'cpu s':>9}{'texts/cpu-s':>13}")
    cases = {"minilm (cold, no cache)": cold, "minilm (warm, LRU hits)": warm, hashing.name: hashing_s}
    for label, (wall, cpu) in cases.items():
        print(f"{label:<26}{wall:>9.3f}{len(texts) / wall:>10.1f}{cpu:>9.3f}{len(texts) / max(cpu, 1e-9):>13.1f}")
    if args.json:
        print(
            json.dumps(
                {
                    "texts": len(texts),
                    "mean_tokens": tokens,
                    "minilm_load_s": load_s,
                    **{
                        label: {
                            "wall_s": wall,
                            "texts_per_s": len(texts) / wall,
                            "texts_per_cpu_s": len(texts) / max(cpu, 1e-9),
                        }
                        for label, (wall, cpu) in cases.items()
                    },
                }
            )
        )


if __name__ == "__main__":
    main()
