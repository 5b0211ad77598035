"""Where a hops-0 recall's time goes: the hybrid statement with its lists switched off one by
one, beside the raw vector query unfiltered and filtered by scope inside the index.

    python benchmarks/recall_parts.py --uri bolt://127.0.0.1:7861 --size 1000000 [--queries 40] [--json]

Asks over the units `recall_latency.py --sizes SIZE` stored (same seed; nothing is written).
The statements are the ones GraphMem.recall sends for --queries questions on the large scope,
captured and sent again in auto-commit transactions, each case --rounds times over all of them
after one unmeasured round. Printed per case: the server's mean time (result available plus
consumed, ms) and the median wall time (ms). Cases: the raw query (k 10, unfiltered); the
vector index filtered by the scope (the recall's fetch); the hybrid statement whole; without
its fulltext list; without its named-entity list; with a pool and depth of 10 (fewer vectors
read for the similarity); with the vector list and the shared end only (fusion, the units read
by id, their entries, usage and fields).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recall_latency as rl
from _common import default_uri, vocabulary

from graphmem import GraphMem
from graphmem.pipelines.recall import without_names
from graphmem.settings.config import Settings

FILTERED = (
    "CYPHER 25 MATCH (e:SearchEntry) SEARCH e IN (VECTOR INDEX entry_embedding_1 FOR $v WHERE e.scope = $sc "
    "LIMIT $fetch) SCORE AS score RETURN e.unit_id AS id, score"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = ap.parse_args()

    vocab = vocabulary(args.seed)
    conn, index, store, embedder, scopes, sizes, names, _ = rl.load(args.uri, args.size, args.seed, vocab, True)
    if sum(sizes) != args.size or not index.filtered:
        raise SystemExit(f"needs the {args.size} units of recall_latency.py --sizes {args.size} on Neo4j 2026")
    mem = GraphMem(store, index, settings=Settings.from_env(neo4j_uri=args.uri))
    rng = np.random.default_rng(args.seed + args.size)
    vectors = rl.unit_vectors(rng, args.queries)
    texts = [f"{names[0][rng.integers(0, len(names[0]))]} {vocab[rng.integers(0, len(vocab))]}" for _ in vectors]
    for t, v in zip(texts, vectors):
        embedder.by_text[t] = v.tolist()
        for rest in without_names(t).values():
            embedder.by_text.setdefault(rest, embedder.embed([rest])[0])

    sent: list = []
    read = conn.read

    def kept(name, /, **params):
        sent.append((name, params))
        return read(name, **params)

    conn.read = kept
    for t in texts:
        mem.recall(t, scopes[0], k=10)
    conn.read = read
    asked = [(q, p) for q, p in sent if getattr(q, "name", q) == "recall/hybrid"]
    query, hybrid = asked[0][0], [p for _, p in asked]

    def lists(**change) -> list[dict]:
        return [{**p, **change} for p in hybrid]

    no_text = [{**p, "variants": {k: {**v, "lucene": None} for k, v in p["variants"].items()}} for p in hybrid]
    cases = {
        "raw vector, unfiltered": (rl.RAW_VECTOR[True], [{"v": v.tolist()} for v in vectors]),
        "vector, filtered by scope": (
            FILTERED,
            [{"v": v.tolist(), "sc": p["scopes"][0], "fetch": p["fetch"]} for v, p in zip(vectors, hybrid)],
        ),
        "hybrid": (query.text, hybrid),
        "hybrid without fulltext": (query.text, no_text),
        "hybrid without entities": (query.text, lists(entity_lucene=None)),
        "hybrid, pool and depth 10": (query.text, lists(pool=10, depth=10)),
        "vector list and shared end": (
            query.text,
            [{**p, "entity_lucene": None, "names": [], "pool": 10, "depth": 10} for p in no_text],
        ),
    }

    def timed(text: str, params: list[dict], rounds: int) -> tuple[float, float]:
        server, wall = [], []
        with conn.driver.session(database=conn.database) as session:
            for _ in range(rounds):
                for p in params:
                    started = time.perf_counter()
                    result = session.run(text, p)
                    list(result)
                    summary = result.consume()
                    wall.append((time.perf_counter() - started) * 1000)
                    server.append((summary.result_available_after or 0) + (summary.result_consumed_after or 0))
        return float(np.mean(server)), float(np.median(wall))

    for text, params in cases.values():
        timed(text, params, 1)  # not measured: plans cached, pages read
    figures = {
        name: dict(zip(("server_ms", "wall_ms"), timed(text, params, args.rounds)))
        for name, (text, params) in cases.items()
    }
    print(f"size {args.size}, {args.queries} questions on the large scope, {args.rounds} rounds, auto-commit")
    print(f"{'case':<30}{'server ms':>10}{'wall ms':>10}")
    for name, row in figures.items():
        print(f"{name:<30}{row['server_ms']:>10.2f}{row['wall_ms']:>10.2f}")
    conn.close()
    if args.json:
        print(json.dumps({"size": args.size, "queries": args.queries, "figures": figures}))


if __name__ == "__main__":
    main()
