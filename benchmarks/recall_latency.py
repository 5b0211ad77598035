"""GraphMem.recall latency (hybrid, hops 0 and 2) against the raw Neo4j vector query, at several sizes.

    python benchmarks/recall_latency.py --uri bolt://127.0.0.1:7695 --sizes 10000 100000 [--queries 200] [--json]

WIPES THE TARGET DATABASE (unless --reuse finds the same size stored). Point it at a dedicated
benchmark server, never the test one.

Loading: units are written through Neo4jStore.commit (batches of 1000, each with its vectors,
so their search entries are written in the same transaction) over 20 scopes (one holding half
the units, 18 splitting the rest evenly, one tiny scope of 5 units). Vectors are precomputed
random unit-normalised 384-d vectors (numpy, seeded; texts it was not given get a vector seeded
by the text). Every unit is a fact with a triple linking two entities of its scope (entity pool
= scope size / 10, so an entity has ~20 units and graph walks have edges), and its text names
both entities: "<subject> <predicate> <object> <5 random words>".

Then, for --queries queries on the large scope (text "<entity name> <random word>" and a
random vector for it), timed alternately query by query:
  recall h0: GraphMem.recall(text, large scope, k=10, hops=0)   (hybrid: one round trip)
  raw:       the unfiltered vector index query, k=10 (Cypher 25 SEARCH on Neo4j 2026, the
             db.index.vector.queryNodes procedure on 5.26)
  recall h2: GraphMem.recall(text, large scope, k=10, hops=2)   (hybrid, two walk hops: their
             path scores are computed at query time from the stored vectors)
  raw:       the same raw vector query again
Before the timed queries, --warmup seconds (default 20) of the same three cases on other queries
run unmeasured: a server's JIT compiles a statement's operators only after many runs, and a
service in use answers warm (on a server just started, after ten queries, as this script first
did: a 10k hops-0 recall 17.0 ms, the raw query 8.2; after 20 s of warm-up 7.3 and 3.4). Each
case's p50/p95 is printed with its ratio to the raw query's p50/p95 of the same run. The
query's embedding is not in these times (both sides take a vector: the question without the
names it writes, which a hybrid recall embeds beside it, is given one too); --minilm also times the
offline MiniLM embedding of each query text, printed beside as what a real question adds;
--rerank also times "recall h0+rerank", the hops-0 recall with the cross-encoder on
(graphmem.pipelines.rerank, GRAPHMEM_RERANK_DEPTH candidates), after the raw query each time.
With --json the last stdout line is one JSON object:
{"<size>": {"raw": {"p50_ms", "p95_ms"}, "h0": {"p50_ms", "p95_ms", "ratio_p50"}, "h2": {...}}}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_uri, median, pct, timed, vocabulary, wipe

from graphmem import GraphMem
from graphmem.adapters.neo4j.driver import Listed, Neo4jConnection
from graphmem.adapters.neo4j.index import Neo4jIndex
from graphmem.adapters.neo4j.store import Neo4jStore
from graphmem.api.wiring import make_reranker
from graphmem.domain.models import (
    MemoryKind,
    MemoryUnit,
    Scope,
    SourceRef,
    TemporalMeta,
    Triple,
    WriteBatch,
    content_hash,
)
from graphmem.pipelines.recall import without_names
from graphmem.settings.config import Settings

# BENCHMARK-ONLY RAW BASELINES: the unscoped, unfiltered vector index call straight to Neo4j.
RAW_UNIT_COUNT = "MATCH (u:Unit) RETURN count(u) AS units"

RAW_VECTOR = {
    True: "CYPHER 25 MATCH (e:SearchEntry) SEARCH e IN (VECTOR INDEX entry_embedding_1 FOR $v LIMIT 10) "
    "SCORE AS score RETURN e.unit_id AS id, score",
    False: "CALL db.index.vector.queryNodes('entry_embedding_1', 10, $v) YIELD node, score "
    "RETURN node.unit_id AS id, score",
}
PREDICATES = ("works with", "lives near", "reports to", "knows", "owns", "visited")
DIM, N_SCOPES, TINY, BATCH = 384, 20, 5, 1000


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def scope_sizes(n: int) -> list[int]:
    """20 scopes: [large = n/2, 18 mid ones splitting the rest evenly, tiny = 5]."""
    large = n // 2
    rest = n - large - TINY
    mids = [rest // (N_SCOPES - 2)] * (N_SCOPES - 2)
    for i in range(rest - sum(mids)):
        mids[i] += 1
    return [large, *mids, TINY]


class LookupEmbedder:
    """Precomputed vectors keyed by text; any other text gets a random vector seeded by it."""

    name = "bench-random"
    dimension = DIM

    def __init__(self) -> None:
        self.by_text: dict[str, list[float]] = {}

    def embed(self, texts):
        return [self.by_text.get(t) or self._seeded(t) for t in texts]

    @staticmethod
    def _seeded(text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()


def entity_names(vocab: list[str], scope_no: int, n: int) -> list[str]:
    return [
        f"{vocab[(7 * i + scope_no) % len(vocab)].title()} {vocab[(13 * i + 3 * scope_no + 1) % len(vocab)].title()}{i}"
        for i in range(n)
    ]


def load(uri: str, n: int, seed: int, vocab: list[str], reuse: bool = False):
    """Write the n units (unless ``reuse`` finds exactly n stored: the same seed writes the
    same units, and the queries need only the entity names, which the seed gives again)."""
    if reuse:
        conn = Neo4jConnection(Settings.from_env(neo4j_uri=uri))
        stored = conn.read_tx(lambda tx: tx.run(RAW_UNIT_COUNT).single()["units"], what="count")  # benchmark-only
        conn.close()
        reuse = stored == n
    if not reuse:
        wipe(uri)
    conn = Neo4jConnection(Settings.from_env(neo4j_uri=uri))
    embedder = LookupEmbedder()
    index = Neo4jIndex(conn, embedder)
    index.ensure()
    store = Neo4jStore(conn)
    rng = np.random.default_rng(seed)
    scopes = [Scope.parse(f"user:bench-{i:02d}") for i in range(N_SCOPES)]
    sizes = scope_sizes(n)
    names_by_scope: list[list[str]] = []
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    serial = 0
    for no, (scope, size) in enumerate(zip(scopes, sizes)):
        names = entity_names(vocab, no, max(2, size // 10))
        names_by_scope.append(names)
        for start in range(0, 0 if reuse else size, BATCH):
            m = min(BATCH, size - start)
            vecs = unit_vectors(rng, m)
            words = rng.integers(0, len(vocab), size=(m, 5))
            ends = rng.integers(0, len(names), size=(m, 2))
            preds = rng.integers(0, len(PREDICATES), size=m)
            units = []
            for j in range(m):
                serial += 1
                s, o = names[ends[j, 0]], names[ends[j, 1]]
                if s == o:
                    o = names[(ends[j, 1] + 1) % len(names)]
                p = PREDICATES[preds[j]]
                text = f"{s} {p} {o} " + " ".join(vocab[w] for w in words[j]) + f" #{serial}"
                embedder.by_text[text] = vecs[j].tolist()
                units.append(
                    MemoryUnit(
                        kind=MemoryKind.semantic,
                        scope=scope,
                        content=text,
                        content_hash=content_hash(text),
                        source=SourceRef(episode_id=f"bench-{serial}", channel="bench", extractor_version="bench"),
                        time=TemporalMeta(created_at=now),
                        triple=Triple(subject=s, predicate=p.replace(" ", "_"), object=o),
                    )
                )
            vectors = {u.id: embedder.by_text[u.content] for u in units}
            store.commit(WriteBatch(units=tuple(units), vectors=vectors, vector_model=embedder.name), scope)
            embedder.by_text.clear()
            if size > 10 * BATCH and (start // BATCH) % 10 == 9:
                print(f"  [{n}] scope {no + 1}: {start + m}/{size} ({time.perf_counter() - t0:.0f} s)", flush=True)
        if not reuse:
            print(f"  [{n}] scope {no + 1}/{len(scopes)} loaded ({time.perf_counter() - t0:.0f} s)", flush=True)
    conn.schema("CALL db.awaitIndexes(600)", what="await indexes")  # benchmark-only
    return conn, index, store, embedder, scopes, sizes, names_by_scope, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", default=default_uri())
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--warmup", type=float, default=20, help="seconds of unmeasured queries before the timed ones")
    ap.add_argument("--minilm", action="store_true", help="also time the MiniLM embedding of each query")
    ap.add_argument("--rerank", action="store_true", help="also time the hops-0 recall with the reranker on")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="ask over the units of an earlier run with the same "
        "size and seed when the database holds exactly that many (no wipe, no load)",
    )
    args = ap.parse_args()
    minilm = None
    if args.minilm:
        from graphmem.embed import MiniLMEmbedder

        minilm = MiniLMEmbedder()
        minilm.embed(["warm up"])

    vocab = vocabulary(args.seed)

    rows, notes, summary = [], [], {}
    for n in args.sizes:
        conn, index, store, embedder, scopes, sizes, names, load_s = load(args.uri, n, args.seed, vocab, args.reuse)
        print(
            f"[{n}] loaded {sum(sizes)} units over {len(scopes)} scopes in {load_s:.1f} s "
            f"({sum(sizes) / load_s:.0f} units/s; large {sizes[0]}, mid {sizes[1]}, tiny {sizes[-1]}; "
            f"{len(names[0])} entities in the large scope)",
            flush=True,
        )
        settings = Settings.from_env(neo4j_uri=args.uri)
        reranker = make_reranker(settings) if args.rerank else None
        mem = GraphMem(store, index, settings=settings, reranker=reranker)
        large = scopes[0]
        rng = np.random.default_rng(args.seed + n)
        spare = 100  # warm-up queries
        qvecs = unit_vectors(rng, args.queries + spare)
        texts = [
            f"{names[0][rng.integers(0, len(names[0]))]} {vocab[rng.integers(0, len(vocab))]}"
            for _ in range(args.queries + spare)
        ]
        for t, v in zip(texts, qvecs):
            embedder.by_text[t] = v.tolist()
            for rest in without_names(t).values():
                embedder.by_text.setdefault(rest, embedder.embed([rest])[0])

        raw_query = RAW_VECTOR[index.filtered]

        def raw(v):
            # Listed: the driver formats a statement's parameters for its debug log even when it
            # is off (0.1-0.2 ms for one vector); recalls skip it, and so does the baseline.
            return conn.read_tx(lambda tx: [r.data() for r in tx.run(raw_query, {"v": Listed(v)})], what="raw")

        warm_until, i = time.perf_counter() + args.warmup, 0
        while i < 10 or time.perf_counter() < warm_until:  # not measured
            w = args.queries + i % spare
            mem.recall(texts[w], large, k=10, hops=0)
            mem.recall(texts[w], large, k=10, hops=2)
            raw(qvecs[w].tolist())
            if reranker is not None:
                mem.recall(texts[w], large, k=10, hops=0, rerank=True)
            i += 1

        times: dict[str, list[float]] = {
            "recall h0": [],
            "recall h2": [],
            "raw vector": [],
            "minilm query": [],
            "recall h0+rerank": [],
        }
        walked = short = 0
        for i in range(args.queries):
            v = qvecs[i].tolist()
            ms, hits = timed(lambda: mem.recall(texts[i], large, k=10, hops=0))
            times["recall h0"].append(ms)
            short += len(hits) < 10
            times["raw vector"].append(timed(lambda: raw(v))[0])
            ms, hits = timed(lambda: mem.recall(texts[i], large, k=10, hops=2))
            times["recall h2"].append(ms)
            walked += sum(1 for h in hits if h.hop > 0)
            times["raw vector"].append(timed(lambda: raw(v))[0])
            if reranker is not None:
                times["recall h0+rerank"].append(timed(lambda: mem.recall(texts[i], large, k=10, rerank=True))[0])
                times["raw vector"].append(timed(lambda: raw(v))[0])
            if minilm is not None:
                times["minilm query"].append(timed(lambda: minilm.embed([texts[i]]))[0])
        base50, base95 = median(times["raw vector"]), pct(times["raw vector"], 95)
        for case in ("raw vector", "recall h0", "recall h2", "recall h0+rerank", "minilm query"):
            t = times[case]
            if t:
                rows.append((n, case, median(t), pct(t, 95), median(t) / base50, pct(t, 95) / base95))
        summary[str(n)] = {
            "raw": {"p50_ms": base50, "p95_ms": base95},
            **{
                key: {
                    "p50_ms": median(times[case]),
                    "p95_ms": pct(times[case], 95),
                    "ratio_p50": median(times[case]) / base50,
                }
                for key, case in (("h0", "recall h0"), ("h2", "recall h2"), ("h0_rerank", "recall h0+rerank"))
                if times[case]
            },
        }
        if times["minilm query"]:
            summary[str(n)]["minilm_query_p50_ms"] = median(times["minilm query"])
        notes.append(
            f"size {n}: hops=2 hits reached by the walk: {walked} of {10 * args.queries} "
            f"({walked / args.queries:.1f}/query); hops=0 queries with fewer than 10 hits: {short}; "
            f"load {load_s:.0f} s"
        )
        print(f"[{n}] done", flush=True)
        mem.close()  # writes the recall statistics it still holds
        conn.close()

    print()
    print(f"large scope = half the units; {args.queries} queries per case, alternating; hybrid mode, k=10")
    print(f"{'size':>7}  {'case':<17}{'p50 ms':>9}{'p95 ms':>9}{'x raw p50':>11}{'x raw p95':>11}")
    for n, case, p50, p95, r50, r95 in rows:
        print(f"{n:>7}  {case:<17}{p50:>9.2f}{p95:>9.2f}{r50:>11.2f}{r95:>11.2f}")
    print()
    for line in notes:
        print(line)
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
